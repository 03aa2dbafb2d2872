//! Header hygiene (SPEC §10): what crosses the gateway. Names are compared in lower case
//! (HTTP/2 and `http::HeaderName` give them so).

/// Hop-by-hop headers (RFC 9110 §7.6.1 and the legacy `Keep-Alive`/`Proxy-Connection`):
/// they describe one connection and never cross a proxy.
pub const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Request headers that identify the agent or its network and never reach the vendor.
const IDENTIFYING: &[&str] = &[
    "x-agent-key",
    "authorization",
    "cookie",
    "forwarded",
    "x-real-ip",
    "true-client-ip",
    "cf-connecting-ip",
    "via",
    // The gateway addresses the upstream itself.
    "host",
];

/// The names listed in a `Connection` header value (`close, X-Foo` → `["close","x-foo"]`):
/// those headers are hop-by-hop too.
pub fn connection_listed(connection: &str) -> Vec<String> {
    connection
        .split(',')
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

fn hop_by_hop(name: &str, listed: &[String]) -> bool {
    HOP_BY_HOP.contains(&name) || listed.iter().any(|l| l == name)
}

/// Whether a request header (lower-case `name`) from the agent is passed to the vendor:
/// not the agent's key, any `X-Prowl-*`, `Authorization`, `Cookie`, `Forwarded`,
/// `X-Forwarded-*` or other client-address headers, `Host`, hop-by-hop headers (including
/// those named in `Connection`, given as `listed`), nor the header the vendor credential
/// goes into (`credential_header`, lower case), which the gateway sets itself.
pub fn forward_request_header(
    name: &str,
    listed: &[String],
    credential_header: Option<&str>,
) -> bool {
    !(IDENTIFYING.contains(&name)
        || name.starts_with("x-prowl-")
        || name.starts_with("x-forwarded-")
        || hop_by_hop(name, listed)
        || credential_header == Some(name))
}

/// Whether a response header from the vendor is passed to the agent: everything but
/// hop-by-hop headers and `Set-Cookie` (a session cookie would belong to the vendor
/// account behind the injected credential, not to the agent; `Cookie` never goes up).
pub fn forward_response_header(name: &str, listed: &[String]) -> bool {
    !(hop_by_hop(name, listed) || name == "set-cookie")
}

/// The credential header value: `format` with its `{}` replaced by the secret (the whole
/// secret when `format` has no `{}`).
pub fn credential_value(format: &str, secret: &str) -> String {
    if format.contains("{}") {
        format.replacen("{}", secret, 1)
    } else {
        secret.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_hop_by_hop_headers_stay_behind() {
        let listed = connection_listed("close, X-Trace");
        for h in [
            "x-agent-key",
            "x-prowl-salt-id",
            "x-prowl-anything",
            "authorization",
            "cookie",
            "forwarded",
            "x-forwarded-for",
            "x-forwarded-host",
            "te",
            "upgrade",
            "x-trace",
            "x-api-key",
            "host",
            "transfer-encoding",
        ] {
            assert!(
                !forward_request_header(h, &listed, Some("x-api-key")),
                "{h} crossed"
            );
        }
        for h in [
            "content-type",
            "accept",
            "idempotency-key",
            "user-agent",
            "content-length",
        ] {
            assert!(
                forward_request_header(h, &listed, Some("x-api-key")),
                "{h} was dropped"
            );
        }
        assert!(!forward_response_header("set-cookie", &[]));
        assert!(!forward_response_header("connection", &[]));
        assert!(forward_response_header("content-type", &[]));
        assert_eq!(credential_value("Bearer {}", "sk"), "Bearer sk");
        assert_eq!(credential_value("", "sk"), "sk");
    }
}
