//! The live score, the audit and the probe-health cap (SPEC §10), computed from samples the
//! host reads: the service's recent ProxyCalls (weight 1.0), what agents reported of it
//! (their telemetry weight: the mirror path), and for the live score its receipts (0.3
//! signed once, 1.0 co-signed).
//!
//! One counting rule for all: 4xx other than 429 are the caller's mistakes and are not
//! counted; of the rest, 1xx–3xx are successes and everything else (no response, 5xx, 429)
//! is an error. Every figure is weighted, and no network, then no agent, holds more than
//! its share of the weight ([`super::share`]). Percentiles are weighted nearest-rank: the
//! smallest latency at which the running weight, in ascending order, reaches `p` % of the
//! total (with equal weights, the `ceil(p·n/100)`-th smallest).

use serde::{Deserialize, Serialize};

use super::round3;
use crate::telemetry::{status_class, StatusClass};

/// Samples an audit needs before it may flag a service.
pub const AUDIT_MIN_SAMPLES: usize = 10;
/// ProxyCalls an audit looks at (the most recent), and observations of the last
/// [`TELEMETRY_WINDOW_MS`] per network.
pub const AUDIT_WINDOW: usize = 1000;
/// Error rate at or above which an audit flags.
pub const AUDIT_MAX_ERROR_RATE: f64 = 0.5;
/// p95/p5 latency ratio at or above which an audit flags.
pub const AUDIT_MAX_SPREAD: f64 = 5.0;
/// ProxyCalls probe health looks at (the most recent), and observations of the last
/// [`TELEMETRY_WINDOW_MS`] per network.
pub const PROBE_WINDOW: usize = 100;
/// ProxyCalls the live score looks at (the most recent), and observations of the last
/// [`TELEMETRY_WINDOW_MS`] per network, besides that window's receipts.
pub const SCORE_CALL_WINDOW: usize = 1000;
/// How far back observations and receipts count: 24 h. A window of time rather than of the
/// latest reports, so a flood from one network cannot push everyone else's out of it.
pub const TELEMETRY_WINDOW_MS: i64 = 86_400_000;
/// The reason an audit flags a service.
pub const AUDIT_FLAG: &str = "prowl_capped_audit";

/// Where a sample came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// A ProxyCall: the gateway saw it.
    #[default]
    Gateway,
    /// An observation an agent reported (the mirror path).
    Telemetry,
    /// A delivery receipt (its weight says whether it was co-signed).
    Receipt,
}

/// One call: a ProxyCall (weight 1.0), an observation (its telemetry weight) or a receipt
/// ([`receipt_sample`]).
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
    /// Where it came from.
    #[serde(default)]
    pub path: Path,
}

fn one() -> f64 {
    1.0
}

/// How a receipt's outcome counts: `success` and `partial` (delivered) as a success,
/// `failure` as an error, `cancelled` (or anything else) not at all.
pub fn receipt_counts_as_success(outcome: &str) -> Option<bool> {
    match outcome {
        "success" | "partial" => Some(true),
        "failure" => Some(false),
        _ => None,
    }
}

/// A receipt as a sample ([`receipt_counts_as_success`]): `success` and `partial` (delivered) count as a 2xx would,
/// `failure` as no answer; `cancelled` is not counted (`None`). `weight` is the receipt's
/// (0.3 signed once, 1.0 co-signed).
pub fn receipt_sample(
    outcome: &str,
    latency_ms: f64,
    weight: f64,
    agent: Option<String>,
) -> Option<CallSample> {
    let status = match receipt_counts_as_success(outcome)? {
        true => Some(200),
        false => None,
    };
    Some(CallSample {
        status,
        latency_ms,
        weight,
        agent,
        network: None,
        path: Path::Receipt,
    })
}

/// How many counted samples came from each path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Sources {
    /// ProxyCalls.
    pub gateway: usize,
    /// Observations agents reported.
    pub telemetry: usize,
    /// Receipts signed by one party (weight 0.3).
    pub receipts_single: usize,
    /// Receipts signed by both (weight 1.0).
    pub receipts_cosigned: usize,
}

impl Sources {
    fn of(counted: &[(&CallSample, bool)]) -> Sources {
        let mut out = Sources::default();
        for (c, _) in counted {
            match c.path {
                Path::Gateway => out.gateway += 1,
                Path::Telemetry => out.telemetry += 1,
                Path::Receipt if c.weight >= 1.0 => out.receipts_cosigned += 1,
                Path::Receipt => out.receipts_single += 1,
            }
        }
        out
    }
}

/// `Some(true)` for a success, `Some(false)` for an error, `None` when not counted.
pub fn counts_as_success(status: Option<u16>) -> Option<bool> {
    match status_class(status) {
        StatusClass::Rejected => None,
        StatusClass::Success => Some(true),
        StatusClass::Failure | StatusClass::Throttled => Some(false),
    }
}

fn counted(calls: &[CallSample]) -> Vec<(&CallSample, bool)> {
    calls
        .iter()
        .filter_map(|c| counts_as_success(c.status).map(|ok| (c, ok)))
        .collect()
}

/// The counted samples of `calls` with weight, and their weights once each network's, then
/// each agent's, share is capped (anonymous samples are one agent per network).
fn weighted(calls: &[CallSample]) -> (Vec<(&CallSample, bool)>, Vec<f64>) {
    let counted: Vec<(&CallSample, bool)> = counted(calls)
        .into_iter()
        .filter(|(c, _)| c.weight > 0.0)
        .collect();
    let weights: Vec<f64> = counted.iter().map(|(c, _)| c.weight).collect();
    let weights = capped_by_group(&counted, weights, network_of);
    let weights = capped_by_group(&counted, weights, agent_of);
    (counted, weights)
}

fn network_of(c: &CallSample) -> String {
    c.network.clone().unwrap_or_default()
}

fn agent_of(c: &CallSample) -> String {
    match &c.agent {
        Some(a) => format!("agent:{a}"),
        None => format!("anonymous:{}", c.network.as_deref().unwrap_or_default()),
    }
}

/// The weighted share of errors, `None` with nothing counted.
fn error_rate(counted: &[(&CallSample, bool)], weights: &[f64]) -> Option<f64> {
    let total: f64 = weights.iter().sum();
    let errors: f64 = counted
        .iter()
        .zip(weights)
        .filter(|((_, ok), _)| !ok)
        .map(|(_, w)| w)
        .sum();
    (total > 0.0).then(|| errors / total)
}

/// The weighted nearest-rank `p`-th percentile (`p` in 1..=100) of the latencies.
fn percentile(counted: &[(&CallSample, bool)], weights: &[f64], p: f64) -> Option<f64> {
    let mut order: Vec<usize> = (0..counted.len()).collect();
    order.sort_by(|a, b| {
        counted[*a]
            .0
            .latency_ms
            .total_cmp(&counted[*b].0.latency_ms)
    });
    let total: f64 = weights.iter().sum();
    let mut run = 0.0;
    for i in &order {
        run += weights[*i];
        if run >= total * p / 100.0 - 1e-9 * total {
            return Some(counted[*i].0.latency_ms);
        }
    }
    order.last().map(|i| counted[*i].0.latency_ms)
}

/// One path's audit figures (or both paths together).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct AuditFigures {
    /// At least 10 counted samples, and an error rate ≥ 50 % or a p95/p5 latency ratio ≥ 5.
    pub flagged: bool,
    /// Weighted errors over counted samples (3 decimals), `None` with none counted.
    pub error_rate: Option<f64>,
    /// Weighted p95 over p5 latency (p5 taken as at least 1 ms; 3 decimals), `None` with
    /// none counted.
    pub p95_p5: Option<f64>,
    /// Counted samples.
    pub n: usize,
}

/// The audit of a service over its last [`AUDIT_WINDOW`] ProxyCalls and observations: the
/// heuristics on both together and on each path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// Flagged `prowl_capped_audit` on both paths together, on the gateway's or on the
    /// telemetry's.
    pub flagged: bool,
    /// Both paths together: weighted errors over counted samples.
    pub error_rate: Option<f64>,
    /// Both paths together: weighted p95 over p5 latency.
    pub p95_p5: Option<f64>,
    /// Both paths together: counted samples.
    pub n: usize,
    /// ProxyCalls alone.
    pub gateway: AuditFigures,
    /// Observations alone.
    pub telemetry: AuditFigures,
}

fn figures(calls: &[CallSample]) -> AuditFigures {
    let (counted, weights) = weighted(calls);
    let rate = error_rate(&counted, &weights);
    let spread = percentile(&counted, &weights, 95.0)
        .zip(percentile(&counted, &weights, 5.0))
        .map(|(p95, p5)| p95 / p5.max(1.0));
    let n = counted.len();
    AuditFigures {
        flagged: n >= AUDIT_MIN_SAMPLES
            && (rate.is_some_and(|r| r >= AUDIT_MAX_ERROR_RATE)
                || spread.is_some_and(|s| s >= AUDIT_MAX_SPREAD)),
        error_rate: rate.map(round3),
        p95_p5: spread.map(round3),
        n,
    }
}

fn on_path(calls: &[CallSample], path: Path) -> Vec<CallSample> {
    calls.iter().filter(|c| c.path == path).cloned().collect()
}

/// Audits `calls`: the most recent ProxyCalls and observations, at most [`AUDIT_WINDOW`]
/// of each (receipts are not audited).
pub fn audit(calls: &[CallSample]) -> Audit {
    let calls = calls
        .iter()
        .filter(|c| c.path != Path::Receipt)
        .cloned()
        .collect::<Vec<_>>();
    let both = figures(&calls);
    let gateway = figures(&on_path(&calls, Path::Gateway));
    let telemetry = figures(&on_path(&calls, Path::Telemetry));
    Audit {
        flagged: both.flagged || gateway.flagged || telemetry.flagged,
        error_rate: both.error_rate,
        p95_p5: both.p95_p5,
        n: both.n,
        gateway,
        telemetry,
    }
}

/// Probe health over the last [`PROBE_WINDOW`] ProxyCalls and observations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ProbeHealth {
    /// Weighted errors over counted samples (3 decimals), `None` with none counted.
    pub error_rate: Option<f64>,
    /// Counted samples.
    pub n: usize,
    /// The most the score may show: 30 above 80 % errors, 50 above 30 %, else none.
    pub cap: Option<u32>,
    /// How many of the counted samples came from each path.
    pub from: Sources,
}

/// Probe health of `calls` (the most recent ProxyCalls and observations, at most
/// [`PROBE_WINDOW`] of each; receipts are not counted).
pub fn probe_health(calls: &[CallSample]) -> ProbeHealth {
    let calls = calls
        .iter()
        .filter(|c| c.path != Path::Receipt)
        .cloned()
        .collect::<Vec<_>>();
    let (counted, weights) = weighted(&calls);
    let rate = error_rate(&counted, &weights);
    let cap = match rate {
        Some(r) if r > 0.8 => Some(30),
        Some(r) if r > 0.3 => Some(50),
        _ => None,
    };
    ProbeHealth {
        error_rate: rate.map(round3),
        n: counted.len(),
        cap,
        from: Sources::of(&counted),
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
    /// How many of the counted samples came from each path (receipts by signatures).
    pub from: Sources,
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

/// The live score of `samples` (recent ProxyCalls, 24 h of weighted telemetry and of
/// receipts), limited by `cap` (from [`probe_health`]). The p50 is weighted: the latency at which the
/// running weight, in ascending latency order, first reaches half the total.
///
/// No network, and then no agent, holds more than its share of the weight
/// ([`super::share`]): a sample's weight is scaled by its network's factor, then by its
/// agent's, so many keys from one network, or one agent's many calls, move the score only
/// as far as one participant may.
pub fn live_score(samples: &[CallSample], cap: Option<u32>) -> LiveScore {
    let (counted, weights) = weighted(samples);
    if counted.is_empty() {
        return LiveScore {
            value: None,
            n: 0,
            success: None,
            speed: None,
            capped_by: None,
            agents: 0,
            networks: 0,
            from: Sources::default(),
        };
    }
    let agents = distinct(&counted, agent_of);
    let networks = counted
        .iter()
        .filter_map(|(c, _)| c.network.as_deref())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let success = 1.0 - error_rate(&counted, &weights).unwrap_or(0.0);
    let p50 = percentile(&counted, &weights, 50.0).unwrap_or(0.0);
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
        from: Sources::of(&counted),
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
