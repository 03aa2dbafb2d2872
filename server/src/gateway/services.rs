//! What the API says about a catalog service (its audit, probe health and live score,
//! all computed on read) and the `min_reputation` limit the gateway applies.

use axum::http::StatusCode;
use lowdown_core::gateway::allow::Mode;
use lowdown_core::gateway::reputation::{meets_min_reputation, LIMITED_CALLS_PER_HOUR};
use lowdown_core::gateway::score::{
    live_score, probe_health, AuditFigures, LiveScore, ProbeHealth, AUDIT_FLAG, PROBE_WINDOW,
    SCORE_CALL_WINDOW, TELEMETRY_WINDOW_MS,
};
use serde::Serialize;
use std::collections::BTreeMap;

use super::Service;
use crate::db::gateway::{calls, AgentInfo};
use crate::db::quota::Quota;
use crate::error::AppError;
use crate::error::AppResult;
use crate::services::scores::Scores;
use crate::state::AppState;

/// How long an agent found to meet a service's `min_reputation` keeps that standing.
const REPUTABLE_FOR_MS: i64 = 5 * 60_000;

/// A catalog service as `GET /v1/services[/{slug}]` lists it: no credential, ever (keys
/// in alphabetical order, as always given).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Service")]
pub struct ServiceView {
    /// The calls the gateway carries: a method, a space, a path prefix under the
    /// upstream's base, matched at a `/` boundary (`GET /v1/search` carries `/v1/search`
    /// and `/v1/search/x`, never `/v1/searchy`). Empty: none.
    pub allow: Vec<String>,
    /// The audit of the service's recent calls.
    pub audit: AuditView,
    /// The displayed benchmark score of each kind.
    pub benchmark: Scores,
    /// The header the vendor's credential travels in, if any.
    pub credential_header: Option<String>,
    /// The hosts the service answers on.
    pub hosts: Vec<String>,
    /// The least reputation per dimension an agent needs past its limited calls; null for none.
    pub min_reputation: Option<BTreeMap<String, f64>>,
    /// Whose credential sampled calls carry.
    pub mode: Mode,
    /// The service's display name.
    pub name: String,
    /// The health of the service's recent probes, and the cap it puts on scores.
    pub probe_health: ProbeHealth,
    /// The key the service signs with, if any.
    pub public_key: Option<String>,
    /// The share of calls sampled.
    pub sampling_rate: f64,
    /// The live score (`GET /v1/services/{slug}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<LiveScore>,
    /// The catalog service id.
    pub service_id: String,
    /// The slug in `/v1/services/{slug}`.
    pub slug: String,
    /// The vendor's upstream URL.
    pub upstream: String,
}

/// The `audit` block of a [`ServiceView`]; nulls before the first audit. The figures are
/// those of the gateway's calls and the agents' reports together; `gateway` and `telemetry`
/// hold each path's own.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Audit")]
pub struct AuditView {
    /// When the audit ran (ISO-8601).
    pub checked_at: Option<String>,
    /// The weighted error rate of the audited samples.
    pub error_rate: Option<f64>,
    /// The flag set when flagged.
    pub flag: Option<&'static str>,
    /// Flagged on both paths together, on the gateway's or on the telemetry's (each: at
    /// least 10 counted samples, and an error rate of 50 % or more or a p95/p5 of 5 or more).
    pub flagged: bool,
    /// The gateway's calls alone (ProxyCalls).
    pub gateway: Option<AuditFigures>,
    /// Samples audited.
    pub n: usize,
    /// The ratio of the weighted 95th to the 5th latency percentile.
    pub p95_p5: Option<f64>,
    /// The agents' reports alone (organic observations: the mirror path).
    pub telemetry: Option<AuditFigures>,
}

/// One service with `audit` and `probe_health` (and `score` when `with_score`).
pub async fn view(state: &AppState, s: &Service, with_score: bool) -> AppResult<ServiceView> {
    let now = state.now();
    let audit = super::audit::audit_if_due(state, s, now).await?;
    let recent = calls::recent(&state.db, &s.service_id, SCORE_CALL_WINDOW).await?;
    let since = now - TELEMETRY_WINDOW_MS;
    let mut probed = recent[..recent.len().min(PROBE_WINDOW)].to_vec();
    probed.extend(calls::observations_since(&state.db, &s.service_id, since, PROBE_WINDOW).await?);
    let health = probe_health(&probed);
    let audit = match audit {
        Some(a) => AuditView {
            checked_at: Some(crate::clock::iso(a.checked_at)),
            error_rate: a.audit.error_rate,
            flag: a.audit.flagged.then_some(AUDIT_FLAG),
            flagged: a.audit.flagged,
            gateway: Some(a.audit.gateway),
            n: a.audit.n,
            p95_p5: a.audit.p95_p5,
            telemetry: Some(a.audit.telemetry),
        },
        None => AuditView {
            checked_at: None,
            error_rate: None,
            flag: None,
            flagged: false,
            gateway: None,
            n: 0,
            p95_p5: None,
            telemetry: None,
        },
    };
    let benchmark = crate::services::scores::block(state, &s.service_id, health.cap).await?;
    let score = match with_score {
        true => {
            let mut samples = recent;
            samples.extend(
                calls::observations_since(&state.db, &s.service_id, since, SCORE_CALL_WINDOW)
                    .await?,
            );
            samples.extend(calls::receipts_since(&state.db, &s.service_id, since).await?);
            Some(live_score(&samples, health.cap))
        }
        false => None,
    };
    Ok(ServiceView {
        allow: s.allow.clone(),
        audit,
        benchmark,
        credential_header: s.credential_header.clone(),
        hosts: s.hosts.clone(),
        min_reputation: (!s.min_reputation.is_empty()).then(|| s.min_reputation.clone()),
        mode: s.mode,
        name: s.name.clone(),
        probe_health: health,
        public_key: s.public_key.clone(),
        sampling_rate: s.sampling_rate,
        score,
        service_id: s.service_id.clone(),
        slug: s.slug.clone(),
        upstream: s.upstream.clone(),
    })
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
