//! `compare`: rank 2–5 targets by organic success rate (SPEC §5, `compare_tools`).
//!
//! Only interaction summaries take part: scanner and telemetry data never change the order.

use super::{Confidence, Summary};
use serde::{Deserialize, Serialize};

/// The reason given when no candidate has enough history to be recommended.
pub const INSUFFICIENT_HISTORY: &str =
    "Insufficient interaction history for a reliable comparison.";

/// Fewest rated interactions the leader needs before it is recommended.
pub const MIN_RATED_FOR_RECOMMENDATION: u64 = 5;

/// Fewest and most candidates a comparison takes.
pub const CANDIDATES: std::ops::RangeInclusive<usize> = 2..=5;

/// Why a comparison could not be made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CompareError {
    /// Fewer than 2 or more than 5 candidates.
    #[error("candidates: compare takes 2 to 5 targets, got {got}")]
    CandidateCount {
        /// How many were given.
        got: usize,
    },
    /// The same target was given twice.
    #[error("candidates: {target} is listed more than once")]
    DuplicateCandidate {
        /// The repeated target.
        target: String,
    },
}

/// One candidate in ranked order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Ranked {
    /// The target as given.
    pub target: String,
    /// Its organic success rate (3 decimals), `None` when nothing is rated.
    pub success_rate: Option<f64>,
    /// Its organic rated interactions.
    pub rated_interactions: u64,
    /// Its confidence level.
    pub confidence: Confidence,
}

/// Which candidate the evidence favours, and why, in facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Recommendation {
    /// The leader, or `None` when the evidence is too thin.
    pub target: Option<String>,
    /// The facts behind the choice, or [`INSUFFICIENT_HISTORY`].
    pub reason: String,
}

/// The result of [`compare`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Comparison {
    /// Candidates best first.
    pub ranked: Vec<Ranked>,
    /// The recommendation rule's outcome.
    pub recommendation: Recommendation,
}

/// Ranks candidates by `success_rate` descending (unrated last), ties broken by more rated
/// interactions, then by target name (byte order). The leader is recommended only when it
/// has a rate and at least [`MIN_RATED_FOR_RECOMMENDATION`] rated interactions; the reason
/// states facts only: its rate and count, or, when the runner-up has the same rate, that it
/// ties and has more rated calls (or ties on both and comes first by name).
pub fn compare(candidates: &[(String, Summary)]) -> Result<Comparison, CompareError> {
    if !CANDIDATES.contains(&candidates.len()) {
        return Err(CompareError::CandidateCount {
            got: candidates.len(),
        });
    }
    for (i, (t, _)) in candidates.iter().enumerate() {
        if candidates[..i].iter().any(|(u, _)| u == t) {
            return Err(CompareError::DuplicateCandidate { target: t.clone() });
        }
    }
    let mut ranked: Vec<Ranked> = candidates
        .iter()
        .map(|(t, s)| Ranked {
            target: t.clone(),
            success_rate: s.success_rate,
            rated_interactions: s.rated_interactions,
            confidence: s.confidence,
        })
        .collect();
    ranked.sort_by(|a, b| {
        // Rates are 3-decimal values from `summarize`; compare them as thousandths so that
        // equal rates tie exactly. `None` sorts after every rate.
        let key = |r: &Ranked| r.success_rate.map(|x| (x * 1000.0).round() as i64);
        match (key(a), key(b)) {
            (Some(x), Some(y)) => y.cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then(b.rated_interactions.cmp(&a.rated_interactions))
        .then(a.target.cmp(&b.target))
    });
    let recommendation = recommend(&ranked);
    Ok(Comparison {
        ranked,
        recommendation,
    })
}

fn recommend(ranked: &[Ranked]) -> Recommendation {
    let best = &ranked[0];
    let Some(rate) = best
        .success_rate
        .filter(|_| best.rated_interactions >= MIN_RATED_FOR_RECOMMENDATION)
    else {
        return Recommendation {
            target: None,
            reason: INSUFFICIENT_HISTORY.to_owned(),
        };
    };
    let thousandths = |x: f64| (x * 1000.0).round() as u64;
    let p = thousandths(rate);
    let pct = format!("{}.{}%", p / 10, p % 10);
    let n = best.rated_interactions;
    let reason = match ranked.get(1).filter(|r| r.success_rate.map(thousandths) == Some(p)) {
        Some(second) if second.rated_interactions == n => format!(
            "{} ties with {} on organic success rate ({pct}) and rated tool calls ({n}); listed first by name.",
            best.target, second.target
        ),
        Some(second) => format!(
            "{} ties on organic success rate ({pct}) and has more rated tool calls ({n} vs {}).",
            best.target, second.rated_interactions
        ),
        None => format!(
            "{} has the highest organic success rate: {pct} of {n} rated tool {}.",
            best.target,
            if n == 1 { "call" } else { "calls" }
        ),
    };
    Recommendation {
        target: Some(best.target.clone()),
        reason,
    }
}
