//! Runs `tests/vectors/classify.json` through [`Classifier`].

mod common;

use lowdown_core::classify::{Classifier, Direction};
use serde_json::{json, Value};

/// Writes integral floats as integers, so `10.0` from Rust equals `10` written by any
/// other host (JSON has one number type).
fn normalise(v: Value) -> Value {
    match v {
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15) && n.is_f64() => {
            json!(n.as_f64().unwrap_or_default() as i64)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(normalise).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, normalise(v))).collect()),
        other => other,
    }
}

fn run(input: &Value) -> Result<Value, String> {
    let mut c = Classifier::new();
    let mut exchanges = Vec::new();
    for event in input["events"].as_array().ok_or("events must be an array")? {
        let at = event["at_ms"].as_f64().ok_or("at_ms must be a number")?;
        if event["close"] == json!(true) {
            exchanges.extend(c.close(at));
            continue;
        }
        let direction = match event["dir"].as_str() {
            Some("c2s") => Direction::ClientToServer,
            Some("s2c") => Direction::ServerToClient,
            other => return Err(format!("bad dir {other:?}")),
        };
        exchanges.extend(c.feed(direction, &common::bytes(&event["data"]), at));
    }
    let out = json!({ "exchanges": exchanges, "facts": c.facts() });
    Ok(normalise(out))
}

#[test]
fn classify_vectors() {
    common::check("classify.json", run);
}

#[test]
fn every_split_of_a_session_gives_the_same_exchanges() {
    let session = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"é"}}}"#,
        "\r\n",
        r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]"#,
        "\n"
    );
    let reply = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}";
    let mut whole = Classifier::new();
    let mut want = whole.feed(Direction::ClientToServer, session.as_bytes(), 0.0);
    want.extend(whole.feed(Direction::ServerToClient, reply, 0.0));
    want.extend(whole.close(0.0));
    assert_eq!(want.len(), 2, "cancelled echo and ping: {want:?}");
    for cut in 0..session.len() {
        let mut c = Classifier::new();
        let mut got = c.feed(Direction::ClientToServer, &session.as_bytes()[..cut], 0.0);
        got.extend(c.feed(Direction::ClientToServer, &session.as_bytes()[cut..], 0.0));
        got.extend(c.feed(Direction::ServerToClient, reply, 0.0));
        got.extend(c.close(0.0));
        assert_eq!(got, want, "split at {cut}");
        assert_eq!((c.pending(), c.buffered()), (0, 0));
    }
}
