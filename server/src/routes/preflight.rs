//! `GET /api/preflight/{target}`: whether an agent should be asked before it calls a tool of
//! `target`, and the facts why (`lowdown_core::preflight`). The preflight hooks ask this and
//! print the decision; the rule lives in the core, once.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::Json;
use lowdown_core::aggregate::organic_row;
use lowdown_core::preflight::{verdict, Decision, PreflightFacts, VersionCalls};
use lowdown_core::record::validate::MAX_TARGET;
use lowdown_core::scanner::days::day_of;
use lowdown_core::scanner::packages::findings;
use serde::Serialize;

use crate::clock;
use crate::db::lookup::{resolve, Resolution};
use crate::db::reputation::{self as store, Dimension};
use crate::error::{AppError, AppResult};
use crate::scanner::answer::{blocks, package_blocks};
use crate::state::AppState;

/// The preflight answer (`source` last, as every answer).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Preflight")]
pub(crate) struct Answer {
    /// The name asked for.
    pub(crate) target: String,
    /// The stored target judged; null when the name matched none or several (then the
    /// decision is `none`).
    pub(crate) resolved_target: Option<String>,
    /// `ask`: ask the user before the call; `none`: nothing to say.
    pub(crate) decision: Decision,
    /// The facts behind an `ask`, one line each.
    pub(crate) reasons: Vec<String>,
    pub(crate) source: crate::services::source::Source,
}

/// The verdict for `target` now.
pub async fn get(
    State(state): State<AppState>,
    target: Result<Path<String>, PathRejection>,
) -> AppResult<Json<Answer>> {
    let Path(target) = target.map_err(|_| AppError::bad_request("target: not valid UTF-8"))?;
    crate::extract::check_name("target", &target, MAX_TARGET)?;
    let now = clock::now_ms();
    let source = crate::services::source::block(&state, now, &target);
    let Resolution::Found(resolved) =
        resolve(&state.db, &target, state.allow_private_hosts).await?
    else {
        return Ok(Json(Answer {
            target,
            resolved_target: None,
            decision: Decision::None,
            reasons: Vec::new(),
            source,
        }));
    };
    let db = &state.db;
    let (entry, package, versions, networks) = tokio::try_join!(
        blocks(db, &resolved, now),
        package_blocks(db, &resolved, now),
        store::grouped(db, Dimension::ServerVersion, &resolved, None, None),
        store::version_networks(db, &resolved),
    )?;
    let mut facts = PreflightFacts {
        today: day_of(now),
        versions: versions
            .iter()
            .filter(|(v, _)| !v.is_empty())
            .filter_map(|(v, counts)| {
                let row = organic_row(&counts.organic)?;
                Some(VersionCalls {
                    version: v.clone(),
                    rated: row.rated_interactions,
                    successes: counts.organic.success,
                    networks: networks.get(v).copied().unwrap_or(0),
                })
            })
            .collect(),
        ..PreflightFacts::default()
    };
    if let Some(b) = entry {
        facts.registry_status = Some(b.registry.status.clone());
        facts.package_findings = findings(&b.packages);
        facts.current_version = b
            .scanner
            .detail
            .as_ref()
            .and_then(|d| d.declared_vs_observed.observed_server_version.clone())
            .or(b.registry.declared_version.clone());
        facts.definitions = b.scanner.detail.map(|d| d.definition_changes);
    } else if let Some(p) = package {
        facts.package_findings = findings(&p.packages);
    }
    let v = verdict(&resolved, &facts);
    Ok(Json(Answer {
        target,
        resolved_target: Some(resolved),
        decision: v.decision,
        reasons: v.reasons,
        source,
    }))
}
