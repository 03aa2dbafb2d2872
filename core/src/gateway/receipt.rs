//! Delivery receipts (SPEC §10): a statement `{service_id, agent_id, call_at, outcome,
//! latency_ms, nonce}` signed with Ed25519 over its canonical JSON (§3.3 rules) by the
//! agent and/or the service. One valid signature weighs 0.3, both 1.0.

use base64::Engine;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Weight of a receipt with one valid signature.
pub const ONE_SIGNATURE_WEIGHT: f64 = 0.3;
/// Weight of a receipt signed by both the agent and the service.
pub const COSIGNED_WEIGHT: f64 = 1.0;
/// Statement outcomes.
pub const OUTCOMES: &[&str] = &["success", "partial", "failure", "cancelled"];

/// Why a receipt was refused. `field` names what is wrong (`statement.nonce`,
/// `agent_signature`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReceiptError {
    /// The statement is malformed.
    #[error("{field}: {message}")]
    InvalidStatement {
        /// The field at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A public key is not 32 bytes of base64.
    #[error("{field}: the registered public_key is not a base64 Ed25519 key")]
    MalformedKey {
        /// Whose key.
        field: String,
    },
    /// A signature is not 64 bytes of base64.
    #[error("{field}: must be a base64 Ed25519 signature (64 bytes)")]
    MalformedSignature {
        /// Which signature.
        field: String,
    },
    /// A signature does not verify under the registered key.
    #[error("{field}: does not verify against the statement's canonical JSON and the registered public_key")]
    BadSignature {
        /// Which signature.
        field: String,
    },
}

fn invalid(field: &str, message: &str) -> ReceiptError {
    ReceiptError::InvalidStatement {
        field: format!("statement.{field}"),
        message: message.to_owned(),
    }
}

fn text<'a>(
    m: &'a serde_json::Map<String, Value>,
    k: &str,
    max: usize,
) -> Result<&'a str, ReceiptError> {
    match m.get(k) {
        Some(Value::String(s))
            if !s.is_empty() && s.chars().count() <= max && !s.chars().any(char::is_control) =>
        {
            Ok(s)
        }
        Some(Value::String(_)) => Err(invalid(
            k,
            &format!("1 to {max} characters, no control characters"),
        )),
        None | Some(Value::Null) => Err(invalid(k, "missing")),
        Some(_) => Err(invalid(k, "must be a string")),
    }
}

fn is_timestamp(s: &str) -> bool {
    // RFC 3339 in UTC or with an offset: 2026-12-01T10:00:00Z, fractions allowed.
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || b[10] != b'T'
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(f) = rest.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 9 {
            return false;
        }
        rest = &f[n..];
    }
    rest == "Z"
        || (rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':')
}

/// A checked statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    /// The service the call went to.
    pub service_id: String,
    /// The agent that made it.
    pub agent_id: String,
    /// When, RFC 3339.
    pub call_at: String,
    /// `success`, `partial`, `failure` or `cancelled`.
    pub outcome: String,
    /// Milliseconds, 0 to 86,400,000.
    pub latency_ms: f64,
    /// 8 to 128 characters of `[A-Za-z0-9_-]`, unique per statement.
    pub nonce: String,
    /// sha256 (hex) of the canonical JSON: the replay key.
    pub hash: String,
    /// The canonical JSON the signatures cover.
    pub canonical: String,
}

/// Checks a statement (exactly the six fields) and computes its canonical JSON and hash.
pub fn parse_statement(v: &Value) -> Result<Statement, ReceiptError> {
    let Some(m) = v.as_object() else {
        return Err(ReceiptError::InvalidStatement {
            field: "statement".into(),
            message: "must be a JSON object".into(),
        });
    };
    const FIELDS: &[&str] = &[
        "service_id",
        "agent_id",
        "call_at",
        "outcome",
        "latency_ms",
        "nonce",
    ];
    if let Some(k) = m.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(invalid(k, "unknown field (a statement has service_id, agent_id, call_at, outcome, latency_ms, nonce)"));
    }
    let service_id = text(m, "service_id", 128)?.to_owned();
    let agent_id = text(m, "agent_id", 128)?.to_owned();
    let call_at = text(m, "call_at", 40)?;
    if !is_timestamp(call_at) {
        return Err(invalid(
            "call_at",
            "must be an RFC 3339 time such as 2026-12-01T10:00:00Z",
        ));
    }
    let outcome = text(m, "outcome", 16)?;
    if !OUTCOMES.contains(&outcome) {
        return Err(invalid(
            "outcome",
            "must be one of success|partial|failure|cancelled",
        ));
    }
    let latency_ms = match m.get("latency_ms") {
        None | Some(Value::Null) => return Err(invalid("latency_ms", "missing")),
        Some(x) => x
            .as_f64()
            .filter(|l| (0.0..=86_400_000.0).contains(l))
            .ok_or_else(|| invalid("latency_ms", "must be a number from 0 to 86400000"))?,
    };
    let nonce = text(m, "nonce", 128)?;
    if nonce.len() < 8
        || !nonce
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(invalid(
            "nonce",
            "must be 8 to 128 characters of [A-Za-z0-9_-]",
        ));
    }
    let canonical = crate::schema_hash::canonical_json(v.to_string().as_bytes())
        .map_err(|e| invalid("", &e.to_string()))?;
    Ok(Statement {
        hash: hex::encode(Sha256::digest(canonical.as_bytes())),
        service_id,
        agent_id,
        call_at: call_at.to_owned(),
        outcome: outcome.to_owned(),
        latency_ms,
        nonce: nonce.to_owned(),
        canonical,
    })
}

/// Verifies one base64 Ed25519 `signature` over `message` under the base64 `public_key`;
/// `field` names the signature in the error.
pub fn verify_signature(
    field: &str,
    public_key: &str,
    signature: &str,
    message: &[u8],
) -> Result<(), ReceiptError> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let key: [u8; 32] = b64
        .decode(public_key.trim())
        .ok()
        .and_then(|k| k.try_into().ok())
        .ok_or_else(|| ReceiptError::MalformedKey {
            field: field.to_owned(),
        })?;
    let key = VerifyingKey::from_bytes(&key).map_err(|_| ReceiptError::MalformedKey {
        field: field.to_owned(),
    })?;
    let sig: [u8; 64] = b64
        .decode(signature.trim())
        .ok()
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| ReceiptError::MalformedSignature {
            field: field.to_owned(),
        })?;
    key.verify(message, &Signature::from_bytes(&sig))
        .map_err(|_| ReceiptError::BadSignature {
            field: field.to_owned(),
        })
}

/// Whether `public_key` is a base64 Ed25519 public key (for registration and the catalog).
pub fn valid_public_key(public_key: &str) -> bool {
    base64::engine::general_purpose::STANDARD
        .decode(public_key)
        .ok()
        .and_then(|k| <[u8; 32]>::try_from(k).ok())
        .is_some_and(|k| VerifyingKey::from_bytes(&k).is_ok())
}

/// The weight of a receipt by its valid signatures: 0.3 for one, 1.0 for both, 0 for none.
pub fn receipt_weight(agent_signed: bool, service_signed: bool) -> f64 {
    match (agent_signed, service_signed) {
        (true, true) => COSIGNED_WEIGHT,
        (false, false) => 0.0,
        _ => ONE_SIGNATURE_WEIGHT,
    }
}
