//! Golden vectors for `telemetry::prepare_observation`, plus the privacy canary: nothing
//! but the host of a URL may reach the observation.
mod common;
use lowdown_core::record::Source;
use lowdown_core::telemetry::{prepare_observation, HostPolicy};
use serde_json::Value;

fn latency(v: &Value) -> f64 {
    match v.as_str() {
        Some("NaN") => f64::NAN,
        Some("Infinity") => f64::INFINITY,
        Some("-Infinity") => f64::NEG_INFINITY,
        _ => v.as_f64().expect("latency_ms"),
    }
}

#[test]
fn prepare_observation_vectors() {
    common::check("prepare_observation.json", |input| {
        let policy = HostPolicy::from_env_values(
            input["allowlist"].as_str(),
            input["allow_private"].as_str(),
        );
        let source: Source =
            serde_json::from_value(input["source"].clone()).map_err(|e| e.to_string())?;
        let obs = prepare_observation(
            &common::string(&input["url"]),
            input["method"].as_str().unwrap(),
            input["status"].as_u64().map(|s| s as u16),
            latency(&input["latency_ms"]),
            input["response_bytes"].as_u64(),
            source,
            &policy,
        );
        let out = serde_json::to_value(obs).unwrap();
        assert!(
            !out.to_string().contains("CANARY"),
            "private URL or method text leaked: {out}"
        );
        Ok(out)
    });
}
