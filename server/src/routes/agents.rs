//! `POST /v1/auth/agents/register`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use serde_json::Value;

use crate::db::agents::{register as store, NewAgent};
use crate::db::quota::Quota;
use crate::error::{AppError, AppResult};
use crate::extract::{JsonBody, Origin};
use crate::state::AppState;

/// Longest value of each registration field, in characters.
pub const MAX_FIELD: usize = 128;

/// The answer of `POST /api/agents/register`: the new agent's id and its key (shown once).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "AgentKey")]
pub struct Registered {
    /// The agent's public id (`ag_…`).
    pub agent_id: String,
    /// The secret key to send as `X-Agent-Key` (`ak_…`); Lowdown keeps only its hash.
    pub agent_key: String,
}

fn field(body: &Value, key: &str) -> AppResult<String> {
    match body.get(key) {
        None | Some(Value::Null) => Err(AppError::bad_request(format!("{key}: missing"))),
        Some(Value::String(s)) => {
            crate::extract::check_name(key, s, MAX_FIELD)?;
            Ok(s.clone())
        }
        Some(_) => Err(AppError::bad_request(format!("{key}: must be a string"))),
    }
}

/// Registers an agent; the key (`ak_…`) is returned once and stored only as a hash. An
/// optional `public_key` (base64 Ed25519) verifies the agent's receipt signatures. At most
/// 10 registrations per sliding hour per network (an IPv4 /24, an IPv6 /48; none from a
/// trusted network): past that, 429 with `Retry-After`.
pub async fn register(
    State(state): State<AppState>,
    origin: Origin,
    JsonBody(body): JsonBody,
) -> AppResult<(StatusCode, Json<Registered>)> {
    if !body.is_object() {
        return Err(AppError::bad_request("body: must be a JSON object"));
    }
    let agent = NewAgent {
        name: field(&body, "name")?,
        model_provider: field(&body, "model_provider")?,
        model_id: field(&body, "model_id")?,
        environment: field(&body, "environment")?,
        public_key: match body.get("public_key") {
            None | Some(Value::Null) => None,
            Some(Value::String(k)) if lowdown_core::gateway::receipt::valid_public_key(k) => {
                Some(k.clone())
            }
            Some(_) => {
                return Err(AppError::bad_request(
                    "public_key: must be a base64 Ed25519 public key (32 bytes)",
                ))
            }
        },
    };
    let quota = (!origin.trusted)
        .then(|| Quota::registrations(state.db.caller_secret(), &state.limits, origin.ip));
    let r = store(&state.db, agent, state.now(), quota).await?;
    Ok((
        StatusCode::CREATED,
        Json(Registered {
            agent_id: r.agent_id,
            agent_key: r.agent_key,
        }),
    ))
}
