//! The host protocol every JavaScript host follows (SPEC §2, §3.5): settings from the
//! environment, and where the local node is (node.json's plan is in [`crate::plans`]). The
//! hosts keep only the IO.

use crate::errors::{invalid_argument, Result};
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

/// The URL of the local node an announcement's text (`LOWDOWN_HOME/local-node.json`)
/// names, or `null` when it names none a host may deliver to (SPEC §2).
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "localNodeUrl"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "localNodeUrl"))]
pub fn js_local_node_url(text: String) -> Option<String> {
    lowdown_core::local_node::url(&text)
}
