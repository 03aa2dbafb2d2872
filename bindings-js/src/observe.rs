//! What `observe(fetch)` uses: the reporting policy and the one observation per request
//! (SPEC §4), built by the core so that only the host ever leaves the caller.

use crate::errors::{invalid_argument, opt_text, OptText, Result};
use lowdown_core::record::Source;
use lowdown_core::telemetry::{self, HostPolicy};

#[cfg(not(target_arch = "wasm32"))]
use napi_derive::napi;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

/// The reporting policy, from the raw `PROWL_TELEMETRY_ALLOWLIST` and
/// `PROWL_TELEMETRY_ALLOW_PRIVATE` values (`null` when unset).
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "HostPolicy"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "HostPolicy"))]
pub struct JsHostPolicy {
    inner: HostPolicy,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "HostPolicy"))]
impl JsHostPolicy {
    /// The policy for these two environment values (`null`/absent = unset): a comma-separated
    /// allowlist of hosts (with subdomains), and `1`/`true`/`yes`/`on` to lift the private block.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(allowlist: Option<String>, allow_private: Option<String>) -> JsHostPolicy {
        JsHostPolicy {
            inner: HostPolicy::from_env_values(allowlist.as_deref(), allow_private.as_deref()),
        }
    }
}

/// The observation to send for one HTTP request as JSON text, or `null` when nothing may be
/// sent (host blocked or unreadable, latency not finite). Only the host of `url` is kept.
/// `source` is `organic`, `seeded` or `synthetic`; anything else throws `invalid_argument`.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi(js_name = "prepareObservation", ts_return_type = "string | null")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen(
        js_name = "prepareObservation",
        unchecked_return_type = "string | null"
    )
)]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the core's signature one to one"
)]
pub fn js_prepare_observation(
    url: String,
    method: String,
    status: Option<u32>,
    latency_ms: f64,
    response_bytes: Option<f64>,
    source: String,
    policy: &JsHostPolicy,
) -> Result<OptText> {
    let source: Source =
        serde_json::from_value(serde_json::Value::String(source)).map_err(invalid_argument)?;
    let obs = telemetry::prepare_observation(
        &url,
        &method,
        // One past u16 becomes 0, outside every status range.
        status.map(|s| u16::try_from(s).unwrap_or(0)),
        latency_ms,
        response_bytes.map(|b| b as u64),
        source,
        &policy.inner,
    );
    let text = obs
        .map(|o| serde_json::to_string(&o).map_err(invalid_argument))
        .transpose()?;
    Ok(opt_text(text))
}

/// What this client may still send this hour (SPEC §4): 60 observations anonymously, 600
/// with an agent key; paused after the server refuses some.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "TelemetryBudget"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "TelemetryBudget"))]
pub struct JsTelemetryBudget {
    inner: telemetry::Budget,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "TelemetryBudget"))]
impl JsTelemetryBudget {
    /// The budget of an anonymous client, or of one sending with an agent key.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(with_agent_key: bool) -> JsTelemetryBudget {
        JsTelemetryBudget {
            inner: telemetry::Budget::new(with_agent_key),
        }
    }

    /// How many of `want` observations may be sent at `nowMs`; those count as sent.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn take(&mut self, now_ms: f64, want: u32) -> u32 {
        self.inner.take(now_ms, want)
    }

    /// The server refused some as over its limit at `nowMs`, asking to wait `retryAfterS`.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn refused(&mut self, now_ms: f64, retry_after_s: f64) {
        self.inner.refused(now_ms, retry_after_s);
    }

    /// What the answer (`status` null when none came) to `sent` observations posted at
    /// `nowMs` came to, as JSON text `{"delivered","throttled","failed"}`; pauses on a refusal.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn answered(
        &mut self,
        now_ms: f64,
        sent: u32,
        status: Option<u32>,
        retry_after: Option<String>,
        body: Option<String>,
    ) -> String {
        let status = status.and_then(|s| u16::try_from(s).ok());
        let a = self.inner.answered(
            now_ms,
            sent,
            status,
            retry_after.as_deref(),
            body.as_deref(),
        );
        serde_json::to_string(&a).unwrap_or_default()
    }

    /// Milliseconds from `nowMs` until at least one observation may be sent (0: now).
    #[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "waitMs"))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "waitMs"))]
    pub fn wait_ms(&self, now_ms: f64) -> f64 {
        self.inner.wait_ms(now_ms)
    }
}
