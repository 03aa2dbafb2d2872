//! ProxyCalls are written off the request path by one writer task per process, in
//! batches: a busy gateway commits many calls per transaction instead of queueing one
//! transaction per call on SQLite's single writer. Refused calls are stored within a budget
//! per network and hour, and dropped rather than waited for when the queue is full: a flood
//! of refused requests costs the database a bounded number of rows.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::db::gateway::calls::{insert_many, ProxyCall};
use crate::db::Db;

/// Calls waiting for the writer before senders start waiting too.
const QUEUE: usize = 65_536;
/// Most calls written in one transaction.
const BATCH: usize = 500;
/// Refused calls stored per network (or per unknown network) and hour, in each process.
pub const REFUSED_PER_HOUR: u32 = 600;
/// Networks whose refusals one process counts in an hour; past it, refusals from new
/// networks are not stored that hour.
const REFUSED_NETWORKS: usize = 10_000;

/// The writer of one process.
#[derive(Default)]
pub struct Recorder {
    tx: Mutex<Option<mpsc::Sender<ProxyCall>>>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// The hour counted, and the refused calls stored per network in it.
    refused: Mutex<(i64, HashMap<Option<String>, u32>)>,
}

impl Recorder {
    /// Queues a refused `call` for storage, within [`REFUSED_PER_HOUR`] per network; dropped
    /// past it or when the queue is full.
    pub fn record_refused(&self, db: &Db, call: ProxyCall) {
        {
            let mut counted = self.refused.lock().unwrap_or_else(|e| e.into_inner());
            let hour = call.at.div_euclid(3_600_000);
            if counted.0 != hour {
                *counted = (hour, HashMap::new());
            }
            let room = counted.1.len() < REFUSED_NETWORKS || counted.1.contains_key(&call.network);
            let n = counted.1.entry(call.network.clone()).or_insert(0);
            if !room || *n >= REFUSED_PER_HOUR {
                return;
            }
            *n += 1;
        }
        if let Some(tx) = self.sender(db) {
            let _ = tx.try_send(call);
        }
    }

    /// Queues `call` for storage in `db` (the writer starts on first use).
    pub fn record(&self, db: &Db, call: ProxyCall) {
        let Some(tx) = self.sender(db) else { return };
        if let Err(mpsc::error::TrySendError::Full(call)) = tx.try_send(call) {
            // Overloaded: wait for room rather than lose the call.
            tokio::spawn(async move {
                let _ = tx.send(call).await;
            });
        }
    }

    /// The writer's queue (the writer starts on first use); `None` outside a runtime.
    fn sender(&self, db: &Db) -> Option<mpsc::Sender<ProxyCall>> {
        let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        match &*tx {
            Some(t) if !t.is_closed() => Some(t.clone()),
            _ => {
                let (t, rx) = mpsc::channel(QUEUE);
                let rt = tokio::runtime::Handle::try_current().ok()?;
                *self.task.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(rt.spawn(write(db.clone(), rx)));
                *tx = Some(t.clone());
                Some(t)
            }
        }
    }

    /// Stops taking calls and waits until every queued one is stored (shutdown).
    pub async fn flush(&self) {
        drop(self.tx.lock().unwrap_or_else(|e| e.into_inner()).take());
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = task {
            let _ = t.await;
        }
    }
}

async fn write(db: Db, mut rx: mpsc::Receiver<ProxyCall>) {
    let mut batch = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        if let Err(e) = insert_many(&db, std::mem::take(&mut batch)).await {
            tracing::error!(error = %e, "cannot store ProxyCalls");
        }
    }
}
