//! `POST /v1/telemetry/observe` and `POST /v1/auth/agents/register` over `oneshot`, on
//! SQLite and PostgreSQL (sampling is tested with the gateway, in gateway_*.rs).

use crate::common;

use common::{call, get, post, post_as, record, TestDb};
use lowdown_server::db::catalog::{self, Service};
use serde_json::{json, Value};

fn obs(host: &str, status: Value) -> Value {
    json!({"host": host, "method": "get", "status": status, "latency_ms": 120, "response_bytes": 2048})
}

async fn register(app: &axum::Router) -> String {
    let r = post(
        app,
        "/v1/auth/agents/register",
        &json!({"name": "bot", "model_provider": "acme", "model_id": "m-1", "environment": "test"}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.json["agent_key"].as_str().unwrap().to_owned()
}

async fn add_catalog(t: &TestDb) {
    let s = Service {
        id: "stripe".into(),
        name: "Stripe".into(),
        hosts: vec!["stripe.com".into(), "api.stripe.com".into()],
        sampling_rate: None,
    };
    catalog::upsert(&t.db, vec![s], 0).await.unwrap();
}

async fn weights_follow_key_standing_and_catalog(t: &TestDb) {
    let state = t.state();
    let app = lowdown_server::app(state.clone());
    add_catalog(t).await;
    let key = register(&app).await;
    let send = |body: Value, key: Option<String>| {
        let app = app.clone();
        async move {
            let mut h = vec![];
            if let Some(k) = &key {
                h.push(("x-agent-key", k.as_str()));
            }
            let r = post_as(&app, "/v1/telemetry/observe", &h, &body).await;
            assert_eq!(r.status, 200, "{}", r.text);
            r.json
        }
    };
    let one = |host: &str| obs(host, json!(200));
    let many = |n: usize| Value::Array((0..n).map(|_| obs("example.org", json!(200))).collect());
    assert_eq!(
        send(one("example.org"), None).await,
        json!({"ok": true, "weight": 0.1, "service_id": null})
    );
    assert_eq!(
        send(one("api.stripe.com"), None).await,
        json!({"ok": true, "weight": 0.3, "service_id": "stripe"})
    );
    // A new key weighs what anonymous telemetry weighs.
    let k = || Some(key.clone());
    assert_eq!(send(one("example.org"), k()).await["weight"], 0.1);
    assert_eq!(
        send(one("files.stripe.com"), k()).await,
        json!({"ok": true, "weight": 0.3, "service_id": "stripe"})
    );
    // 50 accepted, but not yet a day old: still anonymous.
    send(many(48), k()).await;
    assert_eq!(send(one("api.stripe.com"), k()).await["weight"], 0.3);
    // A day old with 50 accepted: 0.5 for either host.
    state.clock.shift(86_400_000);
    assert_eq!(send(one("example.org"), k()).await["weight"], 0.5);
    assert_eq!(send(one("api.stripe.com"), k()).await["weight"], 0.5);
    // Seven days and 500 accepted: the seed's weights.
    send(many(500), k()).await;
    state.clock.shift(6 * 86_400_000);
    assert_eq!(send(one("example.org"), k()).await["weight"], 0.5);
    assert_eq!(
        send(one("files.stripe.com"), k()).await,
        json!({"ok": true, "weight": 1.0, "service_id": "stripe"})
    );
    assert_eq!(
        send(one("api.stripe.com"), Some("ak_forged".into())).await["weight"],
        0.3,
        "an unknown key is anonymous"
    );
}
on_both!(weights_follow_key_standing_and_catalog);

async fn telemetry_block_is_apart_from_success_rate(t: &TestDb) {
    let app = t.app();
    add_catalog(t).await;
    post(
        &app,
        "/api/interactions",
        &record("api.stripe.com", "success"),
    )
    .await;
    let batch = json!([
        obs("api.stripe.com", json!(200)),
        obs("api.stripe.com", json!(503)),
        obs("api.stripe.com", Value::Null),
        obs("api.stripe.com", json!(429)),
        obs("api.stripe.com", json!(404))
    ]);
    let r = post(&app, "/v1/telemetry/observe", &batch).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["accepted"], 5);
    assert_eq!(r.json["items"].as_array().unwrap().len(), 5);
    let rep = get(&app, "/api/reputation/api.stripe.com").await;
    assert_eq!(
        rep.json["success_rate"], 1.0,
        "telemetry never changes success_rate"
    );
    let tel = &rep.json["telemetry"];
    assert_eq!(tel["observations"], 5);
    assert_eq!(
        tel["weighted_success_rate"], 0.333,
        "1 success of 3 (null and 5xx fail; 429 and 404 apart)"
    );
    assert_eq!(
        tel["status_classes"],
        json!({"success": 1, "failure": 2, "throttled": 1, "rejected": 1})
    );
    assert_eq!(tel["status_codes"]["none"], 1);
    assert_eq!(tel["latency_p50_ms"], 150.0);
    assert_eq!(tel["weight_mix"]["anonymous_known_host"], 5);
    let svc = get(&app, "/api/reputation/stripe").await;
    assert_eq!(
        svc.json["telemetry"]["subject"],
        json!({"kind": "service", "name": "stripe"})
    );
    assert_eq!(svc.json["telemetry"]["observations"], 5);
    let plain = get(&app, "/api/reputation/npm:nothing").await;
    assert!(plain.json.get("telemetry").is_none());
    common::assert_rollups_match_raw(t).await;
}
on_both!(telemetry_block_is_apart_from_success_rate);

async fn observations_are_idempotent_and_validated(t: &TestDb) {
    let app = t.app();
    let mut o = obs("api.example.com", json!(200));
    o["record_id"] = json!("obs-1");
    post(&app, "/v1/telemetry/observe", &o).await;
    let r = post(&app, "/v1/telemetry/observe", &o).await;
    assert_eq!(r.status, 200);
    assert_eq!(t.count("observations").await, 1);
    for (body, needle) in [
        (
            json!({"host": "https://api.example.com/v1/charges?key=1", "method": "GET", "status": 200, "latency_ms": 1}),
            "host",
        ),
        (
            json!({"host": "api.example.com", "method": "GET", "latency_ms": 1}),
            "status",
        ),
        (
            json!({"host": "api.example.com", "method": "GET", "status": 700, "latency_ms": 1}),
            "status",
        ),
        (
            json!({"host": "api.example.com", "method": "GET", "status": 200, "latency_ms": "slow"}),
            "latency_ms",
        ),
        (
            json!({"host": "api.example.com", "method": "GET", "status": 200, "latency_ms": 1, "source": "not a name"}),
            "source",
        ),
        (
            json!([{"host": "a.com"}, 7]),
            "observations: no valid observation (2 refused; observations[0].method",
        ),
        (json!("text"), "observation"),
    ] {
        let r = post(&app, "/v1/telemetry/observe", &body).await;
        assert_eq!(r.status, 400, "{body}: {}", r.text);
        assert!(
            r.json["error"].as_str().unwrap().contains(needle),
            "{needle}: {}",
            r.text
        );
    }
    assert_eq!(t.count("observations").await, 1, "nothing written");
    // In an array, each item stands alone: the bad one is refused, the good one stored.
    let fresh = obs("api.example.com", json!(204));
    let r = post(
        &app,
        "/v1/telemetry/observe",
        &json!([{"host": "a.com"}, fresh, o]),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json["accepted"], 2,
        "the new one and the acknowledged duplicate"
    );
    assert_eq!(r.json["rate_limited"], 0);
    assert_eq!(r.json["items"][0], json!({"error": "method: is required"}));
    assert_eq!(
        r.json["items"][1],
        json!({"weight": 0.1, "service_id": null})
    );
    assert_eq!(
        r.json["items"][2],
        json!({"weight": 0.1, "service_id": null})
    );
    assert_eq!(t.count("observations").await, 2);
}
on_both!(observations_are_idempotent_and_validated);

async fn rate_limits_answer_429_with_retry_after(t: &TestDb) {
    let app = t.app();
    let batch =
        |n: usize| Value::Array((0..n).map(|_| obs("api.example.com", json!(200))).collect());
    assert_eq!(
        post(&app, "/v1/telemetry/observe", &batch(60)).await.status,
        200
    );
    let r = post(&app, "/v1/telemetry/observe", &batch(1)).await;
    assert_eq!(r.status, 429);
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((3500..=3600).contains(&retry), "{retry}");
    assert!(r.json["error"].as_str().unwrap().contains("60"));
    assert_eq!(t.count("observations").await, 60);

    let key = register(&app).await;
    let hdr = [("x-agent-key", key.as_str())];
    let r = post_as(&app, "/v1/telemetry/observe", &hdr, &batch(600)).await;
    assert_eq!(r.status, 200, "a key has its own, larger budget");
    let r = post_as(&app, "/v1/telemetry/observe", &hdr, &batch(1)).await;
    assert_eq!(r.status, 429);
    assert!(r.headers.contains_key("retry-after"));
    assert_eq!(t.count("observations").await, 660);
}
on_both!(rate_limits_answer_429_with_retry_after);

async fn agent_keys_are_random_and_stored_hashed(t: &TestDb) {
    let app = t.app();
    let a = register(&app).await;
    let b = register(&app).await;
    assert!(a.starts_with("ak_") && a.len() == 51, "{a}");
    assert_ne!(a, b);
    use sqlx::Row;
    let rows = sqlx::query(
        "SELECT agent_id, key_hash, name, model_provider, model_id, environment FROM agents",
    )
    .fetch_all(&t.db.pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        for i in 0..row.len() {
            let v: String = row.try_get(i).unwrap();
            assert!(
                !v.contains(&a[3..]) && !v.contains(&b[3..]),
                "a key is stored in clear"
            );
        }
    }
    let hashes: Vec<String> = rows.iter().map(|r| r.try_get(1).unwrap()).collect();
    assert!(hashes.contains(&lowdown_server::db::agents::key_hash(&a)));
    for (body, needle) in [
        (
            json!({"model_provider": "p", "model_id": "m", "environment": "e"}),
            "name",
        ),
        (
            json!({"name": 5, "model_provider": "p", "model_id": "m", "environment": "e"}),
            "name",
        ),
        (
            json!({"name": "n", "model_provider": "p".repeat(129), "model_id": "m", "environment": "e"}),
            "model_provider",
        ),
        (
            json!({"name": "n", "model_provider": "p", "model_id": "", "environment": "e"}),
            "model_id",
        ),
        (json!([]), "body"),
    ] {
        let r = post(&app, "/v1/auth/agents/register", &body).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(
            r.json["error"].as_str().unwrap().starts_with(needle),
            "{}",
            r.text
        );
    }
    assert_eq!(t.count("agents").await, 2);
}
on_both!(agent_keys_are_random_and_stored_hashed);

async fn the_seeds_universal_contract_works_verbatim(t: &TestDb) {
    let app = t.app();
    add_catalog(t).await;
    let seed = r#"{"host":"api.stripe.com","method":"GET","status":200,"latency_ms":312,"response_bytes":2048,"source":"your-wrapper-name"}"#;
    let r = call(
        &app,
        "POST",
        "/v1/telemetry/observe",
        &[("content-type", "application/json")],
        Some(seed.into()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json,
        json!({"ok": true, "weight": 0.3, "service_id": "stripe"})
    );
    let (source, reporter): (String, Option<String>) =
        t.row("SELECT source, reporter FROM observations").await;
    assert_eq!(
        (source.as_str(), reporter.as_deref()),
        ("organic", Some("your-wrapper-name"))
    );
    let rep = get(&app, "/api/reputation/api.stripe.com").await;
    assert_eq!(
        rep.json["telemetry"]["observations"], 1,
        "a wrapper's report is organic"
    );
    let synthetic = r#"{"host":"api.stripe.com","method":"GET","status":200,"latency_ms":3,"source":"synthetic"}"#;
    call(
        &app,
        "POST",
        "/v1/telemetry/observe",
        &[],
        Some(synthetic.into()),
    )
    .await;
    let rep = get(&app, "/api/reputation/api.stripe.com").await;
    assert_eq!(
        rep.json["telemetry"]["observations"], 1,
        "synthetic stays apart"
    );
    assert_eq!(rep.json["telemetry"]["by_source"]["synthetic"], 1);
}
on_both!(the_seeds_universal_contract_works_verbatim);

async fn private_hosts_are_refused_and_never_listed(t: &TestDb) {
    let app = t.app();
    for host in [
        "localhost",
        "10.0.0.5",
        "db.internal",
        "fileserver",
        "[fd00::1]",
        "printer.local",
        "169.254.169.254",
    ] {
        let r = post(&app, "/v1/telemetry/observe", &obs(host, json!(200))).await;
        assert_eq!(r.status, 400, "{host}: {}", r.text);
        let msg = r.json["error"].as_str().unwrap();
        assert!(
            msg.starts_with("host: a private or special-use host ("),
            "{host}: {msg}"
        );
    }
    let r = post(
        &app,
        "/v1/telemetry/observe",
        &json!([
            obs("api.internal-tools.com", json!(200)),
            obs("git.internal", json!(200))
        ]),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["accepted"], 1);
    assert_eq!(
        r.json["items"][1],
        json!({"error": "host: a private or special-use host (local_name) is never stored"})
    );
    assert_eq!(t.count("observations").await, 1);
    assert_eq!(
        t.count("targets").await,
        1,
        "only the public host is a target"
    );
    // The candidate search never turns one up, whatever the database holds: a row stored
    // before the server ran the filter (written here straight into the tables) stays hidden.
    sqlx::query("INSERT INTO targets (target, name_key, lookup_key, first_seen) VALUES ('build.internal', 'build.internal', 'build.internal', 0)")
        .execute(&t.check.pool)
        .await
        .unwrap();
    for q in ["internal", "build.internal", "build", "nal"] {
        let r = get(&app, &format!("/api/reputation/{q}")).await;
        assert_eq!(r.status, 200);
        assert_ne!(r.json["resolved_target"], "build.internal", "{q}");
        let listed = r.json["candidates"].to_string();
        assert!(
            !listed.contains("build.internal"),
            "{q} listed a private host: {}",
            r.text
        );
    }
    let r = get(&app, "/api/reputation/internal").await;
    assert_eq!(
        r.json["resolved_target"], "api.internal-tools.com",
        "{}",
        r.text
    );
    // --unsafe-allow-private-hosts lifts the filter, for local testing.
    let unsafe_app = lowdown_server::app(t.state().with_private_hosts(true));
    let r = post(
        &unsafe_app,
        "/v1/telemetry/observe",
        &obs("localhost", json!(200)),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = get(&unsafe_app, "/api/reputation/localhost").await;
    assert_eq!(r.json["telemetry"]["observations"], 1);
    let r = get(&app, "/api/reputation/localhost").await;
    assert_eq!(
        r.json["resolved_target"],
        Value::Null,
        "hidden again without the flag"
    );
    assert!(r.json.get("telemetry").is_none());
}
on_both!(private_hosts_are_refused_and_never_listed);
