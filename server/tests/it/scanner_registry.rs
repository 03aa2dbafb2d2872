//! Reading the Registry (v0.1 paging, retries, loop guards, which entries count) and the
//! cohort (sha256 order, growth, refusal to shrink), on SQLite and PostgreSQL.

use crate::common;
use crate::scanner_fixtures;

use common::{mcp_answer, TestDb};
use lowdown_core::scanner::cohort::sort_key;
use lowdown_server::scanner::{run, ScanError};
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{entry, streamable, Registry};
use scanner_fixtures::{config, MapLookup};
use serde_json::{json, Value};

async fn paging_retries_and_which_entries_count(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let ok = mcp.url("ok", "");
    registry.set_pages(vec![
        (
            "",
            vec![
                streamable("io.fixture/one", &ok),
                entry(
                    "io.fixture/old",
                    "2.0.0",
                    "deprecated",
                    true,
                    &[("streamable-http", &ok)],
                ),
                entry(
                    "io.fixture/one",
                    "0.9.0",
                    "active",
                    false,
                    &[("streamable-http", &ok)],
                ),
            ],
            Some("page 2"),
        ),
        (
            "page 2",
            vec![
                entry(
                    "io.fixture/templated",
                    "1.0.0",
                    "active",
                    true,
                    &[("streamable-http", "https://{tenant}.example.com/mcp")],
                ),
                entry(
                    "io.fixture/sse-only",
                    "1.0.0",
                    "active",
                    true,
                    &[("sse", "https://sse.example.com/sse")],
                ),
                entry("io.fixture/gone-version", "1.0.0", "deleted", false, &[]),
            ],
            Some("page 3"),
        ),
        ("page 3", vec![streamable("io.fixture/two", &ok)], None),
    ]);
    registry.fail_once("page 2");
    let s = run(&t.db, &config(&registry.url, MapLookup::default()))
        .await
        .unwrap();
    assert_eq!(s.status, "completed", "{:?}", s.error);
    assert_eq!(
        (s.pages, s.entries, s.active_latest, s.probeable),
        (3, 7, 4, 2)
    );
    assert_eq!((s.members, s.remotes, s.probed), (4, 2, 2));
    assert_eq!((s.no_probeable_remote, s.not_listed), (2, 0));

    let seen = registry.seen();
    assert_eq!(
        seen.len(),
        4,
        "page 2 was asked twice (a 500, then success)"
    );
    for r in &seen {
        assert_eq!(r.query["limit"], "100");
        assert_eq!(r.query["version"], "latest");
        assert!(
            r.user_agent.starts_with("lowdown-scanner/"),
            "{}",
            r.user_agent
        );
        assert_eq!(r.accept, "application/json");
    }
    assert_eq!(seen[1].query["cursor"], "page 2");

    let one = mcp_answer(t, "io.fixture/one").await;
    assert_eq!(
        one["registry"]["declared_version"], "1.0.0",
        "the latest version, not 0.9.0"
    );
    assert_eq!(one["scanner"]["latest"]["reached_level"], 2);
    let old = mcp_answer(t, "io.fixture/old").await;
    assert_eq!(old["registry"]["status"], "deprecated");
    assert_eq!(
        old["scanner"],
        json!({"target": "mcp:io.fixture/old", "observed": false, "in_sample": false,
        "note": "not in the Lowdown Scanner sample: this says nothing about the server"})
    );
    assert_eq!(
        old["message"],
        "MCP Registry declaration recorded (status: deprecated); not in the Lowdown Scanner sample; no agent-reported interactions."
    );
    for name in ["templated", "sse-only"] {
        let a = mcp_answer(t, &format!("io.fixture/{name}")).await;
        assert_eq!(a["scanner"]["in_sample"], true);
        assert_eq!(a["scanner"]["observed"], false);
        assert_eq!(
            a["scanner"]["missing_days"],
            json!([{"day": s.day, "reason": "no_probeable_remote"}]),
            "{name}"
        );
    }
    assert_eq!(
        mcp_answer(t, "io.fixture/sse-only").await["registry"]["remote_hosts"],
        json!(["sse.example.com"])
    );
    let gone = mcp_answer(t, "io.fixture/gone-version").await;
    assert!(
        gone.get("registry").is_none(),
        "entries that are not latest are not recorded"
    );
}
on_both!(paging_retries_and_which_entries_count);

async fn a_looping_registry_stops_the_read_and_lists_nobody_as_gone(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    registry.set_entries(vec![streamable("io.fixture/one", &mcp.url("ok", ""))], 10);
    let first = run(&t.db, &config(&registry.url, MapLookup::default()))
        .await
        .unwrap();
    assert_eq!(first.status, "completed");

    // A cursor given twice, then a page that adds no new entry: each fails the read.
    let page = |name: &str| vec![streamable(name, &mcp.url("ok", ""))];
    for (cursor, second, after, error) in [
        ("again", "io.fixture/three", "again", "repeats a cursor"),
        ("next", "io.fixture/two", "more", "adds no new entry"),
    ] {
        registry.set_pages(vec![
            ("", page("io.fixture/two"), Some(cursor)),
            (cursor, page(second), Some(after)),
        ]);
        let s = run(&t.db, &config(&registry.url, MapLookup::default()))
            .await
            .unwrap();
        assert_eq!(s.status, "registry_failed");
        assert!(s.error.as_deref().unwrap().contains(error), "{:?}", s.error);
    }

    let one = mcp_answer(t, "io.fixture/one").await;
    assert_eq!(
        one["registry"]["listed"], true,
        "a failed read never unlists anyone"
    );
    assert!(one["registry"]["changes_30d"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(t.count("scanner_skips").await, 0);
    assert!(mcp_answer(t, "io.fixture/two")
        .await
        .get("registry")
        .is_none());
}
on_both!(a_looping_registry_stops_the_read_and_lists_nobody_as_gone);

async fn the_cohort_is_fixed_grows_by_hash_and_never_shrinks(t: &TestDb) {
    let registry = Registry::start().await;
    let names: Vec<String> = (0..10).map(|i| format!("io.fixture/s{i}")).collect();
    // No remotes: membership is what this test is about, not probing.
    registry.set_entries(
        names
            .iter()
            .map(|n| entry(n, "1.0.0", "active", true, &[]))
            .collect(),
        4,
    );
    let mut by_hash: Vec<String> = names.iter().map(|n| format!("mcp:{n}")).collect();
    by_hash.sort_by_key(|id| sort_key(id));
    let members = "SELECT target_id, cohort_version FROM scanner_cohort ORDER BY sort_key";
    let mut cfg = config(&registry.url, MapLookup::default());
    cfg.cohort_size = Some(3);
    let s = run(&t.db, &cfg).await.unwrap();
    assert_eq!(
        (s.cohort_version, s.cohort_size, s.members),
        (Some(1), 3, 3)
    );
    let v1: Vec<(String, i64)> = t.rows(members).await;
    assert_eq!(
        v1.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
        by_hash[..3]
    );

    cfg.cohort_size = Some(2);
    let err = run(&t.db, &cfg).await.unwrap_err();
    assert!(matches!(err, ScanError::Cohort(_)), "{err}");
    assert!(err.to_string().contains("never rebuilt"), "{err}");

    cfg.cohort_size = None;
    let s = run(&t.db, &cfg).await.unwrap();
    assert_eq!(
        (s.cohort_version, s.members, s.members_added),
        (Some(1), 3, 0),
        "same size, same cohort"
    );

    cfg.cohort_size = Some(5);
    let s = run(&t.db, &cfg).await.unwrap();
    assert_eq!(
        (s.cohort_version, s.members, s.members_added),
        (Some(2), 5, 2)
    );
    let v2: Vec<(String, i64)> = t.rows(members).await;
    assert_eq!(
        v2.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
        by_hash[..5]
    );
    assert!(
        v2.iter().filter(|m| v1.contains(&(m.0.clone(), 1))).count() == 3,
        "every member kept"
    );
    assert_eq!(v2.iter().filter(|m| m.1 == 2).count(), 2);

    let outside = by_hash[7].trim_start_matches("mcp:").to_owned();
    let a = mcp_answer(t, &outside).await;
    assert_eq!(a["scanner"]["observed"], false);
    assert_eq!(a["scanner"]["in_sample"], false);
    assert_eq!(a["success_rate"], Value::Null);
}
on_both!(the_cohort_is_fixed_grows_by_hash_and_never_shrinks);
