//! The service catalog: services and the hosts that belong to them. A host is "known"
//! when it, or a parent domain of it, is listed (`api.stripe.com` under `stripe.com`).

use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::Db;
use crate::db::DbResult;

/// One catalog entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Service {
    /// Stable id, e.g. `stripe`.
    pub id: String,
    /// Display name (defaults to the id).
    #[serde(default)]
    pub name: String,
    /// Hosts that belong to it, lower-case, e.g. `api.stripe.com`.
    pub hosts: Vec<String>,
    /// The gateway's sampling rate, for a service of the gateway's catalog.
    #[serde(default)]
    pub sampling_rate: Option<f64>,
}

/// Adds or replaces services (a host moves to the service that lists it last), and notes
/// each sampling rate that differs from the last one noted for its service, from `now`.
pub async fn upsert(db: &Db, services: Vec<Service>, now: i64) -> DbResult<()> {
    db.write(move |conn| {
        Box::pin(async move {
            for s in services {
                let name = if s.name.is_empty() {
                    s.id.clone()
                } else {
                    s.name.clone()
                };
                sqlx::query(
                    "INSERT INTO services (service_id, name, created_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (service_id) DO UPDATE SET name = excluded.name",
                )
                .bind(s.id.clone())
                .bind(name)
                .bind(now)
                .execute(&mut *conn)
                .await?;
                if let Some(rate) = s.sampling_rate {
                    let last = sqlx::query(
                        "SELECT sampling_rate FROM service_rates WHERE service_id = $1 ORDER BY since DESC LIMIT 1",
                    )
                    .bind(s.id.clone())
                    .fetch_optional(&mut *conn)
                    .await?;
                    let last: Option<f64> = match last {
                        Some(r) => Some(r.try_get("sampling_rate")?),
                        None => None,
                    };
                    if last != Some(rate) {
                        sqlx::query(
                            "INSERT INTO service_rates (service_id, sampling_rate, since) VALUES ($1, $2, $3) \
                             ON CONFLICT (service_id, since) DO NOTHING",
                        )
                        .bind(s.id.clone())
                        .bind(rate)
                        .bind(now)
                        .execute(&mut *conn)
                        .await?;
                    }
                }
                for host in s.hosts {
                    sqlx::query(
                        "INSERT INTO service_hosts (host, service_id) VALUES ($1, $2) \
                         ON CONFLICT (host) DO UPDATE SET service_id = excluded.service_id",
                    )
                    .bind(host.to_lowercase())
                    .bind(s.id.clone())
                    .execute(&mut *conn)
                    .await?;
                }
            }
            Ok(())
        })
    })
    .await
}

/// The sampling rate `service_id` had for the salt of the day `[from, until)` (unix ms): the
/// one in force when the day began, else the first noted during it; `None` when none was
/// ever noted by then.
pub async fn rate_for_day(
    db: &Db,
    service_id: &str,
    from: i64,
    until: i64,
) -> DbResult<Option<f64>> {
    let row = sqlx::query(
        "SELECT sampling_rate FROM service_rates WHERE service_id = $1 AND since < $3 \
         ORDER BY CASE WHEN since <= $2 THEN 0 ELSE 1 END, \
                  CASE WHEN since <= $2 THEN -since ELSE since END LIMIT 1",
    )
    .bind(service_id.to_owned())
    .bind(from)
    .bind(until)
    .fetch_optional(&db.pool)
    .await?;
    Ok(match row {
        Some(r) => Some(r.try_get("sampling_rate")?),
        None => None,
    })
}

/// Every service with its hosts, sorted by id.
pub async fn list(db: &Db) -> DbResult<Vec<Service>> {
    let services = sqlx::query("SELECT service_id, name FROM services ORDER BY service_id")
        .fetch_all(&db.pool)
        .await?;
    let hosts = sqlx::query("SELECT service_id, host FROM service_hosts ORDER BY host")
        .fetch_all(&db.pool)
        .await?;
    let mut out = Vec::with_capacity(services.len());
    for row in services {
        let id: String = row.try_get("service_id")?;
        let mut list = Vec::new();
        for h in &hosts {
            if h.try_get::<String, _>("service_id")? == id {
                list.push(h.try_get("host")?);
            }
        }
        out.push(Service {
            sampling_rate: None,
            name: row.try_get("name")?,
            id,
            hosts: list,
        });
    }
    Ok(out)
}

/// The service a host belongs to: the host itself or its nearest listed parent domain.
pub async fn service_for_host(db: &Db, host: &str) -> DbResult<Option<String>> {
    let host = host.to_lowercase();
    let mut candidates = vec![host.as_str()];
    let mut rest = host.as_str();
    while let Some((_, parent)) = rest.split_once('.') {
        if parent.contains('.') {
            candidates.push(parent);
        }
        rest = parent;
    }
    for c in candidates {
        let row = sqlx::query("SELECT service_id FROM service_hosts WHERE host = $1")
            .bind(c.to_owned())
            .fetch_optional(&db.pool)
            .await?;
        if let Some(r) = row {
            return Ok(Some(r.try_get("service_id")?));
        }
    }
    Ok(None)
}
