//! The counts behind an agent's reputation (SPEC §10), over the 30 days before `now`.
//! Statuses are grouped in SQL and classified by the core, so the counting rule has one home.

use std::collections::{BTreeMap, BTreeSet};

use lowdown_core::gateway::reputation::{
    Bucket, Reports, ReputationInputs, Tally, REPUTATION_WINDOW_MS,
};
use lowdown_core::gateway::score::{counts_as_success, receipt_counts_as_success};
use sqlx::Row;

use crate::db::Db;
use crate::db::DbResult;

fn outcome(status: Option<i64>) -> Option<bool> {
    counts_as_success(status.and_then(|s| u16::try_from(s).ok()))
}

/// Adds a row of `outcome, weight_tenths, n` (receipts) to `r`.
fn add_receipts(r: &mut Reports, row: &sqlx::any::AnyRow) -> DbResult<()> {
    let kind: String = row.try_get("outcome")?;
    let weight = row.try_get::<i64, _>("weight_tenths")? as f64 / 10.0;
    r.add(
        receipt_counts_as_success(&kind),
        weight,
        crate::db::get_u64(row, "n")?,
    );
    Ok(())
}

fn add(t: &mut Tally, status: Option<i64>, n: u64) {
    match outcome(status) {
        Some(true) => t.counted += n,
        Some(false) => {
            t.counted += n;
            t.errors += n;
        }
        None => {}
    }
}

async fn count(db: &Db, sql: &'static str, agent_id: &str, since: i64) -> DbResult<u64> {
    let row = sqlx::query(sql)
        .bind(agent_id.to_owned())
        .bind(since)
        .fetch_one(&db.pool)
        .await?;
    crate::db::get_u64(&row, "n").map_err(Into::into)
}

/// Counts everything [`lowdown_core::gateway::reputation::reputation`] needs for `agent_id`
/// registered at `registered_at`.
pub async fn inputs(
    db: &Db,
    agent_id: &str,
    registered_at: i64,
    now: i64,
) -> DbResult<ReputationInputs> {
    let since = now - REPUTATION_WINDOW_MS;
    // The agent's observations of catalog services, per (service, hour, status).
    let own = sqlx::query(
        "SELECT service_id, created_at / 3600000 AS hour, status, COUNT(*) AS n FROM observations \
         WHERE agent_id = $1 AND created_at >= $2 AND service_id IS NOT NULL \
         GROUP BY service_id, created_at / 3600000, status",
    )
    .bind(agent_id.to_owned())
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    let mut buckets: BTreeMap<(String, i64), Bucket> = BTreeMap::new();
    let mut reported = Reports::default();
    let mut services: BTreeSet<String> = BTreeSet::new();
    let mut service_samples = 0u64;
    for r in &own {
        let (service, hour, status) = (
            r.try_get::<String, _>("service_id")?,
            r.try_get::<i64, _>("hour")?,
            r.try_get::<Option<i64>, _>("status")?,
        );
        let n = crate::db::get_u64(r, "n")?;
        add(
            &mut buckets.entry((service.clone(), hour)).or_default().reported,
            status,
            n,
        );
        reported.add(outcome(status), 1.0, n);
        service_samples += n;
        services.insert(service);
    }
    // Its receipts, by signatures (0.3 signed once, 1.0 co-signed): reports of its calls too.
    let receipted = sqlx::query(
        "SELECT service_id, outcome, weight_tenths, COUNT(*) AS n FROM receipts \
         WHERE agent_id = $1 AND submitted_at >= $2 GROUP BY service_id, outcome, weight_tenths",
    )
    .bind(agent_id.to_owned())
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    let mut compared = services.clone();
    for r in &receipted {
        add_receipts(&mut reported, r)?;
        compared.insert(r.try_get("service_id")?);
    }
    // What the gateway saw of those services in the same window, per hour (every agent);
    // what every other agent reported of them, per agent (anonymous reports: one per
    // network).
    let mut others: BTreeMap<String, Reports> = BTreeMap::new();
    for service in &compared {
        let seen = sqlx::query(
            "SELECT at / 3600000 AS hour, status, COUNT(*) AS n FROM proxy_calls WHERE service_id = $1 AND at >= $2 AND refused IS NULL GROUP BY at / 3600000, status",
        )
        .bind(service.clone())
        .bind(since)
        .fetch_all(&db.pool)
        .await?;
        for r in &seen {
            let key = (service.clone(), r.try_get::<i64, _>("hour")?);
            if let Some(b) = buckets.get_mut(&key) {
                add(
                    &mut b.gateway,
                    r.try_get("status")?,
                    crate::db::get_u64(r, "n")?,
                );
            }
        }
        let all = sqlx::query(
            "SELECT COALESCE(agent_id, 'anonymous:' || COALESCE(network, '')) AS who, status, COUNT(*) AS n \
             FROM observations WHERE service_id = $1 AND created_at >= $2 \
             AND (agent_id IS NULL OR agent_id <> $3) \
             GROUP BY COALESCE(agent_id, 'anonymous:' || COALESCE(network, '')), status",
        )
        .bind(service.clone())
        .bind(since)
        .bind(agent_id.to_owned())
        .fetch_all(&db.pool)
        .await?;
        for r in &all {
            let who: String = r.try_get("who")?;
            others.entry(who).or_default().add(
                outcome(r.try_get("status")?),
                1.0,
                crate::db::get_u64(r, "n")?,
            );
        }
        let their_receipts = sqlx::query(
            "SELECT agent_id, outcome, weight_tenths, COUNT(*) AS n FROM receipts \
             WHERE service_id = $1 AND submitted_at >= $2 AND agent_id <> $3 \
             GROUP BY agent_id, outcome, weight_tenths",
        )
        .bind(service.clone())
        .bind(since)
        .bind(agent_id.to_owned())
        .fetch_all(&db.pool)
        .await?;
        for r in &their_receipts {
            add_receipts(others.entry(r.try_get("agent_id")?).or_default(), r)?;
        }
    }
    let calls = sqlx::query("SELECT service_id, COUNT(*) AS n FROM proxy_calls WHERE agent_id = $1 AND at >= $2 AND refused IS NULL GROUP BY service_id")
        .bind(agent_id.to_owned())
        .bind(since)
        .fetch_all(&db.pool)
        .await?;
    let mut proxy_calls = 0;
    for r in &calls {
        let n = crate::db::get_u64(r, "n")?;
        proxy_calls += n;
        service_samples += n;
        services.insert(r.try_get("service_id")?);
    }
    let observations = count(
        db,
        "SELECT COUNT(*) AS n FROM observations WHERE agent_id = $1 AND created_at >= $2",
        agent_id,
        since,
    )
    .await?;
    let receipts = count(
        db,
        "SELECT COUNT(*) AS n FROM receipts WHERE agent_id = $1 AND submitted_at >= $2",
        agent_id,
        since,
    )
    .await?;
    let cosigned = count(
        db,
        "SELECT COUNT(*) AS n FROM receipts WHERE agent_id = $1 AND submitted_at >= $2 AND agent_signed = 1 AND service_signed = 1",
        agent_id,
        since,
    )
    .await?;
    let flags = count(
        db,
        "SELECT COUNT(*) AS n FROM agent_flags WHERE agent_id = $1 AND at >= $2",
        agent_id,
        since,
    )
    .await?;
    Ok(ReputationInputs {
        volume: observations + proxy_calls + receipts,
        registered_at_ms: registered_at,
        now_ms: now,
        buckets: buckets.into_values().collect(),
        receipts,
        receipts_cosigned: cosigned,
        services: services.len() as u64,
        service_samples,
        reported,
        others: others.into_values().collect(),
        abuse_flags: flags,
        attempts: proxy_calls + receipts + flags,
    })
}
