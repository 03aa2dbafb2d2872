//! `POST /api/interactions`: per-record acceptance under quotas (SPEC §5).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use lowdown_core::record::validate::{check_records, Rejection};
use lowdown_core::record::InteractionRecord;
use lowdown_core::telemetry::unlisted_target;
use serde::Serialize;

use crate::db::ingest::{Fate, Sender};
use crate::db::quota::{Draws, Quota};
use crate::error::{AppError, AppResult};
use crate::extract::{JsonBody, Origin};
use crate::state::AppState;

/// Checks every record on its own with the core and stores the valid ones in one
/// transaction; the others are refused by index, so one bad record never costs the rest.
/// A record whose target names a private or special-use host (`url:localhost`,
/// `10.0.0.7`) is refused like an invalid one: it is never stored. Each new record draws
/// on the hourly record budget of its node id, of the request's agent key (`X-Agent-Key`,
/// optional; an unknown key counts as none) and of the client's network, unless that
/// network is trusted (`--trusted-network`); a record already stored draws on nothing.
///
/// The answer of `POST /api/interactions` (keys in alphabetical order, as always given).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Recorded")]
pub struct Ingested {
    /// Valid records taken (each is now stored), duplicates included.
    pub accepted: usize,
    /// Records among them whose `record_id` was already stored or repeated.
    pub duplicates: usize,
    /// Why nothing was accepted, when every valid record was over a budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// At least one record was accepted.
    pub ok: bool,
    /// Indices of the records refused over a budget.
    pub rate_limited: Vec<usize>,
    /// The stable reason of `error` (`rate_limited`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// The records refused as invalid, with what is wrong.
    pub rejected: Vec<Rejection>,
}

/// 201 `{"ok":true,"accepted":N,"duplicates":D,"rejected":[{"index":i,"error":"field: …"}],
/// "rate_limited":[i, …]}`: `accepted` counts every valid record taken (each is now
/// stored), `duplicates` those among them whose `record_id` was already stored or repeated
/// (acknowledged, never counted twice), `rate_limited` the indices refused over a budget
/// (send them again after `Retry-After`, which the answer then carries). 429 with the same
/// fields when records were valid but none was taken; 400 when the body is not a record or
/// an array of records, or when no record is valid.
pub async fn post(
    State(state): State<AppState>,
    origin: Origin,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> AppResult<Response> {
    let checked = check_records(&body).map_err(|e| AppError::bad_request(e.to_string()))?;
    let single = checked.single;
    let mut valid = Vec::with_capacity(checked.items.len());
    let mut indices = Vec::with_capacity(checked.items.len());
    let mut rejected = Vec::new();
    for (index, item) in checked.items.into_iter().enumerate() {
        match item {
            Ok(record) => match unlisted_target(&record.target, state.allow_private_hosts) {
                None => {
                    valid.push(record);
                    indices.push(index);
                }
                Some(reason) => rejected.push(Rejection {
                    index,
                    error: super::private_host_error("target", reason),
                }),
            },
            Err(e) => rejected.push(Rejection::new(index, "record", &e)),
        }
    }
    if valid.is_empty() {
        return Err(AppError::none_valid("record", single, rejected));
    }
    let agent_id = super::telemetry::agent(&state, &headers)
        .await?
        .map(|a| a.agent_id);
    let sender = sender(&state, &origin, agent_id, &valid);
    let ingested =
        crate::db::ingest::store_interactions(&state.db, valid, sender.clone(), state.now())
            .await?;
    let (mut accepted, mut duplicates, mut limited) = (0, 0, Vec::new());
    for (fate, index) in ingested.fates.iter().zip(&indices) {
        match fate {
            Fate::Stored => accepted += 1,
            Fate::Duplicate => {
                accepted += 1;
                duplicates += 1;
            }
            Fate::RateLimited(_) => limited.push(*index),
        }
    }
    crate::db::quota::prune_if_due(&state.db, state.now()).await;
    let mut body = Ingested {
        accepted,
        duplicates,
        error: None,
        ok: accepted > 0,
        rate_limited: limited,
        reason: None,
        rejected,
    };
    let refusal = ingested.refusal(&sender);
    let status = match (&refusal, accepted) {
        (Some((q, retry)), 0) => {
            let e = crate::error::AppError::from(q.refusal(*retry));
            body.error = Some(e.to_string());
            body.reason = Some(e.reason());
            StatusCode::TOO_MANY_REQUESTS
        }
        _ => StatusCode::CREATED,
    };
    let mut response = (status, Json(body)).into_response();
    if let Some((_, retry)) = refusal {
        crate::error::set_retry_after(response.headers_mut(), retry);
    }
    Ok(response)
}

/// Who sends `records`, and the budgets each of them draws on: its node id's, the agent
/// key's and the network's (none from a trusted network).
fn sender(
    state: &AppState,
    origin: &Origin,
    agent_id: Option<String>,
    records: &[InteractionRecord],
) -> Sender {
    let (secret, limits) = (state.db.caller_secret(), &state.limits);
    let mut draws = Draws::default();
    if !origin.trusted {
        let mut shared = Vec::new();
        if let Some(a) = &agent_id {
            shared.push(draws.quota(Quota::key_records(secret, limits, a)));
        }
        shared.push(draws.quota(Quota::network_records(secret, limits, origin.ip)));
        // A batch usually comes from one node: its quota (an HMAC) is made once.
        let mut nodes: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for r in records {
            let mut item = shared.clone();
            if let Some(node) = &r.node_id {
                let q = *nodes
                    .entry(node)
                    .or_insert_with(|| draws.quota(Quota::node_records(secret, limits, node)));
                item.push(q);
            }
            draws.item(item);
        }
    }
    Sender {
        network: origin.network.clone(),
        agent_id,
        trusted: origin.trusted,
        draws,
    }
}
