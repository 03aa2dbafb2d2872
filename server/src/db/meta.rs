//! Deployment facts kept in the database (`server_meta`, migration 0003): the secret that
//! keys rate-limit callers, created by the first server to start and shared by every server
//! on the database; and the one-time fill of what migration 0003 added to earlier rows,
//! which needs the core's lookup forms and the rollup rule of `rollup_latency`.

use lowdown_core::target_label::lookup_form;
use sqlx::{AnyConnection, AnyPool, AssertSqlSafe, Row};

use super::rollup::RULES;
use super::Db;
use crate::db::{DbError, DbResult};

/// Length of the caller secret in bytes.
const SECRET_BYTES: usize = 32;

/// The deployment's caller secret: read, or created from the operating system's random
/// source when absent. Several servers starting together agree: the first insert wins and
/// everyone reads the stored value.
pub(super) async fn caller_secret(pool: &AnyPool) -> DbResult<Vec<u8>> {
    let mut fresh = [0u8; SECRET_BYTES];
    getrandom::fill(&mut fresh).map_err(|e| DbError::internal(format!("getrandom: {e}")))?;
    sqlx::query(
        "INSERT INTO server_meta (key, value) VALUES ('caller_secret', $1) ON CONFLICT (key) DO NOTHING",
    )
    .bind(hex::encode(fresh))
    .execute(pool)
    .await?;
    let row = sqlx::query("SELECT value FROM server_meta WHERE key = 'caller_secret'")
        .fetch_one(pool)
        .await?;
    let stored: String = row.try_get("value")?;
    match hex::decode(&stored) {
        Ok(secret) if secret.len() == SECRET_BYTES => Ok(secret),
        _ => Err(DbError::internal(
            "server_meta.caller_secret is not 32 bytes of hex",
        )),
    }
}

/// Fills `targets.lookup_key` and `rollup_latency` for rows written before migration 0003,
/// once per database: the marker row is inserted in the same transaction, so a second
/// server starting at the same time waits for it and then skips. Runs on a pool
/// connection, before the server keeps a writer of its own.
pub(super) async fn backfill(db: &Db, now: i64) -> DbResult<()> {
    let mut tx = db.pool.begin().await?;
    backfill_in(&mut tx, now, db.backend == super::Backend::Postgres).await?;
    tx.commit().await?;
    Ok(())
}

/// `rollups`: fill `rollup_latency` too (PostgreSQL; SQLite rebuilds its roll-ups file
/// from the raw rows, see `rollups_file`).
async fn backfill_in(conn: &mut AnyConnection, now: i64, rollups: bool) -> DbResult<()> {
    let claimed = sqlx::query(
        "INSERT INTO server_meta (key, value) VALUES ('backfill_0003', $1) \
         ON CONFLICT (key) DO NOTHING RETURNING key",
    )
    .bind(now.to_string())
    .fetch_optional(&mut *conn)
    .await?;
    if claimed.is_none() {
        return Ok(());
    }
    let targets = sqlx::query("SELECT target FROM targets WHERE lookup_key IS NULL")
        .fetch_all(&mut *conn)
        .await?;
    for row in targets {
        let target: String = row.try_get("target")?;
        sqlx::query("UPDATE targets SET lookup_key = $1 WHERE target = $2")
            .bind(lookup_form(&target))
            .bind(target)
            .execute(&mut *conn)
            .await?;
    }
    let latency = RULES
        .iter()
        .filter(|r| rollups && r.table == "rollup_latency");
    for rule in latency {
        let sql = rule.roll_sql("FROM interactions WHERE true", false);
        sqlx::query(AssertSqlSafe(sql)).execute(&mut *conn).await?;
    }
    Ok(())
}
