//! Aggregation (SPEC §5) and sampling (SPEC §4).

use crate::convert::{from_js, parse_enum, to_js};
use crate::errors::{to_js_error, Result};
use lowdown_core::{aggregate, sample};
use wasm_bindgen::prelude::*;

/// Which counter one interaction goes to: `protocol` first, then `cancelled`, then a
/// request-layer `rejected`, else its outcome.
#[wasm_bindgen(js_name = "outcomeClass", unchecked_return_type = "OutcomeClass")]
pub fn js_outcome_class(
    #[wasm_bindgen(js_name = "requestKind", unchecked_param_type = "RequestKind")]
    request_kind: &str,
    #[wasm_bindgen(unchecked_param_type = "Outcome")] outcome: &str,
    #[wasm_bindgen(js_name = "errorLayer", unchecked_param_type = "ErrorLayer | null")] error_layer: Option<String>,
) -> Result<JsValue> {
    let layer = error_layer.as_deref().map(parse_enum).transpose()?;
    to_js(&aggregate::outcome_class(
        parse_enum(request_kind)?,
        parse_enum(outcome)?,
        layer,
    ))
}

/// The reputation summary (success rate from organic data only, confidence, counts by
/// source) from per-source counters.
#[wasm_bindgen(js_name = "summarize", unchecked_return_type = "Summary")]
pub fn js_summarize(
    #[wasm_bindgen(unchecked_param_type = "SourceCounts")] counts: JsValue,
) -> Result<JsValue> {
    to_js(&aggregate::summarize(&from_js(counts)?))
}

/// Ranks 2–5 `[target, summary]` pairs by success rate (nulls last) with the recommendation
/// rule; throws `candidate_count` or `duplicate_candidate`.
#[wasm_bindgen(js_name = "compare", unchecked_return_type = "Comparison")]
pub fn js_compare(
    #[wasm_bindgen(unchecked_param_type = "Array<[string, Summary]>")] candidates: JsValue,
) -> Result<JsValue> {
    let candidates: Vec<(String, aggregate::Summary)> = from_js(candidates)?;
    to_js(&aggregate::compare(&candidates).map_err(to_js_error)?)
}

/// The one-sentence reading of a summary for `target`.
#[wasm_bindgen(js_name = "message")]
pub fn js_message(
    target: &str,
    #[wasm_bindgen(unchecked_param_type = "Summary")] summary: JsValue,
) -> Result<String> {
    Ok(aggregate::message(target, &from_js(summary)?))
}

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
