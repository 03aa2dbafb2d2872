//! Provider mode (SPEC §11): benchmark directives posted by the operator for a paying
//! vendor, and the providers who claim, run and submit them in exchange for credits.
//!
//! - [`auth`]: the operator's bearer token and the provider behind an agent key.
//! - [`operator`]: posting a directive and reading where it stands.
//! - [`directives`]: listing, claiming and releasing (providers); [`lease`] decides claims
//!   and names each misuse.
//! - [`submit`]: submissions; [`verify`]: the server's own probe of a `protocol` remote;
//!   [`record`]: recording a result (the displayed score, the ledger) or turning it down;
//!   [`agree`]: `agent` results waiting for a provider of another network; [`earnings`].
//! - [`scores`]: the `benchmark` block of a catalog service, probe-health cap applied.
//! - [`store`]: the SQL, portable over SQLite and PostgreSQL (migration 0007).
//!
//! Rules (spec shapes, scoring, the submission check, verification, agreement,
//! displacement, the provider order) come from `lowdown_core::benchmark`; this module
//! does the IO. Time is the gateway's
//! clock ([`crate::clock::Clock`]), so tests move leases forward instead of sleeping.

pub mod agree;
pub mod auth;
pub mod directives;
pub mod earnings;
pub mod openapi;
pub mod operator;
pub mod submit;
pub mod verify;

use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;

use crate::clock::iso;
use crate::db::leases::Misuse;
use crate::error::AppError;
use crate::state::AppState;

/// The router of provider mode (its paths are listed in [`crate::routes::ROUTES`]).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/benchmark/directives", post(operator::post))
        .route(
            "/v1/benchmark/directives/{directive_id}",
            get(operator::one),
        )
        .route("/v1/provider/register", post(auth::register))
        .route("/v1/provider/directives", get(directives::list))
        .route(
            "/v1/provider/directives/{directive_id}/claim",
            post(directives::claim),
        )
        .route(
            "/v1/provider/directives/{directive_id}/release",
            post(directives::release),
        )
        .route("/v1/provider/submit", post(submit::post))
        .route("/v1/provider/earnings", get(earnings::get))
}

impl Misuse {
    /// The refusal for directive `id`.
    pub fn refusal(&self, id: &str) -> AppError {
        let (status, reason, message) = match self {
            Misuse::Unknown => (StatusCode::NOT_FOUND, "unknown_directive", format!("directive {id}: no such directive")),
            Misuse::Completed { at } => (StatusCode::CONFLICT, "directive_completed", format!("directive {id}: already completed at {}", iso(*at))),
            Misuse::AlreadyClaimed { until } => (StatusCode::CONFLICT, "already_claimed", format!("directive {id}: you already hold its lease until {}", iso(*until))),
            Misuse::LeaseHeld { other, until } => (StatusCode::CONFLICT, "lease_held", format!("directive {id}: you hold the lease of directive {other} until {}; submit or release it first", iso(*until))),
            Misuse::Foreign { until } => (StatusCode::FORBIDDEN, "foreign_directive", format!("directive {id}: leased to another provider until {}", iso(*until))),
            Misuse::NotClaimed => (StatusCode::CONFLICT, "not_claimed", format!("directive {id}: you hold no lease on it; claim it first")),
            Misuse::LeaseExpired { at } => (StatusCode::CONFLICT, "lease_expired", format!("directive {id}: your lease expired at {}; it is back in the queue", iso(*at))),
        };
        AppError::refused(status, reason, message)
    }
}
