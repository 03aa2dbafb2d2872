//! Retention (`--retain-raw-days`, `lowdown_server::retention`): raw interaction rows older
//! than the period are removed once the roll-ups count them, on both engines, and every
//! answer, page and feed is the same before and after (compared field by field, at one
//! instant of the state's clock); a removed `record_id` stays a duplicate; a client cannot
//! date its own records; the job runs under its lease; PostgreSQL drops partitions; an
//! upgraded database keeps every row; SQLite refuses to make a roll-ups file again once it
//! alone counts removed rows.

use serde_json::{json, Value};

use crate::common::{self, call, Kind, TestDb};
use crate::migrate_rollups::{records, TARGETS};
use crate::roll_up::from_peer;
use lowdown_server::retention::{run_once, Report};
use lowdown_server::AppState;

const DAY_MS: i64 = 86_400_000;
const NODES: [&str; 2] = ["ld_0123456789ab", "ld_aaaaaaaaaaaa"];
/// Four client networks (IPv4 /24s).
const PEERS: [&str; 4] = ["198.51.100.7", "198.51.101.7", "203.0.113.7", "192.0.2.7"];

/// The 120 varied records from four networks, then 50 failures of one network on one
/// target (past the per-network cap of 20 a day, so some are stored `capped`).
async fn send_history(app: &axum::Router) {
    for (i, chunk) in records().chunks(30).enumerate() {
        let (status, body) = from_peer(app, PEERS[i % 4], &Value::from(chunk.to_vec())).await;
        assert_eq!(status, 201, "{body}");
    }
    let flood: Vec<Value> = (0..50)
        .map(|i| {
            json!({"record_id": format!("flood-{i}"), "target": TARGETS[0], "target_type": "tool",
                   "task_type": "search", "outcome": "failure", "failure_type": "timeout",
                   "error_layer": "server", "node_id": format!("ld_{:012x}", 0xf00 + i)})
        })
        .collect();
    let (status, body) = from_peer(app, PEERS[0], &Value::from(flood)).await;
    assert_eq!(status, 201, "{body}");
}

/// Every answer, page and feed that reads the roll-ups, as a user gets them.
async fn everything(app: &axum::Router) -> Vec<(String, Value)> {
    let mut uris: Vec<(String, Option<&str>)> = Vec::new();
    for target in TARGETS {
        let base = format!("/api/reputation/{target}");
        uris.push((base.clone(), None));
        uris.push((format!("{base}?task_type=search"), None));
        uris.push((base.clone(), Some(NODES[0])));
        uris.push((format!("{base}?task_type=fetch"), Some(NODES[1])));
        uris.push((format!("/t/{target}"), None));
    }
    uris.push((format!("/api/compare?targets={}", TARGETS.join(",")), None));
    for node in NODES {
        uris.push((format!("/api/node/{node}"), None));
    }
    for page in ["/", "/daily/feed.json", "/daily/feed.xml"] {
        uris.push((page.to_owned(), None));
    }
    let mut out = Vec::new();
    for (uri, node) in uris {
        let headers: Vec<(&str, &str)> =
            node.map(|n| ("x-lowdown-node-id", n)).into_iter().collect();
        let r = call(app, "GET", &uri, &headers, None).await;
        assert_eq!(r.status, 200, "{uri}: {}", r.text);
        let mut answer = match r.json {
            Value::String(page) => Value::String(without_request_time(&page)),
            json => json,
        };
        // The citation carries the time of the request (milliseconds apart).
        if let Some(source) = answer.get_mut("source").and_then(Value::as_object_mut) {
            source.remove("retrieved_at");
            source.remove("cite");
        }
        out.push((format!("{uri} as {node:?}"), answer));
    }
    out
}

/// The open dataset (`lowdown-server export`) as written now: each file's name and bytes.
async fn export(t: &TestDb) -> Vec<(String, Vec<u8>)> {
    let dir = std::env::temp_dir().join(format!("lowdown-retention-export-{}", rand_suffix()));
    lowdown_server::export::export(&t.db, &dir, "lowdown-test")
        .await
        .unwrap();
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let name = p.strip_prefix(&dir).unwrap().display().to_string();
                files.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    files.sort();
    let _ = std::fs::remove_dir_all(dir);
    assert!(files.iter().any(|(n, _)| n == "REPORT.md"), "{files:?}");
    files
}

fn rand_suffix() -> String {
    let mut b = [0u8; 6];
    getrandom::fill(&mut b).unwrap();
    hex::encode(b)
}

/// Every leaf where `a` and `b` differ, as `path: a != b`.
fn differences(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                differences(&format!("{path}.{k}"), va, vb, out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                differences(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        (Value::String(x), Value::String(y)) if x != y => {
            // Pages: where the texts part, with some context.
            let at = x
                .char_indices()
                .zip(y.chars())
                .find(|((_, p), q)| p != q)
                .map_or(x.len().min(y.len()), |((i, _), _)| i);
            let around =
                |s: &str| -> String { s.chars().skip(at.saturating_sub(80)).take(160).collect() };
            out.push(format!(
                "{path} at {at}: {:?} != {:?}",
                around(x),
                around(y)
            ));
        }
        _ if a != b => out.push(format!("{path}: {a} != {b}")),
        _ => {}
    }
}

/// A page's citation names the time of the request (milliseconds apart between two
/// captures): `retrieved 2027-03-08T17:35:32.225Z` becomes `retrieved <time>`.
fn without_request_time(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut rest = page;
    while let Some(i) = rest.find("retrieved ") {
        let (head, tail) = rest.split_at(i + "retrieved ".len());
        out.push_str(head);
        let stamp = tail
            .get(..24)
            .filter(|s| s.ends_with('Z') && s.as_bytes()[10] == b'T');
        match stamp {
            Some(_) => {
                out.push_str("<time>");
                rest = &tail[24..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// Compares two captures of [`everything`] field by field.
fn assert_same(before: &[(String, Value)], after: &[(String, Value)]) {
    assert_eq!(before.len(), after.len());
    let mut diffs = Vec::new();
    for ((uri, a), (_, b)) in before.iter().zip(after) {
        differences(uri, a, b, &mut diffs);
    }
    assert!(
        diffs.is_empty(),
        "answers changed by the removal:\n{}",
        diffs.join("\n")
    );
}

fn raw_count_sql() -> &'static str {
    "SELECT COUNT(*) FROM interactions"
}

async fn raw_rows(t: &TestDb) -> i64 {
    t.row::<(i64,)>(raw_count_sql()).await.0
}

/// A state over the test's database with its own clock, and its app.
fn served(t: &TestDb) -> (AppState, axum::Router) {
    let state = t.state();
    let app = lowdown_server::app(state.clone());
    (state, app)
}

async fn run(state: &AppState) -> Report {
    run_once(state, 90, "test-holder")
        .await
        .unwrap()
        .expect("the lease is free")
}

/// The test: answers before and after removal, compared field by field.
async fn removal_leaves_every_answer_unchanged(t: &TestDb) {
    let (state, app) = served(t);
    // PostgreSQL: today's partition exists before the records come.
    let first = run(&state).await;
    assert_eq!(first.rows, 0);
    send_history(&app).await;
    let stored = raw_rows(t).await;
    assert_eq!(stored, 170);
    // 89 days later nothing is old enough.
    state.clock.shift(89 * DAY_MS);
    assert_eq!(run(&state).await.rows, 0);
    assert_eq!(raw_rows(t).await, stored);
    state.clock.shift(2 * DAY_MS);
    let before = everything(&app).await;
    let exported_before = export(t).await;
    // The answers are not empty: what they show must survive.
    let a = &before[0].1;
    assert_eq!(a["interactions"], 90, "{a}");
    assert!(a["capped"].as_u64().unwrap() > 0, "{a}");
    assert!(a["contributors"].as_u64().unwrap() >= 2, "{a}");
    assert_eq!(a["networks"], 4, "{a}");
    let removed = run(&state).await;
    let kept = raw_rows(t).await;
    // SQLite keeps its newest row (its rowid keeps new rows above the watermark).
    let expected_kept = if t.kind == Kind::Sqlite { 1 } else { 0 };
    assert_eq!(kept, expected_kept, "{removed:?}");
    assert_eq!(removed.rows as i64, stored - kept);
    if t.kind == Kind::Postgres {
        assert_eq!(removed.dropped.len(), 1, "{removed:?}");
    }
    let after = everything(&app).await;
    assert_same(&before, &after);
    assert_eq!(export(t).await, exported_before, "the open dataset changed");
    // New records after the removal are counted on top of the kept totals.
    let (status, body) = from_peer(
        &app,
        PEERS[1],
        &json!({"record_id": "later-1", "target": TARGETS[0], "target_type": "tool",
                "task_type": "search", "outcome": "success", "node_id": NODES[0]}),
    )
    .await;
    assert_eq!((status, &body["accepted"]), (201, &json!(1)), "{body}");
    let a = common::reputation(&app, TARGETS[0]).await;
    assert_eq!(
        a["interactions"],
        before[0].1["interactions"].as_u64().unwrap() + 1
    );
}
on_both!(removal_leaves_every_answer_unchanged);

/// A record whose raw row was removed, sent again (a spool replay, or an attacker), is a
/// duplicate: acknowledged, counted nowhere, free of quotas.
async fn a_replayed_removed_record_stays_a_duplicate(t: &TestDb) {
    let (state, app) = served(t);
    send_history(&app).await;
    state.clock.shift(91 * DAY_MS);
    let removed = run(&state).await;
    assert!(removed.rows >= 169, "{removed:?}");
    let before = everything(&app).await;
    let kept = raw_rows(t).await;
    let replay: Vec<Value> = records();
    let (status, body) = from_peer(&app, PEERS[2], &Value::from(replay)).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["duplicates"], 120, "{body}");
    assert_eq!(raw_rows(t).await, kept, "a removed id was stored again");
    assert_same(&before, &everything(&app).await);
    // Repeated in one request, and beside a new record, which alone counts.
    let mut mixed = vec![records()[3].clone(), records()[3].clone()];
    mixed.push(
        json!({"record_id": "fresh-1", "target": TARGETS[1], "target_type": "tool",
                      "task_type": "search", "outcome": "success"}),
    );
    let (status, body) = from_peer(&app, PEERS[2], &Value::from(mixed)).await;
    assert_eq!((status, &body["duplicates"]), (201, &json!(2)), "{body}");
    assert_eq!(raw_rows(t).await, kept + 1);
    let a = &before
        .iter()
        .find(|(u, _)| u == &format!("/api/reputation/{} as None", TARGETS[1]))
        .unwrap()
        .1;
    let b = common::reputation(&app, TARGETS[1]).await;
    assert_eq!(
        b["interactions"].as_u64().unwrap(),
        a["interactions"].as_u64().unwrap() + 1
    );
}
on_both!(a_replayed_removed_record_stays_a_duplicate);

/// Records carry no time of their own: the server stamps them on arrival, so a client
/// claiming an old (or future) time cannot get its records removed early or kept longer.
async fn forged_times_are_ignored(t: &TestDb) {
    let (state, app) = served(t);
    let forged: Vec<Value> = [
        json!({"created_at": 0, "day": "1970-01-01", "timestamp": "1970-01-01T00:00:00Z"}),
        json!({"created_at": 4_102_444_800_000_i64, "day": "2100-01-01", "ts": 4_102_444_800_i64}),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, mut extra)| {
        let r = extra.as_object_mut().unwrap();
        for (k, v) in [
            ("record_id", json!(format!("forged-{i}"))),
            ("target", json!(TARGETS[2])),
            ("target_type", json!("tool")),
            ("task_type", json!("search")),
            ("outcome", json!("success")),
        ] {
            r.insert(k.into(), v);
        }
        extra
    })
    .collect();
    let now = state.now();
    let (status, body) = from_peer(&app, PEERS[0], &Value::from(forged)).await;
    assert_eq!((status, &body["accepted"]), (201, &json!(2)), "{body}");
    let stamped: Vec<(i64, String)> = t
        .rows("SELECT created_at, day FROM interactions ORDER BY record_id")
        .await;
    for (at, day) in &stamped {
        assert!((now..now + 60_000).contains(at), "{stamped:?}");
        assert_eq!(day, &lowdown_server::clock::day_of(now));
    }
    assert_eq!(run(&state).await.rows, 0);
    assert_eq!(raw_rows(t).await, 2);
    state.clock.shift(91 * DAY_MS);
    let removed = run(&state).await;
    assert_eq!(raw_rows(t).await, 2 - removed.rows as i64, "{removed:?}");
    assert!(removed.rows >= 1);
}
on_both!(forged_times_are_ignored);

/// SQLite: only rows the roll-ups include are removed; rows a stopped server left behind
/// the watermark wait for their roll, however old.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_removes_only_rolled_up_rows() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    let (state, app) = served(&t);
    // 300 rows dated a year ago, written straight into the raw table: not rolled up.
    crate::roll_up::raw_rows_in(&t.check.pool, "npm:old", 300).await;
    let cutoff = state.now() - 90 * DAY_MS;
    let removed = lowdown_server::db::retention::remove_before(&t.db, cutoff)
        .await
        .unwrap();
    assert_eq!(removed.rows, 0, "rows behind the watermark removed");
    assert_eq!(raw_rows(&t).await, 300);
    assert_eq!(t.db.roll_up().await.unwrap(), 300);
    let before = common::reputation(&app, "npm:old").await;
    assert_eq!(before["interactions"], 300);
    let removed = lowdown_server::db::retention::remove_before(&t.db, cutoff)
        .await
        .unwrap();
    assert_eq!(removed.rows, 299, "all but the newest row");
    assert_eq!(run(&state).await.rows, 0, "the newest row stays");
    assert_eq!(
        common::reputation(&app, "npm:old").await["interactions"],
        300
    );
    // Their ids are kept, so each stays a duplicate.
    let ids: i64 = t.row::<(i64,)>("SELECT COUNT(*) FROM record_ids").await.0;
    assert_eq!(ids, 299);
    t.cleanup().await;
}

/// SQLite: once rows were removed, the roll-ups file alone counts them, so a missing one
/// is refused at open (naming the file) instead of being made again with holes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_refuses_to_remake_the_rollups_after_removal() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    let (state, app) = served(&t);
    send_history(&app).await;
    state.clock.shift(91 * DAY_MS);
    assert!(run(&state).await.rows > 0);
    let file = t.sqlite_file().unwrap();
    let rollups = lowdown_server::db::rollups_path(file.to_str().unwrap());
    let (url, dir) = (t.url.clone(), file.parent().unwrap().to_owned());
    t.db.close().await;
    t.check.close().await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{rollups}{suffix}"));
    }
    let err = match lowdown_server::db::Db::open(&url, 2).await {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a roll-ups file was made again after raw rows were removed"),
    };
    assert!(
        err.contains(&rollups) && err.contains("retain-raw-days"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// SQLite: a roll-ups file restored from before the last removal lacks the removed rows
/// that came after its watermark; the pair is refused at open, naming both positions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_refuses_a_rollups_file_older_than_the_last_removal() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    send_history(&t.app()).await;
    t.db.roll_up().await.unwrap();
    let file = t.sqlite_file().unwrap();
    let rollups = lowdown_server::db::rollups_path(file.to_str().unwrap());
    let backup = format!("{rollups}.backup");
    // Closed, so the file is whole without its WAL.
    let t = t
        .reopen(|| {
            std::fs::copy(&rollups, &backup).unwrap();
        })
        .await;
    let (state, app) = served(&t);
    let later: Vec<Value> = (0..10)
        .map(|i| {
            json!({"record_id": format!("later-{i}"), "target": TARGETS[2],
                        "target_type": "tool", "task_type": "t", "outcome": "success"})
        })
        .collect();
    assert_eq!(from_peer(&app, PEERS[3], &Value::from(later)).await.0, 201);
    state.clock.shift(91 * DAY_MS);
    assert_eq!(run(&state).await.rows, 179);
    let (url, dir) = (t.url.clone(), file.parent().unwrap().to_owned());
    t.db.close().await;
    t.check.close().await;
    std::fs::rename(&backup, &rollups).unwrap();
    let err = match lowdown_server::db::Db::open(&url, 2).await {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a roll-ups file missing removed rows was accepted"),
    };
    assert!(
        err.contains(&rollups) && err.contains("up to 170") && err.contains("up to 179"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The job runs once across servers sharing the database: a held lease makes the others
/// step aside.
async fn the_job_runs_under_its_lease(t: &TestDb) {
    let (state, _) = served(t);
    let now = state.now();
    lowdown_server::db::lease::acquire(
        &t.db,
        lowdown_server::retention::RETENTION_LEASE,
        "another-server",
        now,
        60_000,
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(run_once(&state, 90, "me").await.unwrap(), None);
    state.clock.shift(61_000);
    assert!(run_once(&state, 90, "me").await.unwrap().is_some());
    // Released after the run: the other server may take it at once.
    lowdown_server::db::lease::acquire(
        &t.db,
        lowdown_server::retention::RETENTION_LEASE,
        "another-server",
        state.now(),
        60_000,
    )
    .await
    .unwrap()
    .unwrap();
}
on_both!(the_job_runs_under_its_lease);

/// PostgreSQL: a day's rows live in the day's partition, made ahead by the job, and go
/// with it; rows of a day the job had not prepared land in the default partition and are
/// deleted from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_drops_day_partitions_and_clears_the_default() {
    let Some(t) = TestDb::new(Kind::Postgres).await else {
        return;
    };
    let (state, app) = served(&t);
    let one = |id: &str| {
        json!({"record_id": id, "target": TARGETS[0], "target_type": "tool",
               "task_type": "search", "outcome": "success"})
    };
    // No job yet: today's rows go to the default partition (when they are rolled up).
    assert_eq!(from_peer(&app, PEERS[0], &one("d0-1")).await.0, 201);
    t.db.roll_up().await.unwrap();
    let made = run(&state).await.made;
    assert_eq!(
        made.len() as i64,
        lowdown_server::retention::PARTITIONS_AHEAD,
        "{made:?}"
    );
    state.clock.shift(DAY_MS);
    assert_eq!(from_peer(&app, PEERS[0], &one("d1-1")).await.0, 201);
    let homes: Vec<(String, String)> = t
        .rows("SELECT record_id, CAST(tableoid::regclass AS TEXT) FROM interactions ORDER BY 1")
        .await;
    let tomorrow = lowdown_server::clock::day_of(state.now()).replace('-', "");
    assert_eq!(
        homes,
        vec![
            ("d0-1".to_owned(), "interactions_default".to_owned()),
            ("d1-1".to_owned(), format!("interactions_d{tomorrow}")),
        ]
    );
    state.clock.shift(91 * DAY_MS);
    let answer = |mut a: Value| {
        let source = a["source"].as_object_mut().unwrap();
        source.remove("retrieved_at");
        source.remove("cite");
        a
    };
    let before = answer(common::reputation(&app, TARGETS[0]).await);
    assert_eq!(before["interactions"], 2);
    let removed = run(&state).await;
    assert_eq!(removed.rows, 2, "{removed:?}");
    // Only the day wholly past the cutoff; the next days' empty partitions go later.
    assert_eq!(removed.dropped, [format!("interactions_d{tomorrow}")]);
    assert_eq!(raw_rows(&t).await, 0);
    let cutoff = state.now() - 90 * DAY_MS;
    for p in lowdown_server::db::retention::partitions(&t.db)
        .await
        .unwrap()
    {
        if let Some((_, to)) = p.range {
            assert!(to > cutoff, "{p:?} should have been dropped");
        }
    }
    assert_eq!(answer(common::reputation(&app, TARGETS[0]).await), before);
    // Replays are duplicates across dropped partitions too.
    let (status, body) =
        from_peer(&app, PEERS[1], &Value::from(vec![one("d0-1"), one("d1-1")])).await;
    assert_eq!((status, &body["duplicates"]), (201, &json!(2)), "{body}");
    t.cleanup().await;
}

/// Every column of every raw row, as text, in id order.
async fn dump_raw(pool: &sqlx::AnyPool) -> Vec<String> {
    use sqlx::Row;
    let cols = [
        "record_id",
        "actor",
        "target",
        "target_type",
        "task_type",
        "outcome",
        "failure_type",
        "error_layer",
        "request_kind",
        "outcome_class",
        "latency_ms",
        "source",
        "node_id",
        "server_version",
        "schema_hash",
        "recorder_version",
        "protocol_version",
        "day",
        "created_at",
        "tools_has_more",
        "network",
        "agent_id",
        "trusted",
        "latency_bucket",
    ];
    let select = cols
        .iter()
        .map(|c| format!("COALESCE(CAST({c} AS TEXT), '-') AS {c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {select} FROM interactions ORDER BY record_id"
    )))
    .fetch_all(pool)
    .await
    .unwrap();
    rows.iter()
        .map(|r| {
            cols.iter()
                .map(|c| r.try_get::<String, _>(*c).unwrap())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// Upgrading a populated version-13 database: every raw row is kept (on PostgreSQL in the
/// partition of everything before the end of its newest row's day), every id stays a
/// duplicate, and the job removes the old rows once they are past the period.
async fn upgrade_keeps_every_raw_row(kind: Kind) {
    let Some((url, dir, pg)) = common::empty_database(kind).await else {
        return;
    };
    let migrations = lowdown_server::db::migrations_through(kind == Kind::Sqlite, 13);
    let pool = common::migrated_as_before(&url, &migrations).await;
    // 200 rows from a year ago, 50 from now.
    crate::roll_up::raw_rows_in(&pool, "oldtool", 200).await;
    crate::roll_up::raw_rows_in(&pool, "newtool", 50).await;
    let now = lowdown_server::clock::now_ms();
    sqlx::query("UPDATE interactions SET created_at = $1 + created_at - 1764547200000 WHERE target = 'newtool'")
        .bind(now - 60_000)
        .execute(&pool)
        .await
        .unwrap();
    let before = dump_raw(&pool).await;
    assert_eq!(before.len(), 250);
    pool.close().await;
    let t = TestDb::open(kind, url, dir, pg).await;
    assert_eq!(
        dump_raw(&t.check.pool).await,
        before,
        "rows changed by the upgrade"
    );
    let ids = t.count("record_ids").await;
    if kind == Kind::Postgres {
        assert_eq!(ids, 250);
        let parts = lowdown_server::db::retention::partitions(&t.db)
            .await
            .unwrap();
        let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["interactions_before_0015", "interactions_default"]);
        let end = parts[0].range.unwrap().1;
        assert_eq!(end, (now / DAY_MS + 1) * DAY_MS, "{parts:?}");
    } else {
        assert_eq!(ids, 0, "SQLite keeps only removed ids");
    }
    let (state, app) = served(&t);
    let replay: Vec<Value> = ["oldtool-5", "newtool-5"]
        .iter()
        .map(|id| {
            json!({"record_id": id, "target": "oldtool", "target_type": "tool",
                   "task_type": "t", "outcome": "success"})
        })
        .collect();
    let (status, body) = from_peer(&app, PEERS[0], &Value::from(replay.clone())).await;
    assert_eq!((status, &body["duplicates"]), (201, &json!(2)), "{body}");
    // Now: SQLite removes the old rows (rolled up at open); PostgreSQL keeps the
    // partition, which holds today's rows too.
    let removed = run(&state).await;
    let expected = if kind == Kind::Sqlite { 200 } else { 0 };
    assert_eq!(removed.rows, expected, "{removed:?}");
    state.clock.shift(91 * DAY_MS);
    let removed = run(&state).await;
    if kind == Kind::Postgres {
        assert_eq!(removed.dropped, ["interactions_before_0015"]);
        assert_eq!(removed.rows, 250);
    } else {
        assert_eq!(removed.rows, 49);
    }
    let (status, body) = from_peer(&app, PEERS[0], &Value::from(replay)).await;
    assert_eq!((status, &body["duplicates"]), (201, &json!(2)), "{body}");
    t.cleanup().await;
}
on_both!(kind upgrade_keeps_every_raw_row);

/// The flag reaches the job: `serve --retain-raw-days 1` over a database holding rows from
/// a year ago removes them once it has started (all but SQLite's newest), and a period of
/// 0 days is refused before anything runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_the_job_with_the_flag() {
    let home = std::env::temp_dir().join(format!("lowdown-retention-serve-{}", rand_suffix()));
    std::fs::create_dir_all(&home).unwrap();
    let refused = common::lowdown_server_at(&home, &["serve", "--retain-raw-days", "0"]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("--retain-raw-days"), "{err}");
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    crate::roll_up::raw_rows_in(&t.check.pool, "oldtool", 50).await;
    let port = common::free_port().to_string();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--db",
            &t.url,
        ])
        .args(["--retain-raw-days", "1"])
        .env("LOWDOWN_HOME", &home)
        .env("RUST_LOG", "off")
        .spawn()
        .unwrap();
    let mut left = raw_rows(&t).await;
    for _ in 0..200 {
        if left == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        left = raw_rows(&t).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(left, 1, "the job did not remove the year-old rows");
    assert_eq!(t.count("record_ids").await, 49);
    t.cleanup().await;
    let _ = std::fs::remove_dir_all(home);
}

/// Records refused over a quota give their ids up again (PostgreSQL claims them in
/// `record_ids` before the quota is taken): sent again an hour later they are stored, not
/// taken for duplicates.
async fn refused_records_are_not_taken_for_duplicates(t: &TestDb) {
    let limits = lowdown_server::config::limits(&["records-per-network=3".to_owned()]).unwrap();
    let state = t.state().with_limits(limits);
    let app = lowdown_server::app(state.clone());
    let batch: Vec<Value> = (0..5)
        .map(|i| {
            json!({"record_id": format!("q-{i}"), "target": TARGETS[0], "target_type": "tool",
                        "task_type": "search", "outcome": "success"})
        })
        .collect();
    let (status, body) = from_peer(&app, PEERS[0], &Value::from(batch.clone())).await;
    assert_eq!((status, &body["accepted"]), (201, &json!(3)), "{body}");
    assert_eq!(body["rate_limited"], json!([3, 4]), "{body}");
    state.clock.shift(3_600_000);
    let (status, body) = from_peer(&app, PEERS[0], &Value::from(batch[3..].to_vec())).await;
    assert_eq!(
        (status, &body["accepted"], &body["duplicates"]),
        (201, &json!(2), &json!(0)),
        "{body}"
    );
    assert_eq!(raw_rows(t).await, 5);
}
on_both!(refused_records_are_not_taken_for_duplicates);
