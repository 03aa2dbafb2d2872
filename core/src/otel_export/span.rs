//! The client span of one exchange (the GenAI/MCP semantic conventions' `mcp.client` span),
//! a pure function of what the classifier extracted and the session's facts.
//!
//! Decisions (the README of lowdown-proxy says them to users):
//! - Only client→server requests: server→client requests (sampling, roots) are the server's
//!   operations, and notifications are not exchanges.
//! - Name `{mcp.method.name} {gen_ai.tool.name}` for `tools/call`, else `{mcp.method.name}`.
//! - `error.type`, iff the exchange did not succeed: `tool_error` for a `tools/call` result
//!   with `isError: true` (whatever layer Lowdown gives it); the JSON-RPC error code as a
//!   string for a JSON-RPC error (also `rpc.response.status_code`); `timeout` for a request
//!   evicted as timed out, `server_error` for one the child left unanswered when it died,
//!   `cancelled` for one the client cancelled, `_OTHER` otherwise. The span's status is then
//!   ERROR, with no description: the error's message is never exported.
//! - Lowdown's own reading rides beside it: `lowdown.outcome`, `lowdown.error_layer`
//!   (`request` is the caller's fault: a rejection that never counts against the server),
//!   `lowdown.target`, and the server's self-reported `lowdown.server.name` and
//!   `lowdown.server.version` (sanitised as SPEC §3.2 says).
//! - Never arguments, results, error messages or log lines: an [`Exchange`] holds none.

use serde::{Deserialize, Serialize};

use crate::classify::{Direction, Exchange, SessionFacts};
use crate::record::build::task_type;
use crate::record::{ErrorLayer, FailureType, Outcome};

/// The longest request id exported (`jsonrpc.request.id`); a longer one is cut.
const MAX_ID: usize = 128;

/// What a span and a histogram point are made of: one finished client→server request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExchangeSpan {
    /// `mcp.method.name`.
    pub method: String,
    /// `gen_ai.tool.name`, for `tools/call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `jsonrpc.request.id`: the id's value (a string id without its quotes).
    pub request_id: String,
    /// When the request was complete, ms since the Unix epoch (the host's clock).
    pub start_ms: f64,
    /// How long until its answer.
    pub latency_ms: f64,
    /// `error.type`, iff it did not succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// `rpc.response.status_code`: the JSON-RPC error code of an error answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<String>,
    /// `mcp.protocol.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// `lowdown.server.name`: `serverInfo.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// `lowdown.server.version`: `serverInfo.version`, sanitised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// `lowdown.outcome`.
    pub outcome: Outcome,
    /// `lowdown.error_layer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_layer: Option<ErrorLayer>,
    /// `lowdown.target`: the proxy's label of the server.
    pub target: String,
}

/// The span of `exchange`, or `None` for a server→client request.
pub fn exchange_span(
    exchange: &Exchange,
    facts: &SessionFacts,
    target: &str,
) -> Option<ExchangeSpan> {
    if exchange.direction == Direction::ServerToClient {
        return None;
    }
    let method = task_type(&exchange.method);
    let tool = match (method.as_str(), &exchange.tool_name) {
        ("tools/call", Some(name)) => Some(task_type(name)),
        _ => None,
    };
    // A JSON-RPC error answer carries no result, so no `content`; an `isError` result does.
    let tool_result_error =
        exchange.has_content || exchange.failure_type == Some(FailureType::ToolError);
    let status_code = match (exchange.outcome, tool_result_error) {
        (Outcome::Failure, false) => exchange.error_code.map(|c| c.to_string()),
        _ => None,
    };
    let error_type = match exchange.outcome {
        Outcome::Success | Outcome::Partial => None,
        Outcome::Cancelled => Some("cancelled".to_owned()),
        Outcome::Failure if tool_result_error => Some("tool_error".to_owned()),
        Outcome::Failure => Some(status_code.clone().unwrap_or_else(|| {
            match exchange.failure_type {
                Some(FailureType::Timeout) => "timeout",
                Some(FailureType::ServerError) => "server_error",
                _ => "_OTHER",
            }
            .to_owned()
        })),
    };
    let id = exchange.id.trim();
    let id = id
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(id);
    Some(ExchangeSpan {
        method,
        tool,
        request_id: id
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_ID)
            .collect(),
        start_ms: exchange.started_ms,
        latency_ms: exchange.latency_ms.max(0.0),
        error_type,
        status_code,
        protocol_version: facts.protocol_version.clone(),
        server_name: facts.server_name.clone(),
        server_version: facts
            .server_version
            .as_deref()
            .and_then(crate::record::build::sanitize_server_version),
        outcome: exchange.outcome,
        error_layer: exchange.error_layer,
        target: target.to_owned(),
    })
}

fn snake<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl ExchangeSpan {
    /// The span's name: `{mcp.method.name} {gen_ai.tool.name}`, or the method alone.
    pub fn name(&self) -> String {
        match &self.tool {
            Some(tool) => format!("{} {tool}", self.method),
            None => self.method.clone(),
        }
    }

    /// The attributes the histogram point carries (the conventions' metric attributes that
    /// apply, plus `lowdown.target` and `lowdown.error_layer`): low cardinality, no id.
    pub fn metric_attributes(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![("mcp.method.name", self.method.clone())];
        if let Some(tool) = &self.tool {
            out.push(("gen_ai.tool.name", tool.clone()));
            out.push(("gen_ai.operation.name", "execute_tool".to_owned()));
        }
        if let Some(e) = &self.error_type {
            out.push(("error.type", e.clone()));
        }
        if let Some(c) = &self.status_code {
            out.push(("rpc.response.status_code", c.clone()));
        }
        if let Some(v) = &self.protocol_version {
            out.push(("mcp.protocol.version", v.clone()));
        }
        out.push(("network.transport", "pipe".to_owned()));
        out.push(("lowdown.target", self.target.clone()));
        if let Some(l) = &self.error_layer {
            out.push(("lowdown.error_layer", snake(l)));
        }
        out
    }

    /// The span's attributes: the metric's, the request id, and Lowdown's reading.
    pub fn attributes(&self) -> Vec<(&'static str, String)> {
        let mut out = self.metric_attributes();
        out.insert(1, ("jsonrpc.request.id", self.request_id.clone()));
        out.push(("lowdown.outcome", snake(&self.outcome)));
        if let Some(n) = &self.server_name {
            out.push(("lowdown.server.name", n.clone()));
        }
        if let Some(v) = &self.server_version {
            out.push(("lowdown.server.version", v.clone()));
        }
        out
    }

    /// Whether the span's status is ERROR (iff `error.type` is set, as the conventions say).
    pub fn is_error(&self) -> bool {
        self.error_type.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::Classifier;

    fn spans(lines: &[(&str, &str)]) -> Vec<ExchangeSpan> {
        let mut c = Classifier::new();
        let mut out = Vec::new();
        for (i, (dir, line)) in lines.iter().enumerate() {
            let d = if *dir == "c" {
                Direction::ClientToServer
            } else {
                Direction::ServerToClient
            };
            let ex = c.feed(d, format!("{line}\n").as_bytes(), 1000.0 + i as f64 * 10.0);
            for e in ex {
                out.extend(exchange_span(&e, c.facts(), "npm:x"));
            }
        }
        out
    }

    const INIT: (&str, &str) = (
        "c",
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
    );
    const INIT_OK: (&str, &str) = (
        "s",
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"ev","version":"1.2.3"}}}"#,
    );

    #[test]
    fn a_tool_call_span_follows_the_conventions() {
        let s = spans(&[
            INIT,
            INIT_OK,
            (
                "c",
                r#"{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{"name":"get_weather","arguments":{"city":"CANARY"}}}"#,
            ),
            (
                "s",
                r#"{"jsonrpc":"2.0","id":"a1","result":{"content":[{"type":"text","text":"CANARY"}]}}"#,
            ),
        ]);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name(), "initialize");
        let call = &s[1];
        assert_eq!(call.name(), "tools/call get_weather");
        assert!(!call.is_error());
        assert_eq!((call.start_ms, call.latency_ms), (1020.0, 10.0));
        let attrs = call.attributes();
        let get = |k: &str| attrs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("mcp.method.name"), Some("tools/call"));
        assert_eq!(get("gen_ai.tool.name"), Some("get_weather"));
        assert_eq!(get("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(get("jsonrpc.request.id"), Some("a1"));
        assert_eq!(get("mcp.protocol.version"), Some("2025-06-18"));
        assert_eq!(get("network.transport"), Some("pipe"));
        assert_eq!(get("lowdown.server.name"), Some("ev"));
        assert_eq!(get("lowdown.server.version"), Some("1.2.3"));
        assert_eq!(get("error.type"), None);
        assert!(!format!("{attrs:?}").contains("CANARY"));
        assert!(s[0]
            .metric_attributes()
            .iter()
            .all(|(k, _)| *k != "gen_ai.operation.name"));
    }

    #[test]
    fn errors_by_the_conventions_with_lowdowns_layer_beside() {
        let s = spans(&[
            INIT,
            INIT_OK,
            (
                "c",
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            ),
            (
                "s",
                r#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"boom SECRET"}]}}"#,
            ),
            (
                "c",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#,
            ),
            (
                "s",
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad SECRET"}}"#,
            ),
            ("c", r#"{"jsonrpc":"2.0","id":3,"method":"resources/read"}"#),
            (
                "s",
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"SECRET"}}"#,
            ),
            (
                "c",
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t"}}"#,
            ),
            (
                "s",
                r#"{"jsonrpc":"2.0","id":4,"result":{"isError":true,"content":[{"type":"text","text":"MCP error -32602: Tool t not found"}]}}"#,
            ),
        ]);
        let view = |s: &ExchangeSpan| {
            (
                s.error_type.clone(),
                s.status_code.clone(),
                s.error_layer.map(|l| snake(&l)),
            )
        };
        let o = |s: &str| Some(s.to_owned());
        assert_eq!(view(&s[1]), (o("tool_error"), None, o("tool")));
        assert_eq!(view(&s[2]), (o("-32602"), o("-32602"), o("request")));
        assert_eq!(view(&s[3]), (o("-32603"), o("-32603"), o("server")));
        // The TypeScript SDK's rejection as an isError result: a tool_error by the
        // conventions, the caller's fault by Lowdown's classification.
        assert_eq!(view(&s[4]), (o("tool_error"), None, o("request")));
        assert!(s[1..].iter().all(ExchangeSpan::is_error));
        assert!(!format!("{s:?}").contains("SECRET"));
    }

    #[test]
    fn pending_requests_at_the_end_and_server_requests() {
        let mut c = Classifier::new();
        c.feed(
            Direction::ServerToClient,
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"roots/list\"}\n",
            0.0,
        );
        let ex = c.feed(
            Direction::ClientToServer,
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            1.0,
        );
        assert!(ex
            .iter()
            .all(|e| exchange_span(e, c.facts(), "t").is_none()));
        let ex = c.close(5.0, crate::classify::CloseReason::ServerEnded);
        let s = exchange_span(&ex[0], c.facts(), "t").unwrap();
        assert_eq!(s.error_type.as_deref(), Some("server_error"));
        let mut c = Classifier::new();
        c.feed(
            Direction::ClientToServer,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            1.0,
        );
        let ex = c.close(5.0, crate::classify::CloseReason::ClientEnded);
        let s = exchange_span(&ex[0], c.facts(), "t").unwrap();
        assert_eq!(s.error_type.as_deref(), Some("cancelled"));
    }
}
