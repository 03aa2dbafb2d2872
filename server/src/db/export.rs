//! Reads behind the open dataset (`crate::export`): the observation rows of a month, in
//! `id` order, streamed; the runs and counts its report states.

use futures_util::TryStreamExt;
use sqlx::Row;

use crate::db::daily::{ObservationCount, RunRow};
use crate::db::{get_u64, Db, DbResult};

/// One public observation row, as the CSV writes it.
#[derive(sqlx::FromRow)]
pub struct ExportRow {
    /// Row id (time order).
    pub id: Option<i64>,
    /// Its run.
    pub scan_run_id: Option<String>,
    /// `mcp:<name>`.
    pub target_id: Option<String>,
    /// Unix ms.
    pub observed_at: i64,
    /// The probed remote.
    pub remote_url: Option<String>,
    /// The HTTP status, if any.
    pub http_status: Option<i64>,
    /// The reached level.
    pub reached_level: Option<i64>,
    /// Latency in ms.
    pub latency_ms: Option<f64>,
    /// The error type, if any.
    pub error_type: Option<String>,
    /// Tools listed.
    pub tool_count: Option<i64>,
    /// `serverInfo.version`.
    pub server_version: Option<String>,
    /// The tool schema hash.
    pub schema_hash: Option<String>,
}

/// The months (`YYYY-MM`) with observations, in order.
pub async fn months(db: &Db) -> DbResult<Vec<String>> {
    let rows =
        sqlx::query("SELECT DISTINCT SUBSTR(day, 1, 7) AS m FROM scanner_observations ORDER BY m")
            .fetch_all(&db.pool)
            .await?;
    rows.iter().map(|r| Ok(r.try_get("m")?)).collect()
}

/// Calls `f` with each observation of `month` in `id` order, one row in memory at a time.
pub async fn each_row(db: &Db, month: &str, mut f: impl FnMut(ExportRow)) -> DbResult<()> {
    let mut stream = sqlx::query_as::<_, ExportRow>(
        "SELECT id, scan_run_id, target_id, observed_at, remote_url, http_status, reached_level, \
         latency_ms, error_type, tool_count, server_version, schema_hash FROM scanner_observations \
         WHERE day >= $1 AND day < $2 ORDER BY id",
    )
    .bind(format!("{month}-01"))
    .bind(format!("{month}-99"))
    .fetch(&db.pool);
    while let Some(r) = stream.try_next().await? {
        f(r);
    }
    Ok(())
}

/// The observations of run `run`, counted per (level, status, error type).
pub async fn run_counts(db: &Db, run: &str) -> DbResult<Vec<ObservationCount>> {
    Ok(sqlx::query_as(
        "SELECT reached_level, http_status, error_type, COUNT(*) AS n FROM scanner_observations \
         WHERE scan_run_id = $1 GROUP BY reached_level, http_status, error_type",
    )
    .bind(run.to_owned())
    .fetch_all(&db.pool)
    .await?)
}

/// The latest `limit` runs, newest first.
pub async fn latest_runs(db: &Db, limit: i64) -> DbResult<Vec<RunRow>> {
    Ok(sqlx::query_as(
        "SELECT scan_run_id, day, status, started_at AS started_ms, finished_at AS finished_ms, \
         summary FROM scan_runs ORDER BY started_at DESC, scan_run_id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// The first and last day with observations, and how many servers they cover.
pub async fn span(db: &Db) -> DbResult<(Option<String>, Option<String>, u64)> {
    let span = sqlx::query(
        "SELECT MIN(day) AS first, MAX(day) AS last, COUNT(DISTINCT target_id) AS n FROM scanner_observations",
    )
    .fetch_one(&db.pool)
    .await?;
    Ok((
        span.try_get("first")?,
        span.try_get("last")?,
        get_u64(&span, "n")?,
    ))
}
