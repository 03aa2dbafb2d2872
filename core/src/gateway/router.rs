//! The client side of the sampling gateway (SPEC §10): which calls go through it, as a
//! sans-IO state machine every host runs (prowl for httpx, observe(fetch)). The host fetches
//! the catalog (`GET /v1/services`) and the salt (`GET /v1/sampling/salt`) when
//! [`Router::wants_fetch`] says so and hands the answers in ([`Router::loaded`],
//! [`Router::fetch_failed`]); before each call it asks [`Router::route`], and after a refusal
//! it tells [`Router::refused`]. Time comes in as Unix milliseconds.
//!
//! A call is routed when routing is on (an agent key and a gateway URL), a usable salt is in,
//! and the first matching catalog service (same scheme, host and port as its `upstream`, a
//! host equal to one of its `hosts` or under one, a path under its base at a `/`, longest base
//! first) is selected by `PROWL_GATEWAY_SERVICES`, its `allow` rules carry the call, and the
//! decision (`sample::decide`, once per service and salt) samples it. A matching service that
//! does not sample the call sends it direct and counts it `direct`.
//!
//! Catalog entries this client cannot use safely are dropped (their calls go direct): a slug
//! that is not `[a-z0-9-]` (it becomes a path segment), an empty service id, an upstream that
//! is not an `http`/`https` URL without credentials, query or fragment, hosts that are not a
//! list of names, a `sampling_rate` that is not a number from 0 to 1, rules
//! [`GatewayRules::new`] refuses.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::allow::{service_selected, GatewayRules, Verdict};
use crate::days::parse_iso;
use crate::defaults::AGENT_KEY_HEADER;
use crate::sample::{decide, DECISION_HEADER, SALT_ID_HEADER};

/// Milliseconds between catalog refreshes.
pub const CATALOG_TTL_MS: i64 = 3_600_000;
/// Milliseconds before a failed fetch (or one after a refusal that is not stale) is tried again.
pub const RETRY_MS: i64 = 60_000;
/// Milliseconds one fetch of the catalog or the salt may take (the host's timeout).
pub const FETCH_TIMEOUT_MS: u64 = 5_000;
/// The reasons with which the gateway itself (not the vendor) refuses a call.
pub const REFUSAL_REASONS: &[&str] = &[
    "unknown_service",
    "missing_agent_key",
    "unknown_agent_key",
    "missing_salt_id",
    "missing_decision",
    "malformed_decision",
    "unknown_salt",
    "expired_salt",
    "wrong_decision",
    "not_sampled",
    "below_min_reputation",
    "no_credential",
    "not_allowed",
    "bad_path",
    "gateway_rate_limited",
];
/// The refusals after which the salt or the catalog changed: fetch again at once.
pub const STALE_REASONS: &[&str] = &[
    "expired_salt",
    "unknown_salt",
    "wrong_decision",
    "not_sampled",
    "not_allowed",
    "bad_path",
];
/// The statuses a gateway refusal has; a host reads the body for a `reason` only then.
pub const REFUSAL_STATUSES: &[u16] = &[400, 403, 404, 429, 503];

/// Where one sampled call goes instead of the vendor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    /// `{gateway}/{slug}{path}?{query}`.
    pub url: String,
    /// The catalog service's slug.
    pub slug: String,
    /// The catalog service's id.
    pub service_id: String,
    /// Headers to add: the agent key, the salt id and the decision.
    pub headers: Vec<(String, String)>,
    /// Of the caller's header names, those sent along (as given); every other one stays behind.
    pub keep: Vec<String>,
    /// `scheme://host[:port]{base}`: what a gateway redirect maps back onto.
    pub vendor: String,
}

/// What the router has done, as the hosts report it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Calls sent through the gateway.
    pub routed: u64,
    /// Calls to a catalog service the decision did not sample.
    pub direct: u64,
    /// Fetches started.
    pub fetches: u64,
    /// Fetches that failed or brought nothing usable.
    pub fetch_failures: u64,
    /// Calls the gateway itself refused.
    pub refused: u64,
}

/// What the router knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// A catalog and a usable salt are in.
    pub ready: bool,
    /// The agent the salt answer named.
    pub agent_id: Option<String>,
    /// The salt in use.
    pub salt_id: Option<String>,
    /// How many catalog services it routes.
    pub services: usize,
    /// What it has done.
    pub counts: Counts,
}

/// What an answer to a routed call was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The gateway itself refused (its status and reason): the router starts over.
    pub gateway: bool,
    /// When the catalog and salt are fetched again (Unix ms); `None` when not the gateway's.
    pub fetch_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

#[derive(Debug)]
struct Service {
    slug: String,
    service_id: String,
    rate: f64,
    hosts: Vec<String>,
    origin: Origin,
    base: String,
    vendor: String,
    rules: GatewayRules,
}

#[derive(Debug)]
struct Loaded {
    services: Vec<Service>,
    agent_id: String,
    salt_id: String,
    salt: String,
    refresh_at: i64,
    usable_until: i64,
    decisions: BTreeMap<String, Option<String>>,
}

/// The catalog, salt and decisions of one client.
#[derive(Debug)]
pub struct Router {
    agent_key: Option<String>,
    gateway: Option<String>,
    selection: Option<String>,
    state: Option<Loaded>,
    fetching: bool,
    retry_at: i64,
    counts: Counts,
}

/// `scheme://host[:port]` split off a URL: (origin, the rest: path, query, fragment).
fn split_url(url: &str) -> Option<(Origin, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if authority.contains('@') || authority.is_empty() {
        return None;
    }
    let (host, port) = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => (&authority[..i], &authority[i + 1..]),
        _ => (authority, ""),
    };
    let port = if port.is_empty() {
        default
    } else if port.bytes().all(|b| b.is_ascii_digit()) {
        port.parse().ok()?
    } else {
        return None;
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() || host.bytes().any(|b| b <= b' ' || b == b'\\') {
        return None;
    }
    Some((Origin { scheme, host, port }, tail))
}

fn origin_text(o: &Origin) -> String {
    let default = (o.scheme == "http" && o.port == 80) || (o.scheme == "https" && o.port == 443);
    if default {
        format!("{}://{}", o.scheme, o.host)
    } else {
        format!("{}://{}:{}", o.scheme, o.host, o.port)
    }
}

fn slug_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Visible ASCII only: it goes into a request header.
fn header_safe(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic())
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str()
}

fn opt_text<'a>(v: &'a Value, key: &str) -> Result<Option<&'a str>, ()> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(()),
    }
}

/// One `GET /v1/services` entry as the router uses it, or `None` when it cannot be used.
fn service(s: &Value) -> Option<Service> {
    let slug = text(s, "slug").filter(|s| slug_ok(s))?;
    let service_id = text(s, "service_id").filter(|s| !s.is_empty())?;
    let rate = s
        .get("sampling_rate")?
        .as_f64()
        .filter(|r| (0.0..=1.0).contains(r))?;
    let hosts = s
        .get("hosts")?
        .as_array()?
        .iter()
        .map(|h| {
            h.as_str()
                .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
        })
        .collect::<Option<Vec<_>>>()?;
    let (origin, tail) = split_url(text(s, "upstream")?)?;
    if tail.contains(['?', '#']) || !(tail.is_empty() || tail.starts_with('/')) {
        return None;
    }
    let base = tail.trim_end_matches('/').to_owned();
    let allow = match s.get("allow") {
        None | Some(Value::Null) => Vec::new(),
        Some(a) => a
            .as_array()?
            .iter()
            .map(|e| e.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
    };
    let mode = opt_text(s, "mode").ok()?;
    let header = opt_text(s, "credential_header").ok()?;
    let rules = GatewayRules::new(&allow, mode, header).ok()?;
    Some(Service {
        slug: slug.to_owned(),
        service_id: service_id.to_owned(),
        rate,
        hosts,
        vendor: format!("{}{base}", origin_text(&origin)),
        origin,
        base,
        rules,
    })
}

fn load(now_ms: i64, catalog: &str, salt: &str) -> Option<Loaded> {
    let catalog: Value = serde_json::from_str(catalog).ok()?;
    let salt: Value = serde_json::from_str(salt).ok()?;
    let mut services: Vec<Service> = catalog
        .get("services")?
        .as_array()?
        .iter()
        .filter_map(service)
        .collect();
    // The most specific base first (a stable sort: equal bases keep the catalog's order).
    services.sort_by_key(|s| std::cmp::Reverse(s.base.len()));
    let valid_until = parse_iso(text(&salt, "valid_until")?)?;
    let usable_until = match opt_text(&salt, "accepted_until").ok()? {
        Some(t) => parse_iso(t)?,
        None => valid_until,
    };
    if usable_until <= now_ms {
        return None; // an expired salt: every decision under it would be refused
    }
    let mut refresh_at = valid_until.min(now_ms + CATALOG_TTL_MS);
    if refresh_at <= now_ms {
        // In the hour after a rotation the old salt is still good: ask again in a minute,
        // not on every call.
        refresh_at = now_ms + RETRY_MS;
    }
    Some(Loaded {
        services,
        agent_id: text(&salt, "agent_id")
            .filter(|s| !s.is_empty())?
            .to_owned(),
        salt_id: text(&salt, "salt_id")
            .filter(|s| header_safe(s))?
            .to_owned(),
        salt: text(&salt, "salt").filter(|s| !s.is_empty())?.to_owned(),
        refresh_at,
        usable_until,
        decisions: BTreeMap::new(),
    })
}

impl Router {
    /// The router of a client with these settings (`None` or empty: unset): `PROWL_AGENT_KEY`,
    /// `PROWL_GATEWAY_URL` (a trailing `/` is dropped) and `PROWL_GATEWAY_SERVICES`. Without
    /// both a key and a gateway, routing is off: nothing is fetched and every call goes direct.
    pub fn new(
        agent_key: Option<&str>,
        gateway_url: Option<&str>,
        services: Option<&str>,
    ) -> Router {
        let some = |v: Option<&str>| v.filter(|v| !v.is_empty()).map(str::to_owned);
        Router {
            agent_key: some(agent_key),
            gateway: some(gateway_url.map(|g| g.trim_end_matches('/'))),
            selection: services.map(str::to_owned),
            state: None,
            fetching: false,
            retry_at: 0,
            counts: Counts::default(),
        }
    }

    /// Whether routing is on (an agent key and a gateway URL).
    pub fn enabled(&self) -> bool {
        self.agent_key.is_some() && self.gateway.is_some()
    }

    /// A new `PROWL_GATEWAY_SERVICES` value, applied from the next call on.
    pub fn select(&mut self, services: Option<&str>) {
        self.selection = services.map(str::to_owned);
    }

    /// Whether the host should fetch the catalog and the salt now: routing is on, no fetch is
    /// under way, none failed in the last minute, and nothing usable is in or it is due for a
    /// refresh. A `true` counts the fetch as started: until [`Router::loaded`] or
    /// [`Router::fetch_failed`] it answers `false`.
    pub fn wants_fetch(&mut self, now_ms: i64) -> bool {
        let due = self.state.as_ref().is_none_or(|s| now_ms >= s.refresh_at);
        if !self.enabled() || self.fetching || now_ms < self.retry_at || !due {
            return false;
        }
        self.fetching = true;
        self.counts.fetches += 1;
        true
    }

    /// The answers of a fetch: the catalog and the salt as JSON text. Returns whether they
    /// are usable; when not (not JSON, not the API's shape, an expired salt) the fetch counts
    /// as failed and is tried again in a minute.
    pub fn loaded(&mut self, now_ms: i64, catalog: &str, salt: &str) -> bool {
        match load(now_ms, catalog, salt) {
            Some(state) => {
                self.fetching = false;
                self.state = Some(state);
                self.retry_at = 0;
                true
            }
            None => {
                self.fetch_failed(now_ms);
                false
            }
        }
    }

    /// A fetch failed (no answer, an error status): try again in a minute; what is in stays.
    pub fn fetch_failed(&mut self, now_ms: i64) {
        self.fetching = false;
        self.counts.fetch_failures += 1;
        self.retry_at = now_ms + RETRY_MS;
    }

    /// Where a `method` call to `url` (absolute, as it will be sent) with request headers
    /// `header_names` goes: a [`Route`] through the gateway, or `None` (straight to the
    /// vendor, unchanged).
    pub fn route<S: AsRef<str>>(
        &mut self,
        now_ms: i64,
        method: &str,
        url: &str,
        header_names: &[S],
    ) -> Option<Route> {
        let (Some(key), Some(gateway)) = (&self.agent_key, &self.gateway) else {
            return None;
        };
        let state = self.state.as_mut().filter(|s| now_ms < s.usable_until)?;
        let (origin, tail) = split_url(url)?;
        let tail = tail.split_once('#').map_or(tail, |(t, _)| t);
        let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
        let path = if path.is_empty() { "/" } else { path };
        for svc in &state.services {
            if svc.origin != origin
                || !svc
                    .hosts
                    .iter()
                    .any(|h| origin.host == *h || origin.host.ends_with(&format!(".{h}")))
            {
                continue;
            }
            let Some(rest) = path.strip_prefix(svc.base.as_str()) else {
                continue;
            };
            if !(rest.is_empty() || rest.starts_with('/')) {
                continue; // a prefix, but not at a segment boundary
            }
            let rest = if rest.is_empty() { "/" } else { rest };
            let target = if query.is_empty() {
                rest.to_owned()
            } else {
                format!("{rest}?{query}")
            };
            if !service_selected(self.selection.as_deref(), &svc.slug, &svc.service_id)
                || svc.rules.check(method, &target) != Verdict::Allowed
            {
                continue;
            }
            let (agent, salt_id, salt) = (&state.agent_id, &state.salt_id, &state.salt);
            let roll = state
                .decisions
                .entry(svc.service_id.clone())
                .or_insert_with(|| {
                    let d = decide(&svc.service_id, agent, salt_id, salt, svc.rate);
                    d.sampled.then_some(d.roll)
                })
                .clone();
            let Some(roll) = roll else {
                self.counts.direct += 1;
                return None;
            };
            self.counts.routed += 1;
            return Some(Route {
                url: format!("{gateway}/{}{target}", svc.slug),
                slug: svc.slug.clone(),
                service_id: svc.service_id.clone(),
                headers: vec![
                    (AGENT_KEY_HEADER.to_owned(), key.clone()),
                    (SALT_ID_HEADER.to_owned(), state.salt_id.clone()),
                    (DECISION_HEADER.to_owned(), roll),
                ],
                keep: svc.rules.keep_request_headers(header_names),
                vendor: svc.vendor.clone(),
            });
        }
        None
    }

    /// A routed call was answered `status` with the body's `reason` (`None` when it had
    /// none). The gateway's own refusal (a status of [`REFUSAL_STATUSES`] with a reason of
    /// [`REFUSAL_REASONS`]) makes the router forget what it fetched and fetch again: at once
    /// when the salt or the catalog changed ([`STALE_REASONS`]), in a minute otherwise (a
    /// limit, a missing credential). Anything else is the vendor's answer and changes nothing.
    pub fn refused(&mut self, now_ms: i64, status: u16, reason: Option<&str>) -> Refusal {
        let reason = reason.filter(|r| REFUSAL_REASONS.contains(r));
        let Some(reason) = reason.filter(|_| REFUSAL_STATUSES.contains(&status)) else {
            return Refusal {
                gateway: false,
                fetch_at: None,
            };
        };
        self.counts.refused += 1;
        self.state = None;
        self.retry_at = if STALE_REASONS.contains(&reason) {
            0
        } else {
            now_ms + RETRY_MS
        };
        Refusal {
            gateway: true,
            fetch_at: Some(self.retry_at.max(now_ms)),
        }
    }

    /// A gateway redirect's `Location` (`/{slug}/…`, or absolute on the gateway) as the vendor
    /// URL it stands for (`vendor` and `slug` from the [`Route`]), so the client follows it to
    /// the vendor and it is routed afresh; any other location unchanged.
    pub fn vendor_location(&self, vendor: &str, slug: &str, location: &str) -> String {
        let Some(gateway) = &self.gateway else {
            return location.to_owned();
        };
        let (gw_origin, gw_path) = match gateway.split_once("://") {
            Some((scheme, rest)) => {
                let end = rest.find('/').unwrap_or(rest.len());
                (format!("{scheme}://{}", &rest[..end]), &rest[end..])
            }
            None => return location.to_owned(),
        };
        let path = if location.starts_with("http://") || location.starts_with("https://") {
            match location.strip_prefix(gw_origin.as_str()) {
                Some(p) if p.is_empty() || p.starts_with(['/', '?']) => p,
                _ => return location.to_owned(),
            }
        } else {
            location
        };
        let prefix = format!("{}/{slug}", gw_path.trim_end_matches('/'));
        match path.strip_prefix(prefix.as_str()) {
            Some("") => format!("{vendor}/"),
            Some(rest) if rest.starts_with(['/', '?']) => format!("{vendor}{rest}"),
            _ => location.to_owned(),
        }
    }

    /// What the router knows at `now_ms`.
    pub fn status(&self, now_ms: i64) -> Status {
        let s = self.state.as_ref();
        Status {
            ready: s.is_some_and(|s| now_ms < s.usable_until),
            agent_id: s.map(|s| s.agent_id.clone()),
            salt_id: s.map(|s| s.salt_id.clone()),
            services: s.map_or(0, |s| s.services.len()),
            counts: self.counts.clone(),
        }
    }
}
