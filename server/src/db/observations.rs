//! Reads of the Scanner's and the Registry's rows for one target's answer (and the daily
//! record's observations): typed facts, the rules applied to them are the core's.

use lowdown_core::scanner::history::{ScannerFacts, StoredObservation};
use lowdown_core::scanner::registry::{Change, Declaration, Package};
use lowdown_core::scanner::MissingReason;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::db::{Db, DbResult};
use crate::names::parse_enum;

/// The columns [`observation`] reads, in order.
pub const OBS_COLS: &str = "day, observed_at, remote_url, reached_level, http_status, error_type, \
    latency_ms, server_version, tool_count, schema_hash, desc_hash, name_hash, tool_names, \
    www_authenticate";

/// One stored observation from a row selected with [`OBS_COLS`], read by column name.
pub fn observation(r: &AnyRow) -> Result<StoredObservation, sqlx::Error> {
    let names: String = r.try_get("tool_names")?;
    Ok(StoredObservation {
        day: r.try_get("day")?,
        observed_at_ms: r.try_get("observed_at")?,
        remote_url: r.try_get("remote_url")?,
        reached_level: r.try_get::<i64, _>("reached_level")? as u8,
        http_status: r
            .try_get::<Option<i64>, _>("http_status")?
            .map(|s| s as u16),
        error_type: r
            .try_get::<Option<String>, _>("error_type")?
            .as_deref()
            .and_then(parse_enum),
        latency_ms: r.try_get("latency_ms")?,
        server_version: r.try_get("server_version")?,
        tool_count: r.try_get::<Option<i64>, _>("tool_count")?.map(|n| n as u64),
        schema_hash: r.try_get("schema_hash")?,
        desc_hash: r.try_get("desc_hash")?,
        name_hash: r.try_get("name_hash")?,
        tool_names: serde_json::from_str(&names).unwrap_or_default(),
        www_authenticate: r.try_get::<i64, _>("www_authenticate")? == 1,
    })
}

/// What a `registry_entries` row selected with `version, status, remote_hosts, listed`
/// declares, read by column name.
pub fn declaration(r: &AnyRow) -> Result<Declaration, sqlx::Error> {
    let hosts: String = r.try_get("remote_hosts")?;
    Ok(Declaration {
        version: r.try_get("version")?,
        status: r.try_get("status")?,
        remote_hosts: serde_json::from_str(&hosts).unwrap_or_default(),
        listed: r.try_get::<i64, _>("listed")? == 1,
    })
}

/// A Registry entry as stored.
pub struct RegistryEntry {
    /// What it declares now.
    pub declaration: Declaration,
    /// The day Lowdown first saw it.
    pub first_seen_day: String,
    /// The packages it declares.
    pub packages: Vec<Package>,
}

/// The Registry entry `name` (without `mcp:`), when the Registry declared it.
pub async fn registry_entry(db: &Db, name: &str) -> DbResult<Option<RegistryEntry>> {
    let Some(row) = sqlx::query(
        "SELECT version, status, remote_hosts, listed, first_seen_day, packages FROM registry_entries WHERE name = $1",
    )
    .bind(name.to_owned())
    .fetch_optional(&db.pool)
    .await?
    else {
        return Ok(None);
    };
    Ok(Some(RegistryEntry {
        declaration: declaration(&row)?,
        first_seen_day: row.try_get("first_seen_day")?,
        packages: serde_json::from_str(&row.try_get::<String, _>("packages")?).unwrap_or_default(),
    }))
}

/// The declaration changes of entry `name` since `since`, as (day, change).
pub async fn registry_changes(db: &Db, name: &str, since: &str) -> DbResult<Vec<(String, Change)>> {
    Ok(sqlx::query(
        "SELECT day, field, from_value, to_value FROM registry_changes WHERE name = $1 AND day >= $2",
    )
    .bind(name.to_owned())
    .bind(since.to_owned())
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| {
        let (from, to): (String, String) = (r.try_get("from_value")?, r.try_get("to_value")?);
        Ok((
            r.try_get::<String, _>("day")?,
            Change {
                field: r.try_get("field")?,
                from: serde_json::from_str(&from).unwrap_or_default(),
                to: serde_json::from_str(&to).unwrap_or_default(),
            },
        ))
    })
    .collect::<Result<Vec<_>, sqlx::Error>>()?)
}

/// The day of the first scan run (with `registry_ok`: the first that read the Registry).
pub async fn first_run_day(db: &Db, registry_ok: bool) -> DbResult<Option<String>> {
    let sql = if registry_ok {
        "SELECT MIN(day) AS first FROM scan_runs WHERE registry_ok = 1"
    } else {
        "SELECT MIN(day) AS first FROM scan_runs"
    };
    Ok(sqlx::query(sql)
        .fetch_one(&db.pool)
        .await?
        .try_get("first")?)
}

/// What the Scanner saw of `target` since `since`, for its answer block.
pub async fn scanner_facts(
    db: &Db,
    target: &str,
    today: String,
    since: &str,
    declaration: Declaration,
) -> DbResult<ScannerFacts> {
    let target = target.to_owned();
    let joined = sqlx::query("SELECT joined_day FROM scanner_cohort WHERE target_id = $1")
        .bind(target.clone())
        .fetch_optional(&db.pool)
        .await?
        .map(|r| r.try_get::<String, _>("joined_day"))
        .transpose()?;
    let first_observed_at_ms: Option<i64> = sqlx::query(
        "SELECT MIN(observed_at) AS first FROM scanner_observations WHERE target_id = $1",
    )
    .bind(target.clone())
    .fetch_one(&db.pool)
    .await?
    .try_get("first")?;
    let mut facts = ScannerFacts {
        target: target.to_string(),
        today,
        first_run_day: first_run_day(db, false).await?,
        joined_day: joined,
        first_observed_at_ms,
        declared_version: declaration.version,
        declared_hosts: declaration.remote_hosts,
        ..ScannerFacts::default()
    };
    if facts.joined_day.is_none() {
        return Ok(facts);
    }
    for r in sqlx::query(
        "SELECT day, CAST(MAX(registry_ok) AS BIGINT) AS registry_ok FROM scan_runs WHERE day >= $1 GROUP BY day",
    )
    .bind(since.to_owned())
    .fetch_all(&db.pool)
    .await?
    {
        facts
            .run_days
            .push((r.try_get("day")?, r.try_get::<i64, _>("registry_ok")? == 1));
    }
    for r in sqlx::query("SELECT day, reason FROM scanner_skips WHERE target_id = $1 AND day >= $2")
        .bind(target.clone())
        .bind(since.to_owned())
        .fetch_all(&db.pool)
        .await?
    {
        let reason: String = r.try_get("reason")?;
        if let Some(reason) = parse_enum::<MissingReason>(&reason) {
            facts.skips.push((r.try_get("day")?, reason));
        }
    }
    let sql =
        format!("SELECT {OBS_COLS} FROM scanner_observations WHERE target_id = $1 AND day >= $2");
    for r in sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(target.clone())
        .bind(since.to_owned())
        .fetch_all(&db.pool)
        .await?
    {
        facts.observations.push(observation(&r)?);
    }
    // Each remote's last level-2 observation before the window: its first day in the
    // window is compared with it.
    let urls: std::collections::BTreeSet<String> = facts
        .observations
        .iter()
        .map(|o| o.remote_url.clone())
        .collect();
    let sql = format!(
        "SELECT {OBS_COLS} FROM scanner_observations WHERE target_id = $1 AND remote_url = $2 \
         AND day < $3 AND reached_level = 2 ORDER BY id DESC LIMIT 1"
    );
    for url in urls {
        if let Some(r) = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
            .bind(target.clone())
            .bind(url)
            .bind(since.to_owned())
            .fetch_optional(&db.pool)
            .await?
        {
            facts.observations.push(observation(&r)?);
        }
    }
    Ok(facts)
}
