//! `lowdown-server-bench`: the numbers in the README.
//!
//! - `ingest --db URL [--records N] [--batch 100] [--clients 4] [--readers 0]`: records/s
//!   through `POST /api/interactions` over real HTTP on loopback into a fresh database,
//!   with the server in its own process so its CPU time per record is its own; beside it,
//!   in the same run, two baselines: the same requests to a server that parses and
//!   validates but stores nothing, and the same records stored through the storage layer
//!   without HTTP. `--readers N` adds N clients asking for a reputation answer one after
//!   another while the ingest runs, and prints their p50/p99.
//! - `query --db URL --records N [--requests 2000]`: seeds N records straight through the
//!   storage layer (no HTTP), then times `GET /api/reputation/{target}` over HTTP, plain
//!   and with a contributor node id, and prints p50/p99.
//! - `storage --db URL [--records N] [--days 10] [--retain 5]`: bytes on disk per record,
//!   before and after the retention job (see `storage.rs`).
//! - `serve --db URL --mode store|validate`: the server process `ingest` starts (prints its
//!   address, stops when its stdin closes).
//!
//! `--db` is `sqlite://PATH?mode=rwc` or a PostgreSQL URL; every run works in a scratch
//! database (a fresh file, or a fresh PostgreSQL database next to the one named) and
//! deletes it at the end.

// As in the server binary: ingest allocates many small strings per record.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod ingest;
mod query;
mod records;
mod scratch;
mod storage;

use anyhow::bail;

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_owned())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().collect();
    let url = arg(&args, "--db", "");
    if url.is_empty() {
        bail!("usage: lowdown-server-bench ingest|query|storage|serve --db URL [--records N] [--batch N] [--clients N] [--readers N] [--requests N] [--mode store|validate]");
    }
    let records: u64 = arg(&args, "--records", "200000").parse()?;
    match args.get(1).map(String::as_str) {
        Some("ingest") => {
            let load = ingest::Load {
                records,
                batch: arg(&args, "--batch", "100").parse()?,
                clients: arg(&args, "--clients", "4").parse()?,
                readers: arg(&args, "--readers", "0").parse()?,
            };
            ingest::run(&url, &load).await
        }
        Some("query") => query::run(&url, records, arg(&args, "--requests", "2000").parse()?).await,
        Some("storage") => {
            storage::run(
                &url,
                records,
                arg(&args, "--days", "10").parse()?,
                arg(&args, "--retain", "5").parse()?,
            )
            .await
        }
        Some("serve") => ingest::serve_child(&url, &arg(&args, "--mode", "store")).await,
        _ => bail!("first argument must be ingest, query, storage or serve"),
    }
}
