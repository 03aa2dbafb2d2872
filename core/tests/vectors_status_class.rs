//! Golden vectors for `telemetry::status_class`.
mod common;
use lowdown_core::telemetry::status_class;

#[test]
fn status_class_vectors() {
    common::check("status_class.json", |input| {
        let status = input["status"].as_u64().map(|s| u16::try_from(s).unwrap());
        Ok(serde_json::to_value(status_class(status)).unwrap())
    });
}
