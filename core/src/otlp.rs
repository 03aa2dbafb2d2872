//! OpenTelemetry in (issue 27): MCP spans sent over OTLP/HTTP by any instrumented agent,
//! turned into interaction records (SPEC §3.1, §3.2). The server decodes a body with
//! [`proto`] or [`json`], maps it with [`span_records`] and stores what comes out through
//! the same path as `POST /api/interactions`.
//!
//! The decoders keep only the attributes of the mapping ([`Mapped`], [`ResourceFacts`]):
//! every other attribute, the span's name, events, links and status message are dropped
//! while decoding, so nothing else can reach a record.
//!
//! The mapping, one span at a time (the GenAI semantic conventions' MCP spans):
//! - **target**: the span's `lowdown.target`, else the resource's, else
//!   `url:<server.address>` (the proxy's label for a remote server); neither → refused.
//! - **task**: `mcp.method.name = tools/call` with `gen_ai.tool.name` is a tool call of that
//!   tool (`tools/call` without a tool name is refused); any other method is a protocol
//!   request named by the method; a `notifications/…` method is not a request (refused);
//!   a span without `mcp.method.name` is not an MCP span (refused).
//! - **outcome** from `error.type` (SPEC §3.1): none → success (unless the span's status is
//!   `ERROR`: a server failure of unknown type); `tool_error` → `tool_error` at the tool
//!   layer; a JSON-RPC code (in `error.type`, else in `rpc.response.status_code`) → its
//!   class ([`crate::classify::error_code_class`]); `timeout` → a server-layer timeout;
//!   `cancelled` → `cancelled`; anything else → a server-layer failure of unknown type.
//! - **server spans** (kind `SERVER`, the server's own view) follow the conventions'
//!   caller-fault rule: a server leaves the span's status unset when the error is the
//!   caller's, so an `error.type` with a status other than `ERROR` is a request-layer
//!   rejection. A server span whose parent is an MCP client span of the same request is
//!   the same exchange seen twice: it is refused and the client span counts.
//! - **latency**: the span's duration (end − start), to the microsecond.
//! - **provenance**: `source: organic`, `recorder_version: otlp/<telemetry.sdk.name>`
//!   (`otlp/unknown` when absent or not of `[0-9A-Za-z.+_-]`), `protocol_version` from
//!   `mcp.protocol.version` (dropped when not publishable), `record_id` from the trace and
//!   span ids (an exporter's retry is acknowledged as a duplicate), no node id.
//! - Every record built is checked by [`validate_record`], the rule of `POST
//!   /api/interactions`, so an OTLP record is never one the API would refuse.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::classify::error_code_class;
use crate::record::build::{sanitize_server_version, task_type};
use crate::record::validate::{validate_record, MAX_BATCH};
use crate::record::{ErrorLayer, FailureType, InteractionRecord, Outcome, RequestKind};

pub mod json;
pub mod proto;

/// Most spans one request may carry; the rest are refused (as `POST /api/interactions`
/// takes at most this many records).
pub const MAX_SPANS: usize = MAX_BATCH;

/// The conventions' client duration histogram (`mcp.client.operation.duration`).
pub const MCP_CLIENT_DURATION: &str = "mcp.client.operation.duration";

/// Longest attribute value the decoders keep, in bytes; a longer one is cut (on a
/// character boundary), and the record's own limits then apply.
pub const MAX_ATTRIBUTE: usize = 1024;

/// The span kinds of OTLP (`Span.SpanKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpanKind {
    /// `SPAN_KIND_UNSPECIFIED` (0) or a value not known.
    #[default]
    Unspecified,
    /// 1.
    Internal,
    /// 2: the MCP server's view of an exchange.
    Server,
    /// 3: the MCP client's view (what the conventions' client spans are).
    Client,
    /// 4.
    Producer,
    /// 5.
    Consumer,
}

impl SpanKind {
    /// The kind of an OTLP enum value.
    pub fn from_i32(v: i32) -> SpanKind {
        match v {
            1 => SpanKind::Internal,
            2 => SpanKind::Server,
            3 => SpanKind::Client,
            4 => SpanKind::Producer,
            5 => SpanKind::Consumer,
            _ => SpanKind::Unspecified,
        }
    }
}

/// A span's status code (`Status.StatusCode`); its message is never kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusCode {
    /// 0, or a value not known.
    #[default]
    Unset,
    /// 1.
    Ok,
    /// 2.
    Error,
}

impl StatusCode {
    /// The code of an OTLP enum value.
    pub fn from_i32(v: i32) -> StatusCode {
        match v {
            1 => StatusCode::Ok,
            2 => StatusCode::Error,
            _ => StatusCode::Unset,
        }
    }
}

/// The span attributes the mapping reads; the decoders keep nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mapped {
    /// `lowdown.target`.
    pub lowdown_target: Option<String>,
    /// `server.address`.
    pub server_address: Option<String>,
    /// `mcp.method.name`.
    pub method: Option<String>,
    /// `gen_ai.tool.name`.
    pub tool_name: Option<String>,
    /// `error.type`.
    pub error_type: Option<String>,
    /// `rpc.response.status_code` (an integer value is kept as its decimal text).
    pub rpc_status_code: Option<String>,
    /// `mcp.protocol.version`.
    pub protocol_version: Option<String>,
}

impl Mapped {
    /// Keeps `value` when `key` is one the mapping reads; drops it otherwise.
    pub fn keep(&mut self, key: &str, value: AttrValue) {
        let slot = match key {
            "lowdown.target" => &mut self.lowdown_target,
            "server.address" => &mut self.server_address,
            "mcp.method.name" => &mut self.method,
            "gen_ai.tool.name" => &mut self.tool_name,
            "error.type" => &mut self.error_type,
            "rpc.response.status_code" => &mut self.rpc_status_code,
            "mcp.protocol.version" => &mut self.protocol_version,
            _ => return,
        };
        *slot = value.into_text();
    }
}

/// The resource attributes the mapping reads; the decoders keep nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceFacts {
    /// `telemetry.sdk.name`: the SDK, for `recorder_version`.
    pub sdk_name: Option<String>,
    /// `lowdown.target` set on the resource (for every span of it).
    pub lowdown_target: Option<String>,
}

impl ResourceFacts {
    /// Keeps `value` when `key` is one the mapping reads; drops it otherwise.
    pub fn keep(&mut self, key: &str, value: AttrValue) {
        let slot = match key {
            "telemetry.sdk.name" => &mut self.sdk_name,
            "lowdown.target" => &mut self.lowdown_target,
            _ => return,
        };
        *slot = value.into_text();
    }
}

/// An attribute value as the decoders hand it over: only strings and integers are ever
/// read (an array, map, bytes, bool or double is `Other` and reads as absent).
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// `stringValue`.
    Str(String),
    /// `intValue`.
    Int(i64),
    /// Anything else.
    Other,
}

impl AttrValue {
    fn into_text(self) -> Option<String> {
        match self {
            AttrValue::Str(s) => Some(cut(s)),
            AttrValue::Int(i) => Some(i.to_string()),
            AttrValue::Other => None,
        }
    }
}

/// `s` cut to [`MAX_ATTRIBUTE`] bytes on a character boundary.
fn cut(mut s: String) -> String {
    if s.len() > MAX_ATTRIBUTE {
        let mut end = MAX_ATTRIBUTE;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// One span, as much of it as the mapping reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Span {
    /// 16 bytes (empty or another length when the sender broke the rules).
    pub trace_id: Vec<u8>,
    /// 8 bytes.
    pub span_id: Vec<u8>,
    /// 8 bytes, or empty for a root span.
    pub parent_span_id: Vec<u8>,
    /// Client, server, …
    pub kind: SpanKind,
    /// Start, in nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, likewise.
    pub end_ns: u64,
    /// The status code (its message is dropped).
    pub status: StatusCode,
    /// The mapped attributes.
    pub attrs: Mapped,
}

/// The spans of one resource.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceSpans {
    /// Its mapped resource attributes.
    pub resource: ResourceFacts,
    /// Its spans, every scope's together, in order.
    pub spans: Vec<Span>,
}

/// A decoded `ExportTraceServiceRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Traces {
    /// In order.
    pub resources: Vec<ResourceSpans>,
}

impl Traces {
    /// How many spans the request holds.
    pub fn span_count(&self) -> usize {
        self.resources.iter().map(|r| r.spans.len()).sum()
    }
}

/// A decoded `ExportMetricsServiceRequest`: only counted (see [`metric_records`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Metrics {
    /// Data points of every metric.
    pub data_points: u64,
    /// Data points of `mcp.client.operation.duration` among them.
    pub mcp_duration_points: u64,
}

/// Why a body could not be decoded (the server answers 400).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DecodeError {
    /// Not a protobuf message of the expected type.
    #[error("body: not a valid OTLP protobuf message ({detail})")]
    Protobuf {
        /// The decoder's words (never the input).
        detail: String,
    },
    /// Not JSON, or JSON not of the OTLP shape.
    #[error("body: not a valid OTLP JSON message ({detail})")]
    Json {
        /// What is wrong, naming the field (never the input).
        detail: String,
    },
}

/// Why one span became no record; its `Display` is the partial-success message's words and
/// never echoes a submitted value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Refusal {
    /// No `mcp.method.name`.
    #[error("not an MCP span (no mcp.method.name)")]
    NotMcp,
    /// A `notifications/…` method.
    #[error("an MCP notification is not a request")]
    Notification,
    /// Neither `lowdown.target` nor `server.address`.
    #[error("no target (neither lowdown.target nor server.address)")]
    NoTarget,
    /// `tools/call` without `gen_ai.tool.name`.
    #[error("tools/call without gen_ai.tool.name")]
    NoToolName,
    /// The end is before the start, or a time is missing.
    #[error("span times: the end is missing or before the start")]
    BadTimes,
    /// A server span of an exchange whose client span is in the same request.
    #[error(
        "the server span of a client span in this request (counted once, from the client span)"
    )]
    SameExchange,
    /// More than [`MAX_SPANS`] spans in the request.
    #[error("more than {MAX_SPANS} spans in one request")]
    TooMany,
    /// The record the span maps to breaks a record rule.
    #[error("{detail}")]
    Invalid {
        /// `field: what is wrong`, as `POST /api/interactions` words it.
        detail: String,
    },
}

/// The record of every span of `traces`, in order (resource by resource, span by span),
/// or why that span makes none. Pure; see the module docs for the mapping.
pub fn span_records(traces: &Traces) -> Vec<Result<InteractionRecord, Refusal>> {
    let clients: std::collections::HashSet<(&[u8], &[u8])> = traces
        .resources
        .iter()
        .flat_map(|r| &r.spans)
        .filter(|s| s.kind != SpanKind::Server && s.attrs.method.is_some())
        .map(|s| (s.trace_id.as_slice(), s.span_id.as_slice()))
        .collect();
    let mut out = Vec::with_capacity(traces.span_count());
    for r in &traces.resources {
        for span in &r.spans {
            if out.len() >= MAX_SPANS {
                out.push(Err(Refusal::TooMany));
                continue;
            }
            let twin = span.kind == SpanKind::Server
                && !span.parent_span_id.is_empty()
                && clients.contains(&(span.trace_id.as_slice(), span.parent_span_id.as_slice()));
            out.push(if twin {
                Err(Refusal::SameExchange)
            } else {
                span_record(span, &r.resource)
            });
        }
    }
    out
}

/// The record of one span of a resource, or why it makes none.
pub fn span_record(span: &Span, resource: &ResourceFacts) -> Result<InteractionRecord, Refusal> {
    let a = &span.attrs;
    let method = a.method.as_deref().ok_or(Refusal::NotMcp)?;
    if method.starts_with("notifications/") {
        return Err(Refusal::Notification);
    }
    let target = match (
        &a.lowdown_target,
        &resource.lowdown_target,
        &a.server_address,
    ) {
        (Some(t), _, _) | (None, Some(t), _) => t.clone(),
        (None, None, Some(host)) => format!("url:{host}"),
        (None, None, None) => return Err(Refusal::NoTarget),
    };
    let (kind, task) = if method == "tools/call" {
        let tool = a.tool_name.as_deref().ok_or(Refusal::NoToolName)?;
        (RequestKind::Tool, task_type(tool))
    } else {
        (RequestKind::Protocol, task_type(method))
    };
    if span.end_ns < span.start_ns || span.end_ns == 0 {
        return Err(Refusal::BadTimes);
    }
    let latency_ms = ((span.end_ns - span.start_ns) as f64 / 1_000.0).round() / 1_000.0;
    let (outcome, failure_type, error_layer) = outcome(span);
    let record = InteractionRecord {
        record_id: record_id(span),
        actor: "anonymous".to_owned(),
        target,
        target_type: crate::record::TargetType::Tool,
        task_type: task,
        outcome,
        failure_type,
        error_layer,
        request_kind: kind,
        latency_ms: Some(latency_ms),
        source: crate::record::Source::Organic,
        node_id: None,
        server_version: None,
        schema_hash: None,
        recorder_version: Some(recorder_version(resource.sdk_name.as_deref())),
        protocol_version: a
            .protocol_version
            .as_deref()
            .and_then(sanitize_server_version),
        tools_has_more: None,
    };
    // The API's own rule, so no OTLP record is one `POST /api/interactions` would refuse.
    let value = serde_json::to_value(&record).map_err(|e| Refusal::Invalid {
        detail: format!("record: {e}"),
    })?;
    validate_record(&value).map_err(|e| {
        let field = if e.field.is_empty() {
            "record"
        } else {
            &e.field
        };
        Refusal::Invalid {
            detail: format!("{field}: {}", e.message),
        }
    })
}

type Classified = (Outcome, Option<FailureType>, Option<ErrorLayer>);

/// Outcome, failure type and layer of a span (module docs: **outcome**, **server spans**).
fn outcome(span: &Span) -> Classified {
    let failure = |layer, kind| (Outcome::Failure, Some(kind), Some(layer));
    let Some(error) = span.attrs.error_type.as_deref() else {
        return if span.status == StatusCode::Error {
            failure(ErrorLayer::Server, FailureType::Unknown)
        } else {
            (Outcome::Success, None, None)
        };
    };
    let code = error.trim().parse::<i64>().ok().or_else(|| {
        span.attrs
            .rpc_status_code
            .as_deref()
            .and_then(|c| c.trim().parse::<i64>().ok())
    });
    let classified = match (error, code) {
        ("tool_error", _) => failure(ErrorLayer::Tool, FailureType::ToolError),
        ("cancelled", _) => (Outcome::Cancelled, None, None),
        (_, Some(code)) => {
            let (layer, kind) = error_code_class(Some(code));
            failure(layer, kind)
        }
        ("timeout", None) => failure(ErrorLayer::Server, FailureType::Timeout),
        _ => failure(ErrorLayer::Server, FailureType::Unknown),
    };
    // The caller-fault rule: a server leaves its span's status unset for the caller's errors.
    if span.kind == SpanKind::Server
        && span.status != StatusCode::Error
        && classified.0 == Outcome::Failure
    {
        let kind = classified.1.filter(|k| *k == FailureType::InvalidArguments);
        return (
            Outcome::Failure,
            Some(kind.unwrap_or(FailureType::Unknown)),
            Some(ErrorLayer::Request),
        );
    }
    classified
}

/// `otlp/<telemetry.sdk.name>`, or `otlp/unknown` when the name is absent or would not
/// make a valid `recorder_version` (1-32 of `[0-9A-Za-z.+_/-]`).
pub fn recorder_version(sdk_name: Option<&str>) -> String {
    match sdk_name {
        Some(n)
            if !n.is_empty()
                && n.len() <= 32 - "otlp/".len()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '_' | '-')) =>
        {
            format!("otlp/{n}")
        }
        _ => "otlp/unknown".to_owned(),
    }
}

/// `ot_` and 40 hex digits of sha256(trace id ‖ span id): one span, one record, whoever
/// sends it again; `None` when the span has no ids.
fn record_id(span: &Span) -> Option<String> {
    if span.trace_id.is_empty() || span.span_id.is_empty() {
        return None;
    }
    let mut h = Sha256::new();
    h.update((span.trace_id.len() as u32).to_be_bytes());
    h.update(&span.trace_id);
    h.update(&span.span_id);
    Some(format!("ot_{}", &hex::encode(h.finalize())[..40]))
}

/// What `mcp.client.operation.duration` points (and every other metric) add to the
/// records: nothing. Lowdown counts MCP calls from spans only: a histogram point holds no
/// call of its own (no id to tell a resend or the span of the same call apart), and the
/// SDKs' default cumulative temporality sends the same calls again at every export, so
/// counting points would count calls twice, or many times. The points are decoded (a
/// malformed body is refused) and acknowledged; none is rejected, since resending them
/// would change nothing.
pub fn metric_records(_metrics: &Metrics) -> Vec<InteractionRecord> {
    Vec::new()
}

/// The partial-success `error_message` for refused items: each distinct reason once, with
/// how many items it refused, in the order first seen (`2 spans: not an MCP span (no
/// mcp.method.name); 1 span: tools/call without gen_ai.tool.name`).
pub fn refusal_summary<'a>(reasons: impl IntoIterator<Item = &'a str>, item: &str) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for r in reasons {
        match counts.iter_mut().find(|(seen, _)| *seen == r) {
            Some((_, n)) => *n += 1,
            None => counts.push((r, 1)),
        }
    }
    counts
        .iter()
        .map(|(r, n)| format!("{n} {item}{}: {r}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests;
