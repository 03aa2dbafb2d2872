//! `POST /api/interactions`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use crate::error::{AppError, AppResult};
use crate::extract::JsonBody;
use crate::state::AppState;

/// Validates the whole body with the core (all-or-nothing, errors name the index and
/// field), then stores it in one transaction. `accepted` counts every valid record, new or
/// repeated (a repeated `record_id` is acknowledged but stored once); `stored` counts new ones.
pub async fn post(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> AppResult<(StatusCode, Json<Value>)> {
    let records = lowdown_core::record::validate::validate_records(&body)
        .map_err(|e| AppError::bad_request(e.to_string()))?;
    let accepted = records.len();
    let stored =
        crate::db::ingest::store_interactions(&state.db, records, crate::clock::now_ms()).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"ok": true, "accepted": accepted, "stored": stored})),
    ))
}
