//! The live score, the audit and the probe-health cap (SPEC §10), computed from samples the
//! host reads: the service's recent ProxyCalls (weight 1.0) and its weighted telemetry.
//!
//! One counting rule for all three: 4xx other than 429 are the caller's mistakes and are
//! not counted; of the rest, 1xx–3xx are successes and everything else (no response,
//! 5xx, 429) is an error. Percentiles are nearest-rank: the `ceil(p·n/100)`-th smallest.

use serde::{Deserialize, Serialize};

use super::round3;
use crate::telemetry::{status_class, StatusClass};

/// Samples an audit needs before it may flag a service.
pub const AUDIT_MIN_SAMPLES: usize = 10;
/// ProxyCalls an audit looks at (the most recent).
pub const AUDIT_WINDOW: usize = 1000;
/// Error rate at or above which an audit flags.
pub const AUDIT_MAX_ERROR_RATE: f64 = 0.5;
/// p95/p5 latency ratio at or above which an audit flags.
pub const AUDIT_MAX_SPREAD: f64 = 5.0;
/// ProxyCalls probe health looks at (the most recent).
pub const PROBE_WINDOW: usize = 100;
/// ProxyCalls the live score looks at (the most recent), besides 24 h of telemetry.
pub const SCORE_CALL_WINDOW: usize = 1000;
/// The reason an audit flags a service.
pub const AUDIT_FLAG: &str = "prowl_capped_audit";

/// One call: a ProxyCall (weight 1.0) or an observation (its telemetry weight).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallSample {
    /// HTTP status, `None` when no response arrived.
    pub status: Option<u16>,
    /// Milliseconds to the end of the response (or the error).
    pub latency_ms: f64,
    /// 1.0 for a ProxyCall; an observation's weight otherwise.
    #[serde(default = "one")]
    pub weight: f64,
    /// The agent that made or reported it (`None`: anonymous telemetry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The keyed hash of the network it came from (`None`: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
}

fn one() -> f64 {
    1.0
}

/// `Some(true)` for a success, `Some(false)` for an error, `None` when not counted.
pub fn counts_as_success(status: Option<u16>) -> Option<bool> {
    match status_class(status) {
        StatusClass::Rejected => None,
        StatusClass::Success => Some(true),
        StatusClass::Failure | StatusClass::Throttled => Some(false),
    }
}

/// The nearest-rank `p`-th percentile (`p` in 1..=100) of sorted values.
fn percentile(sorted: &[f64], p: usize) -> f64 {
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

fn counted(calls: &[CallSample]) -> Vec<(&CallSample, bool)> {
    calls
        .iter()
        .filter_map(|c| counts_as_success(c.status).map(|ok| (c, ok)))
        .collect()
}

fn error_rate(counted: &[(&CallSample, bool)]) -> Option<f64> {
    let errors = counted.iter().filter(|(_, ok)| !ok).count();
    (!counted.is_empty()).then(|| errors as f64 / counted.len() as f64)
}

/// The audit of a service over its last [`AUDIT_WINDOW`] ProxyCalls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// Flagged `prowl_capped_audit`: at least 10 counted calls, and an error rate ≥ 50 %
    /// or a p95/p5 latency ratio ≥ 5.
    pub flagged: bool,
    /// Errors over counted calls (3 decimals), `None` with none counted.
    pub error_rate: Option<f64>,
    /// p95 over p5 latency (p5 taken as at least 1 ms; 3 decimals), `None` with none counted.
    pub p95_p5: Option<f64>,
    /// Counted calls.
    pub n: usize,
}

/// Audits `calls` (the most recent ProxyCalls, at most [`AUDIT_WINDOW`]; weights ignored).
pub fn audit(calls: &[CallSample]) -> Audit {
    let counted = counted(calls);
    let mut lat: Vec<f64> = counted.iter().map(|(c, _)| c.latency_ms).collect();
    lat.sort_by(f64::total_cmp);
    let rate = error_rate(&counted);
    let spread = (!lat.is_empty()).then(|| percentile(&lat, 95) / percentile(&lat, 5).max(1.0));
    let n = counted.len();
    let flagged = n >= AUDIT_MIN_SAMPLES
        && (rate.is_some_and(|r| r >= AUDIT_MAX_ERROR_RATE)
            || spread.is_some_and(|s| s >= AUDIT_MAX_SPREAD));
    Audit {
        flagged,
        error_rate: rate.map(round3),
        p95_p5: spread.map(round3),
        n,
    }
}

/// Probe health over the last [`PROBE_WINDOW`] ProxyCalls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ProbeHealth {
    /// Errors over counted calls (3 decimals), `None` with none counted.
    pub error_rate: Option<f64>,
    /// Counted calls.
    pub n: usize,
    /// The most the score may show: 30 above 80 % errors, 50 above 30 %, else none.
    pub cap: Option<u32>,
}

/// Probe health of `calls` (the most recent ProxyCalls, at most [`PROBE_WINDOW`]).
pub fn probe_health(calls: &[CallSample]) -> ProbeHealth {
    let counted = counted(calls);
    let rate = error_rate(&counted);
    let cap = match rate {
        Some(r) if r > 0.8 => Some(30),
        Some(r) if r > 0.3 => Some(50),
        _ => None,
    };
    ProbeHealth {
        error_rate: rate.map(round3),
        n: counted.len(),
        cap,
    }
}

/// The live score of a service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct LiveScore {
    /// `round(100 × (0.7 × success + 0.3 × speed))`, limited by the cap; `None` with
    /// nothing counted.
    pub value: Option<u32>,
    /// Counted samples (ProxyCalls and observations).
    pub n: usize,
    /// Weighted share of successes (3 decimals).
    pub success: Option<f64>,
    /// 1 at a weighted p50 ≤ 500 ms, 0.1 at ≥ 5 s, linear between (3 decimals).
    pub speed: Option<f64>,
    /// `probe_health` when the cap lowered the value.
    pub capped_by: Option<String>,
    /// Distinct agents behind the counted samples (anonymous telemetry counts as one
    /// agent per network).
    pub agents: usize,
    /// Distinct known networks behind the counted samples.
    pub networks: usize,
}

/// Speed of a p50 latency: 1 at ≤ 500 ms, 0.1 at ≥ 5 s, linear between.
pub fn speed(p50_ms: f64) -> f64 {
    if p50_ms <= 500.0 {
        1.0
    } else if p50_ms >= 5000.0 {
        0.1
    } else {
        1.0 - 0.9 * (p50_ms - 500.0) / 4500.0
    }
}

/// The live score of `samples` (recent ProxyCalls and 24 h of weighted telemetry),
/// limited by `cap` (from [`probe_health`]). The p50 is weighted: the latency at which the
/// running weight, in ascending latency order, first reaches half the total.
///
/// No network, and then no agent, holds more than its share of the weight
/// ([`super::share`]): a sample's weight is scaled by its network's factor, then by its
/// agent's, so many keys from one network, or one agent's many calls, move the score only
/// as far as one participant may.
pub fn live_score(samples: &[CallSample], cap: Option<u32>) -> LiveScore {
    let counted: Vec<(&CallSample, bool)> = counted(samples)
        .into_iter()
        .filter(|(c, _)| c.weight > 0.0)
        .collect();
    if counted.is_empty() {
        return LiveScore {
            value: None,
            n: 0,
            success: None,
            speed: None,
            capped_by: None,
            agents: 0,
            networks: 0,
        };
    }
    let network = |c: &CallSample| c.network.clone().unwrap_or_default();
    let agent = |c: &CallSample| match &c.agent {
        Some(a) => format!("agent:{a}"),
        None => format!("anonymous:{}", c.network.as_deref().unwrap_or_default()),
    };
    let weights: Vec<f64> = counted.iter().map(|(c, _)| c.weight).collect();
    let weights = capped_by_group(&counted, weights, network);
    let weights = capped_by_group(&counted, weights, agent);
    let agents = distinct(&counted, agent);
    let networks = counted
        .iter()
        .filter_map(|(c, _)| c.network.as_deref())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let mut order: Vec<usize> = (0..counted.len()).collect();
    order.sort_by(|a, b| {
        counted[*a]
            .0
            .latency_ms
            .total_cmp(&counted[*b].0.latency_ms)
    });
    let total: f64 = weights.iter().sum();
    let good: f64 = counted
        .iter()
        .zip(&weights)
        .filter(|((_, ok), _)| *ok)
        .map(|(_, w)| w)
        .sum();
    let mut run = 0.0;
    let mut p50 = counted[order[order.len() - 1]].0.latency_ms;
    for i in &order {
        run += weights[*i];
        if run >= total / 2.0 {
            p50 = counted[*i].0.latency_ms;
            break;
        }
    }
    let success = good / total;
    let spd = speed(p50);
    let raw = (100.0 * (0.7 * success + 0.3 * spd)).round() as u32;
    let (value, capped_by) = match cap {
        Some(c) if c < raw => (c, Some("probe_health".to_owned())),
        _ => (raw, None),
    };
    LiveScore {
        value: Some(value),
        n: counted.len(),
        success: Some(round3(success)),
        speed: Some(round3(spd)),
        capped_by,
        agents,
        networks,
    }
}

/// Distinct groups among the counted samples.
fn distinct(counted: &[(&CallSample, bool)], group: impl Fn(&CallSample) -> String) -> usize {
    counted
        .iter()
        .map(|(c, _)| group(c))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// `weights` (one per counted sample) with each `group`'s total limited to its share
/// ([`super::share::share_factors`]).
fn capped_by_group(
    counted: &[(&CallSample, bool)],
    weights: Vec<f64>,
    group: impl Fn(&CallSample) -> String,
) -> Vec<f64> {
    let mut totals: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    let keys: Vec<String> = counted.iter().map(|(c, _)| group(c)).collect();
    for (k, w) in keys.iter().zip(&weights) {
        *totals.entry(k.clone()).or_insert(0.0) += w;
    }
    let names: Vec<&String> = totals.keys().collect();
    let factors = super::share::share_factors(&totals.values().copied().collect::<Vec<_>>());
    let factor: std::collections::BTreeMap<&String, f64> = names.into_iter().zip(factors).collect();
    keys.iter()
        .zip(weights)
        .map(|(k, w)| w * factor[k])
        .collect()
}
