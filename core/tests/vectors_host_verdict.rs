//! Golden vectors for `telemetry::host_verdict` with policies built from env values.
mod common;
use lowdown_core::telemetry::{host_verdict, HostPolicy};
use serde_json::Value;

fn policy(input: &Value) -> HostPolicy {
    HostPolicy::from_env_values(input["allowlist"].as_str(), input["allow_private"].as_str())
}

#[test]
fn host_verdict_vectors() {
    common::check("host_verdict.json", |input| {
        let host = common::string(&input["host"]);
        serde_json::to_value(host_verdict(&host, &policy(input))).map_err(|e| e.to_string())
    });
}

#[test]
fn every_block_reason_is_exercised() {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/host_verdict.json"
    ));
    for reason in [
        "invalid_host",
        "unicode_host",
        "localhost",
        "local_name",
        "special_use",
        "single_label",
        "loopback",
        "private",
        "link_local",
        "cgnat",
        "unique_local",
        "unspecified",
        "reserved",
        "metadata",
        "not_allowlisted",
    ] {
        assert!(
            text.contains(&format!("\"reason\": \"{reason}\"")),
            "no vector blocks with {reason}"
        );
    }
}
