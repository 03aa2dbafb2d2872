//! The server's one clock ([`Clock`], in `AppState`), and unix milliseconds, UTC days and
//! ISO-8601 timestamps.
//!
//! The calendar arithmetic is the core's (`lowdown_core::scanner::days`); no date library.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Wall-clock time with an offset tests move instead of sleeping (salt days, overlaps, the
/// audit's 24 h, leases, quota hours and the pages' 30 days are all about wall time). Every
/// handler and service reads the time from the state's one `Clock`.
#[derive(Debug, Default)]
pub struct Clock {
    offset_ms: AtomicI64,
}

impl Clock {
    /// Unix milliseconds now (plus the offset).
    pub fn now(&self) -> i64 {
        now_ms() + self.offset_ms.load(Ordering::Relaxed)
    }

    /// Moves this clock by `ms` (tests).
    pub fn shift(&self, ms: i64) {
        self.offset_ms.fetch_add(ms, Ordering::Relaxed);
    }
}

/// The environment variable that moves the whole process's clock by that many
/// milliseconds. **Tests only**: integration tests start real `lowdown-server` processes a
/// few seconds before a `--scan-at` minute, or minutes after a lease ran out, instead of
/// sleeping on the wall clock. A server in production never has it set.
pub const TEST_OFFSET_ENV: &str = "LOWDOWN_UNSAFE_TEST_CLOCK_OFFSET_MS";

static PROCESS_OFFSET_MS: AtomicI64 = AtomicI64::new(0);

/// Moves [`now_ms`] (and so every clock of this process) by `ms`; see [`TEST_OFFSET_ENV`].
pub fn set_process_offset(ms: i64) {
    PROCESS_OFFSET_MS.store(ms, Ordering::Relaxed);
}

/// Milliseconds since the unix epoch, now, on the wall clock (plus the process offset a
/// test may set, see [`TEST_OFFSET_ENV`]): what [`Clock`] starts from; code serving a
/// request reads `AppState::now` instead.
pub fn now_ms() -> i64 {
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    wall + PROCESS_OFFSET_MS.load(Ordering::Relaxed)
}

/// The UTC day `YYYY-MM-DD` of a unix-millisecond time.
pub fn day_of(ms: i64) -> String {
    lowdown_core::scanner::days::day_of(ms)
}

/// The UTC day `n` days before the day of `ms`.
pub fn day_before(ms: i64, n: i64) -> String {
    day_of(ms - n * 86_400_000)
}

/// ISO-8601 UTC with milliseconds, e.g. `2026-11-30T06:45:00.123Z`.
pub fn iso(ms: i64) -> String {
    lowdown_core::scanner::days::iso(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_iso_match_known_dates() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(951_782_400_000), "2000-02-29");
        assert_eq!(iso(1_796_020_496_123), "2026-11-30T06:34:56.123Z");
        assert_eq!(day_before(951_782_400_000, 1), "2000-02-28");
        assert_eq!(day_of(-1), "1969-12-31");
    }
}
