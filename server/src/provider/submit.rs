//! `POST /v1/provider/submit` (SPEC §11): a provider's result for the directive it holds.
//! The body is checked by the core (each fault named), then recorded by [`super::record`]
//! only under a live lease of the caller; each misuse is refused by name.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use lowdown_core::benchmark::submission::{check, directive_id};
use serde_json::{json, Value};

use super::auth::provider;
use super::directives::credits;
use super::lease::Misuse;
use super::{record, store};
use crate::error::AppError;
use crate::extract::JsonBody;
use crate::gateway::answer::Refusal;
use crate::state::AppState;

/// 201 `{submission_id, accepted, recorded_score, displaced, displaced_reason,
/// credited_credits}`. `accepted` is true for every recorded submission (the directive is
/// completed and the provider credited); whether it changed the displayed score is
/// `displaced`.
pub async fn post(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), Refusal> {
    let me = provider(&state, &headers).await?;
    let bad = |e: lowdown_core::benchmark::submission::SubmissionError| -> Refusal {
        AppError::bad_request(e.to_string()).into()
    };
    let id = directive_id(&body).map_err(bad)?;
    let d = store::directive(&state.db, &id)
        .await?
        .ok_or_else(|| Misuse::Unknown.refusal(&id))?;
    let checked = check(&body, d.kind).map_err(bad)?;
    let submitted = body["overall_score"]
        .as_f64()
        .unwrap_or(checked.recorded_score);
    let now = state.prowl.clock.now();
    match record::submit(&state.db, &me.provider_id, checked, submitted, now).await? {
        Ok(r) => Ok((
            StatusCode::CREATED,
            Json(json!({
                "submission_id": r.submission_id, "accepted": true,
                "recorded_score": r.recorded_score,
                "displaced": r.decision.replace, "displaced_reason": r.decision.reason,
                "credited_credits": credits(r.millicredits),
            })),
        )),
        Err(m) => Err(m.refusal(&id)),
    }
}
