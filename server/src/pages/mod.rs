//! Pages people read (SPEC §9): the home page with its search box, one page per target,
//! and the daily record with its feeds. Rendered on the server from the same answers the
//! API gives, with inline SVG charts and their text equivalents; no script, no external
//! asset, so every page works offline and without JavaScript.
//!
//! Modules: [`layout`] (the shell), [`charts`] (SVG and tables), [`escape`] (the one
//! escaping function), [`home`], [`target`] and [`registry_view`], [`daily`].

pub mod changes;
pub mod charts;
pub mod daily;
pub mod escape;
pub mod home;
pub mod layout;
pub mod openapi;
pub mod registry_view;
pub mod target;

use axum::routing::get;
use axum::Router;

use crate::state::AppState;

/// The page routes (merged into [`crate::routes::app`]).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(home::get))
        // `{*target}` keeps raw slashes in names like `npm:@scope/pkg`.
        .route("/t/{*target}", get(target::get))
        .route("/daily/latest", get(daily::latest))
        .route("/daily/feed.xml", get(daily::feed_xml))
        .route("/daily/feed.json", get(daily::feed_json))
        .route("/daily/{day}", get(daily::day))
}

/// The base URL links in feeds start with: `--public-url`, else none, so links are
/// relative (a reader resolves them against the feed's own URL). Never the request's
/// `Host`, which any client sets: a cache or a reader would keep links to the host it named.
pub fn public_base(state: &AppState) -> String {
    state
        .public_url
        .as_deref()
        .map(|u| u.trim_end_matches('/').to_owned())
        .unwrap_or_default()
}
