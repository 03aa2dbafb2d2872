//! Telemetry (SPEC §4): the host privacy filter, observations, status classes and weights.

use crate::convert::{from_js, parse_enum, to_js};
use crate::errors::{to_js_error, Result};
use lowdown_core::telemetry::{self, HostPolicy, TelemetryRollup, WeightTier};
use wasm_bindgen::prelude::*;

/// The reporting policy, from the raw `PROWL_TELEMETRY_ALLOWLIST` and
/// `PROWL_TELEMETRY_ALLOW_PRIVATE` values (`null` when unset).
#[wasm_bindgen(js_name = "HostPolicy")]
pub struct JsHostPolicy {
    inner: HostPolicy,
}

#[wasm_bindgen(js_class = "HostPolicy")]
impl JsHostPolicy {
    /// The policy for these two environment values (`null`/absent = unset): a comma-separated
    /// allowlist of hosts (with subdomains), and `1`/`true`/`yes`/`on` to lift the private block.
    #[wasm_bindgen(constructor)]
    pub fn new(
        allowlist: Option<String>,
        #[wasm_bindgen(js_name = "allowPrivate")] allow_private: Option<String>,
    ) -> JsHostPolicy {
        JsHostPolicy {
            inner: HostPolicy::from_env_values(allowlist.as_deref(), allow_private.as_deref()),
        }
    }

    /// The canonical allowlisted hosts; empty means no restriction.
    #[wasm_bindgen(getter)]
    pub fn allowlist(&self) -> Vec<String> {
        self.inner.allowlist.clone()
    }

    /// Whether local and private hosts may be reported (local testing only).
    #[wasm_bindgen(getter, js_name = "allowPrivate")]
    pub fn allow_private(&self) -> bool {
        self.inner.allow_private
    }

    /// The plain form: `{allowlist, allow_private}`.
    #[wasm_bindgen(
        js_name = "toJSON",
        unchecked_return_type = "{ allowlist: string[]; allow_private: boolean }"
    )]
    pub fn to_json(&self) -> Result<JsValue> {
        to_js(&self.inner)
    }
}

/// The canonical host a WHATWG URL parser would give for `url` (lowercase, no port), or `undefined`.
#[wasm_bindgen(js_name = "hostFromUrl")]
pub fn js_host_from_url(url: &str) -> Option<String> {
    telemetry::host_from_url(url)
}

/// Whether `host` may be reported under `policy`: `{verdict: "report", host}` or
/// `{verdict: "blocked", reason}`.
#[wasm_bindgen(js_name = "hostVerdict", unchecked_return_type = "HostVerdict")]
pub fn js_host_verdict(host: &str, policy: &JsHostPolicy) -> Result<JsValue> {
    to_js(&telemetry::host_verdict(host, &policy.inner))
}

/// The observation to send for one HTTP request, or `null` when nothing may be sent (host
/// blocked or unreadable, latency not finite). Only the host of `url` is kept.
#[wasm_bindgen(
    js_name = "prepareObservation",
    unchecked_return_type = "Observation | null"
)]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the core's signature one to one"
)]
pub fn js_prepare_observation(
    url: &str,
    method: &str,
    status: Option<u16>,
    #[wasm_bindgen(js_name = "latencyMs")] latency_ms: f64,
    #[wasm_bindgen(js_name = "responseBytes")] response_bytes: Option<f64>,
    #[wasm_bindgen(unchecked_param_type = "Source")] source: &str,
    policy: &JsHostPolicy,
) -> Result<JsValue> {
    let obs = telemetry::prepare_observation(
        url,
        method,
        status,
        latency_ms,
        response_bytes.map(|b| b as u64),
        parse_enum(source)?,
        &policy.inner,
    );
    to_js(&obs)
}

/// Validates one observation object, as the API receives it; throws `code` = the problem's
/// kind with `details.path` naming the field.
#[wasm_bindgen(js_name = "validateObservation", unchecked_return_type = "Observation")]
pub fn js_validate_observation(body: JsValue) -> Result<JsValue> {
    to_js(&telemetry::validate_observation(&from_js(body)?).map_err(to_js_error)?)
}

/// Validates one observation or an array of 1..=1000 (all-or-nothing; errors name `observations[i].field`).
#[wasm_bindgen(
    js_name = "validateObservations",
    unchecked_return_type = "Observation[]"
)]
pub fn js_validate_observations(body: JsValue) -> Result<JsValue> {
    to_js(&telemetry::validate_observations(&from_js(body)?).map_err(to_js_error)?)
}

/// How a status counts: `null`/5xx `failure`, 429 `throttled`, other 4xx `rejected`, 1xx–3xx `success`.
#[wasm_bindgen(js_name = "statusClass", unchecked_return_type = "StatusClass")]
pub fn js_status_class(status: Option<u16>) -> Result<JsValue> {
    to_js(&telemetry::status_class(status))
}

/// The server-side weight of one observation: 0.1, 0.3, 0.5 or 1.0 (SPEC §4).
#[wasm_bindgen(js_name = "weight")]
pub fn js_weight(
    #[wasm_bindgen(js_name = "validAgentKey")] valid_agent_key: bool,
    #[wasm_bindgen(js_name = "knownHost")] known_host: bool,
) -> f64 {
    telemetry::weight(valid_agent_key, known_host)
}

/// The weight tier of one observation (`anonymous_unknown_host` ... `key_known_host`).
#[wasm_bindgen(js_name = "weightTier", unchecked_return_type = "WeightTier")]
pub fn js_weight_tier(
    #[wasm_bindgen(js_name = "validAgentKey")] valid_agent_key: bool,
    #[wasm_bindgen(js_name = "knownHost")] known_host: bool,
) -> Result<JsValue> {
    to_js(&WeightTier::of(valid_agent_key, known_host))
}

/// Index of the latency histogram bucket `latencyMs` falls in.
#[wasm_bindgen(js_name = "latencyBucket")]
pub fn js_latency_bucket(#[wasm_bindgen(js_name = "latencyMs")] latency_ms: f64) -> usize {
    telemetry::latency_bucket(latency_ms)
}

/// The public telemetry block of one host from its stored rollup.
#[wasm_bindgen(
    js_name = "summarizeTelemetry",
    unchecked_return_type = "TelemetrySummary"
)]
pub fn js_summarize_telemetry(
    #[wasm_bindgen(unchecked_param_type = "object")] rollup: JsValue,
) -> Result<JsValue> {
    to_js(&telemetry::summarize_telemetry(&from_js(rollup)?))
}

/// What the server stores per host: status classes per weight tier, exact status codes and
/// the latency histogram. Rollups merge, so stored ones can be combined.
#[wasm_bindgen(js_name = "TelemetryRollup")]
pub struct JsTelemetryRollup {
    inner: TelemetryRollup,
}

#[wasm_bindgen(js_class = "TelemetryRollup")]
impl JsTelemetryRollup {
    /// An empty rollup, or one read back from its stored plain form (`toJSON()`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "object | null")] stored: JsValue,
    ) -> Result<JsTelemetryRollup> {
        Ok(JsTelemetryRollup {
            inner: from_js::<Option<TelemetryRollup>>(stored)?.unwrap_or_default(),
        })
    }

    /// Adds one observation: its status (`null` for no response), latency and weight tier.
    pub fn add(
        &mut self,
        status: Option<u16>,
        #[wasm_bindgen(js_name = "latencyMs")] latency_ms: f64,
        #[wasm_bindgen(unchecked_param_type = "WeightTier")] tier: &str,
    ) -> Result<()> {
        self.inner.add(status, latency_ms, parse_enum(tier)?);
        Ok(())
    }

    /// Adds every count of `other` to this rollup.
    pub fn merge(&mut self, other: &JsTelemetryRollup) {
        self.inner.merge(&other.inner);
    }

    /// The plain, storable form (what `new TelemetryRollup(stored)` reads back).
    #[wasm_bindgen(js_name = "toJSON", unchecked_return_type = "object")]
    pub fn to_json(&self) -> Result<JsValue> {
        to_js(&self.inner)
    }

    /// The public telemetry block of this rollup (`summarizeTelemetry`).
    #[wasm_bindgen(unchecked_return_type = "TelemetrySummary")]
    pub fn summary(&self) -> Result<JsValue> {
        to_js(&telemetry::summarize_telemetry(&self.inner))
    }
}
