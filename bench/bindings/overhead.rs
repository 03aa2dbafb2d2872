//! The Rust baseline for the binding overhead table: the calls overhead.mjs and overhead.py
//! make, straight into lowdown-core. Prints `{"rust": {op: ns_per_call}}`.

use lowdown_core::classify::Direction;
use lowdown_core::record::build::RecordContext;
use lowdown_core::record::validate::validate_records;
use lowdown_core::record::{Recorder, Source};
use lowdown_core::telemetry::{prepare_observation, HostPolicy};
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
    let url = fx["url"].as_str().expect("url").to_owned();
    let req = format!("{}\n", fx["request"].as_str().expect("request"));
    let resp = format!("{}\n", fx["response"].as_str().expect("response"));
    let record: serde_json::Value =
        serde_json::from_str(fx["record"].as_str().expect("record")).expect("record is JSON");
    let policy = HostPolicy::from_env_values(None, None);
    let ctx = RecordContext {
        target: "npm:bench".to_owned(),
        ..RecordContext::default()
    };
    let mut r = Recorder::new(ctx, "bench");
    let results = [
        (
            "record_exchange",
            time(|| {
                black_box(r.feed(Direction::ClientToServer, req.as_bytes(), 1.0));
                black_box(r.feed(Direction::ServerToClient, resp.as_bytes(), 2.0));
            }),
        ),
        (
            "prepare_observation",
            time(|| {
                drop(black_box(prepare_observation(
                    black_box(&url),
                    "GET",
                    Some(200),
                    12.5,
                    Some(512),
                    Source::Organic,
                    &policy,
                )))
            }),
        ),
        (
            "validate_records",
            time(|| drop(black_box(validate_records(black_box(&record))))),
        ),
    ];
    let body: Vec<String> = results
        .iter()
        .map(|(op, ns)| format!("\"{op}\": {ns:.1}"))
        .collect();
    println!("{{\"rust\": {{{}}}}}", body.join(", "));
}
