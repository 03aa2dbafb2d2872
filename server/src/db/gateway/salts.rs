//! Daily salts: created on first use, insert-if-absent, so every server sharing the
//! database agrees on each day's salt.

use sqlx::Row;

use crate::db::DbResult;
use crate::db::{random_id, Db};

/// The salt of `salt_id`, creating it (32 random bytes, hex) when no server has yet.
pub async fn get_or_create(db: &Db, salt_id: &str, now: i64) -> DbResult<String> {
    if let Some(s) = get(db, salt_id).await? {
        return Ok(s);
    }
    let fresh = random_id("", 32)?;
    let id = salt_id.to_owned();
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query("INSERT INTO sampling_salts (salt_id, salt, created_at) VALUES ($1, $2, $3) ON CONFLICT (salt_id) DO NOTHING")
                .bind(id.clone())
                .bind(fresh)
                .bind(now)
                .execute(&mut *conn)
                .await?;
            // Whoever inserted first wins; everyone reads the winner's salt.
            let row = sqlx::query("SELECT salt FROM sampling_salts WHERE salt_id = $1")
                .bind(id)
                .fetch_one(&mut *conn)
                .await?;
            Ok(row.try_get("salt")?)
        })
    })
    .await
}

/// The stored salt of `salt_id`.
pub async fn get(db: &Db, salt_id: &str) -> DbResult<Option<String>> {
    let row = sqlx::query("SELECT salt FROM sampling_salts WHERE salt_id = $1")
        .bind(salt_id.to_owned())
        .fetch_optional(&db.pool)
        .await?;
    Ok(match row {
        Some(r) => Some(r.try_get("salt")?),
        None => None,
    })
}

/// Stored salts with ids up to `newest_id` (ids sort by date), newest first.
pub async fn up_to(db: &Db, newest_id: &str, limit: i64) -> DbResult<Vec<(String, String)>> {
    let rows = sqlx::query("SELECT salt_id, salt FROM sampling_salts WHERE salt_id <= $1 ORDER BY salt_id DESC LIMIT $2")
        .bind(newest_id.to_owned())
        .bind(limit)
        .fetch_all(&db.pool)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("salt_id")?, r.try_get("salt")?)))
        .collect()
}
