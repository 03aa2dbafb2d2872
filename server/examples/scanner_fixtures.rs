//! Fixtures for `make bench-scanner`: a Registry with N entries whose remotes are fixture MCP
//! servers on loopback, 85 % answering at once, 10 % answering `initialize` after 1 s, 3 %
//! hanging and 2 % refusing connections (assigned by index, so every run is the same).
//! Prints the Registry URL on stdout, then serves until killed.
//!
//! `--hosts one` (the default) puts every remote on 127.0.0.1. `--hosts many` spreads them
//! as the Registry's hosting platforms do: 40 % on 127.0.0.1, 20 % on 127.0.0.2, 10 % on
//! 127.0.0.3, and the rest 30 to a host on 127.1.x.y (each address is a host of its own;
//! 127.0.0.0/8 is all local).
//!
//! `cargo run --release -p lowdown-server --example scanner_fixtures -- --targets 25000 --hosts many`

#[path = "../tests/it/scanner_fixtures/mod.rs"]
mod scanner_fixtures;

use std::net::{IpAddr, Ipv4Addr};

use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{streamable, Registry};

/// Remotes per small host with `--hosts many`.
const SMALL_HOST: usize = 30;

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).map(String::as_str)
}

/// The address of remote `i` of `targets`.
fn host_of(i: usize, targets: usize, many: bool) -> Ipv4Addr {
    let share = |percent: usize| targets * percent / 100;
    match i {
        _ if !many => Ipv4Addr::new(127, 0, 0, 1),
        i if i < share(40) => Ipv4Addr::new(127, 0, 0, 1),
        i if i < share(60) => Ipv4Addr::new(127, 0, 0, 2),
        i if i < share(70) => Ipv4Addr::new(127, 0, 0, 3),
        i => {
            let small = (i - share(70)) / SMALL_HOST;
            Ipv4Addr::new(127, 1, (small / 250) as u8, (small % 250 + 1) as u8)
        }
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let targets: usize = arg(&args, "--targets")
        .and_then(|n| n.parse().ok())
        .unwrap_or(5_000);
    let many = match arg(&args, "--hosts").unwrap_or("one") {
        "one" => false,
        "many" => true,
        other => panic!("--hosts {other}: expected one or many"),
    };
    let mcp = Mcp::start(false).await;
    let refused = scanner_fixtures::closed_port().await;
    let mut ports = std::collections::BTreeMap::new();
    let mut entries = Vec::with_capacity(targets);
    for i in 0..targets {
        let ip = host_of(i, targets, many);
        let port = match ports.get(&ip) {
            Some(port) => *port,
            None => {
                let port = mcp.serve_on(IpAddr::V4(ip)).await.port();
                ports.insert(ip, port);
                port
            }
        };
        let base = format!("http://{ip}:{port}");
        let url = match i % 100 {
            0..85 => format!("{base}/mcp/ok/{i}"),
            85..95 => format!("{base}/mcp/slow/{i}"),
            95..98 => format!("{base}/mcp/hang/{i}"),
            _ => format!("http://{ip}:{refused}/mcp/{i}"),
        };
        entries.push(streamable(&format!("io.bench/server-{i}"), &url));
    }
    eprintln!(
        "scanner_fixtures: {targets} remotes on {} hosts",
        ports.len()
    );
    let registry = Registry::start().await;
    registry.set_entries(entries, 100);
    println!("{}", registry.url);
    std::future::pending::<()>().await;
}
