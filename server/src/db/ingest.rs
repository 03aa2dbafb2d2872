//! Ingest of interaction records: raw rows plus every rollup, in one transaction.

use std::collections::{BTreeMap, HashMap, HashSet};

use tokio::sync::oneshot;

use lowdown_core::aggregate::{outcome_class, OutcomeClass};
use lowdown_core::record::InteractionRecord;
use sqlx::AnyConnection;

use super::upsert::{add_counts, insert_ignore, insert_new, Val};
use super::{random_id, Backend, Db};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::names::{enum_str, name_key};

const COLS: &[&str] = &[
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
];

/// A validated record with what the server adds: its id and class.
pub(crate) struct Stored {
    id: String,
    rec: InteractionRecord,
    class: OutcomeClass,
}

/// One request's records waiting for the SQLite writer, and where its answer goes.
pub(crate) struct Job {
    records: Vec<Stored>,
    reply: oneshot::Sender<Result<usize, String>>,
}

/// Stores `records` (already validated) in one transaction with multi-row statements. A
/// record whose `record_id` is already stored (or repeated) is skipped. Returns how many
/// records were new.
///
/// Requests that arrive while a write is running are committed together in the next
/// transaction (group commit): each request is still all-or-nothing and is answered only
/// after the commit, but concurrent clients share one commit and one set of rollup
/// upserts. Without it, every transaction would queue on the row locks of the same hot
/// rollup rows anyway (PostgreSQL) or on the single writer (SQLite). The group runs in
/// its own task, so a client that disconnects cannot cancel other clients' writes.
pub async fn store_interactions(
    db: &Db,
    records: Vec<InteractionRecord>,
    now: i64,
) -> AppResult<usize> {
    let mut seen = HashSet::new();
    let mut stored = Vec::with_capacity(records.len());
    for rec in records {
        let id = match &rec.record_id {
            Some(id) => id.clone(),
            None => random_id("srv_", 16)?,
        };
        if seen.insert(id.clone()) {
            let class = outcome_class(rec.request_kind, rec.outcome, rec.error_layer);
            stored.push(Stored { id, rec, class });
        }
    }
    if stored.is_empty() {
        return Ok(0);
    }
    let (reply, answer) = oneshot::channel();
    db.ingest_queue
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Job {
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

/// Takes the writer lock, then commits every queued job in one transaction. A job some
/// earlier group already committed is simply absent from the queue.
async fn commit_group(db: &Db, now: i64) {
    let mut writer = db.lock_sqlite_writer().await;
    let jobs = std::mem::take(&mut *db.ingest_queue.lock().unwrap_or_else(|p| p.into_inner()));
    if jobs.is_empty() {
        return;
    }
    let (batches, replies): (Vec<Vec<Stored>>, Vec<_>) =
        jobs.into_iter().map(|j| (j.records, j.reply)).unzip();
    // Each id belongs to the first job that sent it; later copies are repeats.
    let mut owner: HashMap<String, usize> = HashMap::new();
    let mut all = Vec::new();
    for (job, batch) in batches.into_iter().enumerate() {
        for s in batch {
            if let std::collections::hash_map::Entry::Vacant(e) = owner.entry(s.id.clone()) {
                e.insert(job);
                all.push(s);
            }
        }
    }
    all.sort_by(|a, b| a.id.cmp(&b.id));
    // One order for every writer (ids sorted, rollup keys in BTreeMaps): several servers
    // sharing one PostgreSQL database then wait on each other, never deadlock.
    let result = match db.backend {
        Backend::Sqlite => {
            db.write_locked(&mut writer, move |c| {
                Box::pin(async move { write_batch(c, all, now).await })
            })
            .await
        }
        Backend::Postgres => {
            db.write(move |c| Box::pin(async move { write_batch(c, all, now).await }))
                .await
        }
    };
    drop(writer);
    match result {
        Ok(fresh) => {
            let mut counts = vec![0usize; replies.len()];
            for id in &fresh {
                if let Some(job) = owner.get(id) {
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
}

/// Writes raw rows and rollups; returns the ids that were new.
async fn write_batch(
    conn: &mut AnyConnection,
    stored: Vec<Stored>,
    now: i64,
) -> AppResult<HashSet<String>> {
    let day = clock::day_of(now);
    let rows = stored
        .iter()
        .map(|s| {
            let r = &s.rec;
            vec![
                Val::Text(s.id.clone()),
                Val::Text(r.actor.clone()),
                Val::Text(r.target.clone()),
                Val::Text(enum_str(&r.target_type)),
                Val::Text(r.task_type.clone()),
                Val::Text(enum_str(&r.outcome)),
                Val::OptText(r.failure_type.as_ref().map(enum_str)),
                Val::OptText(r.error_layer.as_ref().map(enum_str)),
                Val::Text(enum_str(&r.request_kind)),
                Val::Text(enum_str(&s.class)),
                Val::float(r.latency_ms),
                Val::Text(enum_str(&r.source)),
                Val::OptText(r.node_id.clone()),
                Val::OptText(r.server_version.clone()),
                Val::OptText(r.schema_hash.clone()),
                Val::OptText(r.recorder_version.clone()),
                Val::OptText(r.protocol_version.clone()),
                Val::Text(day.clone()),
                Val::Int(now),
            ]
        })
        .collect();
    let inserted: HashSet<String> =
        insert_new(conn, "interactions", COLS, "record_id", "record_id", rows)
            .await?
            .into_iter()
            .collect();
    let fresh: Vec<&Stored> = stored.iter().filter(|s| inserted.contains(&s.id)).collect();
    if fresh.is_empty() {
        return Ok(inserted);
    }

    let t = |s: &str| Val::Text(s.to_owned());
    let mut targets = BTreeMap::new();
    let mut by_target = BTreeMap::new();
    let mut by_task = BTreeMap::new();
    let mut by_day = BTreeMap::new();
    let mut by_version = BTreeMap::new();
    let mut by_schema = BTreeMap::new();
    let mut nodes: BTreeMap<Vec<Val>, i64> = BTreeMap::new();
    let mut node_days = BTreeMap::new();
    let mut node_targets = BTreeMap::new();
    for s in &fresh {
        let r = &s.rec;
        let (target, task) = (r.target.as_str(), r.task_type.as_str());
        let (source, class) = (enum_str(&r.source), enum_str(&s.class));
        targets
            .entry(target.to_owned())
            .or_insert_with(|| name_key(target));
        *by_target
            .entry(vec![t(target), t(&source), t(&class)])
            .or_insert(0) += 1;
        let failure = r.failure_type.as_ref().map(enum_str).unwrap_or_default();
        *by_task
            .entry(vec![t(target), t(task), t(&source), t(&class), t(&failure)])
            .or_insert(0) += 1;
        *by_day
            .entry(vec![t(target), t(task), t(&day), t(&source), t(&class)])
            .or_insert(0) += 1;
        let version = r.server_version.clone().unwrap_or_default();
        *by_version
            .entry(vec![t(target), t(task), t(&version), t(&source), t(&class)])
            .or_insert(0) += 1;
        let hash = r.schema_hash.clone().unwrap_or_default();
        *by_schema
            .entry(vec![t(target), t(task), t(&hash), t(&source), t(&class)])
            .or_insert(0) += 1;
        if let Some(node) = &r.node_id {
            *nodes.entry(vec![t(node)]).or_insert(0) += 1;
            *node_days.entry(vec![t(node), t(&day)]).or_insert(0) += 1;
            *node_targets.entry(vec![t(node), t(target)]).or_insert(0) += 1;
        }
    }
    let target_rows = targets
        .into_iter()
        .map(|(target, key)| vec![Val::Text(target), Val::Text(key), Val::Int(now)])
        .collect();
    insert_ignore(
        conn,
        "targets",
        &["target", "name_key", "first_seen"],
        "target",
        target_rows,
    )
    .await?;
    add_counts(
        conn,
        "rollup_targets",
        &["target", "source", "outcome_class"],
        by_target,
    )
    .await?;
    let task_keys = [
        "target",
        "task_type",
        "source",
        "outcome_class",
        "failure_type",
    ];
    add_counts(conn, "rollup_tasks", &task_keys, by_task).await?;
    let day_keys = ["target", "task_type", "day", "source", "outcome_class"];
    add_counts(conn, "rollup_days", &day_keys, by_day).await?;
    let version_keys = [
        "target",
        "task_type",
        "server_version",
        "source",
        "outcome_class",
    ];
    add_counts(conn, "rollup_versions", &version_keys, by_version).await?;
    let schema_keys = [
        "target",
        "task_type",
        "schema_hash",
        "source",
        "outcome_class",
    ];
    add_counts(conn, "rollup_schemas", &schema_keys, by_schema).await?;
    if !nodes.is_empty() {
        upsert_nodes(conn, nodes, now).await?;
        add_counts(conn, "node_days", &["node_id", "day"], node_days).await?;
        add_counts(conn, "node_targets", &["node_id", "target"], node_targets).await?;
    }
    Ok(inserted)
}

async fn upsert_nodes(
    conn: &mut AnyConnection,
    nodes: BTreeMap<Vec<Val>, i64>,
    now: i64,
) -> AppResult<()> {
    let rows: Vec<Val> = nodes
        .into_iter()
        .flat_map(|(k, n)| {
            k.into_iter()
                .chain([Val::Int(n), Val::Int(now), Val::Int(now)])
        })
        .collect();
    let count = rows.len() / 4;
    let sql = format!(
        "INSERT INTO nodes (node_id, interactions, first_seen, last_seen) VALUES {} \
         ON CONFLICT (node_id) DO UPDATE SET interactions = nodes.interactions + excluded.interactions, \
         last_seen = excluded.last_seen",
        super::upsert::placeholders(super::upsert::is_sqlite(conn), count, 4)
    );
    super::upsert::bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), rows)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
