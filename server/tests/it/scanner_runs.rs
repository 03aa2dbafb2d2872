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
    assert!(held.is_ok(), "an expired lease is taken over");
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
    let (held,): (i64,) = t
        .row("SELECT COUNT(*) FROM leases WHERE holder <> '' OR expires_at > 0")
        .await;
    assert_eq!(held, 0, "the winner gave the lease back");

    // The schedule skips a day that already has a completed scan.
    assert!(schedule::run_scheduled(&other, &cfg).await.is_none());
    assert_eq!(t.count("scan_runs").await, 1);
    other.close().await;
}
on_both!(two_servers_starting_together_run_one_scan);

/// How many times each fixture path was sent `initialize`.
fn initializes(mcp: &Mcp) -> std::collections::BTreeMap<String, usize> {
    let mut n = std::collections::BTreeMap::new();
    for h in mcp.hits().into_iter().filter(|h| h.method == "initialize") {
        *n.entry(h.path).or_default() += 1;
    }
    n
}

/// A server dies mid-run; once its lease has run out, the next try of another server's
/// daily schedule takes the same run over: what was observed is not probed again, what was not is, and
/// the run completes with every remote observed once.
async fn a_run_taken_over_resumes_it_without_probing_twice(t: &TestDb) {
    let mcp = Mcp::start(true).await;
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
    let scan = tokio::spawn({
        let (db, cfg) = (t.db.clone(), cfg.clone());
        async move { run(&db, &cfg).await }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while t.count("scanner_observations").await < 6 {
        assert!(std::time::Instant::now() < deadline, "no observations");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Another server's daily schedule meets the lease: it is told when to try again.
    let other = Db::open(&t.url, 4).await.unwrap();
    let today = lowdown_server::clock::day_of(lowdown_server::clock::now_ms());
    let now = lowdown_server::clock::now_ms();
    match schedule::attempt(&other, &cfg, &today).await {
        schedule::Attempt::Held(until) => assert!(until > now, "{until} {now}"),
        a => panic!("{a:?}"),
    }
    scan.abort();
    let _ = scan.await;
    let (first,): (String,) = t.row("SELECT scan_run_id FROM scan_runs").await;

    // Its lease runs out (another holder takes it after the TTL and gives it back at once);
    // the other server's next try takes the run over.
    let later = now + 6 * 60_000;
    assert!(lease::acquire(&other, SCAN_LEASE, "someone", later, 1000)
        .await
        .unwrap()
        .is_ok());
    lease::release(&other, SCAN_LEASE, "someone").await.unwrap();

    let summary = match schedule::attempt(&other, &cfg, &today).await {
        schedule::Attempt::Ran(summary) => *summary,
        a => panic!("{a:?}"),
    };
    assert_eq!(summary.status, "completed");
    assert_eq!(summary.scan_run_id, first, "the same run, resumed");
    assert_eq!((summary.probed, summary.remotes), (7, 7), "{summary:?}");
    assert_eq!(summary.by_level["2"], 6, "{summary:?}");
    assert_eq!(t.count("scan_runs").await, 1);
    let per_remote: Vec<(String, i64)> = t
        .rows("SELECT remote_url, COUNT(*) FROM scanner_observations GROUP BY remote_url")
        .await;
    assert_eq!(per_remote.len(), 7);
    assert!(per_remote.iter().all(|(_, n)| *n == 1), "{per_remote:?}");
    let sent = initializes(&mcp);
    for i in 0..6 {
        assert_eq!(sent[&format!("ok/{i}")], 1, "fast{i} probed once: {sent:?}");
    }
    assert_eq!(
        sent["hang"], 2,
        "the probe cut off by the death is made again"
    );
    let stuck = common::get(&t.app(), "/api/reputation/mcp:io.fixture/stuck")
        .await
        .json;
    assert_eq!(stuck["scanner"]["latest"]["error_type"], "timeout");
    assert_eq!(stuck["scanner"]["missing_days"], json!([]));
    // Done for the day: the schedule skips it, on any server.
    assert!(schedule::run_scheduled(&t.db, &cfg).await.is_none());
    assert_eq!(t.count("scan_runs").await, 1);
    other.close().await;
}
on_both!(a_run_taken_over_resumes_it_without_probing_twice);

/// A holder that stalls past its lease's end (paused, cut off) while another server takes
/// the run over writes nothing more: its late observation and its "completed" are refused,
/// it reports the lease lost, and the run is the new holder's, with each remote once.
async fn a_holder_that_lost_its_lease_writes_nothing(t: &TestDb) {
    let mcp = Mcp::start(true).await;
    let registry = Registry::start().await;
    let mut entries: Vec<_> = (0..3)
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
    let stalled = tokio::spawn({
        let (db, cfg) = (t.db.clone(), cfg.clone());
        async move { run(&db, &cfg).await }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while t.count("scanner_observations").await < 3 {
        assert!(std::time::Instant::now() < deadline, "no observations");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Its lease ends while it still waits on the stuck remote; another server takes over.
    let later = lowdown_server::clock::now_ms() + 6 * 60_000;
    let other = Db::open(&t.url, 4).await.unwrap();
    assert!(lease::acquire(&other, SCAN_LEASE, "someone", later, 1000)
        .await
        .unwrap()
        .is_ok());
    lease::release(&other, SCAN_LEASE, "someone").await.unwrap();
    let (late, taken) = tokio::join!(stalled, run(&other, &cfg));
    let (late, taken) = (late.unwrap().unwrap(), taken.unwrap());
    assert_eq!(late.status, "failed", "{late:?}");
    assert!(late.error.unwrap().contains("lease was lost"));
    assert_eq!(
        (taken.status.as_str(), taken.probed),
        ("completed", 4),
        "{taken:?}"
    );
    let runs: Vec<(String, String)> = t.rows("SELECT scan_run_id, status FROM scan_runs").await;
    assert_eq!(runs, vec![(taken.scan_run_id, "completed".to_owned())]);
    let per_remote: Vec<(String, i64)> = t
        .rows("SELECT remote_url, COUNT(*) FROM scanner_observations GROUP BY remote_url")
        .await;
    assert_eq!(per_remote.len(), 4);
    assert!(per_remote.iter().all(|(_, n)| *n == 1), "{per_remote:?}");
    other.close().await;
}
on_both!(a_holder_that_lost_its_lease_writes_nothing);

/// A day whose scheduled run ended on a failed Registry read had its one attempt: another
/// server's schedule does not read the Registry again that day (a manual scan still can).
async fn a_failed_registry_read_is_the_days_one_attempt(t: &TestDb) {
    let registry = Registry::start().await;
    registry.set_entries(vec![], 10);
    let today = lowdown_server::clock::day_of(lowdown_server::clock::now_ms());
    let refused = lowdown_server::scanner::ScanConfig {
        policy: Default::default(),
        ..config(&registry.url, MapLookup::default())
    };
    let first = lowdown_server::scanner::run_daily(&t.db, &refused, &today)
        .await
        .unwrap();
    assert_eq!(first.status, "registry_failed");
    let cfg = config(&registry.url, MapLookup::default());
    let other = Db::open(&t.url, 4).await.unwrap();
    let again = lowdown_server::scanner::run_daily(&other, &cfg, &today).await;
    assert!(matches!(again, Err(ScanError::DayDone { .. })), "{again:?}");
    assert!(registry.seen().is_empty(), "the Registry was never asked");
    assert_eq!(run(&other, &cfg).await.unwrap().status, "completed");
    other.close().await;
}
on_both!(a_failed_registry_read_is_the_days_one_attempt);

/// Lease rows nobody honest wrote: an expiry centuries ahead under a hostile holder id, a
/// `state` naming a run that does not exist, or one of another day. None of them holds a
/// scan off or is resumed.
async fn a_hostile_lease_row_holds_nothing_off(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    registry.set_entries(vec![streamable("io.fixture/a", &mcp.url("ok", "a"))], 10);
    let cfg = config(&registry.url, MapLookup::default());
    let today = lowdown_server::clock::day_of(lowdown_server::clock::now_ms());
    let hostile = format!("{}\u{1b}[2J<script>", "x".repeat(5000));
    // A row claiming today done skips nothing: the day's runs decide.
    sqlx::query(
        "INSERT INTO leases (name, holder, expires_at, period, state, done) \
         VALUES ('scan', '', 0, $1, NULL, $2)",
    )
    .bind(today.clone())
    .bind(today.clone())
    .execute(&t.check.pool)
    .await
    .unwrap();
    let summary = lowdown_server::scanner::run_daily(&t.db, &cfg, &today)
        .await
        .unwrap();
    assert_eq!(summary.status, "completed");
    let again = lowdown_server::scanner::run_daily(&t.db, &cfg, &today).await;
    assert!(matches!(again, Err(ScanError::DayDone { .. })), "{again:?}");
    for (expires, state) in [
        (
            i64::MAX / 2,
            r#"{"run":"sr_nothing","cohort":"fixed"}"#.to_owned(),
        ),
        (i64::MAX, "not json".to_owned()),
        (
            4_102_444_800_000,
            r#"{"run":"sr_earlier","cohort":"fixed"}"#.to_owned(),
        ),
    ] {
        sqlx::query("DELETE FROM leases")
            .execute(&t.check.pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO leases (name, holder, expires_at, period, state, done) \
             VALUES ('scan', $1, $2, $3, $4, NULL)",
        )
        .bind(hostile.clone())
        .bind(expires)
        .bind(today.clone())
        .bind(state)
        .execute(&t.check.pool)
        .await
        .unwrap();
        // A run of another day named by the row is not resumed either.
        sqlx::query(
            "INSERT INTO scan_runs (scan_run_id, day, started_at, status, registry_ok, registry_url) \
             VALUES ('sr_earlier', '2020-01-01', 0, 'running', 0, $1) ON CONFLICT DO NOTHING",
        )
        .bind(registry.url.clone())
        .execute(&t.check.pool)
        .await
        .unwrap();
        let (peeked, holder) = lease::peek(&t.db, SCAN_LEASE, lowdown_server::clock::now_ms())
            .await
            .unwrap();
        assert_eq!(holder, None, "a far-future expiry is no holder");
        assert_eq!(peeked.period.as_deref(), Some(today.as_str()));
        let summary = run(&t.db, &cfg).await.unwrap();
        assert_eq!(summary.status, "completed");
        assert!(
            summary.scan_run_id.starts_with("sr_2"),
            "a new run: {summary:?}"
        );
        assert_eq!(summary.probed, 1);
    }
    // A live lease's holder is shown cut to a safe form.
    sqlx::query("UPDATE leases SET holder = $1, expires_at = $2")
        .bind(hostile.clone())
        .bind(lowdown_server::clock::now_ms() + 60_000)
        .execute(&t.check.pool)
        .await
        .unwrap();
    let err = run(&t.db, &cfg).await.unwrap_err().to_string();
    assert!(err.contains("another scan is running"), "{err}");
    assert!(
        err.len() < 200 && !err.contains('<') && !err.contains('\u{1b}'),
        "{err}"
    );
}
on_both!(a_hostile_lease_row_holds_nothing_off);

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
    lease::acquire(
        &t.db,
        SCAN_LEASE,
        "writer",
        lowdown_server::clock::now_ms(),
        60_000,
    )
    .await
    .unwrap()
    .unwrap();
    let fence = lease::Fence::new(SCAN_LEASE, "writer");
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
        let written =
            store::write_observations(&t.db, fence.clone(), 1 + i as i64, "2026-10-01", 5, vec![o])
                .await
                .unwrap();
        assert!(written);
    }
    assert_eq!(t.count("scanner_observations").await, 24);
}
on_both!(observations_with_and_without_latency_store_in_any_order);
