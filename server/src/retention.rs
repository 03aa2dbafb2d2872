//! `--retain-raw-days`: the periodic job that removes raw interaction rows older than the
//! retention period once the roll-ups count them (`db::retention`), and on PostgreSQL makes
//! the coming days' partitions.
//!
//! It runs at start and every [`JOB_EVERY`] under the [`RETENTION_LEASE`] lease, so with
//! several servers on one database one of them does the work; the holder renews the lease
//! between SQLite chunks and stops when it lost it. The time is the state's clock (tests
//! move it instead of waiting).

use std::time::Duration;

use crate::db::lease;
use crate::db::retention::{self, Removed};
use crate::error::AppResult;
use crate::state::AppState;

/// The lease the job runs under (one name per job, see `db::lease`).
pub const RETENTION_LEASE: &str = "retention";

/// Days raw rows are kept by default.
pub const DEFAULT_DAYS: u32 = 90;

/// How often the job runs.
pub const JOB_EVERY: Duration = Duration::from_secs(3600);

/// How long the lease lasts unless renewed (a chunk takes far less).
const LEASE_MS: i64 = 10 * 60_000;

/// PostgreSQL: days of partitions made ahead of today, so a day's first rows never wait
/// for the job (a missed day's rows go to the default partition, and are still removed).
pub const PARTITIONS_AHEAD: i64 = 3;

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Raw rows removed.
    pub rows: u64,
    /// PostgreSQL partitions dropped.
    pub dropped: Vec<String>,
    /// PostgreSQL partitions made.
    pub made: Vec<String>,
}

/// One run at the state's time: `None` when another server holds the lease.
pub async fn run_once(state: &AppState, days: u32, holder: &str) -> AppResult<Option<Report>> {
    let now = state.now();
    if lease::acquire(&state.db, RETENTION_LEASE, holder, now, LEASE_MS)
        .await?
        .is_err()
    {
        return Ok(None);
    }
    let result = work(state, days, holder, now).await;
    lease::release(&state.db, RETENTION_LEASE, holder).await?;
    result.map(Some)
}

async fn work(state: &AppState, days: u32, holder: &str, now: i64) -> AppResult<Report> {
    let mut report = Report {
        made: retention::prepare_partitions(&state.db, now, PARTITIONS_AHEAD).await?,
        ..Report::default()
    };
    let cutoff = now - i64::from(days) * DAY_MS;
    // SQLite: what was committed is rolled up first, since only rolled-up rows may go.
    state.db.roll_up().await?;
    loop {
        let Removed { rows, partitions } = retention::remove_before(&state.db, cutoff).await?;
        report.rows += rows;
        report.dropped.extend(partitions);
        // PostgreSQL removes everything in one call; SQLite a chunk per call.
        if rows == 0 || state.db.backend == crate::db::Backend::Postgres {
            break;
        }
        let renewed =
            lease::renew(&state.db, RETENTION_LEASE, holder, state.now() + LEASE_MS).await?;
        if !renewed {
            break;
        }
    }
    Ok(report)
}

/// Runs [`run_once`] now and every [`JOB_EVERY`] until the process ends.
pub async fn job(state: AppState, days: u32) {
    let holder = crate::db::random_id("srv_", 8).unwrap_or_else(|_| "srv".into());
    let mut tick = tokio::time::interval(JOB_EVERY);
    loop {
        tick.tick().await;
        match run_once(&state, days, &holder).await {
            Ok(Some(r)) if r.rows > 0 || !r.made.is_empty() => {
                tracing::info!(
                    rows = r.rows,
                    dropped = ?r.dropped,
                    made = ?r.made,
                    "retention: raw rows past --retain-raw-days removed"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "retention job failed; retrying at the next tick"),
        }
    }
}
