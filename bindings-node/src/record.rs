//! Interaction records: building one from a classified exchange, publishing rules.

use crate::convert::{from_js, from_js_or_default, to_js, validate_js};
use crate::errors::{to_js_error, Result};
use crate::options::JsRecordContext;
use lowdown_core::record::{build, validate};
use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;

/// The SPEC §3.2 record for one exchange (from `Classifier.feed`), with the session's facts;
/// `null` for a server→client request. `recordId` is the host's idempotency key.
#[napi(
    js_name = "buildRecord",
    ts_args_type = "exchange: Exchange, facts: SessionFacts, ctx?: RecordContext | null, recordId?: string | null",
    ts_return_type = "InteractionRecord | null"
)]
pub fn js_build_record<'e>(
    env: &'e Env,
    exchange: Unknown<'_>,
    facts: Unknown<'_>,
    ctx: Option<Unknown<'_>>,
    record_id: Option<String>,
) -> Result<Unknown<'e>> {
    let ctx = from_js_or_default::<JsRecordContext>(env, ctx)?.try_into()?;
    to_js(
        env,
        &build::build_record(
            &from_js(env, exchange)?,
            &from_js(env, facts)?,
            &ctx,
            record_id,
        ),
    )
}

/// SPEC §3.2's published form of `serverInfo.version`: control characters removed, kept
/// only when it matches `^[0-9A-Za-z.+_-]{1,32}$`, else `null`.
#[napi(js_name = "sanitizeServerVersion")]
pub fn js_sanitize_server_version(raw: String) -> Option<String> {
    build::sanitize_server_version(&raw)
}

/// Validates one interaction record as the API receives it; throws `code` = the problem's
/// kind with `details.path` naming the field.
#[napi(
    js_name = "validateRecord",
    ts_args_type = "body: unknown",
    ts_return_type = "InteractionRecord"
)]
pub fn js_validate_record<'e>(env: &'e Env, body: Unknown<'_>) -> Result<Unknown<'e>> {
    validate_js(env, body, validate::validate_record)
}

/// Validates one record or an array of 1..=1000 (all-or-nothing; errors name `records[i].field`).
#[napi(
    js_name = "validateRecords",
    ts_args_type = "body: unknown",
    ts_return_type = "InteractionRecord[]"
)]
pub fn js_validate_records<'e>(env: &'e Env, body: Unknown<'_>) -> Result<Unknown<'e>> {
    validate_js(env, body, validate::validate_records)
}

/// Checks a node id (`^ld_[A-Za-z0-9_-]{1,64}$`); throws `code: "invalid_format"` otherwise.
#[napi(js_name = "validateNodeId")]
pub fn js_validate_node_id(env: &Env, node_id: String) -> Result<()> {
    validate::validate_node_id(&node_id).map_err(|e| to_js_error(env, e))
}
