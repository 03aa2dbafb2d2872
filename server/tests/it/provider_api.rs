//! Provider mode's API (SPEC §11) on SQLite and PostgreSQL: the operator's token, provider
//! registration, leases and every misuse named, expired leases back in the queue, the
//! ledger, the displacement rule with the probe-health cap, and critical directives in
//! reputation order.

use crate::common;
use crate::provider_fixtures;

use common::prowl::wait_calls;
use common::{call, post_as, TestDb};
use provider_fixtures::{honest, uniform, Bench, LEASE_MS, TOKEN};
use serde_json::json;

async fn the_operator_posts_and_only_with_the_token(t: &TestDb) {
    let b = Bench::start(t).await;
    let body = json!({"service_id": "svc_vendor", "kind": "protocol", "price_credits": 1,
        "spec": {"remote_url": "https://mcp.vendor-fixture.com/mcp"}});
    // A server without a token refuses the route whatever is sent.
    let bare = lowdown_server::app(b.rig.state.clone());
    let auth = format!("Bearer {TOKEN}");
    let r = post_as(
        &bare,
        "/v1/benchmark/directives",
        &[("authorization", &auth)],
        &body,
    )
    .await;
    assert_eq!(r.refusal(), (403, Some("admin_disabled")), "{}", r.text);
    for header in [None, Some("Bearer wrong-token-0123456789"), Some(TOKEN)] {
        let h: Vec<(&str, &str)> = header.iter().map(|v| ("authorization", *v)).collect();
        let r = post_as(&b.app, "/v1/benchmark/directives", &h, &body).await;
        assert_eq!(r.refusal(), (401, Some("admin_token")), "{header:?}");
    }
    let r = b.post_directive(&body).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        (r.json["status"].as_str(), r.json["earn_credits"].as_f64()),
        (Some("open"), Some(0.7))
    );
    for (change, field) in [
        (
            json!({"service_id": "svc_unknown"}),
            "service_id: svc_unknown is not in the catalog",
        ),
        (json!({"kind": "llm"}), "kind:"),
        (
            json!({"spec": {"remote_url": "https://10.0.0.7/mcp"}}),
            "spec.remote_url: the host is not public",
        ),
        (
            json!({"spec": {"remote_url": "ftp://mcp.vendor-fixture.com/"}}),
            "spec.remote_url: only https",
        ),
    ] {
        let mut bad = body.clone();
        for (k, v) in change.as_object().unwrap() {
            bad[k] = v.clone();
        }
        let r = b.post_directive(&bad).await;
        assert_eq!(r.status, 400, "{}", r.text);
        assert!(
            r.json["error"].as_str().unwrap().starts_with(field),
            "{}",
            r.text
        );
    }
    assert_eq!(
        t.count("benchmark_directives").await,
        1,
        "nothing refused was stored"
    );
}
on_both!(the_operator_posts_and_only_with_the_token);

async fn agents_register_as_providers_once(t: &TestDb) {
    let b = Bench::start(t).await;
    let r = b
        .as_("ak_unknown", "POST", "/v1/provider/register", None)
        .await;
    assert_eq!(r.refusal(), (401, Some("agent_key")));
    let r = call(&b.app, "POST", "/v1/provider/register", &[], None).await;
    assert_eq!(r.status, 401);
    let p = b.provider().await;
    let again = b.as_(&p.key, "POST", "/v1/provider/register", None).await;
    assert_eq!(again.status, 200);
    assert_eq!(
        again.json["provider_id"].as_str(),
        Some(p.provider_id.as_str())
    );
    assert_eq!(again.json["agent_id"].as_str(), Some(p.agent_id.as_str()));
    // An agent that is not a provider may not list.
    let (key, _) = b.rig.agent(None).await;
    let r = b.as_(&key, "GET", "/v1/provider/directives", None).await;
    assert_eq!(r.refusal(), (403, Some("not_a_provider")));
}
on_both!(agents_register_as_providers_once);

async fn leases_and_every_misuse_by_name(t: &TestDb) {
    let b = Bench::start(t).await;
    let (a, c) = (b.provider().await, b.provider().await);
    let first = b.protocol(3, false).await;
    let second = b.protocol(1, false).await;
    let (ids, _) = b.listed(&a).await;
    assert_eq!(ids, [first.clone(), second.clone()], "oldest first");

    let r = b.submit(&a, uniform(&first, 10.0)).await;
    assert_eq!(
        r.refusal(),
        (409, Some("not_claimed")),
        "submitting without a claim: {}",
        r.text
    );
    let r = b.release(&a, &first).await;
    assert_eq!(r.json["reason"].as_str(), Some("not_claimed"));

    let r = b.claim(&a, &first).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["lease_seconds"], 1800);
    let r = b.claim(&a, &first).await;
    assert_eq!(
        r.refusal(),
        (409, Some("already_claimed")),
        "claiming twice"
    );
    assert!(r.json["error"].as_str().unwrap().contains(&first));
    let r = b.claim(&c, &first).await;
    assert_eq!(
        r.refusal(),
        (403, Some("foreign_directive")),
        "one provider at a time"
    );
    let r = b.claim(&a, &second).await;
    assert_eq!(
        r.refusal(),
        (409, Some("lease_held")),
        "one lease per provider"
    );
    let r = b.submit(&c, uniform(&first, 10.0)).await;
    assert_eq!(
        r.refusal(),
        (403, Some("foreign_directive")),
        "a foreign directive"
    );
    let r = b.release(&c, &first).await;
    assert_eq!(r.json["reason"].as_str(), Some("foreign_directive"));
    let r = b.claim(&a, "bd_0000000000000000").await;
    assert_eq!(r.refusal(), (404, Some("unknown_directive")));
    let (ids, _) = b.listed(&c).await;
    assert_eq!(
        ids,
        std::slice::from_ref(&second),
        "a leased directive is not listed"
    );

    // Released: open to everyone at once.
    assert_eq!(b.release(&a, &first).await.status, 200);
    assert_eq!(b.claim(&c, &first).await.status, 200);

    // An expired lease: back in the queue, and the late holder hears so by name.
    b.shift(LEASE_MS + 1);
    let (ids, _) = b.listed(&a).await;
    assert_eq!(ids, [first.clone(), second.clone()]);
    let r = b.submit(&c, uniform(&first, 10.0)).await;
    assert_eq!(r.refusal(), (409, Some("lease_expired")), "{}", r.text);
    let r = b.release(&c, &first).await;
    assert_eq!(r.json["reason"].as_str(), Some("lease_expired"));
    assert_eq!(b.claim(&a, &first).await.status, 200);
    let r = b.submit(&c, uniform(&first, 10.0)).await;
    assert_eq!(
        r.json["reason"].as_str(),
        Some("lease_expired"),
        "the old holder is told its lease ended, not who holds it now"
    );

    // A bad body is named and costs nothing; a good one completes the directive.
    let mut wrong = uniform(&first, 10.0);
    wrong["overall_score"] = json!(50);
    let r = b.submit(&a, wrong).await;
    assert_eq!(r.status, 400);
    assert!(
        r.json["error"]
            .as_str()
            .unwrap()
            .starts_with("overall_score:"),
        "{}",
        r.text
    );
    let good = honest(&first, &b.remote(), 9.0).await;
    let r = b.submit(&a, good.clone()).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        (
            r.json["accepted"].as_bool(),
            r.json["verification"].as_str()
        ),
        (Some(true), Some("probe"))
    );
    assert_eq!(r.json["recorded_score"], 66.5, "53 + 1.5 × latency 9");
    assert_eq!(r.json["credited_credits"], 2.1);
    let r = b.submit(&a, good).await;
    assert_eq!(r.refusal(), (409, Some("directive_completed")));
    let r = b.claim(&c, &first).await;
    assert_eq!(r.json["reason"].as_str(), Some("directive_completed"));

    let d = b.directive(&first).await;
    assert_eq!(d["status"], "done");
    assert_eq!(
        d["submission"]["provider_id"].as_str(),
        Some(a.provider_id.as_str())
    );
    assert_eq!(d["submission"]["dimensions"]["latency"], 9.0);
    let e = b.as_(&a.key, "GET", "/v1/provider/earnings", None).await;
    assert_eq!(e.status, 200);
    assert_eq!(
        (
            e.json["total_credits"].as_f64(),
            e.json["completed"].as_u64()
        ),
        (Some(2.1), Some(1))
    );
    let e = b.as_(&c.key, "GET", "/v1/provider/earnings", None).await;
    assert_eq!(e.json["total_credits"].as_f64(), Some(0.0));
}
on_both!(leases_and_every_misuse_by_name);

async fn the_displayed_score_moves_by_the_rule_under_the_cap(t: &TestDb) {
    let b = Bench::start(t).await;
    let (a, c) = (b.provider().await, b.provider().await);
    // Honest runs of the same remote differ only in latency, which each provider measures
    // from where it stands: 53 + 1.5 × latency.
    let run = |p: provider_fixtures::Pv, latency: f64| {
        let b = &b;
        async move {
            let id = b.protocol(1, false).await;
            assert_eq!(b.claim(&p, &id).await.status, 200);
            let r = b.submit(&p, honest(&id, &b.remote(), latency).await).await;
            assert_eq!(r.status, 201, "{}", r.text);
            r.json
        }
    };
    let shown = |v: serde_json::Value| v["benchmark"]["protocol"].clone();
    assert_eq!(
        shown(b.rig.service("vendor").await),
        serde_json::Value::Null
    );
    assert_eq!(run(a.clone(), 10.0).await["displaced_reason"], "first");
    let s = shown(b.rig.service("vendor").await);
    assert_eq!(
        (s["value"].as_f64(), s["verified_by"].as_str()),
        (Some(68.0), Some("server_probe"))
    );
    let r = run(a.clone(), 1.0).await;
    assert_eq!(
        (r["displaced"].as_bool(), r["recorded_score"].as_f64()),
        (Some(false), Some(54.5)),
        "one provider cannot lower it"
    );
    assert_eq!(shown(b.rig.service("vendor").await)["value"], 68.0);
    let r = run(c.clone(), 3.0).await;
    assert_eq!(r["displaced_reason"], "providers");
    let s = shown(b.rig.service("vendor").await);
    assert_eq!(
        (s["value"].as_f64(), s["providers"].as_i64()),
        (Some(56.0), Some(2)),
        "the mean of both providers' latest: {s}"
    );
    assert_eq!(run(c.clone(), 9.0).await["displaced_reason"], "higher");
    let r = run(a.clone(), 4.0).await;
    assert_eq!(r["displaced"], false);
    b.shift(14 * 86_400_000 + 1);
    assert_eq!(run(a.clone(), 6.0).await["displaced_reason"], "stale");
    assert_eq!(shown(b.rig.service("vendor").await)["value"], 62.0);
    assert_eq!(run(c.clone(), 8.0).await["displaced_reason"], "higher");

    // Failing gateway calls cap what is shown, on read, as they cap the live score.
    let (key, agent_id) = b.rig.agent(None).await;
    let h = b.rig.honest(&key, &agent_id, "svc_vendor").await;
    b.rig
        .up
        .status
        .store(500, std::sync::atomic::Ordering::SeqCst);
    for _ in 0..10 {
        b.rig.call("/vendor/status", &h).await;
    }
    wait_calls(t, 10).await;
    let s = b.rig.service("vendor").await;
    assert_eq!(s["probe_health"]["cap"], 30, "{s}");
    assert_eq!(
        (
            shown(s.clone())["value"].as_f64(),
            shown(s.clone())["uncapped"].as_f64()
        ),
        (Some(30.0), Some(65.0))
    );
    assert_eq!(shown(s)["capped_by"], "probe_health");
}
on_both!(the_displayed_score_moves_by_the_rule_under_the_cap);

async fn critical_directives_reach_higher_reputation_first(t: &TestDb) {
    let b = Bench::start(t).await;
    let good = b.provider().await;
    let flagged = b.provider().await;
    let now = b.rig.state.now();
    lowdown_server::db::gateway::flag_agent(&t.db, &flagged.agent_id, "forged_receipt", None, now)
        .await
        .unwrap();
    let plain = b.protocol(1, false).await;
    let critical = b.protocol(5, true).await;
    let (ids, v) = b.listed(&good).await;
    assert_eq!(ids, [critical.clone(), plain.clone()], "critical first");
    assert_eq!(v["standing"], json!({"rank": 0, "providers": 2}));
    let (ids, v) = b.listed(&flagged).await;
    assert_eq!(
        (ids, v["held_back"].as_u64()),
        (vec![plain.clone()], Some(1)),
        "{v}"
    );
    let r = b.claim(&flagged, &critical).await;
    assert_eq!(r.refusal(), (403, Some("critical_held")), "{}", r.text);
    // Half the head start later (rank 1 of 2) it opens to the flagged provider too.
    b.shift(15 * 60_000 / 2);
    let (ids, _) = b.listed(&flagged).await;
    assert_eq!(ids, [critical.clone(), plain]);
    assert_eq!(b.claim(&flagged, &critical).await.status, 200);
}
on_both!(critical_directives_reach_higher_reputation_first);

async fn llms_txt_and_openapi_describe_provider_mode(t: &TestDb) {
    let app = t.app();
    let llms = common::get(&app, "/llms.txt").await.text;
    for route in [
        "POST /v1/benchmark/directives",
        "POST /v1/provider/register",
        "GET /v1/provider/directives",
        "/claim",
        "/release",
        "POST /v1/provider/submit",
        "GET /v1/provider/earnings",
    ] {
        assert!(llms.contains(route), "llms.txt does not explain {route}");
    }
    let doc = common::get(&app, "/openapi.json").await.json;
    assert_eq!(
        doc["components"]["schemas"]["Service"]["properties"]["benchmark"]["$ref"],
        "#/components/schemas/Benchmark"
    );
    let text = doc.to_string();
    for reason in [
        "already_claimed",
        "lease_expired",
        "foreign_directive",
        "not_claimed",
        "critical_held",
        "contradicts_probe",
        "probe_unverified",
        "same_network",
        "provider_excluded",
    ] {
        assert!(text.contains(reason), "openapi.json does not name {reason}");
    }
}
on_both!(llms_txt_and_openapi_describe_provider_mode);
