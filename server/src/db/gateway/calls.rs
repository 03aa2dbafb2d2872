//! ProxyCalls (one row per request of a catalog service the gateway answers: forwarded, or
//! refused with its reason) and the stored audits. Only forwarded calls are ever counted.

use lowdown_core::gateway::score::{receipt_sample, Audit, AuditFigures, CallSample, Path};
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
    /// The reason the gateway refused it (never forwarded, never counted); `None` when it
    /// was forwarded.
    pub refused: Option<String>,
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
                    "INSERT INTO proxy_calls (call_id, service_id, agent_id, salt_id, method, status, latency_ms, response_bytes, error_type, at, network, refused) VALUES ",
                );
                for i in 0..chunk.len() {
                    let b = i * 12;
                    if i > 0 {
                        sql.push(',');
                    }
                    sql.push('(');
                    sql.push_str(&(1..=12).map(|k| format!("${}", b + k)).collect::<Vec<_>>().join(", "));
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
                        .bind(c.network.clone())
                        .bind(c.refused.clone());
                }
                q.execute(&mut *conn).await?;
            }
            Ok(())
        })
    })
    .await
}

/// A sample from a row of `status, latency_ms, agent_id, network` (and `weight_tenths` for
/// an observation).
fn sample(r: &sqlx::any::AnyRow, path: Path) -> Result<CallSample, sqlx::Error> {
    let status: Option<i64> = r.try_get("status")?;
    let weight = match path {
        Path::Telemetry => r.try_get::<i64, _>("weight_tenths")? as f64 / 10.0,
        _ => 1.0,
    };
    Ok(CallSample {
        status: status.and_then(|s| u16::try_from(s).ok()),
        latency_ms: r.try_get("latency_ms")?,
        weight,
        agent: r.try_get("agent_id")?,
        network: r.try_get("network")?,
        path,
    })
}

/// The `limit` most recent forwarded ProxyCalls of a service, newest first.
pub async fn recent(db: &Db, service_id: &str, limit: usize) -> DbResult<Vec<CallSample>> {
    let rows = sqlx::query("SELECT status, latency_ms, agent_id, network FROM proxy_calls WHERE service_id = $1 AND refused IS NULL ORDER BY at DESC LIMIT $2")
        .bind(service_id.to_owned())
        .bind(limit as i64)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(|r| Ok(sample(r, Path::Gateway)?)).collect()
}

/// The organic observations of a service since `since` (the mirror path), at most the
/// `per_network` most recent of each network (anonymous ones without a network count as
/// one), with their telemetry weights.
pub async fn observations_since(
    db: &Db,
    service_id: &str,
    since: i64,
    per_network: usize,
) -> DbResult<Vec<CallSample>> {
    let rows = sqlx::query(
        "SELECT status, latency_ms, agent_id, network, weight_tenths FROM ( \
           SELECT status, latency_ms, agent_id, network, weight_tenths, \
                  ROW_NUMBER() OVER (PARTITION BY network ORDER BY created_at DESC) AS k \
           FROM observations WHERE service_id = $1 AND source = 'organic' AND created_at >= $2 \
         ) recent WHERE k <= $3",
    )
    .bind(service_id.to_owned())
    .bind(since)
    .bind(per_network as i64)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok(sample(r, Path::Telemetry)?))
        .collect()
}

/// The receipts of a service submitted since `since`, as samples of their weight (0.3 or
/// 1.0); cancelled calls are not counted.
pub async fn receipts_since(db: &Db, service_id: &str, since: i64) -> DbResult<Vec<CallSample>> {
    let rows = sqlx::query(
        "SELECT outcome, latency_ms, agent_id, weight_tenths FROM receipts WHERE service_id = $1 AND submitted_at >= $2",
    )
    .bind(service_id.to_owned())
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let outcome: String = r.try_get("outcome")?;
        let weight = r.try_get::<i64, _>("weight_tenths")? as f64 / 10.0;
        out.extend(receipt_sample(
            &outcome,
            r.try_get("latency_ms")?,
            weight,
            r.try_get("agent_id")?,
        ));
    }
    Ok(out)
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
    let row = sqlx::query(
        "SELECT flagged, error_rate, p95_p5, n, checked_at, \
         gateway_flagged, gateway_error_rate, gateway_p95_p5, gateway_n, \
         telemetry_flagged, telemetry_error_rate, telemetry_p95_p5, telemetry_n \
         FROM service_audits WHERE service_id = $1",
    )
    .bind(service_id.to_owned())
    .fetch_optional(&db.pool)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let figures = |prefix: &str| -> DbResult<AuditFigures> {
        Ok(AuditFigures {
            flagged: r.try_get::<i64, _>(format!("{prefix}flagged").as_str())? != 0,
            error_rate: r.try_get(format!("{prefix}error_rate").as_str())?,
            p95_p5: r.try_get(format!("{prefix}p95_p5").as_str())?,
            n: crate::db::get_u64(&r, format!("{prefix}n").as_str())? as usize,
        })
    };
    let both = figures("")?;
    Ok(Some(StoredAudit {
        audit: Audit {
            flagged: both.flagged,
            error_rate: both.error_rate,
            p95_p5: both.p95_p5,
            n: both.n,
            gateway: figures("gateway_")?,
            telemetry: figures("telemetry_")?,
        },
        checked_at: r.try_get("checked_at")?,
    }))
}

/// The columns of one set of audit figures and its values, a missing figure as a literal
/// NULL rather than bound: PostgreSQL fixes a cached statement's parameter types at first
/// use, and an untyped NULL bound first would make a later float parameter fail to decode.
fn figure_columns(
    prefix: &str,
    f: &AuditFigures,
    next: &mut usize,
) -> (Vec<String>, Vec<String>, Vec<f64>) {
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    let mut floats = Vec::new();
    for (name, v) in [("error_rate", f.error_rate), ("p95_p5", f.p95_p5)] {
        cols.push(format!("{prefix}{name}"));
        match v {
            Some(x) => {
                vals.push(format!("${next}"));
                *next += 1;
                floats.push(x);
            }
            None => vals.push("NULL".into()),
        }
    }
    (cols, vals, floats)
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
    let both = AuditFigures {
        flagged: a.flagged,
        error_rate: a.error_rate,
        p95_p5: a.p95_p5,
        n: a.n,
    };
    // $1..$9: the id, the flags and counts, checked_at and due_before; the figures follow.
    let mut next = 10;
    let mut cols = vec![
        "service_id",
        "flagged",
        "n",
        "gateway_flagged",
        "gateway_n",
        "telemetry_flagged",
        "telemetry_n",
        "checked_at",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    let mut vals: Vec<String> = (1..=8).map(|i| format!("${i}")).collect();
    let mut floats = Vec::new();
    for (prefix, f) in [
        ("", &both),
        ("gateway_", &a.gateway),
        ("telemetry_", &a.telemetry),
    ] {
        let (c, v, x) = figure_columns(prefix, f, &mut next);
        cols.extend(c);
        vals.extend(v);
        floats.extend(x);
    }
    let updates = cols[1..]
        .iter()
        .map(|c| format!("{c} = excluded.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "INSERT INTO service_audits ({}) VALUES ({}) ON CONFLICT (service_id) DO UPDATE SET {updates} \
         WHERE service_audits.checked_at <= $9",
        cols.join(", "),
        vals.join(", ")
    );
    let flag = |b: bool| i64::from(b);
    db.write(move |conn| {
        Box::pin(async move {
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .bind(flag(a.flagged))
                .bind(a.n as i64)
                .bind(flag(a.gateway.flagged))
                .bind(a.gateway.n as i64)
                .bind(flag(a.telemetry.flagged))
                .bind(a.telemetry.n as i64)
                .bind(now)
                .bind(due_before);
            for x in floats {
                q = q.bind(x);
            }
            let r = q.execute(&mut *conn).await?;
            Ok(r.rows_affected() == 1)
        })
    })
    .await
}
