//! The probe of one remote as a state machine (SPEC §8): it says which request to send
//! next, takes what came back, and ends with the observation. The host only moves bytes.
//!
//! Sequence: (`server/discover` with `--modern`) → `initialize` → `notifications/initialized`
//! → `tools/list`, following every `nextCursor` (at most 20 pages, never a cursor twice)
//! → a best-effort `DELETE` of the session. Tools are never called.
//!
//! - `reached_level` is 0 until `initialize` succeeds, 1 once it did, 2 once a `tools/list`
//!   result held a `tools` array. A `server/discover` that answers with `2026-07-28` among
//!   its `supportedVersions` stands in for `initialize` (stateless: no session, no DELETE);
//!   any other answer to it falls back to `initialize`, and its status is not reported.
//! - `http_status` is the status of the last `initialize` or `tools/list` that got a
//!   response, reported as observed (a 401 is a 401); `www_authenticate` says whether that
//!   response carried the header.
//! - `error_type` explains why the level stopped where it did: a transport kind when no
//!   response arrived (or the body broke off), `invalid_response` for a 2xx that is not
//!   the JSON-RPC answer asked for. A JSON-RPC error answer leaves it null. Once level 2
//!   is reached, a later page that fails only sets `tools_has_more`.
//! - `latency_ms` is the time of the `initialize` (or `server/discover`) exchange.
//! - `server_version` and `protocol_version` are published under the §3.2 version rule.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::quality::ServerFacts;
use super::rpc::{self, AnswerError, RpcMessage};
use super::tools::{ToolDefinition, ToolsAccumulator, ToolsSummary};
use super::{
    ErrorType, INITIALIZE_BODY_CAP, MAX_TOOLS_PAGES, MODERN_PROTOCOL_VERSION, PROTOCOL_VERSION,
    TOOLS_BODY_CAP,
};
use crate::record::build::sanitize_server_version;
use crate::schema_hash::parser::{into_string, Value};

/// HTTP method of a probe request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// A JSON-RPC message.
    Post,
    /// Ending the session.
    Delete,
}

/// One request for the host to send to the remote URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// POST or DELETE.
    pub method: Method,
    /// Every header to send besides the user agent.
    pub headers: Vec<(&'static str, String)>,
    /// The body (empty for DELETE).
    pub body: Vec<u8>,
    /// `(id, cap)` when a JSON-RPC answer is expected: read a 2xx body with
    /// [`rpc::AnswerReader`] for `id`, at most `cap` bytes. `None`: do not read the body.
    pub answer: Option<(u64, usize)>,
}

/// What the host got back for a [`Request`].
#[derive(Debug, Clone)]
pub enum Reply {
    /// No HTTP response: connect error, timeout, refused URL.
    Failed(ErrorType),
    /// An HTTP response.
    Http {
        /// Its status.
        status: u16,
        /// The `Mcp-Session-Id` header, when present.
        session_id: Option<String>,
        /// A `WWW-Authenticate` header was present.
        www_authenticate: bool,
        /// Milliseconds from sending to the end of the answer (or of the headers).
        elapsed_ms: f64,
        /// The JSON-RPC answer read from a 2xx body.
        answer: Result<RpcMessage, BodyError>,
    },
}

/// Why a reply carries no JSON-RPC answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyError {
    /// Not read: not a 2xx, or no answer was expected.
    NotRead,
    /// Read, but it holds no answer to the request.
    Answer(AnswerError),
    /// The body broke off (timeout, reset).
    Transport(ErrorType),
}

/// What the probe asks of the host next.
#[derive(Debug, Clone)]
pub enum Step {
    /// Send this request and call [`Probe::on_reply`] with what came back.
    Send(Request),
    /// The probe is over.
    Done(ProbeResult),
}

/// What one probe found, before the host adds run, target, URL and time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// 0, 1 or 2 (see the module docs).
    pub reached_level: u8,
    /// Status of the last `initialize`/`tools/list` response.
    pub http_status: Option<u16>,
    /// Why the level stopped, when there is a reason to give.
    pub error_type: Option<ErrorType>,
    /// Milliseconds of the `initialize` exchange.
    pub latency_ms: Option<f64>,
    /// `serverInfo.version` (§3.2 rule).
    pub server_version: Option<String>,
    /// The protocol version the server answered with (§3.2 rule).
    pub protocol_version: Option<String>,
    /// The last response carried `WWW-Authenticate`.
    pub www_authenticate: bool,
    /// Tools over every page, when a page was a tool list.
    pub tools: Option<ToolsSummary>,
    /// Status of the `initialize` (or `server/discover`) that succeeded (level ≥ 1).
    #[serde(default)]
    pub initialize_status: Option<u16>,
    /// What the server said about itself (level ≥ 1): presence flags only.
    #[serde(default)]
    pub server: ServerFacts,
}

impl ProbeResult {
    /// The result for a URL the SSRF rules refuse: nothing was sent.
    pub fn blocked() -> Self {
        ProbeResult {
            error_type: Some(ErrorType::BlockedUrl),
            ..Self::default()
        }
    }

    /// The stored observation (SPEC §8) and the private definitions behind it.
    pub fn into_observation(
        self,
        scan_run_id: &str,
        target_id: &str,
        remote_url: &str,
        observed_at_ms: i64,
    ) -> (Observation, Vec<ToolDefinition>) {
        let tools = self.tools.unwrap_or_default();
        let has_tools = self.reached_level == 2;
        let obs = Observation {
            scan_run_id: scan_run_id.to_owned(),
            target_id: target_id.to_owned(),
            remote_url: remote_url.to_owned(),
            observed_at_ms,
            reached_level: self.reached_level,
            http_status: self.http_status,
            error_type: self.error_type,
            latency_ms: self.latency_ms,
            server_version: self.server_version,
            protocol_version: self.protocol_version,
            tool_count: has_tools.then_some(tools.tool_count),
            tools_has_more: has_tools.then_some(tools.tools_has_more),
            schema_hash: tools.schema_hash,
            desc_hash: tools.desc_hash,
            name_hash: tools.name_hash,
            tool_names: tools.tool_names,
            www_authenticate: self.www_authenticate,
        };
        (obs, tools.definitions)
    }
}

/// One stored Scanner observation (SPEC §8): public, hashes only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The run that made it.
    pub scan_run_id: String,
    /// `mcp:<name>`.
    pub target_id: String,
    /// The remote URL probed, as declared.
    pub remote_url: String,
    /// Unix milliseconds when the probe ended.
    pub observed_at_ms: i64,
    /// 0, 1 or 2.
    pub reached_level: u8,
    /// See [`ProbeResult::http_status`].
    pub http_status: Option<u16>,
    /// See [`ProbeResult::error_type`].
    pub error_type: Option<ErrorType>,
    /// See [`ProbeResult::latency_ms`].
    pub latency_ms: Option<f64>,
    /// See [`ProbeResult::server_version`].
    pub server_version: Option<String>,
    /// See [`ProbeResult::protocol_version`].
    pub protocol_version: Option<String>,
    /// Tools over every page (level 2 only).
    pub tool_count: Option<u64>,
    /// Pages were left unread (level 2 only).
    pub tools_has_more: Option<bool>,
    /// §3.3 schema hash of the first page.
    pub schema_hash: Option<String>,
    /// §3.3 description hash of the first page.
    pub desc_hash: Option<String>,
    /// sha256 of the sorted tool names over every page.
    pub name_hash: Option<String>,
    /// Public tool names.
    pub tool_names: Vec<String>,
    /// See [`ProbeResult::www_authenticate`].
    pub www_authenticate: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Discover,
    Initialize,
    Initialized,
    Tools,
    Delete,
}

/// A session id as MCP allows it: 1 to 1,024 visible ASCII characters.
pub fn is_valid_session_id(id: &str) -> bool {
    (1..=1024).contains(&id.len()) && id.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

fn text_at(v: Option<&Value>, key: &str) -> Option<String> {
    match v?.get(key)? {
        Value::String(s) => Some(into_string(s.clone())),
        _ => None,
    }
}

/// The probe of one remote.
#[derive(Debug)]
pub struct Probe {
    phase: Phase,
    client_version: String,
    stateless: bool,
    session: Option<String>,
    protocol: String,
    next_id: u64,
    cursors: BTreeSet<String>,
    tools: ToolsAccumulator,
    result: ProbeResult,
}

impl Probe {
    /// A probe that tries `server/discover` first when `modern`; `client_version` goes
    /// into `clientInfo`.
    pub fn new(modern: bool, client_version: &str) -> Self {
        Probe {
            phase: if modern {
                Phase::Discover
            } else {
                Phase::Initialize
            },
            client_version: client_version.to_owned(),
            stateless: false,
            session: None,
            protocol: PROTOCOL_VERSION.to_owned(),
            next_id: 2,
            cursors: BTreeSet::new(),
            tools: ToolsAccumulator::new(),
            result: ProbeResult::default(),
        }
    }

    /// The first request.
    pub fn start(&mut self) -> Step {
        match self.phase {
            Phase::Discover => Step::Send(self.post(
                rpc::discover_request(0, &self.client_version),
                Some((0, INITIALIZE_BODY_CAP)),
                Some("server/discover"),
            )),
            _ => self.initialize(),
        }
    }

    fn post(&self, body: Vec<u8>, answer: Option<(u64, usize)>, method: Option<&str>) -> Request {
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "application/json, text/event-stream".to_owned()),
        ];
        if self.phase == Phase::Discover || self.stateless {
            headers.push(("mcp-protocol-version", MODERN_PROTOCOL_VERSION.to_owned()));
            if let Some(m) = method {
                headers.push(("mcp-method", m.to_owned()));
            }
        } else if self.phase != Phase::Initialize {
            headers.push(("mcp-protocol-version", self.protocol.clone()));
        }
        if let Some(s) = &self.session {
            headers.push(("mcp-session-id", s.clone()));
        }
        Request {
            method: Method::Post,
            headers,
            body,
            answer,
        }
    }

    fn initialize(&mut self) -> Step {
        self.phase = Phase::Initialize;
        Step::Send(self.post(
            rpc::initialize_request(1, &self.client_version),
            Some((1, INITIALIZE_BODY_CAP)),
            None,
        ))
    }

    fn tools_page(&mut self, cursor: Option<&str>) -> Step {
        self.phase = Phase::Tools;
        let id = self.next_id;
        self.next_id += 1;
        Step::Send(self.post(
            rpc::tools_list_request(id, cursor, self.stateless),
            Some((id, TOOLS_BODY_CAP)),
            Some("tools/list"),
        ))
    }

    fn finish(&mut self) -> Step {
        if let (Some(s), false) = (&self.session, self.stateless) {
            if self.phase != Phase::Delete {
                self.phase = Phase::Delete;
                return Step::Send(Request {
                    method: Method::Delete,
                    headers: vec![
                        ("mcp-session-id", s.clone()),
                        ("mcp-protocol-version", self.protocol.clone()),
                    ],
                    body: Vec::new(),
                    answer: None,
                });
            }
        }
        let mut result = std::mem::take(&mut self.result);
        result.tools = std::mem::take(&mut self.tools).finish();
        Step::Done(result)
    }

    /// Records the status part of a reply and returns the answer of a 2xx, or ends the
    /// level here with the reason.
    fn answer_of(&mut self, reply: Reply) -> Option<RpcMessage> {
        match reply {
            Reply::Failed(e) => {
                self.result.error_type = Some(e);
                None
            }
            Reply::Http {
                status,
                www_authenticate,
                answer,
                ..
            } => {
                self.result.http_status = Some(status);
                self.result.www_authenticate = www_authenticate;
                match answer {
                    Ok(m) => Some(m),
                    Err(BodyError::NotRead) if !(200..300).contains(&status) => None,
                    Err(BodyError::Transport(e)) => {
                        self.result.error_type = Some(e);
                        None
                    }
                    Err(_) => {
                        self.result.error_type = Some(ErrorType::InvalidResponse);
                        None
                    }
                }
            }
        }
    }

    /// Takes the reply to the last request and says what to do next.
    pub fn on_reply(&mut self, reply: Reply) -> Step {
        match self.phase {
            Phase::Discover => self.on_discover(reply),
            Phase::Initialize => self.on_initialize(reply),
            Phase::Initialized => self.tools_page(None),
            Phase::Tools => self.on_tools(reply),
            Phase::Delete => self.finish(),
        }
    }

    fn on_discover(&mut self, reply: Reply) -> Step {
        if let Reply::Http {
            status: status @ 200..=299,
            www_authenticate,
            elapsed_ms,
            answer: Ok(m),
            ..
        } = &reply
        {
            let result = m.result();
            let supported = matches!(result.and_then(|r| r.get("supportedVersions")),
                Some(Value::Array(v)) if v.iter().any(|x| matches!(x, Value::String(s) if s.as_slice() == MODERN_PROTOCOL_VERSION.as_bytes())));
            if supported {
                let meta_info = result
                    .and_then(|r| r.get("_meta"))
                    .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"));
                let info = meta_info.or_else(|| result.and_then(|r| r.get("serverInfo")));
                self.stateless = true;
                self.result = ProbeResult {
                    reached_level: 1,
                    http_status: Some(*status),
                    www_authenticate: *www_authenticate,
                    latency_ms: Some(*elapsed_ms),
                    server_version: text_at(info, "version")
                        .as_deref()
                        .and_then(sanitize_server_version),
                    protocol_version: Some(MODERN_PROTOCOL_VERSION.to_owned()),
                    initialize_status: Some(*status),
                    server: result.map(|r| ServerFacts::of(r, info)).unwrap_or_default(),
                    ..ProbeResult::default()
                };
                return self.tools_page(None);
            }
        }
        self.initialize()
    }

    fn on_initialize(&mut self, reply: Reply) -> Step {
        if let Reply::Http {
            elapsed_ms,
            session_id,
            ..
        } = &reply
        {
            self.result.latency_ms = Some(*elapsed_ms);
            self.session = session_id.clone().filter(|s| is_valid_session_id(s));
        }
        let Some(m) = self.answer_of(reply) else {
            self.session = None;
            return self.finish();
        };
        match m.result() {
            Some(r @ Value::Object(_)) => {
                self.result.reached_level = 1;
                self.result.initialize_status = self.result.http_status;
                let info = r.get("serverInfo");
                self.result.server = ServerFacts::of(r, info);
                self.result.server_version = text_at(info, "version")
                    .as_deref()
                    .and_then(sanitize_server_version);
                self.result.protocol_version = text_at(Some(r), "protocolVersion")
                    .as_deref()
                    .and_then(sanitize_server_version);
                if let Some(p) = &self.result.protocol_version {
                    self.protocol = p.clone();
                }
                self.phase = Phase::Initialized;
                Step::Send(self.post(rpc::initialized_notification(), None, None))
            }
            Some(_) => {
                self.result.error_type = Some(ErrorType::InvalidResponse);
                self.session = None;
                self.finish()
            }
            None => {
                self.session = None;
                self.finish()
            }
        }
    }

    fn on_tools(&mut self, reply: Reply) -> Step {
        let first = self.tools.pages() == 0;
        let saved_error = self.result.error_type;
        let answer = self.answer_of(reply);
        if !first {
            // Level 2 stands; a later page that fails only leaves pages unread.
            self.result.error_type = saved_error;
        }
        let Some(m) = answer else {
            if !first {
                self.tools.mark_incomplete();
            }
            return self.finish();
        };
        if m.is_error() {
            if !first {
                self.tools.mark_incomplete();
            }
            return self.finish();
        }
        let page = self.tools.add_page(&m);
        if !page.is_tool_list {
            if first {
                self.result.error_type = Some(ErrorType::InvalidResponse);
            } else {
                self.tools.mark_incomplete();
            }
            return self.finish();
        }
        self.result.reached_level = 2;
        match page.next_cursor {
            Some(c) if self.tools.pages() < MAX_TOOLS_PAGES && self.cursors.insert(c.clone()) => {
                self.tools_page(Some(&c))
            }
            Some(_) => {
                self.tools.mark_incomplete();
                self.finish()
            }
            None => self.finish(),
        }
    }
}

#[cfg(test)]
mod tests;
