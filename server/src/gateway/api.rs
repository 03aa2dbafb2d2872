//! The gateway's API answers on the main listener: the catalog with live scores, salts,
//! verification of past decisions, receipts and agent reputation.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use lowdown_core::defaults::AGENT_KEY_HEADER;
use lowdown_core::gateway::receipt::{parse_statement, receipt_weight, verify_signature};
use lowdown_core::gateway::reputation::{Dimension, ReceiptsUsed, REPUTATION_WINDOW_MS};
use lowdown_core::sample::{
    decide, salt_epoch, salt_id, salt_id_epoch, salt_state, salt_window, SaltState,
};
use serde_json::Value;

use super::services::ServiceView;
use crate::clock::iso;
use crate::db::gateway::{self as store, salts};
use crate::error::AppError;
use crate::extract::JsonBody;
use crate::services::agents::{agent, agent_of};
use crate::state::AppState;

fn bad(message: impl Into<String>) -> AppError {
    AppError::bad_request(message)
}

fn text<'a>(body: &'a Value, key: &str, max: usize) -> Result<&'a str, AppError> {
    match body.get(key) {
        None | Some(Value::Null) => Err(bad(format!("{key}: missing"))),
        Some(Value::String(s)) => {
            crate::extract::check_name(key, s, max)?;
            Ok(s)
        }
        Some(_) => Err(bad(format!("{key}: must be a string"))),
    }
}

/// The answer of `GET /v1/services`.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct ServiceList {
    /// Every catalog entry, in catalog order.
    pub services: Vec<ServiceView>,
}

/// `GET /v1/services`: every catalog entry with `audit` and `probe_health`.
pub async fn list(State(state): State<AppState>) -> Result<Json<ServiceList>, AppError> {
    let mut out = Vec::with_capacity(state.prowl.services.len());
    for s in &state.prowl.services {
        out.push(super::services::view(&state, s, false).await?);
    }
    Ok(Json(ServiceList { services: out }))
}

/// `GET /v1/services/{slug}`: one entry with `score` beside `audit` and `probe_health`.
pub async fn one(
    State(state): State<AppState>,
    Path(slug): Path<String>,
) -> Result<Json<ServiceView>, AppError> {
    let s = state
        .prowl
        .by_slug(&slug)
        .ok_or_else(|| AppError::NotFound {
            message: format!("slug: no service {slug} in the catalog"),
        })?;
    Ok(Json(super::services::view(&state, s, true).await?))
}

/// The answer of `GET /v1/sampling/salt` (keys in alphabetical order, as always given).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "Salt")]
pub struct CurrentSalt {
    /// Until when receipts decided with this salt are accepted (ISO-8601).
    pub accepted_until: String,
    /// The agent behind the key, so a client holding only its key can decide (SPEC §10).
    pub agent_id: String,
    /// Today's salt.
    pub salt: String,
    /// The salt's id (its UTC day).
    pub salt_id: String,
    /// Until when the salt is current (ISO-8601).
    pub valid_until: String,
}

/// One retired salt.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "PublishedSalt")]
pub struct RetiredSalt {
    /// When it stopped being accepted (ISO-8601).
    pub retired_at: String,
    /// The salt.
    pub salt: String,
    /// Its id (its UTC day).
    pub salt_id: String,
    /// When it became current (ISO-8601).
    pub valid_from: String,
    /// When it stopped being current (ISO-8601).
    pub valid_until: String,
}

/// The answer of `GET /v1/sampling/salts`.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct RetiredSalts {
    /// Retired salts, newest first.
    pub salts: Vec<RetiredSalt>,
}

/// The answer of `POST /v1/sampling/verify`.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "SamplingVerifyResult")]
pub struct Verified {
    /// The call's bucket in 0..1.
    pub bucket: f64,
    /// Whether the call is sampled (its bucket below `sampling_rate`).
    pub sampled: bool,
    /// The service's sampling rate for that salt: the one in force when its day began (or
    /// the first set during it), not today's.
    pub sampling_rate: f64,
    /// Whether the claimed roll is the one the salt gives.
    pub valid: bool,
}

/// The answer of `POST /v1/receipts` (201).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "Receipt")]
pub struct ReceiptTaken {
    /// The agent's signature checked out.
    pub agent_signed: bool,
    /// Always true.
    pub ok: bool,
    /// The statement's hash.
    pub receipt_id: String,
    /// The service's signature checked out.
    pub service_signed: bool,
    /// The weight the receipt counts with.
    pub weight: f64,
}

/// `GET /v1/sampling/salt`: today's salt, for registered agents only, with the key's `agent_id`.
pub async fn current_salt(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<CurrentSalt>, AppError> {
    let agent = agent_of(&state, &headers).await?;
    let now = state.now();
    let epoch = salt_epoch(now);
    let id = salt_id(epoch);
    let salt = salts::get_or_create(&state.db, &id, now).await?;
    let w = salt_window(epoch);
    Ok(Json(CurrentSalt {
        accepted_until: iso(w.accepted_until),
        agent_id: agent.agent_id,
        salt,
        salt_id: id,
        valid_until: iso(w.valid_until),
    }))
}

/// `GET /v1/sampling/salts?limit=N`: retired salts only, newest first (default 30, at most 366).
pub async fn published(
    State(state): State<AppState>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Result<Json<RetiredSalts>, AppError> {
    let limit = match q.get("limit") {
        None => 30,
        Some(l) => l
            .parse::<i64>()
            .ok()
            .filter(|l| (1..=366).contains(l))
            .ok_or_else(|| bad("limit: must be a whole number from 1 to 366"))?,
    };
    let now = state.now();
    // The newest retired day: yesterday once its overlap is over, else the day before.
    let current = salt_epoch(now);
    let newest = if salt_state(&salt_id(current - 1), now) == SaltState::Expired {
        current - 1
    } else {
        current - 2
    };
    let rows = salts::up_to(&state.db, &salt_id(newest), limit).await?;
    let salts = rows
        .into_iter()
        .filter_map(|(id, salt)| {
            let w = salt_window(salt_id_epoch(&id)?);
            Some(RetiredSalt {
                retired_at: iso(w.accepted_until),
                salt,
                salt_id: id,
                valid_from: iso(w.valid_from),
                valid_until: iso(w.valid_until),
            })
        })
        .collect();
    Ok(Json(RetiredSalts { salts }))
}

/// `POST /v1/sampling/verify`: recomputes a past decision from a published salt.
pub async fn verify(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<Verified>, AppError> {
    if !body.is_object() {
        return Err(bad("body: must be a JSON object"));
    }
    let service_id = text(&body, "service_id", 64)?;
    let agent_id = text(&body, "agent_id", 128)?;
    let id = text(&body, "salt_id", 32)?;
    let claimed = text(&body, "sample_decision", 64)?;
    if claimed.len() != 64 || !claimed.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad("sample_decision: must be the roll, 64 hex digits"));
    }
    let service = state
        .prowl
        .by_service_id(service_id)
        .ok_or_else(|| bad(format!("service_id: {service_id} is not in the catalog")))?;
    match salt_state(id, state.now()) {
        SaltState::Malformed => return Err(bad("salt_id: must look like s_YYYYMMDD")),
        SaltState::Expired => {}
        _ => {
            return Err(AppError::refused(
                StatusCode::CONFLICT,
                "salt_not_published",
                "salt not yet published",
            ))
        }
    }
    let salt = salts::get(&state.db, id)
        .await?
        .ok_or_else(|| AppError::NotFound {
            message: format!("salt_id: no salt {id} was ever issued"),
        })?;
    let rate = match salt_id_epoch(id) {
        Some(epoch) => {
            let w = salt_window(epoch);
            crate::db::catalog::rate_for_day(&state.db, service_id, w.valid_from, w.accepted_until)
                .await?
        }
        None => None,
    }
    .unwrap_or(service.sampling_rate);
    let d = decide(service_id, agent_id, id, &salt, rate);
    Ok(Json(Verified {
        bucket: d.bucket,
        sampled: d.sampled,
        sampling_rate: rate,
        valid: d.roll.eq_ignore_ascii_case(claimed),
    }))
}

fn opt_text<'a>(body: &'a Value, key: &str) -> Result<Option<&'a str>, AppError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() <= 256 => Ok(Some(s)),
        Some(_) => Err(bad(format!("{key}: must be a base64 string"))),
    }
}

/// `POST /v1/receipts/submit`: a signed delivery statement; 0.3 for one valid signature,
/// 1.0 for both; 400 naming a bad signature; 409 for a statement seen before.
pub async fn submit_receipt(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<ReceiptTaken>), AppError> {
    if !body.is_object() {
        return Err(bad("body: must be a JSON object"));
    }
    let now = state.now();
    // A submitter that names itself with its key answers for forged or replayed receipts.
    let submitter = match headers.get(AGENT_KEY_HEADER).and_then(|v| v.to_str().ok()) {
        Some(k) => agent(&state, k.trim()).await?,
        None => None,
    };
    let flag = |kind: &'static str| {
        let (db, who) = (state.db.clone(), submitter.clone());
        async move {
            if let Some(a) = who {
                store::flag_agent(&db, &a.agent_id, kind, None, now).await?;
            }
            Ok::<_, AppError>(())
        }
    };
    let st = parse_statement(body.get("statement").unwrap_or(&Value::Null))
        .map_err(|e| bad(e.to_string()))?;
    let (agent_sig, service_sig) = (
        opt_text(&body, "agent_signature")?,
        opt_text(&body, "service_signature")?,
    );
    if agent_sig.is_none() && service_sig.is_none() {
        return Err(bad("agent_signature, service_signature: give at least one"));
    }
    let service = state.prowl.by_service_id(&st.service_id).ok_or_else(|| {
        bad(format!(
            "statement.service_id: {} is not in the catalog",
            st.service_id
        ))
    })?;
    let named = store::agent_by_id(&state.db, &st.agent_id)
        .await?
        .ok_or_else(|| {
            bad(format!(
                "statement.agent_id: {} is not a registered agent",
                st.agent_id
            ))
        })?;
    let check = |field: &str, key: Option<&String>, sig: Option<&str>| -> Result<bool, AppError> {
        let Some(sig) = sig else { return Ok(false) };
        let key =
            key.ok_or_else(|| bad(format!("{field}: no public_key is registered to verify it")))?;
        verify_signature(field, key, sig, st.canonical.as_bytes())
            .map(|()| true)
            .map_err(|e| bad(e.to_string()))
    };
    let signed = check("agent_signature", named.public_key.as_ref(), agent_sig).and_then(|a| {
        Ok((
            a,
            check(
                "service_signature",
                service.public_key.as_ref(),
                service_sig,
            )?,
        ))
    });
    let (agent_ok, service_ok) = match signed {
        Ok(v) => v,
        Err(e) => {
            flag("forged_receipt").await?;
            return Err(e);
        }
    };
    let weight = receipt_weight(agent_ok, service_ok);
    if !store::receipts::insert(&state.db, &st, agent_ok, service_ok, weight, now).await? {
        flag("replayed_receipt").await?;
        return Err(AppError::refused(StatusCode::CONFLICT, "replayed_receipt", "statement: a receipt with this statement was submitted before (change the nonce for a new call)"));
    }
    Ok((
        StatusCode::CREATED,
        Json(ReceiptTaken {
            agent_signed: agent_ok,
            ok: true,
            receipt_id: st.hash,
            service_signed: service_ok,
            weight,
        }),
    ))
}

/// The answer of `GET /v1/agents/{agent_id}/reputation`: seven dimensions over 30 days,
/// never folded into one number (keys in alphabetical order, as always given).
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct AgentReputation {
    /// Refused forged or replayed decisions and receipts.
    pub abuse_flags: Dimension,
    /// The agent asked about.
    pub agent_id: String,
    /// Other agents whose reports `error_report_balance` compares with (each holding at
    /// most max(20 %, 1/agents) of their reports).
    pub compared_agents: u64,
    /// Share of (service, hour) buckets where the agent's reported success rate is within
    /// 0.2 of the gateway's.
    pub consistency: Dimension,
    /// Distinct services.
    pub diversity: Dimension,
    /// Its reported error rate minus the other agents' for the same services.
    pub error_report_balance: Dimension,
    /// Co-signed receipts over submitted receipts.
    pub receipt_cosign_rate: Dimension,
    /// The receipts the dimensions used, by signatures: 0.3 signed once, 1.0 co-signed.
    pub receipts: ReceiptsUsed,
    /// The window's start (ISO-8601).
    pub since: String,
    /// Whole days since registration.
    pub tenure_days: Dimension,
    /// Records and observations (and ProxyCalls, receipts) in the window.
    pub volume: Dimension,
    /// The window, in days.
    pub window_days: i64,
}

/// `GET /v1/agents/{agent_id}/reputation`: seven dimensions over 30 days.
pub async fn reputation(
    State(state): State<AppState>,
    Path(agent_id): Path<String>,
) -> Result<Json<AgentReputation>, AppError> {
    crate::extract::check_name("agent_id", &agent_id, 128)?;
    let a = store::agent_by_id(&state.db, &agent_id)
        .await?
        .ok_or_else(|| AppError::NotFound {
            message: format!("agent_id: no agent {agent_id}"),
        })?;
    let now = state.now();
    let rep = crate::services::agents::agent_reputation(&state, &a, now).await?;
    Ok(Json(AgentReputation {
        abuse_flags: rep.abuse_flags,
        agent_id: a.agent_id,
        compared_agents: rep.compared_agents,
        consistency: rep.consistency,
        diversity: rep.diversity,
        error_report_balance: rep.error_report_balance,
        receipt_cosign_rate: rep.receipt_cosign_rate,
        receipts: rep.receipts,
        since: iso(now - REPUTATION_WINDOW_MS),
        tenure_days: rep.tenure_days,
        volume: rep.volume,
        window_days: REPUTATION_WINDOW_MS / 86_400_000,
    }))
}
