//! Checking a `protocol` submission against the server's own probe of the same remote
//! (SPEC §11), made while the provider's lease holds.
//!
//! In this order, the first difference deciding:
//! 1. The server's probe reached level 0 (no answer, a refusal such as 401 or 403, or no
//!    JSON-RPC) and the submission claims more: [`Verdict::Unverifiable`]. Some remotes
//!    answer some networks only; what the server cannot see it cannot confirm, and it
//!    does not count that against the provider either.
//! 2. `observed.reached_level`, `observed.tool_count`, `observed.schema_hash`: equal, or
//!    [`Verdict::Contradicts`] naming the field.
//! 3. The dimensions that follow from `initialize` and `tools/list` alone
//!    ([`CHECKED_DIMENSIONS`]: every one but `latency`), each within
//!    [`DIMENSION_TOLERANCE`] of the server's own [`super::conformance::score`]. The same
//!    answers give the same values (they are rounded to two decimals by one function), so
//!    the tolerance only absorbs how a number is written.
//!
//! Not checked: `latency` (it is measured from the provider's vantage, which the server
//! does not share), test results' `latency_ms`, `runner_id`, `execution_time_ms`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::conformance;
use super::submission::{Checked, Observed};
use crate::scanner::ProbeResult;

/// The `protocol` dimensions the server recomputes from its own probe.
pub const CHECKED_DIMENSIONS: [&str; 5] = [
    "reachability",
    "tool_discovery",
    "tool_documentation",
    "schema_quality",
    "agent_guidance",
];
/// How far a checked dimension may be from the server's own value (on 0–10).
pub const DIMENSION_TOLERANCE: f64 = 0.01;

/// A submitted fact the server's probe saw otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contradiction {
    /// `reached_level`, `tool_count`, `schema_hash` or `dimensions.<name>`.
    pub field: String,
    /// The value submitted (`null` when absent).
    pub submitted: Value,
    /// The value the server saw.
    pub seen: Value,
}

/// A value as a message shows it: numbers as Rust writes them (`10`, `6.67`), text bare.
fn shown(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |x| x.to_string()),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl std::fmt::Display for Contradiction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (submitted {}, the server saw {})",
            self.field,
            shown(&self.submitted),
            shown(&self.seen)
        )
    }
}

/// What the server's probe says of a submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Every checked fact agrees.
    Agrees,
    /// A fact differs.
    Contradicts(Contradiction),
    /// The server's probe did not get as far as the submission claims.
    Unverifiable {
        /// The level the server's probe reached (0).
        reached_level: u8,
        /// Its HTTP status, when it got one.
        http_status: Option<u16>,
        /// Why, when there is a kind to name (`timeout`, `blocked_url`, …).
        error_type: Option<crate::scanner::ErrorType>,
    },
}

fn value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn differs<T: Serialize + PartialEq>(field: &str, submitted: &T, seen: &T) -> Option<Verdict> {
    (submitted != seen).then(|| {
        Verdict::Contradicts(Contradiction {
            field: field.to_owned(),
            submitted: value(submitted),
            seen: value(seen),
        })
    })
}

/// Judges `submitted` (a checked `protocol` submission) by `server`, the server's own probe
/// of the directive's remote.
pub fn verify(submitted: &Checked, server: &ProbeResult) -> Verdict {
    let claimed = submitted.observed.clone().unwrap_or(Observed {
        reached_level: 0,
        tool_count: None,
        schema_hash: None,
    });
    if server.reached_level == 0 && claimed.reached_level > 0 {
        return Verdict::Unverifiable {
            reached_level: server.reached_level,
            http_status: server.http_status,
            error_type: server.error_type,
        };
    }
    let own = conformance::score(server);
    let seen = &own.observed;
    if let Some(v) = differs("reached_level", &claimed.reached_level, &seen.reached_level)
        .or_else(|| differs("tool_count", &claimed.tool_count, &seen.tool_count))
        .or_else(|| differs("schema_hash", &claimed.schema_hash, &seen.schema_hash))
    {
        return v;
    }
    for name in CHECKED_DIMENSIONS {
        let (mine, theirs) = (
            submitted.dimensions.get(name).copied().unwrap_or(f64::NAN),
            own.dimensions.get(name).copied().unwrap_or(f64::NAN),
        );
        // NaN (a missing dimension) is never within the tolerance.
        let within = (mine - theirs).abs() <= DIMENSION_TOLERANCE;
        if !within {
            return Verdict::Contradicts(Contradiction {
                field: format!("dimensions.{name}"),
                submitted: value(&mine),
                seen: value(&theirs),
            });
        }
    }
    Verdict::Agrees
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::submission::check;
    use crate::scanner::quality::{ServerFacts, ToolQuality};
    use crate::scanner::tools::ToolsSummary;
    use crate::scanner::ErrorType;
    use serde_json::json;

    fn server(tools: u64) -> ProbeResult {
        let quality = ToolQuality {
            tools,
            documented: tools,
            with_schema: tools,
            ..ToolQuality::default()
        };
        ProbeResult {
            reached_level: 2,
            http_status: Some(200),
            initialize_status: Some(200),
            latency_ms: Some(80.0),
            server: ServerFacts {
                instructions: true,
                name: true,
                version: true,
            },
            tools: Some(ToolsSummary {
                tool_count: tools,
                schema_hash: Some("a".repeat(64)),
                quality,
                ..ToolsSummary::default()
            }),
            ..ProbeResult::default()
        }
    }

    /// The honest submission for `p`, with `latency` as the provider measured it.
    fn honest(p: &ProbeResult, latency: f64) -> Checked {
        let c = conformance::score(p);
        let mut dims = c.dimensions.clone();
        dims.insert("latency".into(), latency);
        let body = json!({"directive_id": "bd_1", "dimensions": dims,
            "overall_score": crate::benchmark::overall(crate::benchmark::Kind::Protocol, &dims),
            "test_results": c.test_results, "runner_id": "r", "execution_time_ms": 10, "observed": c.observed});
        check(&body, crate::benchmark::Kind::Protocol).unwrap()
    }

    #[test]
    fn an_honest_submission_agrees_whatever_its_latency() {
        let p = server(13);
        assert_eq!(verify(&honest(&p, 1.0), &p), Verdict::Agrees);
        assert_eq!(verify(&honest(&p, 10.0), &p), Verdict::Agrees);
    }

    #[test]
    fn each_contradiction_is_named() {
        let mut forged = honest(&server(9), 10.0);
        let v = verify(&forged, &server(13));
        let Verdict::Contradicts(c) = v else {
            panic!("{v:?}")
        };
        assert_eq!(c.to_string(), "tool_count (submitted 9, the server saw 13)");
        forged = honest(&server(13), 10.0);
        forged.observed.as_mut().unwrap().schema_hash = Some("b".repeat(64));
        assert!(
            matches!(verify(&forged, &server(13)), Verdict::Contradicts(c) if c.field == "schema_hash")
        );
        forged = honest(&server(13), 10.0);
        forged.dimensions.insert("agent_guidance".into(), 10.0);
        let mut bare = server(13);
        bare.server.instructions = false;
        let Verdict::Contradicts(c) = verify(&forged, &bare) else {
            panic!("agrees")
        };
        assert_eq!(
            c.to_string(),
            "dimensions.agent_guidance (submitted 10, the server saw 4)"
        );
    }

    #[test]
    fn what_the_server_cannot_reach_it_cannot_confirm() {
        let down = ProbeResult {
            error_type: Some(ErrorType::Timeout),
            ..ProbeResult::default()
        };
        assert_eq!(
            verify(&honest(&server(3), 10.0), &down),
            Verdict::Unverifiable {
                reached_level: 0,
                http_status: None,
                error_type: Some(ErrorType::Timeout)
            }
        );
        // Both saw it down: that agrees.
        assert_eq!(verify(&honest(&down, 0.0), &down), Verdict::Agrees);
        // The server got further than the provider claims: a contradiction.
        let v = verify(&honest(&down, 0.0), &server(3));
        assert!(matches!(v, Verdict::Contradicts(c) if c.field == "reached_level"));
    }
}
