//! Test harness: the app over a fresh SQLite file or a fresh PostgreSQL database, called
//! with `oneshot` or over a real socket.
//!
//! PostgreSQL comes from `LOWDOWN_TEST_DATABASE_URL` (set by `make test-server`, which
//! starts a server with `server/scripts/pg-start.sh`). When the variable is set, a
//! PostgreSQL test that cannot reach it FAILS. When it is unset the PostgreSQL variants
//! are skipped with a message, except under `CI=true`, where that is a failure too.
#![allow(dead_code)] // each test file uses a different part of the harness

pub mod prowl;

use std::path::PathBuf;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use lowdown_server::db::Db;
use lowdown_server::AppState;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;
use tower::ServiceExt;

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// A database made for one test; `url` reopens it (restart tests).
pub struct TestDb {
    pub kind: Kind,
    pub url: String,
    pub db: Db,
    /// A second pool for assertions: it stays open when a test stops the server's pool.
    pub check: Db,
    dir: Option<PathBuf>,
    pg: Option<(String, String)>,
}

fn random_suffix() -> String {
    let mut b = [0u8; 6];
    getrandom::fill(&mut b).expect("os random");
    hex::encode(b)
}

/// The PostgreSQL admin URL, or `None` when PostgreSQL tests should be skipped.
pub fn pg_url() -> Option<String> {
    match std::env::var("LOWDOWN_TEST_DATABASE_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but LOWDOWN_TEST_DATABASE_URL is not set: run `make test-server`")
        }
        _ => {
            eprintln!("LOWDOWN_TEST_DATABASE_URL unset: skipping the PostgreSQL variant (make test-server sets it)");
            None
        }
    }
}

fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let root = base.rsplit_once('/').map_or(base, |(r, _)| r);
    match query {
        Some(q) => format!("{root}/{db}?{q}"),
        None => format!("{root}/{db}"),
    }
}

/// A fresh, empty database of `kind` (no migrations applied): its URL, and what
/// [`TestDb`] removes at cleanup. `None` when PostgreSQL is skipped.
pub async fn empty_database(
    kind: Kind,
) -> Option<(String, Option<PathBuf>, Option<(String, String)>)> {
    match kind {
        Kind::Sqlite => {
            let dir = std::env::temp_dir().join(format!("lowdown-test-{}", random_suffix()));
            std::fs::create_dir_all(&dir).unwrap();
            let url = lowdown_server::config::sqlite_url(&dir.join("lowdown.db"));
            Some((url, Some(dir), None))
        }
        Kind::Postgres => {
            let admin = pg_url()?;
            let name = format!("lowdown_t_{}", random_suffix());
            sqlx::any::install_default_drivers();
            let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
                .await
                .unwrap_or_else(|e| {
                    panic!("LOWDOWN_TEST_DATABASE_URL is set but unreachable: {e}")
                });
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await
                .unwrap();
            Some((with_database(&admin, &name), None, Some((admin, name))))
        }
    }
}

impl TestDb {
    /// A fresh database of `kind`, migrated; `None` when PostgreSQL is skipped.
    pub async fn new(kind: Kind) -> Option<TestDb> {
        let (url, dir, pg) = empty_database(kind).await?;
        Some(TestDb::open(kind, url, dir, pg).await)
    }

    /// Opens the server's pools on a database made by [`empty_database`] (which applies
    /// the migrations), owning its cleanup.
    pub async fn open(
        kind: Kind,
        url: String,
        dir: Option<PathBuf>,
        pg: Option<(String, String)>,
    ) -> TestDb {
        let db = Db::open(&url, 8).await.expect("open the database");
        let check = Db::open(&url, 2).await.expect("open the database");
        TestDb {
            kind,
            url,
            db,
            check,
            dir,
            pg,
        }
    }

    /// SQLite: the database file.
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join("lowdown.db"))
    }

    /// Closes both pools, runs `between` (nothing has the database open) and opens it again.
    pub async fn reopen(self, between: impl FnOnce()) -> TestDb {
        self.db.close().await;
        self.check.close().await;
        between();
        TestDb::open(self.kind, self.url, self.dir, self.pg).await
    }

    /// Closes the pool and removes the database.
    pub async fn cleanup(self) {
        self.db.close().await;
        self.check.close().await;
        if let Some(dir) = self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some((admin, name)) = self.pg {
            if let Ok(mut conn) = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin).await {
                let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await;
            }
        }
    }

    pub fn state(&self) -> AppState {
        AppState::new(self.db.clone(), "lowdown-test")
    }

    pub fn app(&self) -> Router {
        lowdown_server::app(self.state())
    }

    /// `SELECT COUNT(*) FROM table`.
    pub async fn count(&self, table: &str) -> i64 {
        self.row::<(i64,)>(&format!("SELECT COUNT(*) FROM {table}"))
            .await
            .0
    }

    /// PostgreSQL: rolls up every committed raw row, so `interactions` holds them.
    async fn settle_raw(&self) {
        if self.kind == Kind::Postgres {
            self.check.roll_up().await.unwrap();
        }
    }

    /// The one row `sql` selects, as a tuple of its columns (on PostgreSQL once every
    /// committed raw row is rolled up: they reach `interactions` only then).
    pub async fn row<T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin>(&self, sql: &str) -> T {
        self.settle_raw().await;
        sqlx::query_as(sqlx::AssertSqlSafe(sql.to_owned()))
            .fetch_one(&self.check.pool)
            .await
            .unwrap()
    }

    /// Every row `sql` selects, as tuples of their columns.
    pub async fn rows<T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin>(
        &self,
        sql: &str,
    ) -> Vec<T> {
        self.settle_raw().await;
        sqlx::query_as(sqlx::AssertSqlSafe(sql.to_owned()))
            .fetch_all(&self.check.pool)
            .await
            .unwrap()
    }
}

/// One response, body parsed as JSON (or a JSON string for non-JSON bodies).
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub json: Value,
    pub text: String,
}

impl Resp {
    /// The status and the refusal's `reason`, as a test compares them.
    pub fn refusal(&self) -> (u16, Option<&str>) {
        (self.status.as_u16(), self.json["reason"].as_str())
    }
}

/// Sends a request through the router with `oneshot`.
pub async fn call(
    app: &Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> Resp {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(body.map_or_else(Body::empty, Body::from)).unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = axum::body::to_bytes(res.into_body(), 16 << 20)
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
    Resp {
        status,
        headers,
        json,
        text,
    }
}

pub async fn get(app: &Router, uri: &str) -> Resp {
    call(app, "GET", uri, &[], None).await
}

pub async fn post(app: &Router, uri: &str, body: &Value) -> Resp {
    post_as(app, uri, &[("content-type", "application/json")], body).await
}

/// GETs `uri` through the router with `headers`.
pub async fn get_as(app: &Router, uri: &str, headers: &[(&str, &str)]) -> Resp {
    call(app, "GET", uri, headers, None).await
}

/// POSTs `body` as JSON text through the router with exactly `headers`.
pub async fn post_as(app: &Router, uri: &str, headers: &[(&str, &str)], body: &Value) -> Resp {
    call(app, "POST", uri, headers, Some(body.to_string())).await
}

/// `GET /api/reputation/{target}`, which must answer 200.
pub async fn reputation(app: &Router, target: &str) -> Value {
    let r = get(app, &format!("/api/reputation/{target}")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.json
}

/// The answer for the Registry entry `name`: `GET /api/reputation/mcp:{name}`, which must
/// answer 200.
pub async fn mcp_answer(t: &TestDb, name: &str) -> Value {
    reputation(&t.app(), &format!("mcp:{name}")).await
}

/// A port free on 127.0.0.1 a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `lowdown-server args`, logging off, run to its end off the runtime's threads.
pub async fn lowdown_server(
    args: impl IntoIterator<Item = String> + Send + 'static,
) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
            .args(args)
            .env("RUST_LOG", "off")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

/// `lowdown-server args` with `home` as `LOWDOWN_HOME` and no `DATABASE_URL`, run to its end.
pub fn lowdown_server_at(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
        .args(args)
        .env("LOWDOWN_HOME", home)
        .env_remove("DATABASE_URL")
        .output()
        .unwrap()
}

/// A valid record for `target` with `outcome`.
pub fn record(target: &str, outcome: &str) -> Value {
    serde_json::json!({
        "actor": "agent:test",
        "target": target,
        "target_type": "tool",
        "task_type": "search",
        "outcome": outcome,
    })
}

/// Runs `async fn $name(t: &TestDb)` on SQLite and on PostgreSQL, as two
/// `#[tokio::test]` functions `$name::sqlite` and `$name::postgres`; with `kind`, runs
/// `async fn $name(kind: Kind)`, which makes its own databases.
#[macro_export]
macro_rules! on_both {
    (kind $name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::common::Kind::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::common::Kind::Postgres).await;
            }
        }
    };
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let t = $crate::common::TestDb::new($crate::common::Kind::Sqlite)
                    .await
                    .unwrap();
                super::$name(&t).await;
                t.cleanup().await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some(t) = $crate::common::TestDb::new($crate::common::Kind::Postgres).await
                else {
                    return;
                };
                super::$name(&t).await;
                t.cleanup().await;
            }
        }
    };
}

/// The UTC day `offset` days from today, `YYYY-MM-DD`.
pub fn day(offset: i64) -> String {
    use lowdown_core::scanner::days::{day_number, day_string};
    let today = day_number(&lowdown_server::clock::day_of(
        lowdown_server::clock::now_ms(),
    ))
    .unwrap();
    day_string(today + offset)
}

/// The raw rows as the rollups count them, for `FROM {raw} AS i`: on SQLite the per-network
/// cap's marks live in the roll-ups file (`capped_rows`), not in `interactions`.
pub fn raw_interactions(t: &TestDb) -> &'static str {
    match t.kind {
        Kind::Sqlite => {
            "(SELECT target, task_type, day, source, server_version, schema_hash, \
             failure_type, network, agent_id, node_id, trusted, latency_ms, created_at, \
             CASE WHEN rowid IN (SELECT id FROM capped_rows) THEN 'capped' \
             ELSE outcome_class END AS outcome_class FROM interactions)"
        }
        Kind::Postgres => "interactions",
    }
}

/// Checks that every rollup equals a recomputation from the raw rows.
pub async fn assert_rollups_match_raw(t: &TestDb) {
    let raw = raw_interactions(t);
    // SQLite rolls up behind the raw rows; the answers settle first, and so does this.
    t.check.roll_up().await.unwrap();
    let checks: &[(&str, &str, &str)] = &[
        (
            "rollup_targets",
            "target, source, outcome_class",
            "target, source, outcome_class",
        ),
        (
            "rollup_tasks",
            "target, task_type, source, outcome_class, failure_type",
            "target, task_type, source, outcome_class, COALESCE(failure_type, '')",
        ),
        (
            "rollup_days",
            "target, task_type, day, source, outcome_class",
            "target, task_type, day, source, outcome_class",
        ),
        (
            "rollup_versions",
            "target, task_type, server_version, source, outcome_class",
            "target, task_type, COALESCE(server_version, ''), source, outcome_class",
        ),
        (
            "rollup_schemas",
            "target, task_type, schema_hash, source, outcome_class",
            "target, task_type, COALESCE(schema_hash, ''), source, outcome_class",
        ),
    ];
    for (table, keys, raw_keys) in checks {
        let from_rollup = fetch_pairs(t, &format!("SELECT {keys}, n FROM {table}")).await;
        let from_raw = fetch_pairs(
            t,
            &format!("SELECT {raw_keys}, COUNT(*) FROM {raw} AS i GROUP BY {raw_keys}"),
        )
        .await;
        assert_eq!(
            from_rollup, from_raw,
            "{table} disagrees with the raw interactions"
        );
    }
    // Independence and the cap: rated organic rows per target and network, the
    // contributors behind them, and each untrusted network's rated organic rows of its
    // latest day (capped ones included: that is what the cap counts).
    let rated = "source = 'organic' AND outcome_class IN ('success', 'partial', 'failure')";
    let independence: &[(&str, String)] = &[
        (
            "SELECT target, network, n FROM rollup_networks WHERE n > 0",
            format!("SELECT target, network, COUNT(*) FROM {raw} AS i WHERE {rated} AND network IS NOT NULL GROUP BY target, network"),
        ),
        (
            "SELECT target, contributor, 1 FROM rollup_contributors",
            format!("SELECT target, COALESCE(agent_id, node_id), 1 FROM {raw} AS i WHERE {rated} AND (agent_id IS NOT NULL OR node_id IS NOT NULL) GROUP BY target, COALESCE(agent_id, node_id)"),
        ),
        (
            "SELECT target, server_version, network, 1 FROM rollup_version_networks",
            format!("SELECT target, server_version, network, 1 FROM {raw} AS i WHERE {rated} AND server_version IS NOT NULL AND network IS NOT NULL GROUP BY target, server_version, network"),
        ),
        (
            "SELECT target, kind, value, first_seen FROM rollup_firsts WHERE kind = 'server_version'",
            format!("SELECT target, 'server_version', server_version, MIN(created_at) FROM {raw} AS i WHERE source = 'organic' AND server_version IS NOT NULL GROUP BY target, server_version"),
        ),
        (
            "SELECT target, kind, value, first_seen FROM rollup_firsts WHERE kind = 'schema_hash'",
            format!("SELECT target, 'schema_hash', schema_hash, MIN(created_at) FROM {raw} AS i WHERE source = 'organic' AND schema_hash IS NOT NULL GROUP BY target, schema_hash"),
        ),
        (
            "SELECT target, network, day, day_n FROM rollup_networks WHERE day_n > 0",
            format!("SELECT i.target, i.network, i.day, COUNT(*) FROM {raw} AS i JOIN rollup_networks r ON r.target = i.target AND r.network = i.network AND r.day = i.day WHERE i.source = 'organic' AND i.outcome_class IN ('success', 'partial', 'failure', 'capped') AND i.trusted = 0 GROUP BY i.target, i.network, i.day"),
        ),
    ];
    for (stored, raw) in independence {
        assert_eq!(
            fetch_pairs(t, stored).await,
            fetch_pairs(t, raw).await,
            "{stored} disagrees with the raw interactions"
        );
    }
    let nodes = fetch_pairs(t, "SELECT node_id, interactions FROM nodes").await;
    let raw_nodes = fetch_pairs(
        t,
        "SELECT node_id, COUNT(*) FROM interactions WHERE node_id IS NOT NULL GROUP BY node_id",
    )
    .await;
    assert_eq!(nodes, raw_nodes, "nodes disagree with the raw interactions");
    for (table, key) in [("node_days", "day"), ("node_targets", "target")] {
        let pairs = fetch_pairs(
            t,
            &format!("SELECT node_id, {key}, COUNT(*) FROM {table} GROUP BY node_id, {key}"),
        )
        .await;
        let raw = fetch_pairs(
            t,
            &format!(
                "SELECT node_id, {key}, 1 FROM interactions WHERE node_id IS NOT NULL GROUP BY node_id, {key}"
            ),
        )
        .await;
        assert_eq!(pairs, raw, "{table} disagrees with the raw interactions");
    }
    let tel = fetch_pairs(
        t,
        "SELECT subject, CAST(SUM(n) AS BIGINT) FROM telemetry_rollups WHERE subject_kind = 'host' GROUP BY subject",
    )
    .await;
    let raw_tel = fetch_pairs(t, "SELECT host, COUNT(*) FROM observations GROUP BY host").await;
    assert_eq!(
        tel, raw_tel,
        "telemetry rollups disagree with the raw observations"
    );
    assert_latency_matches_raw(t).await;
}

/// `rollup_latency` against the rated organic raw rows, bucketed by the core.
pub async fn assert_latency_matches_raw(t: &TestDb) {
    use std::collections::BTreeMap;
    let raw: Vec<(String, String, f64)> = t
        .rows(&format!(
            "SELECT target, task_type, latency_ms FROM {} AS i WHERE source = 'organic' \
             AND outcome_class IN ('success', 'partial', 'failure') AND latency_ms IS NOT NULL",
            raw_interactions(t)
        ))
        .await;
    let mut expected: BTreeMap<(String, String, i64), (i64, f64)> = BTreeMap::new();
    for (target, task, ms) in raw {
        let bucket = lowdown_core::telemetry::latency_bucket(ms) as i64;
        let e = expected.entry((target, task, bucket)).or_default();
        e.0 += 1;
        e.1 += ms;
    }
    let rows: Vec<(String, String, i64, i64, f64)> = t
        .rows("SELECT target, task_type, bucket, n, sum_ms FROM rollup_latency")
        .await;
    let stored: BTreeMap<_, _> = rows
        .into_iter()
        .map(|(target, task, bucket, n, sum)| ((target, task, bucket), (n, sum)))
        .collect();
    assert_eq!(
        stored.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "rollup_latency has other rows than the raw interactions"
    );
    for (k, (n, sum)) in &expected {
        let (sn, ssum) = stored[k];
        assert_eq!(sn, *n, "{k:?}");
        assert!(
            (ssum - sum).abs() < 1e-6 * sum.max(1.0),
            "{k:?}: {ssum} vs {sum}"
        );
    }
}

async fn fetch_pairs(t: &TestDb, sql: &str) -> std::collections::BTreeMap<String, i64> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_all(&t.check.pool)
        .await
        .unwrap();
    rows.iter()
        .map(|r| {
            let cols = r.len();
            let key: Vec<String> = (0..cols - 1)
                .map(|i| r.try_get::<String, _>(i).unwrap())
                .collect();
            (key.join("|"), r.try_get::<i64, _>(cols - 1).unwrap())
        })
        .collect()
}

/// Runs `migrations` (version, name, SQL), the ones an older server shipped, on the database
/// at `url` as that server did, and returns the pool.
pub async fn migrated_as_before(
    url: &str,
    migrations: &[(i64, &'static str, &'static str)],
) -> sqlx::AnyPool {
    use sqlx::migrate::{Migration, MigrationType, Migrator};
    let migrations = migrations
        .iter()
        .map(|&(v, name, sql)| {
            Migration::new(
                v,
                name.into(),
                MigrationType::Simple,
                sqlx::SqlSafeStr::into_sql_str(sql),
                false,
            )
        })
        .collect();
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    Migrator::with_migrations(migrations)
        .run(&pool)
        .await
        .unwrap();
    pool
}

/// The API of a state on a fresh `127.0.0.1` port, as `lowdown-server serve` runs it:
/// [`Served::stop`] shuts it down gracefully; dropping it stops it without waiting.
pub struct Served {
    pub addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Served {
    pub async fn start(state: AppState) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(lowdown_server::serve(listener, state, async move {
            let _ = rx.await;
        }));
        Served {
            addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Stops the server and waits (at most 20 s) until it has finished cleanly.
    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        let task = self.task.take().unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(20), task)
            .await
            .expect("shutdown in time")
            .unwrap()
            .unwrap();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}
