//! Ingest of interaction records: the raw rows, and on PostgreSQL every rollup, in one
//! transaction (SQLite rolls up behind a watermark, see [`super::roller`]).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::oneshot;

use lowdown_core::aggregate::{outcome_class, OutcomeClass};
use lowdown_core::record::InteractionRecord;
use sqlx::{AnyConnection, Row};

use super::batch::{Cell, Col, Rows};
use super::rollup::{Added, Fact, Rollup};
use super::upsert::is_sqlite;
use super::{random_id, Backend, Db};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::names::enum_label;

/// The raw row's columns, in the order [`insert_records`] writes them.
const COLS: &[Col<'static>] = &[
    ("record_id", "text"),
    ("actor", "text"),
    ("target", "text"),
    ("target_type", "text"),
    ("task_type", "text"),
    ("outcome", "text"),
    ("failure_type", "text"),
    ("error_layer", "text"),
    ("request_kind", "text"),
    ("outcome_class", "text"),
    ("latency_ms", "double precision"),
    ("source", "text"),
    ("node_id", "text"),
    ("server_version", "text"),
    ("schema_hash", "text"),
    ("recorder_version", "text"),
    ("protocol_version", "text"),
    ("tools_has_more", "bigint"),
    ("day", "text"),
    ("created_at", "bigint"),
];

/// A validated record with what the server adds: its id and class.
pub(crate) struct Stored {
    id: String,
    rec: InteractionRecord,
    class: OutcomeClass,
}

/// One request's records waiting for a writer, and where its answer goes.
pub(crate) struct Job {
    records: Vec<Stored>,
    reply: oneshot::Sender<Result<usize, String>>,
}

/// Ingest transactions one PostgreSQL server runs at once. One leaves the database idle
/// while a commit crosses the network and the next group forms; more split the waiting
/// requests into smaller groups. (SQLite has one writer.)
const PG_WRITERS: usize = 2;

/// Longest a group waits for the requests it expects (see [`Queue::take_group`]).
const LINGER: std::time::Duration = std::time::Duration::from_millis(1);

/// Requests waiting to be committed, and the right to commit on PostgreSQL.
pub(crate) struct Queue {
    jobs: std::sync::Mutex<Vec<Job>>,
    /// Woken for every job pushed.
    arrived: tokio::sync::Notify,
    /// Jobs in the last group committed.
    last_group: AtomicUsize,
    pg_writers: tokio::sync::Semaphore,
}

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            jobs: std::sync::Mutex::default(),
            arrived: tokio::sync::Notify::new(),
            last_group: AtomicUsize::new(0),
            pg_writers: tokio::sync::Semaphore::new(PG_WRITERS),
        }
    }
}

impl Queue {
    fn push(&self, job: Job) {
        self.lock().push(job);
        self.arrived.notify_one();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Job>> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The waiting jobs, once as many wait as the last group held, or after [`LINGER`].
    ///
    /// A commit answers all its clients at once, and they send their next batches at
    /// about the same time; taking only what has arrived made the first of them commit
    /// alone while the rest queued behind it (groups of 2 batches from 4 clients). A
    /// group of 4 writes about 15% fewer pages per record, since batches share rollup
    /// pages, and one commit instead of two.
    async fn take_group(&self) -> Vec<Job> {
        let want = self.last_group.load(Ordering::Relaxed);
        let deadline = tokio::time::Instant::now() + LINGER;
        loop {
            let waiting = self.lock().len();
            if waiting == 0 || waiting >= want {
                break;
            }
            // `notify_one` keeps a wakeup for a push that lands before this wait starts.
            if tokio::time::timeout_at(deadline, self.arrived.notified())
                .await
                .is_err()
            {
                break;
            }
        }
        let jobs = std::mem::take(&mut *self.lock());
        if !jobs.is_empty() {
            self.last_group.store(jobs.len(), Ordering::Relaxed);
        }
        jobs
    }
}

/// Stores `records` (already validated) in one transaction with multi-row statements. A
/// record whose `record_id` is already stored (or repeated) is skipped. Returns how many
/// records were new.
///
/// Requests that arrive while a write is running are committed together in the next
/// transaction (group commit): each request is still all-or-nothing and is answered only
/// after the commit, but concurrent clients share one commit and one set of rollup
/// upserts. Without it, every transaction would queue on the row locks of the same hot
/// rollup rows anyway (PostgreSQL) or on the single writer (SQLite). On PostgreSQL
/// [`PG_WRITERS`] groups run at once. The group runs in its own task, so a client that
/// disconnects cannot cancel other clients' writes.
pub async fn store_interactions(
    db: &Db,
    records: Vec<InteractionRecord>,
    now: i64,
) -> AppResult<usize> {
    let mut stored = Vec::with_capacity(records.len());
    for rec in records {
        let id = match &rec.record_id {
            Some(id) => id.clone(),
            None => random_id("srv_", 16)?,
        };
        let class = outcome_class(rec.request_kind, rec.outcome, rec.error_layer);
        stored.push(Stored { id, rec, class });
    }
    // A repeated id within the request: the first copy counts (the sort is stable and
    // `dedup_by` keeps the first of equal neighbours).
    stored.sort_by(|a, b| a.id.cmp(&b.id));
    stored.dedup_by(|later, first| later.id == first.id);
    if stored.is_empty() {
        return Ok(0);
    }
    let (reply, answer) = oneshot::channel();
    db.ingest_queue.push(Job {
        records: stored,
        reply,
    });
    let leader = db.clone();
    tokio::spawn(async move { commit_group(&leader, now).await });
    match answer.await {
        Ok(Ok(n)) => Ok(n),
        Ok(Err(detail)) => Err(AppError::internal(detail)),
        Err(_) => Err(AppError::internal("ingest group writer stopped")),
    }
}

/// Takes the writer lock (SQLite) or one of [`PG_WRITERS`] permits, then commits every
/// queued job in one transaction. A job some earlier group already committed is simply
/// absent from the queue.
async fn commit_group(db: &Db, now: i64) {
    let (mut writer, _permit) = match db.backend {
        Backend::Sqlite => (Some(db.lock_sqlite_writer().await), None),
        Backend::Postgres => (None, db.ingest_queue.pg_writers.acquire().await.ok()),
    };
    let jobs = db.ingest_queue.take_group().await;
    if jobs.is_empty() {
        return;
    }
    let (batches, replies): (Vec<Vec<Stored>>, Vec<_>) =
        jobs.into_iter().map(|j| (j.records, j.reply)).unzip();
    // Each id belongs to the first job that sent it; later copies are repeats (stable
    // sort by id, jobs in arrival order, then keep the first of equal neighbours).
    let mut tagged: Vec<(usize, Stored)> = batches
        .into_iter()
        .enumerate()
        .flat_map(|(job, batch)| batch.into_iter().map(move |s| (job, s)))
        .collect();
    tagged.sort_by(|a, b| a.1.id.cmp(&b.1.id));
    tagged.dedup_by(|later, first| later.1.id == first.1.id);
    let (owner, all): (Vec<usize>, Vec<Stored>) = tagged.into_iter().unzip();
    // One order for every writer (ids sorted, rollup keys in BTreeMaps): several servers
    // sharing one PostgreSQL database then wait on each other, never deadlock.
    let known = db.known.clone();
    let result = match writer.as_deref_mut() {
        Some(writer) => {
            db.write_locked(writer, move |c| {
                Box::pin(async move { write_batch(c, all, None, now).await })
            })
            .await
        }
        None => {
            db.write(move |c| Box::pin(async move { write_batch(c, all, Some(&known), now).await }))
                .await
        }
    };
    let mut roll = false;
    let result = result.map(|(fresh, added)| {
        added.commit_to(&db.known);
        if let Some(r) = &db.roller {
            roll = r.committed(fresh.iter().filter(|new| **new).count() as u64);
        }
        fresh
    });
    match result {
        Ok(fresh) => {
            let mut counts = vec![0usize; replies.len()];
            for (job, new) in owner.iter().zip(fresh) {
                if new {
                    counts[*job] += 1;
                }
            }
            for (reply, n) in replies.into_iter().zip(counts) {
                let _ = reply.send(Ok(n));
            }
        }
        Err(e) => {
            let detail = match &e {
                AppError::Internal { detail } => detail.clone(),
                other => other.to_string(),
            };
            for reply in replies {
                let _ = reply.send(Err(detail.clone()));
            }
        }
    }
    // Answered; the next groups queue behind the writer while this one rolls up.
    if let (true, Some(writer)) = (roll, writer.as_deref_mut()) {
        if let Err(e) = super::roller::roll_all(db, writer).await {
            tracing::warn!(error = %e, "rolling up interactions failed");
        }
    }
}

/// The text columns of one record the server derives from its enums, computed once.
struct Labels {
    target_type: Cow<'static, str>,
    outcome: Cow<'static, str>,
    failure: Option<Cow<'static, str>>,
    layer: Option<Cow<'static, str>>,
    kind: Cow<'static, str>,
    class: Cow<'static, str>,
    source: Cow<'static, str>,
}

impl Labels {
    fn of(s: &Stored) -> Labels {
        let r = &s.rec;
        Labels {
            target_type: enum_label(&r.target_type),
            outcome: enum_label(&r.outcome),
            failure: r.failure_type.as_ref().map(enum_label),
            layer: r.error_layer.as_ref().map(enum_label),
            kind: enum_label(&r.request_kind),
            class: enum_label(&s.class),
            source: enum_label(&r.source),
        }
    }
}

/// Writes the raw rows, and with `known` (PostgreSQL) their rollups; returns, for each
/// record in order, whether it was new, and what it registered.
///
/// Values are bound straight from the records and rollup keys borrow them: a batch
/// allocates per bound value only what the driver needs, not per record and rollup.
async fn write_batch(
    conn: &mut AnyConnection,
    stored: Vec<Stored>,
    known: Option<&super::known::Known>,
    now: i64,
) -> AppResult<(Vec<bool>, Added)> {
    let day = clock::day_of(now);
    let labels: Vec<Labels> = stored.iter().map(Labels::of).collect();
    let inserted = insert_records(conn, &stored, &labels, &day, now).await?;
    let is_new: Vec<bool> = stored.iter().map(|s| inserted.contains(&s.id)).collect();
    let Some(known) = known else {
        return Ok((is_new, Added::default()));
    };
    let mut rollup = Rollup::default();
    for ((s, l), _) in stored
        .iter()
        .zip(&labels)
        .zip(&is_new)
        .filter(|(_, new)| **new)
    {
        let r = &s.rec;
        rollup.add(
            &Fact {
                target: &r.target,
                task: &r.task_type,
                version: r.server_version.as_deref().unwrap_or_default(),
                hash: r.schema_hash.as_deref().unwrap_or_default(),
                source: &l.source,
                class: &l.class,
                failure: l.failure.as_deref().unwrap_or_default(),
                latency_ms: r.latency_ms,
                node: r.node_id.as_deref(),
                day: &day,
            },
            known,
        );
    }
    let added = rollup.write(conn, now).await?;
    Ok((is_new, added))
}

/// Inserts the raw rows (`ON CONFLICT DO NOTHING`), straight from the records; returns
/// the ids that were new.
async fn insert_records(
    conn: &mut AnyConnection,
    stored: &[Stored],
    labels: &[Labels],
    day: &str,
    now: i64,
) -> AppResult<HashSet<String>> {
    let mut rows = Rows::new(COLS, stored.len());
    for (s, l) in stored.iter().zip(labels) {
        let r = &s.rec;
        for cell in [
            Cell::Text(&s.id),
            Cell::Text(&r.actor),
            Cell::Text(&r.target),
            Cell::Text(&l.target_type),
            Cell::Text(&r.task_type),
            Cell::Text(&l.outcome),
            Cell::OptText(l.failure.as_deref()),
            Cell::OptText(l.layer.as_deref()),
            Cell::Text(&l.kind),
            Cell::Text(&l.class),
            Cell::OptFloat(r.latency_ms),
            Cell::Text(&l.source),
            Cell::OptText(r.node_id.as_deref()),
            Cell::OptText(r.server_version.as_deref()),
            Cell::OptText(r.schema_hash.as_deref()),
            Cell::OptText(r.recorder_version.as_deref()),
            Cell::OptText(r.protocol_version.as_deref()),
            Cell::OptInt(r.tools_has_more.map(i64::from)),
            Cell::Text(day),
            Cell::Int(now),
        ] {
            rows.push(cell);
        }
    }
    let conflict = "ON CONFLICT (record_id) DO NOTHING";
    let returned = if is_sqlite(conn) {
        // Rows come back from SQLite one message at a time, so ask only when some record
        // was already stored: the new rows are those after the last rowid before.
        let before: i64 = sqlx::query("SELECT COALESCE(MAX(rowid), 0) FROM interactions")
            .fetch_one(&mut *conn)
            .await?
            .try_get(0)?;
        let written = rows.execute(conn, "interactions", conflict).await?;
        if written == stored.len() as u64 {
            return Ok(stored.iter().map(|s| s.id.clone()).collect());
        }
        sqlx::query("SELECT record_id FROM interactions WHERE rowid > $1")
            .bind(before)
            .fetch_all(&mut *conn)
            .await?
    } else {
        let tail = format!("{conflict} RETURNING record_id");
        rows.insert(conn, "interactions", &tail).await?
    };
    let mut inserted = HashSet::with_capacity(returned.len());
    for row in returned {
        inserted.insert(row.try_get::<String, _>(0)?);
    }
    Ok(inserted)
}
