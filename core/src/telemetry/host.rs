//! The host privacy filter (SPEC §4): which hosts an observation may name.
//!
//! Decisions:
//! - Hosts are judged in the form a URL parser gives them: ASCII lowercase, one trailing
//!   dot removed, brackets around IPv6 optional, IPv4 in any WHATWG form (`2130706433`,
//!   `0x7f000001`, `0177.0.0.1`, `127.1`) read as the address it means. The reported host
//!   is that canonical form (`127.1` would be `127.0.0.1`; IPv6 as `[2606:4700::1111]`).
//! - **Fail closed**: anything that is not a plain host name or address is blocked as
//!   `invalid_host` (ports, userinfo, `%`, empty labels, over 253 characters, WHATWG-invalid
//!   numeric forms like `foo.1` or `256.0.0.1`).
//! - **Unicode hosts** are blocked as `unicode_host`: callers pass the ASCII (`xn--`) form,
//!   which is what `new URL()`, httpx and browsers produce. The core carries no IDNA tables,
//!   and a look-alike such as a fullwidth `ｌｏｃａｌｈｏｓｔ` must never slip through.
//! - `PROWL_TELEMETRY_ALLOW_PRIVATE=1` lifts the local/private blocks only: invalid and
//!   Unicode hosts, cloud metadata endpoints and reserved ranges (multicast, documentation)
//!   stay blocked.
//! - Names are judged as text: the core does no DNS, so a public name that resolves to a
//!   private address (`127.0.0.1.nip.io`, DNS rebinding) is reported under that public name,
//!   which reveals nothing the name itself does not.
//! - Which names and addresses are private is decided in one place
//!   ([`super::is_private_name`], [`super::is_blocked_ip`]), shared with the server and
//!   the Registry Scanner.
//! - The allowlist narrows what is reported; it never lifts a block. An entry matches the
//!   host itself and its subdomains (`stripe.com` matches `api.stripe.com`, not `notstripe.com`).

use super::ip::{ends_in_number, parse_ipv4, serialize_ipv6};
use super::private::host_reason;
use serde::{Deserialize, Serialize};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Why a host is not reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockReason {
    /// Not a plain host name or address (port, userinfo, bad characters, bad number form).
    InvalidHost,
    /// Contains non-ASCII characters; pass the `xn--` form.
    UnicodeHost,
    /// `localhost` or `*.localhost`.
    Localhost,
    /// A local or internal name (see [`super::PRIVATE_NAME_SUFFIXES`]): `.local`,
    /// `.cluster.local`, `.internal`, `.home.arpa`, `.localdomain`, `.lan`, `.home`,
    /// `.corp`, `.intranet`, `.private`, `.svc`, `.consul`, `.fritz.box`.
    LocalName,
    /// A special-use name that is never public: `.test`, `.invalid`, `.example`, `.onion`, `.alt`.
    SpecialUse,
    /// A name with no dot (resolved through a local search domain).
    SingleLabel,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, IPv6 site-local, NAT64 local-use.
    Private,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT `100.64/10`.
    Cgnat,
    /// IPv6 unique local `fc00::/7`.
    UniqueLocal,
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// Never a public server: multicast, broadcast, class E, documentation and benchmark ranges.
    Reserved,
    /// A cloud metadata endpoint (`169.254.169.254`, `metadata.google.internal`, ...).
    Metadata,
    /// An allowlist is set and the host is neither on it nor a subdomain of an entry.
    NotAllowlisted,
}

impl BlockReason {
    /// Whether `PROWL_TELEMETRY_ALLOW_PRIVATE=1` lifts this block.
    pub fn is_private(self) -> bool {
        matches!(
            self,
            Self::Localhost
                | Self::LocalName
                | Self::SpecialUse
                | Self::SingleLabel
                | Self::Loopback
                | Self::Private
                | Self::LinkLocal
                | Self::Cgnat
                | Self::UniqueLocal
                | Self::Unspecified
        )
    }
}

/// What the privacy filter decided for one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum HostVerdict {
    /// Report the observation under this canonical host.
    Report {
        /// Canonical host: lowercase, no trailing dot, IPv4 dotted, IPv6 bracketed.
        host: String,
    },
    /// Do not report.
    Blocked {
        /// Why.
        reason: BlockReason,
    },
}

/// The client's reporting policy, from `PROWL_TELEMETRY_ALLOWLIST` and
/// `PROWL_TELEMETRY_ALLOW_PRIVATE`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPolicy {
    /// Canonical hosts that may be reported (with their subdomains); empty = no restriction.
    pub allowlist: Vec<String>,
    /// Lift the local/private blocks (for local testing only). @default false
    pub allow_private: bool,
}

impl HostPolicy {
    /// Builds the policy from the two environment values as the host read them (`None`
    /// when unset). The allowlist is comma-separated; entries are trimmed, lowercased and a
    /// leading `*.` or `.` and a trailing `.` dropped; blank entries are skipped, so an
    /// unset, empty or all-commas value means no restriction. An entry that is not a valid
    /// host is kept as written: it matches nothing, so a typo narrows rather than widens.
    /// `allow_private` is on for `1`, `true`, `yes` or `on` (any case), off otherwise.
    pub fn from_env_values(allowlist: Option<&str>, allow_private: Option<&str>) -> Self {
        let allowlist = allowlist
            .unwrap_or("")
            .split(',')
            .map(|e| {
                let e = e.trim().to_ascii_lowercase();
                let e = e
                    .strip_prefix("*.")
                    .or_else(|| e.strip_prefix('.'))
                    .unwrap_or(&e)
                    .to_owned();
                match parse_host(&e) {
                    Ok(h) => h.to_string(),
                    Err(_) => e,
                }
            })
            .filter(|e| !e.is_empty())
            .collect();
        let allow_private = allow_private
            .map(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "1" | "true" | "yes" | "on"
                )
            })
            .unwrap_or(false);
        Self {
            allowlist,
            allow_private,
        }
    }

    fn allows(&self, host: &Host) -> bool {
        let name = host.to_string();
        self.allowlist.is_empty()
            || self.allowlist.iter().any(|e| {
                name == *e
                    || (matches!(host, Host::Domain(_))
                        && name.len() > e.len()
                        && name.ends_with(e.as_str())
                        && name.as_bytes()[name.len() - e.len() - 1] == b'.')
            })
    }
}

/// A host after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    /// A lowercase ASCII name without trailing dot.
    Domain(String),
    /// An IPv4 address.
    V4(Ipv4Addr),
    /// An IPv6 address.
    V6(Ipv6Addr),
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Host::Domain(d) => f.write_str(d),
            Host::V4(a) => write!(f, "{a}"),
            Host::V6(a) => f.write_str(&serialize_ipv6(*a)),
        }
    }
}

/// Parses a bare host as described in the module docs.
pub(crate) fn parse_host(raw: &str) -> Result<Host, BlockReason> {
    // 253 for a name, plus brackets and a trailing dot; anything longer is not a host.
    if raw.is_empty() || raw.len() > 300 {
        return Err(BlockReason::InvalidHost);
    }
    if !raw.is_ascii() {
        return Err(BlockReason::UnicodeHost);
    }
    let lower = raw.to_ascii_lowercase();
    if let Some(inner) = lower.strip_prefix('[') {
        let inner = inner.strip_suffix(']').ok_or(BlockReason::InvalidHost)?;
        return inner
            .parse()
            .map(Host::V6)
            .map_err(|_| BlockReason::InvalidHost);
    }
    if lower.contains(':') {
        return lower
            .parse()
            .map(Host::V6)
            .map_err(|_| BlockReason::InvalidHost);
    }
    if !lower
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    {
        return Err(BlockReason::InvalidHost);
    }
    if ends_in_number(&lower) {
        return parse_ipv4(&lower)
            .map(Host::V4)
            .ok_or(BlockReason::InvalidHost);
    }
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if name.len() > 253 || name.split('.').any(|l| l.is_empty() || l.len() > 63) {
        return Err(BlockReason::InvalidHost);
    }
    Ok(Host::Domain(name.to_owned()))
}

/// Decides whether an observation of `host` may be reported under `policy` (SPEC §4).
pub fn host_verdict(host: &str, policy: &HostPolicy) -> HostVerdict {
    let parsed = match parse_host(host) {
        Ok(h) => h,
        Err(reason) => return HostVerdict::Blocked { reason },
    };
    if let Some(reason) = host_reason(&parsed) {
        if !(policy.allow_private && reason.is_private()) {
            return HostVerdict::Blocked { reason };
        }
    }
    if !policy.allows(&parsed) {
        return HostVerdict::Blocked {
            reason: BlockReason::NotAllowlisted,
        };
    }
    HostVerdict::Report {
        host: parsed.to_string(),
    }
}
