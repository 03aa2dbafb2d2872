//! Who may do what in provider mode: the operator holds `LOWDOWN_ADMIN_TOKEN` (no token
//! configured: posting directives is refused); a provider is a registered agent that
//! registered once more as a provider, and names itself with its `X-Agent-Key`.

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::Json;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::clock::iso;
use crate::db::provider::{self as store, Provider};
use crate::error::AppError;
use crate::state::AppState;

/// The operator's bearer token must be this long at least (checked at start).
pub const MIN_ADMIN_TOKEN_CHARS: usize = 16;

/// The operator's token from the `LOWDOWN_ADMIN_TOKEN` value: unset or empty is none
/// (posting directives is refused); a short one is an error at start.
pub fn admin_token_from_env(value: Option<String>) -> Result<Option<String>, String> {
    match value.map(|v| v.trim().to_owned()) {
        None => Ok(None),
        Some(v) if v.is_empty() => Ok(None),
        Some(v) if v.chars().count() < MIN_ADMIN_TOKEN_CHARS => Err(format!(
            "LOWDOWN_ADMIN_TOKEN: use at least {MIN_ADMIN_TOKEN_CHARS} characters (e.g. `openssl rand -hex 32`)"
        )),
        Some(v) => Ok(Some(v)),
    }
}

/// Accepts only `Authorization: Bearer <LOWDOWN_ADMIN_TOKEN>`.
pub fn admin(state: &AppState, headers: &HeaderMap) -> Result<(), AppError> {
    let Some(token) = state.admin_token.as_deref() else {
        return Err(AppError::refused(
            StatusCode::FORBIDDEN,
            "admin_disabled",
            "directives are disabled on this server: it runs without LOWDOWN_ADMIN_TOKEN",
        ));
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .unwrap_or("");
    // Digests of equal length: the comparison says nothing about the token's prefix.
    if given.is_empty() || Sha256::digest(given) != Sha256::digest(token) {
        return Err(AppError::refused(
            StatusCode::UNAUTHORIZED,
            "admin_token",
            "Authorization: Bearer LOWDOWN_ADMIN_TOKEN required (missing or wrong token)",
        ));
    }
    Ok(())
}

/// The agent behind `X-Agent-Key`: 401 naming what is wrong otherwise.
async fn agent(state: &AppState, headers: &HeaderMap) -> Result<String, AppError> {
    Ok(crate::services::agents::agent_of(state, headers)
        .await?
        .agent_id)
}

/// The provider behind `X-Agent-Key`: 401 without a valid key, 403 for an agent that never
/// registered as a provider.
pub async fn provider(state: &AppState, headers: &HeaderMap) -> Result<Provider, AppError> {
    let agent_id = agent(state, headers).await?;
    store::provider_by_agent(&state.db, &agent_id)
        .await?
        .ok_or_else(|| {
            AppError::refused(
                StatusCode::FORBIDDEN,
                "not_a_provider",
                format!("agent {agent_id} is not a provider: POST /v1/provider/register first"),
            )
        })
}

/// The answer of `POST /v1/provider/register`.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "ProviderRegistration")]
pub struct Registration {
    /// The agent behind the provider.
    pub agent_id: String,
    /// The provider's id.
    pub provider_id: String,
    /// When it registered (ISO-8601).
    pub registered_at: String,
}

/// `POST /v1/provider/register`: makes the agent behind `X-Agent-Key` a provider (201), or
/// answers its existing registration (200). No body is needed.
pub async fn register(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<Registration>), AppError> {
    let agent_id = agent(&state, &headers).await?;
    let now = state.now();
    let (p, created) = store::register_provider(&state.db, &agent_id, now).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(Registration {
            agent_id: p.agent_id,
            provider_id: p.provider_id,
            registered_at: iso(p.created_at),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_admin_token_is_optional_but_never_short() {
        assert_eq!(admin_token_from_env(None), Ok(None));
        assert_eq!(admin_token_from_env(Some("  ".into())), Ok(None));
        assert!(admin_token_from_env(Some("short".into()))
            .unwrap_err()
            .starts_with("LOWDOWN_ADMIN_TOKEN:"));
        assert_eq!(
            admin_token_from_env(Some(" 0123456789abcdef ".into())),
            Ok(Some("0123456789abcdef".into()))
        );
    }
}
