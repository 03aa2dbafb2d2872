//! The host protocol every JavaScript host follows (SPEC §2, §3.5): settings from the
//! environment, the stored settings, and where to deliver (node.json's plan is in
//! [`crate::plans`]). The hosts keep only the IO.

#[cfg(feature = "proxy")]
use crate::errors::core_error;
use crate::errors::{invalid_argument, Result};
use lowdown_core::settings;
#[cfg(feature = "proxy")]
use lowdown_core::stored;
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

/// The local node an announcement's text (`LOWDOWN_HOME/local-node.json`) names, as JSON
/// text `{url, pid, started_at}`, or `null` when it names none a host may deliver to
/// (SPEC §2).
#[cfg(feature = "proxy")]
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "localNode"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "localNode"))]
pub fn js_local_node(text: String) -> Option<String> {
    lowdown_core::local_node::parse(&text).map(|n| serde_json::to_string(&n).unwrap_or_default())
}

/// The value `key` (`"api-url"`) has in the text of `LOWDOWN_HOME/config.json` (`null`:
/// no file), or `null`; throws (`code` `unknown_setting`, `invalid_value`, `not_settings`).
#[cfg(feature = "proxy")]
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "storedGet"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "storedGet"))]
pub fn js_stored_get(text: Option<String>, key: String) -> Result<Option<String>> {
    stored::get(text.as_deref(), &key).map_err(core_error)
}

/// The text of `LOWDOWN_HOME/config.json` with `key` set to `value` (`null`: removed);
/// throws as `storedGet`.
#[cfg(feature = "proxy")]
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "storedSet"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "storedSet"))]
pub fn js_stored_set(text: Option<String>, key: String, value: Option<String>) -> Result<String> {
    stored::set(text.as_deref(), &key, value.as_deref()).map_err(core_error)
}

/// Where a host with `settingsJson` (from `settingsFromEnv`) delivers and queries, given
/// the texts of `config.json` and `local-node.json` (`null`: missing), as JSON text
/// `{url, via, may_start}`.
#[cfg(feature = "proxy")]
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "destination"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "destination"))]
pub fn js_destination(
    settings_json: String,
    stored_text: Option<String>,
    announcement: Option<String>,
) -> Result<String> {
    let s: settings::Settings = serde_json::from_str(&settings_json).map_err(invalid_argument)?;
    let d = stored::destination(&s, stored_text.as_deref(), announcement.as_deref());
    serde_json::to_string(&d).map_err(invalid_argument)
}
