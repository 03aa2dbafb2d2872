use super::*;
use crate::record::{ErrorLayer, FailureType, Outcome, RequestKind};
use serde_json::json;

const CANARY: &str = "CANARY-7f3a-do-not-store";

fn kv(key: &str, v: &str) -> serde_json::Value {
    json!({"key": key, "value": {"stringValue": v}})
}

/// One OTLP/JSON body of these spans (attributes given as `(key, value)`), for one resource.
fn body(resource: &[(&str, &str)], spans: &[serde_json::Value]) -> Vec<u8> {
    let attrs: Vec<_> = resource.iter().map(|(k, v)| kv(k, v)).collect();
    serde_json::to_vec(&json!({"resourceSpans": [{
        "resource": {"attributes": attrs},
        "scopeSpans": [{"scope": {"name": CANARY}, "spans": spans}]
    }]}))
    .unwrap()
}

fn span(id: u8, kind: i32, attrs: &[(&str, &str)]) -> serde_json::Value {
    let attributes: Vec<_> = attrs.iter().map(|(k, v)| kv(k, v)).collect();
    json!({
        "traceId": "0102030405060708090a0b0c0d0e0f10",
        "spanId": format!("00000000000000{id:02x}"),
        "name": format!("tools/call {CANARY}"),
        "kind": kind,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": 1_700_000_000_012_345_678u64,
        "attributes": attributes,
        "events": [{"name": CANARY, "attributes": [kv("exception.message", CANARY)]}],
        "status": {"code": 0, "message": CANARY}
    })
}

fn one(attrs: &[(&str, &str)]) -> Result<InteractionRecord, Refusal> {
    let traces = json::decode_traces(&body(
        &[("telemetry.sdk.name", "opentelemetry")],
        &[span(1, 3, attrs)],
    ))
    .unwrap();
    span_records(&traces).remove(0)
}

const CALL: [(&str, &str); 3] = [
    ("mcp.method.name", "tools/call"),
    ("gen_ai.tool.name", "get_weather"),
    ("server.address", "mcp.example.org"),
];

#[test]
fn a_client_tool_call_is_a_record_of_that_tool() {
    let r = one(&CALL).unwrap();
    assert_eq!(r.target, "url:mcp.example.org");
    assert_eq!(r.task_type, "get_weather");
    assert_eq!(r.request_kind, RequestKind::Tool);
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(r.latency_ms, Some(12.346));
    assert_eq!(r.recorder_version.as_deref(), Some("otlp/opentelemetry"));
    assert_eq!(r.source, crate::record::Source::Organic);
    assert!(r.record_id.as_deref().unwrap().starts_with("ot_"));
    assert_eq!(r.node_id, None);
}

#[test]
fn lowdown_target_wins_over_the_address_and_the_resource_can_carry_it() {
    let mut attrs = CALL.to_vec();
    attrs.push(("lowdown.target", "npm:@scope/server"));
    assert_eq!(one(&attrs).unwrap().target, "npm:@scope/server");
    let traces = json::decode_traces(&body(
        &[("lowdown.target", "pypi:mcp-server-time")],
        &[span(1, 3, &[("mcp.method.name", "tools/list")])],
    ))
    .unwrap();
    let r = span_records(&traces).remove(0).unwrap();
    assert_eq!(r.target, "pypi:mcp-server-time");
    assert_eq!(r.recorder_version.as_deref(), Some("otlp/unknown"));
}

#[test]
fn error_type_gives_outcome_and_layer() {
    let with = |e: &str| {
        let mut a = CALL.to_vec();
        a.push(("error.type", e));
        let r = one(&a).unwrap();
        (r.outcome, r.failure_type, r.error_layer)
    };
    let f = |l, t| (Outcome::Failure, Some(t), Some(l));
    assert_eq!(
        with("tool_error"),
        f(ErrorLayer::Tool, FailureType::ToolError)
    );
    assert_eq!(
        with("-32602"),
        f(ErrorLayer::Request, FailureType::InvalidArguments)
    );
    assert_eq!(with("-32601"), f(ErrorLayer::Request, FailureType::Unknown));
    assert_eq!(
        with("-32603"),
        f(ErrorLayer::Server, FailureType::ServerError)
    );
    assert_eq!(with("-32001"), f(ErrorLayer::Server, FailureType::Timeout));
    assert_eq!(with("timeout"), f(ErrorLayer::Server, FailureType::Timeout));
    assert_eq!(
        with("java.io.IOException"),
        f(ErrorLayer::Server, FailureType::Unknown)
    );
    assert_eq!(with("cancelled"), (Outcome::Cancelled, None, None));
    // A code in rpc.response.status_code when error.type is a name.
    let mut a = CALL.to_vec();
    a.extend([
        ("error.type", "_OTHER"),
        ("rpc.response.status_code", "-32600"),
    ]);
    assert_eq!(one(&a).unwrap().error_layer, Some(ErrorLayer::Request));
}

#[test]
fn other_methods_are_protocol_requests_and_notifications_no_records() {
    let r = one(&[
        ("mcp.method.name", "tools/list"),
        ("server.address", "mcp.example.org"),
    ])
    .unwrap();
    assert_eq!(
        (r.request_kind, r.task_type.as_str()),
        (RequestKind::Protocol, "tools/list")
    );
    let n = one(&[
        ("mcp.method.name", "notifications/initialized"),
        ("server.address", "a.example.org"),
    ]);
    assert_eq!(n, Err(Refusal::Notification));
    assert_eq!(
        one(&[("server.address", "a.example.org")]),
        Err(Refusal::NotMcp)
    );
    assert_eq!(one(&[("mcp.method.name", "ping")]), Err(Refusal::NoTarget));
    assert_eq!(
        one(&[
            ("mcp.method.name", "tools/call"),
            ("server.address", "a.example.org")
        ]),
        Err(Refusal::NoToolName)
    );
}

#[test]
fn server_spans_follow_the_caller_fault_rule_and_twins_count_once() {
    let mut a = CALL.to_vec();
    a.push(("error.type", "-32603"));
    let mut unset = span(2, 2, &a);
    let traces = json::decode_traces(&body(&[], &[unset.clone()])).unwrap();
    let r = span_records(&traces).remove(0).unwrap();
    assert_eq!(
        r.error_layer,
        Some(ErrorLayer::Request),
        "status unset: the caller's fault"
    );
    unset["status"] = json!({"code": 2});
    let traces = json::decode_traces(&body(&[], &[unset.clone()])).unwrap();
    let r = span_records(&traces).remove(0).unwrap();
    assert_eq!(r.error_layer, Some(ErrorLayer::Server));
    // The server span of a client span in the same request.
    unset["parentSpanId"] = json!("0000000000000001");
    let traces = json::decode_traces(&body(&[], &[span(1, 3, &CALL), unset])).unwrap();
    let out = span_records(&traces);
    assert!(out[0].is_ok());
    assert_eq!(out[1], Err(Refusal::SameExchange));
}

#[test]
fn only_mapped_attributes_survive_decoding() {
    let mut a = CALL.to_vec();
    a.extend([
        ("gen_ai.tool.call.arguments", CANARY),
        ("user.secret", CANARY),
    ]);
    let bytes = body(
        &[
            ("service.name", CANARY),
            ("telemetry.sdk.name", "opentelemetry"),
        ],
        &[span(1, 3, &a)],
    );
    let traces = json::decode_traces(&bytes).unwrap();
    assert!(!format!("{traces:?}").contains("CANARY"));
    let r = span_records(&traces).remove(0).unwrap();
    assert!(!serde_json::to_string(&r).unwrap().contains("CANARY"));
}

#[test]
fn long_and_hostile_values_are_cut_or_refused_never_echoed() {
    let long = "x".repeat(100_000);
    let mut a = CALL.to_vec();
    a[1] = ("gen_ai.tool.name", &long);
    assert_eq!(one(&a).unwrap().task_type.chars().count(), 128);
    let mut a = CALL.to_vec();
    a.push(("lowdown.target", &long));
    let e = one(&a).unwrap_err();
    assert!(
        matches!(e, Refusal::Invalid { ref detail } if detail.starts_with("target:")),
        "{e}"
    );
    // Refusals serialise with their stable kind.
    assert_eq!(serde_json::to_value(&e).unwrap()["type"], "invalid");
    assert_eq!(
        serde_json::to_value(Refusal::NotMcp).unwrap(),
        json!({"type": "not_mcp"})
    );
    assert!(!e.to_string().contains("xxxx"));
    let mut a = CALL.to_vec();
    a.push(("mcp.protocol.version", "<script>"));
    assert_eq!(one(&a).unwrap().protocol_version, None);
}

#[test]
fn bad_times_and_too_many_spans_are_refused() {
    let mut s = span(1, 3, &CALL);
    s["endTimeUnixNano"] = json!("1");
    let traces = json::decode_traces(&body(&[], &[s])).unwrap();
    assert_eq!(span_records(&traces)[0], Err(Refusal::BadTimes));
    let many: Vec<_> = (0..(MAX_SPANS + 2))
        .map(|i| span((i % 250) as u8, 3, &CALL))
        .collect();
    let out = span_records(&json::decode_traces(&body(&[], &many)).unwrap());
    assert_eq!(
        out.iter().filter(|r| **r == Err(Refusal::TooMany)).count(),
        2
    );
}

#[test]
fn protobuf_and_json_decode_to_the_same_spans() {
    use prost::Message;
    let a = |k: &str, v: &str| proto::KeyValue {
        key: k.into(),
        value: Some(proto::AnyValue {
            value: Some(proto::Any::StringValue(v.into())),
        }),
    };
    let req = proto::ExportTraceServiceRequest {
        resource_spans: vec![proto::PbResourceSpans {
            resource: Some(proto::PbResource {
                attributes: vec![a("telemetry.sdk.name", "opentelemetry")],
            }),
            scope_spans: vec![proto::PbScopeSpans {
                spans: vec![proto::PbSpan {
                    trace_id: hex::decode("0102030405060708090a0b0c0d0e0f10").unwrap(),
                    span_id: vec![0, 0, 0, 0, 0, 0, 0, 1],
                    parent_span_id: vec![],
                    kind: 3,
                    start_time_unix_nano: 1_700_000_000_000_000_000,
                    end_time_unix_nano: 1_700_000_000_012_345_678,
                    attributes: CALL.iter().map(|(k, v)| a(k, v)).collect(),
                    status: Some(proto::PbStatus { code: 0 }),
                }],
            }],
        }],
    };
    let from_proto = proto::decode_traces(&req.encode_to_vec()).unwrap();
    let from_json = json::decode_traces(&body(
        &[("telemetry.sdk.name", "opentelemetry")],
        &[span(1, 3, &CALL)],
    ))
    .unwrap();
    assert_eq!(from_proto, from_json);
    assert!(proto::decode_traces(b"\xff\xff\xff").is_err());
    assert!(json::decode_traces(b"{\"resourceSpans\": 7}").is_err());
    assert!(json::decode_traces(b"[1]").is_err());
}

#[test]
fn metrics_are_counted_never_recorded() {
    let body = json!({"resourceMetrics": [{"scopeMetrics": [{"metrics": [
        {"name": MCP_CLIENT_DURATION, "histogram": {"dataPoints": [{}, {}], "aggregationTemporality": 2}},
        {"name": "other", "sum": {"dataPoints": [{}]}}
    ]}]}]});
    let m = json::decode_metrics(&serde_json::to_vec(&body).unwrap()).unwrap();
    assert_eq!((m.data_points, m.mcp_duration_points), (3, 2));
    assert!(metric_records(&m).is_empty());
}

#[test]
fn the_summary_counts_each_reason_once() {
    let s = refusal_summary(["a", "b", "a"], "span");
    assert_eq!(s, "2 spans: a; 1 span: b");
    assert_eq!(json::export_response("rejectedSpans", 0, ""), json!({}));
    assert_eq!(
        json::export_response("rejectedSpans", 2, "x"),
        json!({"partialSuccess": {"rejectedSpans": "2", "errorMessage": "x"}})
    );
}
