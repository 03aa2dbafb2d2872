//! The operator's side: posting a directive for a paying vendor (payments are outside
//! Lowdown) and reading where it stands. Both need `Authorization: Bearer
//! $LOWDOWN_ADMIN_TOKEN`.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use lowdown_core::benchmark::directive::{check_new, McpServer, Spec};
use lowdown_core::scanner::target::Policy;
use serde_json::{json, Value};

use super::auth::admin;
use super::directives::{spec_refusal, view};
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
) -> Result<(StatusCode, Json<Value>), AppError> {
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
    let mut v = view(&stored);
    v["status"] = json!("open");
    Ok((StatusCode::CREATED, Json(v)))
}

/// `GET /v1/benchmark/directives/{id}`: the directive, its lease, the submission that
/// completed it and every submission it got; `status: refused` (with `refused {reason,
/// error}`) for a stored directive today's rules refuse, which no provider sees.
pub async fn one(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    admin(&state, &headers)?;
    crate::extract::check_name("directive_id", &id, 64)?;
    let now = state.now();
    let d = store::directive(&state.db, &id)
        .await?
        .ok_or_else(|| Misuse::Unknown.refusal(&id))?;
    let mut v = view(&d);
    let leased = d.leased_to(now).map(str::to_owned);
    let refused = d.refused();
    v["status"] = json!(match (d.status.as_str(), &leased, &refused) {
        ("done", _, _) => "done",
        (_, _, Some(_)) => "refused",
        (_, Some(_), _) => "claimed",
        _ => "open",
    });
    v["refused"] = refused.map_or(Value::Null, |e| {
        let r = spec_refusal(&e);
        json!({"reason": r.reason(), "error": r.to_string()})
    });
    v["lease"] = match (&leased, d.lease_expires_at) {
        (Some(h), Some(until)) => json!({"provider_id": h, "expires_at": iso(until)}),
        _ => Value::Null,
    };
    let all = store::submissions_of(&state.db, &id).await?;
    v["submission"] = d
        .submission_id
        .as_ref()
        .and_then(|sid| all.iter().find(|s| &s.submission_id == sid))
        .map_or(Value::Null, submission_view);
    v["submissions"] = all.iter().map(submission_view).collect();
    Ok(Json(v))
}

/// A stored submission as the operator sees it. `status`: `reading` (it counts),
/// `pending` (an agent result waiting for another network), `disagreed`, `unverified`
/// (stored before results were checked).
fn submission_view(s: &store::Submission) -> Value {
    json!({
        "submission_id": s.submission_id, "provider_id": s.provider_id, "status": s.status,
        "recorded_score": s.recorded_score, "dimensions": s.dimensions, "observed": s.observed,
        "test_results": s.test_results, "runner_id": s.runner_id,
        "execution_time_ms": s.execution_time_ms, "displaced": s.displaced,
        "network": s.network, "submitted_at": iso(s.created_at),
    })
}
