//! Open connections per client address and in total.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::caller::TrustedProxies;

/// The open connections of one listener.
#[derive(Debug, Clone)]
pub struct Conns(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    per_address: usize,
    total: usize,
    proxies: TrustedProxies,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_address: HashMap<Key, usize>,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct Slot {
    conns: Conns,
    key: Option<Key>,
}

impl Conns {
    /// At most `per_address` open connections per address (`proxies` exempt) and `total`.
    pub fn new(per_address: usize, total: usize, proxies: TrustedProxies) -> Self {
        Conns(Arc::new(Inner {
            per_address,
            total,
            proxies,
            open: Mutex::new(Open::default()),
        }))
    }

    /// A place for a connection from `ip`, or `None` when a cap is reached.
    pub fn admit(&self, ip: IpAddr) -> Option<Slot> {
        let key = (!self.0.proxies.contains(ip)).then(|| address_key(ip));
        let mut open = self.0.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.total >= self.0.total {
            return None;
        }
        if let Some(k) = key {
            let n = open.by_address.entry(k).or_insert(0);
            if *n >= self.0.per_address {
                return None;
            }
            *n += 1;
        }
        open.total += 1;
        Some(Slot {
            conns: self.clone(),
            key,
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.0.open.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.conns.0.open.lock().unwrap_or_else(|p| p.into_inner());
        open.total -= 1;
        if let Some(k) = self.key {
            if let Some(n) = open.by_address.get_mut(&k) {
                *n -= 1;
                if *n == 0 {
                    open.by_address.remove(&k);
                }
            }
        }
    }
}

/// A client address as the per-address cap counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// An IPv4 address (mapped ones included) as itself.
    V4(u32),
    /// An IPv6 address by its /64, which one host usually holds whole.
    V6(u64),
}

fn address_key(ip: IpAddr) -> Key {
    match ip.to_canonical() {
        IpAddr::V4(v4) => Key::V4(u32::from(v4)),
        IpAddr::V6(v6) => Key::V6((u128::from(v6) >> 64) as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_reaches_its_cap_and_others_still_get_in() {
        let c = Conns::new(2, 3, TrustedProxies::default());
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let s1 = c.admit(a).unwrap();
        let _s2 = c.admit(a).unwrap();
        assert!(c.admit(a).is_none(), "a third from one address");
        let _s3 = c.admit(b).unwrap();
        assert!(c.admit(b).is_none(), "over the total");
        drop(s1);
        assert!(c.admit(a).is_some(), "a freed place is taken again");
    }

    #[test]
    fn an_ipv6_host_counts_as_its_64_and_a_trusted_proxy_only_in_the_total() {
        let proxies = TrustedProxies::parse(&["10.9.0.0/16"]).unwrap();
        let c = Conns::new(1, 10, proxies);
        let _x = c.admit("2001:db8:1:2::1".parse().unwrap()).unwrap();
        assert!(c.admit("2001:db8:1:2::ffff".parse().unwrap()).is_none());
        let _y = c.admit("2001:db8:1:3::1".parse().unwrap()).unwrap();
        let lb: IpAddr = "10.9.0.1".parse().unwrap();
        let held: Vec<_> = (0..5).map(|_| c.admit(lb).unwrap()).collect();
        assert_eq!(c.open(), 7);
        drop(held);
        assert_eq!(c.open(), 2);
    }
}
