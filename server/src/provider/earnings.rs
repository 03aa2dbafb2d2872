//! `GET /v1/provider/earnings`: the caller's ledger. Credits only: no money moves through
//! Lowdown; 70 % of each completed directive's price (split among the providers whose
//! `agent` results agreed), in thousandths of a credit. `agent` results waiting for a
//! provider of another network earn nothing yet: `awaiting_agreement` counts them.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde::Serialize;

use super::auth::provider;
use super::directives::credits;
use crate::clock::iso;
use crate::db::provider as store;
use crate::error::AppError;
use crate::state::AppState;

/// The answer of `GET /v1/provider/earnings` (keys in alphabetical order, as always given).
#[derive(Serialize, schemars::JsonSchema)]
pub struct Earnings {
    /// `agent` results waiting for a provider of another network to agree.
    pub awaiting_agreement: i64,
    /// Completed directives paid for.
    pub completed: usize,
    /// The ledger, newest first.
    pub entries: Vec<Entry>,
    /// Credits are not money.
    pub note: &'static str,
    /// The caller's provider id.
    pub provider_id: String,
    /// Credits earned in all.
    pub total_credits: f64,
}

/// One line of the ledger.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "EarningsEntry")]
pub struct Entry {
    /// When it was earned (ISO-8601).
    pub at: String,
    /// Credits earned.
    pub credits: f64,
    /// The directive paid for.
    pub directive_id: String,
    /// The submission that completed it.
    pub submission_id: String,
}

/// `{provider_id, total_credits, completed, awaiting_agreement, entries[{directive_id,
/// submission_id, credits, at}]}`, newest first.
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Earnings>, AppError> {
    let me = provider(&state, &headers).await?;
    let entries = store::earnings(&state.db, &me.provider_id).await?;
    let total: i64 = entries.iter().map(|e| e.millicredits).sum();
    let awaiting = store::awaiting_agreement(&state.db, &me.provider_id).await?;
    Ok(Json(Earnings {
        awaiting_agreement: awaiting,
        completed: entries.len(),
        entries: entries
            .iter()
            .map(|e| Entry {
                at: iso(e.at),
                credits: credits(e.millicredits),
                directive_id: e.directive_id.clone(),
                submission_id: e.submission_id.clone(),
            })
            .collect(),
        note: "credits, not money: payments between vendors and providers happen outside Lowdown",
        provider_id: me.provider_id,
        total_credits: credits(total),
    }))
}
