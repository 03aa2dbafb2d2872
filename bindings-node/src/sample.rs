//! Sampling decisions (SPEC §4): computed and verified the same way by anyone.

use crate::convert::to_js;
use crate::errors::Result;
use lowdown_core::sample;
use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;

/// The decision for one (service, agent) pair under one salt: `{roll, bucket, sampled}`.
#[napi(js_name = "decide", ts_return_type = "SamplingDecision")]
pub fn js_decide<'e>(
    env: &'e Env,
    service_id: String,
    agent_id: String,
    salt_id: String,
    salt: String,
    sampling_rate: f64,
) -> Result<Unknown<'e>> {
    to_js(
        env,
        &sample::decide(&service_id, &agent_id, &salt_id, &salt, sampling_rate),
    )
}

/// Whether a claimed roll (hex, any case) and sampled flag are what these inputs give.
#[napi(js_name = "verify")]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the core's signature one to one"
)]
pub fn js_verify(
    service_id: String,
    agent_id: String,
    salt_id: String,
    salt: String,
    sampling_rate: f64,
    claimed_roll: String,
    claimed_sampled: bool,
) -> bool {
    sample::verify(
        &service_id,
        &agent_id,
        &salt_id,
        &salt,
        sampling_rate,
        &claimed_roll,
        claimed_sampled,
    )
}

/// The salt epoch (whole UTC days since 1970) in force at `nowMs`.
#[napi(js_name = "saltEpoch")]
pub fn js_salt_epoch(now_ms: i64) -> i64 {
    sample::salt_epoch(now_ms)
}

/// The epochs whose salts are accepted at `nowMs`, current first (the previous one during
/// the first hour after a rotation).
#[napi(js_name = "acceptedEpochs")]
pub fn js_accepted_epochs(now_ms: i64) -> Vec<i64> {
    sample::accepted_epochs(now_ms)
}
