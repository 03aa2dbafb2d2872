//! `GET /api/compare?targets=a,b[,c...][&task_type=]` (used by the `compare_tools` MCP tool).

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::Json;
use lowdown_core::record::validate::{MAX_NAME, MAX_TARGET};
use serde::{Deserialize, Serialize};

use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Query parameters of a compare request.
#[derive(Debug, Deserialize)]
pub struct Params {
    /// 2 to 5 target names, comma-separated.
    pub targets: Option<String>,
    /// Narrow every number to one task.
    pub task_type: Option<String>,
}

/// Ranks 2-5 targets by organic `success_rate` (nulls last) with the core's rules; the
/// recommendation needs at least 5 rated interactions behind the best.
pub async fn get(
    State(state): State<AppState>,
    params: Result<Query<Params>, QueryRejection>,
) -> AppResult<Json<Answer>> {
    let Query(p) =
        params.map_err(|e| AppError::bad_request(format!("query: {}", e.body_text())))?;
    let raw = p
        .targets
        .ok_or_else(|| AppError::bad_request("targets: missing (2 to 5 names, comma-separated)"))?;
    let names: Vec<&str> = raw.split(',').map(str::trim).collect();
    let subject = names.join(", ");
    for n in &names {
        crate::extract::check_name("targets", n, MAX_TARGET)?;
    }
    if let Some(t) = &p.task_type {
        crate::extract::check_name("task_type", t, MAX_NAME)?;
    }
    if !(2..=5).contains(&names.len()) {
        return Err(AppError::bad_request(format!(
            "targets: expected 2 to 5 names, got {}",
            names.len()
        )));
    }
    let mut summaries = Vec::with_capacity(names.len());
    for n in names {
        summaries.push(super::reputation::summary_for(&state, n, p.task_type.as_deref()).await?);
    }
    let comparison = lowdown_core::aggregate::compare(&summaries)
        .map_err(|e| AppError::bad_request(format!("targets: {e}")))?;
    let now = crate::clock::now_ms();
    Ok(Json(Answer {
        comparison,
        task_type: p.task_type,
        source: crate::services::source::block(&state, now, &subject),
    }))
}

/// The compare answer: the core's comparison, the task, and `source` last.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Comparison")]
pub struct Answer {
    #[serde(flatten)]
    comparison: lowdown_core::aggregate::Comparison,
    task_type: Option<String>,
    source: crate::services::source::Source,
}
