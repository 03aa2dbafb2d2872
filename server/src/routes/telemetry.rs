//! `POST /v1/telemetry/observe`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use lowdown_core::defaults::AGENT_KEY_HEADER;
use lowdown_core::telemetry::{
    validate_observations, WeightTier, RATE_LIMIT_PER_IP_PER_HOUR, RATE_LIMIT_PER_KEY_PER_HOUR,
};
use serde_json::{json, Value};

use crate::db::telemetry::{store, Weighed};
use crate::db::{agents, catalog};
use crate::error::{AppError, AppResult};
use crate::extract::{ClientIp, JsonBody};
use crate::ratelimit::Quota;
use crate::state::AppState;

/// Longest agent key header considered (longer is not a key this server issued).
const MAX_KEY_LEN: usize = 128;

/// Accepts one observation or an array (all-or-nothing). Weighs each by agent key and
/// catalog (the core's weights), counts them against the hourly rate limits (shared by
/// every server on the database) in the transaction that stores them,
/// and answers `{"ok":true,"weight":w,"service_id":id|null}` (an array gets `items`).
/// An unknown or malformed agent key is treated as anonymous: telemetry clients are
/// fire-and-forget and must not fail on a revoked key.
pub async fn post(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> AppResult<Json<Value>> {
    let observations =
        validate_observations(&body).map_err(|e| AppError::bad_request(e.to_string()))?;
    let key = headers
        .get(AGENT_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    let agent_id = match key {
        Some(k) if k.starts_with("ak_") && k.len() <= MAX_KEY_LEN => {
            agents::agent_for_key(&state.db, k).await?
        }
        _ => None,
    };
    let now = crate::clock::now_ms();
    let quota = match &agent_id {
        Some(a) => Quota::agent(a, RATE_LIMIT_PER_KEY_PER_HOUR),
        None => Quota::ip(ip, RATE_LIMIT_PER_IP_PER_HOUR),
    };
    let mut items = Vec::with_capacity(observations.len());
    // A batch usually repeats a few hosts: look each one up once.
    let mut known: std::collections::HashMap<String, Option<String>> =
        std::collections::HashMap::new();
    for obs in observations {
        let service_id = match known.get(&obs.host) {
            Some(s) => s.clone(),
            None => {
                let s = catalog::service_for_host(&state.db, &obs.host).await?;
                known.insert(obs.host.clone(), s.clone());
                s
            }
        };
        let tier = WeightTier::of(agent_id.is_some(), service_id.is_some());
        items.push(Weighed {
            obs,
            tier,
            service_id,
            agent_id: agent_id.clone(),
        });
    }
    let answers: Vec<Value> = items
        .iter()
        .map(|w| json!({"weight": w.tier.weight(), "service_id": w.service_id}))
        .collect();
    let single = body.is_object();
    // Counted and stored in one transaction: a refused request writes nothing.
    let stored = store(&state.db, items, now, Some(quota)).await?;
    crate::ratelimit::prune_if_due(&state.db, now).await;
    if single {
        let mut a = answers.into_iter().next().unwrap_or_default();
        if let Value::Object(m) = &mut a {
            m.insert("ok".into(), json!(true));
        }
        return Ok(Json(a));
    }
    Ok(Json(
        json!({"ok": true, "accepted": answers.len(), "stored": stored, "items": answers}),
    ))
}
