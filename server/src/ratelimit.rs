//! Fixed one-hour windows per agent key or per IP address (SPEC §4: 600/h per key,
//! 60/h per IP when anonymous). Kept in memory: a restart forgets the windows, which only
//! ever errs on the side of accepting data.

use std::collections::HashMap;
use std::sync::Mutex;

/// One hour, in milliseconds.
const WINDOW_MS: i64 = 3_600_000;
/// Prune expired windows when the map grows past this many callers.
const PRUNE_AT: usize = 100_000;

/// Counts what each caller sent in its current window.
#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: Mutex<HashMap<String, (i64, u32)>>,
}

impl RateLimiter {
    /// Takes `n` units for `caller` under `limit` per hour at time `now` (unix ms).
    /// `Ok(())` when they fit (and they are counted); `Err(seconds)` until the window
    /// resets when they do not (nothing is counted).
    pub fn take(&self, caller: &str, n: u32, limit: u32, now: i64) -> Result<(), u64> {
        let mut map = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() > PRUNE_AT {
            map.retain(|_, (start, _)| now - *start < WINDOW_MS);
        }
        let entry = map.entry(caller.to_owned()).or_insert((now, 0));
        if now - entry.0 >= WINDOW_MS {
            *entry = (now, 0);
        }
        if entry.1.saturating_add(n) > limit {
            let wait_ms = (entry.0 + WINDOW_MS - now).max(1000);
            return Err(((wait_ms + 999) / 1000) as u64);
        }
        entry.1 += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_fill_refuse_and_reset() {
        let rl = RateLimiter::default();
        assert_eq!(rl.take("ip:1", 60, 60, 0), Ok(()));
        assert_eq!(rl.take("ip:1", 1, 60, 1_000), Err(3599));
        assert_eq!(rl.take("ip:2", 1, 60, 1_000), Ok(()));
        assert_eq!(rl.take("ip:1", 60, 60, WINDOW_MS), Ok(()));
    }
}
