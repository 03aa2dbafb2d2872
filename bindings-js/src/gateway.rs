//! What observe(fetch) routes through the sampling gateway (SPEC §10): the core's `Router`,
//! with the host doing the fetching and the requests. Times are Unix milliseconds.

use crate::errors::{opt_text, OptText};
use lowdown_core::gateway::router::Router;

#[cfg(not(target_arch = "wasm32"))]
use napi_derive::napi;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The catalog, salt and decisions of one observed fetch.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "Router"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "Router"))]
pub struct JsRouter {
    inner: Router,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "Router"))]
impl JsRouter {
    /// The router for `PROWL_AGENT_KEY`, `PROWL_GATEWAY_URL` and `PROWL_GATEWAY_SERVICES`
    /// (`null` when unset); without a key and a gateway it never fetches or routes.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(
        agent_key: Option<String>,
        gateway_url: Option<String>,
        services: Option<String>,
    ) -> JsRouter {
        JsRouter {
            inner: Router::new(
                agent_key.as_deref(),
                gateway_url.as_deref(),
                services.as_deref(),
            ),
        }
    }

    /// Whether to fetch the catalog and the salt now; `true` counts the fetch as started.
    #[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "wantsFetch"))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "wantsFetch"))]
    pub fn wants_fetch(&mut self, now_ms: f64) -> bool {
        self.inner.wants_fetch(now_ms as i64)
    }

    /// The fetch's answers (JSON text); whether they are usable.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn loaded(&mut self, now_ms: f64, catalog: String, salt: String) -> bool {
        self.inner.loaded(now_ms as i64, &catalog, &salt)
    }

    /// The fetch failed: it is tried again in a minute.
    #[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "fetchFailed"))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "fetchFailed"))]
    pub fn fetch_failed(&mut self, now_ms: f64) {
        self.inner.fetch_failed(now_ms as i64);
    }

    /// A new `PROWL_GATEWAY_SERVICES` value (`null`: unset).
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn select(&mut self, services: Option<String>) {
        self.inner.select(services.as_deref());
    }

    /// Where a `method` call to `url` with these request header names goes, as JSON text
    /// `{url, slug, service_id, headers: [[name, value]], keep: [names], vendor}`, or `null`
    /// (straight to the vendor).
    #[cfg_attr(not(target_arch = "wasm32"), napi(ts_return_type = "string | null"))]
    #[cfg_attr(
        target_arch = "wasm32",
        wasm_bindgen(unchecked_return_type = "string | null")
    )]
    pub fn route(
        &mut self,
        now_ms: f64,
        method: String,
        url: String,
        header_names: Vec<String>,
    ) -> OptText {
        let route = self
            .inner
            .route(now_ms as i64, &method, &url, &header_names);
        opt_text(route.as_ref().map(json))
    }

    /// A routed call answered `status` with this body `reason`: JSON text `{gateway, fetch_at}`.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn refused(&mut self, now_ms: f64, status: u32, reason: Option<String>) -> String {
        let status = u16::try_from(status).unwrap_or(0);
        json(&self.inner.refused(now_ms as i64, status, reason.as_deref()))
    }

    /// JSON text `{ready, agent_id, salt_id, services, counts}`.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn status(&self, now_ms: f64) -> String {
        json(&self.inner.status(now_ms as i64))
    }
}
