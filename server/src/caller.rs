//! Who a request comes from, for quotas, caps and independence figures (SPEC §4): the
//! client address, taken from `X-Forwarded-For` only when the connection comes from a
//! trusted proxy; its network (an IPv4 /24, an IPv6 /48: [`lowdown_core::quota::network_of`]);
//! whether a deployment trusts that network (`--trusted-network`); and what is stored for
//! it, an HMAC-SHA256 under the deployment's secret, never the address (an unkeyed hash of
//! an IPv4 address is undone by hashing all 2^32 of them).

use std::net::IpAddr;

use hmac::{Hmac, Mac};
use ipnet::IpNet;
use sha2::Sha256;

/// The proxies whose `X-Forwarded-For` is believed (`--trusted-proxy CIDR`, repeatable).
/// Empty by default: then the peer address is the client, whatever a header says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses `--trusted-proxy` values: a CIDR (`10.0.0.0/8`, `fd00::/8`) or one address.
    pub fn parse<S: AsRef<str>>(values: &[S]) -> Result<Self, String> {
        parse_nets(values, "--trusted-proxy").map(TrustedProxies)
    }

    /// Whether `ip` is inside a trusted range (IPv4-mapped IPv6 counts as its IPv4 address).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client address of a connection from `peer` whose request carried the
    /// `X-Forwarded-For` header values `forwarded` (in order).
    ///
    /// An untrusted peer is the client. Behind trusted proxies the list is read from the
    /// right (each proxy appends the address it saw), skipping trusted hops; the first
    /// untrusted address is the client. An entry that is not an address ends the walk at
    /// the last hop read, so a forged or garbled entry never names someone else.
    pub fn client(&self, peer: IpAddr, forwarded: &[&str]) -> IpAddr {
        let mut client = peer;
        if !self.contains(peer) {
            return client;
        }
        let hops = forwarded
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .collect::<Vec<_>>();
        for hop in hops.iter().rev() {
            let Some(ip) = parse_hop(hop) else {
                break;
            };
            client = ip;
            if !self.contains(ip) {
                break;
            }
        }
        client
    }
}

/// An `X-Forwarded-For` entry: an address, optionally with a port (`1.2.3.4:5678`,
/// `[2001:db8::1]:443`).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(sock) = hop.parse::<std::net::SocketAddr>() {
        return Some(sock.ip());
    }
    hop.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .and_then(|h| h.parse().ok())
}

/// The network of a client address: `ip4:a.b.c.0/24` or `ip6:x:x:x::/48`.
pub fn network(ip: IpAddr) -> String {
    lowdown_core::quota::network_of(ip)
}

/// What is stored for the network of `ip` beside a record or an observation (to count
/// distinct networks and cap each one): 64 bits of its HMAC under the deployment's
/// `secret`, as 16 hex digits (every raw row carries one, so it is kept short; two
/// networks share an id with odds of 1 in 2^64).
pub fn network_id(secret: &[u8], ip: IpAddr) -> String {
    let mut id = subject(secret, "network", &network(ip));
    id.truncate(16);
    id
}

/// The networks a deployment trusts (`--trusted-network CIDR`, repeatable): exempt from
/// quotas and from the per-network cap. Empty by default: nothing is trusted, loopback
/// included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedNetworks(Vec<IpNet>);

impl TrustedNetworks {
    /// Parses `--trusted-network` values: a CIDR or one address.
    pub fn parse<S: AsRef<str>>(values: &[S]) -> Result<Self, String> {
        parse_nets(values, "--trusted-network").map(TrustedNetworks)
    }

    /// Whether the client `ip` is inside a trusted network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }
}

/// CIDRs or single addresses given to `flag`.
fn parse_nets<S: AsRef<str>>(values: &[S], flag: &str) -> Result<Vec<IpNet>, String> {
    values
        .iter()
        .map(|v| {
            let v = v.as_ref().trim();
            v.parse::<IpNet>()
                .or_else(|_| v.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| format!("{flag} {v:?}: expected a CIDR like 10.0.0.0/8 or an address"))
        })
        .collect()
}

/// The subject stored for `caller` under one limit: lowercase hex HMAC-SHA256 keyed by the
/// deployment's `secret`, over `<limit>\0<caller>` (so one caller's rows for different
/// limits are unrelated).
pub fn subject(secret: &[u8], limit: &str, caller: &str) -> String {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes any key");
    mac.update(limit.as_bytes());
    mac.update(&[0]);
    mac.update(caller.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let t = TrustedProxies::parse(&["10.0.0.0/8", "fd00::1"]).unwrap();
        let xff = ["203.0.113.9, 198.51.100.4"];
        assert_eq!(
            t.client(ip("192.0.2.1"), &xff),
            ip("192.0.2.1"),
            "untrusted peer"
        );
        assert_eq!(
            t.client(ip("10.1.1.1"), &xff),
            ip("198.51.100.4"),
            "the rightmost untrusted hop"
        );
        assert_eq!(
            t.client(ip("10.1.1.1"), &["203.0.113.9", "198.51.100.4, 10.2.2.2"]),
            ip("198.51.100.4"),
            "trusted hops are skipped across header lines"
        );
        assert_eq!(
            t.client(ip("fd00::1"), &["[2001:db8::7]:443"]),
            ip("2001:db8::7")
        );
        assert_eq!(t.client(ip("10.1.1.1"), &[]), ip("10.1.1.1"));
        assert_eq!(
            t.client(ip("10.1.1.1"), &["203.0.113.9, garbage"]),
            ip("10.1.1.1"),
            "a garbled entry never names someone else"
        );
        assert_eq!(
            t.client(ip("::ffff:10.0.0.3"), &["198.51.100.4"]),
            ip("198.51.100.4")
        );
        assert!(TrustedProxies::parse(&["10.0.0.0/33"]).is_err());
        assert!(TrustedProxies::parse(&["proxy.local"]).is_err());
    }

    #[test]
    fn networks_are_stored_as_keyed_ids() {
        let a = network_id(b"k", ip("2001:db8:1:2::1"));
        assert_eq!(a.len(), 16);
        assert_eq!(a, network_id(b"k", ip("2001:db8:1:ffff::9")), "one /48");
        assert_ne!(a, network_id(b"k", ip("2001:db8:2::1")));
        assert_ne!(a, network_id(b"other", ip("2001:db8:1:2::1")));
        assert_eq!(
            network_id(b"k", ip("::ffff:192.0.2.7")),
            network_id(b"k", ip("192.0.2.200"))
        );
        let t = TrustedNetworks::parse(&["10.0.0.0/8", "192.0.2.5"]).unwrap();
        assert!(t.contains(ip("10.9.9.9")) && t.contains(ip("::ffff:10.1.1.1")));
        assert!(t.contains(ip("192.0.2.5")) && !t.contains(ip("192.0.2.6")));
        assert!(
            !TrustedNetworks::default().contains(ip("127.0.0.1")),
            "nothing by default"
        );
        assert!(TrustedNetworks::parse(&["lan"]).is_err());
    }

    #[test]
    fn subjects_are_keyed() {
        let a = subject(b"secret-a", "observe", "ip4:203.0.113.7");
        assert_eq!(a.len(), 64);
        assert_ne!(a, subject(b"secret-b", "observe", "ip4:203.0.113.7"));
        assert_ne!(a, subject(b"secret-a", "register", "ip4:203.0.113.7"));
        // Computed independently: Python's hmac.new(b"secret-a", b"observe\0ip4:203.0.113.7", sha256).
        assert_eq!(
            a,
            "2e5ac95e58710dd3f118bc0e07f4d78562bc2dba7c0cfc0af873b8f147b19125"
        );
    }
}
