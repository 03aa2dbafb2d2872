//! `query`: reputation answer times over stored records.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use lowdown_core::record::validate::validate_records;
use lowdown_server::db::{ingest, Db};
use lowdown_server::{clock, AppState};
use serde_json::Value;

use crate::records::{body, first_node_id, sender, Spread, HOT};
use crate::scratch::Scratch;

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[idx].as_secs_f64() * 1000.0
}

/// Seeds `records` records (a third on the hot target, the rest over every target, spread
/// over the last 60 days) through the storage layer, then times `requests` reputation
/// requests for the hot target, plain and as a contributor.
pub async fn run(url: &str, records: u64, requests: usize) -> anyhow::Result<()> {
    let scratch = Scratch::create(url).await?;
    let db = Db::open(&scratch.url, 16).await?;
    let seed_start = Instant::now();
    let chunk = 5_000;
    let now = clock::now_ms();
    let mut seq = 0;
    while seq < records {
        let n = chunk.min(records - seq);
        let day = (seq / n.max(1)) as i64 % 60;
        for b in (seq / 1000)..(seq + n).div_ceil(1000) {
            let recs = validate_records(&body(b, 1000, "seed", Spread::HotThird))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let from = sender(&db, b, &recs);
            ingest::store_interactions(&db, recs, from, now - day * 86_400_000)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        seq += n;
    }
    let seed_secs = seed_start.elapsed().as_secs_f64();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(lowdown_server::serve(
        listener,
        AppState::new(db.clone(), "bench"),
        async move {
            let _ = stopped.await;
        },
    ));
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/api/reputation/{}", HOT.replace('/', "%2F"));
    let check: Value = client.get(&url).send().await?.json().await?;
    let hot = check["interactions"]
        .as_u64()
        .context("no interactions in answer")?;
    let contributor = first_node_id();
    for (label, node) in [("plain", None), ("contributor", Some(contributor.as_str()))] {
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
    server.await??;
    db.close().await;
    scratch.delete().await
}
