//! Golden vectors for `telemetry::is_private_name` and `telemetry::is_blocked_ip`.
mod common;
use lowdown_core::telemetry::{is_blocked_ip, is_private_name};
use serde_json::Value;

#[test]
fn private_name_vectors() {
    common::check("private_name.json", |input| {
        Ok(Value::Bool(is_private_name(&common::string(
            &input["host"],
        ))))
    });
}

#[test]
fn blocked_ip_vectors() {
    common::check("blocked_ip.json", |input| {
        let ip = common::string(&input["ip"])
            .parse()
            .map_err(|e| format!("not an address: {e}"))?;
        Ok(Value::Bool(is_blocked_ip(ip)))
    });
}
