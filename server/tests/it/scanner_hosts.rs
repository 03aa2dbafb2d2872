//! Probing many hosts: the per-host limit holds while the total spans hosts, a host that
//! hangs holds only its own slots, and `--cohort all` observes every probeable remote once
//! and leaves the fixed cohort as it was.

use crate::common;
use crate::scanner_fixtures;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{Kind, TestDb};
use lowdown_core::scanner::dispatch::Limits;
use lowdown_server::scanner::{run, CohortMode, ScanConfig};
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{entry, streamable, Registry};
use scanner_fixtures::{config, MapLookup};
use serde_json::Value;

/// `n` entries on each of `hosts`, all remotes of `kind` reached through the host's name.
fn entries(mcp: &Mcp, hosts: &[(&str, &str, usize)]) -> Vec<Value> {
    hosts
        .iter()
        .flat_map(|(host, kind, n)| {
            (0..*n).map(move |i| {
                streamable(
                    &format!("io.fixture/{host}-{i}"),
                    &mcp.url_via(host, kind, &i.to_string()),
                )
            })
        })
        .collect()
}

fn limits(cfg: &mut ScanConfig, total: usize, per_host: usize) {
    cfg.limits = Limits { total, per_host };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_host_sees_more_than_its_limit_while_the_total_spans_hosts() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let hosts = ["a.example.com", "b.example.com", "c.example.com"];
    // One busy host and two small ones: free slots in the total never go to the busy one.
    registry.set_entries(
        entries(
            &mcp,
            &[
                (hosts[0], "slow", 8),
                (hosts[1], "slow", 2),
                (hosts[2], "slow", 2),
            ],
        ),
        100,
    );
    let lookup = MapLookup::new(&hosts.map(|h| (h, &["127.0.0.1"][..])));
    let mut cfg = config(&registry.url, lookup);
    limits(&mut cfg, 6, 2);
    let s = run(&t.db, &cfg).await.unwrap();
    assert_eq!((s.probed, s.hosts), (12, 3), "{s:?}");
    assert_eq!(s.by_level.get("2"), Some(&12), "{s:?}");
    let peaks = mcp.peaks();
    for h in hosts {
        assert_eq!(peaks[h], 2, "{h}: {peaks:?}");
    }
    assert!(
        mcp.peak_total() > 2,
        "hosts were probed side by side: {peaks:?}"
    );
    t.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_host_does_not_hold_up_the_others() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let (stuck, fine) = ("stuck.example.com", "fine.example.com");
    registry.set_entries(entries(&mcp, &[(stuck, "hang", 8), (fine, "ok", 12)]), 100);
    let lookup = MapLookup::new(&[(stuck, &["127.0.0.1"]), (fine, &["127.0.0.1"])]);
    let mut cfg = config(&registry.url, lookup);
    // Eight hanging remotes would fill all four slots without the per-host limit.
    limits(&mut cfg, 4, 2);
    let scan = tokio::spawn({
        let (db, cfg) = (t.db.clone(), cfg.clone());
        async move { run(&db, &cfg).await }
    });
    let fine_done = format!(
        "SELECT COUNT(*) FROM scanner_observations WHERE target_id LIKE 'mcp:io.fixture/{fine}-%'"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (n,): (i64,) = t.row(&fine_done).await;
        if n == 12 {
            break;
        }
        assert!(Instant::now() < deadline, "the fine host was not probed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Every remote of the fine host is observed while the stuck host still hangs.
    assert_eq!(t.count("scanner_observations").await, 12);
    assert_eq!(mcp.peaks()[stuck], 2);
    scan.abort();
    let _ = scan.await;
    t.cleanup().await;
}

async fn cohort_all_observes_every_probeable_remote_once_and_keeps_the_cohort(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let twin = mcp.url("ok", "twin");
    let mut listed: Vec<Value> = (0..5)
        .map(|i| streamable(&format!("io.fixture/s{i}"), &mcp.url("ok", &i.to_string())))
        .collect();
    listed.extend([
        // One remote listed twice and a second one: two probes.
        entry(
            "io.fixture/twin",
            "1.0.0",
            "active",
            true,
            &[
                ("streamable-http", &twin),
                ("streamable-http", &twin),
                ("streamable-http", &mcp.url("auth", "twin")),
            ],
        ),
        entry("io.fixture/stdio", "1.0.0", "active", true, &[]),
        entry(
            "io.fixture/old",
            "1.0.0",
            "deprecated",
            true,
            &[("streamable-http", &mcp.url("ok", "old"))],
        ),
        entry(
            "io.fixture/s0",
            "0.9.0",
            "active",
            false,
            &[("streamable-http", &mcp.url("ok", "s0-old"))],
        ),
    ]);
    registry.set_entries(listed, 3);
    let cohort_rows = "SELECT target_id, cohort_version FROM scanner_cohort ORDER BY target_id";
    let mut cfg = config(&registry.url, MapLookup::default());
    cfg.cohort_size = Some(2);
    let fixed = run(&t.db, &cfg).await.unwrap();
    assert_eq!((fixed.cohort_version, fixed.members), (Some(1), 2));
    let before: Vec<(String, i64)> = t.rows(cohort_rows).await;

    let all_cfg = ScanConfig {
        cohort: CohortMode::All,
        cohort_size: None,
        ..cfg.clone()
    };
    let all = run(&t.db, &all_cfg).await.unwrap();
    assert_eq!(all.status, "completed", "{:?}", all.error);
    assert_eq!(
        (all.cohort, all.remotes, all.probed),
        (CohortMode::All, 7, 7)
    );
    assert_eq!(
        (all.cohort_version, all.members, all.members_added),
        (Some(1), 2, 0)
    );
    let sql = format!(
        "SELECT target_id, remote_url FROM scanner_observations WHERE scan_run_id = '{}'",
        all.scan_run_id
    );
    let observed: Vec<(String, String)> = t.rows(&sql).await;
    let distinct: BTreeSet<(String, String)> = observed.iter().cloned().collect();
    assert_eq!(
        distinct.len(),
        observed.len(),
        "each remote once: {observed:?}"
    );
    let mut want: BTreeSet<(String, String)> = (0..5)
        .map(|i| {
            (
                format!("mcp:io.fixture/s{i}"),
                mcp.url("ok", &i.to_string()),
            )
        })
        .collect();
    want.insert(("mcp:io.fixture/twin".into(), twin.clone()));
    want.insert(("mcp:io.fixture/twin".into(), mcp.url("auth", "twin")));
    assert_eq!(distinct, want);
    let after: Vec<(String, i64)> = t.rows(cohort_rows).await;
    assert_eq!(after, before, "the cohort is as it was");
    // An entry outside the cohort is now observed, and still not in the sample.
    let outside = distinct
        .iter()
        .map(|(id, _)| id.clone())
        .find(|id| !before.iter().any(|m| &m.0 == id))
        .unwrap();
    let a = common::mcp_answer(t, outside.trim_start_matches("mcp:")).await;
    assert_eq!(a["scanner"]["observed"], true, "{a}");
    assert_eq!(a["scanner"]["in_sample"], false, "{a}");

    // The default run afterwards probes the same two members as before.
    cfg.cohort_size = None;
    let again = run(&t.db, &cfg).await.unwrap();
    assert_eq!(
        (again.cohort, again.cohort_version, again.members),
        (CohortMode::Fixed, Some(1), 2)
    );
    assert_eq!(again.remotes, fixed.remotes);
    assert_eq!(t.rows::<(String, i64)>(cohort_rows).await, before);
}
on_both!(cohort_all_observes_every_probeable_remote_once_and_keeps_the_cohort);
