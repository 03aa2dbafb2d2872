//! Validation of interaction records arriving at the API (SPEC §3.2, §5).
//!
//! The server hands the parsed JSON body to [`check_records`]: every item is validated on
//! its own (SPEC §5, per-record acceptance), so one bad record never costs the others; the
//! body itself is refused only when it is neither a record nor an array of 1..=1000.
//! [`validate_records`] is the strict form for clients that check a batch before sending:
//! typed records, or the first problem, naming the item's index and the field.
//!
//! Decisions, in one place:
//! - **Unknown fields are ignored**, which also means they are dropped: a client that sends
//!   `arguments`, `result` or `created_at` by mistake never gets them stored.
//! - **Defaults**: `actor` → `"anonymous"`, `source` → `organic`, `request_kind` → `tool`.
//!   Every optional field accepts an explicit JSON `null` as "absent".
//! - **Strings** must be non-empty, contain no control characters (C0, DEL, C1) and stay
//!   within a limit counted in Unicode scalar values: `target` ≤ 256, `actor`/`task_type` ≤ 128,
//!   `record_id` ≤ 64 of `[A-Za-z0-9_-]`, `server_version`/`protocol_version`
//!   ≤ 32 of `[0-9A-Za-z.+_-]` (the SPEC §3.2 publishing rule, applied to every client),
//!   `recorder_version` ≤ 32 of the same and `/` (`<recorder>/<version>`, see `provenance`;
//!   kept exactly as sent: it is the client's word, not proof),
//!   `schema_hash` exactly 64 lowercase hex digits.
//! - **`latency_ms`** is a finite number in `0..=86_400_000` (one day).
//! - **`tools_has_more`** is an optional boolean.
//! - **`failure_type` and `error_layer`** are only allowed on `failure` and `partial`
//!   outcomes: a success or a cancellation that names a failure is contradictory input.

use super::{ErrorLayer, FailureType, InteractionRecord, Outcome, RequestKind, Source, TargetType};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod fields;

pub(crate) use fields::{
    enum_field, opt_bool, opt_f64_range, opt_record_id, opt_text, opt_u64_range, req_f64_range,
    req_text,
};

/// Most records one request may carry.
pub const MAX_BATCH: usize = 1000;

/// Longest `target`, in characters.
pub const MAX_TARGET: usize = 256;
/// Longest `actor` and `task_type`, in characters.
pub const MAX_NAME: usize = 128;
/// Longest `record_id`, in characters.
pub const MAX_RECORD_ID: usize = 64;
/// Longest `server_version`, `protocol_version` and `recorder_version`.
pub const MAX_VERSION: usize = 32;
/// Largest `latency_ms`: one day.
pub const MAX_LATENCY_MS: f64 = 86_400_000.0;

/// What kind of problem a [`ValidationError`] reports; stable, serialised as `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationErrorKind {
    /// A required field is absent (or `null`).
    MissingField,
    /// A field has the wrong JSON type (e.g. a number where a string belongs).
    WrongType,
    /// A string is not one of the allowed values of an enumeration.
    UnknownValue,
    /// A string is empty.
    Empty,
    /// A string is longer than its limit.
    TooLong,
    /// A number is outside its range (or not finite).
    OutOfRange,
    /// A string contains a control character.
    ControlCharacter,
    /// A string does not have the required shape (pattern, hex, host).
    InvalidFormat,
    /// Fields contradict each other (e.g. `error_layer` on a success).
    Inconsistent,
    /// The body is neither one object nor an array of 1..=1000 of them.
    BatchSize,
}

/// One problem with submitted data, naming where it is.
///
/// Serialises as `{"type": kind, "index": n|null, "field": "...", "path": "...",
/// "message": "..."}`. `Display` is `path: message`, e.g.
/// `records[3].outcome: must be one of success|partial|failure|cancelled`, ready to be the
/// API's `{"error": ...}` text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ValidationError {
    /// Stable kind of problem.
    #[serde(rename = "type")]
    pub kind: ValidationErrorKind,
    /// Position in the submitted array; `None` for a single object or the body itself.
    pub index: Option<usize>,
    /// The field at fault; empty when the item itself is at fault.
    pub field: String,
    /// Where, as a reader would write it: `records[3].outcome`, `outcome`, `records`, or
    /// `body` when a lone item is not an object.
    pub path: String,
    /// What is wrong, in words; never echoes the submitted value.
    pub message: String,
}

impl ValidationError {
    /// An error about `field` of a single (unindexed) item.
    pub fn new(kind: ValidationErrorKind, field: &str, message: impl Into<String>) -> Self {
        let path = if field.is_empty() {
            "body".to_owned()
        } else {
            field.to_owned()
        };
        Self {
            kind,
            index: None,
            field: field.to_owned(),
            path,
            message: message.into(),
        }
    }

    /// The same error, placed at `index` of an array called `list` (`records`, `observations`).
    pub fn at(mut self, list: &str, index: usize) -> Self {
        self.index = Some(index);
        self.path = if self.field.is_empty() {
            format!("{list}[{index}]")
        } else {
            format!("{list}[{index}].{}", self.field)
        };
        self
    }
}

/// Checks a node id: `^ld_[A-Za-z0-9_-]{1,64}$` (SPEC §5).
pub fn validate_node_id(s: &str) -> Result<(), ValidationError> {
    let bad = |m: &str| {
        Err(ValidationError::new(
            ValidationErrorKind::InvalidFormat,
            "node_id",
            m,
        ))
    };
    let Some(rest) = s.strip_prefix("ld_") else {
        return bad("must match ^ld_[A-Za-z0-9_-]{1,64}$ (missing the ld_ prefix)");
    };
    if rest.is_empty() || rest.len() > 64 {
        return bad("must match ^ld_[A-Za-z0-9_-]{1,64}$ (1 to 64 characters after ld_)");
    }
    if !rest
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return bad("must match ^ld_[A-Za-z0-9_-]{1,64}$ (only letters, digits, _ and -)");
    }
    Ok(())
}

/// A character SPEC §3.2 allows in a published version (`^[0-9A-Za-z.+_-]{1,32}$`).
pub(crate) fn is_version_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '_' | '-')
}

fn opt_version(m: &Map<String, Value>, key: &str) -> Result<Option<String>, ValidationError> {
    let v = opt_text(m, key, MAX_VERSION)?;
    if let Some(s) = &v {
        if !s.chars().all(is_version_char) {
            return Err(ValidationError::new(
                ValidationErrorKind::InvalidFormat,
                key,
                "must match ^[0-9A-Za-z.+_-]{1,32}$",
            ));
        }
    }
    Ok(v)
}

/// Validates one record object and builds the typed record, applying the defaults.
///
/// Errors carry no index (see [`ValidationError::at`]); the first problem found wins,
/// checking fields in the order of [`InteractionRecord`].
pub fn validate_record(v: &Value) -> Result<InteractionRecord, ValidationError> {
    let Some(m) = v.as_object() else {
        return Err(ValidationError::new(
            ValidationErrorKind::WrongType,
            "",
            "must be a JSON object",
        ));
    };
    let record_id = opt_record_id(m)?;
    let actor = opt_text(m, "actor", MAX_NAME)?.unwrap_or_else(|| "anonymous".to_owned());
    let target = req_text(m, "target", MAX_TARGET)?;
    let target_type: TargetType = enum_field(m, "target_type", "tool|agent|service|human")?
        .ok_or_else(|| missing("target_type"))?;
    let task_type = req_text(m, "task_type", MAX_NAME)?;
    let outcome: Outcome = enum_field(m, "outcome", "success|partial|failure|cancelled")?
        .ok_or_else(|| missing("outcome"))?;
    let failure_type: Option<FailureType> = enum_field(
        m,
        "failure_type",
        "invalid_arguments|timeout|server_error|tool_error|unknown",
    )?;
    let error_layer: Option<ErrorLayer> = enum_field(m, "error_layer", "tool|request|server")?;
    for (key, present) in [
        ("failure_type", failure_type.is_some()),
        ("error_layer", error_layer.is_some()),
    ] {
        if present && !matches!(outcome, Outcome::Failure | Outcome::Partial) {
            return Err(ValidationError::new(
                ValidationErrorKind::Inconsistent,
                key,
                "only allowed when outcome is failure or partial",
            ));
        }
    }
    let request_kind: RequestKind =
        enum_field(m, "request_kind", "tool|protocol")?.unwrap_or(RequestKind::Tool);
    let latency_ms = opt_f64_range(m, "latency_ms", 0.0, MAX_LATENCY_MS)?;
    let source: Source = enum_field(m, "source", "organic|seeded|synthetic")?.unwrap_or_default();
    let node_id = opt_text(m, "node_id", 3 + 64)?;
    if let Some(id) = &node_id {
        validate_node_id(id)?;
    }
    let server_version = opt_version(m, "server_version")?;
    let schema_hash = opt_text(m, "schema_hash", 64)?;
    if let Some(h) = &schema_hash {
        if h.len() != 64 || !h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(ValidationError::new(
                ValidationErrorKind::InvalidFormat,
                "schema_hash",
                "must be 64 lowercase hex digits",
            ));
        }
    }
    let recorder_version = opt_text(m, "recorder_version", MAX_VERSION)?;
    if let Some(s) = &recorder_version {
        if !s.chars().all(super::provenance::is_recorder_version_char) {
            return Err(ValidationError::new(
                ValidationErrorKind::InvalidFormat,
                "recorder_version",
                "must match ^[0-9A-Za-z.+_/-]{1,32}$ (<recorder>/<version>)",
            ));
        }
    }
    let protocol_version = opt_version(m, "protocol_version")?;
    let tools_has_more = opt_bool(m, "tools_has_more")?;
    Ok(InteractionRecord {
        record_id,
        actor,
        target,
        target_type,
        task_type,
        outcome,
        failure_type,
        error_layer,
        request_kind,
        latency_ms,
        source,
        node_id,
        server_version,
        schema_hash,
        recorder_version,
        protocol_version,
        tools_has_more,
    })
}

fn missing(key: &str) -> ValidationError {
    ValidationError::new(ValidationErrorKind::MissingField, key, "is required")
}

/// Validates a request body of one record object or an array of 1..=[`MAX_BATCH`] of them.
///
/// Strict: the first bad item fails the batch, its error naming the index
/// (`records[3].outcome: ...`). A single object's errors carry no index. The API accepts
/// item by item instead ([`check_records`]).
pub fn validate_records(v: &Value) -> Result<Vec<InteractionRecord>, ValidationError> {
    check_records(v)?.strict("records")
}

/// Checks a request body item by item (SPEC §5): `Err` only when the body is neither one
/// record object nor an array of 1..=[`MAX_BATCH`]; otherwise one result per item.
pub fn check_records(v: &Value) -> Result<Checked<InteractionRecord>, ValidationError> {
    check_batch(v, "records", validate_record)
}

/// A request body checked item by item: what the API stores and what it refuses by index.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked<T> {
    /// The body was one object, not an array (its answer is about that one item).
    pub single: bool,
    /// One result per submitted item, in order. Errors carry no index: the position in
    /// this list is the item's index.
    pub items: Vec<Result<T, ValidationError>>,
}

impl<T> Checked<T> {
    /// Every item, or the first error placed at its index in `list` (a single object's
    /// error stays unindexed).
    pub fn strict(self, list: &str) -> Result<Vec<T>, ValidationError> {
        let single = self.single;
        self.items
            .into_iter()
            .enumerate()
            .map(|(i, r)| r.map_err(|e| if single { e } else { e.at(list, i) }))
            .collect()
    }
}

/// One refused item of a batch, as the API reports it:
/// `{"index": 3, "error": "outcome: must be one of success|partial|failure|cancelled"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Rejection {
    /// Position of the item in the submitted array (0 for a single object).
    pub index: usize,
    /// `field: what is wrong` (`record: …` when the item itself is not an object); never
    /// echoes the submitted value.
    pub error: String,
}

impl Rejection {
    /// The rejection of item `index` for `error`; `item` names a field-less problem
    /// (`record`, `observation`).
    pub fn new(index: usize, item: &str, error: &ValidationError) -> Self {
        let field = if error.field.is_empty() {
            item
        } else {
            &error.field
        };
        Rejection {
            index,
            error: format!("{field}: {}", error.message),
        }
    }
}

/// Shared body rule for records and observations: one object, or an array of 1..=1000,
/// each item checked by `one`.
pub(crate) fn check_batch<T>(
    v: &Value,
    list: &str,
    one: impl Fn(&Value) -> Result<T, ValidationError>,
) -> Result<Checked<T>, ValidationError> {
    match v {
        Value::Array(items) => {
            if items.is_empty() || items.len() > MAX_BATCH {
                let mut e = ValidationError::new(
                    ValidationErrorKind::BatchSize,
                    "",
                    format!("must hold 1 to {MAX_BATCH} items, got {}", items.len()),
                );
                list.clone_into(&mut e.path);
                return Err(e);
            }
            Ok(Checked {
                single: false,
                items: items.iter().map(one).collect(),
            })
        }
        Value::Object(_) => Ok(Checked {
            single: true,
            items: vec![one(v)],
        }),
        _ => {
            let mut e = ValidationError::new(
                ValidationErrorKind::WrongType,
                "",
                "body must be one JSON object or an array of them",
            );
            list.clone_into(&mut e.path);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_bad_item_costs_only_itself() {
        let good = json!({"target": "npm:x", "target_type": "tool", "task_type": "t", "outcome": "success"});
        let mut bad = good.clone();
        bad["outcome"] = json!("exploded");
        let checked = check_records(&json!([good, bad, 7, good])).unwrap();
        assert!(!checked.single);
        let oks: Vec<bool> = checked.items.iter().map(Result::is_ok).collect();
        assert_eq!(oks, [true, false, false, true]);
        let why: Vec<Rejection> = checked
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().err().map(|e| Rejection::new(i, "record", e)))
            .collect();
        assert_eq!(
            why,
            [
                Rejection {
                    index: 1,
                    error: "outcome: must be one of success|partial|failure|cancelled".into()
                },
                Rejection {
                    index: 2,
                    error: "record: must be a JSON object".into()
                },
            ]
        );
        let strict = validate_records(&json!([good, bad])).unwrap_err();
        assert_eq!(strict.path, "records[1].outcome");
        assert_eq!(check_records(&json!([])).unwrap_err().path, "records");
        assert_eq!(check_records(&json!("x")).unwrap_err().path, "records");
        assert!(check_records(&good).unwrap().single);
    }
}
