//! The records the benchmarks send: spread the way a busy network's are, so every batch
//! touches about as many rollup rows as it has records.

use serde_json::{json, Value};

/// Distinct targets.
pub const TARGETS: u64 = 1_000;
/// Distinct tools per target.
pub const TASKS: u64 = 20;
/// Distinct server versions (each with its own tool-schema hash) per target.
pub const VERSIONS: u64 = 4;
/// Distinct nodes. Each batch comes from one node, as a proxy sends its own records, and
/// record ids start with the node's prefix, as proxies make them.
pub const NODES: u64 = 500;
/// Client networks the load comes from. Each node sends from one of them, as `127.N.0.1`
/// (every 127/8 address reaches loopback on Linux), so records arrive the way an honest
/// busy network's do: from many networks, none past its daily cap on a target.
pub const NETWORKS: u64 = 100;
/// The target the query benchmark asks about.
pub const HOT: &str = "npm:@bench/server-0";

/// How records are spread over targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Uniformly over every target (ingest: the most rollup rows per batch).
    Even,
    /// A third to [`HOT`], the rest uniformly (queries: one target holds a third of all).
    HotThird,
}

/// splitmix64: a fixed, well-mixed sequence, so runs are repeatable.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Record number `seq` of run `run` (`run` keeps record ids of different runs apart), sent
/// by node `node`. Organic-sourced, so it is rated; 1 in 20 fails, 1 in 20 is partial.
pub fn record(seq: u64, node: u64, run: &str, spread: Spread) -> Value {
    let h = mix(seq);
    let target = match spread {
        Spread::HotThird if seq.is_multiple_of(3) => 0,
        _ => h % TARGETS,
    };
    let task = (h >> 12) % TASKS;
    let version = (h >> 20) % VERSIONS;
    let outcome = match seq % 20 {
        0 => "failure",
        1 => "partial",
        _ => "success",
    };
    let schema = format!("{:016x}", mix(target * VERSIONS + version)).repeat(4);
    let mut r = json!({
        "record_id": format!("{:08x}-{run}-{seq}", mix(node) as u32),
        "actor": "agent:bench",
        "target": format!("npm:@bench/server-{target}"),
        "target_type": "tool",
        "task_type": format!("tool_{task}"),
        "request_kind": "tool",
        "outcome": outcome,
        "latency_ms": (h >> 40) as f64 % 900.0 + 0.5,
        "node_id": node_id(node),
        "server_version": format!("1.{version}.0"),
        "schema_hash": schema,
        "protocol_version": "2025-06-18",
        "recorder_version": "0.1.0",
    });
    if outcome == "failure" {
        r["failure_type"] = json!("timeout");
        r["error_layer"] = json!("server");
    }
    r
}

/// The node that sends batch `b`.
fn batch_node(b: u64) -> u64 {
    mix(b ^ 0x6e6f_6465) % NODES
}

/// The node id of batch 0's sender (a node that has contributed).
pub fn first_node_id() -> String {
    node_id(batch_node(0))
}

fn node_id(node: u64) -> String {
    format!("ld_bench{node:04}")
}

/// The network batch `b` comes from: its node's.
pub fn batch_network(b: u64) -> u64 {
    batch_node(b) % NETWORKS
}

/// The address of network `n`, `127.(n+1).0.1`.
pub fn network_addr(n: u64) -> std::net::IpAddr {
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 1 + n as u8, 0, 1))
}

/// The address batch `b` is sent from.
pub fn batch_addr(b: u64) -> std::net::IpAddr {
    network_addr(batch_network(b))
}

/// Who sends batch `b` of `records` when they are stored without HTTP: its network and
/// the quotas of its node and network, as the route would draw on them.
pub fn sender(
    db: &lowdown_server::db::Db,
    b: u64,
    records: &[lowdown_core::record::InteractionRecord],
) -> lowdown_server::db::ingest::Sender {
    use lowdown_server::db::quota::{Draws, Limits, Quota};
    let (secret, limits, ip) = (db.caller_secret(), Limits::default(), batch_addr(b));
    let mut draws = Draws::default();
    let net = draws.quota(Quota::network_records(secret, &limits, Some(ip)));
    for r in records {
        let mut item = vec![net];
        if let Some(node) = &r.node_id {
            item.push(draws.quota(Quota::node_records(secret, &limits, node)));
        }
        draws.item(item);
    }
    lowdown_server::db::ingest::Sender {
        network: Some(lowdown_server::caller::network_id(secret, ip)),
        agent_id: None,
        trusted: false,
        draws,
    }
}

/// Batch `b` of `size` records as a JSON body, from one node.
pub fn body(b: u64, size: u64, run: &str, spread: Spread) -> Value {
    let node = batch_node(b);
    Value::Array(
        (b * size..(b + 1) * size)
            .map(|seq| record(seq, node, run, spread))
            .collect(),
    )
}
