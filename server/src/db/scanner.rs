//! What a scan run writes: the run row, the Registry declarations and their changes, the
//! cohort, the members it skipped, observations and the private tool definitions.
//!
//! Every write is one transaction; observations are written in small batches as probes
//! finish, so a run that dies halfway keeps everything it completed.

use std::collections::{BTreeMap, BTreeSet};

use lowdown_core::days::parse_iso;
use lowdown_core::scanner::cohort::{self, Plan};
use lowdown_core::scanner::registry::{changes, Declaration, Entry};
use lowdown_core::scanner::{MissingReason, Observation, ToolDefinition};
use lowdown_core::target_label::lookup_form;
use sqlx::{AnyConnection, Row};

use crate::db::lease::Fence;
use crate::db::observations::declaration;
use crate::db::upsert::{insert_ignore, where_in, write, Val};
use crate::db::Db;
use crate::db::{DbError, DbResult};
use crate::names::{enum_str, name_key};

/// Most rows per statement: a day's Registry holds tens of thousands of entries, and one
/// statement per 30,000 parameters would make the Registry phase the run's memory peak.
const WRITE_ROWS: usize = 500;

/// [`insert_ignore`] in statements of at most [`WRITE_ROWS`] rows.
async fn insert_rows(
    conn: &mut AnyConnection,
    table: &str,
    cols: &[&str],
    conflict: &str,
    rows: Vec<Vec<Val>>,
) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(WRITE_ROWS) {
        insert_ignore(conn, table, cols, conflict, chunk).await?;
    }
    Ok(())
}

fn json_text<T: serde::Serialize>(v: &T) -> DbResult<String> {
    serde_json::to_string(v).map_err(DbError::internal)
}

/// `INSERT … ON CONFLICT (key) DO UPDATE SET c = excluded.c` for each of `update`.
async fn upsert(
    conn: &mut AnyConnection,
    table: &str,
    cols: &[&str],
    key: &str,
    update: &[&str],
    rows: Vec<Vec<Val>>,
) -> Result<(), sqlx::Error> {
    let set = update
        .iter()
        .map(|c| format!("{c} = excluded.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let tail = format!("ON CONFLICT ({key}) DO UPDATE SET {set}");
    for chunk in rows.chunks(WRITE_ROWS) {
        write(conn, table, cols, chunk, &tail).await?;
    }
    Ok(())
}

/// Records the start of a run.
pub async fn start_run(db: &Db, id: &str, day: &str, started_at: i64, url: &str) -> DbResult<()> {
    let row = vec![
        Val::Text(id.to_owned()),
        Val::Text(day.to_owned()),
        Val::Int(started_at),
        Val::Text("running".into()),
        Val::Int(0),
        Val::Text(url.to_owned()),
    ];
    db.write(move |conn| {
        Box::pin(async move {
            let cols = [
                "scan_run_id",
                "day",
                "started_at",
                "status",
                "registry_ok",
                "registry_url",
            ];
            insert_ignore(conn, "scan_runs", &cols, "scan_run_id", &[row]).await?;
            Ok(())
        })
    })
    .await
}

/// Records how a run ended, when `fence` still holds (`false`, nothing written, when not:
/// the run is another holder's now).
pub async fn finish_run(
    db: &Db,
    fence: Fence,
    id: &str,
    status: &str,
    finished_at: i64,
    cohort_version: Option<u64>,
    summary: &serde_json::Value,
) -> DbResult<bool> {
    let (id, status, summary) = (id.to_owned(), status.to_owned(), summary.to_string());
    db.write(move |conn| {
        Box::pin(async move {
            if !fence.holds(conn).await? {
                return Ok(false);
            }
            sqlx::query(
                "UPDATE scan_runs SET status = $1, finished_at = $2, cohort_version = $3, summary = $4 \
                 WHERE scan_run_id = $5",
            )
            .bind(status)
            .bind(finished_at)
            .bind(cohort_version.map(|v| v as i64))
            .bind(summary)
            .bind(id)
            .execute(&mut *conn)
            .await?;
            Ok(true)
        })
    })
    .await
}

/// The start of run `id` when it can be resumed on `day`: a run of that day reading
/// `registry_url` that never finished, or stopped as `failed` (its holder lost the lease or
/// its storage failed). `None` for anything else, including an id no run has.
pub async fn resumable(db: &Db, id: &str, day: &str, registry_url: &str) -> DbResult<Option<i64>> {
    let row = sqlx::query(
        "SELECT started_at FROM scan_runs WHERE scan_run_id = $1 AND day = $2 \
         AND registry_url = $3 AND status IN ('running', 'failed')",
    )
    .bind(id.to_owned())
    .bind(day.to_owned())
    .bind(registry_url.to_owned())
    .fetch_optional(&db.pool)
    .await?;
    Ok(match row {
        Some(r) => Some(r.try_get("started_at")?),
        None => None,
    })
}

/// Marks run `id`, taken over from a holder that died, as running again.
pub async fn reopen_run(db: &Db, id: &str) -> DbResult<()> {
    let id = id.to_owned();
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query(
                "UPDATE scan_runs SET status = 'running', finished_at = NULL WHERE scan_run_id = $1",
            )
            .bind(id)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    })
    .await
}

/// The observations run `id` stored so far: `(target, remote_url, reached_level,
/// error_type)` each.
pub async fn run_observations(
    db: &Db,
    id: &str,
) -> DbResult<Vec<(String, String, i64, Option<String>)>> {
    let rows = sqlx::query(
        "SELECT target_id, remote_url, reached_level, error_type FROM scanner_observations \
         WHERE scan_run_id = $1",
    )
    .bind(id.to_owned())
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("target_id")?,
                r.try_get("remote_url")?,
                r.try_get("reached_level")?,
                r.try_get("error_type")?,
            ))
        })
        .collect()
}

/// Whether `day` had its scan: a run that started that day completed, or ended on a
/// failed Registry read (the day's one attempt; the next day reads again).
pub async fn scanned_on(db: &Db, day: &str) -> DbResult<bool> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS n FROM scan_runs WHERE day = $1 \
         AND status IN ('completed', 'registry_failed')",
    )
    .bind(day.to_owned())
    .fetch_one(&db.pool)
    .await?;
    Ok(row.try_get::<i64, _>("n")? > 0)
}

async fn stored_declarations(db: &Db) -> DbResult<BTreeMap<String, Declaration>> {
    let rows =
        sqlx::query("SELECT name, version, status, remote_hosts, listed FROM registry_entries")
            .fetch_all(&db.pool)
            .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("name")?, declaration(r)?)))
        .collect()
}

/// Stores a complete Registry read: every declaration, the changes since the last read,
/// names that left (`listed` false), every name as a target (so `mcp:<name>` resolves
/// before any interaction), and marks the run's Registry read successful. Returns the
/// number of changes recorded.
pub async fn save_registry(
    db: &Db,
    run_id: &str,
    day: &str,
    now: i64,
    entries: &[Entry],
) -> DbResult<usize> {
    let old = stored_declarations(db).await?;
    let mut rows = Vec::with_capacity(entries.len());
    let mut change_rows = Vec::new();
    let mut change = |name: &str, old: &Declaration, new: &Declaration| -> DbResult<()> {
        for c in changes(old, new) {
            change_rows.push(vec![
                Val::Text(name.to_owned()),
                Val::Text(run_id.to_owned()),
                Val::Text(c.field),
                Val::Text(day.to_owned()),
                Val::Text(json_text(&c.from)?),
                Val::Text(json_text(&c.to)?),
            ]);
        }
        Ok(())
    };
    let mut seen = BTreeSet::new();
    let mut targets = Vec::with_capacity(entries.len());
    for e in entries {
        let new = e.declaration();
        if let Some(o) = old.get(&e.name) {
            change(&e.name, o, &new)?;
        }
        seen.insert(e.name.as_str());
        let id = e.target_id();
        targets.push(vec![
            Val::Text(name_key(&id)),
            Val::Text(lookup_form(&id)),
            Val::Text(id),
            Val::Int(now),
        ]);
        rows.push(vec![
            Val::Text(e.name.clone()),
            Val::OptText(e.version.clone()),
            Val::Text(e.status.clone()),
            Val::Text(json_text(&e.remotes)?),
            Val::Text(json_text(&new.remote_hosts)?),
            Val::Text(json_text(&e.packages)?),
            Val::OptText(e.published_at.clone()),
            Val::OptText(e.updated_at.clone()),
            Val::Int(1),
            Val::Text(day.to_owned()),
            Val::Text(day.to_owned()),
            Val::OptText((!e.server_json.is_empty()).then(|| e.server_json.clone())),
            Val::OptText((!e.official_json.is_empty()).then(|| e.official_json.clone())),
            Val::OptInt(e.updated_at.as_deref().and_then(parse_iso)),
        ]);
    }
    let mut gone = Vec::new();
    for (name, o) in old
        .iter()
        .filter(|(n, o)| o.listed && !seen.contains(n.as_str()))
    {
        let left = Declaration {
            listed: false,
            ..o.clone()
        };
        change(name, o, &left)?;
        gone.push(name.clone());
    }
    let n_changes = change_rows.len();
    let run_id = run_id.to_owned();
    db.write(move |conn| {
        Box::pin(async move {
            let cols = [
                "name",
                "version",
                "status",
                "remotes",
                "remote_hosts",
                "packages",
                "published_at",
                "updated_at",
                "listed",
                "first_seen_day",
                "last_seen_day",
                "server_json",
                "official_json",
                "updated_ms",
            ];
            // Everything but the name and the day it was first seen.
            let update = [&cols[1..9], &cols[10..]].concat();
            upsert(conn, "registry_entries", &cols, "name", &update, rows).await?;
            let gone: Vec<&str> = gone.iter().map(String::as_str).collect();
            let unlist = "UPDATE registry_entries SET listed = 0 WHERE name IN {}";
            where_in(conn, unlist, &gone).await?;
            let cols = [
                "name",
                "scan_run_id",
                "field",
                "day",
                "from_value",
                "to_value",
            ];
            insert_rows(
                conn,
                "registry_changes",
                &cols,
                "name, scan_run_id, field",
                change_rows,
            )
            .await?;
            let cols = ["name_key", "lookup_key", "target", "first_seen"];
            insert_rows(conn, "targets", &cols, "target", targets).await?;
            sqlx::query("UPDATE scan_runs SET registry_ok = 1 WHERE scan_run_id = $1")
                .bind(run_id)
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    })
    .await?;
    Ok(n_changes)
}

/// The stored cohort: version, size and members; `None` before the first run.
pub async fn load_cohort(db: &Db) -> DbResult<Option<(u64, u64, BTreeSet<String>)>> {
    let Some(row) = sqlx::query(
        "SELECT cohort_version, size FROM scanner_cohort_versions ORDER BY cohort_version DESC LIMIT 1",
    )
    .fetch_optional(&db.pool)
    .await?
    else {
        return Ok(None);
    };
    let members = sqlx::query("SELECT target_id FROM scanner_cohort")
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(|r| r.try_get::<String, _>("target_id"))
        .collect::<Result<_, _>>()?;
    Ok(Some((
        row.try_get::<i64, _>("cohort_version")? as u64,
        row.try_get::<i64, _>("size")? as u64,
        members,
    )))
}

/// Records a new cohort version and its new members.
pub async fn save_cohort(
    db: &Db,
    plan: &Plan,
    members_after: usize,
    run_id: &str,
    day: &str,
    now: i64,
) -> DbResult<()> {
    let Some(version) = plan.new_version else {
        return Ok(());
    };
    let version = version as i64;
    let rows: Vec<Vec<Val>> = plan
        .add
        .iter()
        .map(|id| {
            vec![
                Val::Text(id.clone()),
                Val::Text(cohort::sort_key(id)),
                Val::Int(version),
                Val::Text(day.to_owned()),
            ]
        })
        .collect();
    let head = vec![
        Val::Int(version),
        Val::Int(plan.size as i64),
        Val::Int(members_after as i64),
        Val::Int(now),
        Val::Text(run_id.to_owned()),
    ];
    db.write(move |conn| {
        Box::pin(async move {
            let cols = [
                "cohort_version",
                "size",
                "members",
                "created_at",
                "scan_run_id",
            ];
            insert_ignore(
                conn,
                "scanner_cohort_versions",
                &cols,
                "cohort_version",
                &[head],
            )
            .await?;
            let cols = ["target_id", "sort_key", "cohort_version", "joined_day"];
            insert_rows(conn, "scanner_cohort", &cols, "target_id", rows).await?;
            Ok(())
        })
    })
    .await
}

/// Records why members were not probed in this run.
pub async fn save_skips(
    db: &Db,
    run_id: &str,
    day: &str,
    skips: &[(String, MissingReason)],
) -> DbResult<()> {
    let rows: Vec<Vec<Val>> = skips
        .iter()
        .map(|(id, reason)| {
            vec![
                Val::Text(run_id.to_owned()),
                Val::Text(id.clone()),
                Val::Text(day.to_owned()),
                Val::Text(enum_str(reason)),
            ]
        })
        .collect();
    db.write(move |conn| {
        Box::pin(async move {
            let cols = ["scan_run_id", "target_id", "day", "reason"];
            insert_rows(conn, "scanner_skips", &cols, "scan_run_id, target_id", rows).await?;
            Ok(())
        })
    })
    .await
}

/// The id the next observation gets (ids are assigned by the lease holder, in order).
pub async fn next_observation_id(db: &Db) -> DbResult<i64> {
    let row = sqlx::query("SELECT COALESCE(MAX(id), 0) AS last FROM scanner_observations")
        .fetch_one(&db.pool)
        .await?;
    Ok(row.try_get::<i64, _>("last")? + 1)
}

/// Writes observations with ids from `first_id` on, and their definitions (each distinct
/// definition once), when `fence` still holds: `false`, nothing written, when it does not
/// (ids are assigned by the holder, so a holder that lost the lease must not write).
pub async fn write_observations(
    db: &Db,
    fence: Fence,
    first_id: i64,
    day: &str,
    now: i64,
    batch: Vec<(Observation, Vec<ToolDefinition>)>,
) -> DbResult<bool> {
    let mut rows = Vec::with_capacity(batch.len());
    let mut defs: BTreeMap<String, String> = BTreeMap::new();
    for (i, (o, d)) in batch.into_iter().enumerate() {
        let hashes: Vec<&str> = d.iter().map(|x| x.hash.as_str()).collect();
        rows.push(vec![
            Val::Int(first_id + i as i64),
            Val::Text(o.scan_run_id),
            Val::Text(o.target_id),
            Val::Text(o.remote_url),
            Val::Text(day.to_owned()),
            Val::Int(o.observed_at_ms),
            Val::Int(i64::from(o.reached_level)),
            Val::OptInt(o.http_status.map(i64::from)),
            Val::OptText(o.error_type.as_ref().map(enum_str)),
            Val::float(o.latency_ms),
            Val::OptText(o.server_version),
            Val::OptText(o.protocol_version),
            Val::OptInt(o.tool_count.map(|n| n as i64)),
            Val::OptInt(o.tools_has_more.map(i64::from)),
            Val::OptText(o.schema_hash),
            Val::OptText(o.desc_hash),
            Val::OptText(o.name_hash),
            Val::Text(json_text(&o.tool_names)?),
            Val::Int(i64::from(o.www_authenticate)),
            Val::Text(json_text(&hashes)?),
        ]);
        for x in d {
            defs.entry(x.hash).or_insert(x.canonical);
        }
    }
    let defs: Vec<Vec<Val>> = defs
        .into_iter()
        .map(|(h, c)| vec![Val::Text(h), Val::Text(c), Val::Int(now)])
        .collect();
    db.write(move |conn| {
        Box::pin(async move {
            if !fence.holds(conn).await? {
                return Ok(false);
            }
            let cols = [
                "id",
                "scan_run_id",
                "target_id",
                "remote_url",
                "day",
                "observed_at",
                "reached_level",
                "http_status",
                "error_type",
                "latency_ms",
                "server_version",
                "protocol_version",
                "tool_count",
                "tools_has_more",
                "schema_hash",
                "desc_hash",
                "name_hash",
                "tool_names",
                "www_authenticate",
                "definition_hashes",
            ];
            insert_rows(conn, "scanner_observations", &cols, "id", rows).await?;
            let cols = ["definition_hash", "definition", "first_seen_at"];
            insert_rows(
                conn,
                "scanner_tool_definitions",
                &cols,
                "definition_hash",
                defs,
            )
            .await?;
            Ok(true)
        })
    })
    .await
}
