//! The HTTP surface: [`app`] wires every route, CORS and the JSON fallbacks.

use axum::http::Method;
use axum::routing::{get, post};
use axum::Router;
use tower_http::cors::{Any, CorsLayer};

use crate::error::AppError;
use crate::state::AppState;

pub(crate) mod agents;
pub(crate) mod compare;
mod detail;
pub(crate) mod hooks;
pub(crate) mod interactions;
pub(crate) mod meta;
pub(crate) mod node;
pub(crate) mod otlp;
pub(crate) mod preflight;
pub(crate) mod registry;
pub(crate) mod reputation;
pub(crate) mod telemetry;

/// Every route as (method, path in OpenAPI form). `openapi.json` documents exactly these;
/// a test checks both directions.
pub const ROUTES: &[(&str, &str)] = &[
    ("post", "/api/interactions"),
    ("get", "/api/reputation/{target}"),
    ("get", "/api/preflight/{target}"),
    ("get", "/api/compare"),
    ("get", "/api/node/{node_id}"),
    ("get", "/v0.1/servers"),
    ("get", "/v0.1/servers/{name}"),
    ("post", "/v1/telemetry/observe"),
    ("post", "/v1/traces"),
    ("post", "/v1/metrics"),
    ("post", "/v1/auth/agents/register"),
    ("post", "/v1/sampling/verify"),
    ("get", "/v1/sampling/salt"),
    ("get", "/v1/sampling/salts"),
    ("get", "/v1/services"),
    ("get", "/v1/services/{slug}"),
    ("post", "/v1/receipts/submit"),
    ("get", "/v1/agents/{agent_id}/reputation"),
    ("post", "/v1/benchmark/directives"),
    ("get", "/v1/benchmark/directives/{directive_id}"),
    ("post", "/v1/provider/register"),
    ("get", "/v1/provider/directives"),
    ("post", "/v1/provider/directives/{directive_id}/claim"),
    ("post", "/v1/provider/directives/{directive_id}/release"),
    ("post", "/v1/provider/submit"),
    ("get", "/v1/provider/earnings"),
    ("get", "/openapi.json"),
    ("get", "/llms.txt"),
    ("get", "/healthz"),
    ("get", "/hooks/{file}"),
    ("get", "/"),
    ("get", "/t/{target}"),
    ("get", "/daily/{day}"),
    ("get", "/daily/latest"),
    ("get", "/daily/feed.xml"),
    ("get", "/daily/feed.json"),
];

/// The Lowdown API router over `state`.
pub fn app(state: AppState) -> Router {
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
        .allow_headers(Any)
        .expose_headers(Any);
    Router::new()
        .route("/api/interactions", post(interactions::post))
        // `{*target}` keeps raw slashes in names like `mcp:io.github.user/server`.
        .route("/api/reputation/{*target}", get(reputation::get))
        .route("/api/preflight/{*target}", get(preflight::get))
        .route("/api/compare", get(compare::get))
        .route("/api/node/{node_id}", get(node::get))
        // The MCP Registry's own format; `{*name}` keeps the `/` of `io.github.user/server`.
        .route("/v0.1/servers", get(registry::list))
        .route("/v0.1/servers/{*name}", get(registry::one))
        .route("/v1/telemetry/observe", post(telemetry::post))
        // OTLP/HTTP in: MCP spans from any OpenTelemetry SDK (issue 27).
        .route("/v1/traces", post(otlp::traces))
        .route("/v1/metrics", post(otlp::metrics))
        .route("/v1/auth/agents/register", post(agents::register))
        .merge(gateway_api())
        .merge(crate::pages::routes())
        .merge(crate::provider::routes())
        .route("/openapi.json", get(meta::openapi))
        .route("/llms.txt", get(meta::llms))
        .route("/healthz", get(meta::healthz))
        .route("/hooks/{file}", get(hooks::get))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::extract::DefaultBodyLimit::disable())
        .layer(cors)
        .with_state(state)
}

/// The sampling gateway's answers (SPEC §10), in `crate::gateway::api`.
fn gateway_api() -> Router<AppState> {
    use crate::gateway::api;
    Router::new()
        .route("/v1/sampling/verify", post(api::verify))
        .route("/v1/sampling/salt", get(api::current_salt))
        .route("/v1/sampling/salts", get(api::published))
        .route("/v1/services", get(api::list))
        .route("/v1/services/{slug}", get(api::one))
        .route("/v1/receipts/submit", post(api::submit_receipt))
        .route("/v1/agents/{agent_id}/reputation", get(api::reputation))
}

async fn not_found() -> AppError {
    AppError::not_found("no such endpoint; see /openapi.json")
}

async fn method_not_allowed() -> AppError {
    AppError::MethodNotAllowed
}

pub(crate) use crate::services::records::private_host_error;

/// The sender of a write as the records service takes it.
pub(crate) fn client(origin: &crate::extract::Origin) -> crate::services::records::Client {
    crate::services::records::Client {
        ip: origin.ip,
        network: origin.network.clone(),
        trusted: origin.trusted,
    }
}
