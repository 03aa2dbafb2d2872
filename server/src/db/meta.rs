//! Deployment facts kept in the database (`server_meta`, migration 0003): the secret that
//! keys rate-limit callers, created by the first server to start and shared by every server
//! on the database; and the one-time fill of what migration 0003 added to earlier rows,
//! which needs the core's rules (lookup forms, latency buckets) rather than SQL.

use std::collections::BTreeMap;

use lowdown_core::target_label::lookup_form;
use lowdown_core::telemetry::latency_bucket;
use sqlx::{AnyConnection, AnyPool, Row};

use super::latency::{self, LatencyRows};
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
    let stored: String = row.try_get(0)?;
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
    backfill_in(&mut tx, now).await?;
    tx.commit().await?;
    Ok(())
}

async fn backfill_in(conn: &mut AnyConnection, now: i64) -> DbResult<()> {
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
        let target: String = row.try_get(0)?;
        sqlx::query("UPDATE targets SET lookup_key = $1 WHERE target = $2")
            .bind(lookup_form(&target))
            .bind(target)
            .execute(&mut *conn)
            .await?;
    }
    let rated = sqlx::query(
        "SELECT target, task_type, latency_ms FROM interactions WHERE source = 'organic' \
         AND outcome_class IN ('success', 'partial', 'failure') AND latency_ms IS NOT NULL",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut rows: LatencyRows<String> = BTreeMap::new();
    for row in rated {
        let ms: f64 = row.try_get(2)?;
        let key = (row.try_get(0)?, row.try_get(1)?, latency_bucket(ms) as i64);
        let e = rows.entry(key).or_insert((0, 0.0));
        e.0 += 1;
        e.1 += ms;
    }
    latency::add(conn, &rows).await?;
    Ok(())
}
