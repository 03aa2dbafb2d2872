//! The host protocol every JavaScript host follows (SPEC §2, §3.5): settings from the
//! environment and the node identity file's format. The hosts keep only the IO.

use crate::errors::{invalid_argument, Result};
#[cfg(feature = "proxy")]
use crate::errors::{opt_text, OptText};
#[cfg(feature = "proxy")]
use lowdown_core::identity;
use lowdown_core::settings;
use std::collections::HashMap;

#[cfg(not(target_arch = "wasm32"))]
use napi_derive::napi;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

/// The settings of a host (`client`: `"proxy"` or `"telemetry"`) from its environment
/// (`envJson`: `{"NAME": "value"}`) and the user's home directory, as JSON text:
/// `{api_url, home, record, telemetry, debug}`.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "settingsFromEnv"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "settingsFromEnv"))]
pub fn js_settings_from_env(env_json: String, user_home: String, client: String) -> Result<String> {
    let env: HashMap<String, String> = serde_json::from_str(&env_json).map_err(invalid_argument)?;
    let client = match client.as_str() {
        "proxy" => settings::Client::Proxy,
        "telemetry" => settings::Client::Telemetry,
        _ => return Err(invalid_argument("client must be proxy or telemetry")),
    };
    let s = settings::from_env(&|k| env.get(k).cloned(), &user_home, client);
    serde_json::to_string(&s).map_err(invalid_argument)
}

/// The identity a `node.json` holds, as JSON text `{node_id, created_at}`, or `null` when its
/// text is not one (make a new one and replace the file).
#[cfg(feature = "proxy")]
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi(js_name = "parseNodeIdentity", ts_return_type = "string | null")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen(js_name = "parseNodeIdentity", unchecked_return_type = "string | null")
)]
pub fn js_parse_node_identity(text: String) -> OptText {
    opt_text(identity::parse(&text).and_then(|id| serde_json::to_string(&id).ok()))
}

/// A new node identity's `node.json` text, from 6 random bytes (12 hex digits) and the clock.
#[cfg(feature = "proxy")]
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "newNodeIdentity"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "newNodeIdentity"))]
pub fn js_new_node_identity(random_hex: String, now_iso: String) -> Result<String> {
    let id = identity::new_identity_hex(&random_hex, &now_iso)
        .ok_or_else(|| invalid_argument("random_hex must be 12 hex digits"))?;
    Ok(identity::format(&id))
}
