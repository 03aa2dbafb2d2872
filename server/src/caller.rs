//! Who a request comes from, for rate limits (SPEC §4): the client address, taken from
//! `X-Forwarded-For` only when the connection comes from a trusted proxy; its bucket (one
//! per IPv4 address, one per IPv6 /64, since one host usually holds a whole /64); and the
//! subject stored for it, an HMAC-SHA256 under the deployment's secret, never the address
//! (an unkeyed hash of an IPv4 address is undone by hashing all 2^32 of them).

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
        values
            .iter()
            .map(|v| {
                let v = v.as_ref().trim();
                v.parse::<IpNet>()
                    .or_else(|_| v.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!(
                            "--trusted-proxy {v:?}: expected a CIDR like 10.0.0.0/8 or an address"
                        )
                    })
            })
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
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

/// The rate-limit bucket of a client address: `ip4:a.b.c.d` (IPv4-mapped IPv6 included),
/// `ip6:<first four groups>::/64`, or `unknown` when the address is not known (the app
/// running without a socket).
pub fn bucket(ip: Option<IpAddr>) -> String {
    match ip.map(|i| i.to_canonical()) {
        Some(IpAddr::V4(a)) => format!("ip4:{a}"),
        Some(IpAddr::V6(a)) => {
            let s = a.segments();
            format!("ip6:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        None => "unknown".to_owned(),
    }
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
    fn ipv6_callers_share_a_bucket_per_64() {
        assert_eq!(
            bucket(Some(ip("2001:db8:1:2:aaaa::1"))),
            bucket(Some(ip("2001:db8:1:2:bbbb::2")))
        );
        assert_ne!(
            bucket(Some(ip("2001:db8:1:2::1"))),
            bucket(Some(ip("2001:db8:1:3::1")))
        );
        assert_eq!(bucket(Some(ip("::ffff:192.0.2.7"))), "ip4:192.0.2.7");
        assert_eq!(bucket(None), "unknown");
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
