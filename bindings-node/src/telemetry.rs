//! Telemetry (SPEC §4): the host privacy filter, observations, status classes and weights.

use crate::convert::{from_js, from_js_or_default, http_status, parse_enum, to_js, validate_js};
use crate::errors::Result;
use lowdown_core::telemetry::{self, HostPolicy, TelemetryRollup, WeightTier};
use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;

/// The reporting policy, from the raw `PROWL_TELEMETRY_ALLOWLIST` and
/// `PROWL_TELEMETRY_ALLOW_PRIVATE` values (`null` when unset).
#[napi(js_name = "HostPolicy")]
pub struct JsHostPolicy {
    inner: HostPolicy,
}

#[napi]
impl JsHostPolicy {
    /// The policy for these two environment values (`null`/absent = unset): a comma-separated
    /// allowlist of hosts (with subdomains), and `1`/`true`/`yes`/`on` to lift the private block.
    #[napi(constructor)]
    pub fn new(allowlist: Option<String>, allow_private: Option<String>) -> Self {
        JsHostPolicy {
            inner: HostPolicy::from_env_values(allowlist.as_deref(), allow_private.as_deref()),
        }
    }

    /// The canonical allowlisted hosts; empty means no restriction.
    #[napi(getter)]
    pub fn allowlist(&self) -> Vec<String> {
        self.inner.allowlist.clone()
    }

    /// Whether local and private hosts may be reported (local testing only).
    #[napi(getter)]
    pub fn allow_private(&self) -> bool {
        self.inner.allow_private
    }

    /// The plain form: `{allowlist, allow_private}`.
    #[napi(
        js_name = "toJSON",
        ts_return_type = "{ allowlist: string[]; allow_private: boolean }"
    )]
    pub fn to_json<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        to_js(env, &self.inner)
    }
}

/// The canonical host a WHATWG URL parser would give for `url` (lowercase, no port), or `null`.
#[napi(js_name = "hostFromUrl")]
pub fn js_host_from_url(url: String) -> Option<String> {
    telemetry::host_from_url(&url)
}

/// Whether `host` may be reported under `policy`: `{verdict: "report", host}` or
/// `{verdict: "blocked", reason}`.
#[napi(js_name = "hostVerdict", ts_return_type = "HostVerdict")]
pub fn js_host_verdict<'e>(
    env: &'e Env,
    host: String,
    policy: &JsHostPolicy,
) -> Result<Unknown<'e>> {
    to_js(env, &telemetry::host_verdict(&host, &policy.inner))
}

/// The observation to send for one HTTP request, or `null` when nothing may be sent (host
/// blocked or unreadable, latency not finite). Only the host of `url` is kept.
#[napi(
    js_name = "prepareObservation",
    ts_args_type = "url: string, method: string, status: number | null, latencyMs: number, responseBytes: number | null, source: Source, policy: HostPolicy",
    ts_return_type = "Observation | null"
)]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the core's signature one to one"
)]
pub fn js_prepare_observation<'e>(
    env: &'e Env,
    url: String,
    method: String,
    status: Option<u32>,
    latency_ms: f64,
    response_bytes: Option<f64>,
    source: String,
    policy: &JsHostPolicy,
) -> Result<Unknown<'e>> {
    let source = parse_enum(&source)?;
    to_js(
        env,
        &telemetry::prepare_observation(
            &url,
            &method,
            http_status(status),
            latency_ms,
            response_bytes.map(|b| b as u64),
            source,
            &policy.inner,
        ),
    )
}

/// Validates one observation object, as the API receives it; throws `code` = the problem's
/// kind with `details.path` naming the field.
#[napi(
    js_name = "validateObservation",
    ts_args_type = "body: unknown",
    ts_return_type = "Observation"
)]
pub fn js_validate_observation<'e>(env: &'e Env, body: Unknown<'_>) -> Result<Unknown<'e>> {
    validate_js(env, body, telemetry::validate_observation)
}

/// Validates one observation or an array of 1..=1000 (all-or-nothing; errors name `observations[i].field`).
#[napi(
    js_name = "validateObservations",
    ts_args_type = "body: unknown",
    ts_return_type = "Observation[]"
)]
pub fn js_validate_observations<'e>(env: &'e Env, body: Unknown<'_>) -> Result<Unknown<'e>> {
    validate_js(env, body, telemetry::validate_observations)
}

/// How a status counts: `null`/5xx `failure`, 429 `throttled`, other 4xx `rejected`, 1xx–3xx `success`.
#[napi(js_name = "statusClass", ts_return_type = "StatusClass")]
pub fn js_status_class<'e>(env: &'e Env, status: Option<u32>) -> Result<Unknown<'e>> {
    to_js(env, &telemetry::status_class(http_status(status)))
}

/// The server-side weight of one observation: 0.1, 0.3, 0.5 or 1.0 (SPEC §4).
#[napi(js_name = "weight")]
pub fn js_weight(valid_agent_key: bool, known_host: bool) -> f64 {
    telemetry::weight(valid_agent_key, known_host)
}

/// Index of the latency histogram bucket `latencyMs` falls in.
#[napi(js_name = "latencyBucket")]
pub fn js_latency_bucket(latency_ms: f64) -> u32 {
    u32::try_from(telemetry::latency_bucket(latency_ms)).unwrap_or(u32::MAX)
}

/// The public telemetry block of one host from its stored rollup.
#[napi(
    js_name = "summarizeTelemetry",
    ts_args_type = "rollup: TelemetryRollup",
    ts_return_type = "TelemetrySummary"
)]
pub fn js_summarize_telemetry<'e>(env: &'e Env, rollup: Unknown<'_>) -> Result<Unknown<'e>> {
    to_js(env, &telemetry::summarize_telemetry(&from_js(env, rollup)?))
}

/// The weight tier of one observation: `anonymous_unknown_host`, `anonymous_known_host`,
/// `key_unknown_host` or `key_known_host`.
#[napi(js_name = "weightTier", ts_return_type = "WeightTier")]
pub fn js_weight_tier<'e>(
    env: &'e Env,
    valid_agent_key: bool,
    known_host: bool,
) -> Result<Unknown<'e>> {
    to_js(env, &WeightTier::of(valid_agent_key, known_host))
}

/// What the server stores per host: status classes per weight tier, exact status codes and
/// the latency histogram. Rollups merge, so stored ones can be combined.
#[napi(js_name = "TelemetryRollup")]
pub struct JsTelemetryRollup {
    inner: TelemetryRollup,
}

#[napi]
impl JsTelemetryRollup {
    /// An empty rollup, or one read back from its stored plain form (`toJSON()`).
    #[napi(constructor, ts_args_type = "stored?: object | null")]
    pub fn new(env: &Env, stored: Option<Unknown<'_>>) -> Result<Self> {
        Ok(JsTelemetryRollup {
            inner: from_js_or_default(env, stored)?,
        })
    }

    /// Adds one observation: its status (`null` for no response), latency and weight tier.
    #[napi(ts_args_type = "status: number | null, latencyMs: number, tier: WeightTier")]
    pub fn add(&mut self, status: Option<u32>, latency_ms: f64, tier: String) -> Result<()> {
        self.inner
            .add(http_status(status), latency_ms, parse_enum(&tier)?);
        Ok(())
    }

    /// Adds every count of `other` to this rollup.
    #[napi]
    pub fn merge(&mut self, other: &JsTelemetryRollup) {
        self.inner.merge(&other.inner);
    }

    /// The plain, storable form (what `new TelemetryRollup(stored)` reads back).
    #[napi(js_name = "toJSON", ts_return_type = "object")]
    pub fn to_json<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        to_js(env, &self.inner)
    }

    /// The public telemetry block of this rollup (`summarizeTelemetry`).
    #[napi(ts_return_type = "TelemetrySummary")]
    pub fn summary<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        to_js(env, &telemetry::summarize_telemetry(&self.inner))
    }
}
