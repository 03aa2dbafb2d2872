//! Header hygiene (SPEC §10): what crosses the gateway, as two small allowlists. Every other
//! header is dropped in both directions: the agent's `Authorization`, `Cookie`, `X-Agent-Key`
//! and `X-Prowl-*`, `Forwarded`, `X-Forwarded-*`, `X-Real-IP`, `X-Client-IP`, `Client-IP`,
//! `Fastly-Client-IP`, `CF-Connecting-IP`, `True-Client-IP`, `X-Lowdown-*`, trace context
//! (`traceparent`, `tracestate`, `baggage`), hop-by-hop headers, and the vendor's
//! `Set-Cookie`. A name listed in any `Connection` header is dropped even when allowlisted.
//! Names are compared in lower case.

/// Request headers an agent's call keeps on its way to the vendor. The gateway sets `Host`
/// and the credential itself; `passthrough` services keep their credential header too.
pub const REQUEST_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "content-encoding",
    "content-length",
    "content-type",
    "idempotency-key",
    "if-match",
    "if-none-match",
    "user-agent",
];

/// Response headers the vendor's answer keeps on its way to the agent (`Location` is
/// rewritten by the gateway to stay on it).
pub const RESPONSE_HEADERS: &[&str] = &[
    "cache-control",
    "content-encoding",
    "content-length",
    "content-type",
    "etag",
    "last-modified",
    "request-id",
    "retry-after",
    "x-request-id",
];

/// Response header prefixes that are kept: the vendor's rate-limit state, which a client
/// needs to back off.
pub const RESPONSE_PREFIXES: &[&str] = &["ratelimit-", "x-ratelimit-"];

/// The names listed in `Connection` header values, every line of them (`close, X-Foo` →
/// `["close","x-foo"]`): those headers are hop-by-hop and never cross.
pub fn connection_listed<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    lines
        .into_iter()
        .flat_map(|l| l.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Whether a request header (lower-case `name`) is passed to the vendor: an allowlisted one,
/// or the agent's own credential header of a `passthrough` service (`passthrough`, lower
/// case), unless `Connection` lists it (`listed`).
pub fn forward_request_header(name: &str, listed: &[String], passthrough: Option<&str>) -> bool {
    (REQUEST_HEADERS.contains(&name) || passthrough == Some(name))
        && !listed.iter().any(|l| l == name)
}

/// Whether a response header (lower-case `name`) from the vendor is passed to the agent.
pub fn forward_response_header(name: &str, listed: &[String]) -> bool {
    (RESPONSE_HEADERS.contains(&name) || RESPONSE_PREFIXES.iter().any(|p| name.starts_with(p)))
        && !listed.iter().any(|l| l == name)
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
    fn only_the_allowlists_cross() {
        let listed = connection_listed(["close, X-Trace", "Content-Type"]);
        assert_eq!(listed, ["close", "x-trace", "content-type"]);
        for h in [
            "x-agent-key",
            "authorization",
            "cookie",
            "x-client-ip",
            "traceparent",
            "content-type",
        ] {
            assert!(!forward_request_header(h, &listed, None), "{h} crossed");
        }
        assert!(forward_request_header("accept", &listed, None));
        assert!(forward_request_header(
            "authorization",
            &[],
            Some("authorization")
        ));
        assert!(!forward_response_header("set-cookie", &[]));
        assert!(forward_response_header("x-ratelimit-remaining", &[]));
        assert_eq!(credential_value("Bearer {}", "sk"), "Bearer sk");
        assert_eq!(credential_value("", "sk"), "sk");
    }
}
