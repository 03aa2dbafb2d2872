//! The most-observed targets, for the home page: by agent-reported interactions (every
//! source, as `interactions` counts them) and by Scanner observations in the last 30 days.
//! Two lists, never one ranking that mixes the sources.

use lowdown_core::telemetry::unlisted_target;
use sqlx::Row;

use super::{get_u64, Db};
use crate::db::DbResult;

/// Targets with the most interactions (protocol traffic is not an interaction), most first
/// (ties by name); private hosts never listed.
pub async fn by_interactions(
    db: &Db,
    limit: usize,
    allow_private: bool,
) -> DbResult<Vec<(String, u64)>> {
    db.settle().await?;
    let rows = sqlx::query(
        "SELECT target, CAST(SUM(n) AS BIGINT) AS total FROM rollup_targets WHERE outcome_class <> 'protocol' \
         GROUP BY target ORDER BY total DESC, target LIMIT $1",
    )
    .bind((limit * 4) as i64)
    .fetch_all(&db.pool)
    .await?;
    let mut out = Vec::new();
    for r in &rows {
        let target: String = r.try_get("target")?;
        if unlisted_target(&target, allow_private).is_none() {
            out.push((target, get_u64(r, "total")?));
        }
    }
    out.truncate(limit);
    Ok(out)
}

/// Targets with the most Scanner observations on or after `since` (a UTC day), most first
/// (ties by name).
pub async fn by_observations(db: &Db, since: &str, limit: usize) -> DbResult<Vec<(String, u64)>> {
    let rows = sqlx::query(
        "SELECT target_id, COUNT(*) AS total FROM scanner_observations WHERE day >= $1 \
         GROUP BY target_id ORDER BY total DESC, target_id LIMIT $2",
    )
    .bind(since.to_owned())
    .bind(limit as i64)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("target_id")?, get_u64(r, "total")?)))
        .collect()
}
