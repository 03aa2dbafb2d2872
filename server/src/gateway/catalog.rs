//! The Prowl catalog, `LOWDOWN_HOME/services.toml` (SPEC §10): one `[[service]]` per
//! vendor the gateway fronts. Every error names the file's line and the key at fault.
//!
//! ```toml
//! [[service]]
//! slug = "search"                      # route /search/{path}
//! service_id = "svc_search"
//! upstream = "https://api.search.example"
//! hosts = ["api.search.example"]
//! sampling_rate = 0.05
//! allow = ["GET /v1/search", "POST /v1/embed"]   # nothing is carried without it
//! credential = { mode = "inject", header = "Authorization", env = "SEARCH_API_KEY", format = "Bearer {}" }
//! # or, for an account-scoped API: credential = { mode = "passthrough", header = "Authorization" }
//! public_key = "base64 Ed25519 key"    # optional: verifies the service's receipt signatures
//! min_reputation = { consistency = 0.8, tenure_days = 7 }   # optional
//! ```

use std::collections::BTreeMap;
use std::ops::Range;

use lowdown_core::gateway::allow::{GatewayRules, Mode};
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// The credential header of a service. `inject` (the default): the gateway puts `format`,
/// `{}` replaced by the value of environment variable `env`, into `header`. `passthrough`:
/// the agent's own `header` is forwarded as sent (and never stored or logged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Credential {
    /// `inject` (default) or `passthrough`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Header name, e.g. `Authorization`.
    pub header: String,
    /// Environment variable holding the operator's secret, e.g. `STRIPE_API_KEY` (`inject`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// Value template; `{}` stands for the secret. Default `{}` (`inject`).
    #[serde(default = "default_format")]
    pub format: String,
}

fn default_format() -> String {
    "{}".into()
}

/// One checked catalog entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Service {
    /// Route segment: the gateway serves `/{slug}/{path}`.
    pub slug: String,
    /// Stable id used in decisions, telemetry and ProxyCalls.
    pub service_id: String,
    /// Display name (default: the slug).
    pub name: String,
    /// Base URL calls are forwarded to (https).
    pub upstream: String,
    /// Hosts that belong to the service (telemetry for them resolves to `service_id`).
    pub hosts: Vec<String>,
    /// Share of agents whose calls go through the gateway, 0..=1.
    pub sampling_rate: f64,
    /// The calls the gateway carries, `METHOD /prefix` each (none: nothing).
    pub allow: Vec<String>,
    /// Whose credential the vendor sees.
    pub mode: Mode,
    /// The header the credential is in (a name, never a value).
    pub credential_header: Option<String>,
    /// The credential's configuration (never listed by the API).
    #[serde(skip)]
    pub credential: Option<Credential>,
    /// `allow` and `mode` as the core checks calls with them.
    #[serde(skip)]
    pub rules: GatewayRules,
    /// base64 Ed25519 key that verifies the service's receipt signatures.
    pub public_key: Option<String>,
    /// Reputation an agent needs to call without the hourly limit.
    pub min_reputation: BTreeMap<String, f64>,
}

/// A catalog file that cannot be used, naming where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CatalogError {
    /// Something wrong at a line of the file.
    #[error("{file}:{line}: {message}")]
    At {
        /// The file, as given.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong, naming the key.
        message: String,
    },
}

#[derive(Deserialize)]
struct RawFile {
    #[serde(default)]
    service: Vec<Spanned<RawService>>,
    // The old shape, recognised only to say what to write instead.
    services: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawService {
    slug: Option<Spanned<String>>,
    service_id: Option<Spanned<String>>,
    name: Option<Spanned<String>>,
    upstream: Option<Spanned<String>>,
    hosts: Option<Spanned<Vec<String>>>,
    sampling_rate: Option<Spanned<f64>>,
    allow: Option<Spanned<Vec<String>>>,
    credential: Option<Spanned<Credential>>,
    public_key: Option<Spanned<String>>,
    min_reputation: Option<Spanned<BTreeMap<String, f64>>>,
    id: Option<Spanned<toml::Value>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn id_ok(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn slug_ok(s: &str) -> bool {
    s.len() <= 63
        && s.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn host_ok(h: &str) -> bool {
    h.len() <= 253
        && h.contains('.')
        && !h.starts_with('.')
        && !h.ends_with('.')
        && h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
}

fn env_ok(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether `host` names this machine (for `--unsafe-allow-loopback`).
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Checks an upstream base URL: `https://host[:port][/path]`, no query, fragment or
/// credentials; `http://` only for a loopback host and only with `allow_loopback`.
pub fn check_upstream(url: &str, allow_loopback: bool) -> Result<String, String> {
    let u = reqwest::Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
    let host = u.host_str().unwrap_or_default();
    let https = u.scheme() == "https";
    let local_http = u.scheme() == "http" && allow_loopback && is_loopback_host(host);
    if !(https || local_http) || host.is_empty() {
        return Err("must be an https:// URL (http:// only for a loopback host with --unsafe-allow-loopback)".into());
    }
    if !u.username().is_empty()
        || u.password().is_some()
        || u.query().is_some()
        || u.fragment().is_some()
    {
        return Err("must have no credentials, query or fragment".into());
    }
    Ok(u.as_str().trim_end_matches('/').to_owned())
}

/// Checks a credential table: a valid header name; for `inject` an environment variable and
/// a format with at most one `{}`; for `passthrough` neither. The error names the key.
fn check_credential(c: &Credential) -> Result<(), String> {
    if axum::http::HeaderName::from_bytes(c.header.as_bytes()).is_err() {
        return Err(".header: not a valid header name".into());
    }
    match (c.mode.as_deref(), &c.env) {
        (Some("passthrough"), Some(_)) => Err(".env: a passthrough service forwards the agent's own credential and names no environment variable".into()),
        (Some("passthrough"), None) if c.format != "{}" => Err(".format: a passthrough service forwards the header as sent".into()),
        (Some("passthrough"), None) => Ok(()),
        (_, None) => Err(".env: missing (the environment variable holding the operator's key, like STRIPE_API_KEY; or mode = \"passthrough\")".into()),
        (_, Some(env)) if !env_ok(env) => Err(".env: must be an environment variable name like STRIPE_API_KEY".into()),
        _ if c.format.matches("{}").count() > 1 || c.format.chars().any(char::is_control) => {
            Err(".format: at most one {} and no control characters".into())
        }
        _ => Ok(()),
    }
}

/// Parses and checks a catalog. `file` names it in errors; `allow_loopback` admits
/// `http://` loopback upstreams (tests).
pub fn parse(text: &str, file: &str, allow_loopback: bool) -> Result<Vec<Service>, CatalogError> {
    let at = |span: Range<usize>, message: String| CatalogError::At {
        file: file.to_owned(),
        line: line_of(text, span.start),
        message,
    };
    if serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.is_object() || v.is_array())
    {
        return Err(at(0..0, "this is a JSON catalog, the old shape: services.toml is TOML with one [[service]] table per service (slug, service_id, upstream, hosts, sampling_rate, credential)".into()));
    }
    let raw: RawFile = toml::from_str(text)
        .map_err(|e| at(e.span().unwrap_or(0..0), e.message().replace('\n', " ")))?;
    if let Some(old) = raw.services {
        return Err(at(old.span(), "[[services]] is the old catalog shape: write [[service]] tables with slug, service_id, upstream, hosts, sampling_rate and credential".into()));
    }
    let mut out: Vec<Service> = Vec::with_capacity(raw.service.len());
    for (i, entry) in raw.service.into_iter().enumerate() {
        let whole = entry.span();
        let r = entry.into_inner();
        let key = |k: &str| format!("service[{i}].{k}");
        if let Some(id) = r.id {
            return Err(at(
                id.span(),
                format!(
                    "{}: `id` is the old key: write `service_id` (and a `slug` for the route)",
                    key("id")
                ),
            ));
        }
        let need = |v: Option<Spanned<String>>, k: &str| {
            v.ok_or_else(|| at(whole.clone(), format!("{}: missing", key(k))))
        };
        let slug = need(r.slug, "slug")?;
        if !slug_ok(slug.get_ref()) {
            return Err(at(
                slug.span(),
                format!("{}: must match ^[a-z0-9][a-z0-9-]{{0,62}}$", key("slug")),
            ));
        }
        let sid = need(r.service_id, "service_id")?;
        if !id_ok(sid.get_ref(), 64) {
            return Err(at(
                sid.span(),
                format!("{}: must match ^[A-Za-z0-9._-]{{1,64}}$", key("service_id")),
            ));
        }
        if let Some(prev) = out
            .iter()
            .find(|s| s.slug == *slug.get_ref() || s.service_id == *sid.get_ref())
        {
            return Err(at(
                whole.clone(),
                format!(
                    "service[{i}]: slug or service_id repeats {} ({})",
                    prev.slug, prev.service_id
                ),
            ));
        }
        let upstream = need(r.upstream, "upstream")?;
        let upstream_url = check_upstream(upstream.get_ref(), allow_loopback)
            .map_err(|m| at(upstream.span(), format!("{}: {m}", key("upstream"))))?;
        let hosts = r
            .hosts
            .ok_or_else(|| at(whole.clone(), format!("{}: missing", key("hosts"))))?;
        let span = hosts.span();
        let hosts: Vec<String> = hosts
            .into_inner()
            .into_iter()
            .map(|h| h.trim().to_ascii_lowercase())
            .collect();
        if hosts.is_empty() || !hosts.iter().all(|h| host_ok(h)) {
            return Err(at(
                span,
                format!(
                    "{}: list at least one bare DNS name like api.example.com",
                    key("hosts")
                ),
            ));
        }
        let rate = r
            .sampling_rate
            .ok_or_else(|| at(whole.clone(), format!("{}: missing", key("sampling_rate"))))?;
        if !(0.0..=1.0).contains(rate.get_ref()) {
            return Err(at(
                rate.span(),
                format!("{}: must be a number from 0 to 1", key("sampling_rate")),
            ));
        }
        let cred_span = r.credential.as_ref().map_or(whole.clone(), Spanned::span);
        let credential = match r.credential {
            None => None,
            Some(c) => {
                let c = c.into_inner();
                check_credential(&c)
                    .map_err(|m| at(cred_span.clone(), format!("service[{i}].credential{m}")))?;
                Some(c)
            }
        };
        let (allow, allow_span) = match r.allow {
            Some(a) => {
                let span = a.span();
                (a.into_inner(), span)
            }
            None => (Vec::new(), whole.clone()),
        };
        let rules = GatewayRules::new(
            &allow,
            credential.as_ref().and_then(|c| c.mode.as_deref()),
            credential.as_ref().map(|c| c.header.as_str()),
        )
        .map_err(|e| {
            let (k, span) = match e {
                lowdown_core::gateway::allow::RuleError::BadAllowRule { .. } => {
                    ("allow", allow_span)
                }
                _ => ("credential", cred_span),
            };
            at(span, format!("{} ({}): {e}", key(k), slug.get_ref()))
        })?;
        let public_key = match r.public_key {
            Some(k) if !lowdown_core::gateway::receipt::valid_public_key(k.get_ref()) => {
                return Err(at(
                    k.span(),
                    format!(
                        "{}: must be a base64 Ed25519 public key (32 bytes)",
                        key("public_key")
                    ),
                ))
            }
            k => k.map(Spanned::into_inner),
        };
        let min_reputation = match r.min_reputation {
            None => BTreeMap::new(),
            Some(m) => {
                let span = m.span();
                let m = m.into_inner();
                lowdown_core::gateway::reputation::check_min_reputation(&m)
                    .map_err(|e| at(span, format!("service[{i}].{e}")))?;
                m
            }
        };
        let name = r
            .name
            .map(Spanned::into_inner)
            .unwrap_or_else(|| slug.get_ref().clone());
        out.push(Service {
            slug: slug.into_inner(),
            service_id: sid.into_inner(),
            name,
            upstream: upstream_url,
            hosts,
            sampling_rate: rate.into_inner(),
            allow,
            mode: rules.mode(),
            credential_header: credential.as_ref().map(|c| c.header.clone()),
            credential,
            rules,
            public_key,
            min_reputation,
        });
    }
    Ok(out)
}

/// A `[[service]]` table for `s`, as `catalog add` appends it.
pub fn to_toml(s: &Service) -> String {
    let q = |v: &str| toml::Value::String(v.to_owned()).to_string();
    let mut t = format!(
        "\n[[service]]\nslug = {}\nservice_id = {}\nupstream = {}\nhosts = [{}]\nsampling_rate = {}\n",
        q(&s.slug), q(&s.service_id), q(&s.upstream),
        s.hosts.iter().map(|h| q(h)).collect::<Vec<_>>().join(", "),
        toml::Value::Float(s.sampling_rate),
    );
    if s.name != s.slug {
        t.push_str(&format!("name = {}\n", q(&s.name)));
    }
    if !s.allow.is_empty() {
        let a: Vec<String> = s.allow.iter().map(|e| q(e)).collect();
        t.push_str(&format!("allow = [{}]\n", a.join(", ")));
    }
    if let Some(c) = &s.credential {
        let mut fields = Vec::new();
        if let Some(m) = &c.mode {
            fields.push(format!("mode = {}", q(m)));
        }
        fields.push(format!("header = {}", q(&c.header)));
        if let Some(e) = &c.env {
            fields.push(format!("env = {}, format = {}", q(e), q(&c.format)));
        }
        t.push_str(&format!("credential = {{ {} }}\n", fields.join(", ")));
    }
    if let Some(k) = &s.public_key {
        t.push_str(&format!("public_key = {}\n", q(k)));
    }
    t
}

/// The catalog file's name inside `LOWDOWN_HOME`.
pub const FILE_NAME: &str = "services.toml";

/// Reads and checks the catalog at `path`. A missing file is an empty catalog unless it
/// was named explicitly (`explicit`), which is an error.
pub fn load(
    path: &std::path::Path,
    explicit: bool,
    allow_loopback: bool,
) -> Result<Vec<Service>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            parse(&text, &path.display().to_string(), allow_loopback).map_err(|e| e.to_string())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => Ok(Vec::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Appends `s` to the catalog at `path` after checking the whole resulting file; the file
/// is replaced atomically (a temporary file renamed over it), so a refused entry changes nothing.
pub fn append(
    path: &std::path::Path,
    s: &Service,
    allow_loopback: bool,
) -> Result<Vec<Service>, String> {
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let text = format!("{}{}", old, to_toml(s));
    let services =
        parse(&text, &path.display().to_string(), allow_loopback).map_err(|e| e.to_string())?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Usually LOWDOWN_HOME, which holds the database too: created 0700 when missing.
        crate::files::prepare_home(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(services)
}

/// The catalog's services and hosts for telemetry (`db::catalog`).
pub fn telemetry_services(services: &[Service]) -> Vec<crate::db::catalog::Service> {
    services
        .iter()
        .map(|s| crate::db::catalog::Service {
            id: s.service_id.clone(),
            name: s.name.clone(),
            hosts: s.hosts.clone(),
            sampling_rate: Some(s.sampling_rate),
        })
        .collect()
}
