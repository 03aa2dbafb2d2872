//! Agent reputation (SPEC §10): seven named dimensions over 30 days, each `{value, n}`,
//! never folded into one number, and the `min_reputation` test a service may set.
//!
//! The host counts; this module turns counts into dimensions, so every host agrees on
//! the arithmetic (consistency is decided in integers, never on rounded rates).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{round3, serialize_num};

/// The window every dimension looks at: 30 days in milliseconds.
pub const REPUTATION_WINDOW_MS: i64 = 30 * 86_400_000;
/// How far an agent's reported success rate may stray from the gateway's in a bucket.
pub const CONSISTENCY_TOLERANCE: f64 = 0.2;
/// Gateway calls per hour per service left to an agent below a service's `min_reputation`.
pub const LIMITED_CALLS_PER_HOUR: u64 = 10;

/// Counted calls and how many of them were errors (the counting rule of
/// [`super::score::counts_as_success`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Counted calls.
    pub counted: u64,
    /// Errors among them.
    pub errors: u64,
}

/// One (service, hour) bucket: what the agent reported and what the gateway saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// The agent's own observations of the service in that hour.
    pub reported: Tally,
    /// Every ProxyCall of the service in that hour.
    pub gateway: Tally,
}

/// Reports of calls (observations at 1.0 each, receipts at 0.3 signed once and 1.0
/// co-signed) as they weigh in `error_report_balance`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Reports {
    /// The weight of the counted reports.
    pub weight: f64,
    /// The weight of the errors among them.
    pub errors: f64,
    /// How many reports were counted.
    pub n: u64,
}

impl Reports {
    /// Adds `n` reports of one outcome at `weight` each: `Some(true)` a success,
    /// `Some(false)` an error, `None` not counted.
    pub fn add(&mut self, ok: Option<bool>, weight: f64, n: u64) {
        let Some(ok) = ok else { return };
        self.weight += weight * n as f64;
        if !ok {
            self.errors += weight * n as f64;
        }
        self.n += n;
    }
}

/// What the host counts for one agent over the last 30 days.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReputationInputs {
    /// Observations, ProxyCalls and receipts of the agent.
    pub volume: u64,
    /// Unix ms of registration.
    pub registered_at_ms: i64,
    /// Unix ms now.
    pub now_ms: i64,
    /// (service, hour) buckets in which the agent reported on a catalog service.
    pub buckets: Vec<Bucket>,
    /// Receipts naming the agent.
    pub receipts: u64,
    /// Of those, signed by both the agent and the service.
    pub receipts_cosigned: u64,
    /// Distinct catalog services in its observations and ProxyCalls.
    pub services: u64,
    /// Observations and ProxyCalls that name a catalog service.
    pub service_samples: u64,
    /// The agent's observations of catalog services and its receipts, by weight.
    pub reported: Reports,
    /// Every other agent's observations and receipts of the same services, one per agent
    /// (anonymous observations count as one agent per network).
    pub others: Vec<Reports>,
    /// Refused forged or replayed decisions and receipts.
    pub abuse_flags: u64,
    /// Gateway requests and receipts the agent made (the population abuse is counted in).
    pub attempts: u64,
}

/// One dimension. `value` is `None` when there is nothing to measure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Dimension {
    /// The figure (integers are written as integers).
    #[serde(serialize_with = "serialize_num")]
    #[cfg_attr(feature = "schemars", schemars(with = "Option<f64>"))]
    pub value: Option<f64>,
    /// How many things it was measured over.
    pub n: u64,
}

/// The seven dimensions, by name.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Reputation {
    /// Records and observations (and ProxyCalls, receipts) in 30 days.
    pub volume: Dimension,
    /// Whole days since registration.
    pub tenure_days: Dimension,
    /// Share of (service, hour) buckets where the agent's reported success rate is within
    /// 0.2 of the gateway's.
    pub consistency: Dimension,
    /// Co-signed receipts over submitted receipts.
    pub receipt_cosign_rate: Dimension,
    /// Distinct services.
    pub diversity: Dimension,
    /// Its reported error rate minus the other agents' for the same services, reports
    /// weighed (observations 1.0, receipts 0.3 or 1.0; each agent's share of theirs capped,
    /// see [`super::share`]).
    pub error_report_balance: Dimension,
    /// Refused forged or replayed decisions and receipts.
    pub abuse_flags: Dimension,
    /// Other agents whose reports `error_report_balance` compares with.
    #[serde(default)]
    pub compared_agents: u64,
    /// The receipts naming the agent in the window, by signatures: what
    /// `receipt_cosign_rate` counts and, but for cancelled calls, `error_report_balance`
    /// weighs (0.3 signed once, 1.0 co-signed).
    #[serde(default)]
    pub receipts: ReceiptsUsed,
}

/// Receipts by signatures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ReceiptsUsed {
    /// Signed by one party (weight 0.3).
    pub single: u64,
    /// Signed by both (weight 1.0).
    pub cosigned: u64,
}

fn dim(value: Option<f64>, n: u64) -> Dimension {
    Dimension { value, n }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// `|a_ok/a_n − g_ok/g_n| ≤ 0.2`, decided exactly in integers.
fn consistent(b: &Bucket) -> bool {
    let (an, gn) = (
        u128::from(b.reported.counted),
        u128::from(b.gateway.counted),
    );
    let a_ok = an - u128::from(b.reported.errors.min(b.reported.counted));
    let g_ok = gn - u128::from(b.gateway.errors.min(b.gateway.counted));
    (a_ok * gn).abs_diff(g_ok * an) * 5 <= an * gn
}

/// The seven dimensions from the host's counts.
pub fn reputation(i: &ReputationInputs) -> Reputation {
    let comparable: Vec<&Bucket> = i
        .buckets
        .iter()
        .filter(|b| b.reported.counted > 0 && b.gateway.counted > 0)
        .collect();
    let agreeing = comparable.iter().filter(|b| consistent(b)).count() as u64;
    let n_buckets = comparable.len() as u64;
    // The others' error rate with no agent holding more than its share of their reports.
    let factors =
        super::share::share_factors(&i.others.iter().map(|t| t.weight).collect::<Vec<_>>());
    let (errors, counted) = i
        .others
        .iter()
        .zip(&factors)
        .fold((0.0, 0.0), |(e, c), (t, f)| {
            (e + t.errors.min(t.weight) * f, c + t.weight * f)
        });
    let others_rate = (counted > 0.0).then(|| errors / counted);
    let own_rate = (i.reported.weight > 0.0)
        .then(|| i.reported.errors.min(i.reported.weight) / i.reported.weight);
    let balance = match (own_rate, others_rate) {
        (Some(a), Some(n)) => Some(round3(a - n)),
        _ => None,
    };
    Reputation {
        volume: dim(Some(i.volume as f64), i.volume),
        tenure_days: dim(
            Some(
                (i.now_ms - i.registered_at_ms)
                    .max(0)
                    .div_euclid(86_400_000) as f64,
            ),
            1,
        ),
        consistency: dim(ratio(agreeing, n_buckets).map(round3), n_buckets),
        receipt_cosign_rate: dim(
            ratio(i.receipts_cosigned, i.receipts).map(round3),
            i.receipts,
        ),
        diversity: dim(Some(i.services as f64), i.service_samples),
        error_report_balance: dim(balance, i.reported.n),
        abuse_flags: dim(Some(i.abuse_flags as f64), i.attempts),
        compared_agents: i.others.iter().filter(|t| t.n > 0).count() as u64,
        receipts: ReceiptsUsed {
            single: i.receipts.saturating_sub(i.receipts_cosigned),
            cosigned: i.receipts_cosigned.min(i.receipts),
        },
    }
}

/// Why a `min_reputation` table was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MinReputationError {
    /// A key that names no dimension.
    #[error("min_reputation.{key}: not a dimension (volume, tenure_days, consistency, receipt_cosign_rate, diversity, error_report_balance, abuse_flags)")]
    UnknownDimension {
        /// The key.
        key: String,
    },
    /// A threshold outside its dimension's range.
    #[error("min_reputation.{key}: {message}")]
    OutOfRange {
        /// The key.
        key: String,
        /// The range.
        message: String,
    },
}

/// Checks a `min_reputation` table: each key a dimension, each threshold in range.
/// Rates (`consistency`, `receipt_cosign_rate`) are minimums in 0..=1; counts
/// (`volume`, `tenure_days`, `diversity`) minimums ≥ 0; `abuse_flags` is a maximum ≥ 0 and
/// `error_report_balance` a maximum distance from the network (|balance|) in 0..=1.
pub fn check_min_reputation(min: &BTreeMap<String, f64>) -> Result<(), MinReputationError> {
    for (k, v) in min {
        let range = match k.as_str() {
            "consistency" | "receipt_cosign_rate" | "error_report_balance" => 0.0..=1.0,
            "volume" | "tenure_days" | "diversity" | "abuse_flags" => 0.0..=f64::MAX,
            _ => return Err(MinReputationError::UnknownDimension { key: k.clone() }),
        };
        if !range.contains(v) {
            return Err(MinReputationError::OutOfRange {
                key: k.clone(),
                message: format!(
                    "must be a number from {} to {}",
                    range.start(),
                    if *range.end() == 1.0 { "1" } else { "any" }
                ),
            });
        }
    }
    Ok(())
}

/// Whether `rep` meets every threshold in `min` (see [`check_min_reputation`]). A
/// dimension with no value (nothing measured yet) does not meet a threshold.
pub fn meets_min_reputation(min: &BTreeMap<String, f64>, rep: &Reputation) -> bool {
    min.iter().all(|(k, t)| {
        let d = match k.as_str() {
            "volume" => rep.volume,
            "tenure_days" => rep.tenure_days,
            "consistency" => rep.consistency,
            "receipt_cosign_rate" => rep.receipt_cosign_rate,
            "diversity" => rep.diversity,
            "error_report_balance" => rep.error_report_balance,
            "abuse_flags" => rep.abuse_flags,
            _ => return false,
        };
        match (k.as_str(), d.value) {
            (_, None) => false,
            ("abuse_flags", Some(v)) => v <= *t,
            ("error_report_balance", Some(v)) => v.abs() <= *t,
            (_, Some(v)) => v >= *t,
        }
    })
}
