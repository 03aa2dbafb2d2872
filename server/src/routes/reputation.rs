//! `GET /api/reputation/{target}`.

use std::collections::BTreeMap;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use lowdown_core::aggregate::{self, ClassCounts, Summary};
use lowdown_core::defaults::NODE_ID_HEADER;
use lowdown_core::record::validate::{validate_node_id, MAX_NAME, MAX_TARGET};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::clock;
use crate::db::reputation::{self as store, Dimension, Resolution};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Days covered by `recent_trends`, today included.
pub const TREND_DAYS: i64 = 30;

/// Query parameters of a reputation request.
#[derive(Debug, Deserialize)]
pub struct Params {
    /// Narrow every number to one task (tool name or method).
    pub task_type: Option<String>,
}

#[derive(Serialize)]
struct BySource {
    organic: u64,
    seeded: u64,
    synthetic: u64,
}

#[derive(Serialize)]
struct Answer {
    target: String,
    resolved_target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_type: Option<String>,
    message: String,
    interactions: u64,
    rated_interactions: u64,
    success_rate: Option<f64>,
    protocol_requests: u64,
    rejected_requests: u64,
    cancelled_requests: u64,
    by_source: BySource,
    confidence: aggregate::Confidence,
    #[serde(skip_serializing_if = "Option::is_none")]
    telemetry: Option<Value>,
    #[serde(flatten)]
    contributor: Option<Contributor>,
    /// `registry` and `scanner`, for an MCP Registry entry.
    #[serde(flatten)]
    registry: Option<crate::scanner::answer::Blocks>,
    source: Value,
}

#[derive(Serialize)]
struct Contributor {
    task_breakdown: BTreeMap<String, Value>,
    recent_trends: Vec<Value>,
    by_server_version: BTreeMap<String, Value>,
    by_schema_hash: BTreeMap<String, Value>,
}

/// Checks the optional `task_type` parameter.
pub(crate) fn task_param(p: Result<Query<Params>, QueryRejection>) -> AppResult<Option<String>> {
    let Query(p) = p.map_err(|e| AppError::bad_request(format!("query: {}", e.body_text())))?;
    if let Some(t) = &p.task_type {
        super::check_name("task_type", t, MAX_NAME)?;
    }
    Ok(p.task_type)
}

/// The `source` block: which deployment answered, from which data, when.
pub(crate) fn source_block(state: &AppState, now: i64) -> Value {
    json!({
        "deployment": state.deployment,
        "data": "interaction records reported by agents and proxies; telemetry reported apart",
        "retrieved_at": clock::iso(now),
    })
}

fn by_source(s: &Summary) -> BySource {
    let c = &s.by_source;
    BySource {
        organic: c.organic.interactions(),
        seeded: c.seeded.interactions(),
        synthetic: c.synthetic.interactions(),
    }
}

fn brief(s: &Summary) -> Value {
    json!({
        "interactions": s.interactions,
        "rated_interactions": s.rated_interactions,
        "success_rate": s.success_rate,
    })
}

/// Key used for records that carried no server version or schema hash; `(` cannot occur
/// in either, so it never collides with a real value.
const NONE_KEY: &str = "(none)";

async fn contributor(
    state: &AppState,
    target: &str,
    task: Option<&str>,
    now: i64,
) -> AppResult<Contributor> {
    let db = &state.db;
    let mut task_breakdown = BTreeMap::new();
    for (task, (counts, failure_types)) in store::task_breakdown(db, target, task).await? {
        let s = aggregate::summarize(&counts);
        let o: &ClassCounts = &counts.organic;
        task_breakdown.insert(
            task,
            json!({
                "success": o.success, "partial": o.partial, "failure": o.failure,
                "rejected": o.rejected, "cancelled": o.cancelled,
                "failure_types": failure_types,
                "interactions": s.interactions, "success_rate": s.success_rate,
            }),
        );
    }
    let since = clock::day_before(now, TREND_DAYS - 1);
    let recent_trends = store::grouped(db, Dimension::Day, target, task, Some(&since))
        .await?
        .into_iter()
        .map(|(date, counts)| {
            let s = aggregate::summarize(&counts);
            json!({"date": date, "count": s.interactions, "success_rate": s.success_rate})
        })
        .collect();
    let keyed = |m: BTreeMap<String, aggregate::SourceCounts>| {
        m.into_iter()
            .map(|(k, c)| {
                (
                    if k.is_empty() { NONE_KEY.to_owned() } else { k },
                    brief(&aggregate::summarize(&c)),
                )
            })
            .collect::<BTreeMap<_, _>>()
    };
    let by_server_version =
        keyed(store::grouped(db, Dimension::ServerVersion, target, task, None).await?);
    let by_schema_hash =
        keyed(store::grouped(db, Dimension::SchemaHash, target, task, None).await?);
    Ok(Contributor {
        task_breakdown,
        recent_trends,
        by_server_version,
        by_schema_hash,
    })
}

/// Whether the request carries the id of a node that has contributed. An invalid id is
/// a 400 (it names the header); a valid one that never sent a record is simply not a
/// contributor.
async fn is_contributor(state: &AppState, headers: &HeaderMap) -> AppResult<bool> {
    let Some(v) = headers.get(NODE_ID_HEADER) else {
        return Ok(false);
    };
    let id = v
        .to_str()
        .map_err(|_| AppError::bad_request(format!("{NODE_ID_HEADER}: not ASCII")))?;
    validate_node_id(id)
        .map_err(|e| AppError::bad_request(format!("{NODE_ID_HEADER}: {}", e.message)))?;
    Ok(crate::db::nodes::contribution(&state.db, id)
        .await?
        .is_some())
}

/// The reputation answer for a target (or the candidates for an ambiguous short name).
pub async fn get(
    State(state): State<AppState>,
    target: Result<Path<String>, PathRejection>,
    params: Result<Query<Params>, QueryRejection>,
    headers: HeaderMap,
) -> AppResult<Response> {
    let Path(target) = target.map_err(|_| AppError::bad_request("target: not valid UTF-8"))?;
    super::check_name("target", &target, MAX_TARGET)?;
    let task = task_param(params)?;
    let contributor_ok = is_contributor(&state, &headers).await?;
    let now = clock::now_ms();
    let resolved = match store::resolve(&state.db, &target).await? {
        Resolution::Found(t) => Some(t),
        Resolution::Candidates(c) => {
            return Ok(Json(json!({
                "target": target,
                "resolved_target": null,
                "candidates": c,
                "message": format!("{target}: matches {} targets; ask again with one of the candidates.", c.len()),
                "source": source_block(&state, now),
            }))
            .into_response());
        }
        Resolution::Nothing => None,
    };
    let name = resolved.clone().unwrap_or_else(|| target.clone());
    let counts = match &resolved {
        Some(t) => store::counts(&state.db, t, task.as_deref()).await?,
        None => Default::default(),
    };
    let s = aggregate::summarize(&counts);
    let telemetry = match &resolved {
        Some(t) => crate::db::telemetry::block(&state.db, t).await?,
        None => None,
    };
    let contributor = match (&resolved, contributor_ok) {
        (Some(t), true) => Some(contributor(&state, t, task.as_deref(), now).await?),
        _ => None,
    };
    let registry = crate::scanner::answer::blocks(&state.db, &name, now).await?;
    let answer = Answer {
        message: crate::scanner::answer::answer_message(registry.as_ref(), &name, &s),
        target,
        resolved_target: resolved,
        task_type: task,
        interactions: s.interactions,
        rated_interactions: s.rated_interactions,
        success_rate: s.success_rate,
        protocol_requests: s.protocol_requests,
        rejected_requests: s.rejected_requests,
        cancelled_requests: s.cancelled_requests,
        by_source: by_source(&s),
        confidence: s.confidence,
        telemetry,
        contributor,
        registry,
        source: source_block(&state, now),
    };
    // Serialised straight from the struct, so fields keep the documented order.
    Ok(Json(answer).into_response())
}

/// The summary of `name` for compare: resolved like a reputation request; an ambiguous
/// or unknown name counts as nothing recorded.
pub(crate) async fn summary_for(
    state: &AppState,
    name: &str,
    task: Option<&str>,
) -> AppResult<(String, Summary)> {
    match store::resolve(&state.db, name).await? {
        Resolution::Found(t) => {
            let counts = store::counts(&state.db, &t, task).await?;
            Ok((t, aggregate::summarize(&counts)))
        }
        _ => Ok((name.to_owned(), aggregate::summarize(&Default::default()))),
    }
}
