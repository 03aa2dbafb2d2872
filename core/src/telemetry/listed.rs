//! Which names a server may store and list (SPEC §4): the clients' host filter, applied
//! again on the server to whatever a client sent, so a private or special-use host is never
//! stored and never appears in an answer or a candidate list.
//!
//! Decisions:
//! - An observation's host is judged exactly as the clients judge it ([`host_verdict`] with
//!   no allowlist). The server's `--unsafe-allow-private-hosts` is `allow_private`: it lifts
//!   the same blocks `PROWL_TELEMETRY_ALLOW_PRIVATE=1` lifts, never metadata endpoints.
//! - An interaction target names a host in two cases: `url:<host>` (a remote MCP server,
//!   SPEC §3.2), judged like a URL's host and refused when unreadable (fail closed); and a
//!   bare name that is itself an address or a dotted name under a private suffix
//!   (`10.0.0.7`, `[fd00::1]`, `db.internal`, `printer.local`). Every other target is a
//!   package or file label (`npm:x`, `pypi:x`, `mcp:x`, `brave-search`, `index`): a single
//!   label there is a tool's name, not a host on a local network. A bare name is judged by
//!   its host part, before any path and without a `:port` (`localhost:3000`,
//!   `db.internal:5432/x`), and a target with a scheme (`http://192.168.1.10/mcp`) like a
//!   URL, every block applying.

use super::host::{host_verdict, BlockReason, HostPolicy, HostVerdict};
use super::url::host_from_url;

/// Why an observation of `host` must not be stored or listed; `None` when it may be.
pub fn unlisted_host(host: &str, allow_private: bool) -> Option<BlockReason> {
    let policy = HostPolicy {
        allowlist: Vec::new(),
        allow_private,
    };
    match host_verdict(host, &policy) {
        HostVerdict::Report { .. } => None,
        HostVerdict::Blocked { reason } => Some(reason),
    }
}

/// Why an interaction target (or any stored name) must not be stored or listed; `None`
/// when it may be. See the module docs for which targets name a host.
pub fn unlisted_target(target: &str, allow_private: bool) -> Option<BlockReason> {
    if let Some(rest) = target.strip_prefix("url:") {
        return match host_from_url(&format!("https://{rest}")) {
            Some(host) => unlisted_host(&host, allow_private),
            None => Some(BlockReason::InvalidHost),
        };
    }
    if target.contains("://") {
        return match host_from_url(target) {
            Some(host) => unlisted_host(&host, allow_private),
            None => Some(BlockReason::InvalidHost),
        };
    }
    // A name that is not a host at all (a namespace, a path, a space) parses as invalid.
    match unlisted_host(bare_host(target), allow_private) {
        Some(BlockReason::SingleLabel | BlockReason::InvalidHost | BlockReason::UnicodeHost) => {
            None
        }
        other => other,
    }
}

/// The host part of a bare target: before any path, query or fragment, and without a
/// `:port` (`db.internal:5432/x` is `db.internal`; `fd00::1` stays whole).
fn bare_host(target: &str) -> &str {
    let head = &target[..target.find(['/', '?', '#']).unwrap_or(target.len())];
    if head.starts_with('[') {
        if let Some(end) = head.find(']') {
            return &head[..=end];
        }
    }
    match head.rsplit_once(':') {
        Some((host, port))
            if !host.contains(':')
                && !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit()) =>
        {
            host
        }
        _ => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_hosts_are_unlisted_unless_allowed() {
        assert_eq!(unlisted_host("api.stripe.com", false), None);
        assert_eq!(
            unlisted_host("localhost", false),
            Some(BlockReason::Localhost)
        );
        assert_eq!(unlisted_host("10.1.2.3", false), Some(BlockReason::Private));
        assert_eq!(
            unlisted_host("fileserver", false),
            Some(BlockReason::SingleLabel)
        );
        assert_eq!(unlisted_host("localhost", true), None);
        assert_eq!(
            unlisted_host("169.254.169.254", true),
            Some(BlockReason::Metadata),
            "the unsafe flag never lifts metadata endpoints"
        );
    }

    #[test]
    fn targets_name_a_host_only_as_url_or_an_address_or_private_name() {
        for public in [
            "npm:@scope/pkg",
            "pypi:mcp-server-fetch",
            "mcp:io.github.user/server",
            "brave-search",
            "index",
            "api.stripe.com",
            "url:mcp.example.com",
            "url:api.github.com:443",
            "npm:db.internal",
            "npm:5432",
            "https://mcp.example.com/mcp",
            "api.example.com:8443/mcp",
            "my-server/index",
        ] {
            assert_eq!(unlisted_target(public, false), None, "{public}");
        }
        for (private, reason) in [
            ("url:localhost", BlockReason::Localhost),
            ("url:127.0.0.1:8080", BlockReason::Loopback),
            ("url:fileserver", BlockReason::SingleLabel),
            ("url:", BlockReason::InvalidHost),
            ("10.0.0.7", BlockReason::Private),
            ("[fd00::1]", BlockReason::UniqueLocal),
            ("fd00::1", BlockReason::UniqueLocal),
            ("db.internal", BlockReason::LocalName),
            ("printer.local", BlockReason::LocalName),
            ("localhost:3000", BlockReason::Localhost),
            ("db.internal:5432", BlockReason::LocalName),
            ("10.0.0.7:80/mcp", BlockReason::Private),
            ("[fd00::1]:8080", BlockReason::UniqueLocal),
            ("localhost/tool", BlockReason::Localhost),
            ("http://192.168.1.10/mcp", BlockReason::Private),
            ("http://fileserver/mcp", BlockReason::SingleLabel),
            ("ws://localhost:9000", BlockReason::Localhost),
            ("http://", BlockReason::InvalidHost),
        ] {
            assert_eq!(unlisted_target(private, false), Some(reason), "{private}");
        }
        assert_eq!(unlisted_target("url:localhost", true), None);
    }
}
