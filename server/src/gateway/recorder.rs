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
/// Refused calls one process stores in an hour, from every network together.
const REFUSED_TOTAL_PER_HOUR: u32 = 60_000;

/// What refused calls one process may still store this hour.
#[derive(Debug, Default)]
struct RefusalBudget {
    hour: i64,
    total: u32,
    per_network: HashMap<Option<String>, u32>,
}

impl RefusalBudget {
    /// Takes one from the budget of `network` at unix ms `at`; `false` past
    /// [`REFUSED_PER_HOUR`] for that network, [`REFUSED_TOTAL_PER_HOUR`] in all, or a new
    /// network once [`REFUSED_NETWORKS`] are counted (memory stays bounded).
    fn admit(&mut self, at: i64, network: &Option<String>) -> bool {
        let hour = at.div_euclid(3_600_000);
        if self.hour != hour {
            *self = RefusalBudget {
                hour,
                ..RefusalBudget::default()
            };
        }
        if self.total >= REFUSED_TOTAL_PER_HOUR {
            return false;
        }
        if !self.per_network.contains_key(network) && self.per_network.len() >= REFUSED_NETWORKS {
            return false;
        }
        let n = self.per_network.entry(network.clone()).or_insert(0);
        if *n >= REFUSED_PER_HOUR {
            return false;
        }
        *n += 1;
        self.total += 1;
        true
    }
}

/// The writer of one process.
#[derive(Default)]
pub struct Recorder {
    tx: Mutex<Option<mpsc::Sender<ProxyCall>>>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// What refused calls may still be stored this hour.
    refused: Mutex<RefusalBudget>,
}

impl Recorder {
    /// Queues a refused `call` for storage, within this hour's [`RefusalBudget`]; dropped
    /// past it or when the queue is full.
    pub fn record_refused(&self, db: &Db, call: ProxyCall) {
        let admitted = self
            .refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .admit(call.at, &call.network);
        if !admitted {
            return;
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

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000;

    #[test]
    fn a_network_stores_its_share_an_hour_and_a_new_hour_starts_afresh() {
        let mut b = RefusalBudget::default();
        let net = Some("n1".to_owned());
        let taken = (0..REFUSED_PER_HOUR + 10)
            .filter(|_| b.admit(5, &net))
            .count();
        assert_eq!(taken, REFUSED_PER_HOUR as usize);
        assert!(
            b.admit(5, &None),
            "another network, the unknown one included, has its own"
        );
        assert!(b.admit(HOUR + 1, &net), "the next hour");
    }

    #[test]
    fn many_networks_keep_the_memory_and_the_total_bounded() {
        let mut b = RefusalBudget::default();
        let stored = (0..REFUSED_NETWORKS + 500)
            .filter(|i| b.admit(7, &Some(format!("n{i}"))))
            .count();
        assert_eq!(
            stored, REFUSED_NETWORKS,
            "new networks past the bound store nothing"
        );
        assert_eq!(
            b.per_network.len(),
            REFUSED_NETWORKS,
            "and are not remembered"
        );
        for i in 0..REFUSED_NETWORKS {
            let _ = (0..REFUSED_PER_HOUR)
                .map(|_| b.admit(7, &Some(format!("n{i}"))))
                .count();
        }
        assert_eq!(
            b.total, REFUSED_TOTAL_PER_HOUR,
            "every network together stops at the total"
        );
    }
}
