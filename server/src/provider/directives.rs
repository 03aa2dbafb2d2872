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
use serde::Serialize;
use serde_json::Value;

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

/// `spec`'s schema: the request's own, checked by the core.
pub(super) fn spec_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"$ref": "#/components/schemas/DirectiveSpec"})
}

/// A directive as providers see it (keys in alphabetical order, as always given).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Directive")]
pub struct DirectiveView {
    /// When it was posted.
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    /// Reaches providers of higher agent reputation first.
    pub critical: bool,
    /// `bd_` + 16 hex.
    #[schemars(regex(pattern = r"^bd_[0-9a-f]{16}$"))]
    pub directive_id: String,
    /// 70 % of the price.
    pub earn_credits: f64,
    /// What to run.
    pub kind: Kind,
    /// How long a claim holds it.
    #[schemars(extend("const" = LEASE_SECONDS))]
    pub lease_seconds: i64,
    /// What the vendor pays (outside Lowdown).
    pub price_credits: i64,
    /// The catalog service it benchmarks.
    pub service_id: String,
    /// How, as posted.
    #[schemars(schema_with = "spec_schema")]
    pub spec: Value,
}

/// A lease's length in seconds.
pub const LEASE_SECONDS: i64 = LEASE_MS / 1000;

/// A directive as providers see it.
pub fn view(d: &Directive) -> DirectiveView {
    DirectiveView {
        created_at: iso(d.created_at),
        critical: d.critical,
        directive_id: d.directive_id.clone(),
        earn_credits: credits(provider_share_millicredits(d.price_credits)),
        kind: d.kind,
        lease_seconds: LEASE_SECONDS,
        price_credits: d.price_credits,
        service_id: d.service_id.clone(),
        spec: d.spec.clone(),
    }
}

/// The answer of `GET /v1/provider/directives`.
#[derive(Serialize, schemars::JsonSchema)]
pub struct DirectiveList {
    /// Open directives, critical first, then oldest first.
    pub directives: Vec<DirectiveView>,
    /// Three or more disagreements in 30 days: nothing is listed or may be claimed until then.
    pub excluded: Option<Exclusion>,
    /// Critical directives not yet open to your rank.
    pub held_back: usize,
    /// The caller's provider id.
    pub provider_id: String,
    /// Where the caller stands among providers, while a critical directive is in its head start.
    pub standing: Option<Standing>,
}

/// Why a provider is shown nothing.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Exclusion {
    /// Disagreements in the last 30 days.
    pub disagreements: usize,
    /// When it may claim again.
    #[schemars(extend("format" = "date-time"))]
    pub until: String,
}

/// A provider's place in the provider order.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "ProviderStanding")]
pub struct Standing {
    /// How many providers there are.
    pub providers: usize,
    /// Its rank among them, 0 first.
    pub rank: usize,
}

/// The answer of a claim.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Lease {
    /// The directive leased.
    pub directive: DirectiveView,
    /// Its id.
    pub directive_id: String,
    /// When the lease ends.
    #[schemars(extend("format" = "date-time"))]
    pub lease_expires_at: String,
    /// How long a claim holds it.
    #[schemars(extend("const" = LEASE_SECONDS))]
    pub lease_seconds: i64,
}

/// The answer of a release.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Released {
    /// The directive given up.
    pub directive_id: String,
    /// Always true.
    #[schemars(extend("const" = true))]
    pub released: bool,
    /// Open to everyone again.
    #[schemars(extend("const" = "open"))]
    pub status: &'static str,
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
) -> Result<Json<DirectiveList>, AppError> {
    let me = provider(&state, &headers).await?;
    let now = state.now();
    if let Some((until, n)) = exclusion(&state, &me, now).await? {
        return Ok(Json(DirectiveList {
            directives: Vec::new(),
            excluded: Some(Exclusion {
                disagreements: n,
                until: iso(until),
            }),
            held_back: 0,
            provider_id: me.provider_id,
            standing: None,
        }));
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
    Ok(Json(DirectiveList {
        directives: shown,
        excluded: None,
        held_back,
        provider_id: me.provider_id,
        standing: standing.map(|(rank, providers)| Standing { providers, rank }),
    }))
}

/// `POST /v1/provider/directives/{id}/claim`: a 30-minute lease, one provider at a time.
pub async fn claim(
    State(state): State<AppState>,
    origin: Origin,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Lease>, AppError> {
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
        Ok(until) => Ok(Json(Lease {
            directive: view(&d),
            directive_id: id,
            lease_expires_at: iso(until),
            lease_seconds: LEASE_SECONDS,
        })),
        Err(m) => Err(m.refusal(&id)),
    }
}

/// `POST /v1/provider/directives/{id}/release`: gives the lease up; the directive is open
/// to everyone again at once.
pub async fn release(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Released>, AppError> {
    crate::extract::check_name("directive_id", &id, 64)?;
    let me = provider(&state, &headers).await?;
    let now = state.now();
    match lease::release(&state.db, &id, &me.provider_id, now).await? {
        Ok(()) => Ok(Json(Released {
            directive_id: id,
            released: true,
            status: "open",
        })),
        Err(m) => Err(m.refusal(&id)),
    }
}
