//! `GET /healthz`, `GET /llms.txt`, `GET /openapi.json`.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use serde::Serialize;
use serde_json::Value;

use crate::db::Backend;
use crate::error::AppResult;
use crate::state::AppState;

/// The answer of `GET /healthz`.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Health {
    /// The database engine answered: `sqlite` or `postgres`.
    pub database: &'static str,
    /// Always true (an unreachable database is a 5xx).
    pub ok: bool,
    /// The server's version.
    pub version: &'static str,
}

/// Liveness plus a database round trip.
pub async fn healthz(State(state): State<AppState>) -> AppResult<Json<Health>> {
    state.db.ping().await?;
    let database = match state.db.backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    Ok(Json(Health {
        database,
        ok: true,
        version: env!("CARGO_PKG_VERSION"),
    }))
}

/// How an agent uses this API, in plain text; its field table comes from the core's one
/// definition of the record and the observation.
pub async fn llms() -> impl IntoResponse {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let text = TEXT.get_or_init(|| {
        include_str!("../llms.txt").replace("{{FIELDS}}", &lowdown_core::contract::llms_fields())
    });
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text.as_str(),
    )
}

/// The OpenAPI 3.1 description of every route.
pub async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}
