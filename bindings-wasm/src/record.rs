//! Interaction records: building one from a classified exchange, publishing rules, validation.

use crate::convert::{from_js, to_js};
use crate::errors::{to_js_error, Result};
use crate::options::JsRecordContext;
use lowdown_core::record::{build, validate};
use wasm_bindgen::prelude::*;

/// The SPEC §3.2 record for one exchange (from `Classifier.feed`), with the session's facts;
/// `null` for a server→client request. `recordId` is the host's idempotency key.
#[wasm_bindgen(
    js_name = "buildRecord",
    unchecked_return_type = "InteractionRecord | null"
)]
pub fn js_build_record(
    #[wasm_bindgen(unchecked_param_type = "Exchange")] exchange: JsValue,
    #[wasm_bindgen(unchecked_param_type = "SessionFacts")] facts: JsValue,
    #[wasm_bindgen(unchecked_param_type = "RecordContext | null")] ctx: JsValue,
    #[wasm_bindgen(js_name = "recordId")] record_id: Option<String>,
) -> Result<JsValue> {
    let ctx = from_js::<Option<JsRecordContext>>(ctx)?
        .unwrap_or_default()
        .try_into()?;
    to_js(&build::build_record(
        &from_js(exchange)?,
        &from_js(facts)?,
        &ctx,
        record_id,
    ))
}

/// SPEC §3.2's published form of `serverInfo.version`: control characters removed, kept
/// only when it matches `^[0-9A-Za-z.+_-]{1,32}$`, else `undefined`.
#[wasm_bindgen(js_name = "sanitizeServerVersion")]
pub fn js_sanitize_server_version(raw: &str) -> Option<String> {
    build::sanitize_server_version(raw)
}

/// Validates one interaction record as the API receives it; throws `code` = the problem's
/// kind with `details.path` naming the field.
#[wasm_bindgen(
    js_name = "validateRecord",
    unchecked_return_type = "InteractionRecord"
)]
pub fn js_validate_record(body: JsValue) -> Result<JsValue> {
    to_js(&validate::validate_record(&from_js(body)?).map_err(to_js_error)?)
}

/// Validates one record or an array of 1..=1000 (all-or-nothing; errors name `records[i].field`).
#[wasm_bindgen(
    js_name = "validateRecords",
    unchecked_return_type = "InteractionRecord[]"
)]
pub fn js_validate_records(body: JsValue) -> Result<JsValue> {
    to_js(&validate::validate_records(&from_js(body)?).map_err(to_js_error)?)
}

/// Checks a node id (`^ld_[A-Za-z0-9_-]{1,64}$`); throws `code: "invalid_format"` otherwise.
#[wasm_bindgen(js_name = "validateNodeId")]
pub fn js_validate_node_id(#[wasm_bindgen(js_name = "nodeId")] node_id: &str) -> Result<()> {
    validate::validate_node_id(node_id).map_err(to_js_error)
}
