//! Sampling decisions (SPEC §4): computed and verified the same way by anyone.

use crate::convert::to_js;
use crate::errors::Result;
use lowdown_core::sample;
use wasm_bindgen::prelude::*;

/// The decision for one (service, agent) pair under one salt: `{roll, bucket, sampled}`.
#[wasm_bindgen(js_name = "decide", unchecked_return_type = "SamplingDecision")]
pub fn js_decide(
    #[wasm_bindgen(js_name = "serviceId")] service_id: &str,
    #[wasm_bindgen(js_name = "agentId")] agent_id: &str,
    #[wasm_bindgen(js_name = "saltId")] salt_id: &str,
    salt: &str,
    #[wasm_bindgen(js_name = "samplingRate")] sampling_rate: f64,
) -> Result<JsValue> {
    to_js(&sample::decide(
        service_id,
        agent_id,
        salt_id,
        salt,
        sampling_rate,
    ))
}

/// Whether a claimed roll (hex, any case) and sampled flag are what these inputs give.
#[wasm_bindgen(js_name = "verify")]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the core's signature one to one"
)]
pub fn js_verify(
    #[wasm_bindgen(js_name = "serviceId")] service_id: &str,
    #[wasm_bindgen(js_name = "agentId")] agent_id: &str,
    #[wasm_bindgen(js_name = "saltId")] salt_id: &str,
    salt: &str,
    #[wasm_bindgen(js_name = "samplingRate")] sampling_rate: f64,
    #[wasm_bindgen(js_name = "claimedRoll")] claimed_roll: &str,
    #[wasm_bindgen(js_name = "claimedSampled")] claimed_sampled: bool,
) -> bool {
    sample::verify(
        service_id,
        agent_id,
        salt_id,
        salt,
        sampling_rate,
        claimed_roll,
        claimed_sampled,
    )
}

/// The salt epoch (whole UTC days since 1970) in force at `nowMs` (a number, not a BigInt).
#[wasm_bindgen(js_name = "saltEpoch")]
pub fn js_salt_epoch(#[wasm_bindgen(js_name = "nowMs")] now_ms: f64) -> f64 {
    sample::salt_epoch(now_ms as i64) as f64
}

/// The epochs whose salts are accepted at `nowMs`, current first (the previous one during
/// the first hour after a rotation).
#[wasm_bindgen(js_name = "acceptedEpochs", unchecked_return_type = "number[]")]
pub fn js_accepted_epochs(#[wasm_bindgen(js_name = "nowMs")] now_ms: f64) -> Result<JsValue> {
    to_js(&sample::accepted_epochs(now_ms as i64))
}
