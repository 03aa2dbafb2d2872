//! Aggregation (SPEC §5): outcome classes, reputation summaries, comparison.

use crate::convert::{from_js, parse_enum, to_js};
use crate::errors::{to_js_error, Result};
use lowdown_core::aggregate;
use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;

/// Which counter one interaction goes to: `protocol` first, then `cancelled`, then a
/// request-layer `rejected`, else its outcome.
#[napi(
    js_name = "outcomeClass",
    ts_args_type = "requestKind: RequestKind, outcome: Outcome, errorLayer: ErrorLayer | null",
    ts_return_type = "OutcomeClass"
)]
pub fn js_outcome_class<'e>(
    env: &'e Env,
    request_kind: String,
    outcome: String,
    error_layer: Option<String>,
) -> Result<Unknown<'e>> {
    let layer = error_layer.as_deref().map(parse_enum).transpose()?;
    to_js(
        env,
        &aggregate::outcome_class(parse_enum(&request_kind)?, parse_enum(&outcome)?, layer),
    )
}

/// The reputation summary (success rate from organic data only, confidence, counts by
/// source) from per-source counters.
#[napi(
    js_name = "summarize",
    ts_args_type = "counts: SourceCounts",
    ts_return_type = "Summary"
)]
pub fn js_summarize<'e>(env: &'e Env, counts: Unknown<'_>) -> Result<Unknown<'e>> {
    to_js(env, &aggregate::summarize(&from_js(env, counts)?))
}

/// Ranks 2–5 `[target, summary]` pairs by success rate (nulls last) with the recommendation
/// rule; throws `candidate_count` or `duplicate_candidate`.
#[napi(
    js_name = "compare",
    ts_args_type = "candidates: Array<[string, Summary]>",
    ts_return_type = "Comparison"
)]
pub fn js_compare<'e>(env: &'e Env, candidates: Unknown<'_>) -> Result<Unknown<'e>> {
    let candidates: Vec<(String, aggregate::Summary)> = from_js(env, candidates)?;
    to_js(
        env,
        &aggregate::compare(&candidates).map_err(|e| to_js_error(env, e))?,
    )
}

/// The one-sentence reading of a summary for `target`.
#[napi(js_name = "message", ts_args_type = "target: string, summary: Summary")]
pub fn js_message(env: &Env, target: String, summary: Unknown<'_>) -> Result<String> {
    Ok(aggregate::message(&target, &from_js(env, summary)?))
}
