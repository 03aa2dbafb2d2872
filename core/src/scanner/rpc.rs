//! JSON-RPC over streamable HTTP for the probe: the request bodies it sends and reading
//! the answer to one request, whether the server answers with `application/json` or a
//! `text/event-stream`.
//!
//! Answers are parsed with the core's JSON parser, which reads text exactly as
//! JavaScript's `JSON.parse` does, so the hashes taken from them match the Lowdown
//! Scanner's (SPEC §3.3). An SSE answer is complete at the event that carries the response
//! with the request's id (notifications and server requests before it are skipped); the
//! host can stop reading there. Any other content type is tried as JSON: a 2xx HTML page
//! then fails to parse and the probe records `invalid_response`.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use super::sse::SseDecoder;
use super::{CLIENT_NAME, MODERN_PROTOCOL_VERSION, PROTOCOL_VERSION};
use crate::schema_hash::parser::{parse, write_value, Value};

fn body(v: Json) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// `initialize` asking for [`PROTOCOL_VERSION`] as `lowdown-scanner/<client_version>`.
pub fn initialize_request(id: u64, client_version: &str) -> Vec<u8> {
    body(
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": client_version},
        }}),
    )
}

/// The `notifications/initialized` notification.
pub fn initialized_notification() -> Vec<u8> {
    body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
}

fn modern_meta(client_version: Option<&str>) -> Json {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let Some(v) = client_version {
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": CLIENT_NAME, "version": v});
    }
    meta
}

/// `server/discover` (2026-07-28), with the per-request `_meta` that revision requires.
pub fn discover_request(id: u64, client_version: &str) -> Vec<u8> {
    body(
        json!({"jsonrpc": "2.0", "id": id, "method": "server/discover",
        "params": {"_meta": modern_meta(Some(client_version))}}),
    )
}

/// `tools/list`, for the page after `cursor` (the first page without one); `modern` adds
/// the 2026-07-28 `_meta`.
pub fn tools_list_request(id: u64, cursor: Option<&str>, modern: bool) -> Vec<u8> {
    let mut params = json!({});
    if let Some(c) = cursor {
        params["cursor"] = json!(c);
    }
    if modern {
        params["_meta"] = modern_meta(None);
    }
    body(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}))
}

/// Why no answer to the request was found in a 2xx body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AnswerError {
    /// The body is not JSON-RPC (HTML, plain text, broken JSON).
    #[error("the answer is not JSON-RPC")]
    NotJsonRpc,
    /// JSON-RPC, but nothing answers the request's id.
    #[error("no answer with the request's id")]
    NoAnswer,
    /// The body passed its size cap before the answer was complete.
    #[error("the answer is larger than the cap")]
    TooLarge,
}

/// The JSON-RPC response that answers a request (a result or an error).
#[derive(Debug, Clone)]
pub struct RpcMessage {
    value: Value,
}

impl RpcMessage {
    /// The `result` member, when this is a successful response.
    pub(crate) fn result(&self) -> Option<&Value> {
        if self.value.get("error").is_some() {
            return None;
        }
        self.value.get("result")
    }

    /// Whether this is an error response.
    pub fn is_error(&self) -> bool {
        self.result().is_none()
    }

    /// The whole response as canonical JSON text (sorted keys, no whitespace), for a host
    /// that hands it on (the provider's stdio bridge).
    pub fn to_json_text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_value(&self.value, &mut out);
        out
    }
}

/// Whether `v` is a response to request `id`.
fn answers(v: &Value, id: u64) -> bool {
    matches!(v.get("id"), Some(Value::Number(n)) if *n == id as f64)
        && (v.get("result").is_some() || v.get("error").is_some())
}

/// The response to `id` in one JSON text (an object or a batch array).
fn find(text: &[u8], id: u64) -> Result<RpcMessage, AnswerError> {
    let text = String::from_utf8_lossy(text);
    let v = parse(text.as_bytes()).map_err(|_| AnswerError::NotJsonRpc)?;
    let hit = match v {
        Value::Array(items) => items.into_iter().find(|m| answers(m, id)),
        v @ Value::Object(_) if answers(&v, id) => Some(v),
        Value::Object(_) => None,
        _ => return Err(AnswerError::NotJsonRpc),
    };
    hit.map(|value| RpcMessage { value })
        .ok_or(AnswerError::NoAnswer)
}

/// Reads the answer to one request from body chunks, under a byte cap.
#[derive(Debug)]
pub struct AnswerReader {
    id: u64,
    cap: usize,
    read: usize,
    sse: Option<SseDecoder>,
    buf: Vec<u8>,
    found: Option<RpcMessage>,
    saw_json: bool,
    over_cap: bool,
}

impl AnswerReader {
    /// A reader for the answer to request `id`, given the response's `Content-Type`.
    pub fn new(content_type: Option<&str>, id: u64, cap: usize) -> Self {
        let is_sse = content_type.is_some_and(|c| {
            c.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"))
        });
        AnswerReader {
            id,
            cap,
            read: 0,
            sse: is_sse.then(SseDecoder::new),
            buf: Vec::new(),
            found: None,
            saw_json: false,
            over_cap: false,
        }
    }

    /// Feeds the next body chunk; `true` once the answer is complete (or the cap is
    /// passed), when the host should stop reading.
    pub fn feed(&mut self, chunk: &[u8]) -> bool {
        if self.found.is_some() || self.over_cap {
            return true;
        }
        self.read += chunk.len();
        if self.read > self.cap {
            self.over_cap = true;
            return true;
        }
        match &mut self.sse {
            None => {
                self.buf.extend_from_slice(chunk);
                false
            }
            Some(decoder) => {
                let (id, found, saw_json) = (self.id, &mut self.found, &mut self.saw_json);
                decoder.feed(chunk, &mut |data| on_event(data, id, found, saw_json))
            }
        }
    }

    /// The answer, once the body ended (or [`AnswerReader::feed`] said it is complete).
    pub fn finish(mut self) -> Result<RpcMessage, AnswerError> {
        if let Some(m) = self.found.take() {
            return Ok(m);
        }
        if self.over_cap {
            return Err(AnswerError::TooLarge);
        }
        match self.sse.take() {
            None => find(&self.buf, self.id),
            Some(mut decoder) => {
                let (id, found, saw_json) = (self.id, &mut self.found, &mut self.saw_json);
                decoder.finish(&mut |data| on_event(data, id, found, saw_json));
                match (self.found, self.saw_json) {
                    (Some(m), _) => Ok(m),
                    (None, true) => Err(AnswerError::NoAnswer),
                    (None, false) => Err(AnswerError::NotJsonRpc),
                }
            }
        }
    }
}

fn on_event(data: &[u8], id: u64, found: &mut Option<RpcMessage>, saw_json: &mut bool) -> bool {
    match find(data, id) {
        Ok(m) => {
            *found = Some(m);
            true
        }
        Err(AnswerError::NoAnswer) => {
            *saw_json = true;
            false
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(
        ct: Option<&str>,
        chunks: &[&[u8]],
        id: u64,
        cap: usize,
    ) -> Result<RpcMessage, AnswerError> {
        let mut r = AnswerReader::new(ct, id, cap);
        for c in chunks {
            if r.feed(c) {
                break;
            }
        }
        r.finish()
    }

    #[test]
    fn the_answer_is_handed_on_whole_as_json_text() {
        let m = read(
            Some("text/event-stream"),
            &[
                b"data: {\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n\n",
                b"data: {\"id\":7,\"jsonrpc\":\"2.0\",\"result\":{\"b\":1,\"a\":\"\\ud800\"}}\n\n",
            ],
            7,
            1 << 10,
        )
        .unwrap();
        assert_eq!(
            m.to_json_text(),
            br#"{"id":7,"jsonrpc":"2.0","result":{"a":"\ud800","b":1}}"#.to_vec()
        );
    }

    #[test]
    fn json_answers_match_the_id_in_objects_and_batches() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#;
        assert!(
            !read(Some("application/json"), &[&ok[..9], &ok[9..]], 1, 1 << 20)
                .unwrap()
                .is_error()
        );
        let err = br#"[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}]"#;
        assert!(read(None, &[err], 2, 1 << 20).unwrap().is_error());
        assert_eq!(
            read(None, &[ok], 9, 1 << 20).unwrap_err(),
            AnswerError::NoAnswer
        );
        assert_eq!(
            read(Some("text/html"), &[b"<html>hello</html>"], 1, 1 << 20).unwrap_err(),
            AnswerError::NotJsonRpc
        );
        assert_eq!(read(None, &[ok], 1, 10).unwrap_err(), AnswerError::TooLarge);
    }

    #[test]
    fn sse_answers_stop_at_the_matching_event() {
        let stream: &[&[u8]] = &[
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n",
            b"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"res",
            b"ult\":{\"tools\":[]}}\n\n",
        ];
        let mut r = AnswerReader::new(Some("text/event-stream; charset=utf-8"), 3, 1 << 20);
        assert!(!r.feed(stream[0]));
        assert!(!r.feed(stream[1]));
        assert!(r.feed(stream[2]), "complete at the matching event");
        assert!(!r.finish().unwrap().is_error());
        assert_eq!(
            read(Some("text/event-stream"), &stream[..1], 3, 1 << 20).unwrap_err(),
            AnswerError::NoAnswer
        );
        assert_eq!(
            read(Some("text/event-stream"), &[b"<html>"], 3, 1 << 20).unwrap_err(),
            AnswerError::NotJsonRpc
        );
    }

    #[test]
    fn requests_carry_the_protocol_fields() {
        let v: Json = serde_json::from_slice(&initialize_request(1, "0.1.0")).unwrap();
        assert_eq!(v["params"]["protocolVersion"], PROTOCOL_VERSION);
        assert_eq!(v["params"]["clientInfo"]["name"], CLIENT_NAME);
        let v: Json = serde_json::from_slice(&tools_list_request(4, Some("c2"), true)).unwrap();
        assert_eq!(v["params"]["cursor"], "c2");
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN_PROTOCOL_VERSION
        );
        let v: Json = serde_json::from_slice(&discover_request(0, "0.1.0")).unwrap();
        assert_eq!(v["method"], "server/discover");
    }
}
