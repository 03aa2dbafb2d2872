//! `serve --scan-at HH:MM`: the daily scan inside the server, once a day however many
//! servers share the database.
//!
//! At HH:MM UTC every day each server tries to run the day's scan. Whether the day still
//! needs it is decided under the `scan` lease ([`run_daily`]): a day whose scan already ran
//! (another server, or a manual `lowdown-server scan`) is skipped. A server that finds the
//! lease held tries again within [`HELD_RETRY_MS`] (sooner when the lease ends sooner)
//! until the day is done, so when the holder dies mid-run the next server to try after its
//! lease ran out takes the run over and resumes it (the lease row names the run); a server
//! that starts after HH:MM on a day whose run was left unfinished tries at once. A database
//! that cannot be used is tried again every minute that day; any other failure is logged
//! and the schedule goes on to the next day.
//!
//! With `--publish DIR`, every attempt that finds the day's scan done (it ran here, or
//! another server or a manual `scan` ran it) publishes the dataset ([`publish_after`]);
//! the bytes depend on the database only, so every server publishing gets the same
//! commits, and a publish that fails is logged and changes nothing else.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use lowdown_core::scanner::days::{day_of, DAY_MS};

use super::{run_daily, ScanConfig, ScanError, Summary};
use crate::db::lease::{self, SCAN_LEASE};
use crate::db::Db;
use crate::publish::{PublishError, Published};

/// A time of day, UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanAt {
    /// 0-23.
    pub hour: u32,
    /// 0-59.
    pub minute: u32,
}

impl FromStr for ScanAt {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?}: expected HH:MM (UTC), e.g. 06:30");
        let (h, m) = s.split_once(':').ok_or_else(bad)?;
        if h.len() != 2 || m.len() != 2 {
            return Err(bad());
        }
        let (hour, minute): (u32, u32) =
            (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
        if hour > 23 || minute > 59 {
            return Err(bad());
        }
        Ok(ScanAt { hour, minute })
    }
}

impl ScanAt {
    /// The first HH:MM strictly after `now_ms` (unix ms).
    pub fn next_after(&self, now_ms: i64) -> i64 {
        let offset = i64::from(self.hour * 3600 + self.minute * 60) * 1000;
        let today = now_ms.div_euclid(DAY_MS) * DAY_MS + offset;
        if today > now_ms {
            today
        } else {
            today + DAY_MS
        }
    }
}

/// What one scheduled attempt did.
#[derive(Debug)]
pub enum Attempt {
    /// This server ran (or resumed) the day's scan.
    Ran(Box<Summary>),
    /// The day's scan already ran.
    Done,
    /// Another server holds the lease until then (unix ms); worth trying again after.
    Held(i64),
    /// The database could not be used (logged): worth trying again the same day.
    Unavailable,
    /// The attempt failed for a reason a retry would meet again (logged).
    Failed,
}

/// One scheduled attempt at `day`'s scan.
pub async fn attempt(db: &Db, cfg: &ScanConfig, day: &str) -> Attempt {
    match run_daily(db, cfg, day).await {
        Ok(summary) => {
            tracing::info!(
                summary = %serde_json::to_string(&summary).unwrap_or_default(),
                "scan finished"
            );
            Attempt::Ran(Box::new(summary))
        }
        Err(ScanError::DayDone { .. }) => {
            tracing::info!(%day, "scan: the day's scan already ran; skipping");
            Attempt::Done
        }
        Err(e @ ScanError::LeaseHeld { .. }) => {
            tracing::info!(error = %e, "scan: another server is scanning; trying again until the day is done");
            match lease::peek(db, SCAN_LEASE, crate::clock::now_ms()).await {
                Ok((_, Some(held))) => Attempt::Held(held.expires_at),
                // Released since: try again at once (the next try decides).
                Ok((_, None)) => Attempt::Held(crate::clock::now_ms()),
                Err(e) => {
                    tracing::error!(error = %e, "scan: cannot read the lease");
                    Attempt::Unavailable
                }
            }
        }
        Err(e @ ScanError::Storage(_)) => {
            tracing::error!(error = %e, "scan: did not run; trying again in a minute");
            Attempt::Unavailable
        }
        Err(e) => {
            tracing::error!(error = %e, "scan: did not run");
            Attempt::Failed
        }
    }
}

/// One scheduled attempt at today's scan; the summary of a run that happened.
pub async fn run_scheduled(db: &Db, cfg: &ScanConfig) -> Option<Summary> {
    match attempt(db, cfg, &day_of((cfg.clock)())).await {
        Attempt::Ran(summary) => Some(*summary),
        _ => None,
    }
}

/// When the next attempt is due at `now`: now, when today's run was left unfinished after
/// HH:MM (its server died); else the next HH:MM.
async fn first_attempt(db: &Db, at: ScanAt, now: i64) -> i64 {
    let today = day_of(now);
    let due_today = at.next_after(now) - DAY_MS;
    match lease::peek(db, SCAN_LEASE, now).await {
        Ok((left, _)) if now >= due_today && left.unfinished(&today).is_some() => now,
        _ => at.next_after(now),
    }
}

/// How soon a server that found the lease held tries again at most: soon enough that it
/// sees the day done (or takes over a run whose holder died) shortly after, and one upsert
/// per try, so cheap while a scan runs for minutes.
pub const HELD_RETRY_MS: i64 = 15_000;

/// How long a server waits before trying again when the database could not be used.
pub const UNAVAILABLE_RETRY_MS: i64 = 60_000;

/// When to try again after `attempt` at `now`: a second after a held lease ends, or after
/// [`HELD_RETRY_MS`] if sooner; [`UNAVAILABLE_RETRY_MS`] after the database failed; else at
/// the next HH:MM.
pub fn next_attempt(at: ScanAt, attempt: &Attempt, now: i64) -> i64 {
    match attempt {
        Attempt::Held(until) => (*until).clamp(now, now + HELD_RETRY_MS) + 1_000,
        Attempt::Unavailable => now + UNAVAILABLE_RETRY_MS,
        _ => at.next_after(now),
    }
}

/// Whether the next attempt is for the same day (a retry), not the next day's run.
fn retries(attempt: &Attempt) -> bool {
    matches!(attempt, Attempt::Held(_) | Attempt::Unavailable)
}

/// Where `serve --publish DIR` publishes the dataset, and as which deployment.
#[derive(Debug, Clone)]
pub struct PublishTo {
    /// The git repository (the Hugging Face layout goes in its `huggingface/`).
    pub dir: PathBuf,
    /// The deployment name (`--name`).
    pub deployment: String,
}

/// After `attempt`: when the day's scan is done (this server ran it, or it had run),
/// publishes the dataset into `to` and logs what happened; `None` when the day is not
/// done. The publish runs as a task of its own, so even a panic in it is only logged.
pub async fn publish_after(
    db: &Db,
    attempt: &Attempt,
    to: &PublishTo,
) -> Option<Result<Published, PublishError>> {
    if !matches!(attempt, Attempt::Ran(_) | Attempt::Done) {
        return None;
    }
    let (db, to) = (db.clone(), to.clone());
    let done =
        tokio::spawn(async move { crate::publish::publish(&db, &to.dir, &to.deployment).await })
            .await
            .unwrap_or_else(|e| Err(PublishError::Task(e.to_string())));
    match &done {
        Ok(p) => {
            tracing::info!(day = %p.day, action = ?p.action, commit = %p.commit, "dataset published")
        }
        Err(e) => {
            tracing::error!(error = %e, "dataset not published; the scan and the server go on")
        }
    }
    Some(done)
}

/// Runs [`attempt`] every day at `at`, forever (abort the task to stop it), publishing
/// after each into `publish` when given.
pub async fn daily(db: Db, at: ScanAt, cfg: ScanConfig, publish: Option<PublishTo>) {
    let mut next = first_attempt(&db, at, crate::clock::now_ms()).await;
    // The day an attempt is for: a retry after a held lease stays on it, never starting
    // the next day's scan early.
    let mut day = day_of(next);
    tracing::info!(next = %crate::clock::iso(next), "scan: next daily run");
    loop {
        let now = crate::clock::now_ms();
        tokio::time::sleep(Duration::from_millis(next.saturating_sub(now).max(0) as u64)).await;
        let tried = attempt(&db, &cfg, &day).await;
        if let Some(to) = &publish {
            publish_after(&db, &tried, to).await;
        }
        let now = crate::clock::now_ms();
        next = next_attempt(at, &tried, now);
        if retries(&tried) {
            tracing::debug!(next = %crate::clock::iso(next), "scan: trying again");
        } else {
            day = day_of(next);
            tracing::info!(next = %crate::clock::iso(next), "scan: next daily run");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_strictly_and_the_next_run_is_later_today_or_tomorrow() {
        let at: ScanAt = "06:30".parse().unwrap();
        assert_eq!(
            at,
            ScanAt {
                hour: 6,
                minute: 30
            }
        );
        for bad in ["6:30", "24:00", "12:60", "noon", "12:00:00", ""] {
            assert!(bad.parse::<ScanAt>().is_err(), "{bad}");
        }
        let day = 20_000 * DAY_MS;
        assert_eq!(at.next_after(day), day + 6 * 3_600_000 + 30 * 60_000);
        assert_eq!(
            at.next_after(day + 7 * 3_600_000),
            day + DAY_MS + 6 * 3_600_000 + 30 * 60_000
        );
        let exactly = day + 6 * 3_600_000 + 30 * 60_000;
        assert_eq!(at.next_after(exactly), exactly + DAY_MS);
    }

    #[test]
    fn a_held_lease_or_a_failing_database_is_tried_again_that_day_and_the_rest_waits() {
        let at: ScanAt = "06:30".parse().unwrap();
        let now = 20_000 * DAY_MS + 7 * 3_600_000;
        // Held for minutes: within HELD_RETRY_MS; ending sooner: a second after it ends.
        assert_eq!(
            next_attempt(at, &Attempt::Held(now + 300_000), now),
            now + HELD_RETRY_MS + 1_000
        );
        assert_eq!(
            next_attempt(at, &Attempt::Held(now + 2_000), now),
            now + 3_000
        );
        // Already over (or a past expiry): a second from now, never in the past.
        assert_eq!(
            next_attempt(at, &Attempt::Held(now - 60_000), now),
            now + 1_000
        );
        assert_eq!(
            next_attempt(at, &Attempt::Unavailable, now),
            now + UNAVAILABLE_RETRY_MS
        );
        for a in [Attempt::Done, Attempt::Failed] {
            assert_eq!(next_attempt(at, &a, now), at.next_after(now));
            assert!(!retries(&a));
        }
    }
}
