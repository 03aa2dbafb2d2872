//! The forgeries of a stranger with many ids, against the real server over real sockets on
//! SQLite and PostgreSQL: every client network is a loopback source address (`127.N.0.1`
//! binds on Linux, and each N is its own /24). Each forgery fails with the figures
//! unchanged or bounded as SPEC §4-§5 promise; honest traffic from many networks counts in
//! full; a busy node under the default quotas loses nothing.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use common::prowl::{Rig, CATALOG};
use common::TestDb;
use lowdown_server::caller::TrustedNetworks;
use lowdown_server::db::quota::Limits;
use lowdown_server::AppState;
use serde_json::{json, Value};

/// The API of `state` on a real socket.
struct Server(common::Served);

impl Server {
    async fn start(state: AppState) -> Server {
        Server(common::Served::start(state).await)
    }

    fn url(&self, path: &str) -> String {
        self.0.url(path)
    }

    /// A client whose connections come from `127.n.0.1`: network `n`.
    fn from(&self, n: u8) -> Client {
        Client {
            http: reqwest::Client::builder()
                .local_address(IpAddr::V4(Ipv4Addr::new(127, n, 0, 1)))
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            base: self.url(""),
        }
    }
}

struct Client {
    http: reqwest::Client,
    base: String,
}

/// An answer: status, Retry-After, body.
struct Answer {
    status: u16,
    retry_after: Option<u64>,
    json: Value,
}

impl Client {
    async fn post(&self, path: &str, headers: &[(&str, &str)], body: &Value) -> Answer {
        let mut req = self.http.post(format!("{}{path}", self.base)).json(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let retry_after = r
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().parse().unwrap());
        Answer {
            status,
            retry_after,
            json: r.json().await.unwrap(),
        }
    }

    async fn record(&self, body: &Value) -> Answer {
        self.post("/api/interactions", &[], body).await
    }

    async fn get(&self, path: &str) -> Value {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    }

    async fn register(&self) -> String {
        let a = self
            .post(
                "/v1/auth/agents/register",
                &[],
                &json!({"name": "bot", "model_provider": "p", "model_id": "m", "environment": "e"}),
            )
            .await;
        assert_eq!(a.status, 201, "{}", a.json);
        a.json["agent_key"].as_str().unwrap().to_owned()
    }
}

/// `n` organic tool-call records for `target` with `outcome`, ids `{tag}-{i}`, each from
/// `node(i)` when given.
fn records(
    target: &str,
    outcome: &str,
    n: usize,
    tag: &str,
    node: impl Fn(usize) -> Option<String>,
) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                let mut r = common::record(target, outcome);
                r["record_id"] = json!(format!("{tag}-{i}"));
                if outcome == "failure" {
                    r["failure_type"] = json!("server_error");
                    r["error_layer"] = json!("server");
                }
                if let Some(id) = node(i) {
                    r["node_id"] = json!(id);
                }
                r
            })
            .collect(),
    )
}

fn no_node(_: usize) -> Option<String> {
    None
}

/// Honest history: 20 networks, each a node that reported 20 successes today.
async fn honest_history(s: &Server, target: &str) {
    for n in 1..=20u8 {
        let a = s
            .from(n)
            .record(&records(
                target,
                "success",
                20,
                &format!("honest-{n}"),
                |_| Some(format!("ld_honest{n:02}")),
            ))
            .await;
        assert_eq!(
            (a.status, a.json["accepted"].as_u64()),
            (201, Some(20)),
            "{}",
            a.json
        );
    }
}

async fn one_network_cannot_rewrite_a_target(t: &TestDb) {
    let s = Server::start(t.state()).await;
    honest_history(&s, "npm:victim-mcp-server").await;
    let before = s.from(1).get("/api/reputation/npm:victim-mcp-server").await;
    assert_eq!(
        (
            before["rated_interactions"].as_u64(),
            before["networks"].as_u64(),
            before["contributors"].as_u64(),
            before["success_rate"].as_f64(),
            before["confidence"].as_str()
        ),
        (Some(400), Some(20), Some(20), Some(1.0), Some("high")),
        "honest traffic from 20 networks counts in full: {before}"
    );
    assert_eq!(before["top_network_share"], 0.05);
    // The forgery: five anonymous requests of 1,000 failures each, from one network.
    let attacker = s.from(200);
    for k in 0..5 {
        let a = attacker
            .record(&records(
                "npm:victim-mcp-server",
                "failure",
                1000,
                &format!("forged-{k}"),
                no_node,
            ))
            .await;
        assert_eq!(a.status, 201, "{}", a.json);
        assert_eq!(
            a.json["accepted"], 1000,
            "stored, and counted in interactions"
        );
        assert_eq!(a.json["rate_limited"], json!([]));
    }
    let after = s.from(1).get("/api/reputation/npm:victim-mcp-server").await;
    assert_eq!(after["interactions"], 5400, "{after}");
    assert_eq!(after["rated_interactions"], 420);
    assert_eq!(after["capped"], 4980);
    assert_eq!(after["success_rate"], 0.952, "moved by under five points");
    assert_eq!(after["networks"], 21);
    assert_eq!(after["top_network_share"], 0.048);
    assert!(
        after["message"]
            .as_str()
            .unwrap()
            .contains("4980 more capped"),
        "{}",
        after["message"]
    );
    // A target with no history: the forgery is all there is, and it says so.
    for k in 0..5 {
        attacker
            .record(&records(
                "npm:fresh-mcp-server",
                "failure",
                1000,
                &format!("fresh-{k}"),
                no_node,
            ))
            .await;
    }
    let fresh = s.from(1).get("/api/reputation/npm:fresh-mcp-server").await;
    assert_eq!(
        (
            fresh["rated_interactions"].as_u64(),
            fresh["success_rate"].as_f64(),
            fresh["networks"].as_u64(),
            fresh["top_network_share"].as_f64(),
            fresh["confidence"].as_str()
        ),
        (Some(20), Some(0.0), Some(1), Some(1.0), Some("low")),
        "{fresh}"
    );
    // Inflating works no better: 5,000 successes on a target with failing history.
    for n in 1..=12u8 {
        s.from(n)
            .record(&records(
                "npm:flaky",
                "failure",
                10,
                &format!("flaky-{n}"),
                no_node,
            ))
            .await;
    }
    attacker
        .record(&records("npm:flaky", "success", 1000, "inflate", no_node))
        .await;
    let flaky = s.from(1).get("/api/reputation/npm:flaky").await;
    assert_eq!(flaky["success_rate"], 0.143, "20 of 140: {flaky}");
    assert_eq!(flaky["capped"], 980);
    common::assert_rollups_match_raw(t).await;
}
on_both!(one_network_cannot_rewrite_a_target);

async fn many_node_ids_and_keys_from_one_network_are_one_network(t: &TestDb) {
    let s = Server::start(t.state()).await;
    honest_history(&s, "npm:victim").await;
    let attacker = s.from(201);
    let mut keys = Vec::new();
    for _ in 0..10 {
        keys.push(attacker.register().await);
    }
    assert_eq!(
        attacker
            .post(
                "/v1/auth/agents/register",
                &[],
                &json!({"name": "b", "model_provider": "p", "model_id": "m", "environment": "e"}),
            )
            .await
            .status,
        429,
        "ten keys an hour per network"
    );
    // Every record under its own node id, each request under another key.
    for (k, key) in keys.iter().enumerate() {
        let body = records("npm:victim", "failure", 500, &format!("sybil-{k}"), |i| {
            Some(format!("ld_sybil{k}x{i}"))
        });
        let a = attacker
            .post("/api/interactions", &[("x-agent-key", key)], &body)
            .await;
        assert_eq!((a.status, a.json["accepted"].as_u64()), (201, Some(500)));
    }
    let r = s.from(1).get("/api/reputation/npm:victim").await;
    assert_eq!(r["rated_interactions"], 420, "{r}");
    assert_eq!(r["capped"], 4980);
    assert_eq!(r["networks"], 21);
    assert_eq!(
        r["contributors"], 21,
        "20 honest nodes, and the one key whose records got in before the cap"
    );
    assert_eq!(r["success_rate"], 0.952);
    common::assert_rollups_match_raw(t).await;
}
on_both!(many_node_ids_and_keys_from_one_network_are_one_network);

async fn quotas_refuse_by_index_and_never_charge_duplicates(t: &TestDb) {
    let limits = Limits {
        records_per_node: 100,
        records_per_network: 300,
        ..Limits::default()
    };
    let trusted = TrustedNetworks::parse(&["127.77.0.0/16"]).unwrap();
    let s = Server::start(t.state().with_limits(limits).with_trusted_networks(trusted)).await;
    let c = s.from(10);
    let node_a = |_: usize| Some("ld_nodea".to_owned());
    let a = c
        .record(&records("npm:q", "success", 150, "a", node_a))
        .await;
    assert_eq!(a.status, 201, "{}", a.json);
    assert_eq!(a.json["accepted"], 100);
    let limited: Vec<u64> = (100..150).collect();
    assert_eq!(
        a.json["rate_limited"],
        json!(limited),
        "the last 50, by index"
    );
    let retry = a.retry_after.expect("Retry-After");
    assert!((3540..=3600).contains(&retry), "{retry}");
    // The proxy sends the batch again from its spool: the 100 stored are duplicates, free
    // of the quota; the 50 are refused again; nothing is counted twice.
    let again = c
        .record(&records("npm:q", "success", 150, "a", node_a))
        .await;
    assert_eq!(again.status, 201);
    assert_eq!(
        (
            again.json["accepted"].as_u64(),
            again.json["duplicates"].as_u64()
        ),
        (Some(100), Some(100))
    );
    assert_eq!(again.json["rate_limited"].as_array().unwrap().len(), 50);
    // Nothing taken at all: 429, the same fields, and nothing written.
    let none = c
        .record(&records("npm:q", "success", 5, "a-more", node_a))
        .await;
    assert_eq!(none.status, 429, "{}", none.json);
    assert_eq!(none.json["rate_limited"], json!([0, 1, 2, 3, 4]));
    assert!(
        none.json["error"]
            .as_str()
            .unwrap()
            .contains("100 records per hour for this node id"),
        "{}",
        none.json
    );
    assert!(none.retry_after.is_some());
    // Other node ids of the same network share its 300.
    let b = c
        .record(&records("npm:q", "success", 250, "b", |i| {
            Some(format!("ld_n{i}"))
        }))
        .await;
    assert_eq!(b.json["accepted"], 200, "{}", b.json);
    assert!(b.json["error"].is_null());
    // Another network has its own; a trusted one has none.
    let other = s
        .from(11)
        .record(&records("npm:q", "success", 100, "c", no_node))
        .await;
    assert_eq!(other.json["accepted"], 100);
    let trusted = s
        .from(77)
        .record(&records("npm:q", "success", 1000, "t", |_| {
            Some("ld_nodea".to_owned())
        }))
        .await;
    assert_eq!(
        (
            trusted.json["accepted"].as_u64(),
            trusted.json["rate_limited"].as_array().map(Vec::len)
        ),
        (Some(1000), Some(0))
    );
    let r = s.from(11).get("/api/reputation/npm:q").await;
    assert_eq!(r["interactions"], 1400);
    // Capped at 20 a day for each untrusted network (10, 11), never for the trusted one.
    assert_eq!(r["rated_interactions"], 1040, "{r}");
    assert_eq!(t.count("interactions").await, 1400);
    common::assert_rollups_match_raw(t).await;
}
on_both!(quotas_refuse_by_index_and_never_charge_duplicates);

async fn a_busy_node_loses_nothing_under_the_default_quotas(t: &TestDb) {
    let s = Server::start(t.state()).await;
    let c = s.from(30);
    // A CI runner: 24,000 records an hour from one node on one network, to 10 targets.
    for k in 0..24 {
        let body = Value::Array(
            (0..1000)
                .map(|i| {
                    let mut r = common::record(&format!("npm:tool-{}", i % 10), "success");
                    r["record_id"] = json!(format!("ci-{k}-{i}"));
                    r["node_id"] = json!("ld_ci_runner");
                    r
                })
                .collect(),
        );
        let a = c.record(&body).await;
        assert_eq!(a.status, 201, "{}", a.json);
        assert_eq!(a.json["accepted"], 1000);
        assert_eq!(a.json["rate_limited"], json!([]), "batch {k}");
        assert!(a.retry_after.is_none());
    }
    assert_eq!(t.count("interactions").await, 24_000);
    let r = s.from(30).get("/api/reputation/npm:tool-3").await;
    assert_eq!(
        r["interactions"], 2400,
        "every record counts in interactions"
    );
}
on_both!(a_busy_node_loses_nothing_under_the_default_quotas);

async fn free_keys_do_not_multiply_telemetry(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, Duration::from_secs(5)).await;
    let s = Server::start(rig.state.clone()).await;
    let attacker = s.from(210);
    let obs = |status: u16, n: usize| {
        Value::Array(
            (0..n)
                .map(|_| json!({"host": "api.vendor-fixture.com", "method": "GET", "status": status, "latency_ms": 100}))
                .collect(),
        )
    };
    // Twenty agents on twenty networks saw the service work.
    for n in 1..=20u8 {
        let a = s
            .from(n)
            .post("/v1/telemetry/observe", &[], &obs(200, 1))
            .await;
        assert_eq!(a.status, 200);
    }
    let honest = rig.service("vendor").await["score"].clone();
    assert_eq!(
        (honest["value"].as_u64(), honest["networks"].as_u64()),
        (Some(100), Some(20))
    );
    // Ten free keys from one network, 600 failures each.
    let mut accepted = 0;
    for _ in 0..10 {
        let key = attacker.register().await;
        let a = attacker
            .post(
                "/v1/telemetry/observe",
                &[("x-agent-key", &key)],
                &obs(503, 600),
            )
            .await;
        assert!(a.status == 200 || a.status == 429, "{}", a.json);
        accepted += a.json["accepted"].as_u64().unwrap_or(0);
        if a.status == 200 {
            // A fresh key weighs what anonymous telemetry does.
            assert!(
                a.json["items"][0]["weight"] == 0.3 || a.json["items"][0].get("error").is_some()
            );
        }
    }
    assert_eq!(accepted, 3000, "one network's keys share its 3,000 an hour");
    let score = rig.service("vendor").await["score"].clone();
    // The attacker's network holds at most a fifth of the weight: success 0.8, not 0.007.
    assert_eq!(score["success"], 0.8, "{score}");
    assert_eq!(score["value"], 86);
    assert_eq!(score["networks"], 21);
    // The telemetry block says how independent it is.
    let rep = s
        .from(1)
        .get("/api/reputation/api.vendor-fixture.com")
        .await;
    let tel = &rep["telemetry"];
    assert_eq!(
        (tel["networks"].as_u64(), tel["contributors"].as_u64()),
        (Some(21), Some(5)),
        "{tel}"
    );
    assert_eq!(tel["top_network_share"], 0.993);
}
on_both!(free_keys_do_not_multiply_telemetry);
