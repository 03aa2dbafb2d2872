//! `POST /api/interactions` over `oneshot`, on SQLite and PostgreSQL: acceptance,
//! all-or-nothing validation, idempotency, size limits and privacy.

mod common;

use common::{call, get, post, record, TestDb};
use serde_json::{json, Value};

async fn stored(t: &TestDb) -> i64 {
    t.count("interactions").await
}

async fn single_record_is_stored_and_read_back(t: &TestDb) {
    let app = t.app();
    let r = post(
        &app,
        "/api/interactions",
        &record("npm:demo-server", "success"),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["ok"], true);
    assert_eq!(r.json["accepted"], 1);
    let rep = get(&app, "/api/reputation/npm:demo-server").await;
    assert_eq!(rep.status, 200);
    assert_eq!(rep.json["interactions"], 1);
    assert_eq!(rep.json["success_rate"], 1.0);
    assert_eq!(rep.json["confidence"], "low");
}
on_both!(single_record_is_stored_and_read_back);

async fn batch_is_all_or_nothing_and_names_the_index(t: &TestDb) {
    let app = t.app();
    let mut bad = record("npm:demo", "exploded");
    bad["actor"] = json!("agent:x");
    let body = json!([
        record("npm:demo", "success"),
        record("npm:demo", "failure"),
        bad
    ]);
    let r = post(&app, "/api/interactions", &body).await;
    assert_eq!(r.status, 400);
    let msg = r.json["error"].as_str().unwrap();
    assert!(msg.starts_with("records[2].outcome"), "{msg}");
    assert_eq!(stored(t).await, 0, "a rejected batch wrote nothing");
    assert_eq!(t.count("rollup_targets").await, 0);

    let ok: Vec<Value> = (0..1000).map(|_| record("npm:demo", "success")).collect();
    let r = post(&app, "/api/interactions", &Value::Array(ok)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["accepted"], 1000);
    assert_eq!(stored(t).await, 1000);

    let too_many: Vec<Value> = (0..1001).map(|_| record("npm:demo", "success")).collect();
    let r = post(&app, "/api/interactions", &Value::Array(too_many)).await;
    assert_eq!(r.status, 400);
    assert!(
        r.json["error"].as_str().unwrap().contains("1000"),
        "{}",
        r.text
    );
    assert_eq!(stored(t).await, 1000);
    common::assert_rollups_match_raw(t).await;
}
on_both!(batch_is_all_or_nothing_and_names_the_index);

async fn repeated_record_ids_count_once(t: &TestDb) {
    let app = t.app();
    let mut a = record("npm:retry", "success");
    a["record_id"] = json!("spool-0001");
    let r = post(&app, "/api/interactions", &json!([a.clone(), a.clone()])).await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json["accepted"], 2);
    assert_eq!(r.json["stored"], 1);
    // The proxy retries from its spool: acknowledged again, never counted twice.
    let r = post(&app, "/api/interactions", &a).await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json["stored"], 0);
    let rep = get(&app, "/api/reputation/npm:retry").await;
    assert_eq!(rep.json["interactions"], 1);
    common::assert_rollups_match_raw(t).await;
}
on_both!(repeated_record_ids_count_once);

/// Each case: body, expected status, a text the error must contain.
fn bad_bodies() -> Vec<(String, u16, &'static str)> {
    let with = |k: &str, v: Value| {
        let mut r = record("npm:x", "success");
        r[k] = v;
        r.to_string()
    };
    let without = |k: &str| {
        let mut r = record("npm:x", "success");
        r.as_object_mut().unwrap().remove(k);
        r.to_string()
    };
    vec![
        ("{\"target\": ".into(), 400, "malformed JSON"),
        ("".into(), 400, "empty body"),
        ("42".into(), 400, "record"),
        ("[]".into(), 400, "records"),
        (with("outcome", json!(1)), 400, "outcome"),
        (with("outcome", json!("great")), 400, "outcome"),
        (with("target_type", json!("robot")), 400, "target_type"),
        (with("source", json!("hearsay")), 400, "source"),
        (with("latency_ms", json!("fast")), 400, "latency_ms"),
        (with("latency_ms", json!(-5)), 400, "latency_ms"),
        (with("target", json!("x".repeat(257))), 400, "target"),
        (with("actor", json!("a".repeat(129))), 400, "actor"),
        (with("target", json!("bad\u{0007}name")), 400, "target"),
        (with("node_id", json!("node-1")), 400, "node_id"),
        (with("schema_hash", json!("xyz")), 400, "schema_hash"),
        (with("record_id", json!("has space")), 400, "record_id"),
        (without("target"), 400, "target"),
        (without("outcome"), 400, "outcome"),
        (without("task_type"), 400, "task_type"),
    ]
}

async fn bad_input_gets_a_named_4xx_and_writes_nothing(t: &TestDb) {
    let app = t.app();
    for (body, status, needle) in bad_bodies() {
        let r = call(&app, "POST", "/api/interactions", &[], Some(body.clone())).await;
        assert_eq!(r.status.as_u16(), status, "body {body:.80}: {}", r.text);
        let msg = r.json["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no JSON error for {body:.80}: {}", r.text));
        assert!(msg.contains(needle), "error {msg:?} should name {needle:?}");
    }
    assert_eq!(stored(t).await, 0);
}
on_both!(bad_input_gets_a_named_4xx_and_writes_nothing);

async fn bodies_over_one_mib_get_413(t: &TestDb) {
    let app = t.app();
    let mut r = record("npm:big", "success");
    r["padding"] = json!("p".repeat(1024 * 1024));
    let res = post(&app, "/api/interactions", &r).await;
    assert_eq!(res.status, 413);
    assert!(
        res.json["error"].as_str().unwrap().contains("1048576"),
        "{}",
        res.text
    );
    assert_eq!(stored(t).await, 0);
}
on_both!(bodies_over_one_mib_get_413);

async fn unknown_fields_are_dropped_and_errors_never_echo_values(t: &TestDb) {
    let app = t.app();
    const CANARY: &str = "CANARY-7f3a-secret-argument";
    let mut r = record("npm:privacy", "success");
    r["arguments"] = json!({"query": CANARY});
    r["result"] = json!(CANARY);
    r["error_message"] = json!(CANARY);
    let res = post(&app, "/api/interactions", &r).await;
    assert_eq!(res.status, 201);
    let row = sqlx::query("SELECT * FROM interactions")
        .fetch_one(&t.db.pool)
        .await
        .unwrap();
    use sqlx::Row;
    for i in 0..row.len() {
        if let Ok(Some(s)) = row.try_get::<Option<String>, _>(i) {
            assert!(!s.contains(CANARY), "column {i} stored the canary");
        }
    }
    let mut bad = record("npm:privacy", "success");
    bad["outcome"] = json!(CANARY);
    let res = post(&app, "/api/interactions", &bad).await;
    assert_eq!(res.status, 400);
    assert!(
        !res.text.contains(CANARY),
        "error echoed the submitted value: {}",
        res.text
    );
}
on_both!(unknown_fields_are_dropped_and_errors_never_echo_values);
