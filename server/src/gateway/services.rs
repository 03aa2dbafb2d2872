//! What the API says about a catalog service (its audit, probe health and live score,
//! all computed on read) and the `min_reputation` limit the gateway applies.

use axum::http::StatusCode;
use lowdown_core::gateway::reputation::{meets_min_reputation, LIMITED_CALLS_PER_HOUR};
use lowdown_core::gateway::score::{
    live_score, probe_health, AUDIT_FLAG, PROBE_WINDOW, SCORE_CALL_WINDOW,
};
use serde_json::{json, Value};

use super::Service;
use crate::db::gateway::{calls, AgentInfo};
use crate::db::quota::Quota;
use crate::error::AppError;
use crate::error::AppResult;
use crate::state::AppState;

const HOUR_MS: i64 = 3_600_000;
/// How long an agent found to meet a service's `min_reputation` keeps that standing.
const REPUTABLE_FOR_MS: i64 = 5 * 60_000;

/// The catalog entry as listed: no credential, ever.
fn entry(s: &Service) -> Value {
    json!({
        "slug": s.slug, "service_id": s.service_id, "name": s.name, "upstream": s.upstream,
        "hosts": s.hosts, "sampling_rate": s.sampling_rate, "allow": s.allow, "mode": s.mode,
        "credential_header": s.credential_header, "public_key": s.public_key,
        "min_reputation": if s.min_reputation.is_empty() { Value::Null } else { json!(s.min_reputation) },
    })
}

/// One service with `audit` and `probe_health` (and `score` when `with_score`).
pub async fn view(state: &AppState, s: &Service, with_score: bool) -> AppResult<Value> {
    let now = state.now();
    let audit = super::audit::audit_if_due(state, s, now).await?;
    let recent = calls::recent(&state.db, &s.service_id, SCORE_CALL_WINDOW).await?;
    let health = probe_health(&recent[..recent.len().min(PROBE_WINDOW)]);
    let mut v = entry(s);
    v["audit"] = match audit {
        Some(a) => json!({
            "flagged": a.audit.flagged, "flag": a.audit.flagged.then_some(AUDIT_FLAG),
            "error_rate": a.audit.error_rate, "p95_p5": a.audit.p95_p5, "n": a.audit.n,
            "checked_at": crate::clock::iso(a.checked_at),
        }),
        None => {
            json!({"flagged": false, "flag": null, "error_rate": null, "p95_p5": null, "n": 0, "checked_at": null})
        }
    };
    v["probe_health"] = json!(health);
    v["benchmark"] = crate::services::scores::block(state, &s.service_id, health.cap).await?;
    if with_score {
        let mut samples = recent;
        samples
            .extend(calls::observations_since(&state.db, &s.service_id, now - 24 * HOUR_MS).await?);
        v["score"] = json!(live_score(&samples, health.cap));
    }
    Ok(v)
}

/// Refuses (429) an agent below the service's `min_reputation` that already took its 10
/// gateway calls to that service in the last hour. The slot is taken before the call is
/// forwarded, in one transaction ([`crate::db::quota`]), so parallel calls stop at the
/// limit; the reputation is computed only once the slots are gone, and a good standing is
/// remembered for five minutes.
pub async fn within_reputation_limit(
    state: &AppState,
    s: &Service,
    agent: &AgentInfo,
    now: i64,
) -> Result<(), AppError> {
    if s.min_reputation.is_empty() {
        return Ok(());
    }
    let key = (agent.agent_id.clone(), s.service_id.clone());
    if state
        .prowl
        .reputable
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .is_some_and(|until| *until > now)
    {
        return Ok(());
    }
    let limit = LIMITED_CALLS_PER_HOUR as u32;
    let slot = Quota::limited_calls(
        state.db.caller_secret(),
        &agent.agent_id,
        &s.service_id,
        limit,
    );
    let Some(refused) = crate::db::quota::take_one(&state.db, &slot, now).await? else {
        return Ok(());
    };
    if meets_min_reputation(
        &s.min_reputation,
        &crate::services::agents::agent_reputation(state, agent, now).await?,
    ) {
        super::cache_put(&state.prowl.reputable, key, now + REPUTABLE_FOR_MS);
        return Ok(());
    }
    Err(AppError::Refused {
        status: StatusCode::TOO_MANY_REQUESTS,
        reason: "below_min_reputation",
        message: format!(
            "this agent is below {}'s min_reputation: at most {limit} gateway calls per hour",
            s.slug
        ),
        retry_after: Some(refused.retry_after_secs),
    })
}
