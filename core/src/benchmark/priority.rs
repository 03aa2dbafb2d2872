//! Which providers see a critical directive first (SPEC §11: "higher agent reputation
//! first for `critical` ones").
//!
//! Reputation stays seven named dimensions (§10), never folded into one number; providers
//! are ordered by their disagreements first, then by comparing those dimensions one at a
//! time, the first difference deciding:
//! 0. disagreements in the last [`DISAGREEMENT_WINDOW_MS`] (a `protocol` submission the
//!    server's probe contradicted, an `agent` result that did not agree with the one that
//!    counted; see [`super::verify`], [`super::agreement`]): fewer first;
//! 1. `abuse_flags`: fewer first;
//! 2. `consistency`: higher first (its reports agree with what the gateway saw);
//! 3. `receipt_cosign_rate`: higher first;
//! 4. `error_report_balance`: closer to 0 first (it reports failures as the network does);
//! 5. `tenure_days`: longer first;
//! 6. `diversity`: more services first;
//! 7. `volume`: more first (last: the cheapest to inflate).
//!
//! Evidence of honest reporting comes before age and breadth, and raw volume last. A
//! dimension with nothing measured (`value: null`) ranks as its worst value.
//!
//! A provider's *rank* is the number of registered providers strictly ahead of it. A
//! critical directive opens to rank `r` of `n` providers [`CRITICAL_HEAD_START_MS`] × r / n
//! after it was posted: the best-ranked see it at once, the last within the head start,
//! and everyone after it. Other directives are open to all at once.
//!
//! A provider with [`EXCLUDED_AT`] or more disagreements in the window is excluded: it may
//! claim no directive at all until enough of them are older than the window
//! ([`excluded_until`]). That also bounds the probes of a vendor's remote the server makes
//! to check one provider's forgeries.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::gateway::reputation::{Dimension, Reputation};

/// How long the best-ranked providers have a critical directive before the last one sees
/// it.
pub const CRITICAL_HEAD_START_MS: i64 = 15 * 60_000;
/// How long a disagreement counts against a provider.
pub const DISAGREEMENT_WINDOW_MS: i64 = 30 * 86_400_000;
/// Disagreements in the window from which a provider may claim nothing.
pub const EXCLUDED_AT: usize = 3;

/// A provider as the order sees it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Its disagreements in the last [`DISAGREEMENT_WINDOW_MS`].
    #[serde(default)]
    pub disagreements: u32,
    /// Its agent reputation.
    pub reputation: Reputation,
}

fn value_or(d: &Dimension, worst: f64) -> f64 {
    d.value.unwrap_or(worst)
}

/// Compares two providers: `Less` when `a` ranks ahead of `b` (fewer disagreements, then
/// the reputation order).
pub fn compare(a: &Candidate, b: &Candidate) -> Ordering {
    a.disagreements
        .cmp(&b.disagreements)
        .then_with(|| compare_reputation(&a.reputation, &b.reputation))
}

/// Compares two reputations alone: `Less` when `a` ranks ahead of `b`.
pub fn compare_reputation(a: &Reputation, b: &Reputation) -> Ordering {
    let higher = |x: &Dimension, y: &Dimension, worst: f64| {
        value_or(y, worst).total_cmp(&value_or(x, worst))
    };
    let lower = |x: &Dimension, y: &Dimension, worst: f64| {
        value_or(x, worst).total_cmp(&value_or(y, worst))
    };
    let balance = |d: &Dimension| d.value.map_or(f64::INFINITY, f64::abs);
    lower(&a.abuse_flags, &b.abuse_flags, f64::INFINITY)
        .then_with(|| higher(&a.consistency, &b.consistency, f64::NEG_INFINITY))
        .then_with(|| {
            higher(
                &a.receipt_cosign_rate,
                &b.receipt_cosign_rate,
                f64::NEG_INFINITY,
            )
        })
        .then_with(|| balance(&a.error_report_balance).total_cmp(&balance(&b.error_report_balance)))
        .then_with(|| higher(&a.tenure_days, &b.tenure_days, f64::NEG_INFINITY))
        .then_with(|| higher(&a.diversity, &b.diversity, f64::NEG_INFINITY))
        .then_with(|| higher(&a.volume, &b.volume, f64::NEG_INFINITY))
}

/// The rank of `me` among `all` providers (which include it): how many rank strictly ahead.
pub fn rank(me: &Candidate, all: &[Candidate]) -> usize {
    all.iter()
        .filter(|o| compare(o, me) == Ordering::Less)
        .count()
}

/// Until when (unix ms) a provider whose disagreements happened at `times` (any order) is
/// excluded at `now_ms`: the time from which fewer than [`EXCLUDED_AT`] remain inside the
/// window. `None`: it is not excluded.
pub fn excluded_until(times: &[i64], now_ms: i64) -> Option<i64> {
    let mut recent: Vec<i64> = times
        .iter()
        .copied()
        .filter(|t| now_ms - t < DISAGREEMENT_WINDOW_MS)
        .collect();
    if recent.len() < EXCLUDED_AT {
        return None;
    }
    recent.sort_unstable();
    // Once every one but the newest EXCLUDED_AT - 1 has aged out.
    Some(recent[recent.len() - EXCLUDED_AT] + DISAGREEMENT_WINDOW_MS)
}

/// Unix ms at which a critical directive posted at `posted_at_ms` opens to the provider at
/// `rank` among `providers` registered providers.
pub fn opens_at(posted_at_ms: i64, rank: usize, providers: usize) -> i64 {
    if providers == 0 {
        return posted_at_ms;
    }
    let r = rank.min(providers - 1) as i64;
    posted_at_ms + CRITICAL_HEAD_START_MS * r / providers as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(abuse: f64, consistency: Option<f64>, volume: f64) -> Candidate {
        let d = |v: Option<f64>| Dimension { value: v, n: 1 };
        let reputation = Reputation {
            volume: d(Some(volume)),
            tenure_days: d(Some(3.0)),
            consistency: d(consistency),
            receipt_cosign_rate: d(None),
            diversity: d(Some(1.0)),
            error_report_balance: d(None),
            abuse_flags: d(Some(abuse)),
            compared_agents: 0,
            receipts: Default::default(),
        };
        Candidate {
            disagreements: 0,
            reputation,
        }
    }

    #[test]
    fn honesty_before_volume() {
        let clean = rep(0.0, Some(0.9), 5.0);
        let busy = rep(0.0, Some(0.5), 5000.0);
        let flagged = rep(1.0, Some(1.0), 9000.0);
        let unmeasured = rep(0.0, None, 9000.0);
        let all = [busy, flagged, clean, unmeasured];
        let mut sorted = all.to_vec();
        sorted.sort_by(compare);
        assert_eq!(sorted, [clean, busy, unmeasured, flagged]);
        assert_eq!(rank(&clean, &all), 0);
        assert_eq!(rank(&flagged, &all), 3);
        let disagreeing = Candidate {
            disagreements: 1,
            ..clean
        };
        let all = [clean, busy, flagged, disagreeing];
        assert_eq!(
            rank(&disagreeing, &all),
            3,
            "after every provider with fewer"
        );
        assert_eq!(rank(&flagged, &all), 2);
    }

    #[test]
    fn three_disagreements_in_thirty_days_exclude() {
        const DAY: i64 = 86_400_000;
        assert_eq!(excluded_until(&[0, DAY], 2 * DAY), None);
        assert_eq!(
            excluded_until(&[DAY, 0, 5 * DAY], 6 * DAY),
            Some(DISAGREEMENT_WINDOW_MS)
        );
        assert_eq!(
            excluded_until(&[0, DAY, 2 * DAY, 3 * DAY], 4 * DAY),
            Some(DAY + DISAGREEMENT_WINDOW_MS)
        );
        assert_eq!(
            excluded_until(&[0, DAY, 5 * DAY], 30 * DAY),
            None,
            "the first has aged out"
        );
    }

    #[test]
    fn the_head_start_spreads_over_fifteen_minutes() {
        assert_eq!(opens_at(1000, 0, 4), 1000);
        assert_eq!(opens_at(1000, 3, 4), 1000 + 3 * CRITICAL_HEAD_START_MS / 4);
        assert_eq!(opens_at(1000, 9, 4), 1000 + 3 * CRITICAL_HEAD_START_MS / 4);
        assert_eq!(opens_at(1000, 0, 0), 1000);
    }
}
