//! `serve --scan-at HH:MM`: the daily scan inside the server.
//!
//! At HH:MM UTC every day the server tries to run a scan: it skips the day when a scan that
//! started that day already completed (another server on the same database, or a manual
//! `lowdown-server scan`), and steps aside when another run holds the lease. A run's
//! failure is logged and the schedule goes on.

use std::str::FromStr;
use std::time::Duration;

use lowdown_core::scanner::days::{day_of, DAY_MS};

use super::{run, ScanConfig, ScanError, Summary};
use crate::db::scanner as store;
use crate::db::Db;

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

/// One scheduled attempt: skips a day already scanned and a lease held elsewhere.
/// Returns the summary of a run that happened.
pub async fn run_scheduled(db: &Db, cfg: &ScanConfig) -> Option<Summary> {
    let day = day_of((cfg.clock)());
    match store::completed_on(db, &day).await {
        Ok(true) => {
            tracing::info!(%day, "scan: a scan already completed today; skipping");
            return None;
        }
        Ok(false) => {}
        Err(e) => {
            tracing::error!(error = %e, "scan: cannot read past runs");
            return None;
        }
    }
    match run(db, cfg).await {
        Ok(summary) => {
            tracing::info!(
                summary = %serde_json::to_string(&summary).unwrap_or_default(),
                "scan finished"
            );
            Some(summary)
        }
        Err(e @ ScanError::LeaseHeld { .. }) => {
            tracing::info!(error = %e, "scan: another server is scanning; skipping");
            None
        }
        Err(e) => {
            tracing::error!(error = %e, "scan: did not run");
            None
        }
    }
}

/// Runs [`run_scheduled`] every day at `at`, forever (abort the task to stop it).
pub async fn daily(db: Db, at: ScanAt, cfg: ScanConfig) {
    loop {
        let now = crate::clock::now_ms();
        let next = at.next_after(now);
        tracing::info!(next = %crate::clock::iso(next), "scan: next daily run");
        tokio::time::sleep(Duration::from_millis((next - now) as u64)).await;
        run_scheduled(&db, &cfg).await;
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
}
