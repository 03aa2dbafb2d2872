//! The session state machine: pending requests, their responses, and the facts learnt.

use std::collections::BTreeMap;

use super::framing::{Framer, Lines};
use super::message::{parse_line, Id, Info, Message, ResultInfo};
use super::scan::Str;
use super::text;
use super::{Direction, Exchange, SessionFacts};
use crate::record::build::sanitize_server_version;
use crate::record::{ErrorLayer, FailureType, Outcome, RequestKind};

/// A request id as a JavaScript peer sees it after `JSON.parse`: a number by its double
/// value (so `1.0` and `1` match, as a Node server echoes `1.0` back as `1`), a string by
/// its UTF-16 units.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum IdKey {
    Num(u64),
    Str(Vec<u16>),
}

/// A request waiting for its response.
#[derive(Debug, Clone)]
struct Pending {
    raw_id: String,
    method: String,
    tool_name: Option<String>,
    started_ms: f64,
    seq: u64,
    first_page: bool,
}

/// The streaming MCP session classifier (see the [module docs](super) for every rule).
///
/// ```
/// use lowdown_core::classify::{Classifier, Direction};
/// use lowdown_core::record::Outcome;
///
/// let mut c = Classifier::new();
/// c.feed(Direction::ClientToServer, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#, 0.0);
/// assert!(c.feed(Direction::ClientToServer, b"\n", 1.0).is_empty());
/// let done = c.feed(Direction::ServerToClient, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n", 5.0);
/// assert_eq!(done[0].outcome, Outcome::Success);
/// assert_eq!(done[0].latency_ms, 4.0);
/// ```
#[derive(Debug, Default)]
pub struct Classifier {
    framers: [Framer; 2],
    state: State,
}

#[derive(Debug, Default)]
struct State {
    pending: BTreeMap<(Direction, IdKey), Pending>,
    seq: u64,
    facts: SessionFacts,
    scratch: Vec<Message>,
}

fn slot(d: Direction) -> usize {
    match d {
        Direction::ClientToServer => 0,
        Direction::ServerToClient => 1,
    }
}

impl Classifier {
    /// A classifier for a new session.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes as they arrived from `direction` (split anywhere); `now_ms` is the
    /// caller's clock in milliseconds. Returns the exchanges these bytes finished.
    pub fn feed(&mut self, direction: Direction, bytes: &[u8], now_ms: f64) -> Vec<Exchange> {
        let mut out = Vec::new();
        let mut sink = Sink {
            state: &mut self.state,
            direction,
            now_ms,
            out: &mut out,
        };
        self.framers[slot(direction)].feed(bytes, &mut sink);
        out
    }

    /// Ends the session (child exited, pipe broke): frames unterminated last lines, then
    /// reports every still-pending request (oldest first) as `failure / server_error /
    /// server`, timed at `now_ms`.
    pub fn close(&mut self, now_ms: f64) -> Vec<Exchange> {
        let mut out = Vec::new();
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            let mut sink = Sink {
                state: &mut self.state,
                direction,
                now_ms,
                out: &mut out,
            };
            self.framers[slot(direction)].finish(&mut sink);
        }
        let mut left: Vec<(Direction, Pending)> = std::mem::take(&mut self.state.pending)
            .into_iter()
            .map(|((d, _), p)| (d, p))
            .collect();
        left.sort_by_key(|(_, p)| p.seq);
        out.extend(left.into_iter().map(|(direction, p)| Exchange {
            failure_type: Some(FailureType::ServerError),
            error_layer: Some(ErrorLayer::Server),
            ..finish(direction, p, Outcome::Failure, now_ms)
        }));
        out
    }

    /// What has been learnt about the session so far.
    pub fn facts(&self) -> &SessionFacts {
        &self.state.facts
    }

    /// Requests (both directions) still waiting for a response.
    pub fn pending(&self) -> usize {
        self.state.pending.len()
    }

    /// Bytes of unterminated lines held for the next feed (both directions).
    pub fn buffered(&self) -> usize {
        self.framers.iter().map(Framer::buffered).sum()
    }
}

/// The exchange for a finished request, before failure details are filled in.
fn finish(direction: Direction, p: Pending, outcome: Outcome, now_ms: f64) -> Exchange {
    Exchange {
        direction,
        request_kind: if p.method == "tools/call" {
            RequestKind::Tool
        } else {
            RequestKind::Protocol
        },
        id: p.raw_id,
        method: p.method,
        tool_name: p.tool_name,
        outcome,
        failure_type: None,
        error_layer: None,
        error_code: None,
        started_ms: p.started_ms,
        latency_ms: (now_ms - p.started_ms).max(0.0),
        has_content: false,
    }
}

/// Layer and failure type of a JSON-RPC error code (see the module docs).
fn error_class(code: Option<i64>) -> (ErrorLayer, FailureType) {
    match code {
        Some(-32602) => (ErrorLayer::Request, FailureType::InvalidArguments),
        Some(-32700 | -32600 | -32601) => (ErrorLayer::Request, FailureType::Unknown),
        Some(-32001) => (ErrorLayer::Server, FailureType::Timeout),
        _ => (ErrorLayer::Server, FailureType::ServerError),
    }
}

/// The code of the TypeScript SDK's `isError` quirk, if the first text item carries one.
fn sdk_error_code(line: &[u8], first_text: Option<Str>) -> Option<i64> {
    let raw = first_text?.raw(line);
    [(-32602, "MCP error -32602"), (-32601, "MCP error -32601")]
        .into_iter()
        .find_map(|(code, prefix)| {
            // `MCP error -326021` is not the quirk: the code must end where the prefix does.
            let ends =
                !text::unit_at(raw, prefix.len()).is_some_and(|u| (0x30..=0x39).contains(&u));
            (text::starts_with(raw, prefix) && ends).then_some(code)
        })
}

fn key(line: &[u8], id: Id) -> IdKey {
    match id {
        Id::Num(a, b) => {
            // The scanner checked the grammar, so this parses; `+ 0.0` folds -0 into 0.
            let v: f64 = std::str::from_utf8(&line[a..b])
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(f64::NAN);
            IdKey::Num((v + 0.0).to_bits())
        }
        Id::Str(s) => IdKey::Str(text::units(s.raw(line)).collect()),
    }
}

fn raw_id(line: &[u8], id: Id) -> String {
    let (a, b) = match id {
        Id::Num(a, b) => (a, b),
        Id::Str(s) => (s.start - 1, s.end + 1),
    };
    String::from_utf8_lossy(&line[a..b]).into_owned()
}

fn decoded(line: &[u8], s: Option<Str>) -> Option<String> {
    s.map(|s| text::string(s.raw(line), s.escaped))
}

/// Server names: control characters removed, 1 to 128 characters.
fn sanitize_name(raw: &str) -> Option<String> {
    let name: String = raw.chars().filter(|c| !c.is_control()).collect();
    (!name.is_empty() && name.chars().count() <= 128).then_some(name)
}

/// One direction's lines, delivered to the state.
struct Sink<'a> {
    state: &'a mut State,
    direction: Direction,
    now_ms: f64,
    out: &'a mut Vec<Exchange>,
}

impl Lines for Sink<'_> {
    fn prefix(&mut self, rest: &[u8]) -> Option<usize> {
        self.state
            .take_line(self.direction, rest, false, self.now_ms, self.out)
    }

    fn line(&mut self, line: &[u8]) {
        self.state
            .take_line(self.direction, line, true, self.now_ms, self.out);
    }
}

impl State {
    /// Parses the line at the start of `bytes` and acts on its messages when it is JSON.
    /// A framed line (`framed`) is all of `bytes`; otherwise the line must end with a `\n`
    /// inside `bytes`, and the bytes used through it are returned (`None`: nothing done).
    fn take_line(
        &mut self,
        direction: Direction,
        bytes: &[u8],
        framed: bool,
        now_ms: f64,
        out: &mut Vec<Exchange>,
    ) -> Option<usize> {
        let mut messages = std::mem::take(&mut self.scratch);
        messages.clear();
        // A line the peer's JSON.parse would reject is ignored whole, so nothing is done
        // before the whole line has parsed.
        let used = match parse_line(bytes, &mut messages) {
            Ok(None) if framed => Some(bytes.len()),
            Ok(Some(nl)) if !framed => Some(nl + 1),
            _ => None,
        };
        if used.is_some() {
            for m in &messages {
                self.message(direction, bytes, m, now_ms, out);
            }
        }
        messages.clear();
        self.scratch = messages;
        used
    }

    fn message(
        &mut self,
        direction: Direction,
        line: &[u8],
        m: &Message,
        now_ms: f64,
        out: &mut Vec<Exchange>,
    ) {
        if let Some(method) = m.method {
            let method = text::string(method.raw(line), method.escaped);
            match m.id {
                Some(id) => {
                    self.seq += 1;
                    let tool_name = if method == "tools/call" {
                        decoded(line, m.name)
                    } else {
                        None
                    };
                    let pending = Pending {
                        raw_id: raw_id(line, id),
                        method,
                        tool_name,
                        started_ms: now_ms,
                        seq: self.seq,
                        first_page: !m.cursor,
                    };
                    self.pending.insert((direction, key(line, id)), pending);
                }
                None if method == "notifications/cancelled" => {
                    let Some(id) = m.request_id else { return };
                    if let Some(p) = self.pending.remove(&(direction, key(line, id))) {
                        out.push(finish(direction, p, Outcome::Cancelled, now_ms));
                    }
                }
                None => {}
            }
            return;
        }
        if m.result.is_none() && m.error.is_none() {
            return;
        }
        let Some(id) = m.id else { return };
        let request_direction = direction.opposite();
        let k = (request_direction, key(line, id));
        if let (Some(r), None) = (&m.result, m.error) {
            let interim = r
                .result_type
                .is_some_and(|t| text::string(t.raw(line), t.escaped) == "input_required");
            if interim {
                self.pending.remove(&k);
                return;
            }
        }
        let Some(p) = self.pending.remove(&k) else {
            return;
        };
        out.push(self.response(request_direction, p, line, m, now_ms));
    }

    fn response(
        &mut self,
        direction: Direction,
        p: Pending,
        line: &[u8],
        m: &Message,
        now_ms: f64,
    ) -> Exchange {
        if let Some(code) = m.error {
            let (layer, failure) = error_class(code);
            return Exchange {
                failure_type: Some(failure),
                error_layer: Some(layer),
                error_code: code,
                ..finish(direction, p, Outcome::Failure, now_ms)
            };
        }
        let none = ResultInfo::default();
        let r = m.result.as_ref().unwrap_or(&none);
        self.learn(&p, line, r);
        let is_error = r.is_error && p.method == "tools/call";
        let mut e = finish(direction, p, Outcome::Success, now_ms);
        e.has_content = r.has_content;
        if is_error {
            e.outcome = Outcome::Failure;
            match sdk_error_code(line, r.first_text) {
                Some(code) => {
                    let (layer, failure) = error_class(Some(code));
                    (e.error_layer, e.failure_type, e.error_code) =
                        (Some(layer), Some(failure), Some(code));
                }
                None => {
                    (e.error_layer, e.failure_type) =
                        (Some(ErrorLayer::Tool), Some(FailureType::ToolError))
                }
            }
        }
        e
    }

    /// Updates the facts from a successful result of `initialize`, `server/discover` or a
    /// first-page `tools/list`.
    fn learn(&mut self, p: &Pending, line: &[u8], r: &ResultInfo) {
        let info: Info = match p.method.as_str() {
            "initialize" => r.server_info,
            "server/discover"
                if r.meta_server_info.name.is_some() || r.meta_server_info.version.is_some() =>
            {
                r.meta_server_info
            }
            "server/discover" => r.server_info,
            "tools/list" if p.first_page => {
                if let Ok(h) = crate::schema_hash::hash_tools_result(&line[r.span.0..r.span.1]) {
                    let f = &mut self.facts;
                    (f.schema_hash, f.desc_hash) = (Some(h.schema_hash), Some(h.desc_hash));
                    (f.tools_has_more, f.tool_count) = (h.has_more, Some(h.tool_count));
                }
                return;
            }
            _ => return,
        };
        let f = &mut self.facts;
        f.server_name = decoded(line, info.name).as_deref().and_then(sanitize_name);
        f.server_version = decoded(line, info.version)
            .as_deref()
            .and_then(sanitize_server_version);
        // `server/discover` may leave the protocol version out; keep the one known then.
        if r.protocol_version.is_some() {
            f.protocol_version = decoded(line, r.protocol_version)
                .as_deref()
                .and_then(sanitize_server_version);
        }
    }
}
