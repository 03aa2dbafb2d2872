//! The Rust baseline for the binding overhead table: the same calls as overhead.mjs and
//! overhead.py make, straight into lowdown-core. Prints `{"rust": {op: ns_per_call}}`.

use lowdown_core::classify::{Classifier, Direction};
use lowdown_core::redact::redact;
use lowdown_core::schema_hash::hash_tools_result;
use lowdown_core::telemetry::{host_verdict, HostPolicy};
use std::hint::black_box;
use std::time::Instant;

/// Nanoseconds per call of `f`, after a warm-up, over about 0.3 s.
fn time(mut f: impl FnMut()) -> f64 {
    for _ in 0..1000 {
        f();
    }
    let mut n = 1000u64;
    loop {
        let start = Instant::now();
        for _ in 0..n {
            f();
        }
        let spent = start.elapsed().as_secs_f64();
        if spent > 0.3 {
            return spent * 1e9 / n as f64;
        }
        n *= 4;
    }
}

fn main() {
    let fixtures = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../bench/bindings/fixtures.json"
    ))
    .expect("bench/bindings/fixtures.json");
    let fx: serde_json::Value = serde_json::from_str(&fixtures).expect("fixtures are JSON");
    let text = fx["redact"].as_str().expect("redact").to_owned();
    let host = fx["host"].as_str().expect("host").to_owned();
    let (req, resp) = (
        fx["request"].as_str().expect("request").to_owned(),
        fx["response"].as_str().expect("response").to_owned(),
    );
    let tools = fx["tools_list"].as_str().expect("tools_list").to_owned();
    let policy = HostPolicy::from_env_values(None, None);
    let mut c = Classifier::new();
    let results = [
        (
            "redact",
            time(|| drop(black_box(redact(black_box(&text)).into_owned()))),
        ),
        (
            "host_verdict",
            time(|| drop(black_box(host_verdict(black_box(&host), &policy)))),
        ),
        (
            "classifier_feed",
            time(|| {
                black_box(c.feed(Direction::ClientToServer, req.as_bytes(), 1.0));
                black_box(c.feed(Direction::ServerToClient, resp.as_bytes(), 2.0));
            }) / 2.0,
        ),
        (
            "hash_tools_result",
            time(|| drop(black_box(hash_tools_result(tools.as_bytes())))),
        ),
    ];
    let body: Vec<String> = results
        .iter()
        .map(|(op, ns)| format!("\"{op}\": {ns:.1}"))
        .collect();
    println!("{{\"rust\": {{{}}}}}", body.join(", "));
}
