//! Reads behind the reputation and compare answers. Every read here touches rollups and
//! the `targets` table only, never raw records, so answers stay flat as records grow.

use std::collections::BTreeMap;

use lowdown_core::aggregate::{Independence, OutcomeClass, SourceCounts, UNSPECIFIED_FAILURE};
use lowdown_core::record::Source;
use sqlx::Row;

use super::{get_u64, Db};
use crate::db::DbResult;
use crate::names::parse_enum;

fn add_row(counts: &mut SourceCounts, source: &str, class: &str, n: u64) {
    if let (Some(s), Some(c)) = (
        parse_enum::<Source>(source),
        parse_enum::<OutcomeClass>(class),
    ) {
        counts.add(s, c, n);
    }
}

/// Counts per source and class for `target`, optionally narrowed to one task.
pub async fn counts(db: &Db, target: &str, task: Option<&str>) -> DbResult<SourceCounts> {
    db.settle().await?;
    let rows =
        match task {
            None => {
                sqlx::query("SELECT source, outcome_class, n FROM rollup_targets WHERE target = $1")
                    .bind(target.to_owned())
                    .fetch_all(&db.pool)
                    .await?
            }
            Some(task) => sqlx::query(
                "SELECT source, outcome_class, CAST(SUM(n) AS BIGINT) AS n FROM rollup_releases \
                 WHERE target = $1 AND task_type = $2 GROUP BY source, outcome_class",
            )
            .bind(target.to_owned())
            .bind(task.to_owned())
            .fetch_all(&db.pool)
            .await?,
        };
    let mut counts = SourceCounts::default();
    for row in rows {
        add_row(
            &mut counts,
            &row.try_get::<String, _>("source")?,
            &row.try_get::<String, _>("outcome_class")?,
            get_u64(&row, "n")?,
        );
    }
    Ok(counts)
}

/// Who stands behind the rated organic records of `target`: distinct contributors and
/// networks, and the records of the network with the most. Kept per target, so an answer
/// narrowed to one task (`?task_type=`) reports the target's (SPEC §5).
pub async fn independence(db: &Db, target: &str) -> DbResult<Independence> {
    db.settle().await?;
    let nets = sqlx::query(
        "SELECT COUNT(*) AS n, COALESCE(MAX(n), 0) AS top FROM rollup_networks WHERE target = $1 AND n > 0",
    )
    .bind(target.to_owned());
    let people = sqlx::query("SELECT COUNT(*) AS n FROM rollup_contributors WHERE target = $1")
        .bind(target.to_owned());
    let (nets, people) = tokio::try_join!(nets.fetch_one(&db.pool), people.fetch_one(&db.pool))?;
    Ok(Independence {
        contributors: get_u64(&people, "n")?,
        networks: get_u64(&nets, "n")?,
        top_network: get_u64(&nets, "top")?,
    })
}

/// Per-task counts: for each task, its counts per source and class, and its rated organic
/// failures per `failure_type` (`unspecified` when none was recorded).
pub async fn task_breakdown(
    db: &Db,
    target: &str,
    task: Option<&str>,
) -> DbResult<BTreeMap<String, (SourceCounts, BTreeMap<String, u64>)>> {
    db.settle().await?;
    // Two statements rather than `($2 = '' OR task_type = $2)`: PostgreSQL plans prepared
    // statements generically, and the OR form scans the whole table.
    let rows = match task {
        None => sqlx::query(
            "SELECT task_type, source, outcome_class, failure_type, CAST(SUM(n) AS BIGINT) AS n \
                 FROM rollup_releases WHERE target = $1 \
                 GROUP BY task_type, source, outcome_class, failure_type",
        )
        .bind(target.to_owned())
        .fetch_all(&db.pool)
        .await?,
        Some(t) => sqlx::query(
            "SELECT task_type, source, outcome_class, failure_type, CAST(SUM(n) AS BIGINT) AS n \
                 FROM rollup_releases WHERE target = $1 AND task_type = $2 \
                 GROUP BY task_type, source, outcome_class, failure_type",
        )
        .bind(target.to_owned())
        .bind(t.to_owned())
        .fetch_all(&db.pool)
        .await?,
    };
    let mut out: BTreeMap<String, (SourceCounts, BTreeMap<String, u64>)> = BTreeMap::new();
    for row in rows {
        let (task, source, class, failure): (String, String, String, String) = (
            row.try_get("task_type")?,
            row.try_get("source")?,
            row.try_get("outcome_class")?,
            row.try_get("failure_type")?,
        );
        let n = get_u64(&row, "n")?;
        let entry = out.entry(task).or_default();
        add_row(&mut entry.0, &source, &class, n);
        if source == "organic" && class == "failure" {
            *entry.1.entry(failure_key(failure)).or_insert(0) += n;
        }
    }
    Ok(out)
}

/// The key of a failure in `failure_types` and `failure_breakdown`: its type, or
/// `unspecified` for a failure recorded without one (so the breakdown sums to the failures).
fn failure_key(stored: String) -> String {
    if stored.is_empty() {
        UNSPECIFIED_FAILURE.to_owned()
    } else {
        stored
    }
}

/// `failure_breakdown{type: n}`: rated organic failures of `target` (optionally one task)
/// per failure type. Rejections (request layer) are not failures and never appear here.
pub async fn failure_breakdown(
    db: &Db,
    target: &str,
    task: Option<&str>,
) -> DbResult<BTreeMap<String, u64>> {
    db.settle().await?;
    let mut sql = "SELECT failure_type, CAST(SUM(n) AS BIGINT) AS n FROM rollup_releases \
                   WHERE target = $1 AND source = 'organic' AND outcome_class = 'failure'"
        .to_owned();
    if task.is_some() {
        sql.push_str(" AND task_type = $2");
    }
    sql.push_str(" GROUP BY failure_type");
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(target.to_owned());
    if let Some(t) = task {
        q = q.bind(t.to_owned());
    }
    let mut out = BTreeMap::new();
    for row in q.fetch_all(&db.pool).await? {
        let n = get_u64(&row, "n")?;
        if n > 0 {
            *out.entry(failure_key(row.try_get("failure_type")?))
                .or_insert(0) += n;
        }
    }
    Ok(out)
}

/// Counts grouped by one rollup dimension (`day`, `server_version` or `schema_hash`),
/// optionally narrowed to one task; `since_day` keeps only days on or after it.
pub async fn grouped(
    db: &Db,
    dimension: Dimension,
    target: &str,
    task: Option<&str>,
    since_day: Option<&str>,
) -> DbResult<BTreeMap<String, SourceCounts>> {
    db.settle().await?;
    let (table, column) = match dimension {
        Dimension::Day => ("rollup_days", "day"),
        Dimension::ServerVersion => ("rollup_releases", "server_version"),
        Dimension::SchemaHash => ("rollup_releases", "schema_hash"),
    };
    // Only the conditions that apply, each bound: see `task_breakdown` on why no OR.
    let mut binds = vec![target.to_owned()];
    let mut conditions = vec!["target = $1".to_owned()];
    if let Some(t) = task {
        binds.push(t.to_owned());
        conditions.push(format!("task_type = ${}", binds.len()));
    }
    if let (Dimension::Day, Some(d)) = (dimension, since_day) {
        binds.push(d.to_owned());
        conditions.push(format!("day >= ${}", binds.len()));
    }
    // table and column come from the match above, never from input.
    let sql = format!(
        "SELECT {column} AS dimension, source, outcome_class, CAST(SUM(n) AS BIGINT) AS n FROM {table} \
         WHERE {} GROUP BY {column}, source, outcome_class",
        conditions.join(" AND ")
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
    for b in binds {
        q = q.bind(b);
    }
    let rows = q.fetch_all(&db.pool).await?;
    let mut out: BTreeMap<String, SourceCounts> = BTreeMap::new();
    for row in rows {
        let key: String = row.try_get("dimension")?;
        let entry = out.entry(key).or_default();
        add_row(
            entry,
            &row.try_get::<String, _>("source")?,
            &row.try_get::<String, _>("outcome_class")?,
            get_u64(&row, "n")?,
        );
    }
    Ok(out)
}

/// A rollup dimension [`grouped`] can group by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// UTC day.
    Day,
    /// The server's reported version ('' when none).
    ServerVersion,
    /// The tools' schema hash ('' when none).
    SchemaHash,
}

/// When organic records first carried each server version and schema hash of `target`:
/// `(kind, value, first_seen)`, kind `server_version` or `schema_hash`.
pub async fn firsts(db: &Db, target: &str) -> DbResult<Vec<(String, String, i64)>> {
    db.settle().await?;
    let rows = sqlx::query("SELECT kind, value, first_seen FROM rollup_firsts WHERE target = $1")
        .bind(target.to_owned())
        .fetch_all(&db.pool)
        .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("kind")?,
                r.try_get("value")?,
                r.try_get("first_seen")?,
            ))
        })
        .collect()
}

/// How many client networks stand behind each server version's rated organic records of
/// `target`.
pub async fn version_networks(
    db: &Db,
    target: &str,
) -> DbResult<std::collections::BTreeMap<String, u64>> {
    db.settle().await?;
    let rows = sqlx::query(
        "SELECT server_version, COUNT(*) AS n FROM rollup_version_networks WHERE target = $1 GROUP BY server_version",
    )
    .bind(target.to_owned())
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("server_version")?,
                r.try_get::<i64, _>("n")? as u64,
            ))
        })
        .collect()
}
