//! Runs `tests/vectors/classify.json` through [`Classifier`].

mod common;

use lowdown_core::classify::{Classifier, CloseReason, Direction};
use serde_json::{json, Value};

/// Writes integral floats as integers, so `10.0` from Rust equals `10` written by any
/// other host (JSON has one number type).
fn normalise(v: Value) -> Value {
    match v {
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                && n.is_f64() =>
        {
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
    for event in input["events"]
        .as_array()
        .ok_or("events must be an array")?
    {
        let at = event["at_ms"].as_f64().ok_or("at_ms must be a number")?;
        if event["close"] == json!(true) {
            let reason: CloseReason = serde_json::from_value(event["reason"].clone())
                .map_err(|e| format!("close needs a reason: {e}"))?;
            exchanges.extend(c.close(at, reason));
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
    want.extend(whole.close(0.0, CloseReason::ServerEnded));
    assert_eq!(want.len(), 2, "cancelled echo and ping: {want:?}");
    for cut in 0..session.len() {
        let mut c = Classifier::new();
        let mut got = c.feed(Direction::ClientToServer, &session.as_bytes()[..cut], 0.0);
        got.extend(c.feed(Direction::ClientToServer, &session.as_bytes()[cut..], 0.0));
        got.extend(c.feed(Direction::ServerToClient, reply, 0.0));
        got.extend(c.close(0.0, CloseReason::ServerEnded));
        assert_eq!(got, want, "split at {cut}");
        assert_eq!((c.pending(), c.buffered()), (0, 0));
    }
}

/// The real recorded sessions (examples/transcripts and tests/recordings), read at compile
/// time, each as (direction, at_ms, line) triples.
const RECORDINGS: &[(&str, &str)] = &[
    (
        "server-everything",
        include_str!("../../examples/transcripts/server-everything.jsonl"),
    ),
    (
        "python-sdk-time-legacy",
        include_str!("../../tests/recordings/python-sdk-time-legacy.jsonl"),
    ),
    (
        "python-sdk-time-modern",
        include_str!("../../tests/recordings/python-sdk-time-modern.jsonl"),
    ),
    (
        "ts-sdk-everything-tasks",
        include_str!("../../tests/recordings/ts-sdk-everything-tasks.jsonl"),
    ),
    (
        "ts-sdk-memory",
        include_str!("../../tests/recordings/ts-sdk-memory.jsonl"),
    ),
];

fn session(text: &str) -> Vec<(Direction, f64, String)> {
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("transcript line is JSON");
            let direction = serde_json::from_value(v["direction"].clone()).expect("direction");
            (
                direction,
                v["at_ms"].as_f64().expect("at_ms"),
                format!("{}\n", v["line"].as_str().expect("line")),
            )
        })
        .collect()
}

fn transcript() -> Vec<(Direction, f64, String)> {
    session(RECORDINGS[0].1)
}

#[test]
fn recorded_sessions_classify_the_same_in_any_chunk_size() {
    for (name, text) in RECORDINGS {
        let session = session(text);
        let mut whole = Classifier::new();
        let mut want: Vec<_> = session
            .iter()
            .flat_map(|(d, at, line)| whole.feed(*d, line.as_bytes(), *at))
            .collect();
        want.extend(whole.close(99_999.0, CloseReason::ClientEnded));
        assert!(want.len() >= 4, "{name}: {} exchanges", want.len());
        for size in [1, 2, 3, 7, 64, 4096] {
            let mut c = Classifier::new();
            let mut got = Vec::new();
            for (d, at, line) in &session {
                for part in line.as_bytes().chunks(size) {
                    got.extend(c.feed(*d, part, *at));
                }
            }
            got.extend(c.close(99_999.0, CloseReason::ClientEnded));
            assert_eq!(got, want, "{name}: chunk size {size}");
            assert_eq!(c.facts(), whole.facts(), "{name}");
            assert_eq!((c.pending(), c.buffered()), (0, 0), "{name}");
        }
    }
}

#[test]
fn mangled_sessions_never_panic() {
    // Deterministic xorshift: cut, drop and flip bytes of the real session, then feed it.
    let session = transcript();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut survived = 0;
    for _ in 0..300 {
        let mut c = Classifier::new();
        for (d, at, line) in &session {
            let mut bytes = line.clone().into_bytes();
            for _ in 0..(next() % 4) {
                let i = (next() as usize) % bytes.len();
                match next() % 3 {
                    0 => bytes[i] = (next() & 0xff) as u8,
                    1 => {
                        bytes.remove(i);
                    }
                    _ => bytes.insert(i, b"{}[]\",:\\\n\r"[(next() % 10) as usize]),
                }
                if bytes.is_empty() {
                    break;
                }
            }
            let cut = (next() as usize) % (bytes.len() + 1);
            survived += c.feed(*d, &bytes[..cut], *at).len();
            survived += c.feed(*d, &bytes[cut..], *at).len();
        }
        survived += c.close(9999.0, CloseReason::ServerEnded).len();
        assert_eq!((c.pending(), c.buffered()), (0, 0));
    }
    // Most lines survive a few flipped bytes inside strings; the classifier keeps going.
    assert!(survived > 300, "only {survived} exchanges survived");
}
