//! When a benchmark score replaces the displayed one (SPEC §11), and the probe-health cap
//! of §10 on what is shown.
//!
//! Each accepted submission is a *reading* of a service (per kind). The displayed score
//! changes only when, in this order:
//! 1. nothing is displayed yet (`first`);
//! 2. the new reading is higher (`higher`): one provider may raise a score;
//! 3. at least two distinct providers have read the service since the displayed score was
//!    set (`providers`): the new value is the mean of each one's latest reading, so one
//!    provider alone can never lower a score;
//! 4. the displayed score is older than 14 days (`stale`): the new reading stands.
//!
//! Otherwise the displayed score stays, and the reading waits for a second provider. The
//! displayed value is then limited by the service's probe-health cap on every read, exactly
//! as the live score is ([`crate::gateway::score::probe_health`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::round_to;

/// Age past which a displayed score gives way to any new reading.
pub const STALE_AFTER_MS: i64 = 14 * 86_400_000;
/// Distinct providers whose readings may lower a displayed score.
pub const CONFIRMING_PROVIDERS: usize = 2;

/// The score shown for a service.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Displayed {
    /// 0–100.
    pub value: f64,
    /// Unix ms when it was set.
    pub set_at_ms: i64,
}

/// One accepted submission's score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// Who submitted it.
    pub provider_id: String,
    /// Its recorded score, 0–100.
    pub score: f64,
    /// Unix ms when it was accepted.
    pub at_ms: i64,
}

/// Why a reading replaced the displayed score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Nothing was displayed.
    First,
    /// The reading is higher.
    Higher,
    /// Two or more distinct providers read it since it was set.
    Providers,
    /// The displayed score was older than 14 days.
    Stale,
}

/// What to display after a new reading.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The displayed score changes.
    pub replace: bool,
    /// The new displayed value, when it changes.
    pub value: Option<f64>,
    /// Why it changes.
    pub reason: Option<Reason>,
    /// Distinct providers among the readings since the displayed score was set.
    pub providers: usize,
}

/// Decides after a new reading. `readings` are the service's readings (of one kind) taken
/// after `current` was set (every reading when nothing is displayed), oldest first, the
/// new one last; `now_ms` is the time of the new one.
pub fn decide(current: Option<&Displayed>, readings: &[Reading], now_ms: i64) -> Decision {
    let mut latest: BTreeMap<&str, f64> = BTreeMap::new();
    for r in readings {
        latest.insert(&r.provider_id, r.score);
    }
    let providers = latest.len();
    let replace = |value: f64, reason: Reason| Decision {
        replace: true,
        value: Some(value),
        reason: Some(reason),
        providers,
    };
    let Some(new) = readings.last() else {
        return Decision {
            replace: false,
            value: None,
            reason: None,
            providers,
        };
    };
    match current {
        None => replace(new.score, Reason::First),
        Some(c) if new.score > c.value => replace(new.score, Reason::Higher),
        Some(_) if providers >= CONFIRMING_PROVIDERS => {
            let mean = latest.values().sum::<f64>() / providers as f64;
            replace(round_to(mean, 1), Reason::Providers)
        }
        Some(c) if now_ms - c.set_at_ms > STALE_AFTER_MS => replace(new.score, Reason::Stale),
        Some(_) => Decision {
            replace: false,
            value: None,
            reason: None,
            providers,
        },
    }
}

/// The displayed value limited by the probe-health cap, and `probe_health` when the cap
/// lowered it.
pub fn capped(value: f64, cap: Option<u32>) -> (f64, Option<&'static str>) {
    match cap {
        Some(c) if f64::from(c) < value => (f64::from(c), Some("probe_health")),
        _ => (value, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    fn r(p: &str, score: f64, at: i64) -> Reading {
        Reading {
            provider_id: p.into(),
            score,
            at_ms: at,
        }
    }

    #[test]
    fn one_provider_may_raise_but_not_lower() {
        let shown = Displayed {
            value: 80.0,
            set_at_ms: 0,
        };
        assert_eq!(
            decide(None, &[r("a", 40.0, 1)], 1).reason,
            Some(Reason::First)
        );
        assert_eq!(
            decide(Some(&shown), &[r("a", 90.0, 1)], 1).reason,
            Some(Reason::Higher)
        );
        let lower = decide(Some(&shown), &[r("a", 40.0, 1), r("a", 30.0, 2)], 2);
        assert!(!lower.replace);
        assert_eq!(lower.providers, 1);
        let two = decide(Some(&shown), &[r("a", 40.0, 1), r("b", 55.0, 2)], 2);
        assert_eq!(
            (two.value, two.reason),
            (Some(47.5), Some(Reason::Providers))
        );
    }

    #[test]
    fn after_fourteen_days_any_reading_stands() {
        let shown = Displayed {
            value: 80.0,
            set_at_ms: 0,
        };
        assert!(!decide(Some(&shown), &[r("a", 10.0, 14 * DAY)], 14 * DAY).replace);
        let d = decide(Some(&shown), &[r("a", 10.0, 14 * DAY + 1)], 14 * DAY + 1);
        assert_eq!((d.value, d.reason), (Some(10.0), Some(Reason::Stale)));
        assert_eq!(capped(80.0, Some(50)), (50.0, Some("probe_health")));
        assert_eq!(capped(40.0, Some(50)), (40.0, None));
    }
}
