//! `Classifier`: the streaming MCP session classifier (SPEC §3.1) as a JavaScript class.

use crate::convert::{parse_enum, to_js, to_json};
use crate::errors::Result;
use lowdown_core::classify::Classifier;
use napi::bindgen_prelude::{Env, Uint8Array, Unknown};
use napi_derive::napi;

/// Classifies one MCP stdio session: feed it the bytes of both directions as they arrive,
/// with your clock; it returns every exchange that finished.
#[napi(js_name = "Classifier")]
pub struct JsClassifier {
    inner: Classifier,
}

#[napi]
impl JsClassifier {
    /// A classifier for a new session.
    #[napi(constructor)]
    #[allow(
        clippy::new_without_default,
        reason = "a JavaScript constructor, not a Rust API"
    )]
    pub fn new() -> Self {
        JsClassifier {
            inner: Classifier::new(),
        }
    }

    /// Feeds bytes that travelled `direction` (`"client_to_server"` or `"server_to_client"`)
    /// at `nowMs`; returns the exchanges that finished. Throws `invalid_argument` on a bad direction.
    #[napi(
        ts_args_type = "direction: Direction, bytes: Uint8Array, nowMs: number",
        ts_return_type = "Exchange[]"
    )]
    pub fn feed<'e>(
        &mut self,
        env: &'e Env,
        direction: String,
        bytes: Uint8Array,
        now_ms: f64,
    ) -> Result<Unknown<'e>> {
        to_js(
            env,
            &self.inner.feed(parse_enum(&direction)?, &bytes, now_ms),
        )
    }

    /// `feed`, with the finished exchanges as JSON text (`"[]"` when none): one string
    /// crosses instead of an object per exchange, and `JSON.parse` of it gives what `feed`
    /// gives. For hosts that usually find nothing finished, or pass exchanges on as text.
    #[napi(ts_args_type = "direction: Direction, bytes: Uint8Array, nowMs: number")]
    pub fn feed_json(
        &mut self,
        direction: String,
        bytes: Uint8Array,
        now_ms: f64,
    ) -> Result<String> {
        to_json(&self.inner.feed(parse_enum(&direction)?, &bytes, now_ms))
    }

    /// Ends the session at `nowMs` (child exited, pipe closed): frames unterminated last
    /// lines and fails every pending request as a server error.
    #[napi(ts_return_type = "Exchange[]")]
    pub fn close<'e>(&mut self, env: &'e Env, now_ms: f64) -> Result<Unknown<'e>> {
        to_js(env, &self.inner.close(now_ms))
    }

    /// What the classifier has learnt: server name and version, protocol version, schema hashes.
    #[napi(ts_return_type = "SessionFacts")]
    pub fn facts<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        to_js(env, self.inner.facts())
    }

    /// Number of requests still waiting for a response (both directions).
    #[napi]
    pub fn pending(&self) -> u32 {
        u32::try_from(self.inner.pending()).unwrap_or(u32::MAX)
    }

    /// Bytes held for lines not yet terminated (both directions).
    #[napi]
    pub fn buffered(&self) -> f64 {
        self.inner.buffered() as f64
    }
}
