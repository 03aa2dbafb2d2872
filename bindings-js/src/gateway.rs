//! What observe(fetch) routes through the sampling gateway (SPEC §10): a catalog service's
//! `allow` rules and credential mode, as the gateway itself applies them.

use crate::errors::{core_error, invalid_argument, Result};
use lowdown_core::gateway::allow::GatewayRules;

#[cfg(not(target_arch = "wasm32"))]
use napi_derive::napi;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

/// One catalog service's rules: which calls the gateway carries and which request headers
/// it forwards.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "GatewayRules"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "GatewayRules"))]
pub struct JsGatewayRules {
    inner: GatewayRules,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "GatewayRules"))]
impl JsGatewayRules {
    /// The rules of a `GET /v1/services` entry: `allow` (`"GET /v1/search"` each), `mode`
    /// (`inject`, the default, or `passthrough`) and `credential_header`. A malformed entry
    /// throws `bad_allow_rule`, `bad_mode` or `missing_header`.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(
        allow: Vec<String>,
        mode: Option<String>,
        credential_header: Option<String>,
    ) -> Result<JsGatewayRules> {
        GatewayRules::new(&allow, mode.as_deref(), credential_header.as_deref())
            .map(|inner| JsGatewayRules { inner })
            .map_err(core_error)
    }

    /// The verdict on `method` to `target` (a path under the upstream's base, with its
    /// query) as JSON text: `{"verdict":"allowed"|"not_allowed"|"bad_path","why"?}`.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn check(&self, method: String, target: String) -> Result<String> {
        serde_json::to_string(&self.inner.check(&method, &target)).map_err(invalid_argument)
    }

    /// Of the request header `names`, those to send the gateway (as given).
    #[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "keepRequestHeaders"))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "keepRequestHeaders"))]
    pub fn keep_request_headers(&self, names: Vec<String>) -> Vec<String> {
        self.inner.keep_request_headers(&names)
    }
}

/// Whether observe routes the service `slug`/`serviceId` under `PROWL_GATEWAY_SERVICES`
/// (`filter`, the raw value or `null`): unset or blank routes every catalog service.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "gatewayServiceSelected"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen(js_name = "gatewayServiceSelected")
)]
pub fn js_gateway_service_selected(
    filter: Option<String>,
    slug: String,
    service_id: String,
) -> bool {
    lowdown_core::gateway::allow::service_selected(filter.as_deref(), &slug, &service_id)
}
