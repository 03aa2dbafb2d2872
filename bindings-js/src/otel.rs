//! What `lowdown-proxy` uses to export OpenTelemetry (the core's `otel_export`): `otelConfig`
//! (is it on, where each signal goes) and [`JsOtelExporter`] (the queue, the histogram, the
//! bodies, what an answer means). The spans come from `Recorder.takeSpans`.

use crate::errors::{invalid_argument, Result};
use crate::proxy::{opt_bytes, Bytes, OptBytes};
use lowdown_core::otel_export::{self, Exporter, Signal};
use std::collections::HashMap;

#[cfg(not(target_arch = "wasm32"))]
use napi_derive::napi;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

fn env_lookup(env_json: &str) -> Result<HashMap<String, String>> {
    serde_json::from_str(env_json).map_err(invalid_argument)
}

fn signal(name: &str) -> Result<Signal> {
    match name {
        "traces" => Ok(Signal::Traces),
        "metrics" => Ok(Signal::Metrics),
        _ => Err(invalid_argument("signal must be traces or metrics")),
    }
}

/// Whether OpenTelemetry export is on for the environment `envJson` (an object of strings),
/// as JSON text: `{"export": "on", traces, metrics, service_name, resource}` (each signal
/// `{url, protocol, headers: [[name, value]], timeout_ms}` or `null`) or `{"export": "off",
/// reason}`.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "otelConfig"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "otelConfig"))]
pub fn js_otel_config(env_json: String) -> Result<String> {
    let env = env_lookup(&env_json)?;
    let decision = otel_export::decide(&|k| env.get(k).cloned());
    serde_json::to_string(&decision).map_err(invalid_argument)
}

/// One session's OpenTelemetry export: add spans, ask for bodies to post, say what came back.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "OtelExporter"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "OtelExporter"))]
pub struct JsOtelExporter {
    inner: Exporter,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "OtelExporter"))]
impl JsOtelExporter {
    /// An exporter for the environment `envJson` (as `otelConfig` reads it), as
    /// `lowdown-proxy/<version>`, with `seed` (16 random bytes) for the trace ids, for a
    /// session that starts at `nowMs`. Throws `invalid_argument` when export is off.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(
        env_json: String,
        version: String,
        seed: Bytes,
        now_ms: f64,
    ) -> Result<JsOtelExporter> {
        let env = env_lookup(&env_json)?;
        let config = otel_export::from_env(&|k| env.get(k).cloned()).map_err(invalid_argument)?;
        Ok(JsOtelExporter {
            inner: Exporter::new(&config, &version, &seed, now_ms),
        })
    }

    /// Takes spans given as JSON lines (`Recorder.takeSpans`) at `nowMs`.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn add(&mut self, lines: String, now_ms: f64) {
        self.inner.add_lines(&lines, now_ms);
    }

    /// The body to `POST` for `signal` (`"traces"` or `"metrics"`) now, or `null` when none is
    /// due; `closing`: the session ended, send everything. Report with `done`.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        napi(
            ts_args_type = "signal: 'traces' | 'metrics', nowMs: number, closing: boolean",
            ts_return_type = "Buffer | null"
        )
    )]
    #[cfg_attr(
        target_arch = "wasm32",
        wasm_bindgen(unchecked_return_type = "Uint8Array | null")
    )]
    pub fn batch(&mut self, signal_name: String, now_ms: f64, closing: bool) -> Result<OptBytes> {
        Ok(opt_bytes(self.inner.batch(
            signal(&signal_name)?,
            now_ms,
            closing,
        )))
    }

    /// What became of `signal`'s request: its HTTP `status`, or `null` when no answer came.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        napi(ts_args_type = "signal: 'traces' | 'metrics', status: number | null, nowMs: number")
    )]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn done(&mut self, signal_name: String, status: Option<u16>, now_ms: f64) -> Result<()> {
        self.inner.done(signal(&signal_name)?, status, now_ms);
        Ok(())
    }

    /// The session ended and every last `batch` was asked for: what is still queued (a
    /// signal paused after a failure) is dropped and counted.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn close(&mut self, now_ms: f64) {
        self.inner.close(now_ms);
    }

    /// Milliseconds until `batch` should be asked again (0: now), or -1 when nothing waits.
    #[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "nextDueMs"))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "nextDueMs"))]
    pub fn next_due_ms(&self, now_ms: f64) -> f64 {
        self.inner.next_due_ms(now_ms).unwrap_or(-1.0)
    }

    /// What export came to, as JSON text `{spans_sent, spans_dropped, spans_queued,
    /// metric_exports, metric_failures}`.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn stats(&self) -> String {
        serde_json::to_string(&self.inner.stats()).unwrap_or_default()
    }
}
