//! Recording a submission (SPEC §11), each in one transaction that first checks the
//! caller still holds a live lease.
//!
//! - A `protocol` result the server's own probe agreed with ([`submit_protocol`]): the
//!   directive is completed, the submission stored as a reading, the displacement rule
//!   decides whether the displayed score changes, and the ledger credits the provider 70 %
//!   of the price.
//! - A `protocol` result the probe contradicted or could not confirm ([`refuse`]): nothing
//!   is stored but the end of the claim (and, for a contradiction, a disagreement of the
//!   provider); the directive is back in the queue.
//! - `agent` results wait for agreement: [`crate::provider::agree`].

use lowdown_core::benchmark::displace::{decide, Decision, Displayed, Reading};
use lowdown_core::benchmark::submission::Checked;
use lowdown_core::benchmark::{provider_share_millicredits, Kind};
use sqlx::{AnyConnection, Row};

use super::leases::{diagnose, Misuse};
use super::provider::{directive_row, Directive, DIRECTIVE_COLUMNS};
use crate::db::{random_id, Db};
use crate::db::{DbError, DbResult};

/// What a recorded submission came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// `bs_` + 16 hex.
    pub submission_id: String,
    /// The score recorded (the core's recomputation).
    pub recorded_score: f64,
    /// Whether (and why) the displayed score changed.
    pub decision: Decision,
    /// Credited to the provider now, in thousandths of a credit.
    pub millicredits: i64,
}

/// Why the server's probe turned a `protocol` submission down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turned {
    /// It contradicted the probe on `field`: a disagreement of the provider.
    Contradicted {
        /// `tool_count`, `dimensions.schema_quality`, …
        field: String,
    },
    /// The probe could not see as far as the submission claims: nobody's fault.
    Unverified,
}

async fn displayed(
    conn: &mut AnyConnection,
    service: &str,
    kind: Kind,
) -> DbResult<Option<(Displayed, String)>> {
    let row = sqlx::query("SELECT value, set_at, submission_id FROM benchmark_scores WHERE service_id = $1 AND kind = $2")
        .bind(service.to_owned())
        .bind(kind.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|r| {
        Ok((
            Displayed {
                value: r.try_get("value")?,
                set_at_ms: r.try_get("set_at")?,
            },
            r.try_get("submission_id")?,
        ))
    })
    .transpose()
}

/// Readings of the service counted since the displayed score was set (the one that set
/// it left out), oldest first; the new ones are already among them.
async fn readings(
    conn: &mut AnyConnection,
    service: &str,
    kind: Kind,
    since: Option<(i64, String)>,
) -> DbResult<Vec<Reading>> {
    let (from, except) = since.unwrap_or((i64::MIN, String::new()));
    let rows = sqlx::query(
        "SELECT provider_id, recorded_score, counted_at FROM benchmark_submissions \
         WHERE service_id = $1 AND kind = $2 AND status = 'reading' AND counted_at >= $3 \
         AND submission_id <> $4 ORDER BY counted_at, created_at, submission_id",
    )
    .bind(service.to_owned())
    .bind(kind.as_str())
    .bind(from)
    .bind(except)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Reading {
                provider_id: r.try_get("provider_id")?,
                score: r.try_get("recorded_score")?,
                at_ms: r.try_get("counted_at")?,
            })
        })
        .collect()
}

/// The directive `id` when `provider` holds its live lease at `now`, else the misuse.
async fn leased(
    conn: &mut AnyConnection,
    id: &str,
    provider: &str,
    now: i64,
) -> DbResult<Result<Directive, Misuse>> {
    let sql =
        format!("SELECT {DIRECTIVE_COLUMNS} FROM benchmark_directives WHERE directive_id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_owned())
        .fetch_optional(&mut *conn)
        .await?;
    let Some(d) = row.as_ref().map(directive_row).transpose()? else {
        return Ok(Err(Misuse::Unknown));
    };
    if d.leased_to(now) != Some(provider) {
        return Ok(Err(diagnose(conn, &d, provider, now).await?));
    }
    Ok(Ok(d))
}

/// Ends the directive's current claim as `how` and opens the directive again (no holder).
pub(crate) async fn end_lease(
    conn: &mut AnyConnection,
    id: &str,
    now: i64,
    how: &str,
) -> DbResult<()> {
    sqlx::query(
        "UPDATE benchmark_claims SET ended_at = $1, ended = $2 WHERE claim_id = \
         (SELECT claim_id FROM benchmark_directives WHERE directive_id = $3)",
    )
    .bind(now)
    .bind(how.to_owned())
    .bind(id.to_owned())
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE benchmark_directives SET holder = NULL, lease_expires_at = NULL, claim_id = NULL \
         WHERE directive_id = $1",
    )
    .bind(id.to_owned())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A provider's checked result on its way to storage: what `protocol` and `agent`
/// submissions both start from.
pub struct Submission {
    /// `bs_` + 16 hex, made fresh.
    pub submission_id: String,
    /// Who submits it.
    pub provider: String,
    /// The keyed id of the provider's client network.
    pub network: Option<String>,
    /// The result as the core checked it.
    pub checked: Checked,
    /// The overall score as submitted.
    pub submitted_score: f64,
}

impl Submission {
    /// A submission with a fresh id.
    pub fn new(
        provider: &str,
        network: Option<String>,
        checked: Checked,
        submitted_score: f64,
    ) -> DbResult<Submission> {
        Ok(Submission {
            submission_id: random_id("bs_", 8)?,
            provider: provider.to_owned(),
            network,
            checked,
            submitted_score,
        })
    }

    /// The directive when the provider holds its live lease at `now`, else the misuse.
    pub(crate) async fn leased(
        &self,
        conn: &mut AnyConnection,
        now: i64,
    ) -> DbResult<Result<Directive, Misuse>> {
        leased(conn, &self.checked.directive_id, &self.provider, now).await
    }

    /// Stores it as a row of `status` (`reading` or `pending`) for directive `d`.
    pub(crate) async fn insert(
        &self,
        conn: &mut AnyConnection,
        d: &Directive,
        status: &str,
        now: i64,
    ) -> DbResult<()> {
        let row = NewRow {
            submission_id: &self.submission_id,
            directive: d,
            provider: &self.provider,
            network: self.network.as_deref(),
            checked: &self.checked,
            submitted_score: self.submitted_score,
            status,
            now,
        };
        insert_submission(conn, row).await
    }
}

/// A submission row as stored.
struct NewRow<'a> {
    pub submission_id: &'a str,
    pub directive: &'a Directive,
    pub provider: &'a str,
    pub network: Option<&'a str>,
    pub checked: &'a Checked,
    pub submitted_score: f64,
    /// `reading` or `pending`.
    pub status: &'a str,
    pub now: i64,
}

async fn insert_submission(conn: &mut AnyConnection, r: NewRow<'_>) -> DbResult<()> {
    let c = r.checked;
    let dims = serde_json::to_string(&c.dimensions).map_err(DbError::internal)?;
    let tests = serde_json::to_string(&c.test_results).map_err(DbError::internal)?;
    let observed = c
        .observed
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(DbError::internal)?;
    let counted_at = (r.status == "reading").then_some(r.now);
    sqlx::query(
        "INSERT INTO benchmark_submissions (submission_id, directive_id, provider_id, service_id, kind, dimensions, \
         overall_score, recorded_score, test_results, runner_id, execution_time_ms, displaced, created_at, \
         status, counted_at, network, observed) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, $12, $13, $14, $15, $16)",
    )
    .bind(r.submission_id.to_owned())
    .bind(r.directive.directive_id.clone())
    .bind(r.provider.to_owned())
    .bind(r.directive.service_id.clone())
    .bind(r.directive.kind.as_str())
    .bind(dims)
    .bind(r.submitted_score)
    .bind(c.recorded_score)
    .bind(tests)
    .bind(c.runner_id.clone())
    .bind(c.execution_time_ms)
    .bind(r.now)
    .bind(r.status.to_owned())
    .bind(counted_at)
    .bind(r.network.map(str::to_owned))
    .bind(observed)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Marks directive `d` done by `submission_id`.
pub(crate) async fn complete(
    conn: &mut AnyConnection,
    d: &Directive,
    submission_id: &str,
    now: i64,
) -> DbResult<()> {
    let done = sqlx::query(
        "UPDATE benchmark_directives SET status = 'done', completed_at = $1, submission_id = $2, \
         holder = NULL, lease_expires_at = NULL, claim_id = NULL WHERE directive_id = $3 AND status = 'open'",
    )
    .bind(now)
    .bind(submission_id.to_owned())
    .bind(d.directive_id.clone())
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if done != 1 {
        return Err(DbError::internal(format!(
            "directive {} changed under its lease holder",
            d.directive_id
        )));
    }
    Ok(())
}

/// Runs the displacement rule after new readings of `d`'s service, the last of them
/// `submission_id`, and stores the decision.
pub(crate) async fn display(
    conn: &mut AnyConnection,
    d: &Directive,
    submission_id: &str,
    now: i64,
) -> DbResult<Decision> {
    let current = displayed(conn, &d.service_id, d.kind).await?;
    let since = current.as_ref().map(|(c, s)| (c.set_at_ms, s.clone()));
    let read = readings(conn, &d.service_id, d.kind, since).await?;
    let decision = decide(current.as_ref().map(|(c, _)| c), &read, now);
    if let (true, Some(value), Some(reason)) = (decision.replace, decision.value, decision.reason) {
        let reason = serde_json::to_value(reason).map_err(DbError::internal)?;
        sqlx::query(
            "INSERT INTO benchmark_scores (service_id, kind, value, set_at, reason, providers, submission_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (service_id, kind) DO UPDATE SET \
             value = excluded.value, set_at = excluded.set_at, reason = excluded.reason, \
             providers = excluded.providers, submission_id = excluded.submission_id",
        )
        .bind(d.service_id.clone())
        .bind(d.kind.as_str())
        .bind(value)
        .bind(now)
        .bind(reason.as_str().unwrap_or("").to_owned())
        .bind(decision.providers as i64)
        .bind(submission_id.to_owned())
        .execute(&mut *conn)
        .await?;
        sqlx::query("UPDATE benchmark_submissions SET displaced = 1 WHERE submission_id = $1")
            .bind(submission_id.to_owned())
            .execute(&mut *conn)
            .await?;
    }
    Ok(decision)
}

/// Credits `provider` with `millicredits` for `submission_id` of directive `directive`.
pub(crate) async fn credit(
    conn: &mut AnyConnection,
    provider: &str,
    directive: &str,
    submission_id: &str,
    millicredits: i64,
    now: i64,
) -> DbResult<()> {
    sqlx::query(
        "INSERT INTO provider_ledger (entry_id, provider_id, directive_id, submission_id, millicredits, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(random_id("le_", 8)?)
    .bind(provider.to_owned())
    .bind(directive.to_owned())
    .bind(submission_id.to_owned())
    .bind(millicredits)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Counts a disagreement of `provider` on directive `directive` (`field`: what differed).
pub(crate) async fn disagreement(
    conn: &mut AnyConnection,
    provider: &str,
    directive: &Directive,
    field: &str,
    now: i64,
) -> DbResult<()> {
    sqlx::query(
        "INSERT INTO provider_disagreements (disagreement_id, provider_id, directive_id, kind, field, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(random_id("dg_", 8)?)
    .bind(provider.to_owned())
    .bind(directive.directive_id.clone())
    .bind(directive.kind.as_str())
    .bind(field.to_owned())
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records `checked`, a `protocol` result the server's probe agreed with (its
/// `overall_score` as submitted was `submitted_score`), from `provider` on `network`.
pub async fn submit_protocol(
    db: &Db,
    s: Submission,
    now: i64,
) -> DbResult<Result<Recorded, Misuse>> {
    db.write(move |conn| {
        Box::pin(async move {
            let d = match s.leased(conn, now).await? {
                Ok(d) => d,
                Err(m) => return Ok(Err(m)),
            };
            let id = &s.submission_id;
            end_lease(conn, &d.directive_id, now, "submitted").await?;
            complete(conn, &d, id, now).await?;
            s.insert(conn, &d, "reading", now).await?;
            let decision = display(conn, &d, id, now).await?;
            let millicredits = provider_share_millicredits(d.price_credits);
            credit(conn, &s.provider, &d.directive_id, id, millicredits, now).await?;
            Ok(Ok(Recorded {
                recorded_score: s.checked.recorded_score,
                submission_id: s.submission_id,
                decision,
                millicredits,
            }))
        })
    })
    .await
}

/// Turns a `protocol` submission of `provider` for directive `id` down after the server's
/// probe: the claim ends (`contradicted` or `unverified`), the directive is open again,
/// and a contradiction counts as a disagreement of the provider.
pub async fn refuse(
    db: &Db,
    id: &str,
    provider: &str,
    now: i64,
    why: Turned,
) -> DbResult<Result<(), Misuse>> {
    let (id, provider) = (id.to_owned(), provider.to_owned());
    db.write(move |conn| {
        Box::pin(async move {
            let d = match leased(conn, &id, &provider, now).await? {
                Ok(d) => d,
                Err(m) => return Ok(Err(m)),
            };
            match &why {
                Turned::Contradicted { field } => {
                    end_lease(conn, &id, now, "contradicted").await?;
                    disagreement(conn, &provider, &d, field, now).await?;
                }
                Turned::Unverified => end_lease(conn, &id, now, "unverified").await?,
            }
            Ok(Ok(()))
        })
    })
    .await
}
