//! Reads behind the open dataset (`crate::export`): the observation rows of a month, in
//! `id` order, streamed; the runs and counts its report states.

use futures_util::TryStreamExt;
use sqlx::Row;

use crate::db::daily::{ObservationCount, RunRow};
use crate::db::{get_u64, Db, DbResult};

/// One public observation row, as the CSV writes it.
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
    rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
}

/// Calls `f` with each observation of `month` in `id` order, one row in memory at a time.
pub async fn each_row(db: &Db, month: &str, mut f: impl FnMut(ExportRow)) -> DbResult<()> {
    let mut stream = sqlx::query(
        "SELECT id, scan_run_id, target_id, observed_at, remote_url, http_status, reached_level, \
         latency_ms, error_type, tool_count, server_version, schema_hash FROM scanner_observations \
         WHERE day >= $1 AND day < $2 ORDER BY id",
    )
    .bind(format!("{month}-01"))
    .bind(format!("{month}-99"))
    .fetch(&db.pool);
    while let Some(r) = stream.try_next().await? {
        f(ExportRow {
            id: r.try_get(0)?,
            scan_run_id: r.try_get(1)?,
            target_id: r.try_get(2)?,
            observed_at: r.try_get(3)?,
            remote_url: r.try_get(4)?,
            http_status: r.try_get(5)?,
            reached_level: r.try_get(6)?,
            latency_ms: r.try_get(7)?,
            error_type: r.try_get(8)?,
            tool_count: r.try_get(9)?,
            server_version: r.try_get(10)?,
            schema_hash: r.try_get(11)?,
        });
    }
    Ok(())
}

/// The observations of run `run`, counted per (level, status, error type).
pub async fn run_counts(db: &Db, run: &str) -> DbResult<Vec<ObservationCount>> {
    let rows = sqlx::query(
        "SELECT reached_level, http_status, error_type, COUNT(*) FROM scanner_observations \
         WHERE scan_run_id = $1 GROUP BY reached_level, http_status, error_type",
    )
    .bind(run.to_owned())
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ObservationCount {
                reached_level: r.try_get(0)?,
                http_status: r.try_get(1)?,
                error_type: r.try_get(2)?,
                n: get_u64(r, 3)?,
            })
        })
        .collect()
}

/// The latest `limit` runs, newest first.
pub async fn latest_runs(db: &Db, limit: i64) -> DbResult<Vec<RunRow>> {
    let rows = sqlx::query(
        "SELECT scan_run_id, day, status, started_at, finished_at, summary FROM scan_runs \
         ORDER BY started_at DESC, scan_run_id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(RunRow {
                scan_run_id: r.try_get(0)?,
                day: r.try_get(1)?,
                status: r.try_get(2)?,
                started_ms: r.try_get(3)?,
                finished_ms: r.try_get(4)?,
                summary: r.try_get(5)?,
            })
        })
        .collect()
}

/// The first and last day with observations, and how many servers they cover.
pub async fn span(db: &Db) -> DbResult<(Option<String>, Option<String>, u64)> {
    let span = sqlx::query(
        "SELECT MIN(day), MAX(day), COUNT(DISTINCT target_id) FROM scanner_observations",
    )
    .fetch_one(&db.pool)
    .await?;
    Ok((span.try_get(0)?, span.try_get(1)?, get_u64(&span, 2)?))
}
