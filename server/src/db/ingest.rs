//! Ingest of interaction records: raw rows plus every rollup, in one transaction.

use std::collections::{BTreeMap, HashSet};

use lowdown_core::aggregate::{outcome_class, OutcomeClass};
use lowdown_core::record::InteractionRecord;
use sqlx::AnyConnection;

use super::upsert::{add_counts, insert_ignore, insert_new, Val};
use super::{random_id, Db};
use crate::clock;
use crate::error::AppResult;
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

/// A validated record with what the server adds: its id, class and time.
struct Stored {
    id: String,
    rec: InteractionRecord,
    class: OutcomeClass,
}

/// Stores `records` (already validated): one transaction, multi-row statements. A record
/// whose `record_id` is already stored (or repeated in the batch) is skipped. Returns how
/// many records were new.
pub async fn store_interactions(db: &Db, records: Vec<InteractionRecord>, now: i64) -> AppResult<usize> {
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
    // One order for every writer: concurrent batches sharing record_ids then wait on each
    // other instead of deadlocking (PostgreSQL).
    stored.sort_by(|a, b| a.id.cmp(&b.id));
    db.write(move |conn| Box::pin(async move { write_batch(conn, stored, now).await })).await
}

async fn write_batch(conn: &mut AnyConnection, stored: Vec<Stored>, now: i64) -> AppResult<usize> {
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
        insert_new(conn, "interactions", COLS, "record_id", "record_id", rows).await?.into_iter().collect();
    let fresh: Vec<&Stored> = stored.iter().filter(|s| inserted.contains(&s.id)).collect();
    if fresh.is_empty() {
        return Ok(0);
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
        targets.entry(target.to_owned()).or_insert_with(|| name_key(target));
        *by_target.entry(vec![t(target), t(&source), t(&class)]).or_insert(0) += 1;
        let failure = r.failure_type.as_ref().map(enum_str).unwrap_or_default();
        *by_task.entry(vec![t(target), t(task), t(&source), t(&class), t(&failure)]).or_insert(0) += 1;
        *by_day.entry(vec![t(target), t(task), t(&day), t(&source), t(&class)]).or_insert(0) += 1;
        let version = r.server_version.clone().unwrap_or_default();
        *by_version.entry(vec![t(target), t(task), t(&version), t(&source), t(&class)]).or_insert(0) += 1;
        let hash = r.schema_hash.clone().unwrap_or_default();
        *by_schema.entry(vec![t(target), t(task), t(&hash), t(&source), t(&class)]).or_insert(0) += 1;
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
    insert_ignore(conn, "targets", &["target", "name_key", "first_seen"], "target", target_rows).await?;
    add_counts(conn, "rollup_targets", &["target", "source", "outcome_class"], by_target).await?;
    let task_keys = ["target", "task_type", "source", "outcome_class", "failure_type"];
    add_counts(conn, "rollup_tasks", &task_keys, by_task).await?;
    let day_keys = ["target", "task_type", "day", "source", "outcome_class"];
    add_counts(conn, "rollup_days", &day_keys, by_day).await?;
    let version_keys = ["target", "task_type", "server_version", "source", "outcome_class"];
    add_counts(conn, "rollup_versions", &version_keys, by_version).await?;
    let schema_keys = ["target", "task_type", "schema_hash", "source", "outcome_class"];
    add_counts(conn, "rollup_schemas", &schema_keys, by_schema).await?;
    if !nodes.is_empty() {
        upsert_nodes(conn, nodes, now).await?;
        add_counts(conn, "node_days", &["node_id", "day"], node_days).await?;
        add_counts(conn, "node_targets", &["node_id", "target"], node_targets).await?;
    }
    Ok(fresh.len())
}

async fn upsert_nodes(conn: &mut AnyConnection, nodes: BTreeMap<Vec<Val>, i64>, now: i64) -> AppResult<()> {
    let rows: Vec<Val> = nodes
        .into_iter()
        .flat_map(|(k, n)| k.into_iter().chain([Val::Int(n), Val::Int(now), Val::Int(now)]))
        .collect();
    let count = rows.len() / 4;
    let sql = format!(
        "INSERT INTO nodes (node_id, interactions, first_seen, last_seen) VALUES {} \
         ON CONFLICT (node_id) DO UPDATE SET interactions = nodes.interactions + excluded.interactions, \
         last_seen = excluded.last_seen",
        super::upsert::placeholders(super::upsert::is_sqlite(conn), count, 4)
    );
    super::upsert::bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), rows).execute(&mut *conn).await?;
    Ok(())
}
