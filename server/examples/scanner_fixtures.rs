//! Fixtures for `make bench-scanner`: a Registry with N entries whose remotes are fixture MCP
//! servers on 127.0.0.1, 85 % answering at once, 10 % answering `initialize` after 1 s, 3 %
//! hanging and 2 % refusing connections (assigned by index, so every run is the same).
//! Prints the Registry URL on stdout, then serves until killed.
//!
//! `cargo run --release -p lowdown-server --example scanner_fixtures -- --targets 5000`

#[path = "../tests/it/scanner_fixtures/mod.rs"]
mod scanner_fixtures;

use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{streamable, Registry};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let targets: usize = args
        .iter()
        .position(|a| a == "--targets")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5_000);
    let mcp = Mcp::start(false).await;
    let refused = scanner_fixtures::closed_port().await;
    let entries = (0..targets)
        .map(|i| {
            let url = match i % 100 {
                0..85 => mcp.url("ok", &i.to_string()),
                85..95 => mcp.url("slow", &i.to_string()),
                95..98 => mcp.url("hang", &i.to_string()),
                _ => format!("http://127.0.0.1:{refused}/mcp/{i}"),
            };
            streamable(&format!("io.bench/server-{i}"), &url)
        })
        .collect();
    let registry = Registry::start().await;
    registry.set_entries(entries, 100);
    println!("{}", registry.url);
    std::future::pending::<()>().await;
}
