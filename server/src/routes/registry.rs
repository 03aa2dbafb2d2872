//! `GET /v0.1/servers` and `GET /v0.1/servers/{name}`: the MCP Registry's own format
//! (see `services::registry_view`). Names hold a `/` (`io.github.owner/server`), raw or
//! as `%2F`, matched like `/api/reputation/{target}`; the Registry's own paths
//! `{name}/versions/latest`, `{name}/versions/{version}` and `{name}/versions` answer too.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use lowdown_core::days::parse_iso;
use lowdown_core::scanner::registry::MAX_NAME;
use serde::Deserialize;

use crate::clock;
use crate::db::registry_view::PageQuery;
use crate::error::{AppError, AppResult};
use crate::services::registry_view::{self as view, Missing, DEFAULT_LIMIT, MAX_LIMIT};
use crate::state::AppState;

/// Longest version accepted in a `/versions/{version}` path (the Registry's `maxLength`).
const MAX_VERSION: usize = 255;

/// Query parameters of the list, as the Registry names them; anything else is ignored.
#[derive(Debug, Deserialize)]
pub struct Params {
    /// The previous page's `metadata.nextCursor`.
    pub cursor: Option<String>,
    /// 1 to 100 (default 30); read as text so a bad one is named in the error.
    pub limit: Option<String>,
    /// Substring of the name, case-insensitive.
    pub search: Option<String>,
    /// RFC 3339: entries whose official `updatedAt` is at or after it.
    pub updated_since: Option<String>,
    /// Only `latest`: Lowdown keeps the latest version of each server.
    pub version: Option<String>,
}

fn page_query(p: Params) -> AppResult<PageQuery> {
    let limit = match p.limit.as_deref() {
        None => DEFAULT_LIMIT,
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                AppError::bad_request(format!("limit: must be an integer from 1 to {MAX_LIMIT}"))
            })?,
    };
    if let Some(c) = &p.cursor {
        // A cursor is the last name of the page before; one with a space cannot be one.
        crate::extract::check_name("cursor", c, MAX_NAME)?;
        if c.chars().any(char::is_whitespace) {
            return Err(AppError::bad_request(
                "cursor: not a cursor this server issued (use metadata.nextCursor as given)",
            ));
        }
    }
    if let Some(s) = &p.search {
        crate::extract::check_name("search", s, MAX_NAME)?;
    }
    let updated_since_ms = match p.updated_since.as_deref() {
        None => None,
        Some(t) => Some(parse_iso(t).ok_or_else(|| {
            AppError::bad_request(
                "updated_since: must be an RFC 3339 date-time, e.g. 2025-08-07T13:15:04.280Z",
            )
        })?),
    };
    if p.version.as_deref().is_some_and(|v| v != "latest") {
        return Err(AppError::bad_request(
            "version: only `latest` is served (Lowdown keeps the latest version of each server)",
        ));
    }
    Ok(PageQuery {
        after: p.cursor,
        search: p.search,
        updated_since_ms,
        limit,
    })
}

/// `GET /v0.1/servers`: one page of servers in the Registry's `ServerList` shape.
pub async fn list(
    State(state): State<AppState>,
    params: Result<Query<Params>, QueryRejection>,
) -> AppResult<Response> {
    let Query(p) =
        params.map_err(|e| AppError::bad_request(format!("query: {}", e.body_text())))?;
    let q = page_query(p)?;
    Ok(Json(view::list(&state, q, clock::now_ms()).await?).into_response())
}

/// What a path under `/v0.1/servers/` asks for.
enum Ask<'a> {
    /// `{name}`, `{name}/versions/latest` or `{name}/versions/{version}`.
    One(&'a str, Option<&'a str>),
    /// `{name}/versions`.
    Versions(&'a str),
}

/// Splits the Registry's suffixes off. A Registry name holds exactly one `/`, so
/// `a/b/versions/…` can only be name `a/b` and its versions.
fn ask(rest: &str) -> Ask<'_> {
    if let Some(name) = rest.strip_suffix("/versions") {
        return Ask::Versions(name);
    }
    match rest.split_once("/versions/") {
        Some((name, version)) if name.contains('/') && !version.is_empty() => {
            Ask::One(name, Some(version))
        }
        _ => Ask::One(rest, None),
    }
}

/// `GET /v0.1/servers/{name}` (and the Registry's `/versions` paths): one server in the
/// `ServerResponse` shape, 404 `{"error": …}` for a name the Registry did not list.
pub async fn one(
    State(state): State<AppState>,
    rest: Result<Path<String>, PathRejection>,
) -> AppResult<Response> {
    let Path(rest) = rest.map_err(|_| AppError::bad_request("name: not valid UTF-8"))?;
    // A name, plus room for the Registry's `/versions/{version}` suffix.
    crate::extract::check_name("name", &rest, MAX_NAME + "/versions/".len() + MAX_VERSION)?;
    let now = clock::now_ms();
    let (name, version, versions) = match ask(&rest) {
        Ask::One(name, version) => (name, version, false),
        Ask::Versions(name) => (name, None, true),
    };
    match view::one(&state, name, version, now).await? {
        Ok(server) if versions => Ok(Json(view::ServerList {
            servers: vec![server],
            metadata: view::Metadata {
                next_cursor: None,
                count: 1,
            },
        })
        .into_response()),
        Ok(server) => Ok(Json(server).into_response()),
        Err(Missing::Server) => Err(AppError::not_found(format!(
            "name: no server {name} in the MCP Registry as Lowdown last read it"
        ))),
        Err(Missing::Version) => Err(AppError::not_found(format!(
            "version: server {name} is listed at another version; Lowdown keeps the latest"
        ))),
    }
}
