//! Database leases: one holder at a time per name, across every server sharing the
//! database (the daily scan runs under [`SCAN_LEASE`], the gateway's audit under
//! [`AUDIT_LEASE`]), and what makes a periodic job run once per period.
//!
//! Taking a lease is one atomic upsert that inserts the row, or takes it over only when it
//! has expired; `RETURNING` tells the caller whether it won. The holder renews the expiry
//! while it works and gives the lease back when done; a holder that dies simply lets it
//! expire. The row outlives its holders and carries what a job needs to run once per
//! period (migration 0014): the period the last holder worked on, its progress there
//! (`state`, which the next holder resumes from when the last one died) and the last
//! period finished (`done`).
//!
//! Nothing in a row can hold a job off for long: an expiry further ahead than
//! [`MAX_TTL_MS`] was never written by a server and counts as expired, a holder id is
//! only ever compared (and shown cut to a safe form), and a `state` is a hint the job
//! checks against its own tables before it trusts it.

use sqlx::Row;

use crate::db::Db;
use crate::db::DbResult;

/// The lease the daily scan runs under.
pub const SCAN_LEASE: &str = "scan";

/// The lease the gateway's daily audit runs under.
pub const AUDIT_LEASE: &str = "audit";

/// The longest a lease may be taken or renewed for. A row expiring later than this from
/// now was not written by a server (a forged or corrupted row) and is taken over at once.
pub const MAX_TTL_MS: i64 = 60 * 60_000;

/// Who holds a lease that could not be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The holder's id, cut to 64 characters of `[A-Za-z0-9_-]` (others shown as `?`).
    pub holder: String,
    /// Unix milliseconds when it expires unless renewed.
    pub expires_at: i64,
}

/// What the previous holders left on a lease row (all `None` on a new row).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Left {
    /// The period the last holder worked on (a daily job: its UTC day).
    pub period: Option<String>,
    /// Its progress in that period, when it did not finish it (a job's own format).
    pub state: Option<String>,
    /// The last period a holder finished.
    pub done: Option<String>,
}

impl Left {
    /// Whether `period` was finished.
    pub fn finished(&self, period: &str) -> bool {
        self.done.as_deref() == Some(period)
    }

    /// The progress left in `period` by a holder that did not finish it.
    pub fn unfinished(&self, period: &str) -> Option<&str> {
        match (self.period.as_deref(), self.finished(period)) {
            (Some(p), false) if p == period => self.state.as_deref(),
            _ => None,
        }
    }
}

fn shown(holder: &str) -> String {
    holder
        .chars()
        .take(64)
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '_' | '-' => c,
            _ => '?',
        })
        .collect()
}

fn left(row: &sqlx::any::AnyRow) -> DbResult<Left> {
    Ok(Left {
        period: row.try_get("period")?,
        state: row.try_get("state")?,
        done: row.try_get("done")?,
    })
}

/// Takes lease `name` for `holder` until `now + ttl_ms` (at most [`MAX_TTL_MS`]), unless
/// someone else holds an unexpired one; what the previous holders left when it is taken.
pub async fn acquire(
    db: &Db,
    name: &str,
    holder: &str,
    now: i64,
    ttl_ms: i64,
) -> DbResult<Result<Left, Held>> {
    let (name, holder) = (name.to_owned(), holder.to_owned());
    let ttl_ms = ttl_ms.clamp(0, MAX_TTL_MS);
    db.write(move |conn| {
        Box::pin(async move {
            let won = sqlx::query(
                "INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at \
                 WHERE leases.expires_at < $4 OR leases.expires_at > $5 \
                 RETURNING period, state, done",
            )
            .bind(name.clone())
            .bind(holder)
            .bind(now + ttl_ms)
            .bind(now)
            .bind(now.saturating_add(MAX_TTL_MS))
            .fetch_optional(&mut *conn)
            .await?;
            if let Some(row) = won {
                return Ok(Ok(left(&row)?));
            }
            let row = sqlx::query("SELECT holder, expires_at FROM leases WHERE name = $1")
                .bind(name)
                .fetch_one(&mut *conn)
                .await?;
            Ok(Err(Held {
                holder: shown(&row.try_get::<String, _>("holder")?),
                expires_at: row.try_get("expires_at")?,
            }))
        })
    })
    .await
}

/// The row of lease `name` as it stands (a read): what was left on it, and who holds it
/// until when (`None` when nobody does at `now`).
pub async fn peek(db: &Db, name: &str, now: i64) -> DbResult<(Left, Option<Held>)> {
    let row =
        sqlx::query("SELECT holder, expires_at, period, state, done FROM leases WHERE name = $1")
            .bind(name.to_owned())
            .fetch_optional(&db.pool)
            .await?;
    let Some(row) = row else {
        return Ok((Left::default(), None));
    };
    let expires_at: i64 = row.try_get("expires_at")?;
    let live = expires_at >= now && expires_at <= now.saturating_add(MAX_TTL_MS);
    let held = live.then(|| -> DbResult<Held> {
        Ok(Held {
            holder: shown(&row.try_get::<String, _>("holder")?),
            expires_at,
        })
    });
    Ok((left(&row)?, held.transpose()?))
}

/// Extends a lease `holder` still holds to `expires_at`; `false` when it no longer does.
pub async fn renew(db: &Db, name: &str, holder: &str, expires_at: i64) -> DbResult<bool> {
    let (name, holder) = (name.to_owned(), holder.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            let r =
                sqlx::query("UPDATE leases SET expires_at = $1 WHERE name = $2 AND holder = $3")
                    .bind(expires_at)
                    .bind(name)
                    .bind(holder)
                    .execute(&mut *conn)
                    .await?;
            Ok(r.rows_affected() == 1)
        })
    })
    .await
}

/// Records that `holder` works on `period` and has got as far as `state` (what a holder
/// taking over after it dies resumes from); `false` when it no longer holds the lease.
pub async fn progress(
    db: &Db,
    name: &str,
    holder: &str,
    period: &str,
    state: &str,
) -> DbResult<bool> {
    let (name, holder, period, state) = (
        name.to_owned(),
        holder.to_owned(),
        period.to_owned(),
        state.to_owned(),
    );
    db.write(move |conn| {
        Box::pin(async move {
            let r = sqlx::query(
                "UPDATE leases SET period = $1, state = $2 WHERE name = $3 AND holder = $4",
            )
            .bind(period)
            .bind(state)
            .bind(name)
            .bind(holder)
            .execute(&mut *conn)
            .await?;
            Ok(r.rows_affected() == 1)
        })
    })
    .await
}

/// Gives a lease up, keeping what it left for the next holder (a no-op when `holder` no
/// longer holds it). The row stays, held by nobody.
pub async fn release(db: &Db, name: &str, holder: &str) -> DbResult<()> {
    let (name, holder) = (name.to_owned(), holder.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query(
                "UPDATE leases SET holder = '', expires_at = 0 WHERE name = $1 AND holder = $2",
            )
            .bind(name)
            .bind(holder)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    })
    .await
}

/// Gives a lease up with `period` finished: no progress is left to resume, and a job that
/// runs once per period skips it from now on. A no-op when `holder` no longer holds it.
pub async fn finish(db: &Db, name: &str, holder: &str, period: &str) -> DbResult<()> {
    let (name, holder, period) = (name.to_owned(), holder.to_owned(), period.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query(
                "UPDATE leases SET holder = '', expires_at = 0, period = $1, state = NULL, done = $2 \
                 WHERE name = $3 AND holder = $4",
            )
            .bind(period.clone())
            .bind(period)
            .bind(name)
            .bind(holder)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    })
    .await
}

/// A write that only the holder of a lease may make: checked in the write's own
/// transaction, so a holder that lost its lease (paused past its expiry, cut off from the
/// database while another server took over) writes nothing once the next holder has it.
#[derive(Debug, Clone)]
pub struct Fence {
    /// The lease.
    pub name: String,
    /// Who must still hold it.
    pub holder: String,
}

impl Fence {
    /// The fence of `holder` on lease `name`.
    pub fn new(name: &str, holder: &str) -> Fence {
        Fence {
            name: name.to_owned(),
            holder: holder.to_owned(),
        }
    }

    /// Whether the holder still holds the lease, locking its row until the transaction ends
    /// (on PostgreSQL a takeover waits for the write; SQLite has one writer).
    pub(crate) async fn holds(&self, conn: &mut sqlx::AnyConnection) -> Result<bool, sqlx::Error> {
        let r = sqlx::query("UPDATE leases SET holder = holder WHERE name = $1 AND holder = $2")
            .bind(self.name.clone())
            .bind(self.holder.clone())
            .execute(&mut *conn)
            .await?;
        Ok(r.rows_affected() == 1)
    }
}
