//! The registered agent behind a request, and its reputation: what the sampling gateway's
//! API and provider mode both ask.

use axum::http::{HeaderMap, StatusCode};
use lowdown_core::defaults::AGENT_KEY_HEADER;
use lowdown_core::gateway::reputation::{reputation, Reputation};

use crate::db::gateway::{self as store, reputation as counts, AgentInfo};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// The registered agent behind a request's `X-Agent-Key` on the API: 401 naming what is
/// wrong otherwise (the key missing, or not a registered agent's).
pub async fn agent_of(state: &AppState, headers: &HeaderMap) -> Result<AgentInfo, AppError> {
    let unauthorized = |m: &str| AppError::refused(StatusCode::UNAUTHORIZED, "agent_key", m);
    let key = headers
        .get(AGENT_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or_else(|| {
            unauthorized("X-Agent-Key: required (register with POST /v1/auth/agents/register)")
        })?;
    agent(state, key)
        .await?
        .ok_or_else(|| unauthorized("X-Agent-Key: not the key of a registered agent"))
}

/// The registered agent behind `key` (cached: keys are never reassigned).
pub async fn agent(state: &AppState, key: &str) -> Result<Option<AgentInfo>, AppError> {
    let hash = crate::db::agents::key_hash(key);
    if let Some(a) = state
        .prowl
        .agents
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&hash)
    {
        return Ok(Some(a.clone()));
    }
    if !key.starts_with("ak_") || key.len() > 128 {
        return Ok(None);
    }
    let found = store::agent_by_key(&state.db, key).await?;
    if let Some(a) = &found {
        crate::gateway::cache_put(&state.prowl.agents, hash, a.clone());
    }
    Ok(found)
}

/// The seven dimensions of `agent` now.
pub async fn agent_reputation(
    state: &AppState,
    agent: &AgentInfo,
    now: i64,
) -> AppResult<Reputation> {
    let inputs = counts::inputs(&state.db, &agent.agent_id, agent.created_at, now).await?;
    Ok(reputation(&inputs))
}
