//! A fixture MCP Registry: `GET /v0.1/servers` in the v0.1 shape, pages keyed by cursor,
//! with faults on demand (a 500 before a page, a cursor that repeats).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

/// One request the Registry saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub query: BTreeMap<String, String>,
    pub user_agent: String,
    pub accept: String,
}

#[derive(Default)]
struct Inner {
    /// cursor ("" for the first page) → (servers, next cursor).
    pages: BTreeMap<String, (Vec<Value>, Option<String>)>,
    fail_once: BTreeSet<String>,
    seen: Vec<Seen>,
}

/// A running fixture Registry.
#[derive(Clone)]
pub struct Registry {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

/// A Registry entry in the v0.1 shape.
pub fn entry(
    name: &str,
    version: &str,
    status: &str,
    latest: bool,
    remotes: &[(&str, &str)],
) -> Value {
    let remotes: Vec<Value> = remotes
        .iter()
        .map(|(kind, url)| json!({"type": kind, "url": url}))
        .collect();
    json!({
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
            "name": name,
            "description": "a fixture server",
            "version": version,
            "remotes": remotes,
            "packages": [{"registryType": "npm", "identifier": format!("@fixture/{}", name.rsplit('/').next().unwrap_or(name)), "version": version, "transport": {"type": "stdio"}}],
        },
        "_meta": {"io.modelcontextprotocol.registry/official": {
            "status": status, "publishedAt": "2026-09-01T10:00:00Z",
            "updatedAt": "2026-09-02T10:00:00Z", "isLatest": latest,
        }},
    })
}

/// `entry` declaring `packages` (`(registryType, identifier, version)`) instead of its own.
pub fn with_packages(mut entry: Value, packages: &[(&str, &str, &str)]) -> Value {
    entry["server"]["packages"] = packages
        .iter()
        .map(|(kind, id, v)| json!({"registryType": kind, "identifier": id, "version": v, "transport": {"type": "stdio"}}))
        .collect();
    entry
}

/// An active, latest entry with one streamable-HTTP remote.
pub fn streamable(name: &str, url: &str) -> Value {
    entry(name, "1.0.0", "active", true, &[("streamable-http", url)])
}

async fn servers(
    State(inner): State<Arc<Mutex<Inner>>>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let text = |h: &str| {
        headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let mut inner = inner.lock().unwrap();
    inner.seen.push(Seen {
        query: query.clone(),
        user_agent: text("user-agent"),
        accept: text("accept"),
    });
    let cursor = query.get("cursor").cloned().unwrap_or_default();
    if inner.fail_once.remove(&cursor) {
        return (StatusCode::INTERNAL_SERVER_ERROR, "upstream hiccup").into_response();
    }
    match inner.pages.get(&cursor) {
        Some((servers, next)) => Json(json!({
            "servers": servers,
            "metadata": {"nextCursor": next, "count": servers.len()},
        }))
        .into_response(),
        None => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "unknown cursor"})),
        )
            .into_response(),
    }
}

impl Registry {
    pub async fn start() -> Registry {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let app = Router::new()
            .route("/v0.1/servers", get(servers))
            .with_state(inner.clone());
        let addr = super::serve(app).await;
        Registry {
            url: format!("http://{addr}"),
            inner,
        }
    }

    /// Serves `entries`, `per_page` to a page, with cursors `c1`, `c2`, ...
    pub fn set_entries(&self, entries: Vec<Value>, per_page: usize) {
        let chunks: Vec<Vec<Value>> = entries
            .chunks(per_page.max(1))
            .map(<[Value]>::to_vec)
            .collect();
        let n = chunks.len();
        let mut pages = BTreeMap::new();
        for (i, servers) in chunks.into_iter().enumerate() {
            let cursor = if i == 0 {
                String::new()
            } else {
                format!("c{i}")
            };
            let next = (i + 1 < n).then(|| format!("c{}", i + 1));
            pages.insert(cursor, (servers, next));
        }
        if n == 0 {
            pages.insert(String::new(), (Vec::new(), None));
        }
        self.inner.lock().unwrap().pages = pages;
    }

    /// Serves exactly these pages: (cursor that asks for it, servers, next cursor).
    pub fn set_pages(&self, pages: Vec<(&str, Vec<Value>, Option<&str>)>) {
        self.inner.lock().unwrap().pages = pages
            .into_iter()
            .map(|(c, s, n)| (c.to_owned(), (s, n.map(str::to_owned))))
            .collect();
    }

    /// The next request for the page at `cursor` answers 500.
    pub fn fail_once(&self, cursor: &str) {
        self.inner
            .lock()
            .unwrap()
            .fail_once
            .insert(cursor.to_owned());
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.inner.lock().unwrap().seen.clone()
    }
}
