//! Database leases: one holder at a time per name, across every server sharing the
//! database (the daily scan runs under [`SCAN_LEASE`], the gateway's audit under
//! [`AUDIT_LEASE`]).
//!
//! Taking a lease is one atomic upsert that inserts the row, or takes it over only when it
//! has expired; `RETURNING` tells the caller whether it won. The holder renews the expiry
//! while it works and deletes the row when done; a holder that dies simply lets it expire.

use sqlx::Row;

use crate::db::Db;
use crate::db::DbResult;

/// The lease the daily scan runs under.
pub const SCAN_LEASE: &str = "scan";

/// The lease the gateway's daily audit runs under.
pub const AUDIT_LEASE: &str = "audit";

/// Who holds a lease that could not be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The holder's id.
    pub holder: String,
    /// Unix milliseconds when it expires unless renewed.
    pub expires_at: i64,
}

/// Takes lease `name` for `holder` until `now + ttl_ms`, unless someone else holds an
/// unexpired one.
pub async fn acquire(
    db: &Db,
    name: &str,
    holder: &str,
    now: i64,
    ttl_ms: i64,
) -> DbResult<Result<(), Held>> {
    let (name, holder) = (name.to_owned(), holder.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            let won = sqlx::query(
                "INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at \
                 WHERE leases.expires_at < $4 RETURNING holder",
            )
            .bind(name.clone())
            .bind(holder)
            .bind(now + ttl_ms)
            .bind(now)
            .fetch_optional(&mut *conn)
            .await?;
            if won.is_some() {
                return Ok(Ok(()));
            }
            let row = sqlx::query("SELECT holder, expires_at FROM leases WHERE name = $1")
                .bind(name)
                .fetch_one(&mut *conn)
                .await?;
            Ok(Err(Held {
                holder: row.try_get("holder")?,
                expires_at: row.try_get("expires_at")?,
            }))
        })
    })
    .await
}

/// Extends a lease `holder` still holds; `false` when it no longer does.
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

/// Gives a lease up (a no-op when `holder` no longer holds it).
pub async fn release(db: &Db, name: &str, holder: &str) -> DbResult<()> {
    let (name, holder) = (name.to_owned(), holder.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query("DELETE FROM leases WHERE name = $1 AND holder = $2")
                .bind(name)
                .bind(holder)
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    })
    .await
}
