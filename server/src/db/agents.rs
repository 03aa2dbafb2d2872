//! Registered agents and their keys. Only the sha256 of a key is stored: keys are 192
//! random bits, so a fast hash is enough (no password-style stretching needed).

use sha2::{Digest, Sha256};
use sqlx::Row;

use super::{random_id, Db};
use crate::db::quota::{Draws, Quota};
use crate::db::DbResult;

/// What an agent registers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAgent {
    /// Display name.
    pub name: String,
    /// e.g. `anthropic`.
    pub model_provider: String,
    /// e.g. `claude-sonnet-4`.
    pub model_id: String,
    /// e.g. `production`.
    pub environment: String,
    /// base64 Ed25519 key that verifies the agent's receipt signatures (SPEC §10).
    pub public_key: Option<String>,
}

/// A freshly registered agent: the key is shown once and never stored in clear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// `ag_` + 16 hex.
    pub agent_id: String,
    /// `ak_` + 48 hex.
    pub agent_key: String,
}

/// Lowercase hex sha256 of a key.
pub fn key_hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Registers an agent and returns its new key. With a `quota` (the network's registration
/// budget) the registration is counted in the same transaction; over the limit the answer
/// is [`DbError::RateLimited`] and nothing is written.
pub async fn register(
    db: &Db,
    agent: NewAgent,
    now: i64,
    quota: Option<Quota>,
) -> DbResult<Registered> {
    let agent_id = random_id("ag_", 8)?;
    let agent_key = random_id("ak_", 24)?;
    let hash = key_hash(&agent_key);
    let id = agent_id.clone();
    db.write(move |conn| {
        Box::pin(async move {
            if let Some(q) = quota {
                let mut draws = Draws::default();
                let i = draws.quota(q.clone());
                draws.item(vec![i]);
                let taken = crate::db::quota::take(conn, &draws, now, false).await?;
                if let Some(r) = taken.items[0] {
                    return Err(q.refusal(r.retry_after_secs));
                }
            }
            sqlx::query(
                "INSERT INTO agents (agent_id, key_hash, name, model_provider, model_id, environment, created_at, public_key) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(id)
            .bind(hash)
            .bind(agent.name)
            .bind(agent.model_provider)
            .bind(agent.model_id)
            .bind(agent.environment)
            .bind(now)
            .bind(agent.public_key)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    })
    .await?;
    Ok(Registered {
        agent_id,
        agent_key,
    })
}

/// The agent behind a key, as writes see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHolder {
    /// Its id.
    pub agent_id: String,
    /// How far the key has earned its weight.
    pub standing: lowdown_core::telemetry::KeyStanding,
}

/// The agent a key belongs to, or `None` for an unknown key.
pub async fn agent_for_key(db: &Db, key: &str) -> DbResult<Option<KeyHolder>> {
    let row = sqlx::query("SELECT agent_id, created_at, accepted FROM agents WHERE key_hash = $1")
        .bind(key_hash(key))
        .fetch_optional(&db.pool)
        .await?;
    Ok(match row {
        Some(r) => Some(KeyHolder {
            agent_id: r.try_get("agent_id")?,
            standing: lowdown_core::telemetry::KeyStanding {
                registered_at_ms: r.try_get("created_at")?,
                accepted: super::get_u64(&r, "accepted")?,
            },
        }),
        None => None,
    })
}
