//! The Scanner's probes against fixture servers on loopback, one scan run with every kind
//! of remote, on SQLite and PostgreSQL: what each observation says, what reached the
//! fixtures, and what never left (definitions, blocked addresses).

use crate::common;
use crate::scanner_fixtures;

use common::{mcp_answer, TestDb};
use lowdown_core::scanner::target::Policy;
use scanner_fixtures::mcp::{tools_page, Mcp};
use scanner_fixtures::registry::{streamable, Registry};
use scanner_fixtures::{closed_port, config, CountingListener, MapLookup};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use sqlx::Row;

async fn latest(t: &TestDb, name: &str) -> Value {
    mcp_answer(t, name).await["scanner"]["latest"].clone()
}

/// The stored row of a target's only observation.
async fn row(t: &TestDb, target: &str) -> sqlx::any::AnyRow {
    sqlx::query(
        "SELECT tool_count, name_hash, schema_hash, desc_hash, tools_has_more, tool_names \
         FROM scanner_observations WHERE target_id = $1",
    )
    .bind(target.to_owned())
    .fetch_one(&t.check.pool)
    .await
    .unwrap()
}

const CANARY: &str = "CANARY-DESCRIPTION-4f1e9b";

async fn every_kind_of_remote(t: &TestDb) {
    let mcp = Mcp::start(true).await;
    mcp.set_description(CANARY);
    let registry = Registry::start().await;
    let trap = CountingListener::start().await;
    let refused = closed_port().await;
    let lookup = MapLookup::new(&[("private.example.com", &["127.0.0.1", "10.0.0.7"])]);
    let userinfo = mcp
        .url("ok", "with-userinfo")
        .replace("http://", "http://user:pw@");
    let private = format!("http://private.example.com:{}/mcp", trap.addr.port());
    registry.set_entries(
        vec![
            streamable("io.fixture/ok", &mcp.url("ok", "")),
            streamable("io.fixture/paged", &mcp.url("paged", "")),
            streamable("io.fixture/sse", &mcp.url("sse", "")),
            streamable("io.fixture/auth", &mcp.url("auth", "")),
            streamable("io.fixture/html", &mcp.url("html", "")),
            streamable("io.fixture/redirect", &mcp.url("redirect", "")),
            streamable("io.fixture/hang", &mcp.url("hang", "")),
            streamable(
                "io.fixture/refused",
                &format!("http://127.0.0.1:{refused}/mcp"),
            ),
            streamable("io.fixture/private", &private),
            streamable("io.fixture/metadata", "http://169.254.169.254/latest"),
            streamable("io.fixture/userinfo", &userinfo),
            streamable("io.fixture/localhost", "http://localhost:9/mcp"),
        ],
        5,
    );
    let s = lowdown_server::scanner::run(&t.db, &config(&registry.url, lookup.clone()))
        .await
        .unwrap();
    assert_eq!(s.status, "completed");
    assert_eq!(
        (s.pages, s.entries, s.active_latest, s.probeable),
        (3, 12, 12, 12)
    );
    assert_eq!((s.members, s.remotes, s.probed), (12, 12, 12));
    assert_eq!(
        s.by_level,
        [("0".into(), 9), ("2".into(), 3)].into_iter().collect()
    );
    assert_eq!(s.by_error_type["blocked_url"], 4);

    // A plain server: level 2, with the session and protocol headers on every later request.
    let ok = latest(t, "io.fixture/ok").await;
    assert_eq!(
        (
            &ok["reached_level"],
            &ok["http_status"],
            &ok["tool_count"],
            &ok["server_version"]
        ),
        (&json!(2), &json!(200), &json!(2), &json!("1.4.2"))
    );
    assert!(ok["latency_ms"].as_f64().unwrap() >= 0.0);
    let hits: Vec<_> = mcp.hits().into_iter().filter(|h| h.path == "ok").collect();
    let methods: Vec<&str> = hits.iter().map(|h| h.method.as_str()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "DELETE"
        ]
    );
    assert!(hits[1..]
        .iter()
        .all(|h| h.session.as_deref() == Some("sess-ok")
            && h.protocol.as_deref() == Some("2025-06-18")));

    // Three pages: tool_count and name_hash over all of them, schema_hash from the first.
    let paged = row(t, "mcp:io.fixture/paged").await;
    assert_eq!(paged.try_get::<i64, _>(0).unwrap(), 5);
    let names = ["alpha", "beta", "delta", "epsilon", "gamma"].map(|n| format!("\"{n}\""));
    let name_hash = hex::encode(Sha256::digest(format!("[{}]", names.join(","))));
    assert_eq!(paged.try_get::<String, _>(1).unwrap(), name_hash);
    let first = lowdown_core::schema_hash::hash_tools_result(
        tools_page("paged", None, "").to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(paged.try_get::<String, _>(2).unwrap(), first.schema_hash);
    assert_eq!(paged.try_get::<String, _>(3).unwrap(), first.desc_hash);
    assert_eq!(
        paged.try_get::<i64, _>(4).unwrap(),
        0,
        "every page was read"
    );
    let tool_names = &mcp_answer(t, "io.fixture/paged").await["scanner"]["tool_names"];
    assert_eq!(
        tool_names,
        &json!(["alpha", "beta", "delta", "epsilon", "gamma"])
    );

    // An SSE answer that stays open is read up to the matching id, not to its end.
    let sse = latest(t, "io.fixture/sse").await;
    assert_eq!(
        (&sse["reached_level"], &sse["error_type"]),
        (&json!(2), &Value::Null)
    );

    // Statuses are reported as observed.
    let auth = latest(t, "io.fixture/auth").await;
    assert_eq!(
        (
            &auth["reached_level"],
            &auth["http_status"],
            &auth["www_authenticate"],
            &auth["error_type"]
        ),
        (&json!(0), &json!(401), &json!(true), &Value::Null)
    );
    let html = latest(t, "io.fixture/html").await;
    assert_eq!(
        (&html["http_status"], &html["error_type"]),
        (&json!(200), &json!("invalid_response"))
    );
    let redirect = latest(t, "io.fixture/redirect").await;
    assert_eq!(
        (&redirect["reached_level"], &redirect["http_status"]),
        (&json!(0), &json!(302))
    );
    assert!(
        !mcp.hits().iter().any(|h| h.kind == "redirect-target"),
        "redirects are not followed"
    );
    let hang = latest(t, "io.fixture/hang").await;
    assert_eq!(
        (&hang["http_status"], &hang["error_type"]),
        (&Value::Null, &json!("timeout"))
    );
    let refused = latest(t, "io.fixture/refused").await;
    assert_eq!(refused["error_type"], "conn_refused");

    // Refused URLs are observations, and nothing is sent to them.
    for name in ["private", "metadata", "userinfo", "localhost"] {
        let l = latest(t, &format!("io.fixture/{name}")).await;
        assert_eq!(
            (&l["reached_level"], &l["error_type"]),
            (&json!(0), &json!("blocked_url")),
            "{name}"
        );
    }
    assert_eq!(
        lookup.asked(),
        ["private.example.com"],
        "the name was resolved, then refused"
    );
    assert_eq!(
        trap.count(),
        0,
        "no connection to a name with a private address"
    );
    assert!(!mcp.hits().iter().any(|h| h.path == "ok/with-userinfo"));

    // Definitions are kept privately, once each; answers carry hashes only.
    let defs: Vec<(String,)> = t
        .rows("SELECT definition FROM scanner_tool_definitions")
        .await;
    assert!(defs.iter().any(|(d,)| d.contains(CANARY)));
    assert_eq!(
        defs.iter()
            .filter(|(d,)| d.contains("Fetch a page"))
            .count(),
        1,
        "`fetch` is served by two fixtures and stored once"
    );
    for name in ["ok", "sse", "paged"] {
        let text = common::get(&t.app(), &format!("/api/reputation/mcp:io.fixture/{name}"))
            .await
            .text;
        assert!(
            !text.contains(CANARY) && !text.contains("Fetch a page"),
            "{text}"
        );
    }
}
on_both!(every_kind_of_remote);

async fn modern_servers_are_discovered_and_others_fall_back(t: &TestDb) {
    let mcp = Mcp::start(true).await;
    let registry = Registry::start().await;
    registry.set_entries(
        vec![
            streamable("io.fixture/modern", &mcp.url("modern", "")),
            streamable("io.fixture/classic", &mcp.url("ok", "classic")),
        ],
        100,
    );
    let mut cfg = config(&registry.url, MapLookup::default());
    cfg.modern = true;
    let s = lowdown_server::scanner::run(&t.db, &cfg).await.unwrap();
    assert_eq!(s.by_level["2"], 2);
    let modern = latest(t, "io.fixture/modern").await;
    assert_eq!(modern["server_version"], "3.0.0");
    let hits = mcp.hits();
    let modern_methods: Vec<&str> = hits
        .iter()
        .filter(|h| h.kind == "modern")
        .map(|h| h.method.as_str())
        .collect();
    assert_eq!(
        modern_methods,
        ["server/discover", "tools/list"],
        "no initialize, no session to end"
    );
    let classic: Vec<&str> = hits
        .iter()
        .filter(|h| h.kind == "ok")
        .map(|h| h.method.as_str())
        .collect();
    assert_eq!(classic[..2], ["server/discover", "initialize"]);
    let (p,): (String,) = t.row("SELECT protocol_version FROM scanner_observations WHERE target_id = 'mcp:io.fixture/modern'").await;
    assert_eq!(p, "2026-07-28");
}
on_both!(modern_servers_are_discovered_and_others_fall_back);

/// Without `--unsafe-allow-loopback`, neither the Registry fixture nor a probe reaches
/// 127.0.0.1, even through a public-looking name.
#[tokio::test]
async fn strict_rules_refuse_loopback_and_send_nothing() {
    let trap = CountingListener::start().await;
    let lookup = MapLookup::new(&[("mcp.example.com", &["127.0.0.1"])]);
    let net = lowdown_server::scanner::net::Net::new(
        Policy::default(),
        std::sync::Arc::new(lookup.clone()),
        "test",
    )
    .unwrap();
    let https = format!("https://mcp.example.com:{}/mcp", trap.addr.port());
    let r = lowdown_server::scanner::http::probe(&net, &https, false).await;
    assert_eq!(
        r.error_type,
        Some(lowdown_core::scanner::ErrorType::BlockedUrl)
    );
    let http = format!("http://127.0.0.1:{}/mcp", trap.addr.port());
    let r = lowdown_server::scanner::http::probe(&net, &http, false).await;
    assert_eq!(
        r.error_type,
        Some(lowdown_core::scanner::ErrorType::BlockedUrl)
    );
    assert_eq!(lookup.asked(), ["mcp.example.com"]);
    assert_eq!(trap.count(), 0);
    // A name that does not resolve is a `dns` observation.
    let r =
        lowdown_server::scanner::http::probe(&net, "https://nowhere.example.org/mcp", false).await;
    assert_eq!(r.error_type, Some(lowdown_core::scanner::ErrorType::Dns));
    assert_eq!(r.http_status, None);
}

/// `https` to a server that speaks plain HTTP fails the TLS handshake: `tls`.
#[tokio::test]
async fn a_failed_tls_handshake_is_tls() {
    let mcp = Mcp::start(false).await;
    let net = lowdown_server::scanner::net::Net::new(
        Policy {
            allow_loopback: true,
        },
        std::sync::Arc::new(MapLookup::default()),
        "test",
    )
    .unwrap();
    let url = mcp.url("ok", "").replace("http://", "https://");
    let r = lowdown_server::scanner::http::probe(&net, &url, false).await;
    assert_eq!(r.error_type, Some(lowdown_core::scanner::ErrorType::Tls));
}
