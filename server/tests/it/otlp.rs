//! OTLP/HTTP in (`POST /v1/traces`, `POST /v1/metrics`; issue 27): MCP spans become
//! records through the path of `POST /api/interactions`, checked in the answers; refusals
//! are partial successes; hostile bodies (malformed protobuf and JSON, another content
//! type, a gzip bomb, huge values, canaries outside the mapped attributes) get OTLP's
//! error answers and leave nothing behind. On SQLite and PostgreSQL. The real SDKs'
//! exports are in `tests/otlp` (Python and Node).

use std::io::Write;
use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use lowdown_core::otlp::proto;
use lowdown_server::db::quota::Limits;
use prost::Message;
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::common::prowl::assert_nowhere_in_db;
use crate::common::{reputation, TestDb};

const CANARY: &str = "OTLP-CANARY-5d1e";

/// An answer: status, headers and body bytes.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `POST path` from client address `ip` with these headers and body.
async fn send(
    app: &Router,
    path: &str,
    ip: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Answer {
    let mut req = Request::post(path);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut req = req.body(Body::from(body)).unwrap();
    req.extensions_mut()
        .insert(ConnectInfo(SocketAddr::new(ip.parse().unwrap(), 40000)));
    let res = app.clone().oneshot(req).await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    let body = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap()
        .to_vec();
    Answer {
        status,
        headers,
        body,
    }
}

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];
const PROTOBUF: [(&str, &str); 1] = [("content-type", "application/x-protobuf")];

fn kv(key: &str, v: &str) -> Value {
    json!({"key": key, "value": {"stringValue": v}})
}

/// A client span `n` with these string attributes, canaries in everything not mapped.
fn span(n: u32, attrs: &[(&str, &str)]) -> Value {
    let mut attributes: Vec<Value> = attrs.iter().map(|(k, v)| kv(k, v)).collect();
    attributes.push(kv("gen_ai.tool.call.arguments", CANARY));
    attributes.push(
        json!({"key": "app.blob", "value": {"arrayValue": {"values": [{"stringValue": CANARY}]}}}),
    );
    json!({
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": format!("{n:016x}"),
        "name": format!("tools/call {CANARY}"),
        "kind": 3,
        "startTimeUnixNano": "1765000000000000000",
        "endTimeUnixNano": "1765000000250000000",
        "attributes": attributes,
        "events": [{"name": "exception", "attributes": [kv("exception.message", CANARY)]}],
        "links": [{"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "0000000000000001", "attributes": [kv("x", CANARY)]}],
        "status": {"code": 0, "message": CANARY}
    })
}

fn traces_body(spans: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({"resourceSpans": [{
        "resource": {"attributes": [kv("telemetry.sdk.name", "opentelemetry"), kv("service.name", CANARY), kv("host.name", CANARY)]},
        "scopeSpans": [{"scope": {"name": CANARY, "version": "1"}, "spans": spans}]
    }]}))
    .unwrap()
}

fn call(tool: &str) -> Vec<(&'static str, String)> {
    vec![
        ("mcp.method.name", "tools/call".into()),
        ("gen_ai.tool.name", tool.into()),
        ("server.address", "mcp.weather.example.com".into()),
    ]
}

fn attrs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, s)| (*k, s.as_str())).collect()
}

async fn spans_become_records_and_refusals_partial_successes(t: &TestDb) {
    let app = t.app();
    let ok = call("forecast");
    let mut tool_error = call("forecast");
    tool_error.push(("error.type", "tool_error".into()));
    let mut bad_args = call("forecast");
    bad_args.push(("error.type", "-32602".into()));
    let list = vec![
        ("mcp.method.name", "tools/list".to_owned()),
        ("server.address", "mcp.weather.example.com".to_owned()),
    ];
    let spans = vec![
        span(1, &attrs(&ok)),
        span(2, &attrs(&tool_error)),
        span(3, &attrs(&bad_args)),
        span(4, &attrs(&list)),
        span(5, &[("http.request.method", "GET")]),
        span(
            6,
            &[
                ("mcp.method.name", "notifications/initialized"),
                ("server.address", "mcp.weather.example.com"),
            ],
        ),
        span(
            7,
            &[("mcp.method.name", "tools/call"), ("gen_ai.tool.name", "x")],
        ),
        span(
            8,
            &[("mcp.method.name", "ping"), ("server.address", "localhost")],
        ),
    ];
    let body = traces_body(spans);
    let a = send(&app, "/v1/traces", "203.0.113.7", &JSON, body.clone()).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.headers["content-type"], "application/json");
    let partial = &a.json()["partialSuccess"];
    assert_eq!(partial["rejectedSpans"], "4", "{}", a.text());
    let message = partial["errorMessage"].as_str().unwrap();
    for why in [
        "not an MCP span",
        "notification",
        "no target",
        "a private or special-use host (localhost) is never stored",
    ] {
        assert!(message.contains(why), "{message}");
    }
    assert!(!a.text().contains(CANARY));

    let r = reputation(&app, "url:mcp.weather.example.com").await;
    assert_eq!(r["interactions"], 3, "{r}");
    assert_eq!(r["success_rate"], 0.5, "{r}");
    assert_eq!(r["rejected_requests"], 1, "{r}");
    assert_eq!(r["protocol_requests"], 1, "{r}");
    assert_eq!(r["by_source"]["organic"], 3, "{r}");
    assert_eq!(r["networks"], 1, "{r}");
    assert_eq!(r["failure_breakdown"], json!({"tool_error": 1}), "{r}");
    assert!(!r.to_string().contains(CANARY));
    let rows: Vec<(String, String)> = t
        .rows("SELECT task_type, recorder_version FROM interactions ORDER BY task_type")
        .await;
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter().all(|(_, v)| v == "otlp/opentelemetry"),
        "{rows:?}"
    );

    // An exporter's retry of the same spans is acknowledged, never counted twice.
    let again = send(&app, "/v1/traces", "203.0.113.7", &JSON, body).await;
    assert_eq!(again.status, 200);
    assert_eq!(
        reputation(&app, "url:mcp.weather.example.com").await["interactions"],
        3
    );

    // A span carrying lowdown.target names its target.
    let mut named = call("search");
    named.push(("lowdown.target", "npm:@acme/mcp-search".into()));
    let a = send(
        &app,
        "/v1/traces",
        "203.0.113.7",
        &JSON,
        traces_body(vec![span(9, &attrs(&named))]),
    )
    .await;
    assert_eq!((a.status.as_u16(), a.json()), (200, json!({})));
    assert_eq!(
        reputation(&app, "npm:@acme/mcp-search").await["interactions"],
        1
    );
    assert_nowhere_in_db(t, CANARY).await;
}
on_both!(spans_become_records_and_refusals_partial_successes);

/// The same tool call as protobuf, encoded with the core's declarations of the messages.
fn protobuf_call(span_id: u8, tool: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let a = |k: &str, v: &str| proto::KeyValue {
        key: k.into(),
        value: Some(proto::AnyValue {
            value: Some(proto::Any::StringValue(v.into())),
        }),
    };
    let mut attributes = vec![
        a("mcp.method.name", "tools/call"),
        a("gen_ai.tool.name", tool),
        a("server.address", "mcp.files.example.com"),
    ];
    attributes.extend(extra.iter().map(|(k, v)| a(k, v)));
    proto::ExportTraceServiceRequest {
        resource_spans: vec![proto::PbResourceSpans {
            resource: Some(proto::PbResource {
                attributes: vec![a("telemetry.sdk.name", "opentelemetry")],
            }),
            scope_spans: vec![proto::PbScopeSpans {
                spans: vec![proto::PbSpan {
                    trace_id: vec![7; 16],
                    span_id: vec![0, 0, 0, 0, 0, 0, 0, span_id],
                    parent_span_id: vec![],
                    kind: 3,
                    start_time_unix_nano: 1_765_000_000_000_000_000,
                    end_time_unix_nano: 1_765_000_000_040_000_000,
                    attributes,
                    status: None,
                }],
            }],
        }],
    }
    .encode_to_vec()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

async fn protobuf_gzip_and_hostile_bodies(t: &TestDb) {
    let app = t.app();
    let ip = "198.51.100.20";
    let gz = [
        ("content-type", "application/x-protobuf"),
        ("content-encoding", "gzip"),
    ];
    let a = send(
        &app,
        "/v1/traces",
        ip,
        &gz,
        gzip(&protobuf_call(1, "read_file", &[])),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.headers["content-type"], "application/x-protobuf");
    assert_eq!(
        proto::ExportResponse::decode(&a.body[..])
            .unwrap()
            .partial_success,
        None
    );

    // A huge value in a mapped attribute is cut; in any other it is dropped.
    let huge = "y".repeat(400_000);
    let a = send(
        &app,
        "/v1/traces",
        ip,
        &PROTOBUF,
        protobuf_call(2, &huge, &[("other", &huge)]),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let r = reputation(&app, "url:mcp.files.example.com").await;
    assert_eq!(
        (r["interactions"].as_i64(), r["success_rate"].as_f64()),
        (Some(2), Some(1.0)),
        "{r}"
    );
    let (longest,): (i64,) = t
        .row("SELECT MAX(LENGTH(task_type)) FROM interactions")
        .await;
    assert_eq!(longest, 128);

    // Malformed protobuf: a google.rpc.Status in protobuf, code 3 (INVALID_ARGUMENT).
    let a = send(
        &app,
        "/v1/traces",
        ip,
        &PROTOBUF,
        b"\x0a\xff\xff\xff\xff\x0f garbage".to_vec(),
    )
    .await;
    assert_eq!(a.status, 400);
    let status = proto::RpcStatus::decode(&a.body[..]).unwrap();
    assert_eq!(status.code, 3);
    assert!(
        status.message.contains("not a valid OTLP protobuf message"),
        "{}",
        status.message
    );
    // Malformed JSON and JSON of another shape: the Status in JSON.
    for body in [
        &b"{\"resourceSpans\": ["[..],
        b"{\"resourceSpans\": [{\"scopeSpans\": 3}]}",
        b"[]",
    ] {
        let a = send(&app, "/v1/traces", ip, &JSON, body.to_vec()).await;
        assert_eq!(a.status, 400, "{}", a.text());
        assert_eq!(a.json()["code"], 3, "{}", a.text());
        assert!(a.json()["message"].as_str().unwrap().contains("OTLP JSON"));
    }
    // Another content type, another encoding, broken gzip.
    let a = send(
        &app,
        "/v1/traces",
        ip,
        &[("content-type", "text/plain")],
        b"x".to_vec(),
    )
    .await;
    assert_eq!(
        (a.status.as_u16(), a.json()["code"].as_i64()),
        (415, Some(3))
    );
    let br = [
        ("content-type", "application/json"),
        ("content-encoding", "br"),
    ];
    assert_eq!(
        send(&app, "/v1/traces", ip, &br, b"{}".to_vec())
            .await
            .status,
        415
    );
    let gzj = [
        ("content-type", "application/json"),
        ("content-encoding", "gzip"),
    ];
    assert_eq!(
        send(&app, "/v1/traces", ip, &gzj, b"not gzip".to_vec())
            .await
            .status,
        400
    );
    // A gzip bomb: 64 MiB of zeros in a few dozen KiB is refused, never inflated in full.
    let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    for _ in 0..64 {
        bomb.write_all(&[0u8; 1 << 20]).unwrap();
    }
    let bomb = bomb.finish().unwrap();
    assert!(bomb.len() < 1 << 20);
    let a = send(&app, "/v1/traces", ip, &gz, bomb).await;
    assert_eq!(a.status, 413, "{}", a.text());
    assert_eq!(proto::RpcStatus::decode(&a.body[..]).unwrap().code, 8);
    // A body over 1 MiB as sent.
    let a = send(&app, "/v1/traces", ip, &JSON, vec![b' '; (1 << 20) + 1]).await;
    assert_eq!(a.status, 413);
    // Metrics: decoded and acknowledged, never records.
    let before = t.count("interactions").await;
    let metrics = json!({"resourceMetrics": [{"scopeMetrics": [{"metrics": [{
        "name": "mcp.client.operation.duration", "unit": "s",
        "histogram": {"aggregationTemporality": 2, "dataPoints": [{
            "attributes": [kv("mcp.method.name", "tools/call"), kv("gen_ai.tool.name", "read_file"), kv("server.address", "mcp.files.example.com")],
            "count": "5", "sum": 1.5, "bucketCounts": ["5"], "explicitBounds": []}]}}]}]}]});
    let a = send(
        &app,
        "/v1/metrics",
        ip,
        &JSON,
        serde_json::to_vec(&metrics).unwrap(),
    )
    .await;
    assert_eq!(
        (a.status.as_u16(), a.json()),
        (200, json!({})),
        "{}",
        a.text()
    );
    let a = send(&app, "/v1/metrics", ip, &PROTOBUF, b"\xff".to_vec()).await;
    assert_eq!(a.status, 400);
    let a = send(&app, "/v1/metrics", ip, &PROTOBUF, Vec::new()).await;
    assert_eq!(a.status, 200);
    assert_eq!(t.count("interactions").await, before);
}
on_both!(protobuf_gzip_and_hostile_bodies);

async fn quotas_apply_to_spans(t: &TestDb) {
    let limits = Limits {
        records_per_network: 2,
        ..Limits::default()
    };
    let app = lowdown_server::app(t.state().with_limits(limits));
    let ip = "192.0.2.10";
    let spans: Vec<Value> = (1..=3)
        .map(|n| span(n, &attrs(&call("forecast"))))
        .collect();
    let a = send(&app, "/v1/traces", ip, &JSON, traces_body(spans)).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        a.json()["partialSuccess"]["rejectedSpans"],
        "1",
        "{}",
        a.text()
    );
    assert!(a.json()["partialSuccess"]["errorMessage"]
        .as_str()
        .unwrap()
        .contains("rate limit"));
    // Nothing taken: OTLP's throttling answer, which the exporter retries after Retry-After.
    let a = send(
        &app,
        "/v1/traces",
        ip,
        &JSON,
        traces_body(vec![span(9, &attrs(&call("forecast")))]),
    )
    .await;
    assert_eq!(a.status, 429, "{}", a.text());
    assert!(a.headers.contains_key("retry-after"));
    assert_eq!(a.json()["code"], 8);
    // Another network has its own budget.
    let a = send(
        &app,
        "/v1/traces",
        "192.0.3.10",
        &JSON,
        traces_body(vec![span(9, &attrs(&call("forecast")))]),
    )
    .await;
    assert_eq!(a.status, 200);
    let r = reputation(&app, "url:mcp.weather.example.com").await;
    assert_eq!(
        (r["interactions"].as_i64(), r["networks"].as_i64()),
        (Some(3), Some(2)),
        "{r}"
    );
}
on_both!(quotas_apply_to_spans);
