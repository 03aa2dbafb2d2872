//! SQLite: the rollups follow the raw rows behind a watermark.
//!
//! An ingest transaction on SQLite writes only the raw rows. Rolling them up apart, many
//! thousands at a time, is what lets one writer thread keep up: a record's rollup rows
//! lie on pages of their own (on a busy network almost every record touches rows no
//! other record in its batch touches), so rolling 400 records at once dirtied about a
//! page per rollup row, while a roll of tens of thousands shares most pages and sums
//! repeated keys first.
//!
//! `rollup_watermark.rolled` (migration 0010) is the last `interactions` rowid the rollups
//! include. A roll takes the rows after it in rowid order (SQLite has one writer, so rowid
//! order is commit order, and committed raw rows are never deleted), first applies the
//! per-network cap to them in rowid order ([`super::cap`], the definition PostgreSQL applies
//! at ingest), then adds them to every rollup with
//! SQLite's own `GROUP BY` (no row leaves the database; SQL generated from
//! [`super::rollup::RULES`], which PostgreSQL runs in Rust) and moves the watermark in the same transaction: every row
//! is counted exactly once, whichever process rolls it and whenever it crashes.
//!
//! When rolls run:
//! - in the ingest group that brings [`ROLL_ROWS`] or more rows waiting, after its clients
//!   are answered (the writer is busy anyway, and the next groups queue behind it);
//! - [`ROLL_AFTER`] after a quiet ingest, from a background task;
//! - before a read of the rollups, when this process committed rows they do not include
//!   yet ([`super::Db::settle`]): an answer counts every record acknowledged before it
//!   was asked, as on PostgreSQL. Reads roll at most every [`READ_GAP`], so a read may
//!   wait that long (plus the roll) while ingest runs without pause;
//! - when the database is opened (rows a stopped process had not rolled yet) and closed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use sqlx::{AnyConnection, AssertSqlSafe, Row};

use super::rollup::{add_targets, RULES};
use super::Db;
use crate::db::DbResult;

/// Waiting rows that make the ingest group which brought them roll.
pub(crate) const ROLL_ROWS: u64 = 30_000;

/// How long rows wait when no more arrive.
pub(crate) const ROLL_AFTER: Duration = Duration::from_millis(250);

/// Least time between two rolls that reads ask for. Under steady ingest a roll per read
/// would shrink rolls back to a few batches each (one reader asking without pause halved
/// ingest); a read waits at most this long for its roll instead.
pub(crate) const READ_GAP: Duration = Duration::from_millis(100);

/// Most rows one roll transaction reads (bounds its memory; a backlog takes several).
const CHUNK: i64 = 50_000;

/// What this process committed and rolled up, and the background task.
pub(crate) struct Roller {
    /// Rows this process's ingest committed, ever.
    committed: AtomicU64,
    /// How many of them the rollups include.
    rolled: AtomicU64,
    /// When the last roll ended.
    last_roll: std::sync::Mutex<Instant>,
    arrived: tokio::sync::Notify,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Default for Roller {
    fn default() -> Roller {
        Roller {
            committed: AtomicU64::new(0),
            rolled: AtomicU64::new(0),
            // As if the last roll were long past: the first read rolls at once.
            last_roll: std::sync::Mutex::new(
                Instant::now()
                    .checked_sub(READ_GAP)
                    .unwrap_or_else(Instant::now),
            ),
            arrived: tokio::sync::Notify::new(),
            task: std::sync::Mutex::default(),
        }
    }
}

impl Roller {
    /// Counts `n` rows an ingest transaction committed (called with the writer held);
    /// true when [`ROLL_ROWS`] wait.
    pub(crate) fn committed(&self, n: u64) -> bool {
        if n == 0 {
            return false;
        }
        let waiting = self.committed.fetch_add(n, Ordering::AcqRel) - self.rolled();
        if waiting == 0 {
            self.arrived.notify_one();
        }
        waiting + n >= ROLL_ROWS
    }

    fn rolled(&self) -> u64 {
        self.rolled.load(Ordering::Acquire)
    }

    /// Notes that the rollups include everything committed so far (call with the writer
    /// held, right after a roll).
    fn rolled_all(&self) {
        self.rolled
            .store(self.committed.load(Ordering::Acquire), Ordering::Release);
        *self.last_roll.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// Waits until the rollups include every row this process committed before the call:
    /// at once when they do, else in a roll at least [`READ_GAP`] after the last one.
    pub(crate) async fn settle(&self, db: &Db) -> DbResult<()> {
        let need = self.committed.load(Ordering::Acquire);
        if self.rolled() >= need {
            return Ok(());
        }
        let next = *self.last_roll.lock().unwrap_or_else(|p| p.into_inner()) + READ_GAP;
        tokio::time::sleep_until(next.into()).await;
        if self.rolled() >= need {
            return Ok(());
        }
        let mut writer = db.lock_sqlite_writer().await;
        if self.rolled() < need {
            roll_all(db, &mut writer).await?;
        }
        Ok(())
    }

    /// Starts the background task rolling [`ROLL_AFTER`] after rows arrive.
    pub(crate) fn start(self: &Arc<Self>, db: Db) {
        let roller = self.clone();
        let handle = tokio::spawn(async move {
            loop {
                roller.arrived.notified().await;
                tokio::time::sleep(ROLL_AFTER).await;
                if db.pool.is_closed() {
                    return;
                }
                if let Err(e) = roller.settle(&db).await {
                    // The next read or ingest group tries again.
                    tracing::warn!(error = %e, "rolling up interactions failed");
                }
            }
        });
        *self.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    }

    /// Stops the background task.
    pub(crate) fn stop(&self) {
        if let Some(t) = self.task.lock().unwrap_or_else(|p| p.into_inner()).take() {
            t.abort();
        }
    }
}

/// Rolls up every row after the watermark, with the writer lock held; returns how many.
pub(crate) async fn roll_all(db: &Db, writer: &mut Option<AnyConnection>) -> DbResult<u64> {
    let mut total = 0;
    loop {
        let n = db.write_locked(writer, |c| Box::pin(roll_chunk(c))).await?;
        total += n;
        if n < CHUNK as u64 {
            break;
        }
    }
    if let Some(r) = &db.roller {
        // Only the writer commits rows, and it is held: nothing arrived meanwhile.
        r.rolled_all();
    }
    Ok(total)
}

/// The rows after the watermark, at most [`CHUNK`]: `WHERE rowid > $1 AND rowid <= $2`.
const RANGE: &str = "FROM interactions WHERE rowid > $1 AND rowid <= $2";

/// The statements that add the rows in [`RANGE`] to each rollup, aggregated by SQLite
/// itself (no row leaves the database), generated from [`RULES`], the definition
/// PostgreSQL's ingest adds in Rust.
static ROLL_SQL: LazyLock<Vec<String>> =
    LazyLock::new(|| RULES.iter().map(|r| r.roll_sql(RANGE)).collect());

/// Rolls up to [`CHUNK`] rows after the watermark and moves it past them.
async fn roll_chunk(conn: &mut AnyConnection) -> DbResult<u64> {
    // A write first, so the transaction holds SQLite's write lock before it reads.
    let from: i64 =
        sqlx::query("UPDATE rollup_watermark SET rolled = rolled WHERE id = 1 RETURNING rolled")
            .fetch_one(&mut *conn)
            .await?
            .try_get("rolled")?;
    let span = sqlx::query(
        "SELECT COUNT(*) AS n, MAX(rowid) AS last FROM \
         (SELECT rowid FROM interactions WHERE rowid > $1 ORDER BY rowid LIMIT $2)",
    )
    .bind(from)
    .bind(CHUNK)
    .fetch_one(&mut *conn)
    .await?;
    let (n, to): (i64, Option<i64>) = (span.try_get("n")?, span.try_get("last")?);
    let Some(to) = to else {
        return Ok(0);
    };
    // New targets: their lookup keys are the core's, computed here.
    let new = sqlx::query(AssertSqlSafe(format!(
        "SELECT target, MIN(created_at) AS first_seen {RANGE} \
         AND NOT EXISTS (SELECT 1 FROM targets t WHERE t.target = interactions.target) GROUP BY target"
    )))
    .bind(from)
    .bind(to)
    .fetch_all(&mut *conn)
    .await?;
    let mut targets = Vec::with_capacity(new.len());
    for row in new {
        targets.push((
            row.try_get::<String, _>("target")?,
            row.try_get::<i64, _>("first_seen")?,
        ));
    }
    add_targets(conn, targets.iter().map(|(t, at)| (t.as_str(), *at))).await?;
    // The cap first: the rollups below count capped rows in their own class.
    super::cap::cap_rows(conn, from, to).await?;
    for sql in ROLL_SQL.iter() {
        sqlx::query(AssertSqlSafe(sql.as_str()))
            .bind(from)
            .bind(to)
            .execute(&mut *conn)
            .await?;
    }
    sqlx::query("UPDATE rollup_watermark SET rolled = $1 WHERE id = 1")
        .bind(to)
        .execute(&mut *conn)
        .await?;
    Ok(n as u64)
}
