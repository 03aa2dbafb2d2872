//! Golden vectors for `telemetry::key_tier` (the weight an agent key has earned).
mod common;
use lowdown_core::telemetry::{key_tier, KeyStanding};

#[test]
fn key_weight_vectors() {
    common::check("key_weight.json", |input| {
        let key: Option<KeyStanding> =
            serde_json::from_value(input["key"].clone()).map_err(|e| e.to_string())?;
        let tier = key_tier(
            key,
            input["known_host"].as_bool().unwrap(),
            input["now_ms"].as_i64().unwrap(),
        );
        Ok(serde_json::to_value(tier.weight()).unwrap())
    });
}
