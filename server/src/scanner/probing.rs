//! Probing a run's remotes: the core's [`Dispatch`] says which probe may start (a total and
//! a per-host limit), this module starts them and stores what finishes through one writer.
//!
//! At most `total` probe tasks and a bounded queue of finished observations exist at any
//! time, so memory does not grow with the number of remotes beyond the job list itself.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use lowdown_core::scanner::dispatch::Dispatch;
use lowdown_core::scanner::{Observation, ToolDefinition};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::http;
use super::net::Net;
use super::progress::Progress;
use super::run::{Clock, ScanConfig, ScanError};
use crate::db::lease::Fence;
use crate::db::scanner as store;
use crate::db::Db;
use crate::names::enum_str;

type Finished = (Observation, Vec<ToolDefinition>);

/// What the stored observations add up to.
#[derive(Debug, Default)]
pub struct Tally {
    /// Observations stored.
    pub probed: usize,
    /// Observations per reached level.
    pub by_level: BTreeMap<String, u64>,
    /// Observations per error type.
    pub by_error_type: BTreeMap<String, u64>,
}

/// Probes every remote of `jobs` (`(target, url)`) under `cfg.limits`, storing each
/// observation as it finishes while `fence` holds; stops starting new probes once `lost`
/// is set (by the keepalive, or by the writer finding the lease gone) or the writer failed.
#[allow(clippy::too_many_arguments)] // one run's parts, each used once; a struct would only rename them
pub async fn probe_all(
    db: &Db,
    cfg: &ScanConfig,
    net: &Net,
    run: (&str, &str),
    jobs: Vec<(String, String)>,
    progress: &Arc<Progress>,
    fence: Fence,
    lost: &Arc<AtomicBool>,
) -> Result<Tally, ScanError> {
    let (run_id, day) = run;
    let mut dispatch = Dispatch::new(jobs, cfg.limits);
    let (tx, rx) = mpsc::channel::<Finished>(cfg.limits.total.max(1) * 2);
    let writer = tokio::spawn(write_all(
        db.clone(),
        (day.to_owned(), fence, lost.clone()),
        cfg.clock.clone(),
        rx,
    ));
    let mut probes = JoinSet::new();
    // The host of each running task, so a slot is given back even if a probe panics.
    let mut hosts = HashMap::new();
    loop {
        if !lost.load(Ordering::Relaxed) && !writer.is_finished() {
            while let Some(start) = dispatch.start_next() {
                let (net, tx, clock) = (net.clone(), tx.clone(), cfg.clock.clone());
                let (run_id, modern, progress) = (run_id.to_owned(), cfg.modern, progress.clone());
                let task = probes.spawn(async move {
                    let result = http::probe(&net, &start.url, modern).await;
                    let finished =
                        result.into_observation(&run_id, &start.target, &start.url, clock());
                    progress.probed();
                    let _ = tx.send(finished).await;
                });
                hosts.insert(task.id(), start.host);
            }
        }
        progress.in_flight(dispatch.running(), dispatch.hosts());
        let Some(ended) = probes.join_next_with_id().await else {
            break;
        };
        let id = ended.map_or_else(|e| e.id(), |(id, ())| id);
        if let Some(host) = hosts.remove(&id) {
            dispatch.finished(&host);
        }
    }
    drop(tx);
    writer
        .await
        .map_err(|e| ScanError::Storage(e.to_string()))?
}

/// Stores observations as they arrive, batching whatever is already queued (up to 64),
/// until the lease is found lost (then `lost` is set and nothing more is written).
async fn write_all(
    db: Db,
    (day, fence, lost): (String, Fence, Arc<AtomicBool>),
    clock: Clock,
    mut rx: mpsc::Receiver<Finished>,
) -> Result<Tally, ScanError> {
    let mut next_id = store::next_observation_id(&db).await?;
    let mut tally = Tally::default();
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < 64 {
            match rx.try_recv() {
                Ok(f) => batch.push(f),
                Err(_) => break,
            }
        }
        let n = batch.len() as i64;
        let counted: Vec<_> = batch
            .iter()
            .map(|(o, _)| (o.reached_level, o.error_type))
            .collect();
        if !store::write_observations(&db, fence.clone(), next_id, &day, clock(), batch).await? {
            lost.store(true, Ordering::Relaxed);
            break;
        }
        next_id += n;
        for (level, error) in counted {
            tally.probed += 1;
            *tally.by_level.entry(level.to_string()).or_default() += 1;
            if let Some(e) = &error {
                *tally.by_error_type.entry(enum_str(e)).or_default() += 1;
            }
        }
    }
    Ok(tally)
}
