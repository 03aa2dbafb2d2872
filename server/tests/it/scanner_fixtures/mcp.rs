//! Fixture MCP servers over streamable HTTP, one per path `/mcp/<kind>[/<anything>]`:
//!
//! | kind | behaves like |
//! |---|---|
//! | `ok` | a TypeScript-SDK server: JSON answers, a session, two tools |
//! | `paged` | `ok`, with `tools/list` over three pages (5 tools) |
//! | `sse` | `ok`, answering in an event stream that stays open after the answer |
//! | `modern` | a 2026-07-28 server: `server/discover`, no session |
//! | `auth` | 401 with `WWW-Authenticate` |
//! | `html` | 200 with an HTML page |
//! | `redirect` | 302 to `/mcp/redirect-target` |
//! | `slow` | `ok`, answering `initialize` after 1 s |
//! | `hang` | accepts the request and never answers |
//!
//! Each host (the `Host` header's name, any port) counts the requests it is answering at
//! once and remembers the most it ever saw ([`Mcp::peaks`]).
//!
//! Like the SDK, the session servers refuse (400) a request after `initialize` without the
//! session id or with another protocol version, and (406) a POST whose `Accept` lacks JSON
//! or SSE. `ok` serves the description set with [`Mcp::set_description`].

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use futures_util::StreamExt;
use serde_json::{json, Value};

/// One request a fixture saw.
#[derive(Debug, Clone)]
pub struct Hit {
    pub kind: String,
    pub path: String,
    /// The JSON-RPC method, or the HTTP method when there is none.
    pub method: String,
    pub session: Option<String>,
    pub protocol: Option<String>,
}

struct Inner {
    description: String,
    hits: Vec<Hit>,
    log: bool,
    open: BTreeMap<String, usize>,
    peaks: BTreeMap<String, usize>,
    open_total: usize,
    peak_total: usize,
}

/// The running fixture servers.
#[derive(Clone)]
pub struct Mcp {
    pub base: String,
    inner: Arc<Mutex<Inner>>,
    app: Router,
}

/// One request being answered, counted against its host until dropped (answered, or the
/// client went away).
struct Open {
    inner: Arc<Mutex<Inner>>,
    host: String,
}

impl Open {
    fn new(inner: &Arc<Mutex<Inner>>, headers: &HeaderMap) -> Open {
        let host = header(headers, "host").unwrap_or_default();
        let host = host
            .rsplit_once(':')
            .map_or(host.as_str(), |(h, _)| h)
            .to_owned();
        let mut i = inner.lock().unwrap();
        let open = i.open.entry(host.clone()).or_default();
        *open += 1;
        let now = *open;
        let peak = i.peaks.entry(host.clone()).or_default();
        *peak = (*peak).max(now);
        i.open_total += 1;
        i.peak_total = i.peak_total.max(i.open_total);
        Open {
            inner: inner.clone(),
            host,
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut i = self.inner.lock().unwrap();
        i.open_total -= 1;
        if let Some(n) = i.open.get_mut(&self.host) {
            *n -= 1;
        }
    }
}

const PROTOCOL: &str = "2025-06-18";

fn tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description,
           "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}})
}

fn rpc(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn json_response(body: Value, session: Option<&str>) -> Response {
    let mut r = (
        StatusCode::OK,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Some(s) = session {
        r.headers_mut().insert("mcp-session-id", s.parse().unwrap());
    }
    r
}

/// An event stream with a notification, the answer, then nothing, never closing.
fn sse_response(body: Value, session: Option<&str>) -> Response {
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}});
    let events = vec![
        Ok::<_, std::io::Error>(Bytes::from(format!("event: message\ndata: {note}\n\n"))),
        Ok(Bytes::from(format!("event: message\ndata: {body}\n\n"))),
    ];
    let stream = futures_util::stream::iter(events).chain(futures_util::stream::pending());
    let mut r = Response::new(Body::from_stream(stream));
    r.headers_mut()
        .insert("content-type", "text/event-stream".parse().unwrap());
    if let Some(s) = session {
        r.headers_mut().insert("mcp-session-id", s.parse().unwrap());
    }
    r
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// The `tools/list` result a fixture of `kind` serves for `cursor`.
pub fn tools_page(kind: &str, cursor: Option<&str>, description: &str) -> Value {
    match (kind, cursor) {
        ("paged", None) => {
            json!({"tools": [tool("alpha", "first"), tool("beta", "second")], "nextCursor": "p2"})
        }
        ("paged", Some("p2")) => json!({"tools": [tool("gamma", "third")], "nextCursor": "p3"}),
        ("paged", Some(_)) => json!({"tools": [tool("delta", "fourth"), tool("epsilon", "fifth")]}),
        _ => json!({"tools": [tool("search", description), tool("fetch", "Fetch a page")]}),
    }
}

async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    Path(path): Path<String>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let _open = Open::new(&inner, &headers);
    let kind = path.split('/').next().unwrap_or("").to_owned();
    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let rpc_method = msg["method"].as_str().map(str::to_owned);
    let description = {
        let mut i = inner.lock().unwrap();
        if i.log {
            i.hits.push(Hit {
                kind: kind.clone(),
                path: path.clone(),
                method: rpc_method.clone().unwrap_or_else(|| method.to_string()),
                session: header(&headers, "mcp-session-id"),
                protocol: header(&headers, "mcp-protocol-version"),
            });
        }
        i.description.clone()
    };
    match kind.as_str() {
        "hang" => std::future::pending::<Response>().await,
        "auth" => (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer resource_metadata=\"https://auth.example.com/.well-known/oauth-protected-resource\"")],
            "",
        )
            .into_response(),
        "html" => (
            StatusCode::OK,
            [("content-type", "text/html")],
            "<!doctype html><html><body>Welcome</body></html>",
        )
            .into_response(),
        "redirect" => (StatusCode::FOUND, [("location", "/mcp/redirect-target")], "").into_response(),
        _ => session_server(&kind, &method, &headers, &msg, &description).await,
    }
}

async fn session_server(
    kind: &str,
    method: &Method,
    headers: &HeaderMap,
    msg: &Value,
    description: &str,
) -> Response {
    let session = format!("sess-{kind}");
    let id = &msg["id"];
    let rpc_method = msg["method"].as_str().unwrap_or("");
    let stateless = kind == "modern";
    if *method == Method::POST {
        let accept = header(headers, "accept").unwrap_or_default();
        if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
            return (StatusCode::NOT_ACCEPTABLE, "Not Acceptable").into_response();
        }
    }
    if rpc_method == "initialize" {
        if kind == "slow" {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let result = json!({"protocolVersion": PROTOCOL, "capabilities": {"tools": {}},
                            "serverInfo": {"name": format!("fixture-{kind}"), "version": "1.4.2"}});
        return respond(kind, rpc(id, result), Some(&session));
    }
    if rpc_method == "server/discover" {
        if !stateless {
            let err = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
            return json_response(err, None);
        }
        let result = json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fixture-modern", "version": "3.0.0"}}});
        return json_response(rpc(id, result), None);
    }
    if !stateless {
        let ok_session = header(headers, "mcp-session-id").as_deref() == Some(session.as_str());
        let ok_protocol = header(headers, "mcp-protocol-version").as_deref() == Some(PROTOCOL);
        if !ok_session || !ok_protocol {
            return (
                StatusCode::BAD_REQUEST,
                "Bad Request: No valid session ID provided",
            )
                .into_response();
        }
    }
    if *method == Method::DELETE {
        return StatusCode::OK.into_response();
    }
    match rpc_method {
        "notifications/initialized" => StatusCode::ACCEPTED.into_response(),
        "tools/list" => {
            let cursor = msg["params"]["cursor"].as_str();
            respond(kind, rpc(id, tools_page(kind, cursor, description)), None)
        }
        _ => json_response(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
            None,
        ),
    }
}

fn respond(kind: &str, body: Value, session: Option<&str>) -> Response {
    if kind == "sse" {
        sse_response(body, session)
    } else {
        json_response(body, session)
    }
}

impl Mcp {
    /// Starts the fixtures; `log` keeps every request for assertions.
    pub async fn start(log: bool) -> Mcp {
        let inner = Arc::new(Mutex::new(Inner {
            description: "Search the web".into(),
            hits: Vec::new(),
            log,
            open: BTreeMap::new(),
            peaks: BTreeMap::new(),
            open_total: 0,
            peak_total: 0,
        }));
        let app = Router::new()
            .route("/mcp/{*path}", any(handle))
            .with_state(inner.clone());
        let addr = super::serve(app.clone()).await;
        Mcp {
            base: format!("http://{addr}"),
            inner,
            app,
        }
    }

    /// Serves the same fixtures on `ip` too (any loopback address: 127.0.0.0/8 is all
    /// local), on a fresh port.
    pub async fn serve_on(&self, ip: IpAddr) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = self.app.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        addr
    }

    /// The most requests each host was answering at once.
    pub fn peaks(&self) -> BTreeMap<String, usize> {
        self.inner.lock().unwrap().peaks.clone()
    }

    /// The most requests all hosts together were answering at once.
    pub fn peak_total(&self) -> usize {
        self.inner.lock().unwrap().peak_total
    }

    /// The URL of a fixture of `kind` reached through the name `host` (resolved by the
    /// test's lookup to this server's address).
    pub fn url_via(&self, host: &str, kind: &str, suffix: &str) -> String {
        let port = self.base.rsplit(':').next().unwrap_or("");
        format!("http://{host}:{port}/mcp/{kind}/{suffix}")
    }

    /// The URL of a fixture of `kind` (`suffix` tells same-kind remotes apart).
    pub fn url(&self, kind: &str, suffix: &str) -> String {
        if suffix.is_empty() {
            format!("{}/mcp/{kind}", self.base)
        } else {
            format!("{}/mcp/{kind}/{suffix}", self.base)
        }
    }

    /// The description of the `search` tool served by `ok`.
    pub fn set_description(&self, d: &str) {
        self.inner.lock().unwrap().description = d.to_owned();
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.inner.lock().unwrap().hits.clone()
    }
}
