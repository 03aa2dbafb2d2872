//! Fixtures for the Scanner, all on 127.0.0.1: a Registry serving the v0.1 shapes, MCP
//! servers that behave as real ones do (and as broken ones do), and a listener that counts
//! connections. Shared by the Scanner tests and the `lowdown-scanner-bench` fixtures.
#![allow(dead_code)] // each user takes a different part

pub mod everything;
pub mod mcp;
pub mod packages;
pub mod registry;

use std::collections::BTreeMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use lowdown_core::scanner::target::Policy;
use lowdown_server::scanner::net::Lookup;
use lowdown_server::scanner::progress::Mode;
use lowdown_server::scanner::ScanConfig;

/// The Scanner's network with the real resolver and loopback allowed (the fixtures are on
/// 127.0.0.1), as `--unsafe-allow-loopback` makes it.
pub fn loopback_net() -> lowdown_server::scanner::net::Net {
    let policy = Policy {
        allow_loopback: true,
    };
    let lookup = Arc::new(lowdown_server::scanner::net::SystemLookup);
    lowdown_server::scanner::net::Net::new(policy, lookup, "test").unwrap()
}

/// Serves `app` on a fresh 127.0.0.1 port; the server lives as long as the runtime.
pub async fn serve(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

/// A listener that accepts connections and counts them, and never answers: proof that
/// nothing was sent to it when the count stays 0.
pub struct CountingListener {
    /// Its address.
    pub addr: SocketAddr,
    /// Connections accepted so far.
    pub accepted: Arc<AtomicUsize>,
}

impl CountingListener {
    pub async fn start() -> CountingListener {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                open.push(socket);
            }
        });
        CountingListener { addr, accepted }
    }

    pub fn count(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// A port nothing listens on (bound, then closed): connections to it are refused.
pub async fn closed_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

/// A resolver with a fixed table (unknown names do not resolve) that remembers what it
/// was asked.
#[derive(Clone, Default)]
pub struct MapLookup {
    map: BTreeMap<String, Vec<IpAddr>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl MapLookup {
    pub fn new(entries: &[(&str, &[&str])]) -> MapLookup {
        MapLookup {
            map: entries
                .iter()
                .map(|(n, ips)| {
                    (
                        n.to_string(),
                        ips.iter().map(|i| i.parse().unwrap()).collect(),
                    )
                })
                .collect(),
            asked: Arc::default(),
        }
    }

    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl Lookup for MapLookup {
    fn lookup(
        &self,
        host: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> {
        self.asked.lock().unwrap().push(host.to_owned());
        let found = self.map.get(host).cloned();
        Box::pin(async move {
            found.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such name"))
        })
    }
}

/// A run against fixtures: loopback allowed, quiet, resolving through `lookup`; the
/// declared packages are not checked (the public registries are never asked from a test;
/// `tests/it/packages.rs` points the check at `packages::Packages`).
pub fn config(registry_url: &str, lookup: MapLookup) -> ScanConfig {
    ScanConfig {
        registry_url: registry_url.to_owned(),
        policy: Policy {
            allow_loopback: true,
        },
        lookup: Arc::new(lookup),
        progress: Mode::Quiet,
        packages: None,
        ..ScanConfig::new()
    }
}

/// `cfg` with a clock `days` days away from now (negative: the past).
pub fn on_day(cfg: &ScanConfig, days: i64) -> ScanConfig {
    ScanConfig {
        clock: Arc::new(move || lowdown_server::clock::now_ms() + days * 86_400_000),
        ..cfg.clone()
    }
}
