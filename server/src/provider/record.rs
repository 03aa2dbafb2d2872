//! Recording a submission (SPEC §11), all in one transaction: the directive is completed
//! only by the provider holding a live lease, the submission is stored as a reading, the
//! displacement rule decides whether the displayed score changes, and the ledger credits
//! the provider 70 % of the price.

use lowdown_core::benchmark::displace::{decide, Decision, Displayed, Reading};
use lowdown_core::benchmark::submission::Checked;
use lowdown_core::benchmark::{provider_share_millicredits, Kind};
use sqlx::{AnyConnection, Row};

use super::lease::{diagnose, Misuse};
use super::store::{directive_row, DIRECTIVE_COLUMNS};
use crate::db::{random_id, Db};
use crate::error::{AppError, AppResult};

/// What a recorded submission came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// `bs_` + 16 hex.
    pub submission_id: String,
    /// The score recorded (the core's recomputation).
    pub recorded_score: f64,
    /// Whether (and why) the displayed score changed.
    pub decision: Decision,
    /// Credited to the provider, in thousandths of a credit.
    pub millicredits: i64,
}

async fn displayed(
    conn: &mut AnyConnection,
    service: &str,
    kind: Kind,
) -> AppResult<Option<(Displayed, String)>> {
    let row = sqlx::query("SELECT value, set_at, submission_id FROM benchmark_scores WHERE service_id = $1 AND kind = $2")
        .bind(service.to_owned())
        .bind(kind.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|r| {
        Ok((
            Displayed {
                value: r.try_get(0)?,
                set_at_ms: r.try_get(1)?,
            },
            r.try_get(2)?,
        ))
    })
    .transpose()
}

/// Readings of the service since the displayed score was set (the one that set it left
/// out), oldest first; the new submission is already among them.
async fn readings(
    conn: &mut AnyConnection,
    service: &str,
    kind: Kind,
    since: Option<(i64, String)>,
) -> AppResult<Vec<Reading>> {
    let (from, except) = since.unwrap_or((i64::MIN, String::new()));
    let rows = sqlx::query(
        "SELECT provider_id, recorded_score, created_at FROM benchmark_submissions \
         WHERE service_id = $1 AND kind = $2 AND created_at >= $3 AND submission_id <> $4 \
         ORDER BY created_at, submission_id",
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
                provider_id: r.try_get(0)?,
                score: r.try_get(1)?,
                at_ms: r.try_get(2)?,
            })
        })
        .collect()
}

/// Records `checked` (its `overall_score` as submitted was `submitted_score`) from
/// `provider`, at `now`.
pub async fn submit(
    db: &Db,
    provider: &str,
    checked: Checked,
    submitted_score: f64,
    now: i64,
) -> AppResult<Result<Recorded, Misuse>> {
    let submission_id = random_id("bs_", 8)?;
    let ledger_id = random_id("le_", 8)?;
    let provider = provider.to_owned();
    db.write(move |conn| {
        Box::pin(async move {
            let id = checked.directive_id.clone();
            let sql = format!("SELECT {DIRECTIVE_COLUMNS} FROM benchmark_directives WHERE directive_id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id.clone()).fetch_optional(&mut *conn).await?;
            let Some(d) = row.as_ref().map(directive_row).transpose()? else {
                return Ok(Err(Misuse::Unknown));
            };
            if d.leased_to(now) != Some(provider.as_str()) {
                return Ok(Err(diagnose(conn, &d, &provider, now).await?));
            }
            sqlx::query(
                "UPDATE benchmark_claims SET ended_at = $1, ended = 'submitted' WHERE claim_id = \
                 (SELECT claim_id FROM benchmark_directives WHERE directive_id = $2)",
            )
            .bind(now)
            .bind(id.clone())
            .execute(&mut *conn)
            .await?;
            let done = sqlx::query(
                "UPDATE benchmark_directives SET status = 'done', completed_at = $1, submission_id = $2 \
                 WHERE directive_id = $3 AND status = 'open' AND holder = $4 AND lease_expires_at > $1",
            )
            .bind(now)
            .bind(submission_id.clone())
            .bind(id.clone())
            .bind(provider.clone())
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if done != 1 {
                return Err(AppError::internal(format!("directive {id} changed under its lease holder")));
            }
            let dims = serde_json::to_string(&checked.dimensions).map_err(AppError::internal)?;
            let tests = serde_json::to_string(&checked.test_results).map_err(AppError::internal)?;
            sqlx::query(
                "INSERT INTO benchmark_submissions (submission_id, directive_id, provider_id, service_id, kind, dimensions, \
                 overall_score, recorded_score, test_results, runner_id, execution_time_ms, displaced, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, $12)",
            )
            .bind(submission_id.clone())
            .bind(id.clone())
            .bind(provider.clone())
            .bind(d.service_id.clone())
            .bind(d.kind.as_str())
            .bind(dims)
            .bind(submitted_score)
            .bind(checked.recorded_score)
            .bind(tests)
            .bind(checked.runner_id.clone())
            .bind(checked.execution_time_ms)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            let current = displayed(conn, &d.service_id, d.kind).await?;
            let since = current.as_ref().map(|(c, s)| (c.set_at_ms, s.clone()));
            let read = readings(conn, &d.service_id, d.kind, since).await?;
            let decision = decide(current.as_ref().map(|(c, _)| c), &read, now);
            if let (true, Some(value), Some(reason)) = (decision.replace, decision.value, decision.reason) {
                let reason = serde_json::to_value(reason).map_err(AppError::internal)?;
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
                .bind(submission_id.clone())
                .execute(&mut *conn)
                .await?;
                sqlx::query("UPDATE benchmark_submissions SET displaced = 1 WHERE submission_id = $1")
                    .bind(submission_id.clone())
                    .execute(&mut *conn)
                    .await?;
            }
            let millicredits = provider_share_millicredits(d.price_credits);
            sqlx::query(
                "INSERT INTO provider_ledger (entry_id, provider_id, directive_id, submission_id, millicredits, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(ledger_id)
            .bind(provider)
            .bind(id)
            .bind(submission_id.clone())
            .bind(millicredits)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            Ok(Ok(Recorded { submission_id, recorded_score: checked.recorded_score, decision, millicredits }))
        })
    })
    .await
}
