//! Claims and releases (SPEC §11): a claim leases a directive to one provider for 30
//! minutes; a lease past its end is no lease (the directive is back in the queue, no job
//! needed). Each misuse gets its own refusal naming the directive and what went wrong.
//!
//! One claim is decided by one conditional `UPDATE` of the directive row, so two providers
//! racing for it cannot both win (PostgreSQL re-checks the condition after the first
//! commits; SQLite has one writer). A provider holds one lease at a time: its claims are
//! serialised by touching its own `providers` row first.

use lowdown_core::benchmark::LEASE_MS;
use sqlx::{AnyConnection, Row};

use super::provider::{directive_row, Directive, DIRECTIVE_COLUMNS};
use crate::db::DbResult;
use crate::db::{random_id, Db};

/// Why a claim, release or submission was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Misuse {
    /// No such directive.
    Unknown,
    /// A submission completed it.
    Completed {
        /// Unix ms.
        at: i64,
    },
    /// The caller already holds its lease.
    AlreadyClaimed {
        /// Lease end, unix ms.
        until: i64,
    },
    /// The caller holds another directive's lease.
    LeaseHeld {
        /// That directive.
        other: String,
        /// Its lease end.
        until: i64,
    },
    /// Another provider holds its lease.
    Foreign {
        /// Lease end, unix ms.
        until: i64,
    },
    /// The caller does not hold its lease and never held one that could still count.
    NotClaimed,
    /// The caller's lease ended before this request.
    LeaseExpired {
        /// When it ended, unix ms.
        at: i64,
    },
}

async fn read(conn: &mut AnyConnection, id: &str) -> DbResult<Option<Directive>> {
    let sql =
        format!("SELECT {DIRECTIVE_COLUMNS} FROM benchmark_directives WHERE directive_id = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_owned())
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(directive_row)
        .transpose()
}

/// Why `provider` may not act on `d` as the holder at `now`.
pub(crate) async fn diagnose(
    conn: &mut AnyConnection,
    d: &Directive,
    provider: &str,
    now: i64,
) -> DbResult<Misuse> {
    if let (Some(at), "done") = (d.completed_at, d.status.as_str()) {
        return Ok(Misuse::Completed { at });
    }
    let own = sqlx::query(
        "SELECT expires_at FROM benchmark_claims WHERE directive_id = $1 AND provider_id = $2 \
         AND ended_at IS NULL ORDER BY claimed_at DESC LIMIT 1",
    )
    .bind(d.directive_id.clone())
    .bind(provider.to_owned())
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(r) = own {
        let expires: i64 = r.try_get("expires_at")?;
        if expires <= now {
            return Ok(Misuse::LeaseExpired { at: expires });
        }
    }
    Ok(match (d.leased_to(now), d.lease_expires_at) {
        (Some(h), Some(until)) if h != provider => Misuse::Foreign { until },
        (Some(_), Some(until)) => Misuse::AlreadyClaimed { until },
        _ => Misuse::NotClaimed,
    })
}

/// Whether `provider` holds directive `id`'s live lease at `now` (a read, no write): the
/// misuse otherwise.
pub async fn holds(db: &Db, id: &str, provider: &str, now: i64) -> DbResult<Result<(), Misuse>> {
    let mut conn = db.pool.acquire().await?;
    let Some(d) = read(&mut conn, id).await? else {
        return Ok(Err(Misuse::Unknown));
    };
    if d.leased_to(now) == Some(provider) {
        return Ok(Ok(()));
    }
    Ok(Err(diagnose(&mut conn, &d, provider, now).await?))
}

/// Leases directive `id` to `provider` until `now + 30 min`; the lease end, or the misuse.
pub async fn claim(db: &Db, id: &str, provider: &str, now: i64) -> DbResult<Result<i64, Misuse>> {
    let claim_id = random_id("cl_", 8)?;
    let (id, provider) = (id.to_owned(), provider.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query("UPDATE providers SET last_claim_at = $1 WHERE provider_id = $2")
                .bind(now)
                .bind(provider.clone())
                .execute(&mut *conn)
                .await?;
            let Some(d) = read(conn, &id).await? else {
                return Ok(Err(Misuse::Unknown));
            };
            if let Some(at) = d.completed_at {
                return Ok(Err(Misuse::Completed { at }));
            }
            match (d.leased_to(now), d.lease_expires_at) {
                (Some(h), Some(until)) if h == provider => return Ok(Err(Misuse::AlreadyClaimed { until })),
                (Some(_), Some(until)) => return Ok(Err(Misuse::Foreign { until })),
                _ => {}
            }
            let other = sqlx::query(
                "SELECT directive_id, lease_expires_at FROM benchmark_directives WHERE holder = $1 \
                 AND status = 'open' AND lease_expires_at > $2 AND directive_id <> $3 LIMIT 1",
            )
            .bind(provider.clone())
            .bind(now)
            .bind(id.clone())
            .fetch_optional(&mut *conn)
            .await?;
            if let Some(r) = other {
                return Ok(Err(Misuse::LeaseHeld { other: r.try_get("directive_id")?, until: r.try_get("lease_expires_at")? }));
            }
            let until = now + LEASE_MS;
            let won = sqlx::query(
                "UPDATE benchmark_directives SET holder = $1, lease_expires_at = $2, claim_id = $3 \
                 WHERE directive_id = $4 AND status = 'open' AND (holder IS NULL OR lease_expires_at <= $5)",
            )
            .bind(provider.clone())
            .bind(until)
            .bind(claim_id.clone())
            .bind(id.clone())
            .bind(now)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if won != 1 {
                // Another provider's claim committed first.
                let d = read(conn, &id).await?;
                let until = d.and_then(|d| d.lease_expires_at).unwrap_or(now);
                return Ok(Err(Misuse::Foreign { until }));
            }
            sqlx::query(
                "INSERT INTO benchmark_claims (claim_id, directive_id, provider_id, claimed_at, expires_at, ended_at, ended) \
                 VALUES ($1, $2, $3, $4, $5, NULL, NULL)",
            )
            .bind(claim_id)
            .bind(id)
            .bind(provider)
            .bind(now)
            .bind(until)
            .execute(&mut *conn)
            .await?;
            Ok(Ok(until))
        })
    })
    .await
}

/// Ends `provider`'s live lease on directive `id`: the directive is open again at once.
pub async fn release(db: &Db, id: &str, provider: &str, now: i64) -> DbResult<Result<(), Misuse>> {
    let (id, provider) = (id.to_owned(), provider.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            let Some(d) = read(conn, &id).await? else {
                return Ok(Err(Misuse::Unknown));
            };
            if d.leased_to(now) != Some(provider.as_str()) {
                return Ok(Err(diagnose(conn, &d, &provider, now).await?));
            }
            sqlx::query(
                "UPDATE benchmark_claims SET ended_at = $1, ended = 'released' WHERE claim_id = \
                 (SELECT claim_id FROM benchmark_directives WHERE directive_id = $2)",
            )
            .bind(now)
            .bind(id.clone())
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "UPDATE benchmark_directives SET holder = NULL, lease_expires_at = NULL, claim_id = NULL \
                 WHERE directive_id = $1",
            )
            .bind(id)
            .execute(&mut *conn)
            .await?;
            Ok(Ok(()))
        })
    })
    .await
}
