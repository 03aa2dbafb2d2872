//! Provider results a stranger cannot forge (SPEC §11), on SQLite and PostgreSQL, attacker
//! first: a `protocol` result the server's own probe contradicts is refused by name and
//! earns nothing; a probe the SSRF rules refuse sends nothing and confirms nothing; an
//! `agent` result shows only once a provider of another network agrees (every network is
//! a loopback source address `127.N.0.1`, each N its own /24, over a real socket); a
//! provider whose results disagree ranks last for critical directives and, at three, may
//! claim nothing. And the upgrade: results stored before they were checked never count.

use crate::common;
use crate::provider_fixtures;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use common::{Kind, TestDb};
use lowdown_server::gateway::{catalog, GatewayConfig, Prowl};
use provider_fixtures::{agent_result, honest, uniform, Bench, Pv, TOKEN};
use serde_json::{json, Value};
use sqlx::Row;

const DAY: i64 = 86_400_000;

async fn earned(b: &Bench, p: &Pv) -> Value {
    let r = b.as_(&p.key, "GET", "/v1/provider/earnings", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.json
}

/// What a provider's disagreements were about, by name.
async fn disagreements(t: &TestDb, p: &Pv) -> Vec<String> {
    sqlx::query("SELECT field FROM provider_disagreements WHERE provider_id = $1 ORDER BY field")
        .bind(p.provider_id.clone())
        .fetch_all(&t.check.pool)
        .await
        .unwrap()
        .iter()
        .map(|r| r.try_get(0).unwrap())
        .collect()
}

async fn a_forged_protocol_result_is_refused_and_earns_nothing(t: &TestDb) {
    let b = Bench::start(t).await;
    let (forger, honest_one) = (b.provider().await, b.provider().await);
    let id = b.protocol(100, false).await;
    assert_eq!(b.claim(&forger, &id).await.status, 200);
    // The forgery of the issue: a perfect result for a remote nobody probed.
    let r = b.submit(&forger, uniform(&id, 10.0)).await;
    assert_eq!(r.refusal(), (422, Some("contradicts_probe")), "{}", r.text);
    assert!(
        r.json["error"]
            .as_str()
            .unwrap()
            .contains("contradicts_probe: tool_count (submitted 9, the server saw 2)"),
        "{}",
        r.text
    );
    assert_eq!(b.initializes(), 1, "the server probed the remote itself");
    assert_eq!(
        earned(&b, &forger).await["total_credits"].as_f64(),
        Some(0.0)
    );
    assert_eq!(t.count("benchmark_submissions").await, 0, "no reading");
    assert_eq!(
        b.rig.service("vendor").await["benchmark"]["protocol"],
        Value::Null,
        "no displacement"
    );
    let d = b.directive(&id).await;
    assert_eq!(
        (d["status"].as_str(), &d["lease"]),
        (Some("open"), &Value::Null),
        "back in the queue: {d}"
    );
    assert_eq!(disagreements(t, &forger).await, ["tool_count"]);

    // The true facts with a flattering dimension, then another schema behind the same count.
    assert_eq!(b.claim(&forger, &id).await.status, 200);
    let mut inflated = honest(&id, &b.remote(), 10.0).await;
    inflated["dimensions"]["tool_documentation"] = json!(10);
    inflated["overall_score"] = json!(88.0);
    let r = b.submit(&forger, inflated).await;
    assert_eq!(r.json["reason"], "contradicts_probe", "{}", r.text);
    assert!(
        r.json["error"]
            .as_str()
            .unwrap()
            .contains("dimensions.tool_documentation (submitted 10, the server saw 0)"),
        "{}",
        r.text
    );
    assert_eq!(b.claim(&forger, &id).await.status, 200);
    let mut rehashed = honest(&id, &b.remote(), 10.0).await;
    rehashed["observed"]["schema_hash"] = json!("ab".repeat(32));
    let r = b.submit(&forger, rehashed).await;
    assert_eq!(r.json["reason"], "contradicts_probe", "{}", r.text);
    assert_eq!(
        disagreements(t, &forger).await,
        ["dimensions.tool_documentation", "schema_hash", "tool_count"]
    );

    // Three disagreements in 30 days: the forger may claim nothing more.
    let (ids, listing) = b.listed(&forger).await;
    assert!(ids.is_empty(), "{listing}");
    assert_eq!(listing["excluded"]["disagreements"], 3, "{listing}");
    let r = b.claim(&forger, &id).await;
    assert_eq!(r.refusal(), (403, Some("provider_excluded")), "{}", r.text);

    // An honest provider, whatever latency it measured from its vantage, is accepted.
    assert_eq!(b.claim(&honest_one, &id).await.status, 200);
    let r = b
        .submit(&honest_one, honest(&id, &b.remote(), 7.0).await)
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        (
            r.json["verification"].as_str(),
            r.json["credited_credits"].as_f64()
        ),
        (Some("probe"), Some(70.0))
    );
    assert_eq!(
        b.rig.service("vendor").await["benchmark"]["protocol"]["value"],
        63.5
    );
    let d = b.directive(&id).await;
    assert_eq!(d["submission"]["observed"]["tool_count"], 2, "{d}");
    assert_eq!(
        earned(&b, &forger).await["total_credits"].as_f64(),
        Some(0.0)
    );

    // Thirty days after the first disagreement only two remain: it may claim again.
    let later = b.protocol(1, false).await;
    b.shift(30 * DAY);
    assert_eq!(b.claim(&forger, &later).await.status, 200);
}
on_both!(a_forged_protocol_result_is_refused_and_earns_nothing);

async fn a_probe_the_ssrf_rules_refuse_sends_nothing_and_confirms_nothing(t: &TestDb) {
    let b = Bench::start(t).await;
    let p = b.provider().await;
    let id = b.protocol(1, false).await;
    assert_eq!(b.claim(&p, &id).await.status, 200);
    let body = honest(&id, &b.remote(), 10.0).await;
    let probes = b.initializes();
    // The same database behind a server that keeps the Scanner's rules strict: the
    // loopback remote is refused before any byte is sent.
    let text = common::prowl::CATALOG.replace("{UP}", &b.rig.up.base());
    let services = catalog::parse(&text, "services.toml", true).unwrap();
    let strict = Prowl::new(services, GatewayConfig::default(), |_| None);
    let app = lowdown_server::app(
        b.rig
            .state
            .clone()
            .with_prowl(strict)
            .with_admin_token(Some(TOKEN.into())),
    );
    let r = common::post_as(
        &app,
        "/v1/provider/submit",
        &[("x-agent-key", &p.key)],
        &body,
    )
    .await;
    assert_eq!(r.refusal(), (409, Some("probe_unverified")), "{}", r.text);
    assert!(
        r.json["error"].as_str().unwrap().contains("blocked_url"),
        "{}",
        r.text
    );
    assert_eq!(b.initializes(), probes, "nothing reached the remote");
    assert_eq!(t.count("benchmark_submissions").await, 0);
    assert!(
        disagreements(t, &p).await.is_empty(),
        "a probe that cannot see is nobody's fault"
    );
    assert_eq!(b.directive(&id).await["lease"], Value::Null);
}
on_both!(a_probe_the_ssrf_rules_refuse_sends_nothing_and_confirms_nothing);

/// The API on a real socket, so each request comes from its source address.
struct Server(common::Served);

impl Server {
    async fn start(b: &Bench) -> Server {
        let state = b.rig.state.clone().with_admin_token(Some(TOKEN.into()));
        Server(common::Served::start(state).await)
    }

    /// A request as provider `p` from network `n` (`127.n.0.1`).
    async fn call(
        &self,
        n: u8,
        p: &Pv,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let http = reqwest::Client::builder()
            .local_address(IpAddr::V4(Ipv4Addr::new(127, n, 0, 1)))
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let url = self.0.url(path);
        let mut req = http
            .request(method.parse().unwrap(), url)
            .header("x-agent-key", &p.key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    async fn claim(&self, n: u8, p: &Pv, id: &str) -> (u16, Value) {
        self.call(
            n,
            p,
            "POST",
            &format!("/v1/provider/directives/{id}/claim"),
            None,
        )
        .await
    }

    async fn submit(&self, n: u8, p: &Pv, body: Value) -> (u16, Value) {
        self.call(n, p, "POST", "/v1/provider/submit", Some(body))
            .await
    }

    async fn listed(&self, n: u8, p: &Pv) -> Value {
        let (status, v) = self
            .call(n, p, "GET", "/v1/provider/directives", None)
            .await;
        assert_eq!(status, 200, "{v}");
        v
    }

    /// Claims `id` from network `n` and submits `found` of two expected strings.
    async fn run(&self, n: u8, p: &Pv, id: &str, found: usize) -> Value {
        let (status, v) = self.claim(n, p, id).await;
        assert_eq!(status, 200, "{v}");
        let (status, v) = self.submit(n, p, agent_result(id, found)).await;
        assert_eq!(status, 201, "{v}");
        v
    }
}

fn ids(listing: &Value) -> Vec<String> {
    listing["directives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["directive_id"].as_str().unwrap().to_owned())
        .collect()
}

async fn agent_results_count_once_two_networks_agree(t: &TestDb) {
    let b = Bench::start(t).await;
    let s = Server::start(&b).await;
    let (a, neighbour, c) = (b.provider().await, b.provider().await, b.provider().await);
    let id = b.agent("svc_vendor", 2).await;
    let shown = || async { b.rig.service("vendor").await["benchmark"]["agent"].clone() };

    let v = s.run(1, &a, &id, 2).await;
    assert_eq!(
        (v["verification"].as_str(), v["credited_credits"].as_f64()),
        (Some("pending"), Some(0.0)),
        "{v}"
    );
    assert_eq!(
        shown().await,
        Value::Null,
        "one provider alone shows nothing"
    );
    let e = earned(&b, &a).await;
    assert_eq!(
        (
            e["total_credits"].as_f64(),
            e["awaiting_agreement"].as_i64()
        ),
        (Some(0.0), Some(1)),
        "credit held: {e}"
    );
    // A second provider on the same network cannot confirm it: not listed, not claimable.
    assert!(!ids(&s.listed(1, &neighbour).await).contains(&id));
    let (status, v) = s.claim(1, &neighbour, &id).await;
    assert_eq!(
        (status, v["reason"].as_str()),
        (409, Some("same_network")),
        "{v}"
    );
    // Nor can the first provider from another network.
    let (status, v) = s.claim(9, &a, &id).await;
    assert_eq!(
        (status, v["reason"].as_str()),
        (409, Some("already_submitted")),
        "{v}"
    );
    // A claim from another network, submitted from the pending result's: refused at submit.
    let (status, _) = s.claim(3, &neighbour, &id).await;
    assert_eq!(status, 200);
    let (status, v) = s.submit(1, &neighbour, agent_result(&id, 2)).await;
    assert_eq!(
        (status, v["reason"].as_str()),
        (409, Some("same_network")),
        "{v}"
    );
    assert_eq!(shown().await, Value::Null);

    // Another network agrees: shown, and both providers share the credit.
    assert!(ids(&s.listed(2, &c).await).contains(&id));
    let v = s.run(2, &c, &id, 2).await;
    assert_eq!(
        (v["verification"].as_str(), v["credited_credits"].as_f64()),
        (Some("agreed"), Some(0.7)),
        "{v}"
    );
    let agent = shown().await;
    assert_eq!(
        (
            agent["value"].as_f64(),
            agent["providers"].as_i64(),
            agent["verified_by"].as_str()
        ),
        (Some(100.0), Some(2), Some("two_networks")),
        "{agent}"
    );
    let e = earned(&b, &a).await;
    assert_eq!(
        (
            e["total_credits"].as_f64(),
            e["awaiting_agreement"].as_i64()
        ),
        (Some(0.7), Some(0)),
        "{e}"
    );
    let d = b.directive(&id).await;
    assert_eq!(d["status"], "done");
    let statuses: Vec<&str> = d["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["reading", "reading"], "{d}");
    let networks: Vec<&Value> = d["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["network"])
        .collect();
    assert!(
        networks[0].is_string() && networks[0] != networks[1],
        "each network is stored with its result: {networks:?}"
    );
}
on_both!(agent_results_count_once_two_networks_agree);

async fn a_disagreeing_provider_earns_nothing_and_loses_priority(t: &TestDb) {
    let b = Bench::start(t).await;
    let s = Server::start(&b).await;
    let (a, liar, c, d) = (
        b.provider().await,
        b.provider().await,
        b.provider().await,
        b.provider().await,
    );
    let id = b.agent("svc_never", 3).await;
    let shown = || async { b.rig.service("never").await["benchmark"]["agent"].clone() };
    s.run(1, &a, &id, 2).await;
    let v = s.run(2, &liar, &id, 0).await;
    assert_eq!(
        v["verification"], "pending",
        "a pass and a fail do not agree: {v}"
    );
    assert_eq!(
        shown().await,
        Value::Null,
        "two disagreeing networks show nothing"
    );
    // A third network settles it: the odd one out disagreed.
    let v = s.run(3, &c, &id, 2).await;
    assert_eq!(v["verification"], "agreed", "{v}");
    assert_eq!(shown().await["value"], 100.0);
    assert_eq!(earned(&b, &liar).await["total_credits"].as_f64(), Some(0.0));
    assert_eq!(earned(&b, &a).await["total_credits"].as_f64(), Some(1.05));
    assert_eq!(disagreements(t, &liar).await, ["passed"]);
    let status: Vec<(String, String)> = b.directive(&id).await["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["provider_id"].as_str().unwrap().to_owned(),
                s["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        status.contains(&(liar.provider_id.clone(), "disagreed".into())),
        "{status:?}"
    );

    // A critical directive reaches the disagreeing provider last: rank 3 of 4.
    let critical = b.protocol(5, true).await;
    let listing = s.listed(2, &liar).await;
    assert_eq!(
        (
            ids(&listing),
            listing["held_back"].as_u64(),
            &listing["standing"]
        ),
        (vec![], Some(1), &json!({"rank": 3, "providers": 4})),
        "{listing}"
    );
    let (status, v) = s.claim(2, &liar, &critical).await;
    assert_eq!(
        (status, v["reason"].as_str()),
        (403, Some("critical_held")),
        "{v}"
    );
    let listing = s.listed(4, &d).await;
    assert_eq!(ids(&listing), std::slice::from_ref(&critical), "{listing}");
    b.shift(15 * 60_000 * 3 / 4);
    assert_eq!(ids(&s.listed(2, &liar).await), [critical]);
}
on_both!(a_disagreeing_provider_earns_nothing_and_loses_priority);

/// Migrations 0001-0011 for `kind`: the database version 11 left.
async fn version_11(kind: Kind, url: &str) -> sqlx::AnyPool {
    let migrations = lowdown_server::db::migrations_through(kind == Kind::Sqlite, 11);
    common::migrated_as_before(url, &migrations).await
}

async fn results_stored_before_they_were_checked_never_count(kind: Kind) {
    let Some((url, dir, pg)) = common::empty_database(kind).await else {
        return;
    };
    let old = version_11(kind, &url).await;
    for q in [
        "INSERT INTO benchmark_directives (directive_id, seq, service_id, kind, spec, price_credits, critical, created_at, status, holder, lease_expires_at, claim_id, completed_at, submission_id) \
         VALUES ('bd_legacy', 1, 'svc_vendor', 'protocol', '{\"remote_url\":\"https://mcp.vendor-fixture.com/mcp\"}', 1, 0, 1, 'done', NULL, NULL, NULL, 2, 'bs_legacy')",
        "INSERT INTO benchmark_submissions (submission_id, directive_id, provider_id, service_id, kind, dimensions, overall_score, recorded_score, test_results, runner_id, execution_time_ms, displaced, created_at) \
         VALUES ('bs_legacy', 'bd_legacy', 'pv_forger', 'svc_vendor', 'protocol', '{}', 100, 100, '[]', 'forged', 1, 1, 2)",
        "INSERT INTO benchmark_scores (service_id, kind, value, set_at, reason, providers, submission_id) VALUES ('svc_vendor', 'protocol', 100, 2, 'first', 1, 'bs_legacy')",
        "INSERT INTO provider_ledger (entry_id, provider_id, directive_id, submission_id, millicredits, created_at) VALUES ('le_legacy', 'pv_forger', 'bd_legacy', 'bs_legacy', 700, 2)",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(q)).execute(&old).await.unwrap();
    }
    old.close().await;
    let t = TestDb::open(kind, url, dir, pg).await;
    let row: (String, Option<i64>) = t
        .row("SELECT status, counted_at FROM benchmark_submissions WHERE submission_id = 'bs_legacy'")
        .await;
    assert_eq!(row, ("unverified".to_owned(), None));
    assert_eq!(
        t.count("benchmark_scores").await,
        0,
        "the forged 100 is no longer shown"
    );
    assert_eq!(
        t.count("provider_ledger").await,
        1,
        "credits already earned stay"
    );
    // A directive may now hold several submissions, one per provider.
    for (sid, pv, ok) in [
        ("bs_second", "pv_other", true),
        ("bs_again", "pv_other", false),
    ] {
        let r = sqlx::query(
            "INSERT INTO benchmark_submissions (submission_id, directive_id, provider_id, service_id, kind, dimensions, overall_score, recorded_score, test_results, runner_id, execution_time_ms, displaced, created_at, status) \
             VALUES ($1, 'bd_legacy', $2, 'svc_vendor', 'protocol', '{}', 1, 1, '[]', 'r', 1, 0, 3, 'pending')",
        )
        .bind(sid)
        .bind(pv)
        .execute(&t.check.pool)
        .await;
        assert_eq!(r.is_ok(), ok, "{sid}: {r:?}");
    }
    t.cleanup().await;
}
on_both!(kind results_stored_before_they_were_checked_never_count);
