//! `lowdown-server-bench`: the numbers in the README.
//!
//! - `ingest --db URL [--records N] [--batch 100] [--clients 4]`: records/s through
//!   `POST /api/interactions` over real HTTP on loopback, into a fresh database.
//! - `query --db URL --records N [--requests 2000]`: seeds N records straight through the
//!   storage layer (no HTTP), then times `GET /api/reputation/{target}` over HTTP, plain
//!   and with a contributor node id, and prints p50/p99.
//!
//! `--db` may be `sqlite://PATH?mode=rwc` or a PostgreSQL URL of a database to create
//! (it is created fresh and dropped at the end).

// Ingest allocates many small strings per record on several threads; mimalloc spends
// far less time in them than the system allocator (a third of ingest CPU in profiles).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use lowdown_core::record::validate::validate_records;
use lowdown_server::db::{ingest, Db};
use lowdown_server::{clock, AppState};
use serde_json::{json, Value};

const TARGETS: usize = 200;
const HOT: &str = "npm:@bench/server-0";

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_owned())
}

/// One synthetic-looking (but `organic`-sourced, so it is rated) record; ~1/3 of records
/// go to the hot target so its rollups hold a third of everything.
fn record(seq: u64, run: &str) -> Value {
    let target = if seq.is_multiple_of(3) {
        0
    } else {
        (seq as usize * 7919) % TARGETS
    };
    let outcome = match seq % 20 {
        0 => "failure",
        1 => "partial",
        _ => "success",
    };
    let mut r = json!({
        "record_id": format!("{run}-{seq}"),
        "actor": "agent:bench",
        "target": format!("npm:@bench/server-{target}"),
        "target_type": "tool",
        "task_type": format!("tool_{}", seq % 12),
        "outcome": outcome,
        "latency_ms": (seq % 900) as f64 + 0.5,
        "node_id": format!("ld_bench{:04}", seq % 500),
        "server_version": format!("1.{}.0", seq % 4),
        "recorder_version": "0.1.0",
    });
    if outcome == "failure" {
        r["failure_type"] = json!("timeout");
        r["error_layer"] = json!("server");
    }
    r
}

async fn fresh_db(url: &str) -> anyhow::Result<(Db, Option<(String, String)>)> {
    if url.starts_with("postgres") {
        sqlx::any::install_default_drivers();
        let mut suffix = [0u8; 4];
        getrandom::fill(&mut suffix).map_err(|e| anyhow::anyhow!("{e}"))?;
        let name = format!("lowdown_bench_{}", hex::encode(suffix));
        let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(url).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await?;
        let root = url.rsplit_once('/').map_or(url, |(r, _)| r);
        let db_url = format!("{root}/{name}");
        Ok((Db::open(&db_url, 16).await?, Some((url.to_owned(), name))))
    } else {
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .and_then(|p| p.split('?').next())
        {
            for ext in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{ext}"));
            }
        }
        Ok((Db::open(url, 16).await?, None))
    }
}

async fn drop_db(db: Db, pg: Option<(String, String)>) -> anyhow::Result<()> {
    db.close().await;
    if let Some((admin, name)) = pg {
        let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
        )))
        .execute(&mut conn)
        .await?;
    }
    Ok(())
}

async fn serve(db: Db) -> anyhow::Result<(String, tokio::sync::oneshot::Sender<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(lowdown_server::serve(
        listener,
        AppState::new(db, "bench"),
        async move {
            let _ = rx.await;
        },
    ));
    Ok((format!("http://{addr}"), tx))
}

async fn ingest(url: &str, records: u64, batch: u64, clients: u64) -> anyhow::Result<()> {
    let (db, pg) = fresh_db(url).await?;
    let (base, stop) = serve(db.clone()).await?;
    let client = reqwest::Client::new();
    let batches = records / batch;
    // Bodies are built before the clock starts: the number is the server's, not serde's.
    let bodies: Vec<String> = (0..batches)
        .map(|b| {
            Value::Array(
                (0..batch)
                    .map(|i| record(b * batch + i, "ingest"))
                    .collect(),
            )
            .to_string()
        })
        .collect();
    let bodies = std::sync::Arc::new(bodies);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = vec![];
    for _ in 0..clients {
        let (client, bodies, next, url) = (
            client.clone(),
            bodies.clone(),
            next.clone(),
            format!("{base}/api/interactions"),
        );
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(body) = bodies.get(i) else {
                    return Ok::<_, anyhow::Error>(());
                };
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await?;
                if r.status() != 201 {
                    bail!("ingest answered {}", r.status());
                }
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    let secs = start.elapsed().as_secs_f64();
    let stored: i64 = sqlx::Row::try_get(
        &sqlx::query("SELECT COUNT(*) FROM interactions")
            .fetch_one(&db.pool)
            .await?,
        0,
    )?;
    println!(
        "ingest backend={:?} records={stored} batch={batch} clients={clients} seconds={secs:.2} records_per_sec={:.0}",
        db.backend,
        stored as f64 / secs
    );
    let _ = stop.send(());
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop_db(db, pg).await
}

/// Storage alone, no HTTP: validation and store times per batch, sequentially.
async fn store(url: &str, records: u64, batch: u64) -> anyhow::Result<()> {
    let (db, pg) = fresh_db(url).await?;
    let (mut t_parse, mut t_validate, mut t_store) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for b in 0..records / batch {
        let text =
            Value::Array((0..batch).map(|i| record(b * batch + i, "store")).collect()).to_string();
        let t = Instant::now();
        let body: Value = serde_json::from_str(&text)?;
        t_parse += t.elapsed();
        let t = Instant::now();
        let recs = validate_records(&body).map_err(|e| anyhow::anyhow!("{e}"))?;
        t_validate += t.elapsed();
        let t = Instant::now();
        ingest::store_interactions(&db, recs, clock::now_ms())
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        t_store += t.elapsed();
    }
    let per = |d: Duration| records as f64 / d.as_secs_f64();
    println!(
        "store backend={:?} records={records} batch={batch} parse_rps={:.0} validate_rps={:.0} store_rps={:.0}",
        db.backend,
        per(t_parse),
        per(t_validate),
        per(t_store)
    );
    drop_db(db, pg).await
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[idx].as_secs_f64() * 1000.0
}

async fn query(url: &str, records: u64, requests: usize) -> anyhow::Result<()> {
    let (db, pg) = fresh_db(url).await?;
    let seed_start = Instant::now();
    let chunk = 5_000;
    let now = clock::now_ms();
    let mut seq = 0;
    while seq < records {
        let n = chunk.min(records - seq);
        let mut recs = Vec::with_capacity(n as usize);
        for start in (seq..seq + n).step_by(1000) {
            let body = Value::Array(
                (start..(start + 1000).min(seq + n))
                    .map(|i| record(i, "seed"))
                    .collect(),
            );
            recs.extend(validate_records(&body).map_err(|e| anyhow::anyhow!("{e}"))?);
        }
        // Spread the records over the last 60 days so trends and day rollups are realistic.
        let day = (seq / n.max(1)) as i64 % 60;
        ingest::store_interactions(&db, recs, now - day * 86_400_000)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        seq += n;
    }
    let seed_secs = seed_start.elapsed().as_secs_f64();
    let (base, stop) = serve(db.clone()).await?;
    let client = reqwest::Client::new();
    let url = format!("{base}/api/reputation/{}", HOT.replace('/', "%2F"));
    let check: Value = client.get(&url).send().await?.json().await?;
    let hot = check["interactions"]
        .as_u64()
        .context("no interactions in answer")?;
    for (label, node) in [("plain", None), ("contributor", Some("ld_bench0001"))] {
        let mut times = Vec::with_capacity(requests);
        for i in 0..requests + 50 {
            let mut req = client.get(&url);
            if let Some(n) = node {
                req = req.header("x-lowdown-node-id", n);
            }
            let t = Instant::now();
            let r = req.send().await?;
            let status = r.status();
            let _ = r.bytes().await?;
            if status != 200 {
                bail!("reputation answered {status}");
            }
            if i >= 50 {
                times.push(t.elapsed());
            }
        }
        times.sort();
        println!(
            "query backend={:?} stored={records} hot_target_records={hot} kind={label} requests={requests} p50_ms={:.3} p99_ms={:.3} seed_seconds={seed_secs:.1}",
            db.backend,
            pct(&times, 0.50),
            pct(&times, 0.99)
        );
    }
    let _ = stop.send(());
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop_db(db, pg).await
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
        bail!("usage: lowdown-server-bench ingest|query --db URL [--records N] [--batch N] [--clients N] [--requests N]");
    }
    let records: u64 = arg(&args, "--records", "200000").parse()?;
    match args.get(1).map(String::as_str) {
        Some("ingest") => {
            ingest(
                &url,
                records,
                arg(&args, "--batch", "100").parse()?,
                arg(&args, "--clients", "4").parse()?,
            )
            .await
        }
        Some("store") => store(&url, records, arg(&args, "--batch", "100").parse()?).await,
        Some("query") => query(&url, records, arg(&args, "--requests", "2000").parse()?).await,
        _ => bail!("first argument must be ingest or query"),
    }
}
