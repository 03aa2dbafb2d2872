//! ProxyCalls are written off the request path by one writer task per process, in
//! batches: a busy gateway commits many calls per transaction instead of queueing one
//! transaction per call on SQLite's single writer.

use std::sync::Mutex;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::db::gateway::calls::{insert_many, ProxyCall};
use crate::db::Db;

/// Calls waiting for the writer before senders start waiting too.
const QUEUE: usize = 65_536;
/// Most calls written in one transaction.
const BATCH: usize = 500;

/// The writer of one process.
#[derive(Default)]
pub struct Recorder {
    tx: Mutex<Option<mpsc::Sender<ProxyCall>>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Recorder {
    /// Queues `call` for storage in `db` (the writer starts on first use).
    pub fn record(&self, db: &Db, call: ProxyCall) {
        let tx = {
            let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
            match &*tx {
                Some(t) if !t.is_closed() => t.clone(),
                _ => {
                    let (t, rx) = mpsc::channel(QUEUE);
                    let Ok(rt) = tokio::runtime::Handle::try_current() else {
                        return;
                    };
                    *self.task.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(rt.spawn(write(db.clone(), rx)));
                    *tx = Some(t.clone());
                    t
                }
            }
        };
        if let Err(mpsc::error::TrySendError::Full(call)) = tx.try_send(call) {
            // Overloaded: wait for room rather than lose the call.
            tokio::spawn(async move {
                let _ = tx.send(call).await;
            });
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
