//! A provider's submission (SPEC §11): `{directive_id, dimensions, overall_score,
//! test_results[{test_case_id, passed, actual_status, latency_ms, error}], runner_id,
//! execution_time_ms, observed?}`, checked field by field, and the score the server records.
//!
//! The recorded score is the server's own [`super::overall`] of the submitted dimensions;
//! an `overall_score` more than [`SCORE_TOLERANCE`] away from it is refused rather than
//! silently replaced, so a provider with a broken scorer hears about it. Test-result
//! `error` texts pass through [`crate::redact`] and are cut to [`MAX_ERROR_CHARS`].
//!
//! A `protocol` submission must carry `observed: {reached_level, tool_count, schema_hash}`
//! ([`Observed`]): the facts of its probe that the server checks against a probe of its
//! own ([`super::verify`]). `tool_count` and `schema_hash` are null below level 2 and
//! required at level 2. An `agent` submission carries none.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{overall, Dimensions, Kind};

/// Most test results per submission.
pub const MAX_TEST_RESULTS: usize = 100;
/// Longest `test_case_id`, `runner_id`.
pub const MAX_ID_CHARS: usize = 128;
/// Longest `error` kept, in characters.
pub const MAX_ERROR_CHARS: usize = 200;
/// Largest `latency_ms` and `execution_time_ms` (24 h).
pub const MAX_MS: f64 = 86_400_000.0;
/// How far `overall_score` may be from the recomputed score.
pub const SCORE_TOLERANCE: f64 = 0.1;
/// Largest `observed.tool_count` (20 pages of tools; far past any real server).
pub const MAX_TOOL_COUNT: u64 = 1_000_000;

/// One test of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// What was tested, e.g. `initialize`.
    pub test_case_id: String,
    /// Whether it passed.
    pub passed: bool,
    /// The HTTP status seen, when there was one.
    pub actual_status: Option<u16>,
    /// Milliseconds, when measured.
    pub latency_ms: Option<f64>,
    /// Why it failed: a stable kind, never a server's or model's text.
    pub error: Option<String>,
}

/// What a `protocol` run's probe observed, as submitted; the server compares it with its
/// own probe of the same remote ([`super::verify`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    /// 0: `initialize` did not complete; 1: it did, `tools/list` did not; 2: both.
    pub reached_level: u8,
    /// Tools over every page read (level 2 only).
    pub tool_count: Option<u64>,
    /// The §3.3 schema hash of the first `tools/list` page (level 2 only).
    pub schema_hash: Option<String>,
}

impl Observed {
    /// What a probe result shows of itself.
    pub fn of(p: &crate::scanner::ProbeResult) -> Observed {
        let tools = p.tools.as_ref().filter(|_| p.reached_level == 2);
        Observed {
            reached_level: p.reached_level,
            tool_count: tools.map(|t| t.tool_count),
            schema_hash: tools.and_then(|t| t.schema_hash.clone()),
        }
    }
}

/// A submission that passed every check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// The directive it answers.
    pub directive_id: String,
    /// The dimensions, exactly the kind's names.
    pub dimensions: Dimensions,
    /// The score the server records ([`super::overall`] of the dimensions).
    pub recorded_score: f64,
    /// The tests, errors redacted.
    pub test_results: Vec<TestResult>,
    /// The provider's runner, e.g. `prowl-provider-hook/0.1.0`.
    pub runner_id: String,
    /// How long the run took.
    pub execution_time_ms: f64,
    /// What the probe observed (`protocol` only).
    pub observed: Option<Observed>,
}

/// Why a submission was refused; `field` names what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SubmissionError {
    /// A field is missing or malformed.
    #[error("{field}: {message}")]
    Invalid {
        /// The field at fault, e.g. `test_results[2].passed`.
        field: String,
        /// What is wrong.
        message: String,
    },
}

fn invalid(field: impl Into<String>, message: impl Into<String>) -> SubmissionError {
    SubmissionError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

fn id_text(
    v: Option<&Value>,
    field: &str,
    required: bool,
) -> Result<Option<String>, SubmissionError> {
    match v {
        None | Some(Value::Null) if !required => Ok(None),
        None | Some(Value::Null) => Err(invalid(field, "missing")),
        Some(Value::String(s))
            if !s.is_empty()
                && s.chars().count() <= MAX_ID_CHARS
                && !s.chars().any(char::is_control) =>
        {
            Ok(Some(s.clone()))
        }
        Some(_) => Err(invalid(
            field,
            format!(
                "must be a string of 1 to {MAX_ID_CHARS} characters without control characters"
            ),
        )),
    }
}

fn millis(v: Option<&Value>, field: &str, required: bool) -> Result<Option<f64>, SubmissionError> {
    match v {
        None | Some(Value::Null) if !required => Ok(None),
        None | Some(Value::Null) => Err(invalid(field, "missing")),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if (0.0..=MAX_MS).contains(&x) => Ok(Some(x)),
            _ => Err(invalid(
                field,
                "must be a number of milliseconds from 0 to 86400000",
            )),
        },
        Some(_) => Err(invalid(
            field,
            "must be a number of milliseconds from 0 to 86400000",
        )),
    }
}

fn dimensions(v: Option<&Value>, kind: Kind) -> Result<Dimensions, SubmissionError> {
    let names: Vec<&str> = kind.weights().iter().map(|(n, _)| *n).collect();
    let Some(Value::Object(m)) = v else {
        return Err(invalid(
            "dimensions",
            format!("must be an object with {}", names.join(", ")),
        ));
    };
    if let Some(k) = m.keys().find(|k| !names.contains(&k.as_str())) {
        return Err(invalid(
            format!("dimensions.{k}"),
            format!(
                "not a dimension of a {} directive ({})",
                kind.as_str(),
                names.join(", ")
            ),
        ));
    }
    names
        .iter()
        .map(|name| match m.get(*name).and_then(Value::as_f64) {
            Some(x) if (0.0..=10.0).contains(&x) => Ok(((*name).to_owned(), x)),
            None if !m.contains_key(*name) => Err(invalid(format!("dimensions.{name}"), "missing")),
            _ => Err(invalid(
                format!("dimensions.{name}"),
                "must be a number from 0 to 10",
            )),
        })
        .collect()
}

fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn observed(v: Option<&Value>, kind: Kind) -> Result<Option<Observed>, SubmissionError> {
    const KEYS: [&str; 3] = ["reached_level", "tool_count", "schema_hash"];
    let shape = "an object {reached_level, tool_count, schema_hash}";
    let m = match (kind, v) {
        (Kind::Agent, None | Some(Value::Null)) => return Ok(None),
        (Kind::Agent, Some(_)) => {
            let why = "only a protocol submission carries what a probe observed";
            return Err(invalid("observed", why));
        }
        (Kind::Protocol, Some(Value::Object(m))) => m,
        (Kind::Protocol, None | Some(Value::Null)) => {
            return Err(invalid("observed", format!("missing: {shape}")));
        }
        (Kind::Protocol, Some(_)) => {
            return Err(invalid("observed", format!("must be {shape}")));
        }
    };
    if let Some(k) = m.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(invalid(
            format!("observed.{k}"),
            format!("not an observed fact ({})", KEYS.join(", ")),
        ));
    }
    let reached_level = match m.get("reached_level").and_then(Value::as_u64) {
        Some(l @ 0..=2) => l as u8,
        _ => return Err(invalid("observed.reached_level", "must be 0, 1 or 2")),
    };
    let listed = reached_level == 2;
    let tool_count = match (m.get("tool_count"), listed) {
        (None | Some(Value::Null), false) => None,
        (Some(v), true) if v.as_u64().is_some_and(|n| n <= MAX_TOOL_COUNT) => v.as_u64(),
        (_, true) => {
            return Err(invalid(
                "observed.tool_count",
                format!("must be a whole number of tools (at most {MAX_TOOL_COUNT}) at level 2"),
            ))
        }
        (_, false) => return Err(invalid("observed.tool_count", "must be null below level 2")),
    };
    let schema_hash = match (m.get("schema_hash"), listed) {
        (None | Some(Value::Null), false) => None,
        (Some(Value::String(h)), true) if is_hash(h) => Some(h.clone()),
        (_, true) => {
            return Err(invalid(
                "observed.schema_hash",
                "must be 64 lowercase hex characters at level 2",
            ))
        }
        (_, false) => {
            return Err(invalid(
                "observed.schema_hash",
                "must be null below level 2",
            ))
        }
    };
    Ok(Some(Observed {
        reached_level,
        tool_count,
        schema_hash,
    }))
}

fn test_result(v: &Value, i: usize) -> Result<TestResult, SubmissionError> {
    let at = |k: &str| format!("test_results[{i}].{k}");
    let Value::Object(m) = v else {
        return Err(invalid(format!("test_results[{i}]"), "must be an object"));
    };
    let passed = match m.get("passed") {
        Some(Value::Bool(b)) => *b,
        _ => return Err(invalid(at("passed"), "must be true or false")),
    };
    let actual_status = match m.get("actual_status") {
        None | Some(Value::Null) => None,
        Some(s) => match s.as_u64() {
            Some(code @ 100..=599) => Some(code as u16),
            _ => {
                return Err(invalid(
                    at("actual_status"),
                    "must be an HTTP status (100-599) or null",
                ))
            }
        },
    };
    let error = match m.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(
            crate::redact::redact(s)
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_ERROR_CHARS)
                .collect(),
        ),
        Some(_) => return Err(invalid(at("error"), "must be a string or null")),
    };
    Ok(TestResult {
        test_case_id: id_text(m.get("test_case_id"), &at("test_case_id"), true)?
            .unwrap_or_default(),
        passed,
        actual_status,
        latency_ms: millis(m.get("latency_ms"), &at("latency_ms"), false)?,
        error,
    })
}

fn object_of(body: &Value) -> Result<&Map<String, Value>, SubmissionError> {
    body.as_object()
        .ok_or_else(|| invalid("body", "must be a JSON object"))
}

/// The `directive_id` of a submission, read first so the host can find the directive
/// (and its kind) before the rest is checked.
pub fn directive_id(body: &Value) -> Result<String, SubmissionError> {
    Ok(id_text(object_of(body)?.get("directive_id"), "directive_id", true)?.unwrap_or_default())
}

/// Checks a submission for a directive of `kind`.
pub fn check(body: &Value, kind: Kind) -> Result<Checked, SubmissionError> {
    let m = object_of(body)?;
    let directive_id = directive_id(body)?;
    let dims = dimensions(m.get("dimensions"), kind)?;
    let recorded_score = overall(kind, &dims);
    match m.get("overall_score").and_then(Value::as_f64) {
        Some(s) if (0.0..=100.0).contains(&s) => {
            if (s - recorded_score).abs() > SCORE_TOLERANCE {
                return Err(invalid(
                    "overall_score",
                    format!(
                        "{s} is not the weighted sum of the dimensions × 10 ({recorded_score})"
                    ),
                ));
            }
        }
        _ => return Err(invalid("overall_score", "must be a number from 0 to 100")),
    }
    let test_results = match m.get("test_results") {
        Some(Value::Array(a)) if a.len() <= MAX_TEST_RESULTS => a
            .iter()
            .enumerate()
            .map(|(i, t)| test_result(t, i))
            .collect::<Result<Vec<_>, _>>()?,
        Some(Value::Array(_)) => {
            return Err(invalid(
                "test_results",
                format!("at most {MAX_TEST_RESULTS} items"),
            ))
        }
        _ => return Err(invalid("test_results", "must be an array")),
    };
    Ok(Checked {
        directive_id,
        dimensions: dims,
        recorded_score,
        test_results,
        runner_id: id_text(m.get("runner_id"), "runner_id", true)?.unwrap_or_default(),
        execution_time_ms: millis(m.get("execution_time_ms"), "execution_time_ms", true)?
            .unwrap_or_default(),
        observed: observed(m.get("observed"), kind)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body() -> Value {
        json!({"directive_id": "bd_1", "dimensions": {"reachability": 10, "tool_discovery": 10,
            "tool_documentation": 5, "schema_quality": 10, "latency": 10, "agent_guidance": 6},
            "overall_score": 86.0, "runner_id": "prowl-provider-hook/0.1.0", "execution_time_ms": 340,
            "observed": {"reached_level": 2, "tool_count": 3, "schema_hash": "0".repeat(64)},
            "test_results": [{"test_case_id": "initialize", "passed": false, "actual_status": 401,
                "latency_ms": 12, "error": "Bearer abcdefghijklmnopqrstuvwxyz0123 refused"}]})
    }

    #[test]
    fn a_good_submission_is_recorded_at_the_recomputed_score() {
        let c = check(&body(), Kind::Protocol).unwrap();
        assert_eq!(c.recorded_score, 86.0);
        assert_eq!(c.test_results[0].actual_status, Some(401));
        assert!(!c.test_results[0]
            .error
            .as_ref()
            .unwrap()
            .contains("abcdefghij"));
    }

    #[test]
    fn each_fault_is_named() {
        let cases: [(&str, Value, &str); 10] = [
            ("/dimensions/speed", json!(1), "dimensions.speed"),
            ("/dimensions/latency", json!(11), "dimensions.latency"),
            ("/overall_score", json!(90), "overall_score"),
            (
                "/test_results/0/passed",
                json!("yes"),
                "test_results[0].passed",
            ),
            ("/runner_id", json!(""), "runner_id"),
            ("/execution_time_ms", json!(-1), "execution_time_ms"),
            (
                "/observed/reached_level",
                json!(3),
                "observed.reached_level",
            ),
            ("/observed/tool_count", json!(-2), "observed.tool_count"),
            (
                "/observed/schema_hash",
                json!("ABC"),
                "observed.schema_hash",
            ),
            ("/observed/desc_hash", json!("x"), "observed.desc_hash"),
        ];
        for (pointer, value, field) in cases {
            let mut b = body();
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            b.pointer_mut(parent).unwrap()[key] = value;
            let err = check(&b, Kind::Protocol).unwrap_err();
            assert!(err.to_string().starts_with(&format!("{field}:")), "{err}");
        }
        let mut b = body();
        b["dimensions"].as_object_mut().unwrap().remove("latency");
        assert_eq!(
            check(&b, Kind::Protocol).unwrap_err().to_string(),
            "dimensions.latency: missing"
        );
        assert!(check(&body(), Kind::Agent)
            .unwrap_err()
            .to_string()
            .starts_with("dimensions.agent_guidance"));
    }

    #[test]
    fn protocol_submissions_carry_what_the_probe_observed() {
        let c = check(&body(), Kind::Protocol).unwrap();
        assert_eq!(c.observed.unwrap().tool_count, Some(3));
        let mut b = body();
        b.as_object_mut().unwrap().remove("observed");
        assert!(check(&b, Kind::Protocol)
            .unwrap_err()
            .to_string()
            .starts_with("observed: missing"));
        // Below level 2 there is no tool list to count or hash.
        b["observed"] = json!({"reached_level": 1, "tool_count": 3, "schema_hash": null});
        assert_eq!(
            check(&b, Kind::Protocol).unwrap_err().to_string(),
            "observed.tool_count: must be null below level 2"
        );
        b["observed"] = json!({"reached_level": 1});
        assert_eq!(
            check(&b, Kind::Protocol).unwrap().observed,
            Some(Observed {
                reached_level: 1,
                tool_count: None,
                schema_hash: None
            })
        );
        b["observed"] = json!({"reached_level": 2, "tool_count": 3});
        assert!(check(&b, Kind::Protocol)
            .unwrap_err()
            .to_string()
            .starts_with("observed.schema_hash:"));
        let agent = json!({"directive_id": "bd_1", "dimensions": {"expectations": 10}, "overall_score": 100,
            "test_results": [], "runner_id": "r", "execution_time_ms": 1, "observed": {"reached_level": 2}});
        assert!(check(&agent, Kind::Agent)
            .unwrap_err()
            .to_string()
            .starts_with("observed: only a protocol submission"));
    }
}
