//! Telemetry summaries from rollups, so the server never re-reads raw observations.
//!
//! The server keeps one [`TelemetryRollup`] per host (or per host and day) and adds each
//! observation with [`TelemetryRollup::add`], or sums stored rollups with
//! [`TelemetryRollup::merge`]; [`summarize_telemetry`] turns one into the `telemetry{...}`
//! block. Latency is kept as a histogram over the fixed [`LATENCY_BUCKETS_MS`], so
//! percentiles come from rollups and every host computes the same numbers.

use super::{status_class, StatusClass};
use crate::aggregate::permille;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Inclusive upper bounds of the latency histogram buckets, in milliseconds. The last is
/// the largest latency accepted (one day), so every valid observation has a bucket.
pub const LATENCY_BUCKETS_MS: [f64; 25] = [
    5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0, 400.0, 500.0, 750.0, 1000.0, 1500.0,
    2000.0, 3000.0, 5000.0, 7500.0, 10000.0, 15000.0, 30000.0, 60000.0, 120000.0, 300000.0,
    86400000.0,
];

/// Index of the bucket holding `latency_ms`: the first bound it does not exceed. NaN and
/// negatives go to the first bucket, anything past a day to the last.
pub fn latency_bucket(latency_ms: f64) -> usize {
    LATENCY_BUCKETS_MS
        .iter()
        .position(|b| latency_ms <= *b)
        .unwrap_or(if latency_ms.is_nan() {
            0
        } else {
            LATENCY_BUCKETS_MS.len() - 1
        })
}

/// Which of the four weights (SPEC §4) an observation carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightTier {
    /// No valid agent key, host outside the catalog: 0.1.
    AnonymousUnknownHost,
    /// No valid agent key, host in the catalog: 0.3.
    AnonymousKnownHost,
    /// Valid agent key, host outside the catalog: 0.5.
    KeyUnknownHost,
    /// Valid agent key, host in the catalog: 1.0.
    KeyKnownHost,
}

impl WeightTier {
    /// The tier for an observation.
    pub fn of(valid_agent_key: bool, known_host: bool) -> Self {
        match (valid_agent_key, known_host) {
            (false, false) => Self::AnonymousUnknownHost,
            (false, true) => Self::AnonymousKnownHost,
            (true, false) => Self::KeyUnknownHost,
            (true, true) => Self::KeyKnownHost,
        }
    }

    /// The weight in tenths (1, 3, 5, 10): sums stay exact integers.
    pub fn tenths(self) -> u64 {
        match self {
            Self::AnonymousUnknownHost => 1,
            Self::AnonymousKnownHost => 3,
            Self::KeyUnknownHost => 5,
            Self::KeyKnownHost => 10,
        }
    }

    /// The weight: 0.1, 0.3, 0.5 or 1.0.
    pub fn weight(self) -> f64 {
        self.tenths() as f64 / 10.0
    }
}

/// Observation counts per status class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct StatusCounts {
    /// 1xx–3xx.
    pub success: u64,
    /// No response or 5xx.
    pub failure: u64,
    /// 429.
    pub throttled: u64,
    /// Other 4xx.
    pub rejected: u64,
}

impl StatusCounts {
    fn add(&mut self, class: StatusClass, n: u64) {
        let c = match class {
            StatusClass::Success => &mut self.success,
            StatusClass::Failure => &mut self.failure,
            StatusClass::Throttled => &mut self.throttled,
            StatusClass::Rejected => &mut self.rejected,
        };
        *c = c.saturating_add(n);
    }

    fn merge(&mut self, o: &Self) {
        self.add(StatusClass::Success, o.success);
        self.add(StatusClass::Failure, o.failure);
        self.add(StatusClass::Throttled, o.throttled);
        self.add(StatusClass::Rejected, o.rejected);
    }

    fn total(&self) -> u64 {
        [self.success, self.failure, self.throttled, self.rejected]
            .into_iter()
            .fold(0, u64::saturating_add)
    }
}

/// Observation counts per weight tier: how much of the evidence is keyed and catalogued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct WeightMix {
    /// Weight 0.1.
    pub anonymous_unknown_host: u64,
    /// Weight 0.3.
    pub anonymous_known_host: u64,
    /// Weight 0.5.
    pub key_unknown_host: u64,
    /// Weight 1.0.
    pub key_known_host: u64,
}

/// What the server stores per host: status classes per weight tier, exact status codes
/// (`"200"`, `"503"`, `"none"` for no response) and the latency histogram. Missing keys
/// deserialise as empty; histogram entries past the last bucket are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TelemetryRollup {
    /// Status classes per tier, keyed by [`WeightTier`].
    pub by_tier: BTreeMap<WeightTier, StatusCounts>,
    /// Count per exact status code; `"none"` when no response arrived.
    pub status_codes: BTreeMap<String, u64>,
    /// Count per [`LATENCY_BUCKETS_MS`] bucket (same length, same order once anything is added).
    pub latency_histogram: Vec<u64>,
}

impl TelemetryRollup {
    /// Adds one observation.
    pub fn add(&mut self, status: Option<u16>, latency_ms: f64, tier: WeightTier) {
        self.by_tier
            .entry(tier)
            .or_default()
            .add(status_class(status), 1);
        let code = status.map_or_else(|| "none".to_owned(), |s| s.to_string());
        let n = self.status_codes.entry(code).or_default();
        *n = n.saturating_add(1);
        self.grow();
        let b = &mut self.latency_histogram[latency_bucket(latency_ms)];
        *b = b.saturating_add(1);
    }

    /// Adds every count of `other` (rollups are sums, so merging is order-free).
    pub fn merge(&mut self, other: &Self) {
        for (tier, c) in &other.by_tier {
            self.by_tier.entry(*tier).or_default().merge(c);
        }
        for (code, n) in &other.status_codes {
            let e = self.status_codes.entry(code.clone()).or_default();
            *e = e.saturating_add(*n);
        }
        self.grow();
        for (i, n) in other
            .latency_histogram
            .iter()
            .enumerate()
            .take(LATENCY_BUCKETS_MS.len())
        {
            self.latency_histogram[i] = self.latency_histogram[i].saturating_add(*n);
        }
    }

    fn grow(&mut self) {
        self.latency_histogram.resize(LATENCY_BUCKETS_MS.len(), 0);
    }
}

/// The `telemetry{...}` block: self-reported observations, reported apart from interactions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySummary {
    /// Observations counted.
    pub observations: u64,
    /// Σ weight·success / Σ weight·(success + failure), 3 decimals; throttled and rejected
    /// are not in it. `None` when no success or failure was observed.
    pub weighted_success_rate: Option<f64>,
    /// Unweighted counts per status class.
    pub status_classes: StatusCounts,
    /// Median latency as a histogram bucket's upper bound (the true value is at most this
    /// and above the previous bound); `None` with no observations.
    pub latency_p50_ms: Option<f64>,
    /// 95th percentile latency, same convention.
    pub latency_p95_ms: Option<f64>,
    /// Count per exact status code (`"none"`: no response).
    pub status_codes: BTreeMap<String, u64>,
    /// Observations per weight tier.
    pub weight_mix: WeightMix,
}

/// Nearest-rank percentile `p` (in percent) over the histogram, as a bucket bound.
pub(crate) fn percentile(hist: &[u64], total: u64, p: u64) -> Option<f64> {
    if total == 0 {
        return None;
    }
    let rank = (u128::from(total) * u128::from(p)).div_ceil(100).max(1);
    let mut seen: u128 = 0;
    for (i, n) in hist.iter().enumerate() {
        seen += u128::from(*n);
        if seen >= rank {
            return LATENCY_BUCKETS_MS.get(i).copied();
        }
    }
    None
}

/// Summarises a rollup: weighted success rate, class counts, p50/p95 latency, status
/// distribution and weight mix.
pub fn summarize_telemetry(rollup: &TelemetryRollup) -> TelemetrySummary {
    let mut classes = StatusCounts::default();
    let mut mix = WeightMix::default();
    let (mut num, mut den) = (0u64, 0u64);
    for (tier, c) in &rollup.by_tier {
        classes.merge(c);
        let w = tier.tenths();
        num = num.saturating_add(c.success.saturating_mul(w));
        den = den.saturating_add(c.success.saturating_add(c.failure).saturating_mul(w));
        let slot = match tier {
            WeightTier::AnonymousUnknownHost => &mut mix.anonymous_unknown_host,
            WeightTier::AnonymousKnownHost => &mut mix.anonymous_known_host,
            WeightTier::KeyUnknownHost => &mut mix.key_unknown_host,
            WeightTier::KeyKnownHost => &mut mix.key_known_host,
        };
        *slot = slot.saturating_add(c.total());
    }
    let observations = classes.total();
    let hist =
        &rollup.latency_histogram[..rollup.latency_histogram.len().min(LATENCY_BUCKETS_MS.len())];
    let hist_total = hist.iter().fold(0u64, |a, n| a.saturating_add(*n));
    TelemetrySummary {
        observations,
        weighted_success_rate: permille(num, den).map(|p| p as f64 / 1000.0),
        status_classes: classes,
        latency_p50_ms: percentile(hist, hist_total, 50),
        latency_p95_ms: percentile(hist, hist_total, 95),
        status_codes: rollup.status_codes.clone(),
        weight_mix: mix,
    }
}
