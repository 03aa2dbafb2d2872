//! Latency of rated organic tool calls (`rollup_latency`, migration 0003): a histogram per
//! target and task over the core's latency buckets plus the exact sum, written with the
//! other rollups (see [`super::rollup::RULES`]); the answer's `latency_ms{avg,p50,p95}` comes
//! from it.

use lowdown_core::aggregate::{latency_summary, LatencySummary};
use lowdown_core::telemetry::LATENCY_BUCKETS_MS;
use sqlx::Row;

use super::{get_u64, Db};
use crate::db::DbResult;

/// `latency_ms{avg,p50,p95}` of `target` (optionally one task); `None` when no rated
/// organic call carried a latency.
pub async fn summary(
    db: &Db,
    target: &str,
    task: Option<&str>,
) -> DbResult<Option<LatencySummary>> {
    db.settle().await?;
    let (histogram, sum_ms) = read(db, target, task).await?;
    Ok(latency_summary(&histogram, sum_ms))
}

/// The histogram behind [`summary`]: each bucket's upper bound (ms) and the rated organic
/// calls in it; the sum of the counts is the sample of `latency_ms`.
pub async fn histogram(db: &Db, target: &str, task: Option<&str>) -> DbResult<Vec<(f64, u64)>> {
    db.settle().await?;
    let (histogram, _) = read(db, target, task).await?;
    Ok(LATENCY_BUCKETS_MS.iter().copied().zip(histogram).collect())
}

async fn read(db: &Db, target: &str, task: Option<&str>) -> DbResult<(Vec<u64>, f64)> {
    let mut sql =
        "SELECT bucket, CAST(SUM(n) AS BIGINT) AS n, SUM(sum_ms) AS sum_ms FROM rollup_latency \
                   WHERE target = $1"
            .to_owned();
    if task.is_some() {
        sql.push_str(" AND task_type = $2");
    }
    sql.push_str(" GROUP BY bucket");
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(target.to_owned());
    if let Some(t) = task {
        q = q.bind(t.to_owned());
    }
    let mut histogram = vec![0u64; LATENCY_BUCKETS_MS.len()];
    let mut sum_ms = 0.0;
    for row in q.fetch_all(&db.pool).await? {
        let bucket: i64 = row.try_get("bucket")?;
        if let Some(slot) = usize::try_from(bucket)
            .ok()
            .and_then(|b| histogram.get_mut(b))
        {
            *slot += get_u64(&row, "n")?;
            sum_ms += row.try_get::<f64, _>("sum_ms")?;
        }
    }
    Ok((histogram, sum_ms))
}
