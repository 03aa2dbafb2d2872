//! Fixture package registries on 127.0.0.1, answering in the real formats: an npm registry
//! (`GET /{name}`, scoped names as `@scope%2fname`, the abbreviated document when asked
//! for) and a PyPI (Index API `GET /simple/{name}/` as PEP 691 JSON with the PEP 792
//! `project-status`, JSON API `GET /pypi/{name}/json`; other spellings of a name get the
//! 301 PyPI answers them with).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};

/// What a fixture answers for one name.
#[derive(Debug, Clone)]
pub enum Answer {
    /// 200 with this JSON.
    Json(Value),
    /// This status, an empty body.
    Status(u16),
}

/// One request a fixture saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub accept: String,
    pub user_agent: String,
}

#[derive(Default)]
struct Inner {
    npm: BTreeMap<String, Answer>,
    simple: BTreeMap<String, Answer>,
    json: BTreeMap<String, Answer>,
    seen: Vec<Seen>,
}

type Shared = Arc<Mutex<Inner>>;

/// Both fixtures.
#[derive(Clone)]
pub struct Packages {
    pub npm_url: String,
    pub pypi_url: String,
    inner: Shared,
}

/// An abbreviated npm document: `versions` with their deprecation messages ("" for none).
pub fn npm_doc(name: &str, latest: &str, versions: &[(&str, &str)]) -> Value {
    let versions: serde_json::Map<String, Value> = versions
        .iter()
        .map(|(v, deprecated)| {
            let mut m = json!({"name": name, "version": v,
                "dist": {"tarball": format!("https://registry.example/{name}/-/{v}.tgz"), "shasum": "00"}});
            if !deprecated.is_empty() {
                m["deprecated"] = json!(deprecated);
            }
            (v.to_string(), m)
        })
        .collect();
    json!({"name": name, "modified": "2026-11-02T10:00:00.000Z", "dist-tags": {"latest": latest}, "versions": versions})
}

/// A PEP 691 project page as PyPI serves it (API 1.4): `status` None leaves the marker out.
pub fn simple_doc(name: &str, status: Option<&str>, versions: &[&str]) -> Value {
    let files: Vec<Value> = versions
        .iter()
        .map(|v| json!({"filename": format!("{}-{v}.tar.gz", name.replace('-', "_")),
            "url": format!("https://files.example/{name}-{v}.tar.gz"), "hashes": {"sha256": "00"},
            "requires-python": ">=3.10", "size": 1000, "upload-time": "2026-10-01T00:00:00.000000Z",
            "yanked": false, "data-dist-info-metadata": false, "core-metadata": false, "provenance": null}))
        .collect();
    let mut doc = json!({"meta": {"api-version": "1.4", "_last-serial": 42}, "name": name,
        "versions": versions, "files": files});
    if let Some(s) = status {
        doc["project-status"] = json!({"status": s});
    }
    doc
}

/// A JSON API project answer: `info.version` and `info.yanked`.
pub fn pypi_json(name: &str, latest: &str, yanked: bool) -> Value {
    json!({"info": {"name": name, "version": latest, "summary": "a fixture", "yanked": yanked,
        "yanked_reason": if yanked { json!("CANARY_yank_reason") } else { Value::Null }},
        "last_serial": 42, "urls": [], "releases": {latest: []}, "vulnerabilities": []})
}

fn pep503(name: &str) -> String {
    lowdown_core::target_label::lookup_form(&format!("pypi:{name}"))[5..].to_owned()
}

fn answer(a: Option<Answer>, content_type: &str) -> Response {
    match a {
        Some(Answer::Json(v)) => (
            StatusCode::OK,
            [("content-type", content_type.to_owned())],
            v.to_string(),
        )
            .into_response(),
        Some(Answer::Status(s)) => StatusCode::from_u16(s).unwrap().into_response(),
        None => (
            StatusCode::NOT_FOUND,
            [("content-type", "application/json")],
            r#"{"error":"Not found"}"#,
        )
            .into_response(),
    }
}

fn note(inner: &Shared, path: String, headers: &HeaderMap) {
    let text = |h: &str| {
        headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    inner.lock().unwrap().seen.push(Seen {
        path,
        accept: text("accept"),
        user_agent: text("user-agent"),
    });
}

async fn npm(
    State(inner): State<Shared>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    note(&inner, format!("/{name}"), &headers);
    let a = inner.lock().unwrap().npm.get(&name).cloned();
    answer(a, "application/vnd.npm.install-v1+json")
}

async fn simple(
    State(inner): State<Shared>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    note(&inner, format!("/simple/{name}/"), &headers);
    if pep503(&name) != name {
        return (
            StatusCode::MOVED_PERMANENTLY,
            [("location", format!("/simple/{}/", pep503(&name)))],
        )
            .into_response();
    }
    let a = inner.lock().unwrap().simple.get(&name).cloned();
    answer(a, "application/vnd.pypi.simple.v1+json")
}

async fn pypi_json_route(
    State(inner): State<Shared>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    note(&inner, format!("/pypi/{name}/json"), &headers);
    if pep503(&name) != name {
        return (
            StatusCode::MOVED_PERMANENTLY,
            [("location", format!("/pypi/{}/json", pep503(&name)))],
        )
            .into_response();
    }
    let a = inner.lock().unwrap().json.get(&name).cloned();
    answer(a, "application/json")
}

impl Packages {
    pub async fn start() -> Packages {
        let inner: Shared = Arc::default();
        let npm_app = Router::new()
            .route("/{*name}", get(npm))
            .with_state(inner.clone());
        let pypi_app = Router::new()
            .route("/simple/{name}/", get(simple))
            .route("/pypi/{name}/json", get(pypi_json_route))
            .with_state(inner.clone());
        let npm_addr = super::serve(npm_app).await;
        let pypi_addr = super::serve(pypi_app).await;
        Packages {
            npm_url: format!("http://{npm_addr}"),
            pypi_url: format!("http://{pypi_addr}"),
            inner,
        }
    }

    /// What `GET /{name}` answers on the npm fixture.
    pub fn npm(&self, name: &str, a: Answer) {
        self.inner.lock().unwrap().npm.insert(name.to_owned(), a);
    }

    /// What the Index API and the JSON API answer for a normalised PyPI name.
    pub fn pypi(&self, name: &str, index: Answer, json: Answer) {
        let mut i = self.inner.lock().unwrap();
        i.simple.insert(name.to_owned(), index);
        i.json.insert(name.to_owned(), json);
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.inner.lock().unwrap().seen.clone()
    }

    /// The sources pointing at these fixtures.
    pub fn sources(&self) -> lowdown_server::scanner::packages::PackageSources {
        lowdown_server::scanner::packages::PackageSources {
            npm_registry_url: self.npm_url.clone(),
            pypi_url: self.pypi_url.clone(),
        }
    }
}
