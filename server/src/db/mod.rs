//! Storage: one `sqlx::Any` pool over SQLite or PostgreSQL, one set of migrations (a few
//! written once per engine, see [`ENGINE_MIGRATIONS`]) and one set of runtime-checked
//! queries for both.
//!
//! Portability rules kept by every query here: `$n` placeholders (SQLite accepts them too),
//! only TEXT/BIGINT/DOUBLE PRECISION values, `ON CONFLICT ... DO NOTHING/UPDATE` with
//! `excluded`, and `CAST(SUM(..) AS BIGINT)` because PostgreSQL sums BIGINT to NUMERIC,
//! which the `Any` driver cannot decode.

use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyPool, AssertSqlSafe, Executor, Row};

pub mod agents;
mod batch;
mod cap;
pub mod catalog;
mod checkpoint;
pub mod daily;
pub mod export;
pub mod gateway;
pub mod ingest;
mod known;
pub mod latency;
pub mod lease;
pub mod leases;
pub mod lookup;
mod meta;
pub mod nodes;
pub mod observations;
pub mod packages;
pub mod provider;
pub mod quota;
pub mod registry_view;
pub mod reputation;
pub mod retention;
mod roller;
mod rollup;
mod rollups_file;
pub mod scanner;
pub mod submissions;
pub mod telemetry;
pub mod top;
pub(crate) mod upsert;

/// Which database engine a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite (the default; one file, WAL).
    Sqlite,
    /// PostgreSQL (for shared deployments).
    Postgres,
}

/// A connection pool plus what the server needs to know about the engine behind it.
#[derive(Clone)]
pub struct Db {
    /// The pool every query runs on.
    pub pool: AnyPool,
    /// The engine behind the pool.
    pub backend: Backend,
    /// SQLite has one writer at a time per file, so the server keeps one dedicated writer
    /// connection for the main file (taken from the pool on first use) behind this lock:
    /// writers queue here instead of in SQLite's busy loop, and skip the pool's
    /// acquire/return round trip. The roll-ups file has its own ([`roller`]).
    /// PostgreSQL writers take pool connections and run concurrently.
    sqlite_writer: Arc<tokio::sync::Mutex<Option<sqlx::AnyConnection>>>,
    /// Ingest batches waiting for a writer (group commit, see [`ingest`]).
    pub(crate) ingest_queue: Arc<ingest::Queue>,
    /// The deployment's secret keying rate-limit callers (`server_meta`), read at open.
    caller_secret: Arc<[u8]>,
    /// Registrations this process has seen committed (targets, node days, node targets),
    /// so ingest skips writing them again.
    pub(crate) known: Arc<known::Known>,
    /// SQLite: the background WAL checkpoints.
    checkpointer: Option<Arc<checkpoint::Checkpointer>>,
    /// Rows committed and not yet rolled up, and the roller that rolls them up in
    /// parallel with ingest (see [`roller`]; on SQLite into [`rollups_file`]).
    pub(crate) roller: Option<Arc<roller::Roller>>,
}

/// The migrations, embedded so the binary needs no files at run time.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "init", include_str!("../../migrations/0001_init.sql")),
    (
        2,
        "rate_limits",
        include_str!("../../migrations/0002_rate_limits.sql"),
    ),
    (3, "api", include_str!("../../migrations/0003_api.sql")),
    (
        4,
        "scanner",
        include_str!("../../migrations/0004_scanner.sql"),
    ),
    (
        5,
        "gateway",
        include_str!("../../migrations/0005_gateway.sql"),
    ),
    (
        6,
        "packages",
        include_str!("../../migrations/0006_packages.sql"),
    ),
    (
        7,
        "provider",
        include_str!("../../migrations/0007_provider.sql"),
    ),
    (
        8,
        "tools_has_more",
        include_str!("../../migrations/0008_tools_has_more.sql"),
    ),
    (
        16,
        "mirror_path",
        include_str!("../../migrations/0016_mirror_path.sql"),
    ),
    (
        17,
        "refused_calls",
        include_str!("../../migrations/0017_refused_calls.sql"),
    ),
    (
        18,
        "service_rates",
        include_str!("../../migrations/0018_service_rates.sql"),
    ),
    (
        20,
        "registry_documents",
        include_str!("../../migrations/0020_registry_documents.sql"),
    ),
];

/// Migrations written once per engine, for storage only one of them has (SQLite's `WITHOUT
/// ROWID`, PostgreSQL's fillfactor): (version, name, SQLite, PostgreSQL). Both leave the
/// same tables, columns and keys.
const ENGINE_MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    (
        9,
        "rollup_storage",
        include_str!("../../migrations/0009_rollup_storage.sqlite.sql"),
        include_str!("../../migrations/0009_rollup_storage.postgres.sql"),
    ),
    (
        10,
        "rollup_watermark",
        include_str!("../../migrations/0010_rollup_watermark.sqlite.sql"),
        include_str!("../../migrations/0010_rollup_watermark.postgres.sql"),
    ),
    (
        11,
        "independence",
        include_str!("../../migrations/0011_independence.sqlite.sql"),
        include_str!("../../migrations/0011_independence.postgres.sql"),
    ),
    (
        12,
        "provider_checks",
        include_str!("../../migrations/0012_provider_checks.sqlite.sql"),
        include_str!("../../migrations/0012_provider_checks.postgres.sql"),
    ),
    (
        13,
        "rollups_file",
        include_str!("../../migrations/0013_rollups_file.sqlite.sql"),
        include_str!("../../migrations/0013_rollups_file.postgres.sql"),
    ),
    (
        14,
        "job_leases",
        include_str!("../../migrations/0014_job_leases.sqlite.sql"),
        include_str!("../../migrations/0014_job_leases.postgres.sql"),
    ),
    (
        15,
        "retention",
        include_str!("../../migrations/0015_retention.sqlite.sql"),
        include_str!("../../migrations/0015_retention.postgres.sql"),
    ),
    (
        19,
        "pending_rows",
        include_str!("../../migrations/0019_pending_rows.sqlite.sql"),
        include_str!("../../migrations/0019_pending_rows.postgres.sql"),
    ),
    (
        21,
        "change_feed",
        include_str!("../../migrations/0021_change_feed.sqlite.sql"),
        include_str!("../../migrations/0021_change_feed.postgres.sql"),
    ),
];

/// The migrations through `version`, as SQLite (`sqlite`) or PostgreSQL runs them:
/// (version, name, SQL), in order. Upgrade tests build what an older server left with them.
pub fn migrations_through(sqlite: bool, version: i64) -> Vec<(i64, &'static str, &'static str)> {
    let engine = ENGINE_MIGRATIONS
        .iter()
        .map(|&(v, name, lite, pg)| (v, name, if sqlite { lite } else { pg }));
    let mut out: Vec<_> = MIGRATIONS
        .iter()
        .copied()
        .chain(engine)
        .filter(|m| m.0 <= version)
        .collect();
    out.sort_by_key(|m| m.0);
    out
}

/// The SQLite roll-ups file beside the database file `path` (see [`rollups_file`]).
pub fn rollups_path(path: &str) -> String {
    rollups_file::path_beside(path)
}

/// What storage can fail with. `db` knows nothing of HTTP: the error module maps this
/// once into the answer (`impl From<DbError> for DbError`).
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The URL names neither `sqlite:` nor `postgres:`/`postgresql:`.
    #[error("unsupported database URL (expected sqlite:// or postgres://)")]
    UnsupportedUrl,
    /// Connecting failed.
    #[error("cannot open the database: {message}")]
    Connect {
        /// The driver's message.
        message: String,
    },
    /// Applying migrations failed.
    #[error("cannot apply migrations: {message}")]
    Migrate {
        /// The driver's message.
        message: String,
    },
    /// A write drew on a quota with nothing left; nothing was written.
    #[error(transparent)]
    RateLimited(#[from] OverQuota),
    /// A query or a stored value failed (the cause, for the log only).
    #[error("{detail}")]
    Internal {
        /// The cause.
        detail: String,
    },
}

/// A quota with nothing left for a request: what it counts, and when to retry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate limit exceeded: {limit} {what} per hour for this {scope}; retry after {retry_after_secs} s")]
pub struct OverQuota {
    /// What is counted: `observations` or `registrations`.
    pub what: String,
    /// `agent key` or `IP address`.
    pub scope: String,
    /// The hourly limit that applies.
    pub limit: u32,
    /// Seconds until the window frees enough capacity.
    pub retry_after_secs: u64,
}

impl DbError {
    /// A failure whose cause is logged, never answered.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        DbError::Internal {
            detail: detail.to_string(),
        }
    }
}

impl From<sqlx::Error> for DbError {
    fn from(e: sqlx::Error) -> Self {
        DbError::internal(format!("database: {e}"))
    }
}

/// The result of every storage function.
pub type DbResult<T> = Result<T, DbError>;

impl Db {
    /// Opens `url` (`sqlite://PATH?mode=rwc` or `postgres://...`) and applies migrations.
    pub async fn open(url: &str, max_connections: u32) -> Result<Db, DbError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(DbError::UnsupportedUrl);
        };
        let mut options = AnyPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(10))
            // Broken connections surface as errors (and a 500) on use; pinging on every
            // acquire would add a round trip to every request.
            .test_before_acquire(false);
        if backend == Backend::Sqlite {
            crate::files::prepare_rollups(url).map_err(|e| DbError::internal(e.to_string()))?;
            options = options.after_connect(|conn, _meta| {
                Box::pin(async move {
                    conn.execute("PRAGMA journal_mode = WAL").await?;
                    conn.execute("PRAGMA synchronous = NORMAL").await?;
                    conn.execute("PRAGMA busy_timeout = 10000").await?;
                    // Rollups and their indexes are the hot set: keep them in memory
                    // (64 MiB page cache, reads through mmap) instead of re-reading pages
                    // with a syscall each.
                    conn.execute("PRAGMA cache_size = -65536").await?;
                    conn.execute("PRAGMA mmap_size = 1073741824").await?;
                    conn.execute("PRAGMA temp_store = MEMORY").await?;
                    // Checkpoints run in the background (see `checkpoint`); a commit
                    // checkpoints on its own only if that falls far behind.
                    conn.execute(AssertSqlSafe(format!(
                        "PRAGMA wal_autocheckpoint = {}",
                        checkpoint::FALLBACK_PAGES
                    )))
                    .await?;
                    conn.execute(AssertSqlSafe(format!(
                        "PRAGMA journal_size_limit = {}",
                        checkpoint::WAL_KEPT_BYTES
                    )))
                    .await?;
                    rollups_file::attach(conn).await
                })
            });
        }
        let pool = options.connect(url).await.map_err(|e| DbError::Connect {
            message: e.to_string(),
        })?;
        let mut db = Db {
            pool,
            backend,
            sqlite_writer: Arc::new(tokio::sync::Mutex::new(None)),
            ingest_queue: Arc::default(),
            caller_secret: Arc::from(Vec::new()),
            known: Arc::default(),
            checkpointer: None,
            roller: None,
        };
        db.migrate().await?;
        let after_migrations = |e: DbError| DbError::Migrate {
            message: e.to_string(),
        };
        db.caller_secret = meta::caller_secret(&db.pool)
            .await
            .map_err(after_migrations)?
            .into();
        meta::backfill(&db, crate::clock::now_ms())
            .await
            .map_err(after_migrations)?;
        if backend == Backend::Sqlite {
            db.checkpointer = Some(Arc::new(checkpoint::Checkpointer::start(db.pool.clone())));
            if rollups_file::ensure(&db.pool)
                .await
                .map_err(after_migrations)?
            {
                // On a pool connection: the writer's is taken at the first write.
                let mut tx = db.pool.begin().await?;
                rollups_file::register_targets(&mut tx)
                    .await
                    .map_err(after_migrations)?;
                tx.commit().await?;
            }
        }
        let r = Arc::new(roller::Roller::default());
        db.roller = Some(r.clone());
        // Rows a process stopped before rolling up (all of them in a file made again).
        r.roll(&db, 0).await.map_err(after_migrations)?;
        r.start(db.clone());
        Ok(db)
    }

    /// Rolls up every raw row the rollups do not include yet, whichever process stored
    /// it; returns how many.
    pub async fn roll_up(&self) -> DbResult<u64> {
        match &self.roller {
            Some(r) => r.roll(self, 0).await,
            None => Ok(0),
        }
    }

    /// Brings the rollups up to every record committed before the call (they follow the
    /// raw rows, see [`roller`]); reads of the rollups call it first. Free when nothing
    /// waits.
    pub async fn settle(&self) -> DbResult<()> {
        match &self.roller {
            Some(r) => r.settle(self).await,
            None => Ok(()),
        }
    }

    /// The secret that keys rate-limit callers (shared by every server on this database).
    pub fn caller_secret(&self) -> &[u8] {
        &self.caller_secret
    }

    async fn migrate(&self) -> Result<(), DbError> {
        let mut migrations: Vec<Migration> =
            migrations_through(self.backend == Backend::Sqlite, i64::MAX)
                .into_iter()
                .map(|(version, name, sql)| {
                    Migration::new(
                        version,
                        name.into(),
                        MigrationType::Simple,
                        sqlx::SqlSafeStr::into_sql_str(sql),
                        false,
                    )
                })
                .collect();
        migrations.sort_by_key(|m| m.version);
        let migrator = Migrator::with_migrations(migrations);
        migrator
            .run(&self.pool)
            .await
            .map_err(|e| DbError::Migrate {
                message: e.to_string(),
            })
    }

    /// Runs `f` inside one write transaction: committed when it returns `Ok`, rolled back
    /// (nothing written) when it returns `Err` or the future is dropped.
    pub async fn write<T, F>(&self, f: F) -> DbResult<T>
    where
        F: for<'c> FnOnce(
            &'c mut sqlx::AnyConnection,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = DbResult<T>> + Send + 'c>,
        >,
    {
        if self.backend == Backend::Postgres {
            let mut tx = self.pool.begin().await?;
            let out = f(&mut tx).await?;
            tx.commit().await?;
            return Ok(out);
        }
        let mut writer = self.sqlite_writer.lock().await;
        self.write_locked(&mut writer, f).await
    }

    /// Takes the SQLite writer lock (for group commit, see [`ingest`]).
    pub(crate) async fn lock_sqlite_writer(
        &self,
    ) -> tokio::sync::MutexGuard<'_, Option<sqlx::AnyConnection>> {
        self.sqlite_writer.lock().await
    }

    /// [`Db::write`] on SQLite on the connection in `writer` (the writer's, with its lock
    /// held, or the roller's), taken from the pool when there is none.
    pub(crate) async fn write_locked<T, F>(
        &self,
        writer: &mut Option<sqlx::AnyConnection>,
        f: F,
    ) -> DbResult<T>
    where
        F: for<'c> FnOnce(
            &'c mut sqlx::AnyConnection,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = DbResult<T>> + Send + 'c>,
        >,
    {
        let mut conn = match writer.take() {
            Some(c) => c,
            None => self.pool.acquire().await?.detach(),
        };
        let result = async {
            let mut tx = sqlx::Connection::begin(&mut conn).await?;
            let out = f(&mut tx).await?;
            tx.commit().await?;
            Ok(out)
        }
        .await;
        // Keep the connection unless the database failed under it; a failed one is
        // replaced on the next write.
        if !matches!(result, Err(DbError::Internal { .. })) {
            *writer = Some(conn);
        }
        result
    }

    /// One round trip to the database (`GET /healthz`).
    pub async fn ping(&self) -> DbResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Closes the pool, waiting for connections to be returned.
    pub async fn close(&self) {
        if let Some(r) = &self.roller {
            r.stop();
            // A pool a clone of this handle closed already has nothing to roll with.
            if !self.pool.is_closed() {
                if let Err(e) = self.roll_up().await {
                    // Rolled up when the database is next opened.
                    tracing::warn!(error = %e, "rolling up interactions at close failed");
                }
            }
            r.close().await;
        }
        if let Some(c) = &self.checkpointer {
            c.stop();
        }
        if let Some(conn) = self.sqlite_writer.lock().await.take() {
            let _ = sqlx::Connection::close(conn).await;
        }
        self.pool.close().await;
    }
}

/// Reads a BIGINT column (by name) as `u64` (negative values, which never occur, read as 0).
pub(crate) fn get_u64<I: sqlx::ColumnIndex<AnyRow>>(
    row: &AnyRow,
    col: I,
) -> Result<u64, sqlx::Error> {
    let v: i64 = row.try_get(col)?;
    Ok(u64::try_from(v).unwrap_or(0))
}

/// Makes a fresh random identifier: `prefix` + `2 * bytes` lowercase hex digits, from the
/// operating system's random source.
pub fn random_id(prefix: &str, bytes: usize) -> DbResult<String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| DbError::internal(format!("getrandom: {e}")))?;
    Ok(format!("{prefix}{}", hex::encode(buf)))
}
