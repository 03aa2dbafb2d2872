//! What providers do with directives: list the open ones, claim one (a 30-minute lease),
//! release it. Critical directives reach providers in order
//! ([`lowdown_core::benchmark::priority`]: fewer disagreements first, then reputation):
//! hidden from a provider, and refused to its claims, until they open to its rank. A
//! provider with three disagreements in 30 days sees and may claim nothing; an `agent`
//! directive waiting for agreement is hidden from, and refused to, the providers and
//! networks that already have a result on it ([`lowdown_core::benchmark::agreement`]).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use lowdown_core::benchmark::agreement;
use lowdown_core::benchmark::directive::DirectiveError;
use lowdown_core::benchmark::priority::{self, CRITICAL_HEAD_START_MS, DISAGREEMENT_WINDOW_MS};
use lowdown_core::benchmark::{provider_share_millicredits, Kind, LEASE_MS};
use serde_json::{json, Value};

use super::auth::provider;
use crate::clock::iso;
use crate::db::gateway::AgentInfo;
use crate::db::leases::{self as lease, Misuse};
use crate::db::provider::{self as store, Directive, Provider};
use crate::error::{AppError, AppResult};
use crate::extract::Origin;
use crate::state::AppState;

/// Most directives one listing shows.
pub const LIST_LIMIT: i64 = 100;

/// Thousandths of a credit as credits (3 decimals).
pub fn credits(millicredits: i64) -> f64 {
    millicredits as f64 / 1000.0
}

/// The refusal of a directive whose spec fails the core's rules, naming the field: 422
/// `local_command_refused` or `mcp_server_not_https` for what could run code on a
/// provider's machine or leave the https rule, 400 `bad_request` for any other fault.
pub fn spec_refusal(e: &DirectiveError) -> AppError {
    let reason = match e {
        DirectiveError::LocalCommandRefused { .. } => "local_command_refused",
        DirectiveError::McpServerNotHttps { .. } => "mcp_server_not_https",
        DirectiveError::Invalid { .. } => return AppError::bad_request(e.to_string()),
    };
    AppError::refused(StatusCode::UNPROCESSABLE_ENTITY, reason, e.to_string())
}

/// A directive as providers see it.
pub fn view(d: &Directive) -> Value {
    json!({
        "directive_id": d.directive_id, "service_id": d.service_id, "kind": d.kind.as_str(),
        "spec": d.spec, "price_credits": d.price_credits,
        "earn_credits": credits(provider_share_millicredits(d.price_credits)),
        "critical": d.critical, "created_at": iso(d.created_at), "lease_seconds": LEASE_MS / 1000,
    })
}

/// Where `me` stands among all providers (rank, how many), by the provider order.
async fn standing(state: &AppState, me: &Provider, now: i64) -> AppResult<(usize, usize)> {
    let all = store::providers_with_agents(&state.db).await?;
    let disagreements = store::disagreement_counts(&state.db, now - DISAGREEMENT_WINDOW_MS).await?;
    let mut reps = Vec::with_capacity(all.len());
    let mut mine = None;
    for (p, registered) in &all {
        let agent = AgentInfo {
            agent_id: p.agent_id.clone(),
            created_at: *registered,
            public_key: None,
        };
        let reputation = crate::services::agents::agent_reputation(state, &agent, now).await?;
        let r = priority::Candidate {
            disagreements: disagreements.get(&p.provider_id).copied().unwrap_or(0),
            reputation,
        };
        if p.provider_id == me.provider_id {
            mine = Some(r);
        }
        reps.push(r);
    }
    Ok(match mine {
        Some(m) => (priority::rank(&m, &reps), reps.len()),
        None => (0, 1),
    })
}

/// When each critical directive of `ds` opens to `me` (others: at once). Reputations are
/// read only while some critical directive is inside its head start.
async fn opening_times(
    state: &AppState,
    me: &Provider,
    ds: &[Directive],
    now: i64,
) -> AppResult<(Vec<i64>, Option<(usize, usize)>)> {
    let fresh = ds
        .iter()
        .any(|d| d.critical && d.created_at + CRITICAL_HEAD_START_MS > now);
    let standing = if fresh {
        Some(standing(state, me, now).await?)
    } else {
        None
    };
    let times = ds
        .iter()
        .map(|d| match (d.critical, standing) {
            (true, Some((rank, n))) => priority::opens_at(d.created_at, rank, n),
            _ => d.created_at,
        })
        .collect();
    Ok((times, standing))
}

/// Until when `me` is excluded for its disagreements, with how many it has in the window.
async fn exclusion(state: &AppState, me: &Provider, now: i64) -> AppResult<Option<(i64, usize)>> {
    let since = now - DISAGREEMENT_WINDOW_MS;
    let times = store::disagreement_times(&state.db, &me.provider_id, since).await?;
    Ok(priority::excluded_until(&times, now).map(|until| (until, times.len())))
}

fn excluded_refusal(id: &str, until: i64, n: usize) -> AppError {
    AppError::refused(
        StatusCode::FORBIDDEN,
        "provider_excluded",
        format!("directive {id}: {n} of your results disagreed in the last 30 days (a protocol result the server's own probe contradicted, an agent result that disagreed with the one that counted); you may claim directives again at {}", iso(until)),
    )
}

/// `GET /v1/provider/directives`: open directives whose spec passes today's rules, critical first (those not yet open to
/// this provider's rank are counted in `held_back`), then oldest first; none while the
/// provider is excluded (`excluded {disagreements, until}`).
pub async fn list(
    State(state): State<AppState>,
    origin: Origin,
    headers: HeaderMap,
) -> Result<Json<Value>, AppError> {
    let me = provider(&state, &headers).await?;
    let now = state.now();
    if let Some((until, n)) = exclusion(&state, &me, now).await? {
        return Ok(Json(json!({
            "provider_id": me.provider_id, "directives": [], "held_back": 0, "standing": null,
            "excluded": {"disagreements": n, "until": iso(until)},
        })));
    }
    let open = store::open_directives(&state.db, now, LIST_LIMIT).await?;
    let pending = if open.iter().any(|d| d.kind == Kind::Agent) {
        store::pending_by_directive(&state.db).await?
    } else {
        Default::default()
    };
    let network = origin.network.as_deref();
    let runnable: Vec<Directive> = open
        .into_iter()
        .filter(|d| d.refused().is_none())
        .filter(|d| {
            d.kind != Kind::Agent || {
                let runs = pending.get(&d.directive_id).map_or(&[][..], Vec::as_slice);
                agreement::may_run(runs, &me.provider_id, network).is_ok()
            }
        })
        .collect();
    let (opens, standing) = opening_times(&state, &me, &runnable, now).await?;
    let mut held_back = 0;
    let mut shown = Vec::new();
    for (d, at) in runnable.iter().zip(opens) {
        if at > now {
            held_back += 1;
        } else {
            shown.push(view(d));
        }
    }
    Ok(Json(json!({
        "provider_id": me.provider_id,
        "directives": shown,
        "held_back": held_back,
        "standing": standing.map(|(rank, n)| json!({"rank": rank, "providers": n})),
        "excluded": null,
    })))
}

/// `POST /v1/provider/directives/{id}/claim`: a 30-minute lease, one provider at a time.
pub async fn claim(
    State(state): State<AppState>,
    origin: Origin,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    crate::extract::check_name("directive_id", &id, 64)?;
    let me = provider(&state, &headers).await?;
    let now = state.now();
    let d = store::directive(&state.db, &id)
        .await?
        .ok_or_else(|| Misuse::Unknown.refusal(&id))?;
    if let Some(e) = d.refused() {
        return Err(spec_refusal(&e));
    }
    if let Some((until, n)) = exclusion(&state, &me, now).await? {
        return Err(excluded_refusal(&id, until, n));
    }
    if d.kind == Kind::Agent && d.completed_at.is_none() {
        let runs = store::pending_of(&state.db, &id).await?;
        if let Err(b) = agreement::may_run(&runs, &me.provider_id, origin.network.as_deref()) {
            return Err(super::submit::barred(b, &id));
        }
    }
    if d.critical && d.leased_to(now).is_none() {
        let (opens, _) = opening_times(&state, &me, std::slice::from_ref(&d), now).await?;
        if opens[0] > now {
            return Err(AppError::refused(
                StatusCode::FORBIDDEN,
                "critical_held",
                format!("directive {id}: critical directives reach providers of higher reputation first; it opens to you at {}", iso(opens[0])),
            ));
        }
    }
    match lease::claim(&state.db, &id, &me.provider_id, now).await? {
        Ok(until) => Ok(Json(json!({
            "directive_id": id, "lease_expires_at": iso(until), "lease_seconds": LEASE_MS / 1000,
            "directive": view(&d),
        }))),
        Err(m) => Err(m.refusal(&id)),
    }
}

/// `POST /v1/provider/directives/{id}/release`: gives the lease up; the directive is open
/// to everyone again at once.
pub async fn release(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    crate::extract::check_name("directive_id", &id, 64)?;
    let me = provider(&state, &headers).await?;
    let now = state.now();
    match lease::release(&state.db, &id, &me.provider_id, now).await? {
        Ok(()) => Ok(Json(
            json!({"directive_id": id, "released": true, "status": "open"}),
        )),
        Err(m) => Err(m.refusal(&id)),
    }
}
