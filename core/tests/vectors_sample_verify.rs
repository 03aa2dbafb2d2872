//! Golden vectors for `sample::verify`.
mod common;
use lowdown_core::sample::verify;

#[test]
fn sample_verify_vectors() {
    common::check("sample_verify.json", |input| {
        let s = |k: &str| common::string(&input[k]);
        Ok(verify(
            &s("service_id"),
            &s("agent_id"),
            &s("salt_id"),
            &s("salt"),
            input["sampling_rate"].as_f64().unwrap(),
            &s("claimed_roll"),
            input["claimed_sampled"].as_bool().unwrap(),
        )
        .into())
    });
}
