//! ProxyCalls (one row per call through the gateway) and the stored audits.

use lowdown_core::gateway::score::{Audit, CallSample};
use serde::Serialize;
use sqlx::Row;

use crate::db::DbResult;
use crate::db::{random_id, Db};

/// One call through the gateway, as stored: no path, query, headers or bodies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProxyCall {
    /// The catalog service.
    pub service_id: String,
    /// The registered agent.
    pub agent_id: String,
    /// The salt its decision used.
    pub salt_id: String,
    /// HTTP method.
    pub method: String,
    /// Upstream status, `None` when no response arrived.
    pub status: Option<u16>,
    /// Milliseconds from arrival to the end of the response body (or the error).
    pub latency_ms: f64,
    /// Response body bytes passed to the agent.
    pub response_bytes: Option<u64>,
    /// What went wrong, if anything.
    pub error_type: Option<String>,
    /// Unix ms of arrival.
    pub at: i64,
    /// The keyed id of the agent's network.
    pub network: Option<String>,
}

/// Stores ProxyCalls in one transaction (multi-row statements of up to 500 rows).
pub async fn insert_many(db: &Db, calls: Vec<ProxyCall>) -> DbResult<()> {
    let mut rows = Vec::with_capacity(calls.len());
    for c in calls {
        rows.push((random_id("pc_", 12)?, c));
    }
    db.write(move |conn| {
        Box::pin(async move {
            for chunk in rows.chunks(500) {
                let mut sql = String::from(
                    "INSERT INTO proxy_calls (call_id, service_id, agent_id, salt_id, method, status, latency_ms, response_bytes, error_type, at, network) VALUES ",
                );
                for i in 0..chunk.len() {
                    let b = i * 11;
                    if i > 0 {
                        sql.push(',');
                    }
                    sql.push('(');
                    sql.push_str(&(1..=11).map(|k| format!("${}", b + k)).collect::<Vec<_>>().join(", "));
                    sql.push(')');
                }
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
                for (id, c) in chunk {
                    q = q
                        .bind(id.clone())
                        .bind(c.service_id.clone())
                        .bind(c.agent_id.clone())
                        .bind(c.salt_id.clone())
                        .bind(c.method.clone())
                        .bind(c.status.map(i64::from))
                        .bind(c.latency_ms)
                        .bind(c.response_bytes.map(|b| i64::try_from(b).unwrap_or(i64::MAX)))
                        .bind(c.error_type.clone())
                        .bind(c.at)
                        .bind(c.network.clone());
                }
                q.execute(&mut *conn).await?;
            }
            Ok(())
        })
    })
    .await
}

/// A sample from a row of `status, latency_ms, agent_id, network` and its weight.
fn sample(r: &sqlx::any::AnyRow, weight: f64) -> Result<CallSample, sqlx::Error> {
    let status: Option<i64> = r.try_get("status")?;
    Ok(CallSample {
        status: status.and_then(|s| u16::try_from(s).ok()),
        latency_ms: r.try_get("latency_ms")?,
        weight,
        agent: r.try_get("agent_id")?,
        network: r.try_get("network")?,
    })
}

/// The `limit` most recent ProxyCalls of a service, newest first.
pub async fn recent(db: &Db, service_id: &str, limit: usize) -> DbResult<Vec<CallSample>> {
    let rows = sqlx::query("SELECT status, latency_ms, agent_id, network FROM proxy_calls WHERE service_id = $1 ORDER BY at DESC LIMIT $2")
        .bind(service_id.to_owned())
        .bind(limit as i64)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(|r| Ok(sample(r, 1.0)?)).collect()
}

/// Organic observations of a service since `since`, with their telemetry weights.
pub async fn observations_since(
    db: &Db,
    service_id: &str,
    since: i64,
) -> DbResult<Vec<CallSample>> {
    let rows = sqlx::query(
        "SELECT status, latency_ms, agent_id, network, weight_tenths FROM observations WHERE service_id = $1 AND created_at >= $2 AND source = 'organic'",
    )
    .bind(service_id.to_owned())
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(sample(
                r,
                r.try_get::<i64, _>("weight_tenths")? as f64 / 10.0,
            )?)
        })
        .collect()
}

/// A stored audit and when it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAudit {
    /// The figures.
    pub audit: Audit,
    /// Unix ms.
    pub checked_at: i64,
}

/// The latest audit of a service.
pub async fn audit_of(db: &Db, service_id: &str) -> DbResult<Option<StoredAudit>> {
    let row = sqlx::query("SELECT flagged, error_rate, p95_p5, n, checked_at FROM service_audits WHERE service_id = $1")
        .bind(service_id.to_owned())
        .fetch_optional(&db.pool)
        .await?;
    Ok(match row {
        None => None,
        Some(r) => Some(StoredAudit {
            audit: Audit {
                flagged: r.try_get::<i64, _>("flagged")? != 0,
                error_rate: r.try_get("error_rate")?,
                p95_p5: r.try_get("p95_p5")?,
                n: crate::db::get_u64(&r, "n")? as usize,
            },
            checked_at: r.try_get("checked_at")?,
        }),
    })
}

/// Stores an audit unless one newer than `due_before` exists (another server ran it):
/// `true` when this one was stored.
pub async fn store_audit(
    db: &Db,
    service_id: &str,
    a: Audit,
    now: i64,
    due_before: i64,
) -> DbResult<bool> {
    let id = service_id.to_owned();
    // A missing figure is written as a literal NULL rather than bound: PostgreSQL fixes a
    // cached statement's parameter types at first use, and an untyped NULL bound first
    // would make a later float parameter fail to decode.
    // Both figures exist exactly when calls were counted.
    let figures = a.error_rate.zip(a.p95_p5);
    let (rate_sql, spread_sql) = if figures.is_some() {
        ("$6", "$7")
    } else {
        ("NULL", "NULL")
    };
    let sql = format!(
        "INSERT INTO service_audits (service_id, flagged, error_rate, p95_p5, n, checked_at) VALUES ($1, $2, {rate_sql}, {spread_sql}, $3, $4) \
         ON CONFLICT (service_id) DO UPDATE SET flagged = excluded.flagged, error_rate = excluded.error_rate, \
         p95_p5 = excluded.p95_p5, n = excluded.n, checked_at = excluded.checked_at \
         WHERE service_audits.checked_at <= $5"
    );
    db.write(move |conn| {
        Box::pin(async move {
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .bind(i64::from(a.flagged))
                .bind(a.n as i64)
                .bind(now)
                .bind(due_before);
            if let Some((rate, spread)) = figures {
                q = q.bind(rate).bind(spread);
            }
            let r = q.execute(&mut *conn).await?;
            Ok(r.rows_affected() == 1)
        })
    })
    .await
}
