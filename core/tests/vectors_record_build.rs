//! Runs `tests/vectors/record_build.json` and `tests/vectors/server_version.json`, and
//! checks end to end that nothing a tool was sent or returned reaches a record.

mod common;

use lowdown_core::classify::{Classifier, CloseReason, Direction, Exchange, SessionFacts};
use lowdown_core::record::build::{build_record, sanitize_server_version, RecordContext};
use lowdown_core::record::Outcome;
use serde_json::{json, Value};

/// Writes integral floats as integers (JSON has one number type; other hosts write `10`).
fn normalise(v: Value) -> Value {
    match v {
        Value::Number(n)
            if n.is_f64()
                && n.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15) =>
        {
            json!(n.as_f64().unwrap_or_default() as i64)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(normalise).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, normalise(v))).collect()),
        other => other,
    }
}

fn field<T: serde::de::DeserializeOwned>(input: &Value, key: &str) -> Result<T, String> {
    serde_json::from_value(input[key].clone()).map_err(|e| format!("{key}: {e}"))
}

#[test]
fn record_build_vectors() {
    common::check("record_build.json", |input| {
        let exchange: Exchange = field(input, "exchange")?;
        let facts: SessionFacts = field(input, "facts")?;
        let ctx: RecordContext = field(input, "ctx")?;
        let record_id: Option<String> = field(input, "record_id")?;
        let record = build_record(&exchange, &facts, &ctx, record_id);
        Ok(normalise(
            serde_json::to_value(record).map_err(|e| e.to_string())?,
        ))
    });
}

#[test]
fn server_version_vectors() {
    common::check("server_version.json", |input| {
        let raw = input["raw"].as_str().ok_or("raw must be a string")?;
        Ok(json!(sanitize_server_version(raw)))
    });
}

#[test]
fn arguments_results_errors_and_ids_never_reach_a_record() {
    let session: [(Direction, &str); 8] = [
        (
            Direction::ClientToServer,
            r#"{"jsonrpc":"2.0","id":"CANARY-ID-1","method":"initialize","params":{"clientInfo":{"name":"CANARY-CLIENT","version":"1"}}}"#,
        ),
        (
            Direction::ServerToClient,
            r#"{"jsonrpc":"2.0","id":"CANARY-ID-1","result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"CANARY-SERVER-NAME","version":"CANARY VERSION"},"instructions":"CANARY-INSTRUCTIONS"}}"#,
        ),
        (
            Direction::ClientToServer,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"CANARY-ARGUMENT","token":"sk-CANARYSECRET"}}}"#,
        ),
        (
            Direction::ServerToClient,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"CANARY-RESULT"}],"structuredContent":{"x":"CANARY-STRUCTURED"}}}"#,
        ),
        (
            Direction::ClientToServer,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"CANARY-ARGUMENT-2"}}}"#,
        ),
        (
            Direction::ServerToClient,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"CANARY-ERROR-MESSAGE","data":"CANARY-ERROR-DATA"}}"#,
        ),
        (
            Direction::ClientToServer,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"p":"CANARY-PENDING"}}}"#,
        ),
        (
            Direction::ServerToClient,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"CANARY-LOG-LINE"}}"#,
        ),
    ];
    let mut c = Classifier::new();
    let mut exchanges = Vec::new();
    for (i, (direction, line)) in session.iter().enumerate() {
        exchanges.extend(c.feed(*direction, format!("{line}\n").as_bytes(), i as f64));
    }
    exchanges.extend(c.close(100.0, CloseReason::ServerEnded));
    let outcomes: Vec<Outcome> = exchanges.iter().map(|e| e.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Success,
            Outcome::Success,
            Outcome::Failure,
            Outcome::Failure
        ]
    );
    let ctx = RecordContext {
        target: "npm:demo".into(),
        ..RecordContext::default()
    };
    let records: Vec<_> = exchanges
        .iter()
        .filter_map(|e| build_record(e, c.facts(), &ctx, None))
        .collect();
    assert_eq!(records.len(), 4);
    let text = serde_json::to_string(&records).expect("records serialise");
    assert!(
        !text.contains("CANARY"),
        "a canary leaked into a record: {text}"
    );
    assert!(text.contains(r#""task_type":"echo""#) && text.contains(r#""task_type":"initialize""#));
}

#[test]
fn every_built_record_passes_the_apis_validation_whatever_the_tool_name() {
    use lowdown_core::record::validate::validate_record;
    let ctx = RecordContext {
        target: "npm:demo".into(),
        node_id: Some("ld_0123456789ab".into()),
        ..RecordContext::default()
    };
    let names = [
        "t".repeat(129),
        "é".repeat(500),
        format!("{}😀😀", "a".repeat(127)),
        String::new(),
        "\u{0}\u{7f}\u{9f}".to_owned(),
        "tab\tnewline\nname".to_owned(),
        "\u{fffd}".to_owned(),
    ];
    for name in names {
        let exchange = Exchange {
            direction: Direction::ClientToServer,
            id: "1".into(),
            method: "tools/call".into(),
            tool_name: Some(name.clone()),
            request_kind: lowdown_core::record::RequestKind::Tool,
            outcome: Outcome::Success,
            failure_type: None,
            error_layer: None,
            error_code: None,
            started_ms: 0.0,
            latency_ms: 1e12,
            has_content: false,
        };
        let record =
            build_record(&exchange, &SessionFacts::default(), &ctx, None).expect("a record");
        let json = serde_json::to_value(&record).expect("serialises");
        let back = validate_record(&json).unwrap_or_else(|e| panic!("{name:?}: refused: {e}"));
        assert_eq!(back, record, "{name:?}");
    }
}
