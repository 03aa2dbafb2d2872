//! `POST /api/interactions`: per-record acceptance (SPEC §5).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use lowdown_core::record::validate::{check_records, Rejection};
use lowdown_core::telemetry::unlisted_target;
use serde_json::{json, Value};

use crate::error::{AppError, AppResult};
use crate::extract::JsonBody;
use crate::state::AppState;

/// Checks every record on its own with the core and stores the valid ones in one
/// transaction; the others are refused by index, so one bad record never costs the rest.
/// A record whose target names a private or special-use host (`url:localhost`,
/// `10.0.0.7`) is refused like an invalid one: it is never stored.
///
/// 201 `{"ok":true,"accepted":N,"duplicates":D,"rejected":[{"index":i,"error":"field: …"}]}`:
/// `accepted` counts every valid record (each is now stored), `duplicates` those among them
/// whose `record_id` was already stored or repeated (acknowledged, never counted twice).
/// 400 when the body is not a record or an array of records, or when no record is valid.
pub async fn post(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> AppResult<(StatusCode, Json<Value>)> {
    let checked = check_records(&body).map_err(|e| AppError::bad_request(e.to_string()))?;
    let single = checked.single;
    let mut valid = Vec::with_capacity(checked.items.len());
    let mut rejected = Vec::new();
    for (index, item) in checked.items.into_iter().enumerate() {
        match item {
            Ok(record) => match unlisted_target(&record.target, state.allow_private_hosts) {
                None => valid.push(record),
                Some(reason) => rejected.push(Rejection {
                    index,
                    error: super::private_host_error("target", reason),
                }),
            },
            Err(e) => rejected.push(Rejection::new(index, "record", &e)),
        }
    }
    if valid.is_empty() {
        return Err(none_valid(single, rejected));
    }
    let accepted = valid.len();
    let stored =
        crate::db::ingest::store_interactions(&state.db, valid, crate::clock::now_ms()).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "ok": true,
            "accepted": accepted,
            "duplicates": accepted - stored,
            "rejected": rejected,
        })),
    ))
}

/// The 400 of a body with nothing valid in it: a single record's own error, or for an
/// array the first refused item (`records[i].field: …`) and every refusal by index.
fn none_valid(single: bool, rejected: Vec<Rejection>) -> AppError {
    let first = rejected
        .first()
        .map_or_else(String::new, |r| r.error.clone());
    if single {
        return AppError::bad_request(first);
    }
    let index = rejected.first().map_or(0, |r| r.index);
    let at = match first.strip_prefix("record: ") {
        Some(why) => format!("records[{index}]: {why}"),
        None => format!("records[{index}].{first}"),
    };
    AppError::NoneValid {
        message: format!(
            "records: no valid record ({} refused; {at})",
            rejected.len()
        ),
        rejected,
    }
}
