//! Which remote URLs and addresses the Scanner may reach (SPEC §8, SSRF safety).
//!
//! A URL must be `https`, carry no userinfo, and name a host the telemetry host filter
//! would report ([`crate::telemetry::host_verdict`]: `localhost`, `*.localhost`, `.local`,
//! `.internal`, `.localdomain` and the other private names, single labels, metadata names
//! and every blocked address range are refused). At connect time every address a name
//! resolves to is checked against the same address table ([`address_verdict`]), so a
//! public name that resolves to a private address is refused before a byte is sent.
//!
//! The test-only `allow_loopback` policy (`--unsafe-allow-loopback`) permits `http` and
//! the loopback addresses `127.0.0.0/8` and `::1`, and nothing else: the name `localhost`,
//! private, link-local, metadata and every other blocked range stay refused.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::telemetry::{
    address_block_reason, host_from_url, host_verdict, BlockReason, HostPolicy, HostVerdict,
};

/// What the Scanner may reach.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Test only: allow `http` and loopback addresses (fixtures on 127.0.0.1).
    pub allow_loopback: bool,
}

/// Why a URL or address is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Refusal {
    /// Not `https` (or not `http`/`https` with `allow_loopback`).
    #[error("only https URLs are probed")]
    Scheme,
    /// The URL carries a user name or password.
    #[error("URLs with userinfo are not probed")]
    Userinfo,
    /// The URL is not one the HTTP client can parse.
    #[error("not a valid URL")]
    Unparsable,
    /// The host name or literal address is blocked.
    #[error("the host is not public ({reason:?})")]
    Host {
        /// The host filter's reason.
        reason: BlockReason,
    },
    /// A resolved address is blocked.
    #[error("the name resolves to a non-public address ({reason:?})")]
    Address {
        /// The address table's reason.
        reason: BlockReason,
    },
}

fn lifted(reason: BlockReason, policy: Policy) -> bool {
    policy.allow_loopback && reason == BlockReason::Loopback
}

/// Judges a parsed URL: its `scheme`, whether it has userinfo, and its `host` as the HTTP
/// client's URL parser serialises it (`example.com`, `10.0.0.1`, `[::1]`).
pub fn url_verdict(
    scheme: &str,
    has_userinfo: bool,
    host: &str,
    policy: Policy,
) -> Result<(), Refusal> {
    let scheme_ok = scheme == "https" || (policy.allow_loopback && scheme == "http");
    if !scheme_ok {
        return Err(Refusal::Scheme);
    }
    if has_userinfo {
        return Err(Refusal::Userinfo);
    }
    match host_verdict(host, &HostPolicy::default()) {
        HostVerdict::Report { .. } => Ok(()),
        HostVerdict::Blocked { reason } if lifted(reason, policy) => Ok(()),
        HostVerdict::Blocked { reason } => Err(Refusal::Host { reason }),
    }
}

/// Judges a URL given as text, for hosts without a WHATWG URL parser of their own (the
/// Python provider hook): the host is read as [`host_from_url`] reads it, and the URL is
/// refused outright when it holds whitespace or control characters (which parsers disagree
/// on). Returns the host the rules judged; the host must connect to that host and no other.
pub fn check_url_text(url: &str, policy: Policy) -> Result<String, Refusal> {
    if url.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Refusal::Unparsable);
    }
    let (scheme, rest) = url.split_once(':').ok_or(Refusal::Unparsable)?;
    let host = host_from_url(url).ok_or(Refusal::Unparsable)?;
    let authority = rest
        .trim_start_matches(['/', '\\'])
        .split(['/', '\\', '?', '#'])
        .next()
        .unwrap_or("");
    url_verdict(
        &scheme.to_ascii_lowercase(),
        authority.contains('@'),
        &host,
        policy,
    )?;
    Ok(host)
}

/// Judges one resolved address, at connect time.
pub fn address_verdict(addr: IpAddr, policy: Policy) -> Result<(), Refusal> {
    match address_block_reason(addr) {
        None => Ok(()),
        Some(reason) if lifted(reason, policy) => Ok(()),
        Some(reason) => Err(Refusal::Address { reason }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: Policy = Policy {
        allow_loopback: false,
    };
    const LOOPBACK: Policy = Policy {
        allow_loopback: true,
    };

    #[test]
    fn urls_must_be_https_without_userinfo_on_a_public_host() {
        assert_eq!(
            url_verdict("https", false, "mcp.example.com", STRICT),
            Ok(())
        );
        assert_eq!(
            url_verdict("http", false, "mcp.example.com", STRICT),
            Err(Refusal::Scheme)
        );
        assert_eq!(
            url_verdict("https", true, "mcp.example.com", STRICT),
            Err(Refusal::Userinfo)
        );
        for (host, reason) in [
            ("localhost", BlockReason::Localhost),
            ("api.localhost", BlockReason::Localhost),
            ("printer.local", BlockReason::LocalName),
            ("db.internal", BlockReason::LocalName),
            ("box.localdomain", BlockReason::LocalName),
            ("fileserver", BlockReason::SingleLabel),
            ("10.1.2.3", BlockReason::Private),
            ("169.254.169.254", BlockReason::Metadata),
            ("[::ffff:10.0.0.1]", BlockReason::Private),
            ("[fd00::1]", BlockReason::UniqueLocal),
        ] {
            assert_eq!(
                url_verdict("https", false, host, STRICT),
                Err(Refusal::Host { reason }),
                "{host}"
            );
        }
    }

    #[test]
    fn urls_as_text_are_judged_by_the_host_they_name() {
        assert_eq!(
            check_url_text("https://MCP.Example.com:8443/mcp?x=1", STRICT),
            Ok("mcp.example.com".to_owned())
        );
        assert_eq!(
            check_url_text("https://u:p@mcp.example.com/", STRICT),
            Err(Refusal::Userinfo)
        );
        assert_eq!(
            check_url_text("http://127.0.0.1:9/mcp", LOOPBACK),
            Ok("127.0.0.1".to_owned())
        );
        assert!(check_url_text("http://127.0.0.1:9/mcp", STRICT).is_err());
        for bad in [
            "https://a.example.com/ x",
            "https://a.example.com/\tx",
            "",
            "nothing",
        ] {
            assert_eq!(
                check_url_text(bad, STRICT),
                Err(Refusal::Unparsable),
                "{bad}"
            );
        }
        assert!(matches!(
            check_url_text("https://0x7f.1/", LOOPBACK),
            Ok(h) if h == "127.0.0.1"
        ));
        assert!(matches!(
            check_url_text("https://169.254.169.254/", LOOPBACK),
            Err(Refusal::Host { .. })
        ));
    }

    #[test]
    fn the_loopback_flag_lifts_http_and_loopback_only() {
        assert_eq!(url_verdict("http", false, "127.0.0.1", LOOPBACK), Ok(()));
        assert_eq!(url_verdict("http", false, "[::1]", LOOPBACK), Ok(()));
        assert_eq!(
            url_verdict("ftp", false, "127.0.0.1", LOOPBACK),
            Err(Refusal::Scheme)
        );
        assert!(url_verdict("http", false, "localhost", LOOPBACK).is_err());
        assert!(url_verdict("http", false, "10.0.0.1", LOOPBACK).is_err());
        assert!(address_verdict("127.0.0.2".parse().unwrap(), LOOPBACK).is_ok());
        for a in [
            "10.0.0.7",
            "192.168.1.1",
            "169.254.169.254",
            "::ffff:10.0.0.7",
            "fe80::1",
        ] {
            assert!(
                address_verdict(a.parse().unwrap(), LOOPBACK).is_err(),
                "{a}"
            );
        }
        assert_eq!(
            address_verdict("::ffff:127.0.0.1".parse().unwrap(), STRICT),
            Err(Refusal::Address {
                reason: BlockReason::Loopback
            })
        );
        assert!(address_verdict("93.184.215.14".parse().unwrap(), STRICT).is_ok());
    }
}
