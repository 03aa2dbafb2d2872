//! Database leases: at most one holder per name among all servers sharing the database
//! (the daily audit runs under [`AUDIT_LEASE`]). The table is the Registry Scanner's
//! `leases`; a holder that dies simply lets its lease expire.

use crate::db::Db;
use crate::error::AppResult;

/// The lease the audit job runs under.
pub const AUDIT_LEASE: &str = "audit";

/// Takes lease `name` for `holder` until `now + ttl_ms` when nobody holds an unexpired
/// one; `true` when taken. One atomic upsert decides between concurrent servers.
pub async fn acquire(db: &Db, name: &str, holder: &str, now: i64, ttl_ms: i64) -> AppResult<bool> {
    let (name, holder) = (name.to_owned(), holder.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            let won = sqlx::query(
                "INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at \
                 WHERE leases.expires_at < $4 RETURNING holder",
            )
            .bind(name)
            .bind(holder)
            .bind(now + ttl_ms)
            .bind(now)
            .fetch_optional(&mut *conn)
            .await?;
            Ok(won.is_some())
        })
    })
    .await
}

/// Gives lease `name` up if `holder` still holds it.
pub async fn release(db: &Db, name: &str, holder: &str) -> AppResult<()> {
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
