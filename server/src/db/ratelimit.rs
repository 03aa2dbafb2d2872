//! Rate limits (SPEC §4), kept in the database (`rate_limits`) so that every server sharing
//! one database enforces ONE limit per caller: observations (600/h per agent key, 60/h per
//! caller without one) and agent registrations (10/h per caller).
//!
//! Windows are fixed, one hour long, per caller and limit: a window opens at the caller's
//! first use after its previous window ended. A request takes what is left of its budget
//! ([`grant`]): observations are partly accepted at the limit, the first items up to the
//! remaining budget. `Retry-After` is the time until the window ends, rounded up to whole
//! seconds (at least 1). The count is taken inside the transaction that stores what it
//! counts, so a refused request rolls back and writes nothing, and an accepted one counts
//! exactly once; on PostgreSQL the row lock serializes one caller's requests across
//! servers. Callers are stored as keyed hashes ([`crate::caller::subject`]), and rows of
//! ended windows are deleted at most every ten minutes per process (one indexed DELETE).

use std::net::IpAddr;
use std::sync::atomic::{AtomicI64, Ordering};

use lowdown_core::telemetry::{
    RATE_LIMIT_PER_IP_PER_HOUR, RATE_LIMIT_PER_KEY_PER_HOUR, REGISTRATIONS_PER_CALLER_PER_HOUR,
};
use sqlx::{AnyConnection, Row};

use crate::caller::{bucket, subject};
use crate::db::Db;
use crate::error::{AppError, AppResult};

/// One hour, in milliseconds.
pub const WINDOW_MS: i64 = 3_600_000;
/// How often (ms) a process deletes the rows of ended windows.
const PRUNE_EVERY_MS: i64 = 600_000;
/// When this process last pruned (unix ms).
static LAST_PRUNE: AtomicI64 = AtomicI64::new(0);

/// The budget one request draws from: who the caller is and how much it may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    /// Keyed hash of the limit and the caller: the stored subject.
    pub subject: String,
    /// Units allowed per window.
    pub limit: u32,
    /// What is counted, plural (`observations`, `registrations`), named in a 429.
    pub what: &'static str,
    /// Whose budget it is (`agent key`, `IP address`), named in a 429.
    pub scope: &'static str,
}

impl Quota {
    /// The observation budget of a registered agent.
    pub fn agent_observations(secret: &[u8], agent_id: &str) -> Quota {
        Quota {
            subject: subject(secret, "observe", &format!("agent:{agent_id}")),
            limit: RATE_LIMIT_PER_KEY_PER_HOUR,
            what: "observations",
            scope: "agent key",
        }
    }

    /// The observation budget of an anonymous caller, by address (IPv6 per /64).
    pub fn address_observations(secret: &[u8], ip: Option<IpAddr>) -> Quota {
        Quota {
            subject: subject(secret, "observe", &bucket(ip)),
            limit: RATE_LIMIT_PER_IP_PER_HOUR,
            what: "observations",
            scope: "IP address",
        }
    }

    /// The agent-registration budget of a caller, by address (IPv6 per /64).
    pub fn registrations(secret: &[u8], ip: Option<IpAddr>) -> Quota {
        Quota {
            subject: subject(secret, "register", &bucket(ip)),
            limit: REGISTRATIONS_PER_CALLER_PER_HOUR,
            what: "registrations",
            scope: "IP address",
        }
    }

    /// The 429 for a request that got nothing of this budget.
    pub fn refusal(&self, grant: &Grant) -> AppError {
        AppError::RateLimited {
            what: self.what.to_owned(),
            scope: self.scope.to_owned(),
            limit: self.limit,
            retry_after_secs: grant.retry_after_secs,
        }
    }
}

/// What a request got of its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// Units granted (at most what was asked for).
    pub granted: u32,
    /// Seconds until the window ends (what `Retry-After` says when some were refused).
    pub retry_after_secs: u64,
}

/// Seconds until a window that opened at `window_start` ends, seen at `now` (both unix
/// ms): rounded up, at least 1.
pub fn retry_after_secs(window_start: i64, now: i64) -> u64 {
    let wait_ms = (window_start + WINDOW_MS - now).max(1000);
    ((wait_ms + 999) / 1000) as u64
}

/// Takes up to `wanted` units of `quota` at `now`, inside the caller's transaction, and
/// says how many it got. Nothing granted changes nothing worth keeping: the caller then
/// answers 429 and lets the transaction roll back.
pub(crate) async fn grant(
    conn: &mut AnyConnection,
    quota: &Quota,
    wanted: u32,
    now: i64,
) -> Result<Grant, sqlx::Error> {
    // First lock (or open) the caller's row, restarting the window once the old one has
    // ended; every SET expression reads the row's old values on both engines. Then add
    // what fits. On PostgreSQL the upsert's row lock holds until commit, so concurrent
    // requests of one caller take turns between the two statements.
    let row = sqlx::query(
        "INSERT INTO rate_limits (subject, window_start, n) VALUES ($1, $2, 0) \
         ON CONFLICT (subject) DO UPDATE SET \
         n = CASE WHEN rate_limits.window_start <= excluded.window_start - $3 \
             THEN 0 ELSE rate_limits.n END, \
         window_start = CASE WHEN rate_limits.window_start <= excluded.window_start - $3 \
             THEN excluded.window_start ELSE rate_limits.window_start END \
         RETURNING window_start, n",
    )
    .bind(quota.subject.clone())
    .bind(now)
    .bind(WINDOW_MS)
    .fetch_one(&mut *conn)
    .await?;
    let window_start: i64 = row.try_get(0)?;
    let used: i64 = row.try_get(1)?;
    let left = (i64::from(quota.limit) - used).max(0);
    let granted = u32::try_from(left.min(i64::from(wanted))).unwrap_or(0);
    if granted > 0 {
        sqlx::query("UPDATE rate_limits SET n = n + $1 WHERE subject = $2")
            .bind(i64::from(granted))
            .bind(quota.subject.clone())
            .execute(&mut *conn)
            .await?;
    }
    Ok(Grant {
        granted,
        retry_after_secs: retry_after_secs(window_start, now),
    })
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
    fn quotas_hash_their_caller_under_the_secret() {
        let ip: Option<IpAddr> = Some("203.0.113.7".parse().unwrap());
        let q = Quota::address_observations(b"k", ip);
        assert_eq!(q.subject.len(), 64);
        assert!(!q.subject.contains("203"));
        assert_ne!(q.subject, Quota::registrations(b"k", ip).subject);
        assert_ne!(q.subject, Quota::address_observations(b"other", ip).subject);
        assert_eq!((q.limit, Quota::registrations(b"k", ip).limit), (60, 10));
    }
}
