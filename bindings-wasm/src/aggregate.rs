//! Aggregation (SPEC §5): outcome classes, reputation summaries, comparison.

use crate::convert::{from_js, parse_enum, to_js};
use crate::errors::{to_js_error, Result};
use lowdown_core::aggregate;
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
