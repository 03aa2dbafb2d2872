//! Reads behind the daily record (`crate::daily`): one UTC day's runs, observations, skips
//! and Registry changes, as typed rows, plus the fingerprint its cache keys on.

use lowdown_core::scanner::history::StoredObservation;
use sqlx::Row;

use crate::db::observations::{observation, OBS_COLS};
use crate::db::{get_u64, Db, DbResult};

/// A scan run of the day as stored.
#[derive(sqlx::FromRow)]
pub struct RunRow {
    /// Its id.
    pub scan_run_id: String,
    /// Its UTC day.
    pub day: String,
    /// `running`, `completed`, ...
    pub status: String,
    /// Unix ms.
    pub started_ms: i64,
    /// Unix ms, once it ended.
    pub finished_ms: Option<i64>,
    /// The stored summary (JSON), once it ended.
    pub summary: Option<String>,
}

/// Observations of the day with one (level, status, error type), counted.
#[derive(sqlx::FromRow)]
pub struct ObservationCount {
    /// The reached level.
    pub reached_level: i64,
    /// The HTTP status, if any answer came.
    pub http_status: Option<i64>,
    /// The error type, if any.
    pub error_type: Option<String>,
    /// How many.
    #[sqlx(try_from = "i64")]
    pub n: u64,
}

/// A Registry declaration change of the day as stored (values as JSON text).
#[derive(sqlx::FromRow)]
pub struct ChangeRow {
    /// The entry's name.
    pub name: String,
    /// The field that changed.
    pub field: String,
    /// The value before (JSON).
    pub from_value: String,
    /// The value after (JSON).
    pub to_value: String,
}

/// A column whose first-observed values the record lists.
#[derive(Debug, Clone, Copy)]
pub enum FirstColumn {
    /// `server_version`.
    ServerVersion,
    /// `schema_hash`.
    SchemaHash,
}

/// What the daily cache keys a day on: its runs' count, latest start and end, and its
/// observations, skips and Registry changes, counted.
pub type Fingerprint = [i64; 6];

/// The days with a scan run, newest first, at most `limit`.
pub async fn days(db: &Db, limit: i64) -> DbResult<Vec<String>> {
    let rows = sqlx::query("SELECT DISTINCT day FROM scan_runs ORDER BY day DESC LIMIT $1")
        .bind(limit)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(|r| Ok(r.try_get("day")?)).collect()
}

/// The runs of `day`, in start order.
pub async fn runs(db: &Db, day: &str) -> DbResult<Vec<RunRow>> {
    Ok(sqlx::query_as(
        "SELECT scan_run_id, day, status, started_at AS started_ms, finished_at AS finished_ms, \
         summary FROM scan_runs WHERE day = $1 ORDER BY started_at, scan_run_id",
    )
    .bind(day.to_owned())
    .fetch_all(&db.pool)
    .await?)
}

/// The observations of `day`, counted per (level, status, error type).
pub async fn observation_counts(db: &Db, day: &str) -> DbResult<Vec<ObservationCount>> {
    Ok(sqlx::query_as(
        "SELECT reached_level, http_status, error_type, COUNT(*) AS n FROM scanner_observations \
         WHERE day = $1 GROUP BY reached_level, http_status, error_type",
    )
    .bind(day.to_owned())
    .fetch_all(&db.pool)
    .await?)
}

/// How many servers had a probe attempt on `day` (blocked URLs aside).
pub async fn observed_targets(db: &Db, day: &str) -> DbResult<u64> {
    Ok(get_u64(
        &sqlx::query(
            "SELECT COUNT(DISTINCT target_id) AS n FROM scanner_observations \
             WHERE day = $1 AND (error_type IS NULL OR error_type <> 'blocked_url')",
        )
        .bind(day.to_owned())
        .fetch_one(&db.pool)
        .await?,
        "n",
    )?)
}

/// The Registry changes of `day`, by name and field.
pub async fn registry_changes(db: &Db, day: &str) -> DbResult<Vec<ChangeRow>> {
    Ok(sqlx::query_as(
        "SELECT name, field, from_value, to_value FROM registry_changes WHERE day = $1 ORDER BY name, field",
    )
    .bind(day.to_owned())
    .fetch_all(&db.pool)
    .await?)
}

/// Cohort members not probed on `day`, per reason.
pub async fn skip_reasons(db: &Db, day: &str) -> DbResult<Vec<(String, u64)>> {
    let rows = sqlx::query(
        "SELECT reason, COUNT(*) AS n FROM scanner_skips WHERE day = $1 GROUP BY reason",
    )
    .bind(day.to_owned())
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("reason")?, get_u64(r, "n")?)))
        .collect()
}

/// Level-2 observations of `day`, and each remote's last level-2 observation before it,
/// as (target, observation, earlier).
pub async fn level2_observations(
    db: &Db,
    day: &str,
) -> DbResult<Vec<(String, StoredObservation, bool)>> {
    let today = format!("SELECT {OBS_COLS}, target_id FROM scanner_observations WHERE day = $1 AND reached_level = 2");
    let before = format!(
        "SELECT {OBS_COLS}, target_id FROM scanner_observations WHERE id IN (\
         SELECT MAX(p.id) FROM scanner_observations p JOIN (SELECT DISTINCT target_id, remote_url \
         FROM scanner_observations WHERE day = $1 AND reached_level = 2) d \
         ON p.target_id = d.target_id AND p.remote_url = d.remote_url \
         WHERE p.day < $2 AND p.reached_level = 2 GROUP BY p.target_id, p.remote_url)"
    );
    let mut out = Vec::new();
    for (sql, earlier) in [(today, false), (before, true)] {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(day.to_owned());
        if earlier {
            q = q.bind(day.to_owned());
        }
        for r in &q.fetch_all(&db.pool).await? {
            out.push((r.try_get("target_id")?, observation(r)?, earlier));
        }
    }
    Ok(out)
}

/// (target, value) of `column` values observed on `day` for a server for the first time.
pub async fn first_values(
    db: &Db,
    day: &str,
    column: FirstColumn,
) -> DbResult<Vec<(String, String)>> {
    let column = match column {
        FirstColumn::ServerVersion => "server_version",
        FirstColumn::SchemaHash => "schema_hash",
    };
    let sql = format!(
        "SELECT o.target_id AS target_id, o.{column} AS value FROM scanner_observations o WHERE o.day = $1 \
         AND o.{column} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM scanner_observations p \
         WHERE p.target_id = o.target_id AND p.{column} = o.{column} AND p.day < $2) \
         GROUP BY o.target_id, o.{column} ORDER BY o.target_id, o.{column}"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(day.to_owned())
        .bind(day.to_owned())
        .fetch_all(&db.pool)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("target_id")?, r.try_get("value")?)))
        .collect()
}

/// Servers observed on `day` for the first time, sorted.
pub async fn first_targets(db: &Db, day: &str) -> DbResult<Vec<String>> {
    let rows = sqlx::query(
        "SELECT DISTINCT o.target_id AS target_id FROM scanner_observations o WHERE o.day = $1 AND NOT EXISTS \
         (SELECT 1 FROM scanner_observations p WHERE p.target_id = o.target_id AND p.day < $2) \
         ORDER BY o.target_id",
    )
    .bind(day.to_owned())
    .bind(day.to_owned())
    .fetch_all(&db.pool)
    .await?;
    rows.iter().map(|r| Ok(r.try_get("target_id")?)).collect()
}

async fn count(db: &Db, table: &str, day: &str) -> DbResult<i64> {
    // `table` is one of the fixed names below, never input.
    let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE day = $1");
    Ok(sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(day.to_owned())
        .fetch_one(&db.pool)
        .await?
        .try_get("n")?)
}

/// The [`Fingerprint`] of `day`.
pub async fn fingerprint(db: &Db, day: &str) -> DbResult<Fingerprint> {
    let runs = sqlx::query(
        "SELECT COUNT(*) AS n, COALESCE(MAX(started_at), 0) AS started, COALESCE(MAX(finished_at), 0) AS finished FROM scan_runs WHERE day = $1",
    )
    .bind(day.to_owned())
    .fetch_one(&db.pool)
    .await?;
    Ok([
        runs.try_get("n")?,
        runs.try_get("started")?,
        runs.try_get("finished")?,
        count(db, "scanner_observations", day).await?,
        count(db, "scanner_skips", day).await?,
        count(db, "registry_changes", day).await?,
    ])
}
