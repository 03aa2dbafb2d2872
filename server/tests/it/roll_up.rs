//! The rollups follow the raw rows (`db/roller.rs`). What a user relies on: an answer
//! counts every record acknowledged before it was asked (on PostgreSQL through any server
//! on the database), and rows a server did not roll up before it stopped (a crash, a kill)
//! are counted when the database is next opened, once each.

use crate::common;

use common::{post, Kind, TestDb};
use lowdown_server::caller::TrustedNetworks;
use lowdown_server::db::Db;
use serde_json::{json, Value};

/// `n` raw rows for `target` written straight into `interactions` with the rollups left
/// behind, as a server killed between its ingest commit and its roll leaves them (ingest
/// registers the target in the same transaction).
async fn raw_rows_behind_the_watermark(t: &TestDb, target: &str, n: i64) {
    raw_rows_in(&t.check.pool, target, n).await
}

/// [`raw_rows_behind_the_watermark`] in the database of `pool`.
pub(crate) async fn raw_rows_in(pool: &sqlx::AnyPool, target: &str, n: i64) {
    rows_into(pool, "interactions", target, n).await
}

/// `n` rows for `target` written straight into the raw table `table` (`interactions`, or
/// PostgreSQL's `interactions_pending`), with `target` registered.
async fn rows_into(pool: &sqlx::AnyPool, table: &str, target: &str, n: i64) {
    sqlx::query(
        "INSERT INTO targets (target, name_key, lookup_key, first_seen) VALUES ($1, $2, $3, 0) \
         ON CONFLICT (target) DO NOTHING",
    )
    .bind(target)
    .bind(lowdown_server::names::name_key(target))
    .bind(lowdown_core::target_label::lookup_form(target))
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < $1) \
         INSERT INTO {table} (record_id, actor, target, target_type, task_type, outcome, \
           failure_type, request_kind, outcome_class, latency_ms, source, node_id, day, created_at) \
         SELECT $2 || '-' || i, 'agent:x', $2, 'mcp_server', 'tool_' || (i % 7), \
           CASE WHEN i % 10 = 0 THEN 'failure' ELSE 'success' END, \
           CASE WHEN i % 10 = 0 THEN 'timeout' END, 'tool', \
           CASE WHEN i % 10 = 0 THEN 'failure' ELSE 'success' END, \
           i % 900 + 0.5, 'organic', 'ld_node' || (i % 13), '2026-12-01', 1764547200000 + i \
         FROM seq"
    )))
    .bind(n)
    .bind(target)
    .execute(pool)
    .await
    .unwrap();
}

/// The reputation answer of `target` from a server on `db`.
async fn answer(db: &Db, target: &str) -> Value {
    let app = lowdown_server::app(lowdown_server::AppState::new(db.clone(), "test"));
    common::reputation(&app, target).await
}

async fn an_answer_right_after_ingest_counts_every_acknowledged_record(t: &TestDb) {
    let app = t.app();
    let batch: Vec<Value> = (0..100)
        .map(|i| {
            let mut r = common::record("npm:fresh", if i % 4 == 0 { "failure" } else { "success" });
            r["record_id"] = json!(format!("fresh-{i}"));
            r
        })
        .collect();
    let r = post(&app, "/api/interactions", &json!(batch)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    // Asked at once, long before the background roll would run.
    let a = common::get(&app, "/api/reputation/npm:fresh").await;
    assert_eq!(a.json["interactions"], 100, "{}", a.text);
    common::assert_rollups_match_raw(t).await;
}
on_both!(an_answer_right_after_ingest_counts_every_acknowledged_record);

/// PostgreSQL: rows another server committed to `interactions_pending` and did not roll
/// (it was killed) count in the next answer of any server, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_rows_another_server_left_pending_count_in_any_servers_next_answer() {
    let Some(t) = TestDb::new(Kind::Postgres).await else {
        return;
    };
    // This server rolls once first, so nothing of its own waits when the rows appear.
    assert_eq!(t.db.roll_up().await.unwrap(), 0);
    rows_into(
        &t.check.pool,
        "interactions_pending",
        "npm:left-pending",
        700,
    )
    .await;
    let a = answer(&t.db, "npm:left-pending").await;
    assert_eq!(a["interactions"], 700, "{a}");
    let again = Db::open(&t.url, 2).await.unwrap();
    assert_eq!(again.roll_up().await.unwrap(), 0, "nothing left to add");
    let a2 = answer(&again, "npm:left-pending").await;
    assert_eq!(a2["interactions"], 700, "counted once: {a2}");
    assert_eq!(t.count("interactions_pending").await, 0);
    assert_eq!(t.count("interactions").await, 700);
    common::assert_rollups_match_raw(&t).await;
    again.close().await;
    t.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_a_stopped_server_left_behind_are_rolled_up_at_the_next_open_once() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    // More than one roll transaction holds (50,000 rows each).
    raw_rows_behind_the_watermark(&t, "npm:left-behind", 120_000).await;
    let reopened = Db::open(&t.url, 4).await.unwrap();
    let a = answer(&reopened, "npm:left-behind").await;
    assert_eq!(a["interactions"], 120_000, "{a}");
    // Opening again finds nothing left to add.
    let again = Db::open(&t.url, 4).await.unwrap();
    assert_eq!(again.roll_up().await.unwrap(), 0);
    let a2 = answer(&again, "npm:left-behind").await;
    assert_eq!(a2["interactions"], 120_000, "counted once: {a2}");
    let node = common::get(&t.app(), "/api/node/ld_node3").await;
    assert_eq!(node.status, 200, "{}", node.text);
    // i % 13 == 3 for i in 1..=120000, over one day and one target.
    assert_eq!(
        node.json["contribution"]["interactions"], 9231,
        "{}",
        node.text
    );
    assert_eq!(node.json["contribution"]["active_days"], 1);
    assert_eq!(node.json["contribution"]["targets_observed"], 1);
    common::assert_rollups_match_raw(&t).await;
    common::assert_latency_matches_raw(&t).await;
    again.close().await;
    reopened.close().await;
    t.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_another_process_stored_are_counted_by_a_running_server_once_it_rolls() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    raw_rows_behind_the_watermark(&t, "npm:elsewhere", 500).await;
    // The running server has nothing of its own waiting, so its answers do not roll; an
    // explicit roll (what `close`, the next open or its next ingest roll does) adds them.
    assert_eq!(t.db.roll_up().await.unwrap(), 500);
    let a = answer(&t.db, "npm:elsewhere").await;
    assert_eq!(a["interactions"], 500, "{a}");
    common::assert_rollups_match_raw(&t).await;
    t.cleanup().await;
}

/// `POST /api/interactions` of `body` from peer address `ip`: (status, body).
pub(crate) async fn from_peer(app: &axum::Router, ip: &str, body: &Value) -> (u16, Value) {
    use tower::ServiceExt;
    let addr = std::net::SocketAddr::new(ip.parse().unwrap(), 40000);
    let mut req = axum::http::Request::post("/api/interactions")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_string()))
        .unwrap();
    req.extensions_mut()
        .insert(axum::extract::ConnectInfo(addr));
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status().as_u16();
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// Every row of `table`, sorted, each column as text (latency sums to 6 decimals).
async fn dump(t: &TestDb, table: &str, cols: &str) -> Vec<String> {
    use sqlx::Row;
    let sql = format!("SELECT {cols} FROM {table}");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(&t.check.pool)
        .await
        .unwrap();
    let mut rows: Vec<String> = rows
        .iter()
        .map(|r| {
            (0..r.len())
                .map(|i| {
                    r.try_get::<String, _>(i)
                        .or_else(|_| r.try_get::<i64, _>(i).map(|v| v.to_string()))
                        .or_else(|_| r.try_get::<f64, _>(i).map(|v| format!("{v:.6}")))
                        .unwrap_or_else(|e| panic!("{table} column {i}: {e}"))
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    rows.sort();
    rows
}

/// The same records through both engines (PostgreSQL adds them to the rollups in Rust at
/// ingest, SQLite in SQL behind the watermark, both from `db::rollup::RULES`) give the same
/// rollups, row for row. Needs PostgreSQL (`LOWDOWN_TEST_DATABASE_URL`, set by make test-server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_engines_roll_the_same_records_up_to_the_same_rows() {
    // Without a PostgreSQL URL this says so and stops, as every PostgreSQL variant does;
    // under CI=true it fails instead (common::pg_url).
    let Some(pg) = TestDb::new(Kind::Postgres).await else {
        return;
    };
    let lite = TestDb::new(Kind::Sqlite).await.unwrap();
    let mut records = crate::migrate_rollups::records();
    // A node and a target seen only in records the rated rules leave out.
    for (i, source) in ["synthetic", "seeded"].iter().enumerate() {
        let mut r = common::record("npm:alpha", "success");
        r["record_id"] = json!(format!("unrated-{i}"));
        r["source"] = json!(source);
        r["node_id"] = json!("ld_bbbbbbbbbbbb");
        r["latency_ms"] = json!(12.5);
        records.push(r);
    }
    // Past the per-network cap: 30 rated organic records for each of two targets and one
    // day from one network, in two requests (the second crosses the cap on both at once),
    // and 25 from a trusted one.
    let from_network = |network: &str, n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| {
                let outcome = if i % 3 == 0 { "failure" } else { "success" };
                let target = ["npm:crowded", "npm:crowded-too"][i % 2];
                let mut r = common::record(target, outcome);
                r["record_id"] = json!(format!("{network}-{i}"));
                r["node_id"] = json!(format!("ld_{network}{:08}", i % 4));
                r["server_version"] = json!(["1.0.0", "1.1.0"][i % 4 / 2]);
                r
            })
            .collect()
    };
    let busy = from_network("busy", 60);
    let trusted = TrustedNetworks::parse(&["127.77.0.0/16"]).unwrap();
    for t in [&lite, &pg] {
        let app = lowdown_server::app(t.state().with_trusted_networks(trusted.clone()));
        // Two requests: the second adds to rows the first created.
        for half in records.chunks(records.len() / 2 + 1) {
            let r = post(&app, "/api/interactions", &json!(half)).await;
            assert_eq!(r.status, 201, "{}", r.text);
        }
        for (ip, batch) in [
            ("127.5.0.1", &busy[..24]),
            ("127.5.0.1", &busy[24..]),
            ("127.77.0.1", &from_network("trusted", 25)[..]),
        ] {
            let (status, body) = from_peer(&app, ip, &json!(batch)).await;
            assert_eq!(status, 201, "{body}");
        }
        t.check.roll_up().await.unwrap();
        // Each target: the busy network's 30 and the trusted one's 13 or 12.
        for (target, interactions) in [("npm:crowded", 43), ("npm:crowded-too", 42)] {
            let a = answer(&t.check, target).await;
            assert_eq!(a["interactions"], interactions, "{a}");
            assert_eq!(a["capped"], 10, "the busy network's last 10: {a}");
            assert_eq!(a["rated_interactions"], interactions - 10, "{a}");
        }
    }
    let tables = [
        ("rollup_targets", "target, source, outcome_class, n"),
        (
            "rollup_releases",
            "target, task_type, server_version, schema_hash, source, outcome_class, failure_type, n",
        ),
        ("rollup_days", "target, day, task_type, source, outcome_class, n"),
        ("rollup_latency", "target, task_type, bucket, n, sum_ms"),
        ("nodes", "node_id, interactions"),
        ("node_days", "node_id, day"),
        ("node_targets", "node_id, target"),
        ("rollup_contributors", "target, contributor"),
        ("rollup_firsts", "target, kind, value"),
        ("rollup_version_networks", "target, server_version"),
        ("rollup_networks", "target, n, day, day_n"),
        ("targets", "target, name_key, lookup_key"),
    ];
    for (table, cols) in tables {
        let (a, b) = (dump(&lite, table, cols).await, dump(&pg, table, cols).await);
        assert!(!a.is_empty(), "{table} is empty");
        assert_eq!(a, b, "{table}: SQLite (left) and PostgreSQL (right) differ");
    }
    for t in [&lite, &pg] {
        common::assert_rollups_match_raw(t).await;
    }
    lite.cleanup().await;
    pg.cleanup().await;
}
