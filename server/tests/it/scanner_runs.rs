//! Runs as operations: one scan at a time across servers sharing a database (the lease),
//! a run that dies halfway (its observations stay, the rest is `scanner_did_not_run`),
//! and the daily schedule's skip of a day already scanned. On SQLite and PostgreSQL.

use crate::common;
use crate::scanner_fixtures;

use std::time::Duration;

use common::TestDb;
use lowdown_server::db::lease::{self, SCAN_LEASE};
use lowdown_server::db::Db;
use lowdown_server::scanner::{run, schedule, ScanError};
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{streamable, Registry};
use scanner_fixtures::{config, MapLookup};
use serde_json::json;

async fn a_run_that_dies_halfway_keeps_its_observations_and_holds_off_others(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let mut entries: Vec<_> = (0..6)
        .map(|i| {
            streamable(
                &format!("io.fixture/fast{i}"),
                &mcp.url("ok", &i.to_string()),
            )
        })
        .collect();
    entries.push(streamable("io.fixture/stuck", &mcp.url("hang", "")));
    registry.set_entries(entries, 100);
    let cfg = config(&registry.url, MapLookup::default());

    // This server's scan: it finishes the fast members and waits on the stuck one.
    let scan = tokio::spawn({
        let (db, cfg) = (t.db.clone(), cfg.clone());
        async move { run(&db, &cfg).await }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while t.count("scanner_observations").await < 6 {
        assert!(
            std::time::Instant::now() < deadline,
            "the fast members were not observed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A second server on the same database cannot start a scan meanwhile.
    let other = Db::open(&t.url, 4).await.unwrap();
    let err = run(&other, &cfg).await.unwrap_err();
    assert!(matches!(err, ScanError::LeaseHeld { .. }), "{err}");
    assert!(err.to_string().contains("another scan is running"), "{err}");

    // The first one dies (its server stops) before the stuck member answers.
    scan.abort();
    assert!(scan.await.unwrap_err().is_cancelled());
    let (status,): (String,) = t.row("SELECT status FROM scan_runs").await;
    assert_eq!(status, "running", "the run never finished");
    let app = t.app();
    let fast = common::get(&app, "/api/reputation/mcp:io.fixture/fast3")
        .await
        .json;
    assert_eq!(fast["scanner"]["latest"]["reached_level"], 2);
    assert_eq!(fast["scanner"]["missing_days"], json!([]));
    let stuck = common::get(&app, "/api/reputation/mcp:io.fixture/stuck")
        .await
        .json;
    let today = lowdown_server::clock::day_of(lowdown_server::clock::now_ms());
    assert_eq!(
        stuck["scanner"]["missing_days"],
        json!([{"day": today, "reason": "scanner_did_not_run"}])
    );

    // Its lease runs out on its own; then another holder can take it.
    let now = lowdown_server::clock::now_ms();
    assert!(lease::acquire(&other, SCAN_LEASE, "someone", now, 1000)
        .await
        .unwrap()
        .is_err());
    let held = lease::acquire(&other, SCAN_LEASE, "someone", now + 6 * 60_000, 1000)
        .await
        .unwrap();
    assert_eq!(held, Ok(()), "an expired lease is taken over");
    other.close().await;
}
on_both!(a_run_that_dies_halfway_keeps_its_observations_and_holds_off_others);

async fn two_servers_starting_together_run_one_scan(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    registry.set_entries(
        vec![streamable("io.fixture/slow", &mcp.url("slow", ""))],
        10,
    );
    let cfg = config(&registry.url, MapLookup::default());
    let other = Db::open(&t.url, 4).await.unwrap();
    let (a, b) = tokio::join!(run(&t.db, &cfg), run(&other, &cfg));
    let won = [&a, &b].iter().filter(|r| r.is_ok()).count();
    let held = [&a, &b]
        .iter()
        .filter(|r| matches!(r, Err(ScanError::LeaseHeld { .. })))
        .count();
    assert_eq!((won, held), (1, 1), "{a:?} {b:?}");
    assert_eq!(t.count("scan_runs").await, 1);
    assert_eq!(t.count("leases").await, 0, "the winner gave the lease back");

    // The schedule skips a day that already has a completed scan.
    assert!(schedule::run_scheduled(&other, &cfg).await.is_none());
    assert_eq!(t.count("scan_runs").await, 1);
    other.close().await;
}
on_both!(two_servers_starting_together_run_one_scan);

/// Batches reuse one statement text: a batch whose first latency is null, then one whose
/// first latency is a number (the PostgreSQL statement cache once tripped on this).
async fn observations_with_and_without_latency_store_in_any_order(t: &TestDb) {
    use lowdown_core::scanner::{ErrorType, ProbeResult};
    use lowdown_server::db::scanner as store;
    let timeout = ProbeResult {
        error_type: Some(ErrorType::Timeout),
        ..ProbeResult::default()
    };
    let answered = ProbeResult {
        http_status: Some(401),
        latency_ms: Some(12.5),
        ..ProbeResult::default()
    };
    // Alternating, enough times for every pooled connection to see both orders.
    let results = (0..24).map(|i| {
        if i % 2 == 0 {
            timeout.clone()
        } else {
            answered.clone()
        }
    });
    for (i, r) in results.enumerate() {
        let o = r.into_observation(
            "sr_x",
            "mcp:io.fixture/a",
            "https://a.example.com/mcp",
            1_000 + i as i64,
        );
        store::write_observations(&t.db, 1 + i as i64, "2026-10-01", 5, vec![o])
            .await
            .unwrap();
    }
    assert_eq!(t.count("scanner_observations").await, 24);
}
on_both!(observations_with_and_without_latency_store_in_any_order);
