//! The core's pure functions, exported with camelCase names.

use crate::convert::to_js;
use crate::errors::{to_js_error, Result};
use lowdown_core::{redact, schema_hash, target_label};
use napi::bindgen_prelude::{Env, Uint8Array, Unknown};
use napi_derive::napi;

/// Hashes the JSON text of a `tools/list` result (SPEC §3.3): `{schema_hash, desc_hash,
/// tool_count, has_more}`. Throws `code: "invalid_json" | "too_deep"`.
#[napi(js_name = "hashToolsResult", ts_return_type = "ToolHashes")]
pub fn js_hash_tools_result<'e>(env: &'e Env, result_json: Uint8Array) -> Result<Unknown<'e>> {
    let hashes = schema_hash::hash_tools_result(&result_json).map_err(|e| to_js_error(env, e))?;
    to_js(env, &hashes)
}

/// Hashes the JSON text of a `tools` array (SPEC §3.3); same result and errors as
/// `hashToolsResult` (`has_more` is always false).
#[napi(js_name = "hashTools", ts_return_type = "ToolHashes")]
pub fn js_hash_tools<'e>(env: &'e Env, tools_json: Uint8Array) -> Result<Unknown<'e>> {
    let hashes = schema_hash::hash_tools(&tools_json).map_err(|e| to_js_error(env, e))?;
    to_js(env, &hashes)
}

/// The SPEC §3.3 canonical JSON text of any JSON document (keys sorted by UTF-16 code
/// units, JavaScript number formatting). Throws `code: "invalid_json" | "too_deep"`.
#[napi(js_name = "canonicalJson")]
pub fn js_canonical_json(env: &Env, json: Uint8Array) -> Result<String> {
    schema_hash::canonical_json(&json).map_err(|e| to_js_error(env, e))
}

/// Masks secrets (bearer tokens, API keys, JWTs, `token=`-style values, URL passwords, long
/// hex runs) in `text` with `[REDACTED]`.
#[napi(js_name = "redact")]
pub fn js_redact(text: String) -> String {
    redact::redact(&text).into_owned()
}

/// The SPEC §3.2 target label of a command line (`argv[0]` is the command): `npm:pkg`,
/// `pypi:pkg`, `oci:image` or a file's basename; `null` when none is safe to publish.
#[napi(js_name = "targetLabel")]
pub fn js_target_label(argv: Vec<String>) -> Option<String> {
    target_label::target_label(&argv)
}

/// The core's shared defaults (SPEC §2): `API_URL`, `API_URL_ENV`, `PROWL_API_URL_ENV`,
/// `HOME_ENV`, `HOME_DIR_NAME`, `NODE_ID_HEADER`, `AGENT_KEY_HEADER`.
#[napi(
    js_name = "defaults",
    ts_return_type = "Record<'API_URL' | 'API_URL_ENV' | 'PROWL_API_URL_ENV' | 'HOME_ENV' | 'HOME_DIR_NAME' | 'NODE_ID_HEADER' | 'AGENT_KEY_HEADER', string>"
)]
pub fn js_defaults(env: &Env) -> Result<Unknown<'_>> {
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
        env,
        &pairs
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>(),
    )
}
