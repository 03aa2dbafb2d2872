//! The gateway's API answers (SPEC §10) with calls driven through the real gateway: the
//! live score falling and the cap engaging read by read, the daily audit, receipts,
//! agent reputation, `min_reputation`, and the audit lease. SQLite and PostgreSQL.

use crate::common;

use std::time::Duration;

use base64::Engine;
use common::prowl::{wait_calls, Rig, CATALOG};
use common::{get, post, post_as, TestDb};
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(20);

async fn observe(rig: &Rig, key: &str, status: u16) -> Value {
    let obs = json!({"host": "api.vendor-fixture.com", "method": "GET", "status": status, "latency_ms": 80});
    let r = post_as(
        &rig.app,
        "/v1/telemetry/observe",
        &[("x-agent-key", key)],
        &obs,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.json
}

/// `from` with nothing counted.
fn none() -> Value {
    json!({"gateway": 0, "telemetry": 0, "receipts_single": 0, "receipts_cosigned": 0})
}

async fn the_score_falls_and_the_cap_engages_read_by_read(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, T).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    let first = rig.service("vendor").await;
    assert_eq!(
        first["score"],
        json!({"value": null, "n": 0, "success": null, "speed": null, "capped_by": null, "agents": 0, "networks": 0, "from": none()})
    );
    assert_eq!(
        first["probe_health"],
        json!({"error_rate": null, "n": 0, "cap": null, "from": none()})
    );
    assert_eq!(first["audit"]["n"], 0);
    assert!(
        first["audit"]["checked_at"].is_string(),
        "the first read audits: {first}"
    );
    assert!(first.get("credential").is_none() && !first.to_string().contains("VENDOR_KEY"));
    for _ in 0..5 {
        assert_eq!(rig.call("/vendor/status", &h).await.0, 200);
    }
    wait_calls(t, 5).await;
    let healthy = rig.service("vendor").await;
    assert_eq!(healthy["score"]["value"], 100, "{healthy}");
    assert_eq!(healthy["score"]["n"], 5);
    rig.up
        .status
        .store(500, std::sync::atomic::Ordering::SeqCst);
    let mut last = 100;
    // (failures so far, value, cap): worked by hand from SPEC §10.
    let checkpoints = [
        (1, 88, None),
        (2, 80, None),
        (3, 50, Some(50)),
        (21, 30, Some(30)),
    ];
    for k in 1..=21 {
        assert_eq!(
            rig.call("/vendor/status", &h).await.0,
            500,
            "the vendor's status passes through"
        );
        wait_calls(t, 5 + k).await;
        let s = rig.service("vendor").await;
        let value = s["score"]["value"].as_i64().unwrap();
        assert!(
            value <= last,
            "read {k}: the score never rises while calls fail ({value} after {last})"
        );
        last = value;
        let rate = s["probe_health"]["error_rate"].as_f64().unwrap();
        assert!(
            (rate - k as f64 / (5 + k) as f64).abs() < 0.001,
            "read {k}: {s}"
        );
        if let Some((_, want, cap)) = checkpoints.iter().find(|c| c.0 == k) {
            assert_eq!(value, *want, "read {k}: {s}");
            assert_eq!(s["probe_health"]["cap"], json!(cap), "read {k}");
            let capped = if cap.is_some() {
                json!("probe_health")
            } else {
                Value::Null
            };
            assert_eq!(s["score"]["capped_by"], capped, "read {k}");
        }
    }
    // Weighted telemetry joins the score: an observation of a catalog host from a key
    // that has not earned its weight yet weighs what an anonymous one does, 0.3.
    assert_eq!(
        observe(&rig, &key, 200).await,
        json!({"ok": true, "weight": 0.3, "service_id": "svc_vendor"})
    );
    assert_eq!(rig.service("vendor").await["score"]["n"], 27);
    // The audit ran at the first read and runs again only 24 h later.
    let list = get(&rig.app, "/v1/services").await.json;
    let vendor = &list["services"][0];
    assert_eq!(
        (vendor["slug"].as_str(), vendor["audit"]["n"].as_i64()),
        (Some("vendor"), Some(0))
    );
    assert!(
        vendor.get("score").is_none(),
        "the list carries audit and probe health, not the score"
    );
    rig.state.clock.shift(24 * 3_600_000 + 60_000);
    let list = get(&rig.app, "/v1/services").await;
    assert_eq!(list.status, 200, "{}", list.text);
    let list = list.json;
    let audit = &list["services"][0]["audit"];
    assert_eq!(audit["flagged"], true, "{audit}");
    assert_eq!(audit["flag"], "prowl_capped_audit");
    // The gateway's 26 calls; the one observation is over 24 h old by now, out of the audit.
    assert_eq!(
        (audit["n"].as_i64(), audit["error_rate"].as_f64()),
        (Some(26), Some(0.808))
    );
    assert_eq!(
        audit["gateway"],
        json!({"flagged": true, "error_rate": 0.808, "p95_p5": audit["gateway"]["p95_p5"], "n": 26})
    );
    assert_eq!(
        audit["telemetry"],
        json!({"flagged": false, "error_rate": null, "p95_p5": null, "n": 0})
    );
    assert_eq!(
        list["services"][1]["audit"]["flagged"], false,
        "a service without calls is not flagged"
    );
}
on_both!(the_score_falls_and_the_cap_engages_read_by_read);

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

async fn receipts_weigh_by_signature_and_refuse_forgeries_and_replays(t: &TestDb) {
    let agent_key = SigningKey::from_bytes(&[7; 32]);
    let service_key = SigningKey::from_bytes(&[9; 32]);
    let toml = CATALOG.replace(
        "sampling_rate = 1.0\n",
        &format!(
            "sampling_rate = 1.0\npublic_key = \"{}\"\n",
            b64(service_key.verifying_key().as_bytes())
        ),
    );
    let rig = Rig::start(t, &toml, T).await;
    let (key, agent_id) = rig
        .agent(Some(&b64(agent_key.verifying_key().as_bytes())))
        .await;
    let statement = |nonce: &str| json!({"service_id": "svc_vendor", "agent_id": agent_id, "call_at": "2026-12-01T10:00:00Z", "outcome": "success", "latency_ms": 182.5, "nonce": nonce});
    let sign = |k: &SigningKey, st: &Value| {
        let canonical =
            lowdown_core::schema_hash::canonical_json(st.to_string().as_bytes()).unwrap();
        b64(&k.sign(canonical.as_bytes()).to_bytes())
    };
    let submit = |body: Value| {
        let app = rig.app.clone();
        let key = key.clone();
        async move { post_as(&app, "/v1/receipts/submit", &[("x-agent-key", &key)], &body).await }
    };
    let one = statement("nonce-0001");
    let r = submit(json!({"statement": one, "agent_signature": sign(&agent_key, &one)})).await;
    assert_eq!(
        (r.status.as_u16(), r.json["weight"].as_f64()),
        (201, Some(0.3)),
        "{}",
        r.text
    );
    let r = submit(json!({"statement": one, "agent_signature": sign(&agent_key, &one), "service_signature": sign(&service_key, &one)})).await;
    assert_eq!(
        r.status, 409,
        "the same statement again is a replay: {}",
        r.text
    );
    let two = statement("nonce-0002");
    let r = submit(json!({"statement": two, "agent_signature": sign(&agent_key, &two), "service_signature": sign(&service_key, &two)})).await;
    assert_eq!(
        (r.status.as_u16(), r.json["weight"].as_f64()),
        (201, Some(1.0)),
        "{}",
        r.text
    );
    let three = statement("nonce-0003");
    for (body, field) in [
        (
            json!({"statement": three, "agent_signature": sign(&service_key, &three)}),
            "agent_signature",
        ),
        (
            json!({"statement": three, "agent_signature": sign(&agent_key, &three), "service_signature": sign(&agent_key, &three)}),
            "service_signature",
        ),
        (
            json!({"statement": three, "agent_signature": "bm90IGEgc2lnbmF0dXJl"}),
            "agent_signature",
        ),
        (
            json!({"statement": three}),
            "agent_signature, service_signature",
        ),
        (
            json!({"statement": {"extra": 1}, "agent_signature": "x"}),
            "statement.extra",
        ),
        (
            json!({"statement": statement("short"), "agent_signature": "x"}),
            "statement.nonce",
        ),
    ] {
        let r = submit(body).await;
        assert_eq!(r.status, 400, "{field}: {}", r.text);
        assert!(
            r.json["error"].as_str().unwrap().starts_with(field),
            "{field}: {}",
            r.text
        );
    }
    assert_eq!(t.count("receipts").await, 2, "nothing refused was stored");
    // An agent without a public key cannot have signed.
    let (_, bare_id) = rig.agent(None).await;
    let mut st = statement("nonce-0004");
    st["agent_id"] = json!(bare_id);
    let r = submit(json!({"statement": st, "agent_signature": sign(&agent_key, &st)})).await;
    assert!(
        r.json["error"].as_str().unwrap().contains("no public_key"),
        "{}",
        r.text
    );
    let r = post(&rig.app, "/v1/auth/agents/register", &json!({"name": "b", "model_provider": "p", "model_id": "m", "environment": "e", "public_key": "abc"})).await;
    assert!(
        r.status == 400 && r.text.contains("public_key"),
        "{}",
        r.text
    );
    let rep = get(&rig.app, &format!("/v1/agents/{agent_id}/reputation"))
        .await
        .json;
    assert_eq!(
        rep["receipt_cosign_rate"],
        json!({"value": 0.5, "n": 2}),
        "{rep}"
    );
    assert_eq!(
        rep["receipts"],
        json!({"single": 1, "cosigned": 1}),
        "{rep}"
    );
    // Two bad signatures, the bad base64, the key-less agent's signature, and the replay.
    assert_eq!(rep["abuse_flags"]["value"], 5, "{rep}");
}
on_both!(receipts_weigh_by_signature_and_refuse_forgeries_and_replays);

/// Moves the server's clock out of the last seconds of an hour, so every call of a test
/// falls in one hour bucket (instead of waiting them out).
fn away_from_an_hour_boundary(clock: &lowdown_server::clock::Clock) {
    let into_hour = clock.now().rem_euclid(3_600_000);
    if into_hour > 3_600_000 - 15_000 {
        clock.shift(3_600_000 - into_hour + 100);
    }
}

async fn reputation_has_seven_dimensions_from_what_the_network_saw(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, T).await;
    away_from_an_hour_boundary(&rig.state.clock);
    let (honest_key, honest_id) = rig.agent(None).await;
    let (liar_key, liar_id) = rig.agent(None).await;
    let h = rig.honest(&honest_key, &honest_id, "svc_vendor").await;
    for _ in 0..4 {
        assert_eq!(rig.call("/vendor/status", &h).await.0, 200);
        observe(&rig, &honest_key, 200).await;
    }
    // The other agent reports failures the gateway never saw. Each agent is compared with
    // the others' reports, never its own.
    observe(&rig, &liar_key, 503).await;
    observe(&rig, &liar_key, 503).await;
    wait_calls(t, 4).await;
    let rep = get(&rig.app, &format!("/v1/agents/{honest_id}/reputation")).await;
    assert_eq!(rep.status, 200, "{}", rep.text);
    let mut dims = rep.json.clone();
    for k in ["agent_id", "window_days", "since"] {
        dims.as_object_mut().unwrap().remove(k);
    }
    assert_eq!(
        dims,
        json!({
            "volume": {"value": 8, "n": 8},
            "tenure_days": {"value": 0, "n": 1},
            "consistency": {"value": 1, "n": 1},
            "receipt_cosign_rate": {"value": null, "n": 0},
            "diversity": {"value": 1, "n": 8},
            "error_report_balance": {"value": -1, "n": 4},
            "abuse_flags": {"value": 0, "n": 4},
            "compared_agents": 1,
            "receipts": {"single": 0, "cosigned": 0},
        }),
        "{}",
        rep.text
    );
    assert_eq!(rep.json["window_days"], 30);
    let liar = get(&rig.app, &format!("/v1/agents/{liar_id}/reputation"))
        .await
        .json;
    assert_eq!(liar["consistency"], json!({"value": 0, "n": 1}), "{liar}");
    assert_eq!(liar["error_report_balance"], json!({"value": 1, "n": 2}));
    assert_eq!(
        get(&rig.app, "/v1/agents/ag_nobody/reputation")
            .await
            .status,
        404
    );
    // Thirty days later everything has aged out but the tenure.
    rig.state.clock.shift(31 * 86_400_000);
    let old = get(&rig.app, &format!("/v1/agents/{honest_id}/reputation"))
        .await
        .json;
    assert_eq!(
        (
            old["volume"]["value"].as_i64(),
            old["tenure_days"]["value"].as_i64()
        ),
        (Some(0), Some(31))
    );
}
on_both!(reputation_has_seven_dimensions_from_what_the_network_saw);

async fn agents_below_min_reputation_get_ten_calls_an_hour(t: &TestDb) {
    let toml = CATALOG.replace(
        "sampling_rate = 1.0\n",
        "sampling_rate = 1.0\nmin_reputation = { tenure_days = 7 }\n",
    );
    let rig = Rig::start(t, &toml, T).await;
    assert_eq!(
        rig.service("vendor").await["min_reputation"],
        json!({"tenure_days": 7.0})
    );
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    for i in 0..10 {
        assert_eq!(rig.call("/vendor/x", &h).await.0, 200, "call {i}");
    }
    wait_calls(t, 10).await;
    let c = reqwest::Client::new();
    let mut req = c.get(rig.url("/vendor/x"));
    for (k, v) in &h {
        req = req.header(k, v);
    }
    let r = req.send().await.unwrap();
    assert_eq!(r.status(), 429);
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&retry), "Retry-After {retry}");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["reason"], "below_min_reputation");
    assert_eq!(
        rig.up.requests().len(),
        10,
        "the eleventh never reached the vendor"
    );
    // A week later the agent's tenure meets the bar: no hourly limit.
    rig.state.clock.shift(8 * 86_400_000);
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    for i in 0..11 {
        assert_eq!(
            rig.call("/vendor/x", &h).await.0,
            200,
            "call {i} after a week"
        );
        wait_calls(t, 11 + i).await;
    }
}
on_both!(agents_below_min_reputation_get_ten_calls_an_hour);

async fn racing_calls_of_a_new_agent_stop_at_the_limit(t: &TestDb) {
    let toml = CATALOG.replace(
        "sampling_rate = 1.0\n",
        "sampling_rate = 1.0\nmin_reputation = { tenure_days = 7 }\n",
    );
    let rig = std::sync::Arc::new(Rig::start(t, &toml, T).await);
    let (key, agent_id) = rig.agent(None).await;
    let h = std::sync::Arc::new(rig.honest(&key, &agent_id, "svc_vendor").await);
    // Forty calls at once, before any of them has ended (the vendor answers /sse only once
    // released, so the first ten are still streaming when the others arrive).
    let mut tasks = Vec::new();
    for _ in 0..40 {
        let (rig, h) = (rig.clone(), h.clone());
        tasks.push(tokio::spawn(async move {
            let c = reqwest::Client::new();
            let mut req = c.get(rig.url("/vendor/sse"));
            for (k, v) in h.iter() {
                req = req.header(k, v);
            }
            let r = req.send().await.unwrap();
            r.status().as_u16()
        }));
    }
    let mut statuses = Vec::new();
    for task in tasks {
        statuses.push(task.await.unwrap());
    }
    let passed = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((passed, refused), (10, 30), "{statuses:?}");
    assert_eq!(rig.up.requests().len(), 10, "only ten reached the vendor");
    for _ in 0..10 {
        rig.up.release.notify_one();
    }
}
on_both!(racing_calls_of_a_new_agent_stop_at_the_limit);

async fn one_server_at_a_time_holds_the_audit_lease(t: &TestDb) {
    use lowdown_server::db::lease::{acquire, release, AUDIT_LEASE};
    let rig = Rig::start(t, CATALOG, T).await;
    let now = rig.state.now();
    assert!(acquire(&t.db, AUDIT_LEASE, "server-a", now, 60_000)
        .await
        .unwrap()
        .is_ok());
    assert_eq!(
        acquire(&t.check, AUDIT_LEASE, "server-b", now, 60_000)
            .await
            .unwrap()
            .unwrap_err()
            .holder,
        "server-a",
        "held by a"
    );
    assert_eq!(
        lowdown_server::gateway::audit::run_due(&rig.state, "server-b")
            .await
            .unwrap(),
        0,
        "b skips the job"
    );
    assert!(
        acquire(&t.check, AUDIT_LEASE, "server-b", now + 61_000, 60_000)
            .await
            .unwrap()
            .is_ok(),
        "an expired lease is taken over"
    );
    release(&t.db, AUDIT_LEASE, "server-b").await.unwrap();
    assert_eq!(
        lowdown_server::gateway::audit::run_due(&rig.state, "server-a")
            .await
            .unwrap(),
        2,
        "both services audited"
    );
    assert_eq!(t.count("service_audits").await, 2);
    let (held,): (i64,) = t
        .row("SELECT COUNT(*) FROM leases WHERE holder <> '' OR expires_at > 0")
        .await;
    assert_eq!(held, 0, "released after the run");

    // A row no server wrote, expiring centuries ahead, holds the audit off for nobody.
    sqlx::query("UPDATE leases SET holder = 'forged', expires_at = $1 WHERE name = 'audit'")
        .bind(i64::MAX / 2)
        .execute(&t.check.pool)
        .await
        .unwrap();
    assert_eq!(
        lowdown_server::gateway::audit::run_due(&rig.state, "server-b")
            .await
            .unwrap(),
        2,
        "the forged lease is taken over"
    );
}
on_both!(one_server_at_a_time_holds_the_audit_lease);
