//! The mirror path and receipts (SPEC §10): what agents report of a catalog service counts in
//! its probe health and audit beside the gateway's calls, each figure saying which path it
//! came from, and receipts count in its live score and in the agent's reported error rate by
//! their signatures (0.3 signed once, 1.0 co-signed). SQLite and PostgreSQL.

use crate::common;

use std::time::Duration;

use base64::Engine;
use common::prowl::{Rig, CATALOG};
use common::{post, post_as, TestDb};
use ed25519_dalek::{Signer, SigningKey};
use lowdown_server::db::gateway::calls::{insert_many, ProxyCall};
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(20);

async fn bimodal_telemetry_alone_raises_the_audit_flag(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, T).await;
    // Agents report the vendor's host answering at 40 ms or at 4 s, and never a gateway call.
    for i in 0..12 {
        let latency = if i % 2 == 0 { 40 } else { 4000 };
        let obs = json!({"host": "api.vendor-fixture.com", "method": "GET", "status": 200, "latency_ms": latency});
        let r = post(&rig.app, "/v1/telemetry/observe", &obs).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let s = rig.service("vendor").await;
    let audit = &s["audit"];
    assert_eq!(
        (audit["flagged"].as_bool(), audit["flag"].as_str()),
        (Some(true), Some("prowl_capped_audit")),
        "{audit}"
    );
    assert_eq!(
        audit["telemetry"],
        json!({"flagged": true, "error_rate": 0.0, "p95_p5": 100.0, "n": 12})
    );
    assert_eq!(
        audit["gateway"],
        json!({"flagged": false, "error_rate": null, "p95_p5": null, "n": 0})
    );
    assert_eq!(
        s["probe_health"]["from"],
        json!({"gateway": 0, "telemetry": 12, "receipts_single": 0, "receipts_cosigned": 0})
    );
    assert_eq!(t.count("proxy_calls").await, 0, "no gateway traffic at all");
}
on_both!(bimodal_telemetry_alone_raises_the_audit_flag);

async fn failing_reports_cap_a_service_the_gateway_never_carried(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, T).await;
    for i in 0..10 {
        let status = if i < 9 { 503 } else { 200 };
        let obs = json!({"host": "api.vendor-fixture.com", "method": "GET", "status": status, "latency_ms": 90});
        assert_eq!(
            post(&rig.app, "/v1/telemetry/observe", &obs).await.status,
            200
        );
    }
    let s = rig.service("vendor").await;
    assert_eq!(
        (
            s["probe_health"]["error_rate"].as_f64(),
            s["probe_health"]["cap"].as_u64()
        ),
        (Some(0.9), Some(30)),
        "{s}"
    );
    assert_eq!(s["score"]["value"], 30, "the cap holds the score: {s}");
    assert_eq!(s["score"]["capped_by"], "probe_health");
}
on_both!(failing_reports_cap_a_service_the_gateway_never_carried);

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

async fn a_cosigned_receipt_moves_the_live_score_more_than_a_single_signed_one(t: &TestDb) {
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
    // Twenty agents on twenty networks saw the vendor answer at once, through the gateway.
    let now = rig.state.now();
    let calls = (0..20)
        .map(|i| ProxyCall {
            service_id: "svc_vendor".into(),
            agent_id: format!("ag_{i}"),
            salt_id: "s_20261207".into(),
            method: "GET".into(),
            status: Some(200),
            latency_ms: 80.0,
            response_bytes: Some(10),
            error_type: None,
            at: now,
            network: Some(format!("net{i}")),
            refused: None,
        })
        .collect();
    insert_many(&t.db, calls).await.unwrap();
    let success = |s: &Value| s["score"]["success"].as_f64().unwrap();
    assert_eq!(success(&rig.service("vendor").await), 1.0);

    let (key, agent_id) = rig
        .agent(Some(&b64(agent_key.verifying_key().as_bytes())))
        .await;
    let sign = |k: &SigningKey, st: &Value| {
        let canonical =
            lowdown_core::schema_hash::canonical_json(st.to_string().as_bytes()).unwrap();
        b64(&k.sign(canonical.as_bytes()).to_bytes())
    };
    let failed = |nonce: &str| json!({"service_id": "svc_vendor", "agent_id": agent_id, "call_at": "2026-12-07T10:00:00Z", "outcome": "failure", "latency_ms": 80, "nonce": nonce});
    let submit = |body: Value| {
        let app = rig.app.clone();
        let key = key.clone();
        async move {
            let r = post_as(&app, "/v1/receipts/submit", &[("x-agent-key", &key)], &body).await;
            assert_eq!(r.status, 201, "{}", r.text);
            r.json["weight"].as_f64().unwrap()
        }
    };
    // A failed delivery the agent alone signed: 0.3 against the twenty calls' 20.
    let one = failed("nonce-single-1");
    assert_eq!(
        submit(json!({"statement": one, "agent_signature": sign(&agent_key, &one)})).await,
        0.3
    );
    let after_single = rig.service("vendor").await;
    assert_eq!(
        success(&after_single),
        round3(20.0 / 20.3),
        "{after_single}"
    );
    assert_eq!(
        after_single["score"]["from"],
        json!({"gateway": 20, "telemetry": 0, "receipts_single": 1, "receipts_cosigned": 0})
    );
    // One both signed weighs 1.0: it moves the score more than three times as far.
    let two = failed("nonce-cosigned-1");
    let body = json!({"statement": two, "agent_signature": sign(&agent_key, &two), "service_signature": sign(&service_key, &two)});
    assert_eq!(submit(body).await, 1.0);
    let after_both = rig.service("vendor").await;
    assert_eq!(success(&after_both), round3(20.0 / 21.3), "{after_both}");
    assert_eq!(
        after_both["score"]["from"],
        json!({"gateway": 20, "telemetry": 0, "receipts_single": 1, "receipts_cosigned": 1})
    );
    let single_moved = 1.0 - 20.0 / 20.3;
    let cosigned_moved = 20.0 / 20.3 - 20.0 / 21.3;
    assert!(cosigned_moved > 3.0 * single_moved);
    assert!(
        after_both["score"]["value"].as_u64() < after_single["score"]["value"].as_u64(),
        "{after_single} {after_both}"
    );
}
on_both!(a_cosigned_receipt_moves_the_live_score_more_than_a_single_signed_one);

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// An agent that saw the vendor answer once, then submitted a receipt for a failed delivery
/// (co-signed or not), beside another agent that saw it answer five times: the first's
/// `error_report_balance`.
async fn balance_after_a_failed_receipt(t: &TestDb, cosigned: bool) -> Value {
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
    let (other, _) = rig.agent(None).await;
    let seen =
        json!({"host": "api.vendor-fixture.com", "method": "GET", "status": 200, "latency_ms": 80});
    for (k, times) in [(&key, 1), (&other, 5)] {
        for _ in 0..times {
            let r = post_as(
                &rig.app,
                "/v1/telemetry/observe",
                &[("x-agent-key", k)],
                &seen,
            )
            .await;
            assert_eq!(r.status, 200, "{}", r.text);
        }
    }
    let st = json!({"service_id": "svc_vendor", "agent_id": agent_id, "call_at": "2026-12-07T10:00:00Z", "outcome": "failure", "latency_ms": 80, "nonce": "nonce-balance-1"});
    let canonical = lowdown_core::schema_hash::canonical_json(st.to_string().as_bytes()).unwrap();
    let mut body = json!({"statement": st, "agent_signature": b64(&agent_key.sign(canonical.as_bytes()).to_bytes())});
    if cosigned {
        body["service_signature"] = json!(b64(&service_key.sign(canonical.as_bytes()).to_bytes()));
    }
    let r = post_as(
        &rig.app,
        "/v1/receipts/submit",
        &[("x-agent-key", &key)],
        &body,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let rep = common::get(&rig.app, &format!("/v1/agents/{agent_id}/reputation"))
        .await
        .json;
    rep["error_report_balance"].clone()
}

async fn a_failed_receipt_signed_once_weighs_0_3_in_the_agents_reports(t: &TestDb) {
    // One report of success and a failed delivery at 0.3: 0.3 / 1.3 against the other's 0.
    assert_eq!(
        balance_after_a_failed_receipt(t, false).await,
        json!({"value": 0.231, "n": 2})
    );
}
on_both!(a_failed_receipt_signed_once_weighs_0_3_in_the_agents_reports);

async fn a_failed_receipt_cosigned_weighs_1_0_in_the_agents_reports(t: &TestDb) {
    assert_eq!(
        balance_after_a_failed_receipt(t, true).await,
        json!({"value": 0.5, "n": 2})
    );
}
on_both!(a_failed_receipt_cosigned_weighs_1_0_in_the_agents_reports);
