//! The rollups follow the raw rows, written by a roller of their own in parallel with
//! ingest: an ingest transaction writes only the raw rows (and their quotas), and rolling
//! them up apart, many thousands at a time, shares rollup pages between records, sums
//! repeated keys first and leaves ingest nothing to wait for but its own rows.
//!
//! **SQLite.** The rollups live in a second file ([`super::rollups_file`]), so the roll never
//! writes the main file: the roller's connection reads the raw rows in a snapshot of the
//! main file and writes only the second one, while the ingest writer, on its own connection
//! and thread, keeps writing the main file (SQLite locks each attached file apart; a
//! transaction that begins DEFERRED locks for writing only the files it writes).
//! `rollup_watermark.rolled` is the last `interactions` rowid the rollups include. A roll
//! takes the rows after it in rowid order (SQLite has one writer per file, so rowid order is
//! commit order, and committed raw rows are never deleted), applies the per-network cap to
//! them in rowid order ([`super::cap`]; its marks stay in the second file, and when some row
//! is capped the rules read a temporary copy of the rows with the class applied), then adds
//! them to every rollup with SQLite's own `GROUP BY` (SQL generated from
//! [`super::rollup::RULES`]) and moves the watermark in the same transaction.
//!
//! **PostgreSQL.** Ingest writes the raw rows to `interactions_pending`. A roll, holding a
//! transaction-scoped advisory lock so that one runs at a time over every server on the
//! database, deletes every committed row there into a temporary table (rows of
//! transactions still running are left for the next roll), applies the cap to them in
//! arrival order, inserts them into `interactions` and adds them to every rollup with the
//! same generated SQL, all in one transaction.
//!
//! Either way every row is counted exactly once, whichever process rolls it and whenever
//! one crashes.
//!
//! Ingest waits for the roller when more than [`MOST_WAITING`] rows wait, so a roller
//! slower than ingest cannot leave a backlog that grows for as long as ingest lasts (answers
//! wait for it).
//!
//! When rolls run (one at a time per process, on the roller's connection behind its lock;
//! a roll takes the rows committed when it starts):
//! - from a background task, woken by ingest: at once when [`ROLL_ROWS`] or more rows wait,
//!   else after ingest has been quiet for [`ROLL_AFTER`];
//! - before a read of the rollups ([`super::Db::settle`]), when this process committed rows
//!   they do not include yet, and on PostgreSQL also when another server's rows wait: an
//!   answer counts every record acknowledged before it was asked (on SQLite, by this
//!   process; another process's roll within [`ROLL_AT_MOST_AFTER`]). Reads roll at most
//!   every [`READ_GAP`], so a read may wait that long (plus the roll) while ingest runs
//!   without pause;
//! - when the database is opened (rows a stopped process had not rolled yet; everything when
//!   SQLite's second file was made again) and closed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use sqlx::{AnyConnection, AssertSqlSafe, Row};

use super::cap;
use super::rollup::RULES;
use super::{Backend, Db};
use crate::db::DbResult;

/// Waiting rows that make the roller roll at once.
pub(crate) const ROLL_ROWS: u64 = 30_000;

/// How long ingest stays quiet before the rows waiting, fewer than [`ROLL_ROWS`], roll.
pub(crate) const ROLL_AFTER: Duration = Duration::from_millis(250);

/// Least time between two rolls that reads ask for. Under steady ingest a roll per read
/// would shrink rolls to a few batches each; a read waits at most this long instead.
pub(crate) const READ_GAP: Duration = Duration::from_millis(100);

/// Most rows one roll transaction reads (bounds its memory; a backlog takes several).
const CHUNK: i64 = 50_000;

/// Rows waiting past which ingest waits for the roller ([`Roller::keep_up`]): past two rolls'
/// worth the roller is falling behind, and a backlog left to grow would make answers (which
/// wait for it) ever slower. Sustained ingest then runs at the roller's rate.
const MOST_WAITING: u64 = 2 * ROLL_ROWS;

/// Longest a row waits for a roll while ingest goes on.
const ROLL_AT_MOST_AFTER: Duration = Duration::from_secs(1);

/// PostgreSQL: how long a check that no other server's rows wait holds (the reads of one
/// answer share it; a record another server acknowledged this recently may be missed).
const OTHERS_CHECKED_FOR: Duration = Duration::from_millis(2);

/// Longest ingest waits for the roller: a roller that fails (its errors are logged) must
/// not stop ingest, which then does not wait at all until a roll succeeds.
const KEEP_UP_AT_MOST: Duration = Duration::from_secs(10);

/// What this process committed and rolled up, the roller's connection and its task.
pub(crate) struct Roller {
    /// Rows this process's ingest committed, ever.
    committed: AtomicU64,
    /// How many of them the rollups include.
    rolled: AtomicU64,
    /// When the last roll ended.
    last_roll: std::sync::Mutex<Instant>,
    /// When ingest last committed rows.
    last_commit: std::sync::Mutex<Instant>,
    /// The roller's own connection (taken from the pool on first use), behind its own lock.
    conn: tokio::sync::Mutex<Option<AnyConnection>>,
    /// Woken when rows start waiting.
    arrived: tokio::sync::Notify,
    /// Woken when [`ROLL_ROWS`] wait.
    full: tokio::sync::Notify,
    /// Woken (all waiters) when a roll ends, or fails.
    progress: tokio::sync::Notify,
    /// PostgreSQL: when a check or a roll last found no other server's rows waiting.
    others_clear: std::sync::Mutex<Option<Instant>>,
    /// The last roll failed: ingest does not wait for the roller ([`Roller::keep_up`]).
    failing: std::sync::atomic::AtomicBool,
    /// When the oldest row now waiting arrived.
    first_waiting: std::sync::Mutex<Option<Instant>>,
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
            last_commit: std::sync::Mutex::new(Instant::now()),
            conn: tokio::sync::Mutex::default(),
            arrived: tokio::sync::Notify::new(),
            full: tokio::sync::Notify::new(),
            progress: tokio::sync::Notify::new(),
            failing: std::sync::atomic::AtomicBool::new(false),
            others_clear: std::sync::Mutex::new(None),
            first_waiting: std::sync::Mutex::new(None),
            task: std::sync::Mutex::default(),
        }
    }
}

impl Roller {
    /// Counts `n` rows an ingest transaction committed, and wakes the roller.
    pub(crate) fn committed(&self, n: u64) {
        if n == 0 {
            return;
        }
        let now = Instant::now();
        *self.last_commit.lock().unwrap_or_else(|p| p.into_inner()) = now;
        self.first_waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(now);
        let waiting = self.committed.fetch_add(n, Ordering::AcqRel) - self.rolled();
        if waiting == 0 {
            self.arrived.notify_one();
        }
        if waiting < ROLL_ROWS && waiting + n >= ROLL_ROWS {
            self.full.notify_one();
        }
    }

    fn rolled(&self) -> u64 {
        self.rolled.load(Ordering::Acquire)
    }

    fn waiting(&self) -> u64 {
        self.committed
            .load(Ordering::Acquire)
            .saturating_sub(self.rolled())
    }

    /// Waits while more than [`MOST_WAITING`] rows wait for the roller, at most
    /// [`KEEP_UP_AT_MOST`] (ingest calls it before it writes).
    pub(crate) async fn keep_up(&self) {
        let deadline = tokio::time::Instant::now() + KEEP_UP_AT_MOST;
        loop {
            let rolled = self.progress.notified();
            tokio::pin!(rolled);
            // Registered before the check: a roll ending in between still wakes it.
            rolled.as_mut().enable();
            if self.waiting() <= MOST_WAITING || self.failing.load(Ordering::Acquire) {
                return;
            }
            if tokio::time::timeout_at(deadline, rolled).await.is_err() {
                return;
            }
        }
    }

    /// Waits until the rollups include every row this process committed before the call:
    /// at once when they do, else in a roll at least [`READ_GAP`] after the last one.
    ///
    /// On PostgreSQL, rows another server committed and has not rolled yet are rolled too.
    pub(crate) async fn settle(&self, db: &Db) -> DbResult<()> {
        let need = self.committed.load(Ordering::Acquire);
        let others = self.rolled() >= need && self.others_waiting(db).await?;
        if self.rolled() >= need && !others {
            return Ok(());
        }
        let next = *self.last_roll.lock().unwrap_or_else(|p| p.into_inner()) + READ_GAP;
        tokio::time::sleep_until(next.into()).await;
        if others {
            return self.roll(db, 0).await.map(drop);
        }
        if self.rolled() >= need {
            return Ok(());
        }
        self.roll(db, need).await.map(drop)
    }

    /// PostgreSQL: whether another server's rows may wait ([`pending_beyond_rolls`]), asked
    /// at most once per [`OTHERS_CHECKED_FOR`]: the reads of one answer share one check.
    /// Always false on SQLite.
    async fn others_waiting(&self, db: &Db) -> DbResult<bool> {
        if db.backend != Backend::Postgres {
            return Ok(false);
        }
        let clear = *self.others_clear.lock().unwrap_or_else(|p| p.into_inner());
        if clear.is_some_and(|t| t.elapsed() < OTHERS_CHECKED_FOR) {
            return Ok(false);
        }
        let waiting = pending_beyond_rolls(db).await?;
        if !waiting {
            self.note_others_clear();
        }
        Ok(waiting)
    }

    fn note_others_clear(&self) {
        *self.others_clear.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }

    /// Rolls up every row after the watermark, whichever process stored it, unless a roll
    /// that ran while this one waited for the roller's lock already included the first
    /// `need` rows this process committed; returns how many rows it rolled up.
    pub(crate) async fn roll(&self, db: &Db, need: u64) -> DbResult<u64> {
        let rolled = self.roll_locked(db, need).await;
        self.failing.store(rolled.is_err(), Ordering::Release);
        if rolled.is_err() {
            self.progress.notify_waiters();
        }
        rolled
    }

    async fn roll_locked(&self, db: &Db, need: u64) -> DbResult<u64> {
        let mut conn = self.conn.lock().await;
        if need > 0 && self.rolled() >= need {
            return Ok(0);
        }
        // Read before the roll's snapshot of the main file is taken: every row counted here
        // was committed before it, so the roll includes it.
        // Rows that arrive from here on start the next wait.
        *self.first_waiting.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let committed = self.committed.load(Ordering::Acquire);
        let started = Instant::now();
        let total = match db.backend {
            Backend::Sqlite => {
                // Up to the last row now, not whatever arrives meanwhile: under ingest
                // faster than the roll, the roll would otherwise never end and never
                // count as done.
                let end = db
                    .write_locked(&mut conn, |c| Box::pin(last_row(c)))
                    .await?;
                let mut total = 0;
                loop {
                    let n = db
                        .write_locked(&mut conn, |c| Box::pin(roll_chunk(c, end)))
                        .await?;
                    total += n;
                    if n < CHUNK as u64 {
                        break;
                    }
                }
                total
            }
            Backend::Postgres => {
                db.write_locked(&mut conn, |c| Box::pin(roll_pending(c)))
                    .await?
            }
        };
        self.rolled.fetch_max(committed, Ordering::AcqRel);
        if db.backend == Backend::Postgres {
            self.note_others_clear();
        }
        *self.last_roll.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        self.progress.notify_waiters();
        tracing::debug!(
            rows = total,
            ms = started.elapsed().as_millis() as u64,
            "rolled up"
        );
        Ok(total)
    }

    /// Waits until [`ROLL_ROWS`] wait, ingest has been quiet for [`ROLL_AFTER`], or the
    /// oldest waiting row has waited [`ROLL_AT_MOST_AFTER`] (another process's answers,
    /// which do not wait for this one's rows, must not lag behind a steady trickle).
    async fn roll_due(&self) {
        while self.waiting() < ROLL_ROWS {
            let quiet = *self.last_commit.lock().unwrap_or_else(|p| p.into_inner()) + ROLL_AFTER;
            let oldest = *self.first_waiting.lock().unwrap_or_else(|p| p.into_inner());
            let quiet = oldest.map_or(quiet, |t| quiet.min(t + ROLL_AT_MOST_AFTER));
            if Instant::now() >= quiet {
                return;
            }
            let _ = tokio::time::timeout_at(quiet.into(), self.full.notified()).await;
        }
    }

    /// Starts the background task: it rolls as soon as [`ROLL_ROWS`] wait, or once ingest
    /// has been quiet for [`ROLL_AFTER`].
    pub(crate) fn start(self: &Arc<Self>, db: Db) {
        let roller = self.clone();
        let handle = tokio::spawn(async move {
            loop {
                if roller.waiting() == 0 {
                    roller.arrived.notified().await;
                }
                roller.roll_due().await;
                if db.pool.is_closed() {
                    return;
                }
                if let Err(e) = roller.roll(&db, 0).await {
                    // A read or the next arrival tries again.
                    tracing::warn!(error = %e, "rolling up interactions failed");
                    tokio::time::sleep(ROLL_AFTER).await;
                }
            }
        });
        *self.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    }

    /// Stops the background task (a roll under way is rolled back).
    pub(crate) fn stop(&self) {
        if let Some(t) = self.task.lock().unwrap_or_else(|p| p.into_inner()).take() {
            t.abort();
        }
    }

    /// Closes the roller's connection.
    pub(crate) async fn close(&self) {
        if let Some(c) = self.conn.lock().await.take() {
            let _ = sqlx::Connection::close(c).await;
        }
    }
}

/// The statements that add the rows of a table (`interactions`, or the copy with the
/// cap applied) with rowids `$1` (excluded) to `$2` to each rollup, aggregated by SQLite
/// itself, generated from [`RULES`].
fn roll_sql(table: &str) -> Vec<String> {
    let range = format!("FROM {table} WHERE rowid > $1 AND rowid <= $2");
    RULES.iter().map(|r| r.roll_sql(&range, false)).collect()
}

/// [`roll_sql`] of the raw rows, and of the copy the cap made.
static ROLL_SQL: LazyLock<[Vec<String>; 2]> =
    LazyLock::new(|| [roll_sql(cap::RAW), roll_sql(cap::CAPPED_COPY)]);

/// The last `interactions` rowid.
async fn last_row(conn: &mut AnyConnection) -> DbResult<i64> {
    Ok(
        sqlx::query("SELECT COALESCE(MAX(rowid), 0) AS last FROM main.interactions")
            .fetch_one(&mut *conn)
            .await?
            .try_get("last")?,
    )
}

/// Rolls up to [`CHUNK`] rows after the watermark, up to rowid `end`, and moves it past them.
async fn roll_chunk(conn: &mut AnyConnection, end: i64) -> DbResult<u64> {
    // A write first, so the transaction holds the second file's write lock before it reads
    // (it never writes the main file, so it never waits for the ingest writer).
    let from: i64 =
        sqlx::query("UPDATE rollup_watermark SET rolled = rolled WHERE id = 1 RETURNING rolled")
            .fetch_one(&mut *conn)
            .await?
            .try_get("rolled")?;
    let span = sqlx::query(
        "SELECT COUNT(*) AS n, MAX(rowid) AS last FROM \
         (SELECT rowid FROM main.interactions WHERE rowid > $1 AND rowid <= $2 \
         ORDER BY rowid LIMIT $3)",
    )
    .bind(from)
    .bind(end)
    .bind(CHUNK)
    .fetch_one(&mut *conn)
    .await?;
    let (n, to): (i64, Option<i64>) = (span.try_get("n")?, span.try_get("last")?);
    let Some(to) = to else {
        return Ok(0);
    };
    // The cap first: the rollups below count capped rows in their own class.
    let source = cap::cap_rows(conn, from, to).await?;
    let rules = &ROLL_SQL[usize::from(source == cap::CAPPED_COPY)];
    for sql in rules {
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

/// PostgreSQL: the advisory lock a roll holds (any number of servers share the database).
const ROLL_LOCK: i64 = 0x6c6f_7764_726f_6c6c; // "lowdroll"

/// PostgreSQL: what a roll adds to each rollup from the rows it moves ([`cap::MOVING`]).
static PG_ROLL_SQL: LazyLock<Vec<String>> = LazyLock::new(|| {
    let from = format!("FROM {} WHERE true", cap::MOVING);
    RULES.iter().map(|r| r.roll_sql(&from, true)).collect()
});

/// PostgreSQL: the raw columns, as `interactions` and `interactions_pending` share them.
static RAW_COLS: LazyLock<String> = LazyLock::new(|| {
    super::ingest::COLS
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
});

/// PostgreSQL: whether some row may wait in `interactions_pending` (another server's, when
/// this one's are rolled): a `seq` was allocated past the last one a roll passed. Reads a
/// sequence and one row, never the table, whose dead rows a scan would read until vacuumed.
async fn pending_beyond_rolls(db: &Db) -> DbResult<bool> {
    let row = sqlx::query(
        "SELECT CAST(CASE WHEN s.last_value > r.through THEN 1 ELSE 0 END AS BIGINT) AS waiting \
         FROM interactions_pending_seq_seq s, interactions_pending_rolled r WHERE r.id = 1",
    )
    .fetch_one(&db.pool)
    .await?;
    Ok(row.try_get::<i64, _>("waiting")? == 1)
}

/// PostgreSQL: moves every committed row of `interactions_pending` into `interactions`,
/// with the cap applied, and adds them to every rollup; returns how many.
async fn roll_pending(conn: &mut AnyConnection) -> DbResult<u64> {
    sqlx::query("SELECT CAST(pg_advisory_xact_lock($1) AS TEXT)")
        .bind(ROLL_LOCK)
        .execute(&mut *conn)
        .await?;
    // Every `seq` allocated so far belongs to a row this roll moves, to a transaction that
    // failed, or (rarely) to one still running, which its own server's roll and reads
    // cover: reads elsewhere stop asking for a roll up to here.
    let last: i64 = sqlx::query("SELECT last_value FROM interactions_pending_seq_seq")
        .fetch_one(&mut *conn)
        .await?
        .try_get("last_value")?;
    sqlx::query(
        "UPDATE interactions_pending_rolled SET through = $1 WHERE id = 1 AND through < $1",
    )
    .bind(last)
    .execute(&mut *conn)
    .await?;
    // A roll groups tens of thousands of rows per rollup in memory; PostgreSQL's default
    // of 4 MB per sort or hash would spill most of them to disk.
    sqlx::query("SET LOCAL work_mem = '64MB'")
        .execute(&mut *conn)
        .await?;
    let moving = cap::MOVING;
    // The temporary tables are made once per connection, with room in memory for a roll
    // (the size can only be set before a session's first temporary table).
    let fresh: i64 = sqlx::query(AssertSqlSafe(format!(
        "SELECT CAST(CASE WHEN to_regclass('pg_temp.{moving}') IS NULL THEN 1 ELSE 0 END \
         AS BIGINT) AS fresh"
    )))
    .fetch_one(&mut *conn)
    .await?
    .try_get("fresh")?;
    if fresh == 1 {
        sqlx::query("SET temp_buffers = '64MB'")
            .execute(&mut *conn)
            .await?;
    }
    sqlx::query("SET LOCAL client_min_messages = warning")
        .execute(&mut *conn)
        .await?;
    sqlx::query(AssertSqlSafe(format!(
        "CREATE TEMP TABLE IF NOT EXISTS {moving} (LIKE interactions_pending, \
         PRIMARY KEY (seq)) ON COMMIT DELETE ROWS"
    )))
    .execute(&mut *conn)
    .await?;
    let n = sqlx::query(AssertSqlSafe(format!(
        "WITH m AS (DELETE FROM interactions_pending RETURNING *) \
         INSERT INTO {moving} SELECT * FROM m"
    )))
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if n == 0 {
        return Ok(0);
    }
    cap::cap_moving(conn).await?;
    let cols = &*RAW_COLS;
    sqlx::query(AssertSqlSafe(format!(
        "INSERT INTO interactions ({cols}) SELECT {cols} FROM {moving}"
    )))
    .execute(&mut *conn)
    .await?;
    for sql in PG_ROLL_SQL.iter() {
        sqlx::query(AssertSqlSafe(sql.as_str()))
            .execute(&mut *conn)
            .await?;
    }
    Ok(n)
}
