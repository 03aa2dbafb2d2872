//! Golden vectors for `telemetry::HostPolicy::from_env_values`.
mod common;
use lowdown_core::telemetry::HostPolicy;

#[test]
fn host_policy_vectors() {
    common::check("host_policy.json", |input| {
        let p = HostPolicy::from_env_values(
            input["allowlist"].as_str(),
            input["allow_private"].as_str(),
        );
        Ok(serde_json::to_value(p).unwrap())
    });
}
