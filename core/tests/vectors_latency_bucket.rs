//! Golden vectors for `telemetry::latency_bucket`, and the bucket table's own invariants.
mod common;
use lowdown_core::telemetry::{latency_bucket, LATENCY_BUCKETS_MS};

#[test]
fn latency_bucket_vectors() {
    common::check("latency_bucket.json", |input| {
        let ms = if input["latency_ms"] == "NaN" {
            f64::NAN
        } else {
            input["latency_ms"].as_f64().unwrap()
        };
        Ok(latency_bucket(ms).into())
    });
}

#[test]
fn bucket_bounds_rise_and_end_at_the_largest_accepted_latency() {
    assert!(LATENCY_BUCKETS_MS.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        *LATENCY_BUCKETS_MS.last().unwrap(),
        lowdown_core::record::validate::MAX_LATENCY_MS
    );
}
