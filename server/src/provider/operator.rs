//! The operator's side: posting a directive for a paying vendor (payments are outside
//! Lowdown) and reading where it stands. Both need `Authorization: Bearer
//! $LOWDOWN_ADMIN_TOKEN`.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use lowdown_core::benchmark::directive::{check_new, McpServer, Spec};
use lowdown_core::scanner::target::Policy;
use serde::Serialize;
use serde_json::Value;

use super::auth::admin;
use super::directives::{spec_refusal, view, DirectiveView};
use crate::clock::iso;
use crate::db::leases::Misuse;
use crate::db::provider as store;
use crate::error::AppError;
use crate::extract::JsonBody;
use crate::state::AppState;

fn bad(message: impl Into<String>) -> AppError {
    AppError::bad_request(message)
}

/// The URL a directive sends providers to, judged by the Scanner's SSRF rules (loopback
/// only with `--unsafe-allow-loopback`).
fn reachable(field: &str, url: &str, policy: Policy) -> Result<(), AppError> {
    crate::scanner::net::check_url(url, policy)
        .map(|_| ())
        .map_err(|e| bad(format!("{field}: {e}")))
}

/// `POST /v1/benchmark/directives`: 201 with the stored directive.
pub async fn post(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Posted>), AppError> {
    admin(&state, &headers)?;
    let d = check_new(&body).map_err(|e| spec_refusal(&e))?;
    if state.prowl.by_service_id(&d.service_id).is_none() {
        return Err(bad(format!(
            "service_id: {} is not in the catalog",
            d.service_id
        )));
    }
    let policy = Policy {
        allow_loopback: state.prowl.config.allow_loopback,
    };
    match &d.spec {
        Spec::Protocol { remote_url } => reachable("spec.remote_url", remote_url, policy)?,
        Spec::Agent {
            mcp_server: McpServer { url },
            ..
        } => reachable("spec.mcp_server.url", url, policy)?,
    }
    let stored = store::insert_directive(&state.db, &d, state.now()).await?;
    Ok((
        StatusCode::CREATED,
        Json(Posted {
            directive: view(&stored),
            status: Status::Open,
        }),
    ))
}

/// The answer of `POST /v1/benchmark/directives`: the directive as providers see it, and
/// its status (`status` sorts after every key of the view, so the keys stay in order).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "PostedDirective")]
pub struct Posted {
    /// The stored directive.
    #[serde(flatten)]
    pub directive: DirectiveView,
    /// Always `open`.
    pub status: Status,
}

/// Where a directive stands.
#[derive(Clone, Copy, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "DirectiveStatus")]
pub enum Status {
    /// Listed, claimable.
    Open,
    /// Leased to a provider.
    Claimed,
    /// Completed by a submission.
    Done,
    /// A stored directive today's rules refuse (see `refused`): never listed or leased.
    Refused,
}

/// The answer of `GET /v1/benchmark/directives/{id}`: the directive as providers see it,
/// then what only the operator sees.
#[derive(Serialize, schemars::JsonSchema)]
pub struct OperatorDirective {
    /// The stored directive.
    #[serde(flatten)]
    pub directive: DirectiveView,
    /// The live lease, if any.
    pub lease: Option<Holder>,
    /// Why no provider sees it.
    pub refused: Option<SpecRefused>,
    /// Where it stands.
    pub status: Status,
    /// The submission that completed it.
    pub submission: Option<StoredSubmission>,
    /// Every stored submission, oldest first.
    pub submissions: Vec<StoredSubmission>,
}

/// Who holds a lease, until when.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "LeaseHolder")]
pub struct Holder {
    /// When the lease ends.
    #[schemars(extend("format" = "date-time"))]
    pub expires_at: String,
    /// The provider holding it.
    pub provider_id: String,
}

/// Why a stored directive is refused today.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "DirectiveRefused")]
pub struct SpecRefused {
    /// What is wrong, naming the field.
    pub error: String,
    /// The refusal's reason.
    #[schemars(extend("enum" = ["local_command_refused", "mcp_server_not_https", "bad_request"]))]
    pub reason: &'static str,
}

/// A stored submission as the operator sees it.
#[derive(Serialize, schemars::JsonSchema)]
pub struct StoredSubmission {
    /// The dimensions as submitted.
    pub dimensions: Value,
    /// It changed the displayed score.
    pub displaced: bool,
    /// How long the run took.
    pub execution_time_ms: f64,
    /// The keyed id of the provider's client network.
    pub network: Option<String>,
    /// What a `protocol` run's probe observed.
    pub observed: Value,
    /// Who submitted it.
    pub provider_id: String,
    /// The recorded score.
    pub recorded_score: f64,
    /// The provider's runner.
    pub runner_id: String,
    /// reading (it counts), pending (an agent result waiting for another network), disagreed, unverified (stored before results were checked).
    #[schemars(extend("enum" = ["reading", "pending", "disagreed", "unverified"]))]
    pub status: String,
    /// `bs_` + 16 hex.
    pub submission_id: String,
    /// When it was submitted.
    #[schemars(extend("format" = "date-time"))]
    pub submitted_at: String,
    /// The tests, errors redacted.
    pub test_results: Value,
}

/// `GET /v1/benchmark/directives/{id}`: the directive, its lease, the submission that
/// completed it and every submission it got; `status: refused` (with `refused {reason,
/// error}`) for a stored directive today's rules refuse, which no provider sees.
pub async fn one(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<OperatorDirective>, AppError> {
    admin(&state, &headers)?;
    crate::extract::check_name("directive_id", &id, 64)?;
    let now = state.now();
    let d = store::directive(&state.db, &id)
        .await?
        .ok_or_else(|| Misuse::Unknown.refusal(&id))?;
    let leased = d.leased_to(now).map(str::to_owned);
    let refused = d.refused();
    let status = match (d.status.as_str(), &leased, &refused) {
        ("done", _, _) => Status::Done,
        (_, _, Some(_)) => Status::Refused,
        (_, Some(_), _) => Status::Claimed,
        _ => Status::Open,
    };
    let all = store::submissions_of(&state.db, &id).await?;
    let submission = d
        .submission_id
        .as_ref()
        .and_then(|sid| all.iter().find(|s| &s.submission_id == sid))
        .map(submission_view);
    Ok(Json(OperatorDirective {
        directive: view(&d),
        lease: match (leased, d.lease_expires_at) {
            (Some(provider_id), Some(until)) => Some(Holder {
                expires_at: iso(until),
                provider_id,
            }),
            _ => None,
        },
        refused: refused.map(|e| {
            let r = spec_refusal(&e);
            SpecRefused {
                error: r.to_string(),
                reason: r.reason(),
            }
        }),
        status,
        submission,
        submissions: all.iter().map(submission_view).collect(),
    }))
}

/// A stored submission as the operator sees it. `status`: `reading` (it counts),
/// `pending` (an agent result waiting for another network), `disagreed`, `unverified`
/// (stored before results were checked).
fn submission_view(s: &store::Submission) -> StoredSubmission {
    StoredSubmission {
        dimensions: s.dimensions.clone(),
        displaced: s.displaced,
        execution_time_ms: s.execution_time_ms,
        network: s.network.clone(),
        observed: s.observed.clone(),
        provider_id: s.provider_id.clone(),
        recorded_score: s.recorded_score,
        runner_id: s.runner_id.clone(),
        status: s.status.clone(),
        submission_id: s.submission_id.clone(),
        submitted_at: iso(s.created_at),
        test_results: s.test_results.clone(),
    }
}
