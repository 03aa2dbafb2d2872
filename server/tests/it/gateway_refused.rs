//! Refused gateway requests (SPEC §10): every request of a catalog service the gateway
//! answers leaves a ProxyCall, a refused one with its reason, and refused ones never count
//! in probe health, the audit, the score or the agent's reputation (or any key could cap a
//! service); a flood of them stores a bounded number of rows. SQLite and PostgreSQL.

use crate::common;

use std::time::Duration;

use common::prowl::{wait_calls, Rig, CATALOG};
use common::{get, TestDb};
use lowdown_server::gateway::recorder::REFUSED_PER_HOUR;
use serde_json::json;

const T: Duration = Duration::from_secs(20);

#[derive(sqlx::FromRow, Debug, PartialEq)]
struct Row {
    agent_id: String,
    salt_id: String,
    status: Option<i64>,
    refused: Option<String>,
}

async fn stored(t: &TestDb) -> Vec<Row> {
    t.rows("SELECT agent_id, salt_id, status, refused FROM proxy_calls ORDER BY at, refused")
        .await
}

async fn every_refusal_is_stored_with_its_reason_and_never_counted(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, T).await;
    let (key, agent_id) = rig.agent(None).await;
    let honest = rig.honest(&key, &agent_id, "svc_vendor").await;
    let with = |k: &str, v: &str| {
        let mut h = honest.clone();
        h.retain(|(name, _)| name != k);
        h.push((k.to_owned(), v.to_owned()));
        h
    };
    let keyless: Vec<(String, String)> = honest[1..].to_vec();
    let cases = [
        ("/vendor/status", keyless, 403, "missing_agent_key"),
        (
            "/vendor/status",
            with("x-agent-key", "ak_nobody"),
            403,
            "unknown_agent_key",
        ),
        (
            "/vendor/status",
            with("x-prowl-sample-decision", &"0".repeat(64)),
            403,
            "wrong_decision",
        ),
        ("/vendor/a%2Fb", honest.clone(), 400, "bad_path"),
        (
            "/vendor/status",
            with("x-prowl-salt-id", "not-a-salt-CANARY"),
            403,
            "unknown_salt",
        ),
    ];
    for (path, headers, status, reason) in &cases {
        let (got, body) = rig.call(path, headers).await;
        assert_eq!(
            (got, body["reason"].as_str()),
            (*status, Some(*reason)),
            "{body}"
        );
    }
    assert_eq!(rig.call("/vendor/status", &honest).await.0, 200);
    wait_calls(t, cases.len() as i64 + 1).await;
    let rows = stored(t).await;
    let refused: Vec<(&str, Option<i64>, &str)> = rows
        .iter()
        .filter_map(|r| Some((r.refused.as_deref()?, r.status, r.agent_id.as_str())))
        .collect();
    let mut want: Vec<(&str, Option<i64>, &str)> = cases
        .iter()
        .map(|(_, _, status, reason)| {
            let agent = match *reason {
                "missing_agent_key" | "unknown_agent_key" => "",
                _ => agent_id.as_str(),
            };
            (*reason, Some(i64::from(*status)), agent)
        })
        .collect();
    want.sort();
    let mut got = refused.clone();
    got.sort();
    assert_eq!(got, want);
    assert!(
        rows.iter().all(|r| !r.salt_id.contains("CANARY")),
        "a malformed salt id is not stored: {rows:?}"
    );
    // The one forwarded call is all that counts.
    let s = rig.service("vendor").await;
    assert_eq!(
        (
            s["score"]["n"].as_u64(),
            s["probe_health"]["n"].as_u64(),
            s["audit"]["n"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{s}"
    );
    assert_eq!(s["score"]["value"], 100);
    let rep = get(&rig.app, &format!("/v1/agents/{agent_id}/reputation"))
        .await
        .json;
    assert_eq!(rep["volume"], json!({"value": 1, "n": 1}), "{rep}");
}
on_both!(every_refusal_is_stored_with_its_reason_and_never_counted);

async fn a_flood_of_refusals_stores_a_bounded_number(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, T).await;
    // The budget is per hour: start the flood just after one begins.
    let hour = 3_600_000;
    rig.state
        .clock
        .shift(hour - rig.state.now().rem_euclid(hour) + 5_000);
    let flood = REFUSED_PER_HOUR as usize + 40;
    let client = reqwest::Client::new();
    let url = rig.url("/vendor/status");
    let mut tasks = Vec::new();
    for chunk in 0..8 {
        let (client, url) = (client.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            for _ in (chunk..flood).step_by(8) {
                let r = client.get(&url).send().await.unwrap();
                assert_eq!(r.status(), 403);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    wait_calls(t, i64::from(REFUSED_PER_HOUR)).await;
    // The writer is flushed by the wait above; anything past the budget was never queued.
    rig.state.prowl.recorder.flush().await;
    assert_eq!(t.count("proxy_calls").await, i64::from(REFUSED_PER_HOUR));
}
on_both!(a_flood_of_refusals_stores_a_bounded_number);
