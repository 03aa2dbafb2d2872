//! `POST /api/interactions` over `oneshot`, on SQLite and PostgreSQL: per-record
//! acceptance, idempotency, private hosts, size limits and privacy.

use crate::common;

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
    assert_eq!(rep.status, 200, "{}", rep.text);
    assert_eq!(rep.json["interactions"], 1);
    assert_eq!(rep.json["success_rate"], 1.0);
    assert_eq!(rep.json["confidence"], "low");
}
on_both!(single_record_is_stored_and_read_back);

async fn one_bad_record_costs_only_itself(t: &TestDb) {
    let app = t.app();
    let mut bad = record("npm:demo", "exploded");
    bad["actor"] = json!("agent:x");
    let body = json!([
        record("npm:demo", "success"),
        bad,
        record("npm:demo", "failure"),
        "not a record",
        record("npm:demo", "success")
    ]);
    let r = post(&app, "/api/interactions", &body).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        r.json,
        json!({"ok": true, "accepted": 3, "duplicates": 0, "rejected": [
            {"index": 1, "error": "outcome: must be one of success|partial|failure|cancelled"},
            {"index": 3, "error": "record: must be a JSON object"}
        ], "rate_limited": []})
    );
    assert_eq!(
        stored(t).await,
        3,
        "the good records around the bad ones are stored"
    );
    let rep = get(&app, "/api/reputation/npm:demo").await;
    assert_eq!(rep.json["rated_interactions"], 3);

    // Nothing valid at all: 400, naming the first refusal and listing each by index.
    let r = post(&app, "/api/interactions", &json!([bad_outcome(), 5])).await;
    assert_eq!(r.status, 400, "{}", r.text);
    let msg = r.json["error"].as_str().unwrap();
    assert!(
        msg.starts_with("records: no valid record (2 refused; records[0].outcome"),
        "{msg}"
    );
    assert_eq!(
        r.json["rejected"][1],
        json!({"index": 1, "error": "record: must be a JSON object"})
    );
    assert_eq!(stored(t).await, 3);

    let ok: Vec<Value> = (0..1000).map(|_| record("npm:demo", "success")).collect();
    let r = post(&app, "/api/interactions", &Value::Array(ok)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["accepted"], 1000);
    assert_eq!(r.json["rejected"], json!([]));
    assert_eq!(stored(t).await, 1003);

    let too_many: Vec<Value> = (0..1001).map(|_| record("npm:demo", "success")).collect();
    let r = post(&app, "/api/interactions", &Value::Array(too_many)).await;
    assert_eq!(r.status, 400);
    assert!(
        r.json["error"].as_str().unwrap().contains("1000"),
        "{}",
        r.text
    );
    assert_eq!(stored(t).await, 1003);
    common::assert_rollups_match_raw(t).await;
}
on_both!(one_bad_record_costs_only_itself);

fn bad_outcome() -> Value {
    let mut r = record("npm:demo", "success");
    r["outcome"] = json!("exploded");
    r
}

async fn private_hosts_in_targets_are_refused_and_never_listed(t: &TestDb) {
    let app = t.app();
    let body = json!([
        record("url:mcp.example.com", "success"),
        record("url:localhost:8931", "success"),
        record("url:10.0.0.12", "success"),
        record("db.internal", "success"),
        record("npm:@scope/db.internal", "success"),
        record("localhost:3000", "success"),
        record("db.internal:5432", "success"),
        record("http://192.168.1.10/mcp", "success"),
    ]);
    let r = post(&app, "/api/interactions", &body).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["accepted"], 2);
    let refused: Vec<(u64, String)> = r.json["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["index"].as_u64().unwrap(),
                x["error"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [
            (
                1,
                "target: a private or special-use host (localhost) is never stored".to_owned()
            ),
            (
                2,
                "target: a private or special-use host (private) is never stored".to_owned()
            ),
            (
                3,
                "target: a private or special-use host (local_name) is never stored".to_owned()
            ),
            (
                5,
                "target: a private or special-use host (localhost) is never stored".to_owned()
            ),
            (
                6,
                "target: a private or special-use host (local_name) is never stored".to_owned()
            ),
            (
                7,
                "target: a private or special-use host (private) is never stored".to_owned()
            ),
        ]
    );
    for t_ in [
        "url:localhost:8931",
        "url:10.0.0.12",
        "db.internal",
        "localhost:3000",
        "db.internal:5432",
        "http://192.168.1.10/mcp",
    ] {
        let n = sqlx::query("SELECT COUNT(*) FROM targets WHERE target = $1")
            .bind(t_)
            .fetch_one(&t.check.pool)
            .await
            .unwrap();
        assert_eq!(
            sqlx::Row::try_get::<i64, _>(&n, 0).unwrap(),
            0,
            "{t_} stored"
        );
    }
    let r = get(&app, "/api/reputation/localhost").await;
    assert!(r.json.get("candidates").is_none(), "{}", r.text);
    assert_eq!(r.json["resolved_target"], Value::Null);
}
on_both!(private_hosts_in_targets_are_refused_and_never_listed);

async fn repeated_record_ids_count_once(t: &TestDb) {
    let app = t.app();
    let mut a = record("npm:retry", "success");
    a["record_id"] = json!("spool-0001");
    let r = post(&app, "/api/interactions", &json!([a.clone(), a.clone()])).await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json["accepted"], 2);
    assert_eq!(r.json["duplicates"], 1);
    // The proxy retries from its spool: acknowledged again, never counted twice.
    let r = post(&app, "/api/interactions", &a).await;
    assert_eq!(r.status, 201);
    assert_eq!(
        r.json,
        json!({"ok": true, "accepted": 1, "duplicates": 1, "rejected": [], "rate_limited": []})
    );
    let rep = get(&app, "/api/reputation/npm:retry").await;
    assert_eq!(rep.json["interactions"], 1);
    // A retried batch that also carries new records: only the new ones count.
    let mut b = record("npm:retry", "failure");
    b["record_id"] = json!("spool-0002");
    let mut c = record("npm:retry", "success");
    c["record_id"] = json!("spool-0003");
    let r = post(&app, "/api/interactions", &json!([b, a, c])).await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json["accepted"], 3);
    assert_eq!(r.json["duplicates"], 1);
    let rep = get(&app, "/api/reputation/npm:retry").await;
    assert_eq!(rep.json["interactions"], 3);
    assert_eq!(stored(t).await, 3);
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
        ("42".into(), 400, "records"),
        ("[]".into(), 400, "records"),
        ("[42]".into(), 400, "records[0]: must be a JSON object"),
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
    t.db.roll_up().await.unwrap();
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
