//! `POST /api/interactions`: per-record acceptance under quotas (SPEC §5).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use lowdown_core::record::validate::{check_records, Rejection};
use serde::Serialize;

use crate::error::{AppError, AppResult};
use crate::extract::{JsonBody, Origin};
use crate::services::records;
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
    let items = checked
        .items
        .into_iter()
        .enumerate()
        .map(|(index, item)| item.map_err(|e| Rejection::new(index, "record", &e)))
        .collect();
    let screened = records::screen(&state, items);
    if screened.valid.is_empty() {
        return Err(AppError::none_valid("record", single, screened.rejected));
    }
    let agent_id = super::telemetry::agent(&state, &headers)
        .await?
        .map(|a| a.agent_id);
    let mut screened = screened;
    let rejected = std::mem::take(&mut screened.rejected);
    let stored = records::store(&state, &super::client(&origin), agent_id, screened).await?;
    let mut body = Ingested {
        accepted: stored.accepted,
        duplicates: stored.duplicates,
        error: None,
        ok: stored.accepted > 0,
        rate_limited: stored.rate_limited,
        reason: None,
        rejected,
    };
    let status = match (&stored.refusal, stored.accepted) {
        (Some((e, _)), 0) => {
            body.error = Some(e.to_string());
            body.reason = Some(e.reason());
            StatusCode::TOO_MANY_REQUESTS
        }
        _ => StatusCode::CREATED,
    };
    let mut response = (status, Json(body)).into_response();
    if let Some((_, retry)) = stored.refusal {
        crate::error::set_retry_after(response.headers_mut(), retry);
    }
    Ok(response)
}
