//! When an `agent` directive's result counts (SPEC §11): nobody but the provider sees its
//! `claude --print` run, so a result counts only once a provider from another network
//! agrees with it.
//!
//! - Two results *agree* when they have the same verdict (`passed`: every expected string
//!   found, `expectations` = 10) and overall scores at most [`AGREEMENT_POINTS`] apart.
//! - A result waits (*pending*) until a result from another network and another provider
//!   agrees with it. Until then the directive stays open, but not to a provider that
//!   already has a result on it, nor to one from the network of a pending result
//!   ([`may_run`]), nor to one whose network is unknown.
//! - When a new result agrees with a pending one, the directive is done ([`settle`]):
//!   every pending result is judged against the new one; those that agree count (readings
//!   of the displayed score, and their providers share the directive's credit, see
//!   [`split_millicredits`]), the others are *disagreed*: they earn nothing and count
//!   against their providers' priority ([`super::priority`]).
//! - A provider's network is the keyed id of its client network (an IPv4 /24, an IPv6
//!   /48); two networks stand for two independent parties. That is the limit of it: one
//!   party with agent keys on two networks can agree with itself.

use serde::{Deserialize, Serialize};

/// How far apart two agreeing overall scores may be, in points of 100.
pub const AGREEMENT_POINTS: f64 = 10.0;

/// One `agent` result as agreement sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Its submission.
    pub submission_id: String,
    /// Who submitted it.
    pub provider_id: String,
    /// The keyed id of the provider's client network.
    pub network: String,
    /// Its overall score, 0–100.
    pub overall_score: f64,
}

impl Run {
    /// The verdict: every expected string was found.
    pub fn passed(&self) -> bool {
        self.overall_score >= 100.0
    }
}

/// Whether two results agree: the same verdict, overall scores within
/// [`AGREEMENT_POINTS`].
pub fn agree(a: &Run, b: &Run) -> bool {
    disagreement(a, b).is_none()
}

/// What sets two results apart: `passed` (the verdicts differ) or `overall_score` (more
/// than [`AGREEMENT_POINTS`] apart); `None` when they agree.
pub fn disagreement(a: &Run, b: &Run) -> Option<&'static str> {
    if a.passed() != b.passed() {
        Some("passed")
    } else if (a.overall_score - b.overall_score).abs() > AGREEMENT_POINTS {
        Some("overall_score")
    } else {
        None
    }
}

/// What a new result does to an `agent` directive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Settlement {
    /// No pending result of another network and provider agrees: the new one waits too.
    Pending,
    /// The directive is done.
    Agreed {
        /// Results that count, oldest first, the new one last.
        counted: Vec<String>,
        /// Pending results that do not agree with the new one.
        disagreed: Vec<String>,
    },
}

/// Settles `new` against the directive's `pending` results (oldest first).
pub fn settle(pending: &[Run], new: &Run) -> Settlement {
    let independent = |r: &Run| r.network != new.network && r.provider_id != new.provider_id;
    if !pending.iter().any(|r| independent(r) && agree(r, new)) {
        return Settlement::Pending;
    }
    let (agreeing, other): (Vec<&Run>, Vec<&Run>) = pending
        .iter()
        .partition(|r| independent(r) && agree(r, new));
    let mut counted: Vec<String> = agreeing.iter().map(|r| r.submission_id.clone()).collect();
    counted.push(new.submission_id.clone());
    Settlement::Agreed {
        counted,
        disagreed: other.iter().map(|r| r.submission_id.clone()).collect(),
    }
}

/// Why a provider may not run an `agent` directive now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Barred {
    /// It already has a result on the directive.
    AlreadySubmitted,
    /// A pending result comes from its network.
    SameNetwork,
    /// Its network is not known (no client address).
    UnknownNetwork,
}

/// Whether `provider` on `network` may run a directive with these `pending` results.
pub fn may_run(pending: &[Run], provider: &str, network: Option<&str>) -> Result<(), Barred> {
    let Some(network) = network else {
        return Err(Barred::UnknownNetwork);
    };
    if pending.iter().any(|r| r.provider_id == provider) {
        return Err(Barred::AlreadySubmitted);
    }
    if pending.iter().any(|r| r.network == network) {
        return Err(Barred::SameNetwork);
    }
    Ok(())
}

/// The directive's provider share (`total` thousandths of a credit) split among `n`
/// providers whose results count, in their order: equal parts, the thousandths left over
/// going one each to the earliest.
pub fn split_millicredits(total: i64, n: usize) -> Vec<i64> {
    if n == 0 {
        return Vec::new();
    }
    let n64 = n as i64;
    let (each, left) = (total / n64, total % n64);
    (0..n64).map(|i| each + i64::from(i < left)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, provider: &str, network: &str, score: f64) -> Run {
        Run {
            submission_id: id.into(),
            provider_id: provider.into(),
            network: network.into(),
            overall_score: score,
        }
    }

    #[test]
    fn agreement_needs_the_same_verdict_and_close_scores() {
        let pass = run("a", "p1", "n1", 100.0);
        assert!(agree(&pass, &run("b", "p2", "n2", 100.0)));
        assert!(
            !agree(&pass, &run("b", "p2", "n2", 95.0)),
            "a fail never agrees with a pass"
        );
        assert!(agree(
            &run("a", "p1", "n1", 50.0),
            &run("b", "p2", "n2", 60.0)
        ));
        assert_eq!(
            disagreement(&run("a", "p1", "n1", 50.0), &run("b", "p2", "n2", 60.1)),
            Some("overall_score")
        );
        assert_eq!(
            disagreement(&pass, &run("b", "p2", "n2", 0.0)),
            Some("passed")
        );
    }

    #[test]
    fn a_result_waits_for_another_network_and_the_odd_one_out_disagrees() {
        let a = run("a", "p1", "n1", 100.0);
        let liar = run("l", "p2", "n2", 0.0);
        assert_eq!(settle(&[], &a), Settlement::Pending);
        assert_eq!(settle(std::slice::from_ref(&a), &liar), Settlement::Pending);
        let same_network = run("s", "p3", "n1", 100.0);
        assert_eq!(
            settle(std::slice::from_ref(&a), &same_network),
            Settlement::Pending,
            "one network cannot agree with itself"
        );
        let c = run("c", "p3", "n3", 100.0);
        assert_eq!(
            settle(&[a, liar], &c),
            Settlement::Agreed {
                counted: vec!["a".into(), "c".into()],
                disagreed: vec!["l".into()]
            }
        );
    }

    #[test]
    fn who_may_run_it_next() {
        let pending = [run("a", "p1", "n1", 100.0)];
        assert_eq!(may_run(&pending, "p2", Some("n2")), Ok(()));
        assert_eq!(
            may_run(&pending, "p1", Some("n9")),
            Err(Barred::AlreadySubmitted)
        );
        assert_eq!(
            may_run(&pending, "p2", Some("n1")),
            Err(Barred::SameNetwork)
        );
        assert_eq!(may_run(&[], "p2", None), Err(Barred::UnknownNetwork));
    }

    #[test]
    fn the_share_is_split_with_the_remainder_to_the_earliest() {
        assert_eq!(split_millicredits(700, 2), [350, 350]);
        assert_eq!(split_millicredits(700, 3), [234, 233, 233]);
        assert_eq!(split_millicredits(700, 0), Vec::<i64>::new());
    }
}
