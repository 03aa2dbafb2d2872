//! `GET /v1/provider/earnings`: the caller's ledger. Credits only: no money moves through
//! Lowdown; 70 % of each completed directive's price (split among the providers whose
//! `agent` results agreed), in thousandths of a credit. `agent` results waiting for a
//! provider of another network earn nothing yet: `awaiting_agreement` counts them.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde_json::{json, Value};

use super::auth::provider;
use super::directives::credits;
use crate::clock::iso;
use crate::db::provider as store;
use crate::error::AppError;
use crate::state::AppState;

/// `{provider_id, total_credits, completed, awaiting_agreement, entries[{directive_id,
/// submission_id, credits, at}]}`, newest first.
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, AppError> {
    let me = provider(&state, &headers).await?;
    let entries = store::earnings(&state.db, &me.provider_id).await?;
    let total: i64 = entries.iter().map(|e| e.millicredits).sum();
    let awaiting = store::awaiting_agreement(&state.db, &me.provider_id).await?;
    Ok(Json(json!({
        "provider_id": me.provider_id,
        "total_credits": credits(total),
        "completed": entries.len(),
        "awaiting_agreement": awaiting,
        "entries": entries.iter().map(|e| json!({
            "directive_id": e.directive_id, "submission_id": e.submission_id,
            "credits": credits(e.millicredits), "at": iso(e.at),
        })).collect::<Vec<_>>(),
        "note": "credits, not money: payments between vendors and providers happen outside Lowdown",
    })))
}
