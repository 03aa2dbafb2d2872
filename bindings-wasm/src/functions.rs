//! The core's pure functions, exported with camelCase names (as in the Node binding).

use crate::convert::to_js;
use crate::errors::{to_js_error, Result};
use lowdown_core::{redact, schema_hash, target_label};
use wasm_bindgen::prelude::*;

/// Hashes the JSON text of a `tools/list` result (SPEC §3.3): `{schema_hash, desc_hash,
/// tool_count, has_more}`. Throws `code: "invalid_json" | "too_deep"`.
#[wasm_bindgen(js_name = "hashToolsResult", unchecked_return_type = "ToolHashes")]
pub fn js_hash_tools_result(result_json: &[u8]) -> Result<JsValue> {
    to_js(&schema_hash::hash_tools_result(result_json).map_err(to_js_error)?)
}

/// Hashes the JSON text of a `tools` array (SPEC §3.3); same result and errors as
/// `hashToolsResult` (`has_more` is always false).
#[wasm_bindgen(js_name = "hashTools", unchecked_return_type = "ToolHashes")]
pub fn js_hash_tools(tools_json: &[u8]) -> Result<JsValue> {
    to_js(&schema_hash::hash_tools(tools_json).map_err(to_js_error)?)
}

/// The SPEC §3.3 canonical JSON text of any JSON document (keys sorted by UTF-16 code
/// units, JavaScript number formatting). Throws `code: "invalid_json" | "too_deep"`.
#[wasm_bindgen(js_name = "canonicalJson")]
pub fn js_canonical_json(json: &[u8]) -> Result<String> {
    schema_hash::canonical_json(json).map_err(to_js_error)
}

/// Masks secrets (bearer tokens, API keys, JWTs, `token=`-style values, URL passwords, long
/// hex runs) in `text` with `[REDACTED]`.
#[wasm_bindgen(js_name = "redact")]
pub fn js_redact(text: &str) -> String {
    redact::redact(text).into_owned()
}

/// The SPEC §3.2 target label of a command line (`argv[0]` is the command): `npm:pkg`,
/// `pypi:pkg`, `oci:image` or a file's basename; `undefined` when none is safe to publish.
#[wasm_bindgen(js_name = "targetLabel")]
pub fn js_target_label(argv: Vec<String>) -> Option<String> {
    target_label::target_label(&argv)
}

/// The core's shared defaults (SPEC §2): `API_URL`, `API_URL_ENV`, `PROWL_API_URL_ENV`,
/// `HOME_ENV`, `HOME_DIR_NAME`, `NODE_ID_HEADER`, `AGENT_KEY_HEADER`.
#[wasm_bindgen(
    js_name = "defaults",
    unchecked_return_type = "Record<'API_URL' | 'API_URL_ENV' | 'PROWL_API_URL_ENV' | 'HOME_ENV' | 'HOME_DIR_NAME' | 'NODE_ID_HEADER' | 'AGENT_KEY_HEADER', string>"
)]
pub fn js_defaults() -> Result<JsValue> {
    use lowdown_core::defaults as d;
    let pairs = [
        ("API_URL", d::API_URL),
        ("API_URL_ENV", d::API_URL_ENV),
        ("PROWL_API_URL_ENV", d::PROWL_API_URL_ENV),
        ("HOME_ENV", d::HOME_ENV),
        ("HOME_DIR_NAME", d::HOME_DIR_NAME),
        ("NODE_ID_HEADER", d::NODE_ID_HEADER),
        ("AGENT_KEY_HEADER", d::AGENT_KEY_HEADER),
    ];
    to_js(
        &pairs
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>(),
    )
}
