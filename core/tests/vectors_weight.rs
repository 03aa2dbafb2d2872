//! Golden vectors for `telemetry::weight`.
mod common;
use lowdown_core::telemetry::weight;

#[test]
fn weight_vectors() {
    common::check("weight.json", |input| {
        let w = weight(
            input["valid_agent_key"].as_bool().unwrap(),
            input["known_host"].as_bool().unwrap(),
        );
        Ok(serde_json::to_value(w).unwrap())
    });
}
