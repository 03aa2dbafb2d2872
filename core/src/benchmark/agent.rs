//! The verdict of an `agent` run (SPEC §11): the directive passes when the answer contains
//! every expected string, exactly (case, spaces and all). The one dimension,
//! `expectations`, is 10 × the share of expected strings found, so a partial answer shows
//! as partial; the overall score is that dimension × 10.
//!
//! What leaves the provider's machine is the verdict: which expected strings were found,
//! and how long the run took. Never the answer.

use serde::{Deserialize, Serialize};

use super::submission::TestResult;
use super::{overall, round_to, Dimensions, Kind};

/// The score of one `agent` run: what a provider submits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentVerdict {
    /// Every expected string is in the answer.
    pub passed: bool,
    /// `{"expectations": 10 × found / expected}` (two decimals).
    pub dimensions: Dimensions,
    /// `expectations` × 10 (one decimal).
    pub overall_score: f64,
    /// One test per expected string, `contains[<i>]`, with the run's latency.
    pub test_results: Vec<TestResult>,
}

/// Judges `answer` against the directive's `expect.contains`; `latency_ms` is how long the
/// run took.
pub fn verdict(answer: &str, contains: &[String], latency_ms: f64) -> AgentVerdict {
    let found: Vec<bool> = contains
        .iter()
        .map(|s| answer.contains(s.as_str()))
        .collect();
    let hits = found.iter().filter(|f| **f).count();
    let share = if contains.is_empty() {
        0.0
    } else {
        hits as f64 / contains.len() as f64
    };
    let dimensions: Dimensions = [("expectations".to_owned(), round_to(10.0 * share, 2))].into();
    AgentVerdict {
        passed: !contains.is_empty() && hits == contains.len(),
        overall_score: overall(Kind::Agent, &dimensions),
        dimensions,
        test_results: found
            .iter()
            .enumerate()
            .map(|(i, ok)| TestResult {
                test_case_id: format!("contains[{i}]"),
                passed: *ok,
                actual_status: None,
                latency_ms: Some(latency_ms),
                error: (!ok).then(|| "not_in_answer".to_owned()),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_must_be_found_exactly() {
        let want = ["echo".to_owned(), "add".to_owned(), "Sum".to_owned()];
        let v = verdict("tools: echo, add, sum", &want, 900.0);
        assert!(!v.passed);
        assert_eq!(v.dimensions["expectations"], 6.67);
        assert_eq!(v.overall_score, 66.7);
        assert_eq!(v.test_results[2].error.as_deref(), Some("not_in_answer"));
        let v = verdict("echo add Sum", &want, 900.0);
        assert!(v.passed);
        assert_eq!(v.overall_score, 100.0);
    }
}
