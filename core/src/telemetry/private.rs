//! The one list of hosts that never name a public server (SPEC §4, §8).
//!
//! The telemetry filter ([`super::host_verdict`]), the server's check of what clients send
//! and the Registry Scanner's URL check all judge hosts here, so a name blocked in one
//! place is blocked in all of them:
//!
//! - [`is_private_name`] judges a host as it appears in a URL (a name, or an address
//!   literal in any form a URL parser accepts);
//! - [`is_blocked_ip`] judges an address, such as one a name resolved to at connect time.

use super::host::{parse_host, BlockReason, Host};
use super::ip::{classify_v4, classify_v6};
use std::net::IpAddr;

/// Names of cloud metadata services (GCP's `metadata` short name and FQDNs, AWS, Azure).
pub const METADATA_NAMES: &[&str] = &[
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
];

/// Suffixes of local and internal names: a host that is one of these, or ends in `.` and
/// one of these, is private. Besides the RFC 6762 and RFC 8375 names (`.local`,
/// `.home.arpa`) and ICANN's private-use `.internal`, these are the names that resolve
/// only inside a network in practice: Kubernetes services (`.svc`, `.cluster.local`),
/// Consul (`.consul`), home routers (`.lan`, `.home`, `.fritz.box`, `.localdomain`) and
/// company networks (`.corp`, `.intranet`, `.private`).
pub const PRIVATE_NAME_SUFFIXES: &[&str] = &[
    "local",
    "cluster.local",
    "internal",
    "home.arpa",
    "localdomain",
    "lan",
    "home",
    "corp",
    "intranet",
    "private",
    "svc",
    "consul",
    "fritz.box",
];

/// Special-use names that are never public (RFC 6761, RFC 7686, RFC 9476).
pub const SPECIAL_USE_SUFFIXES: &[&str] = &["test", "invalid", "example", "onion", "alt"];

/// Whether `name` is `suffix` or ends in `.` + `suffix`.
fn has_suffix(name: &str, suffix: &str) -> bool {
    name == suffix
        || (name.ends_with(suffix) && name.as_bytes()[name.len() - suffix.len() - 1] == b'.')
}

/// Why a canonical name (lowercase ASCII, no trailing dot) is not public, or `None`.
pub(super) fn name_reason(name: &str) -> Option<BlockReason> {
    if has_suffix(name, "localhost") {
        Some(BlockReason::Localhost)
    } else if METADATA_NAMES.contains(&name) {
        Some(BlockReason::Metadata)
    } else if PRIVATE_NAME_SUFFIXES.iter().any(|s| has_suffix(name, s)) {
        Some(BlockReason::LocalName)
    } else if SPECIAL_USE_SUFFIXES.iter().any(|s| has_suffix(name, s)) {
        Some(BlockReason::SpecialUse)
    } else if !name.contains('.') {
        Some(BlockReason::SingleLabel)
    } else {
        None
    }
}

/// Why a parsed host must not be reported or contacted, ignoring policy; `None` when public.
pub(super) fn host_reason(host: &Host) -> Option<BlockReason> {
    match host {
        Host::V4(a) => classify_v4(*a),
        Host::V6(a) => classify_v6(*a),
        Host::Domain(d) => name_reason(d),
    }
}

/// Whether `host` never names a public server: `localhost` and `*.localhost`, the local and
/// internal names of [`PRIVATE_NAME_SUFFIXES`] (`payments.default.svc`,
/// `vault.service.consul`, `nas.fritz.box`, …), the special-use names of
/// [`SPECIAL_USE_SUFFIXES`], single labels (`intranet`, `db`), cloud metadata names, and
/// address literals that [`is_blocked_ip`] blocks (`127.1`, `0x7f000001`, `[::ffff:10.0.0.1]`).
///
/// `host` is taken as a URL parser gives it: any case, one trailing dot allowed, IPv6 with
/// or without brackets. It fails closed: a host that is not a plain name or address
/// (a port, userinfo, `%`, empty labels) or that is not ASCII (pass the `xn--` form) is
/// private too.
///
/// ```
/// use lowdown_core::telemetry::is_private_name;
/// assert!(is_private_name("payments.default.svc"));
/// assert!(is_private_name("NAS.fritz.box."));
/// assert!(is_private_name("0x7f.1"));
/// assert!(!is_private_name("api.stripe.com"));
/// ```
pub fn is_private_name(host: &str) -> bool {
    parse_host(host).map_or(true, |h| host_reason(&h).is_some())
}

/// Whether an address must never be reported or contacted: loopback, private (RFC 1918,
/// IPv6 site-local, NAT64 local-use), link-local, carrier-grade NAT, unique local,
/// unspecified, reserved (multicast, broadcast, class E, documentation and benchmarking
/// ranges) and cloud metadata addresses. An IPv6 address that embeds an IPv4 address
/// (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, IPv4-translated, NAT64 `64:ff9b::/96`,
/// 6to4 `2002::/16`) is judged by that IPv4 address.
///
/// ```
/// use lowdown_core::telemetry::is_blocked_ip;
/// assert!(is_blocked_ip("::ffff:169.254.169.254".parse().unwrap()));
/// assert!(!is_blocked_ip("1.1.1.1".parse().unwrap()));
/// ```
pub fn is_blocked_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => classify_v4(a).is_some(),
        IpAddr::V6(a) => classify_v6(a).is_some(),
    }
}
