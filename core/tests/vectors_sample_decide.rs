//! Golden vectors for `sample::decide` (expected rolls computed independently with Python's hashlib).
mod common;
use lowdown_core::sample::decide;
use serde_json::Value;

/// A rate from a number or the string `NaN`.
pub fn rate(v: &Value) -> f64 {
    if v.as_str() == Some("NaN") {
        f64::NAN
    } else {
        v.as_f64().expect("sampling_rate")
    }
}

#[test]
fn sample_decide_vectors() {
    common::check("sample_decide.json", |input| {
        let s = |k: &str| common::string(&input[k]);
        let d = decide(
            &s("service_id"),
            &s("agent_id"),
            &s("salt_id"),
            &s("salt"),
            rate(&input["sampling_rate"]),
        );
        Ok(serde_json::to_value(d).unwrap())
    });
}
