//! `GET /hooks/{file}`: the drop-in Claude Code hooks, single files on Python's standard
//! library only, exactly as the prowl wheel ships them (the page's "download the hook").

use axum::extract::Path;
use axum::http::header;
use axum::response::IntoResponse;

use crate::error::{AppError, AppResult};

/// Every hook served, by file name.
pub const HOOKS: &[(&str, &str)] = &[
    (
        "prowl_telemetry_hook.py",
        include_str!("../../../bindings-python/python/prowl/prowl_telemetry_hook.py"),
    ),
    (
        "prowl_preflight_hook.py",
        include_str!("../../../bindings-python/python/prowl/prowl_preflight_hook.py"),
    ),
    (
        "prowl_provider_hook.py",
        include_str!("../../../bindings-python/python/prowl/prowl_provider_hook.py"),
    ),
];

/// One hook file, as a download.
pub async fn get(Path(file): Path<String>) -> AppResult<impl IntoResponse> {
    let (name, text) = HOOKS
        .iter()
        .find(|(name, _)| *name == file)
        .ok_or_else(|| {
            AppError::not_found("no such hook; the hooks are listed in /openapi.json")
        })?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                "text/x-python; charset=utf-8".to_owned(),
            ),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        *text,
    ))
}
