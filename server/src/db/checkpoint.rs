//! SQLite WAL checkpoints, run from a connection of their own.
//!
//! A commit appends every page it changed to the WAL; a checkpoint copies the newest copy
//! of each page back into the database file and syncs both files. Left to SQLite, the
//! connection whose commit crosses the threshold runs the checkpoint itself, and under
//! ingest that is always the one writer: every few commits it stopped to copy tens of
//! megabytes and wait for the disk. Here a background task checkpoints every
//! [`EVERY`] instead (`PASSIVE`: it never blocks the writer or readers), on a pooled
//! connection whose worker thread is not the writer's, and pages rewritten many times in
//! that interval (the hot rollup rows) are copied once.
//!
//! Durability is SQLite's `synchronous = NORMAL` in WAL mode, as before: a committed batch
//! survives a crash of the server process; an OS crash or power loss can lose what was
//! committed since the WAL was last synced, which happens at every checkpoint (so about
//! the last [`EVERY`] of batches), and never corrupts the database.

use std::time::Duration;

use sqlx::AnyPool;

/// How often the background task checkpoints.
pub(crate) const EVERY: Duration = Duration::from_millis(500);

/// WAL pages after which a connection checkpoints on its own after committing: only
/// reached when the background task falls far behind (256 MiB of WAL).
pub(crate) const FALLBACK_PAGES: u32 = 65_536;

/// Largest WAL file kept on disk once a checkpoint let it start over (64 MiB).
pub(crate) const WAL_KEPT_BYTES: u64 = 64 * 1024 * 1024;

/// The background task; stopped by [`Checkpointer::stop`] or when dropped.
pub(crate) struct Checkpointer(tokio::task::JoinHandle<()>);

impl Checkpointer {
    /// Starts checkpointing `pool`'s database every [`EVERY`].
    pub(crate) fn start(pool: AnyPool) -> Checkpointer {
        Checkpointer(tokio::spawn(async move {
            let mut tick = tokio::time::interval(EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if pool.is_closed() {
                    return;
                }
                if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                    .execute(&pool)
                    .await
                {
                    // The next tick tries again; meanwhile commits checkpoint on their own
                    // past FALLBACK_PAGES.
                    tracing::warn!(error = %e, "WAL checkpoint failed");
                }
            }
        }))
    }

    /// Stops the task (a checkpoint under way is abandoned; SQLite resumes it next time).
    pub(crate) fn stop(&self) {
        self.0.abort();
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}
