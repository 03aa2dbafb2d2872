//! Request extractors that turn every malformed input into a JSON `{"error": ...}`.

use std::net::{IpAddr, SocketAddr};

use axum::body::Body;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde_json::Value;

use crate::error::AppError;
use crate::state::AppState;

/// Largest request body accepted: 1 MiB. Larger bodies get 413 and are not read further.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// A JSON body read with the size limit; any content type is accepted (curl's `-d`
/// sends `application/x-www-form-urlencoded`, and agents should not have to care).
#[derive(Debug)]
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = AppError;

    async fn from_request(req: Request<Body>, _state: &S) -> Result<Self, Self::Rejection> {
        let bytes = read_body(req, MAX_BODY_BYTES).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(AppError::bad_request(
                "body: expected JSON, got an empty body",
            ));
        }
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            // serde_json's message names line and column and never echoes the input.
            .map_err(|e| AppError::bad_request(format!("body: malformed JSON ({e})")))
    }
}

/// The body of `req`, at most `limit` bytes: a declared or actual length past it is a 413
/// and the body is not read further.
pub(crate) async fn read_body(
    req: Request<Body>,
    limit: usize,
) -> Result<axum::body::Bytes, AppError> {
    let too_large = AppError::PayloadTooLarge { limit };
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large);
    }
    match axum::body::to_bytes(req.into_body(), limit).await {
        Ok(b) => Ok(b),
        Err(e) => {
            let limit_hit =
                std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
                    .any(|e| e.to_string().contains("length limit exceeded"));
            Err(if limit_hit {
                too_large
            } else {
                AppError::bad_request("could not read the request body")
            })
        }
    }
}

/// The client's address: the connection's peer, or, when the peer is a trusted proxy
/// (`--trusted-proxy`), the address its `X-Forwarded-For` names ([`crate::caller::TrustedProxies::client`]).
/// `None` when the router runs without a socket (as in `oneshot` tests that set none).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub Option<IpAddr>);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(client_addr(&parts.extensions, &parts.headers, state))
    }
}

/// The client address of a request with these extensions and headers (see [`ClientAddr`]).
fn client_addr(
    extensions: &axum::http::Extensions,
    headers: &axum::http::HeaderMap,
    state: &AppState,
) -> ClientAddr {
    let Some(peer) = extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
    else {
        return ClientAddr(None);
    };
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    ClientAddr(Some(state.trusted_proxies.client(peer, &forwarded)))
}

/// Where a write comes from: the client address, the stored id of its network
/// ([`crate::caller::network_id`]) and whether the deployment trusts that network
/// (`--trusted-network`: no quotas, no caps). Without a socket, nothing is known.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The client address.
    pub ip: Option<IpAddr>,
    /// The keyed id of its network.
    pub network: Option<String>,
    /// Inside `--trusted-network`.
    pub trusted: bool,
}

impl FromRequestParts<AppState> for Origin {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(Origin::of(&parts.extensions, &parts.headers, state))
    }
}

impl Origin {
    /// The origin of a request with these extensions and headers.
    pub fn of(
        extensions: &axum::http::Extensions,
        headers: &axum::http::HeaderMap,
        state: &AppState,
    ) -> Origin {
        let ClientAddr(ip) = client_addr(extensions, headers, state);
        Origin {
            ip,
            network: ip.map(|ip| crate::caller::network_id(state.db.caller_secret(), ip)),
            trusted: ip.is_some_and(|ip| state.trusted_networks.contains(ip)),
        }
    }
}

/// Checks a name given in a URL: non-empty, at most `max` characters, no control characters.
pub(crate) fn check_name(
    field: &str,
    value: &str,
    max: usize,
) -> Result<(), crate::error::AppError> {
    use crate::error::AppError;
    if value.is_empty() {
        return Err(AppError::bad_request(format!("{field}: must not be empty")));
    }
    if value.chars().count() > max {
        return Err(AppError::bad_request(format!(
            "{field}: longer than {max} characters"
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(AppError::bad_request(format!(
            "{field}: contains a control character"
        )));
    }
    Ok(())
}
