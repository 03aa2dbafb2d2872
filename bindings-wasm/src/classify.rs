//! `Classifier`: the streaming MCP session classifier (SPEC §3.1) as a JavaScript class.

use crate::convert::{parse_enum, to_js};
use crate::errors::Result;
use lowdown_core::classify::Classifier;
use wasm_bindgen::prelude::*;

/// Classifies one MCP stdio session: feed it the bytes of both directions as they arrive,
/// with your clock; it returns every exchange that finished.
#[wasm_bindgen(js_name = "Classifier")]
pub struct JsClassifier {
    inner: Classifier,
}

#[wasm_bindgen(js_class = "Classifier")]
impl JsClassifier {
    /// A classifier for a new session.
    #[wasm_bindgen(constructor)]
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
    /// at `nowMs`; returns the exchanges that finished.
    #[wasm_bindgen(unchecked_return_type = "Exchange[]")]
    pub fn feed(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Direction")] direction: &str,
        bytes: &[u8],
        #[wasm_bindgen(js_name = "nowMs")] now_ms: f64,
    ) -> Result<JsValue> {
        to_js(&self.inner.feed(parse_enum(direction)?, bytes, now_ms))
    }

    /// `feed`, with the exchanges as one JSON text (`"[]"` when none): `JSON.parse` of it
    /// gives what `feed` gives. For hosts that usually find nothing finished.
    #[wasm_bindgen(js_name = "feedJson")]
    pub fn feed_json(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Direction")] direction: &str,
        bytes: &[u8],
        #[wasm_bindgen(js_name = "nowMs")] now_ms: f64,
    ) -> Result<String> {
        let exchanges = self.inner.feed(parse_enum(direction)?, bytes, now_ms);
        serde_json::to_string(&exchanges).map_err(crate::errors::invalid_argument)
    }

    /// Ends the session at `nowMs`: frames unterminated last lines and fails every pending
    /// request as a server error.
    #[wasm_bindgen(unchecked_return_type = "Exchange[]")]
    pub fn close(&mut self, #[wasm_bindgen(js_name = "nowMs")] now_ms: f64) -> Result<JsValue> {
        to_js(&self.inner.close(now_ms))
    }

    /// What the classifier has learnt: server name and version, protocol version, schema hashes.
    #[wasm_bindgen(unchecked_return_type = "SessionFacts")]
    pub fn facts(&self) -> Result<JsValue> {
        to_js(self.inner.facts())
    }

    /// Number of requests still waiting for a response (both directions).
    pub fn pending(&self) -> usize {
        self.inner.pending()
    }

    /// Bytes held for lines not yet terminated (both directions).
    pub fn buffered(&self) -> usize {
        self.inner.buffered()
    }
}
