//! `GET /api/preflight/{target}` as the preflight hooks read it, after Scanner runs over a
//! fixture Registry: the Registry marking an entry deleted and a recent definition change
//! after stable days ask, with the facts; a stable server, an unknown and an ambiguous name
//! say nothing. The version rule is held by the core's tests and prowl's hook tests (a
//! real server fed from many networks). On SQLite and PostgreSQL.

use crate::common;
use crate::scanner_fixtures;
use common::day;

use common::{get, TestDb};
use lowdown_server::scanner::run;
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{entry, streamable, Registry};
use scanner_fixtures::{config, on_day, MapLookup};
use serde_json::{json, Value};

async fn preflight(t: &TestDb, name: &str) -> Value {
    let r = get(&t.app(), &format!("/api/preflight/{name}")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    crate::openapi::assert_documented(
        &get(&t.app(), "/openapi.json").await.json,
        "get",
        "/api/preflight/{target}",
        200,
        &r.json,
    );
    r.json
}

async fn the_facts_that_ask_before_a_call(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    registry.set_entries(
        vec![
            streamable("io.fixture/weather", &mcp.url("ok", "weather")),
            streamable("io.fixture/maps", &mcp.url("ok", "maps")),
            entry("io.fixture/gone", "1.0.0", "deleted", true, &[]),
        ],
        10,
    );
    let cfg = config(&registry.url, MapLookup::default());
    for d in -8..=-1 {
        assert_eq!(
            run(&t.db, &on_day(&cfg, d)).await.unwrap().status,
            "completed"
        );
    }
    let calm = preflight(t, "mcp:io.fixture%2Fweather").await;
    assert_eq!(
        (&calm["decision"], &calm["reasons"]),
        (&json!("none"), &json!([])),
        "{calm}"
    );
    // Today both servers of the fixture describe their tools anew.
    mcp.set_description("Search the web, now with something new");
    assert_eq!(run(&t.db, &cfg).await.unwrap().status, "completed");
    let w = preflight(t, "mcp:io.fixture%2Fweather").await;
    assert_eq!(w["decision"], "ask", "{w}");
    let reason = w["reasons"][0].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "its tool definitions changed on {} after ",
            day(0)
        )) && reason.ends_with("stable days (Lowdown Scanner, daily)"),
        "{reason}"
    );
    let keys: Vec<&str> = w.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys.len(),
        5,
        "target, resolved_target, decision, reasons, source"
    );

    let gone = preflight(t, "mcp:io.fixture%2Fgone").await;
    assert_eq!(
        gone["reasons"][0], "the MCP Registry marks mcp:io.fixture/gone deleted",
        "{gone}"
    );
    for unknown in ["mcp:io.fixture%2Fnothing", "nothing-at-all"] {
        let n = preflight(t, unknown).await;
        assert_eq!(
            (&n["decision"], &n["resolved_target"]),
            (&json!("none"), &Value::Null),
            "{n}"
        );
    }
    let bad = get(&t.app(), "/api/preflight/a%00b").await;
    assert_eq!(bad.status, 400, "{}", bad.text);
}
on_both!(the_facts_that_ask_before_a_call);
