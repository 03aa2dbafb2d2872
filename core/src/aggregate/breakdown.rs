//! The detail rows of a reputation answer (SPEC §5): per task, day, server version and
//! schema hash, plus the latency and failure figures. One population per figure: every
//! row here is organic (the population of `success_rate`), and a row exists only when it
//! has something in it.

use super::{permille, ClassCounts};
use crate::telemetry::{percentile, LATENCY_BUCKETS_MS};
use serde::{Deserialize, Serialize};

/// Key of `failure_breakdown` for rated failures recorded without a `failure_type`, so the
/// breakdown always sums to the failures.
pub const UNSPECIFIED_FAILURE: &str = "unspecified";

/// One organic row of a breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct OrganicRow {
    /// Organic tool interactions (rated, rejected and cancelled; protocol traffic is not).
    pub interactions: u64,
    /// Organic success + partial + failure.
    pub rated_interactions: u64,
    /// Organic successes / rated, 3 decimals; `None` when nothing is rated.
    pub success_rate: Option<f64>,
}

/// The row for one group's organic counts, or `None` when the group has no organic tool
/// interaction (a protocol-only task, a day of seeded data): such rows are left out.
pub fn organic_row(organic: &ClassCounts) -> Option<OrganicRow> {
    let interactions = organic.interactions();
    (interactions > 0).then(|| OrganicRow {
        interactions,
        rated_interactions: organic.rated(),
        success_rate: permille(organic.success, organic.rated()).map(|p| p as f64 / 1000.0),
    })
}

/// `latency_ms{avg, p50, p95}` of rated organic tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct LatencySummary {
    /// Mean, rounded to 0.1 ms.
    pub avg: f64,
    /// Median as a histogram bucket's upper bound ([`LATENCY_BUCKETS_MS`]): the true value
    /// is at most this and above the previous bound.
    pub p50: f64,
    /// 95th percentile, same convention.
    pub p95: f64,
}

/// The latency figures from a histogram over [`LATENCY_BUCKETS_MS`] (entries past the
/// last bucket are ignored) and the exact sum of the latencies counted in it; `None` when
/// the histogram is empty.
pub fn latency_summary(histogram: &[u64], sum_ms: f64) -> Option<LatencySummary> {
    let hist = &histogram[..histogram.len().min(LATENCY_BUCKETS_MS.len())];
    let n = hist.iter().fold(0u64, |a, b| a.saturating_add(*b));
    Some(LatencySummary {
        avg: (sum_ms / n as f64 * 10.0).round() / 10.0,
        p50: percentile(hist, n, 50)?,
        p95: percentile(hist, n, 95)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::latency_bucket;

    #[test]
    fn rows_exist_only_with_organic_tool_interactions() {
        let mut c = ClassCounts {
            protocol: 4,
            ..Default::default()
        };
        assert_eq!(organic_row(&c), None, "a protocol-only task has no row");
        c.rejected = 1;
        let row = organic_row(&c).unwrap();
        assert_eq!((row.interactions, row.rated_interactions), (1, 0));
        assert_eq!(row.success_rate, None);
        c.success = 2;
        c.failure = 1;
        assert_eq!(organic_row(&c).unwrap().success_rate, Some(0.667));
    }

    #[test]
    fn latency_from_histogram_and_sum() {
        assert_eq!(latency_summary(&[0; 25], 0.0), None);
        let mut hist = vec![0u64; LATENCY_BUCKETS_MS.len()];
        let lat = [12.0, 30.0, 40.0, 90.0, 2000.5];
        for l in lat {
            hist[latency_bucket(l)] += 1;
        }
        let s = latency_summary(&hist, lat.iter().sum()).unwrap();
        assert_eq!(s.avg, 434.5);
        assert_eq!(s.p50, 50.0, "40 ms lies in the (25, 50] bucket");
        assert_eq!(s.p95, 3000.0);
    }
}
