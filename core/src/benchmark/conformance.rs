//! Conformance scoring of a `protocol` run (SPEC §11), from the Scanner's probe of the
//! remote ([`ProbeResult`]): six dimensions, each 0–10 rounded to two decimals, and the
//! overall score ([`super::overall`]) from the rounded dimensions, so anyone can recompute
//! it from what is shown.
//!
//! - `reachability` (.20): 10 once `initialize` completed (level ≥ 1), else 0. A 401 is
//!   reached by HTTP but not by an agent without credentials: 0.
//! - `tool_discovery` (.15): 10 once `tools/list` answered with a tool array and every page
//!   was read; 5 when pages were left unread (page limit, repeated cursor, a later page
//!   failed); 0 below level 2.
//! - `tool_documentation` (.20): 10 × the share of documented tools (a description of at
//!   least 25 characters); 0 with no tools.
//! - `schema_quality` (.20): 10 × (0.7 × share of tools with an input schema + 0.3 × share
//!   of described properties); the property share is 1 when the schemas declare no
//!   property; 0 with no tools.
//! - `latency` (.15): of the `initialize` exchange: 10 at ≤ 500 ms, 1 at ≥ 5 s, linear
//!   between; 0 below level 1 (a fast refusal is not a fast service).
//! - `agent_guidance` (.10): 6 for `instructions`, + 2 for `serverInfo.name`, + 2 for
//!   `serverInfo.version`.
//!
//! A tool name over 100 characters is a finding; so are the counts behind a dimension
//! below 10. Findings and test results name counts and kinds, never a tool's text.
//!
//! The score carries what the probe observed ([`Observed`]: level, tool count, schema
//! hash), which a provider submits so the server can check it against a probe of its own.

use serde::{Deserialize, Serialize};

use super::submission::{Observed, TestResult};
use super::{overall, round_to, Dimensions, Kind, PROTOCOL_WEIGHTS};
use crate::scanner::quality::ToolQuality;
use crate::scanner::{ErrorType, ProbeResult};

/// Milliseconds at or below which latency scores 10.
pub const FAST_MS: f64 = 500.0;
/// Milliseconds at or above which latency scores 1.
pub const SLOW_MS: f64 = 5000.0;

/// Something a vendor should fix, counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable kind: `long_tool_names`, `undocumented_tools`, `tools_without_schema`,
    /// `undescribed_properties`, `tools_left_unread`.
    pub kind: String,
    /// How many (tools, properties; 1 for `tools_left_unread`).
    pub count: u64,
}

/// The score of one `protocol` run: what a provider submits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conformance {
    /// The six dimensions, each 0–10 (two decimals).
    pub dimensions: Dimensions,
    /// The weighted sum × 10 (0–100, one decimal).
    pub overall_score: f64,
    /// What fell short, counted (empty when nothing did).
    pub findings: Vec<Finding>,
    /// `initialize`, `tools_list`, `tools_complete`, `tool_names`.
    pub test_results: Vec<TestResult>,
    /// What the probe observed: the submission's `observed`.
    pub observed: Observed,
}

/// Latency score of the `initialize` exchange: 10 at ≤ 500 ms, 1 at ≥ 5 s, linear between.
pub fn latency_score(ms: f64) -> f64 {
    if ms <= FAST_MS {
        10.0
    } else if ms >= SLOW_MS {
        1.0
    } else {
        10.0 - 9.0 * (ms - FAST_MS) / (SLOW_MS - FAST_MS)
    }
}

fn share(part: u64, whole: u64) -> f64 {
    part as f64 / whole as f64
}

fn error_name(e: Option<ErrorType>) -> Option<String> {
    serde_json::to_value(e?)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
}

fn dimension_values(p: &ProbeResult, q: &ToolQuality) -> [f64; 6] {
    let level = p.reached_level;
    let has_more = p.tools.as_ref().is_some_and(|t| t.tools_has_more);
    let reachability = if level >= 1 { 10.0 } else { 0.0 };
    let discovery = match (level, has_more) {
        (2, false) => 10.0,
        (2, true) => 5.0,
        _ => 0.0,
    };
    let (documentation, schema) = if q.tools == 0 {
        (0.0, 0.0)
    } else {
        let described = if q.properties == 0 {
            1.0
        } else {
            share(q.described_properties, q.properties)
        };
        (
            10.0 * share(q.documented, q.tools),
            10.0 * (0.7 * share(q.with_schema, q.tools) + 0.3 * described),
        )
    };
    let latency = match p.latency_ms {
        Some(ms) if level >= 1 => latency_score(ms),
        _ => 0.0,
    };
    let s = &p.server;
    let guidance =
        f64::from(6 * u8::from(s.instructions) + 2 * u8::from(s.name) + 2 * u8::from(s.version));
    [
        reachability,
        discovery,
        documentation,
        schema,
        latency,
        guidance,
    ]
}

fn findings(p: &ProbeResult, q: &ToolQuality) -> Vec<Finding> {
    let has_more = p.tools.as_ref().is_some_and(|t| t.tools_has_more);
    [
        ("long_tool_names", q.long_names),
        ("undocumented_tools", q.tools - q.documented.min(q.tools)),
        ("tools_without_schema", q.tools - q.with_schema.min(q.tools)),
        (
            "undescribed_properties",
            q.properties - q.described_properties.min(q.properties),
        ),
        (
            "tools_left_unread",
            u64::from(p.reached_level == 2 && has_more),
        ),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(kind, count)| Finding {
        kind: kind.to_owned(),
        count,
    })
    .collect()
}

fn test_results(p: &ProbeResult, q: &ToolQuality) -> Vec<TestResult> {
    let level = p.reached_level;
    let has_more = p.tools.as_ref().is_some_and(|t| t.tools_has_more);
    let result = |id: &str,
                  passed: bool,
                  status: Option<u16>,
                  latency: Option<f64>,
                  error: Option<String>| TestResult {
        test_case_id: id.to_owned(),
        passed,
        actual_status: status,
        latency_ms: latency,
        error: if passed { None } else { error },
    };
    let not_reached = || Some("not_reached".to_owned());
    vec![
        result(
            "initialize",
            level >= 1,
            if level >= 1 {
                p.initialize_status
            } else {
                p.http_status
            },
            p.latency_ms,
            error_name(p.error_type).or_else(|| Some("no_result".to_owned())),
        ),
        result(
            "tools_list",
            level == 2,
            if level >= 1 { p.http_status } else { None },
            None,
            if level == 1 {
                error_name(p.error_type).or_else(|| Some("no_tool_list".to_owned()))
            } else {
                not_reached()
            },
        ),
        result(
            "tools_complete",
            level == 2 && !has_more,
            None,
            None,
            if level == 2 {
                Some("pages_left_unread".to_owned())
            } else {
                not_reached()
            },
        ),
        result(
            "tool_names",
            level == 2 && q.long_names == 0,
            None,
            None,
            if level == 2 {
                Some("long_tool_names".to_owned())
            } else {
                not_reached()
            },
        ),
    ]
}

/// Scores one probe of a remote.
pub fn score(p: &ProbeResult) -> Conformance {
    let q = p.tools.as_ref().map(|t| t.quality).unwrap_or_default();
    let values = dimension_values(p, &q);
    let dimensions: Dimensions = PROTOCOL_WEIGHTS
        .iter()
        .zip(values)
        .map(|((name, _), v)| ((*name).to_owned(), round_to(v, 2)))
        .collect();
    Conformance {
        overall_score: overall(Kind::Protocol, &dimensions),
        dimensions,
        findings: findings(p, &q),
        test_results: test_results(p, &q),
        observed: Observed::of(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scanner::quality::ServerFacts;
    use crate::scanner::tools::ToolsSummary;

    fn reached(quality: ToolQuality, latency: f64) -> ProbeResult {
        ProbeResult {
            reached_level: 2,
            http_status: Some(200),
            initialize_status: Some(200),
            latency_ms: Some(latency),
            server: ServerFacts {
                instructions: true,
                name: true,
                version: true,
            },
            tools: Some(ToolsSummary {
                tool_count: quality.tools,
                quality,
                ..ToolsSummary::default()
            }),
            ..ProbeResult::default()
        }
    }

    #[test]
    fn a_perfect_server_scores_100_and_an_unreachable_one_0() {
        let q = ToolQuality {
            tools: 2,
            documented: 2,
            with_schema: 2,
            ..ToolQuality::default()
        };
        let c = score(&reached(q, 120.0));
        assert_eq!(c.overall_score, 100.0, "{c:?}");
        assert!(c.findings.is_empty());
        assert!(c.test_results.iter().all(|t| t.passed && t.error.is_none()));
        let down = ProbeResult {
            error_type: Some(ErrorType::Timeout),
            ..ProbeResult::default()
        };
        let c = score(&down);
        assert_eq!(c.overall_score, 0.0);
        assert_eq!(c.test_results[0].error.as_deref(), Some("timeout"));
        assert_eq!(c.test_results[1].error.as_deref(), Some("not_reached"));
    }

    #[test]
    fn latency_is_linear_between_half_a_second_and_five() {
        assert_eq!(latency_score(500.0), 10.0);
        assert_eq!(latency_score(2750.0), 5.5);
        assert_eq!(latency_score(5000.0), 1.0);
        assert_eq!(latency_score(60_000.0), 1.0);
    }

    #[test]
    fn partial_documentation_and_schemas_and_long_names() {
        let q = ToolQuality {
            tools: 4,
            documented: 1,
            with_schema: 3,
            properties: 4,
            described_properties: 1,
            long_names: 1,
        };
        let c = score(&reached(q, 2750.0));
        assert_eq!(c.dimensions["tool_documentation"], 2.5);
        // 10 × (0.7 × 3/4 + 0.3 × 1/4) = 6.0
        assert_eq!(c.dimensions["schema_quality"], 6.0);
        assert_eq!(c.dimensions["latency"], 5.5);
        // 10 × (2 + 1.5 + 0.5 + 1.2 + 0.825 + 1) = 70.25 → 70.3
        assert_eq!(c.overall_score, 70.3);
        let kinds: Vec<_> = c
            .findings
            .iter()
            .map(|f| (f.kind.as_str(), f.count))
            .collect();
        assert_eq!(
            kinds,
            [
                ("long_tool_names", 1),
                ("undocumented_tools", 3),
                ("tools_without_schema", 1),
                ("undescribed_properties", 3)
            ]
        );
        assert!(!c.test_results[3].passed);
    }
}
