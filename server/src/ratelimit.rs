//! Telemetry rate limits (SPEC §4: 600/h per agent key, 60/h per IP when anonymous), kept
//! in the database (`rate_limits`, migration 0002) so that every server sharing one
//! database enforces ONE limit per caller.
//!
//! Windows are fixed, one hour long, per caller: a window opens at the caller's first
//! observation after its previous window ended, and everything sent in it counts against
//! the limit. `Retry-After` is the time until that window ends, rounded up to whole
//! seconds (at least 1). The count is taken with one upsert inside the transaction that
//! stores the observations, so a refused request rolls back and writes nothing, and an
//! accepted one counts exactly once. Callers are stored as the sha256 of
//! `agent:<id>` or `ip:<address>`, never the raw address, and rows of ended windows are
//! deleted at most every ten minutes per process (one indexed DELETE).

use std::sync::atomic::{AtomicI64, Ordering};

use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, Row};

use crate::db::Db;
use crate::error::{AppError, AppResult};

/// One hour, in milliseconds.
pub const WINDOW_MS: i64 = 3_600_000;
/// How often (ms) a process deletes the rows of ended windows.
const PRUNE_EVERY_MS: i64 = 600_000;
/// When this process last pruned (unix ms).
static LAST_PRUNE: AtomicI64 = AtomicI64::new(0);

/// The budget one request draws from: who the caller is and how much it may send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    /// sha256 (hex) of `agent:<agent id>` or `ip:<address>`: the stored subject.
    pub subject: String,
    /// Observations allowed per window.
    pub limit: u32,
    /// `agent key` or `IP address` (named in the 429 message).
    pub scope: &'static str,
}

impl Quota {
    /// The budget of a registered agent (`RATE_LIMIT_PER_KEY_PER_HOUR` in the core).
    pub fn agent(agent_id: &str, limit: u32) -> Quota {
        Quota {
            subject: subject_hash(&format!("agent:{agent_id}")),
            limit,
            scope: "agent key",
        }
    }

    /// The budget of an anonymous caller by IP address (`None`: one shared `unknown`).
    pub fn ip(ip: Option<std::net::IpAddr>, limit: u32) -> Quota {
        let who = ip.map_or_else(|| "unknown".to_owned(), |i| i.to_string());
        Quota {
            subject: subject_hash(&format!("ip:{who}")),
            limit,
            scope: "IP address",
        }
    }
}

/// Lowercase hex sha256 of a caller name (what `rate_limits.subject` holds).
pub fn subject_hash(caller: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"lowdown-rate-limit\0");
    h.update(caller.as_bytes());
    hex::encode(h.finalize())
}

/// Seconds until a window that opened at `window_start` ends, seen at `now` (both unix
/// ms): rounded up, at least 1.
pub fn retry_after_secs(window_start: i64, now: i64) -> u64 {
    let wait_ms = (window_start + WINDOW_MS - now).max(1000);
    ((wait_ms + 999) / 1000) as u64
}

/// Counts `n` observations against `quota` at `now`, inside the caller's transaction.
/// Fails with [`AppError::RateLimited`] when they do not fit; the caller must then let the
/// transaction roll back (returning the error does), which also undoes this count.
pub(crate) async fn take(
    conn: &mut AnyConnection,
    quota: &Quota,
    n: u32,
    now: i64,
) -> AppResult<()> {
    // Every SET expression reads the row's old values (both engines), so the window
    // restarts and the count resets together once the old window has ended.
    let row = sqlx::query(
        "INSERT INTO rate_limits (subject, window_start, n) VALUES ($1, $2, $3) \
         ON CONFLICT (subject) DO UPDATE SET \
         n = CASE WHEN rate_limits.window_start <= excluded.window_start - $4 \
             THEN excluded.n ELSE rate_limits.n + excluded.n END, \
         window_start = CASE WHEN rate_limits.window_start <= excluded.window_start - $4 \
             THEN excluded.window_start ELSE rate_limits.window_start END \
         RETURNING window_start, n",
    )
    .bind(quota.subject.clone())
    .bind(now)
    .bind(i64::from(n))
    .bind(WINDOW_MS)
    .fetch_one(&mut *conn)
    .await?;
    let window_start: i64 = row.try_get(0)?;
    let used: i64 = row.try_get(1)?;
    if used > i64::from(quota.limit) {
        return Err(AppError::RateLimited {
            scope: quota.scope.to_owned(),
            limit: quota.limit,
            retry_after_secs: retry_after_secs(window_start, now),
        });
    }
    Ok(())
}

/// Deletes the rows of windows that ended, at most every ten minutes per process. Runs
/// in its own short transaction (never inside an ingest one, so it cannot take part in a
/// lock cycle). Failures are logged: a stale row only costs space.
pub async fn prune_if_due(db: &Db, now: i64) {
    let last = LAST_PRUNE.load(Ordering::Relaxed);
    if now - last < PRUNE_EVERY_MS
        || LAST_PRUNE
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    if let Err(e) = prune(db, now).await {
        tracing::warn!(error = %e, "pruning rate-limit windows failed");
    }
}

/// Deletes the rows of every window that ended by `now` (unix ms); returns how many.
pub async fn prune(db: &Db, now: i64) -> AppResult<u64> {
    db.write(move |conn| {
        Box::pin(async move {
            let done = sqlx::query("DELETE FROM rate_limits WHERE window_start <= $1")
                .bind(now - WINDOW_MS)
                .execute(&mut *conn)
                .await?;
            Ok(done.rows_affected())
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_to_the_window_end() {
        assert_eq!(retry_after_secs(0, 1_000), 3599);
        assert_eq!(retry_after_secs(0, 1_001), 3599);
        assert_eq!(retry_after_secs(0, 1_500), 3599);
        assert_eq!(retry_after_secs(0, WINDOW_MS - 1), 1);
        assert_eq!(retry_after_secs(0, WINDOW_MS + 5), 1);
    }

    #[test]
    fn subjects_are_hashes_not_addresses() {
        let q = Quota::ip(Some("203.0.113.7".parse().unwrap()), 60);
        assert_eq!(q.subject.len(), 64);
        assert!(!q.subject.contains("203.0.113.7"));
        assert_ne!(q.subject, Quota::agent("203.0.113.7", 600).subject);
        assert_eq!(q.subject, subject_hash("ip:203.0.113.7"));
    }
}
