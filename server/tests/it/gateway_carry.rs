//! What the gateway carries (SPEC §10; the "open proxy" issue): only calls a service's
//! `allow` rules match, only paths that stay under the upstream's base, only the allowlisted
//! headers both ways, the agent's own credential for a `passthrough` service (and nothing of
//! it stored), and no more calls than the agent's and the network's quotas. Against a
//! recording upstream on loopback that logs every request it receives, on SQLite and
//! PostgreSQL.

use crate::common;

use std::time::Duration;

use common::prowl::{assert_nowhere_in_db, raw_http, Rig, VENDOR_SECRET};
use common::{get, TestDb};
use lowdown_server::db::quota::Limits;

const TIMEOUT: Duration = Duration::from_secs(20);

/// One service that allows searching only, as a public read-only API would.
const SEARCH_ONLY: &str = r#"
[[service]]
slug = "vendor"
service_id = "svc_vendor"
upstream = "{UP}/base"
hosts = ["api.vendor-fixture.com"]
sampling_rate = 1.0
allow = ["GET /v1/search", "POST /v1/embed"]
credential = { header = "Authorization", env = "VENDOR_KEY", format = "Bearer {}" }
"#;

/// A raw request through the gateway with the honest decision headers and `extra` lines.
fn raw(method: &str, path: &str, h: &[(String, String)], extra: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: gateway.local\r\nX-Agent-Key: {}\r\nX-Prowl-Salt-Id: {}\r\n\
         X-Prowl-Sample-Decision: {}\r\n{extra}Connection: close\r\nContent-Length: 0\r\n\r\n",
        h[0].1, h[1].1, h[2].1
    )
}

fn status_and_reason(answer: &str) -> (u16, Option<String>) {
    let status = answer[9..12].parse().unwrap();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let reason = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["reason"].as_str().map(str::to_owned));
    (status, reason)
}

async fn calls_no_allow_rule_matches_are_403_and_never_reach_the_upstream(t: &TestDb) {
    let rig = Rig::start(t, SEARCH_ONLY, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    for (method, path) in [
        ("GET", "/vendor/v1/customers"),
        ("POST", "/vendor/v1/refunds"),
        ("POST", "/vendor/v1/search"),
        ("GET", "/vendor/v1/searchy"),
        ("GET", "/vendor/v1/embed"),
        ("DELETE", "/vendor/v1/search"),
        ("GET", "/vendor"),
    ] {
        let answer = raw_http(rig.gateway, &raw(method, path, &h, "")).await;
        assert_eq!(
            status_and_reason(&answer),
            (403, Some("not_allowed".into())),
            "{method} {path}: {answer}"
        );
    }
    assert!(
        rig.up.requests().is_empty(),
        "a refused call reached the upstream: {:?}",
        rig.up.requests()
    );
    for (method, path, upstream) in [
        ("GET", "/vendor/v1/search?q=1", "/base/v1/search?q=1"),
        ("GET", "/vendor/v1/search/deep", "/base/v1/search/deep"),
        ("POST", "/vendor/v1/embed", "/base/v1/embed"),
    ] {
        let answer = raw_http(rig.gateway, &raw(method, path, &h, "")).await;
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "{method} {path}: {answer}"
        );
        assert_eq!(rig.up.requests().last().unwrap().uri, upstream);
    }
    assert_eq!(rig.up.requests().len(), 3);

    // The catalog says what is carried, and whose credential the vendor sees.
    let listed = get(&rig.app, "/v1/services").await;
    let s = &listed.json["services"][0];
    assert_eq!(
        s["allow"],
        serde_json::json!(["GET /v1/search", "POST /v1/embed"])
    );
    assert_eq!(s["mode"], "inject");
    assert_eq!(s["credential_header"], "Authorization");
}
on_both!(calls_no_allow_rule_matches_are_403_and_never_reach_the_upstream);

async fn paths_that_could_escape_the_base_are_refused_before_the_upstream(t: &TestDb) {
    let everything = SEARCH_ONLY.replace(
        "allow = [\"GET /v1/search\", \"POST /v1/embed\"]",
        "allow = [\"GET /\"]",
    );
    let rig = Rig::start(t, &everything, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    for path in [
        "/vendor/\\..\\..\\admin/secret",
        "/vendor/\\%2e%2e\\admin/secret",
        "/vendor/%5c..%5c..%5cadmin/secret",
        "/vendor/v1/%2e%2e/%2e%2e/admin/secret",
        "/vendor/v1/%2E%2E/admin",
        "/vendor/v1/.%2e/admin",
        "/vendor/v1/..%2fadmin",
        "/vendor/v1/%252e%252e/admin",
        "/vendor/v1/../../admin/secret",
        "/vendor/v1/./x",
        "/vendor//admin",
        "/vendor/v1/%zz",
    ] {
        let answer = raw_http(rig.gateway, &raw("GET", path, &h, "")).await;
        assert_eq!(
            status_and_reason(&answer),
            (400, Some("bad_path".into())),
            "{path}: {answer}"
        );
    }
    assert!(
        rig.up.requests().is_empty(),
        "an escape reached the upstream: {:?}",
        rig.up.requests()
    );
    let answer = raw_http(rig.gateway, &raw("GET", "/vendor/v1/a..b/%41", &h, "")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(rig.up.requests()[0].uri, "/base/v1/a..b/%41");
}
on_both!(paths_that_could_escape_the_base_are_refused_before_the_upstream);

async fn only_allowlisted_headers_cross_in_either_direction(t: &TestDb) {
    let rig = Rig::start(t, SEARCH_ONLY, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    let extra = "Connection: keep-alive\r\nConnection: Idempotency-Key\r\nIdempotency-Key: named-in-connection\r\n\
        X-Lowdown-Node-Id: nd_CANARY\r\nX-Client-IP: 198.51.100.7\r\nClient-IP: 198.51.100.7\r\n\
        Fastly-Client-IP: 198.51.100.7\r\nCF-Connecting-IP: 198.51.100.7\r\nTrue-Client-IP: 198.51.100.7\r\n\
        X-Forwarded-For: 198.51.100.7\r\nX-Real-IP: 198.51.100.7\r\nForwarded: for=198.51.100.7\r\n\
        traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\ntracestate: vendor=CANARY\r\n\
        baggage: user=CANARY\r\nAuthorization: Bearer agent-own-token\r\nCookie: s=CANARY\r\n\
        Proxy-Authorization: Basic CANARY\r\nX-Custom: CANARY\r\nAccept: application/json\r\nUser-Agent: bot/1\r\n";
    let answer = raw_http(rig.gateway, &raw("GET", "/vendor/v1/search", &h, extra)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let seen = rig.up.requests();
    let mut names: Vec<(String, String)> = seen[0].headers.clone();
    names.sort();
    assert_eq!(
        names,
        [
            ("accept".to_owned(), "application/json".to_owned()),
            ("authorization".into(), format!("Bearer {VENDOR_SECRET}")),
            ("content-length".into(), "0".into()),
            ("host".into(), format!("127.0.0.1:{}", rig.up.addr.port())),
            ("user-agent".into(), "bot/1".into()),
        ],
        "only the allowlist and the operator's credential reach the vendor"
    );
    let lower = answer.to_ascii_lowercase();
    assert!(
        lower.contains("\r\ncontent-type: application/json\r\n"),
        "{answer}"
    );
    assert!(
        lower.contains("\r\nx-ratelimit-remaining: 99\r\n"),
        "{answer}"
    );
    for gone in ["x-vendor", "set-cookie"] {
        assert!(
            !lower.contains(&format!("\r\n{gone}:")),
            "{gone} reached the agent: {answer}"
        );
    }
}
on_both!(only_allowlisted_headers_cross_in_either_direction);

const PASSTHROUGH: &str = r#"
[[service]]
slug = "account"
service_id = "svc_account"
upstream = "{UP}/base"
hosts = ["api.account-fixture.com"]
sampling_rate = 1.0
allow = ["POST /v1/customers", "GET /v1/customers"]
credential = { mode = "passthrough", header = "X-Api-Key" }
"#;
const AGENT_SECRET: &str = "sk_agent_own_CANARY_passthrough";

async fn passthrough_forwards_the_agents_own_credential_and_keeps_none_of_it(t: &TestDb) {
    let rig = Rig::start(t, PASSTHROUGH, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_account").await;
    let extra = format!("X-Api-Key: {AGENT_SECRET}\r\nAuthorization: Bearer other-CANARY\r\n");
    let answer = raw_http(
        rig.gateway,
        &raw("POST", "/account/v1/customers", &h, &extra),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let seen = rig.up.requests();
    let got: Vec<_> = seen[0]
        .headers
        .iter()
        .filter(|(k, _)| k == "x-api-key" || k == "authorization")
        .cloned()
        .collect();
    assert_eq!(
        got,
        [("x-api-key".to_owned(), AGENT_SECRET.to_owned())],
        "the agent's own credential header, and only it"
    );
    common::prowl::wait_calls(t, 1).await;
    let mut answers = String::new();
    for path in [
        "/v1/services".to_owned(),
        "/v1/services/account".to_owned(),
        format!("/v1/agents/{agent_id}/reputation"),
    ] {
        answers.push_str(&get(&rig.app, &path).await.text);
    }
    assert!(answers.contains("passthrough"), "{answers}");
    assert!(!answers.contains(AGENT_SECRET), "{answers}");
    rig.state.prowl.recorder.flush().await;
    assert_nowhere_in_db(t, AGENT_SECRET).await;
}
on_both!(passthrough_forwards_the_agents_own_credential_and_keeps_none_of_it);

async fn the_gateway_call_quota_stops_an_agent_and_then_its_network(t: &TestDb) {
    let limits = Limits {
        gateway_calls_per_agent: 2,
        gateway_calls_per_network: 3,
        ..Limits::default()
    };
    let rig = Rig::start_with(t, SEARCH_ONLY, TIMEOUT, limits).await;
    let (a_key, a_id) = rig.agent(None).await;
    let (b_key, b_id) = rig.agent(None).await;
    let a = rig.honest(&a_key, &a_id, "svc_vendor").await;
    let b = rig.honest(&b_key, &b_id, "svc_vendor").await;
    let call = |h: &Vec<(String, String)>| {
        let req = raw("GET", "/vendor/v1/search", h, "");
        async move { raw_http(rig.gateway, &req).await }
    };
    for _ in 0..2 {
        assert!(call(&a).await.starts_with("HTTP/1.1 200"));
    }
    let refused = call(&a).await;
    assert_eq!(
        status_and_reason(&refused),
        (429, Some("gateway_rate_limited".into())),
        "{refused}"
    );
    let lower = refused.to_ascii_lowercase();
    assert!(lower.contains("\r\nretry-after: "), "{refused}");
    assert!(
        refused.contains("for this agent"),
        "the refusal names the agent's budget: {refused}"
    );
    // Another free registration on the same network gets what is left of the network's.
    assert!(call(&b).await.starts_with("HTTP/1.1 200"));
    let refused = call(&b).await;
    assert_eq!(
        status_and_reason(&refused),
        (429, Some("gateway_rate_limited".into())),
        "{refused}"
    );
    assert!(
        refused.contains("for this network"),
        "the refusal names the network's budget: {refused}"
    );
    assert_eq!(
        rig.up.requests().len(),
        3,
        "refused calls never reach the upstream"
    );
}
on_both!(the_gateway_call_quota_stops_an_agent_and_then_its_network);
