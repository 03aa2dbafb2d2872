//! The gateway listener: `/{slug}/{path}` → the service's upstream, for sampled calls only.
//!
//! Order of checks: a known slug (404), the agent key (403), the decision (403, raising an
//! abuse flag when forged or replayed), the service's `allow` rules (403 `not_allowed`) and
//! a path that stays under the upstream's base once resolved (400 `bad_path`), the agent's
//! and the network's gateway-call quotas (429), the service's `min_reputation` limit (429),
//! the vendor credential being configured (503). Nothing reaches the upstream before all of
//! them pass. Then only the allowlisted headers cross (the core's `headers`), the operator's
//! credential is injected or the agent's own passed through, both bodies stream, and one
//! ProxyCall is stored when the response ends. A refused request of a catalog service is
//! stored too, with its reason (never counted; at most [`super::recorder::REFUSED_PER_HOUR`]
//! per network and hour, so a flood cannot fill the database).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use lowdown_core::defaults::AGENT_KEY_HEADER;
use lowdown_core::gateway::allow::{PathProblem, Verdict};
use lowdown_core::gateway::headers::{
    connection_listed, forward_request_header, forward_response_header,
};
use lowdown_core::sample::{
    check_decision, salt_accepted, salt_state, DecisionRefusal, SaltState, DECISION_HEADER,
    SALT_ID_HEADER,
};

use super::metered::Metered;
use super::{Injected, Service};
use crate::db::gateway::calls::ProxyCall;
use crate::db::gateway::{self as store, AgentInfo};
use crate::db::quota::Quota;
use crate::error::AppError;
use crate::state::AppState;

/// The gateway's router: every path is `/{slug}/{path}`.
pub fn router(state: AppState) -> Router {
    Router::new().fallback(forward).with_state(state)
}

fn refuse(r: DecisionRefusal) -> AppError {
    let reason = match r {
        DecisionRefusal::MissingAgentKey => "missing_agent_key",
        DecisionRefusal::UnknownAgentKey => "unknown_agent_key",
        DecisionRefusal::MissingSaltId => "missing_salt_id",
        DecisionRefusal::MissingDecision => "missing_decision",
        DecisionRefusal::MalformedDecision => "malformed_decision",
        DecisionRefusal::UnknownSalt => "unknown_salt",
        DecisionRefusal::ExpiredSalt => "expired_salt",
        DecisionRefusal::WrongDecision => "wrong_decision",
        DecisionRefusal::NotSampled => "not_sampled",
    };
    AppError::refused(StatusCode::FORBIDDEN, reason, r.to_string())
}

fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

async fn salt(state: &AppState, salt_id: &str) -> Result<Option<String>, AppError> {
    if let Some(s) = state
        .prowl
        .salts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(salt_id)
    {
        return Ok(Some(s.clone()));
    }
    let found = store::salts::get(&state.db, salt_id).await?;
    if let Some(s) = &found {
        super::cache_put(&state.prowl.salts, salt_id.to_owned(), s.clone());
    }
    Ok(found)
}

/// The agent's decision for this call, checked; an abuse flag is stored for a forged or
/// replayed one.
async fn checked(
    state: &AppState,
    service: &Service,
    agent: &AgentInfo,
    headers: &HeaderMap,
    now: i64,
) -> Result<String, AppError> {
    let salt_id = header_str(headers, SALT_ID_HEADER);
    let salt = match salt_id {
        Some(id) if salt_accepted(id, now) => salt(state, id).await?,
        _ => None,
    };
    let decision = header_str(headers, DECISION_HEADER);
    match check_decision(
        &service.service_id,
        &agent.agent_id,
        service.sampling_rate,
        salt_id,
        salt.as_deref(),
        decision,
        now,
    ) {
        Ok(_) => Ok(salt_id.unwrap_or_default().to_owned()),
        Err(r) => {
            if let Some(kind) = r.abuse_flag() {
                store::flag_agent(
                    &state.db,
                    &agent.agent_id,
                    kind,
                    Some(&service.service_id),
                    now,
                )
                .await?;
            }
            Err(refuse(r))
        }
    }
}

/// `(slug, rest)` of a gateway path: `/stripe/v1/charges` → `("stripe", "/v1/charges")`.
fn split_path(path: &str) -> (&str, &str) {
    let p = path.strip_prefix('/').unwrap_or(path);
    match p.find('/') {
        Some(i) => (&p[..i], &p[i..]),
        None => (p, ""),
    }
}

/// The upstream URL of an allowed call: the service's rules carry `method` to `rest`
/// (403 `not_allowed`, 400 `bad_path`), and the URL, once resolved, is the upstream's origin
/// with exactly `{base}{rest}` as its path (400 `bad_path` otherwise).
fn allowed_target(
    service: &Service,
    method: &str,
    rest: &str,
    query: Option<&str>,
) -> Result<reqwest::Url, AppError> {
    let bad = |why: &str| {
        AppError::refused(
            StatusCode::BAD_REQUEST,
            "bad_path",
            format!("path: {why}; the gateway forwards only plain paths under the service's base"),
        )
    };
    match service.rules.check(method, rest) {
        Verdict::Allowed => {}
        Verdict::NotAllowed => {
            return Err(AppError::refused(
                StatusCode::FORBIDDEN,
                "not_allowed",
                format!(
                    "{method} {} is not in {}'s allow list; GET /v1/services lists what the gateway carries",
                    if rest.is_empty() { "/" } else { rest },
                    service.slug
                ),
            ))
        }
        Verdict::BadPath { why } => {
            return Err(bad(match why {
                PathProblem::NotAbsolute => "not absolute",
                PathProblem::BadChar => "a backslash, space, control or non-ASCII character",
                PathProblem::Encoded => "an encoded dot, slash, backslash or percent sign",
                PathProblem::DotSegment => "a . or .. segment",
                PathProblem::EmptySegment => "an empty segment (//)",
            }))
        }
    }
    let mut target = format!("{}{rest}", service.upstream);
    if let Some(q) = query {
        target.push('?');
        target.push_str(q);
    }
    let url = reqwest::Url::parse(&target).map_err(|_| bad("not a valid URL path"))?;
    let base = reqwest::Url::parse(&service.upstream).map_err(|_| bad("not a valid URL path"))?;
    let want = format!("{}{rest}", base.path().trim_end_matches('/'));
    let want = if want.is_empty() { "/" } else { want.as_str() };
    if url.origin() != base.origin() || url.path() != want {
        return Err(bad("resolves outside the service's base"));
    }
    Ok(url)
}

/// Takes one gateway call of the agent's and its network's hourly budgets, both or
/// neither, before the call is forwarded (429 `gateway_rate_limited` with `Retry-After`
/// past either).
async fn within_gateway_quota(
    state: &AppState,
    agent: &AgentInfo,
    ip: Option<std::net::IpAddr>,
    now: i64,
) -> Result<(), AppError> {
    let (secret, limits) = (state.db.caller_secret(), &state.limits);
    let quotas = [
        Quota::agent_gateway_calls(secret, limits, &agent.agent_id),
        Quota::network_gateway_calls(secret, limits, ip),
    ];
    match crate::db::quota::take_together(&state.db, &quotas, now).await? {
        None => Ok(()),
        Some(r) => {
            // Its own reason: a client must not take a vendor's 429 for the gateway's.
            Err(AppError::Refused {
                status: StatusCode::TOO_MANY_REQUESTS,
                reason: "gateway_rate_limited",
                message: quotas[r.budget].refusal(r.retry_after_secs).to_string(),
                retry_after: Some(r.retry_after_secs),
            })
        }
    }
}

/// What is known of a request so far: enough to store its ProxyCall if it is refused.
#[derive(Default)]
struct Attempt {
    service_id: Option<String>,
    agent_id: Option<String>,
    salt_id: Option<String>,
    network: Option<String>,
    /// It went to the vendor: its ProxyCall is stored when it ends, whatever happens.
    forwarded: bool,
}

async fn forward(State(state): State<AppState>, req: Request) -> Response {
    let started = Instant::now();
    let method = req.method().as_str().to_owned();
    let mut attempt = Attempt::default();
    match forward_inner(state.clone(), req, started, &mut attempt).await {
        Ok(r) => r,
        Err(refusal) => {
            if let (false, Some(service_id)) = (attempt.forwarded, attempt.service_id) {
                let call = ProxyCall {
                    service_id,
                    agent_id: attempt.agent_id.unwrap_or_default(),
                    salt_id: attempt.salt_id.unwrap_or_default(),
                    method,
                    status: Some(refusal.status().as_u16()),
                    latency_ms: started.elapsed().as_secs_f64() * 1000.0,
                    response_bytes: None,
                    error_type: None,
                    at: state.now(),
                    network: attempt.network,
                    refused: Some(refusal.reason().to_owned()),
                };
                state.prowl.recorder.record_refused(&state.db, call);
            }
            refusal.into_response()
        }
    }
}

async fn forward_inner(
    state: AppState,
    req: Request,
    started: Instant,
    attempt: &mut Attempt,
) -> Result<Response, AppError> {
    let prowl = Arc::clone(&state.prowl);
    let now = state.now();
    let (slug, rest) = split_path(req.uri().path());
    let Some(service) = prowl.by_slug(slug) else {
        return Err(AppError::refused(
            StatusCode::NOT_FOUND,
            "unknown_service",
            format!("no service is routed at /{slug}; GET /v1/services lists them"),
        ));
    };
    let headers = req.headers();
    let origin = crate::extract::Origin::of(req.extensions(), headers, &state);
    attempt.service_id = Some(service.service_id.clone());
    attempt.network = origin.network.clone();
    let key = header_str(headers, AGENT_KEY_HEADER)
        .ok_or_else(|| refuse(DecisionRefusal::MissingAgentKey))?;
    let agent = crate::services::agents::agent(&state, key)
        .await?
        .ok_or_else(|| refuse(DecisionRefusal::UnknownAgentKey))?;
    attempt.agent_id = Some(agent.agent_id.clone());
    attempt.salt_id = header_str(headers, SALT_ID_HEADER)
        .filter(|id| salt_state(id, now) != SaltState::Malformed)
        .map(str::to_owned);
    let salt_id = checked(&state, service, &agent, headers, now).await?;
    let url = allowed_target(service, req.method().as_str(), rest, req.uri().query())?;
    if !origin.trusted {
        within_gateway_quota(&state, &agent, origin.ip, now).await?;
    }
    super::services::within_reputation_limit(&state, service, &agent, now).await?;
    let credential = match prowl.credentials.get(&service.slug) {
        Some(Injected::Header(n, v)) => Some((n.clone(), v.clone())),
        Some(Injected::Missing(env)) => {
            return Err(AppError::refused(
                StatusCode::SERVICE_UNAVAILABLE,
                "no_credential",
                format!(
                    "the gateway has no credential for {}: {env} is not set",
                    service.slug
                ),
            ));
        }
        _ => None,
    };
    let network = origin.network;

    let (parts, body) = req.into_parts();
    let listed = connection_listed(
        parts
            .headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    );
    let passthrough = service.rules.passthrough_header();
    let mut out = HeaderMap::with_capacity(parts.headers.len() + 1);
    for (name, value) in &parts.headers {
        if forward_request_header(name.as_str(), &listed, passthrough) {
            let mut value = value.clone();
            // The agent's own credential (passthrough) is redacted from any debug output.
            value.set_sensitive(Some(name.as_str()) == passthrough);
            out.append(name.clone(), value);
        }
    }
    if let Some((n, v)) = credential {
        out.insert(n, v);
    }
    let has_body = parts.headers.contains_key(header::TRANSFER_ENCODING)
        || header_str(&parts.headers, "content-length").is_some_and(|l| l != "0");
    let mut upstream = prowl
        .client
        .request(parts.method.clone(), url.clone())
        .headers(out);
    if has_body {
        upstream = upstream.body(reqwest::Body::wrap_stream(body.into_data_stream()));
    }
    let call = ProxyCall {
        service_id: service.service_id.clone(),
        agent_id: agent.agent_id.clone(),
        salt_id,
        method: parts.method.as_str().to_owned(),
        status: None,
        latency_ms: 0.0,
        response_bytes: None,
        error_type: None,
        at: now,
        network,
        refused: None,
    };
    let failed = |mut call: ProxyCall, kind: &str| {
        call.latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        call.error_type = Some(kind.to_owned());
        prowl.recorder.record(&state.db, call);
    };
    attempt.forwarded = true;
    let resp = match tokio::time::timeout(prowl.config.timeout, upstream.send()).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) if !e.is_timeout() => {
            let kind = if e.is_connect() {
                "connect"
            } else {
                "upstream"
            };
            failed(call, kind);
            return Err(AppError::refused(
                StatusCode::BAD_GATEWAY,
                "upstream_unreachable",
                format!("cannot reach {}'s upstream", service.slug),
            ));
        }
        _ => {
            failed(call, "timeout");
            return Err(AppError::refused(
                StatusCode::GATEWAY_TIMEOUT,
                "upstream_timeout",
                format!(
                    "{}'s upstream did not answer within {} s",
                    service.slug,
                    prowl.config.timeout.as_secs_f64()
                ),
            ));
        }
    };
    let status = resp.status();
    let mut call = call;
    call.status = Some(status.as_u16());
    let mut location = None;
    if status.is_redirection() {
        if let Some(loc) = resp
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
        {
            match same_service_location(&service.upstream, &url, loc, &service.slug) {
                Some(rewritten) => location = Some(rewritten),
                None => {
                    failed(call, "redirect_off_host");
                    return Err(AppError::refused(StatusCode::BAD_GATEWAY, "redirect_off_host", format!("{}'s upstream redirected outside its base URL; the gateway does not follow that", service.slug)));
                }
            }
        }
    }
    let listed = connection_listed(
        resp.headers()
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    );
    let mut builder = Response::builder().status(status);
    if let Some(h) = builder.headers_mut() {
        for (name, value) in resp.headers() {
            if forward_response_header(name.as_str(), &listed) {
                h.append(name.clone(), value.clone());
            }
        }
        if let Some(l) = location.and_then(|l| HeaderValue::from_str(&l).ok()) {
            h.insert(header::LOCATION, l);
        }
    }
    // HEAD answers and 204/304 carry no body whatever their headers say.
    let bodiless = parts.method == axum::http::Method::HEAD
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED;
    let expected = if bodiless {
        Some(0)
    } else {
        resp.content_length()
    };
    let body = Metered::new(
        Box::pin(resp.bytes_stream()),
        expected,
        started,
        call,
        state.db.clone(),
        Arc::clone(&prowl),
    );
    builder
        .body(Body::from_stream(body))
        .map_err(AppError::internal)
}

/// A redirect target inside the service's upstream base, rewritten to the gateway path
/// (`/{slug}/…`) so the agent's client follows it through the gateway; `None` for any
/// other origin or path, which the gateway refuses to pass on.
fn same_service_location(
    upstream: &str,
    request: &reqwest::Url,
    location: &str,
    slug: &str,
) -> Option<String> {
    let base = reqwest::Url::parse(upstream).ok()?;
    let target = request.join(location).ok()?;
    if target.origin() != base.origin() {
        return None;
    }
    let base_path = base.path().trim_end_matches('/');
    let rest = target.path().strip_prefix(base_path)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let mut out = format!("/{slug}{rest}");
    if let Some(q) = target.query() {
        out.push('?');
        out.push_str(q);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_and_climbing_is_refused() {
        assert_eq!(split_path("/stripe/v1/charges"), ("stripe", "/v1/charges"));
        assert_eq!(split_path("/stripe"), ("stripe", ""));
    }

    #[test]
    fn redirects_stay_inside_the_base_or_are_refused() {
        let req = reqwest::Url::parse("https://api.x.com/v1/a?q=1").unwrap();
        let up = "https://api.x.com/v1";
        assert_eq!(
            same_service_location(up, &req, "/v1/b?z=2", "x").as_deref(),
            Some("/x/b?z=2")
        );
        assert_eq!(
            same_service_location(up, &req, "c", "x").as_deref(),
            Some("/x/c")
        );
        assert_eq!(
            same_service_location(up, &req, "https://evil.example/v1/b", "x"),
            None
        );
        assert_eq!(same_service_location(up, &req, "/v2/b", "x"), None);
        assert_eq!(
            same_service_location(up, &req, "http://api.x.com/v1/b", "x"),
            None
        );
    }
}
