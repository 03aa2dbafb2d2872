//! `GET /api/reputation/{target}`.

use futures_util::TryFutureExt;
use std::collections::BTreeMap;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use lowdown_core::aggregate::{self, LatencySummary, Summary};
use lowdown_core::defaults::NODE_ID_HEADER;
use lowdown_core::record::validate::{validate_node_id, MAX_NAME, MAX_TARGET};
use serde::{Deserialize, Serialize};

use super::detail::{contributor, Contributor};
use crate::clock;
use crate::db::lookup::{resolve, Resolution};
use crate::db::reputation as store;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Query parameters of a reputation request.
#[derive(Debug, Deserialize)]
pub struct Params {
    /// Narrow every number to one task (tool name or method).
    pub task_type: Option<String>,
}

/// Interactions per source (organic, seeded, synthetic), reported apart, never mixed.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct BySource {
    pub(crate) organic: u64,
    pub(crate) seeded: u64,
    pub(crate) synthetic: u64,
}

/// The answer for a name that matches several targets (or, namespaced, none exactly):
/// similar names are listed, never substituted, and no numbers are given.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Candidates {
    /// The name asked for.
    pub(crate) target: String,
    /// Always null: nothing is answered for until one candidate is asked for.
    pub(crate) resolved_target: Option<String>,
    /// The stored targets the name may mean.
    pub(crate) candidates: Vec<String>,
    pub(crate) message: String,
    pub(crate) source: crate::services::source::Source,
}

/// What the network has seen of a target, serialised in the order of the printed answers
/// (SPEC §5): the name, the message, what the Registry, the package registries and the
/// Scanner say, then the interactions, `source` last.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Reputation")]
pub(crate) struct Answer {
    /// The name asked for.
    pub(crate) target: String,
    /// The stored target answered for; null when nothing matched.
    pub(crate) resolved_target: Option<String>,
    /// The task asked for, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) task_type: Option<String>,
    /// The answer in a sentence, facts only.
    pub(crate) message: String,
    /// `registry`, `packages` and `scanner`, for an MCP Registry entry.
    #[serde(flatten)]
    pub(crate) registry: Option<crate::scanner::answer::Blocks>,
    /// `registry_entries` and `packages`, for an `npm:`/`pypi:` package.
    #[serde(flatten)]
    pub(crate) package: Option<crate::scanner::answer::PackageBlocks>,
    /// Tool interactions of every source (all classes but protocol).
    pub(crate) interactions: u64,
    /// Organic success + partial + failure.
    pub(crate) rated_interactions: u64,
    /// Rated organic calls past their network's cap (20 per target per UTC day): counted
    /// in interactions, never rated.
    pub(crate) capped: u64,
    /// Distinct node ids or agent keys among the rated organic records.
    pub(crate) contributors: u64,
    /// Distinct client networks (IPv4 /24, IPv6 /48) among the rated organic records.
    pub(crate) networks: u64,
    /// The largest share of the rated records one network holds; null when nothing is rated.
    #[schemars(range(min = 0, max = 1))]
    pub(crate) top_network_share: Option<f64>,
    /// Organic successes / rated, 3 decimals; null when nothing is rated.
    #[schemars(range(min = 0, max = 1))]
    pub(crate) success_rate: Option<f64>,
    /// Protocol requests, every source; never rated.
    pub(crate) protocol_requests: u64,
    /// Request-layer rejections, every source; never rated.
    pub(crate) rejected_requests: u64,
    /// Cancelled requests, every source; never rated.
    pub(crate) cancelled_requests: u64,
    /// Interactions per source.
    pub(crate) by_source: BySource,
    /// none with 0 rated; low below 10 rated or 3 networks; medium below 100 rated or 10
    /// networks; else high.
    pub(crate) confidence: aggregate::Confidence,
    /// Rated organic tool calls that carried a latency; null when none did. p50/p95 are
    /// latency-bucket upper bounds.
    pub(crate) latency_ms: Option<LatencySummary>,
    /// Rated organic failures per failure_type (`unspecified` when none was recorded);
    /// sums to the failures; rejections are never in it.
    pub(crate) failure_breakdown: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) telemetry: Option<crate::db::telemetry::Block>,
    #[serde(flatten)]
    pub(crate) contributor: Option<Contributor>,
    pub(crate) source: crate::services::source::Source,
}

/// Checks the optional `task_type` parameter.
pub(crate) fn task_param(p: Result<Query<Params>, QueryRejection>) -> AppResult<Option<String>> {
    let Query(p) = p.map_err(|e| AppError::bad_request(format!("query: {}", e.body_text())))?;
    if let Some(t) = &p.task_type {
        crate::extract::check_name("task_type", t, MAX_NAME)?;
    }
    Ok(p.task_type)
}

fn by_source(s: &Summary) -> BySource {
    let c = &s.by_source;
    BySource {
        organic: c.organic.interactions(),
        seeded: c.seeded.interactions(),
        synthetic: c.synthetic.interactions(),
    }
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
    Ok(crate::db::nodes::has_contributed(&state.db, id).await?)
}

/// The reputation answer for a target (or the candidates for an ambiguous short name).
pub async fn get(
    State(state): State<AppState>,
    target: Result<Path<String>, PathRejection>,
    params: Result<Query<Params>, QueryRejection>,
    headers: HeaderMap,
) -> AppResult<Response> {
    let Path(target) = target.map_err(|_| AppError::bad_request("target: not valid UTF-8"))?;
    crate::extract::check_name("target", &target, MAX_TARGET)?;
    let task = task_param(params)?;
    let contributor_ok = is_contributor(&state, &headers).await?;
    let now = clock::now_ms();
    // Serialised straight from the struct, so fields keep the documented order.
    Ok(
        match reply(&state, target, task, contributor_ok, now).await? {
            Reply::Answer(a) => Json(a).into_response(),
            Reply::Candidates(c) => Json(c).into_response(),
        },
    )
}

/// What a reputation request answers.
pub(crate) enum Reply {
    /// The answer for one target (resolved or not).
    Answer(Box<Answer>),
    /// Several targets may be meant.
    Candidates(Candidates),
}

/// The answer for `target` at `now`, with the contributor detail when `detail`: what
/// `GET /api/reputation/{target}` serialises, and what the pages render.
pub(crate) async fn reply(
    state: &AppState,
    target: String,
    task: Option<String>,
    detail: bool,
    now: i64,
) -> AppResult<Reply> {
    let resolved = match resolve(&state.db, &target, state.allow_private_hosts).await? {
        Resolution::Found(t) => Some(t),
        Resolution::Candidates(c) => {
            let message = if target.contains(':') {
                format!("{target}: nothing recorded under this name; similar names are listed as candidates, never substituted.")
            } else {
                format!(
                    "{target}: matches {} targets; ask again with one of the candidates.",
                    c.len()
                )
            };
            return Ok(Reply::Candidates(Candidates {
                resolved_target: None,
                candidates: c,
                message,
                source: crate::services::source::block(state, now, &target),
                target,
            }));
        }
        Resolution::Nothing => None,
    };
    let name = resolved.clone().unwrap_or_else(|| target.clone());
    // The reads are independent, so they run at once, each on a pool connection: the
    // answer waits for the slowest read rather than for the sum of a dozen round trips.
    let db = &state.db;
    let reads = async {
        let Some(t) = &resolved else {
            return Ok(Default::default());
        };
        let task = task.as_deref();
        let detail = async {
            match detail {
                true => contributor(state, t, task, now).await.map(Some),
                false => Ok(None),
            }
        };
        tokio::try_join!(
            store::counts(db, t, task).err_into(),
            store::independence(db, t).err_into(),
            crate::db::latency::summary(db, t, task).err_into(),
            store::failure_breakdown(db, t, task).err_into(),
            crate::db::telemetry::block(db, t).err_into(),
            detail,
        )
    };
    let ((counts, who, latency_ms, failure_breakdown, telemetry, contributor), registry, package) =
        tokio::try_join!(
            reads,
            crate::scanner::answer::blocks(db, &name, now).err_into(),
            crate::scanner::answer::package_blocks(db, &name, now).err_into(),
        )?;
    let s = aggregate::summarize(&counts, &who);
    Ok(Reply::Answer(Box::new(Answer {
        message: crate::scanner::answer::answer_message(
            registry.as_ref(),
            package.as_ref(),
            &name,
            &s,
        ),
        source: crate::services::source::block(state, now, &name),
        target,
        resolved_target: resolved,
        task_type: task,
        interactions: s.interactions,
        rated_interactions: s.rated_interactions,
        capped: s.capped,
        contributors: s.contributors,
        networks: s.networks,
        top_network_share: s.top_network_share,
        success_rate: s.success_rate,
        protocol_requests: s.protocol_requests,
        rejected_requests: s.rejected_requests,
        cancelled_requests: s.cancelled_requests,
        by_source: by_source(&s),
        confidence: s.confidence,
        latency_ms,
        failure_breakdown,
        telemetry,
        contributor,
        registry,
        package,
    })))
}

/// The summary of `name` for compare: resolved like a reputation request; an ambiguous
/// or unknown name counts as nothing recorded.
pub(crate) async fn summary_for(
    state: &AppState,
    name: &str,
    task: Option<&str>,
) -> AppResult<(String, Summary)> {
    match resolve(&state.db, name, state.allow_private_hosts).await? {
        Resolution::Found(t) => {
            let (counts, who) = tokio::try_join!(
                store::counts(&state.db, &t, task),
                store::independence(&state.db, &t),
            )?;
            Ok((t, aggregate::summarize(&counts, &who)))
        }
        _ => Ok((
            name.to_owned(),
            aggregate::summarize(&Default::default(), &Default::default()),
        )),
    }
}
