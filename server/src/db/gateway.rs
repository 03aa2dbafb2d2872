//! Storage of the sampling gateway (SPEC §10, migration 0005): salts, ProxyCalls and
//! audits, receipts, abuse flags, and the counts behind agent reputation (its audit job runs
//! under [`super::lease::AUDIT_LEASE`]).

pub mod calls;
pub mod receipts;
pub mod reputation;
pub mod salts;

use sqlx::Row;

use super::{random_id, Db};
use crate::db::DbResult;

/// Records a refused forged or replayed decision or receipt against `agent_id`.
pub async fn flag_agent(
    db: &Db,
    agent_id: &str,
    kind: &str,
    service_id: Option<&str>,
    at: i64,
) -> DbResult<()> {
    let id = random_id("fl_", 12)?;
    let (agent, kind, service) = (
        agent_id.to_owned(),
        kind.to_owned(),
        service_id.map(str::to_owned),
    );
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query("INSERT INTO agent_flags (flag_id, agent_id, kind, service_id, at) VALUES ($1, $2, $3, $4, $5)")
                .bind(id)
                .bind(agent)
                .bind(kind)
                .bind(service)
                .bind(at)
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    })
    .await
}

/// A registered agent as the gateway needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    /// `ag_…`.
    pub agent_id: String,
    /// Unix ms of registration.
    pub created_at: i64,
    /// base64 Ed25519 key, when registered with one.
    pub public_key: Option<String>,
}

/// The agent a key belongs to.
pub async fn agent_by_key(db: &Db, key: &str) -> DbResult<Option<AgentInfo>> {
    agent_where(db, "key_hash", super::agents::key_hash(key)).await
}

/// An agent by id.
pub async fn agent_by_id(db: &Db, agent_id: &str) -> DbResult<Option<AgentInfo>> {
    agent_where(db, "agent_id", agent_id.to_owned()).await
}

async fn agent_where(db: &Db, column: &'static str, value: String) -> DbResult<Option<AgentInfo>> {
    let sql = format!("SELECT agent_id, created_at, public_key FROM agents WHERE {column} = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(value)
        .fetch_optional(&db.pool)
        .await?;
    Ok(match row {
        Some(r) => Some(AgentInfo {
            agent_id: r.try_get("agent_id")?,
            created_at: r.try_get("created_at")?,
            public_key: r.try_get("public_key")?,
        }),
        None => None,
    })
}
