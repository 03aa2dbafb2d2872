//! Reads behind `GET /api/node/{node_id}`.

use sqlx::Row;

use super::{get_u64, Db};
use crate::db::DbResult;

/// What one node has contributed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contribution {
    /// Records sent by the node.
    pub interactions: u64,
    /// Distinct targets in those records.
    pub targets_observed: u64,
    /// Distinct UTC days with at least one record.
    pub active_days: u64,
    /// First record, unix ms.
    pub first_seen: i64,
    /// Latest record, unix ms.
    pub last_seen: i64,
    /// Nodes with at most this node's record count.
    pub nodes_at_or_below: u64,
}

/// Network-wide totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    /// Distinct node ids that ever sent a record.
    pub total_nodes: u64,
    /// Every stored record (all sources, all classes).
    pub total_interactions: u64,
}

/// Whether the node ever sent a record: what [`contribution`] answers `Some` for, in one
/// lookup (a reputation request asks this before its contributor detail).
pub async fn has_contributed(db: &Db, node_id: &str) -> DbResult<bool> {
    db.settle().await?;
    let row = sqlx::query("SELECT 1 FROM nodes WHERE node_id = $1")
        .bind(node_id.to_owned())
        .fetch_optional(&db.pool)
        .await?;
    Ok(row.is_some())
}

/// The node's contribution, or `None` when it never sent a record.
pub async fn contribution(db: &Db, node_id: &str) -> DbResult<Option<Contribution>> {
    db.settle().await?;
    let Some(row) =
        sqlx::query("SELECT interactions, first_seen, last_seen FROM nodes WHERE node_id = $1")
            .bind(node_id.to_owned())
            .fetch_optional(&db.pool)
            .await?
    else {
        return Ok(None);
    };
    let interactions: i64 = row.try_get("interactions")?;
    let count = |sql: &'static str| {
        let node = node_id.to_owned();
        async move {
            let row = sqlx::query(sql).bind(node).fetch_one(&db.pool).await?;
            get_u64(&row, "n")
        }
    };
    let targets_observed =
        count("SELECT COUNT(*) AS n FROM node_targets WHERE node_id = $1").await?;
    let active_days = count("SELECT COUNT(*) AS n FROM node_days WHERE node_id = $1").await?;
    let below = sqlx::query("SELECT COUNT(*) AS n FROM nodes WHERE interactions <= $1")
        .bind(interactions)
        .fetch_one(&db.pool)
        .await?;
    Ok(Some(Contribution {
        interactions: u64::try_from(interactions).unwrap_or(0),
        targets_observed,
        active_days,
        first_seen: row.try_get("first_seen")?,
        last_seen: row.try_get("last_seen")?,
        nodes_at_or_below: get_u64(&below, "n")?,
    }))
}

/// Network-wide totals.
pub async fn network(db: &Db) -> DbResult<Network> {
    db.settle().await?;
    let nodes = sqlx::query("SELECT COUNT(*) AS n FROM nodes")
        .fetch_one(&db.pool)
        .await?;
    let records =
        sqlx::query("SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) AS n FROM rollup_targets")
            .fetch_one(&db.pool)
            .await?;
    Ok(Network {
        total_nodes: get_u64(&nodes, "n")?,
        total_interactions: get_u64(&records, "n")?,
    })
}
