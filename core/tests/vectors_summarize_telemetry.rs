//! Golden vectors for `telemetry::summarize_telemetry`, fed through a rollup; and the
//! rollup property the server relies on: merging stored rollups equals adding everything.
mod common;
use lowdown_core::telemetry::{summarize_telemetry, TelemetryRollup, WeightTier};
use serde_json::Value;

fn rollup(observations: &[Value]) -> TelemetryRollup {
    let mut r = TelemetryRollup::default();
    for o in observations {
        let tier = WeightTier::of(
            o["valid_agent_key"].as_bool().unwrap(),
            o["known_host"].as_bool().unwrap(),
        );
        r.add(
            o["status"].as_u64().map(|s| s as u16),
            o["latency_ms"].as_f64().unwrap(),
            tier,
        );
    }
    r
}

#[test]
fn summarize_telemetry_vectors() {
    common::check("summarize_telemetry.json", |input| {
        Ok(serde_json::to_value(summarize_telemetry(&rollup(
            input["observations"].as_array().unwrap(),
        )))
        .unwrap())
    });
}

#[test]
fn merged_rollups_summarise_like_one_rollup() {
    for case in common::load("summarize_telemetry.json") {
        let obs = case.input["observations"].as_array().unwrap();
        let (a, b) = obs.split_at(obs.len() / 2);
        let mut merged = rollup(a);
        // Through JSON, as the server stores rollups.
        let stored: TelemetryRollup =
            serde_json::from_value(serde_json::to_value(rollup(b)).unwrap()).unwrap();
        merged.merge(&stored);
        assert_eq!(
            summarize_telemetry(&merged),
            summarize_telemetry(&rollup(obs)),
            "{}",
            case.name
        );
    }
}
