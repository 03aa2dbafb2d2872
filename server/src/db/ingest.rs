//! Ingest of interaction records: the raw rows, the quotas they draw on and their targets,
//! in one transaction. The per-network cap and the rollups follow on a roller of their own
//! ([`super::roller`]): SQLite's behind a watermark over `interactions`, PostgreSQL's from
//! `interactions_pending`, where its ingest writes the raw rows.
//!
//! A `record_id` is stored once, ever: on PostgreSQL ingest claims it in `record_ids`
//! (which keeps every id as an 8-byte key, [`id_key`]; the raw table is partitioned by day and cannot hold a unique key
//! on it); on SQLite the raw table's key refuses a repeat, and `record_ids` holds the ids
//! of rows the retention job removed ([`super::retention`]).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::oneshot;

use lowdown_core::aggregate::{outcome_class, OutcomeClass};
use lowdown_core::quota::Refused;
use lowdown_core::record::InteractionRecord;
use lowdown_core::telemetry::latency_bucket;
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, Row};

use super::batch::{Cell, Col, Rows};
use super::quota::{Draws, Quota};
use super::rollup::Added;
use super::upsert::where_in;
use super::{random_id, Backend, Db};
use crate::clock;
use crate::db::{DbError, DbResult};
use crate::names::enum_label;

/// The raw row's columns, in the order [`insert_records`] writes them.
pub(super) const COLS: &[Col<'static>] = &[
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
    ("network", "text"),
    ("agent_id", "text"),
    ("trusted", "bigint"),
    ("latency_bucket", "bigint"),
];

/// Who sent a request's records: what is stored beside each of them, and the quotas
/// they draw on.
#[derive(Debug, Clone, Default)]
pub struct Sender {
    /// The keyed id of the client's network ([`crate::caller::network_id`]).
    pub network: Option<String>,
    /// The agent behind the request's `X-Agent-Key`.
    pub agent_id: Option<String>,
    /// The network is trusted (`--trusted-network`): no cap applies to it.
    pub trusted: bool,
    /// One item per record, in order: the budgets it draws on (none when trusted).
    pub draws: Draws,
}

/// What became of one record of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Stored now.
    Stored,
    /// Its `record_id` was already stored (or came earlier in the request): acknowledged,
    /// never counted twice, and free of every quota.
    Duplicate,
    /// Over a quota: refused, nothing written.
    RateLimited(Refused),
}

/// What became of a request's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ingested {
    /// One per record given to [`store_interactions`], in order.
    pub fates: Vec<Fate>,
}

impl Ingested {
    /// The quota behind the first refusal, and the longest `Retry-After` of all of them.
    pub fn refusal<'q>(&self, sender: &'q Sender) -> Option<(&'q Quota, u64)> {
        let mut first = None;
        let mut retry = 0;
        for f in &self.fates {
            if let Fate::RateLimited(r) = f {
                first.get_or_insert(r.budget);
                retry = retry.max(r.retry_after_secs);
            }
        }
        first.map(|b| (&sender.draws.quotas[b], retry))
    }
}

/// A validated record with what the server adds: its id, class and place in its request.
pub(crate) struct Stored {
    id: String,
    rec: InteractionRecord,
    class: OutcomeClass,
    pos: usize,
}

/// One request's records waiting for a writer, and where its answer goes.
pub(crate) struct Job {
    records: Vec<Stored>,
    sender: Sender,
    reply: oneshot::Sender<Result<Vec<(usize, Fate)>, String>>,
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

/// Stores `records` (already validated) sent by `sender` in one transaction with
/// multi-row statements. A record whose `record_id` is already stored (or repeated) is a
/// [`Fate::Duplicate`] and draws on no quota; the new ones draw on theirs in order, and
/// those past a budget are refused ([`Fate::RateLimited`]) and not written.
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
    sender: Sender,
    now: i64,
) -> DbResult<Ingested> {
    let total = records.len();
    let mut stored = Vec::with_capacity(total);
    for (pos, rec) in records.into_iter().enumerate() {
        let id = match &rec.record_id {
            Some(id) => id.clone(),
            None => random_id("srv_", 16)?,
        };
        let class = outcome_class(rec.request_kind, rec.outcome, rec.error_layer);
        stored.push(Stored {
            id,
            rec,
            class,
            pos,
        });
    }
    // A repeated id within the request: the first copy counts (the sort is stable and
    // `dedup_by` keeps the first of equal neighbours).
    stored.sort_by(|a, b| a.id.cmp(&b.id));
    stored.dedup_by(|later, first| later.id == first.id);
    let mut fates = vec![Fate::Duplicate; total];
    if stored.is_empty() {
        return Ok(Ingested { fates });
    }
    let (reply, answer) = oneshot::channel();
    db.ingest_queue.push(Job {
        records: stored,
        sender,
        reply,
    });
    let leader = db.clone();
    tokio::spawn(async move { commit_group(&leader, now).await });
    match answer.await {
        Ok(Ok(decided)) => {
            for (pos, fate) in decided {
                fates[pos] = fate;
            }
            Ok(Ingested { fates })
        }
        Ok(Err(detail)) => Err(DbError::internal(detail)),
        Err(_) => Err(DbError::internal("ingest group writer stopped")),
    }
}

/// Takes the writer lock (SQLite) or one of [`PG_WRITERS`] permits, then commits every
/// queued job in one transaction. A job some earlier group already committed is simply
/// absent from the queue.
async fn commit_group(db: &Db, now: i64) {
    if let Some(r) = &db.roller {
        r.keep_up().await;
    }
    let (mut writer, _permit) = match db.backend {
        Backend::Sqlite => (Some(db.lock_sqlite_writer().await), None),
        Backend::Postgres => (None, db.ingest_queue.pg_writers.acquire().await.ok()),
    };
    let jobs = db.ingest_queue.take_group().await;
    if jobs.is_empty() {
        return;
    }
    let mut senders = Vec::with_capacity(jobs.len());
    let mut replies = Vec::with_capacity(jobs.len());
    let mut tagged: Vec<(usize, Stored)> = Vec::new();
    for (job, j) in jobs.into_iter().enumerate() {
        senders.push(j.sender);
        replies.push(j.reply);
        tagged.extend(j.records.into_iter().map(|s| (job, s)));
    }
    // Each id belongs to the first job that sent it; later copies are repeats (stable
    // sort by id, jobs in arrival order, then keep the first of equal neighbours).
    tagged.sort_by(|a, b| a.1.id.cmp(&b.1.id));
    let mut repeats: Vec<Vec<(usize, Fate)>> = vec![Vec::new(); replies.len()];
    let mut all: Vec<(usize, Stored)> = Vec::with_capacity(tagged.len());
    for (job, s) in tagged {
        match all.last() {
            Some((_, prev)) if prev.id == s.id => repeats[job].push((s.pos, Fate::Duplicate)),
            _ => all.push((job, s)),
        }
    }
    // One order for every writer (ids sorted, quota subjects sorted, rollup keys in
    // BTreeMaps): several servers sharing one PostgreSQL database then wait on each
    // other, never deadlock.
    let known = db.known.clone();
    let senders = std::sync::Arc::new(senders);
    let for_write = senders.clone();
    let result = match writer.as_deref_mut() {
        Some(writer) => {
            db.write_locked(writer, move |c| {
                Box::pin(async move { write_batch(c, all, &for_write, &known, now).await })
            })
            .await
        }
        None => {
            db.write(move |c| {
                Box::pin(async move { write_batch(c, all, &for_write, &known, now).await })
            })
            .await
        }
    };
    let result = result.map(|(decided, added)| {
        added.commit_to(&db.known);
        if let Some(r) = &db.roller {
            let fresh = decided
                .iter()
                .filter(|(_, _, f)| *f == Fate::Stored)
                .count();
            r.committed(fresh as u64);
        }
        decided
    });
    match result {
        Ok(decided) => {
            for (job, pos, fate) in decided {
                repeats[job].push((pos, fate));
            }
            for (reply, fates) in replies.into_iter().zip(repeats) {
                let _ = reply.send(Ok(fates));
            }
        }
        Err(e) => {
            let detail = match &e {
                DbError::Internal { detail } => detail.clone(),
                other => other.to_string(),
            };
            for reply in replies {
                let _ = reply.send(Err(detail.clone()));
            }
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

/// Writes the raw rows, takes their quotas and registers their targets not in `known`;
/// returns, for each record, its job, place and fate, and what was registered.
///
/// Values are bound straight from the records: a batch allocates per bound value only
/// what the driver needs, not per record.
async fn write_batch(
    conn: &mut AnyConnection,
    all: Vec<(usize, Stored)>,
    senders: &[Sender],
    known: &super::known::Known,
    now: i64,
) -> DbResult<(Vec<(usize, usize, Fate)>, Added)> {
    let day = clock::day_of(now);
    let labels: Vec<Labels> = all.iter().map(|(_, s)| Labels::of(s)).collect();
    let sqlite = super::upsert::is_sqlite(conn);
    // PostgreSQL claims the ids first and writes the raw rows last (its partitioned raw
    // table cannot hold a unique key on `record_id`, see
    // `migrations/0015_retention.postgres.sql`); SQLite writes them at once.
    let inserted = match sqlite {
        true => insert_records(conn, &all, senders, &labels, &day, now).await?,
        false => claim_ids(conn, &all).await?,
    };
    let mut fates: Vec<Fate> = all
        .iter()
        .map(|(_, s)| match inserted.contains(&s.id) {
            true => Fate::Stored,
            false => Fate::Duplicate,
        })
        .collect();
    let refused = limit(conn, &all, senders, &mut fates, now).await?;
    // Refused records are given up again (their ids too), so they may be sent later.
    match sqlite {
        true => {
            where_in(
                conn,
                "DELETE FROM interactions WHERE record_id IN {}",
                &refused,
            )
            .await?;
        }
        false => {
            release_ids(conn, &refused).await?;
            let new: Vec<bool> = fates.iter().map(|f| *f == Fate::Stored).collect();
            raw_rows(&all, &new, senders, &labels, &day, now)
                .execute(conn, "interactions_pending", "")
                .await?;
        }
    }
    // Only targets not known yet: one hash lookup per record, no statement for most batches.
    let fresh: BTreeSet<&str> = all
        .iter()
        .zip(&fates)
        .filter(|(_, f)| **f == Fate::Stored)
        .map(|((_, s), _)| s.rec.target.as_str())
        .filter(|t| !known.targets.contains(t))
        .collect();
    let added = Added::targets(conn, &fresh, now).await?;
    let decided = all
        .iter()
        .zip(fates)
        .map(|((j, s), f)| (*j, s.pos, f))
        .collect();
    Ok((decided, added))
}

/// Takes the quotas of the new records, job by job in request order; marks the refused
/// ones and returns their ids, for the caller to delete again (in this transaction, so no
/// one ever sees them).
async fn limit<'a>(
    conn: &mut AnyConnection,
    all: &'a [(usize, Stored)],
    senders: &[Sender],
    fates: &mut [Fate],
    now: i64,
) -> DbResult<Vec<&'a str>> {
    if senders.iter().all(|s| s.draws.quotas.is_empty()) {
        return Ok(Vec::new());
    }
    // The new records of each job, in request order.
    let mut order: Vec<usize> = (0..all.len())
        .filter(|i| fates[*i] == Fate::Stored)
        .collect();
    order.sort_by_key(|i| (all[*i].0, all[*i].1.pos));
    let mut group = Draws::default();
    let mut local: Vec<Vec<usize>> = Vec::with_capacity(senders.len());
    for s in senders {
        local.push(
            s.draws
                .quotas
                .iter()
                .map(|q| group.quota(q.clone()))
                .collect(),
        );
    }
    for i in &order {
        let (job, s) = &all[*i];
        let item = senders[*job]
            .draws
            .items
            .get(s.pos)
            .map(|qs| qs.iter().map(|q| local[*job][*q]).collect())
            .unwrap_or_default();
        group.item(item);
    }
    let taken = super::quota::take(conn, &group, now, true).await?;
    let mut refused = Vec::new();
    for (k, i) in order.iter().enumerate() {
        if let Some(r) = taken.items[k] {
            // The refusal names the job's own quota index.
            let (job, s) = &all[*i];
            let budget_subject = &group.quotas[r.budget].subject;
            let own = senders[*job]
                .draws
                .quotas
                .iter()
                .position(|q| &q.subject == budget_subject)
                .unwrap_or(0);
            fates[*i] = Fate::RateLimited(Refused {
                budget: own,
                retry_after_secs: r.retry_after_secs,
            });
            refused.push(s.id.as_str());
        }
    }
    Ok(refused)
}

/// The raw rows of the records `keep` selects, bound straight from the records.
fn raw_rows<'a>(
    stored: &'a [(usize, Stored)],
    keep: &[bool],
    senders: &'a [Sender],
    labels: &'a [Labels],
    day: &'a str,
    now: i64,
) -> Rows<'static, 'a> {
    let mut rows = Rows::new(COLS, stored.len());
    for (((job, s), l), _) in stored
        .iter()
        .zip(labels)
        .zip(keep)
        .filter(|(_, keep)| **keep)
    {
        let r = &s.rec;
        let sender = &senders[*job];
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
            Cell::OptText(sender.network.as_deref()),
            Cell::OptText(sender.agent_id.as_deref()),
            Cell::Int(i64::from(sender.trusted)),
            Cell::OptInt(r.latency_ms.map(|ms| latency_bucket(ms) as i64)),
        ] {
            rows.push(cell);
        }
    }
    rows
}

/// SQLite: inserts the raw rows (`ON CONFLICT DO NOTHING`), straight from the records,
/// except those whose id the retention job removed (kept in `record_ids`); returns the
/// ids that were new.
async fn insert_records(
    conn: &mut AnyConnection,
    stored: &[(usize, Stored)],
    senders: &[Sender],
    labels: &[Labels],
    day: &str,
    now: i64,
) -> DbResult<HashSet<String>> {
    let ids: Vec<&str> = stored.iter().map(|(_, s)| s.id.as_str()).collect();
    let removed: HashSet<String> = where_in(
        conn,
        "SELECT record_id FROM record_ids WHERE record_id IN {}",
        &ids,
    )
    .await?
    .iter()
    .map(|r| r.try_get::<String, _>("record_id"))
    .collect::<Result<_, _>>()?;
    let keep: Vec<bool> = stored
        .iter()
        .map(|(_, s)| !removed.contains(&s.id))
        .collect();
    let rows = raw_rows(stored, &keep, senders, labels, day, now);
    let wanted = keep.iter().filter(|k| **k).count();
    if wanted == 0 {
        return Ok(HashSet::new());
    }
    // Rows come back from SQLite one message at a time, so ask only when some record
    // was already stored: the new rows are those after the last rowid before.
    let before: i64 = sqlx::query("SELECT COALESCE(MAX(rowid), 0) AS last FROM interactions")
        .fetch_one(&mut *conn)
        .await?
        .try_get("last")?;
    let written = rows
        .execute(conn, "interactions", "ON CONFLICT (record_id) DO NOTHING")
        .await?;
    if written == wanted as u64 {
        return Ok(stored
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|((_, s), _)| s.id.clone())
            .collect());
    }
    let returned = sqlx::query("SELECT record_id FROM interactions WHERE rowid > $1")
        .bind(before)
        .fetch_all(&mut *conn)
        .await?;
    let mut inserted = HashSet::with_capacity(returned.len());
    for row in returned {
        inserted.insert(row.try_get::<String, _>("record_id")?);
    }
    Ok(inserted)
}

/// PostgreSQL's key of a record id in `record_ids`: the first 8 bytes of its SHA-256,
/// big-endian, as a signed 64-bit integer. Migration 0015 computes the same in SQL for the
/// ids stored before it (`CAST(CAST('x' || … AS bit(64)) AS BIGINT)`).
///
/// 8 bytes instead of the id's text (up to 64 characters) because PostgreSQL keeps every
/// id for ever, twice (heap row and index). Two different ids share a key with probability
/// about n / 2^64 for a new id among n kept: the first false duplicate (a new record taken
/// for a repeat) is expected after about 6 billion ids, 16 years at a million records a
/// day. Claiming a key is no new power: whoever knows a future `record_id` could already
/// send it first.
pub(crate) fn id_key(id: &str) -> i64 {
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

/// PostgreSQL: claims the records' ids in `record_ids` (every id ever stored, removed raw
/// rows included, by [`id_key`]); returns the ids that were new. A concurrent transaction
/// claiming the same id waits for this one, then sees it taken. Keys are claimed in sorted
/// order, so two servers claiming overlapping batches wait on each other, never deadlock.
async fn claim_ids(
    conn: &mut AnyConnection,
    stored: &[(usize, Stored)],
) -> DbResult<HashSet<String>> {
    let mut keys: Vec<i64> = stored.iter().map(|(_, s)| id_key(&s.id)).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut rows = Rows::new(&[("id_key", "bigint")], keys.len());
    for k in &keys {
        rows.push(Cell::Int(*k));
    }
    let returned = rows
        .insert(
            conn,
            "record_ids",
            "ON CONFLICT (id_key) DO NOTHING RETURNING id_key",
        )
        .await?;
    let mut claimed = HashSet::with_capacity(returned.len());
    for row in returned {
        claimed.insert(row.try_get::<i64, _>("id_key")?);
    }
    Ok(stored
        .iter()
        .map(|(_, s)| &s.id)
        .filter(|id| claimed.contains(&id_key(id)))
        .cloned()
        .collect())
}

/// PostgreSQL: gives up the claims of `ids` (records refused over a quota).
async fn release_ids(conn: &mut AnyConnection, ids: &[&str]) -> DbResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let keys: Vec<String> = ids.iter().map(|id| id_key(id).to_string()).collect();
    sqlx::query("DELETE FROM record_ids WHERE id_key = ANY(CAST($1 AS BIGINT[]))")
        .bind(format!("{{{}}}", keys.join(",")))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::id_key;

    #[test]
    fn an_id_key_is_the_first_8_bytes_of_its_sha256_as_postgresql_reads_them() {
        // sha256("abc") = ba7816bf8f01cfea…; PostgreSQL's
        // CAST(CAST('x' || 'ba7816bf8f01cfea' AS bit(64)) AS BIGINT) gives the same.
        assert_eq!(id_key("abc"), -5_010_229_573_455_851_542);
        assert_ne!(id_key("rec-1"), id_key("rec-2"));
    }
}
