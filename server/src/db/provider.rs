//! Storage of provider mode (migrations 0007, 0012): providers, directives, submissions,
//! disagreements, the displayed scores and the ledger. Claims and submissions, which
//! change several tables at once, are in [`super::leases`], [`super::submissions`] and
//! [`crate::provider::agree`].

use std::collections::BTreeMap;

use lowdown_core::benchmark::agreement::Run;
use lowdown_core::benchmark::directive::{check_spec, DirectiveError, NewDirective};
use lowdown_core::benchmark::Kind;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

use crate::db::{random_id, Db};
use crate::db::{DbError, DbResult};

/// A registered provider.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Provider {
    /// `pv_` + 16 hex.
    pub provider_id: String,
    /// The agent it is.
    pub agent_id: String,
    /// Unix ms of its registration as a provider.
    pub created_at: i64,
}

/// A stored directive.
#[derive(Debug, Clone, PartialEq)]
pub struct Directive {
    /// `bd_` + 16 hex.
    pub directive_id: String,
    /// The catalog service it benchmarks.
    pub service_id: String,
    /// What to run.
    pub kind: Kind,
    /// How, as posted (checked by the core).
    pub spec: Value,
    /// Whole credits the vendor pays.
    pub price_credits: i64,
    /// Higher reputation first.
    pub critical: bool,
    /// Unix ms.
    pub created_at: i64,
    /// `open` or `done`.
    pub status: String,
    /// The provider holding (or last holding) the lease.
    pub holder: Option<String>,
    /// When that lease ends (or ended).
    pub lease_expires_at: Option<i64>,
    /// Unix ms of the submission that completed it.
    pub completed_at: Option<i64>,
    /// That submission.
    pub submission_id: Option<String>,
}

impl Directive {
    /// Why this stored directive may not reach a provider: its spec fails today's rules
    /// (the core's [`check_spec`], e.g. a `{command, args}` row stored before local
    /// programs were refused). Such a row stays stored, for its history, but is never
    /// listed, leased or scored.
    pub fn refused(&self) -> Option<DirectiveError> {
        check_spec(self.kind, Some(&self.spec)).err()
    }

    /// The provider whose lease is live at `now`.
    pub fn leased_to(&self, now: i64) -> Option<&str> {
        match (&self.holder, self.lease_expires_at) {
            (Some(h), Some(until)) if self.status == "open" && until > now => Some(h),
            _ => None,
        }
    }
}

pub(crate) const DIRECTIVE_COLUMNS: &str = "directive_id, service_id, kind, spec, price_credits, critical, created_at, status, holder, lease_expires_at, completed_at, submission_id";

/// A directive from a row selected with [`DIRECTIVE_COLUMNS`], read by column name.
pub(crate) fn directive_row(r: &AnyRow) -> DbResult<Directive> {
    let kind: String = r.try_get("kind")?;
    let spec: String = r.try_get("spec")?;
    Ok(Directive {
        directive_id: r.try_get("directive_id")?,
        service_id: r.try_get("service_id")?,
        kind: Kind::parse(&kind).ok_or_else(|| DbError::internal(format!("stored kind {kind}")))?,
        spec: serde_json::from_str(&spec).map_err(DbError::internal)?,
        price_credits: r.try_get("price_credits")?,
        critical: r.try_get::<i64, _>("critical")? != 0,
        created_at: r.try_get("created_at")?,
        status: r.try_get("status")?,
        holder: r.try_get("holder")?,
        lease_expires_at: r.try_get("lease_expires_at")?,
        completed_at: r.try_get("completed_at")?,
        submission_id: r.try_get("submission_id")?,
    })
}

/// The provider an agent registered as.
pub async fn provider_by_agent(db: &Db, agent_id: &str) -> DbResult<Option<Provider>> {
    Ok(sqlx::query_as(
        "SELECT provider_id, agent_id, created_at FROM providers WHERE agent_id = $1",
    )
    .bind(agent_id.to_owned())
    .fetch_optional(&db.pool)
    .await?)
}

/// Every provider with its agent's registration time, for the reputation order.
pub async fn providers_with_agents(db: &Db) -> DbResult<Vec<(Provider, i64)>> {
    let rows = sqlx::query(
        "SELECT p.provider_id, p.agent_id, p.created_at, a.created_at AS agent_since FROM providers p \
         JOIN agents a ON a.agent_id = p.agent_id ORDER BY p.provider_id",
    )
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| Ok((Provider::from_row(r)?, r.try_get("agent_since")?)))
        .collect()
}

/// Registers `agent_id` as a provider; `true` when it was not one yet.
pub async fn register_provider(db: &Db, agent_id: &str, now: i64) -> DbResult<(Provider, bool)> {
    let id = random_id("pv_", 8)?;
    let agent = agent_id.to_owned();
    db.write(move |conn| {
        Box::pin(async move {
            let created = sqlx::query(
                "INSERT INTO providers (provider_id, agent_id, created_at, last_claim_at) \
                 VALUES ($1, $2, $3, NULL) ON CONFLICT (agent_id) DO NOTHING",
            )
            .bind(id)
            .bind(agent.clone())
            .bind(now)
            .execute(&mut *conn)
            .await?
            .rows_affected()
                == 1;
            let provider = sqlx::query_as(
                "SELECT provider_id, agent_id, created_at FROM providers WHERE agent_id = $1",
            )
            .bind(agent)
            .fetch_one(&mut *conn)
            .await?;
            Ok((provider, created))
        })
    })
    .await
}

/// Stores a checked directive, open.
pub async fn insert_directive(db: &Db, d: &NewDirective, now: i64) -> DbResult<Directive> {
    let id = random_id("bd_", 8)?;
    let spec = serde_json::to_value(&d.spec).map_err(DbError::internal)?;
    let out = Directive {
        directive_id: id,
        service_id: d.service_id.clone(),
        kind: d.kind,
        spec,
        price_credits: d.price_credits,
        critical: d.critical,
        created_at: now,
        status: "open".into(),
        holder: None,
        lease_expires_at: None,
        completed_at: None,
        submission_id: None,
    };
    let row = out.clone();
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO benchmark_directives (directive_id, seq, service_id, kind, spec, price_credits, critical, created_at, status, holder, lease_expires_at, claim_id, completed_at, submission_id) \
                 SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6, $7, 'open', NULL, NULL, NULL, NULL, NULL FROM benchmark_directives",
            )
            .bind(row.directive_id)
            .bind(row.service_id)
            .bind(row.kind.as_str())
            .bind(row.spec.to_string())
            .bind(row.price_credits)
            .bind(i64::from(row.critical))
            .bind(row.created_at)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    })
    .await?;
    Ok(out)
}

/// One directive.
pub async fn directive(db: &Db, id: &str) -> DbResult<Option<Directive>> {
    let sql =
        format!("SELECT {DIRECTIVE_COLUMNS} FROM benchmark_directives WHERE directive_id = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_owned())
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(directive_row)
        .transpose()
}

/// Directives open at `now` (never claimed, released, or their lease expired): critical
/// ones first, then oldest first; at most `limit`.
pub async fn open_directives(db: &Db, now: i64, limit: i64) -> DbResult<Vec<Directive>> {
    let sql = format!(
        "SELECT {DIRECTIVE_COLUMNS} FROM benchmark_directives WHERE status = 'open' \
         AND (holder IS NULL OR lease_expires_at <= $1) \
         ORDER BY critical DESC, seq, directive_id LIMIT $2"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(now)
        .bind(limit)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(directive_row).collect()
}

/// One ledger entry.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Earning {
    /// The directive paid for.
    pub directive_id: String,
    /// The submission that completed it.
    pub submission_id: String,
    /// Thousandths of a credit.
    pub millicredits: i64,
    /// Unix ms.
    pub at: i64,
}

/// A provider's ledger, newest first.
pub async fn earnings(db: &Db, provider_id: &str) -> DbResult<Vec<Earning>> {
    Ok(sqlx::query_as(
        "SELECT directive_id, submission_id, millicredits, created_at AS at FROM provider_ledger \
         WHERE provider_id = $1 ORDER BY created_at DESC, entry_id",
    )
    .bind(provider_id.to_owned())
    .fetch_all(&db.pool)
    .await?)
}

/// A displayed benchmark score.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct Score {
    /// `protocol` or `agent`.
    pub kind: String,
    /// 0–100, before the probe-health cap.
    pub value: f64,
    /// Unix ms when it was set.
    pub set_at: i64,
    /// Why it was set (`first`, `higher`, `providers`, `stale`).
    pub reason: String,
    /// Distinct providers behind it.
    pub providers: i64,
}

/// The displayed scores of a service, by kind.
pub async fn scores(db: &Db, service_id: &str) -> DbResult<Vec<Score>> {
    Ok(sqlx::query_as(
        "SELECT kind, value, set_at, reason, providers FROM benchmark_scores WHERE service_id = $1 ORDER BY kind",
    )
    .bind(service_id.to_owned())
    .fetch_all(&db.pool)
    .await?)
}

/// A stored submission, as the operator reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// `bs_` + 16 hex.
    pub submission_id: String,
    /// Who submitted it.
    pub provider_id: String,
    /// The recorded score.
    pub recorded_score: f64,
    /// The dimensions as submitted.
    pub dimensions: Value,
    /// The tests, errors redacted.
    pub test_results: Value,
    /// The provider's runner.
    pub runner_id: String,
    /// How long the run took.
    pub execution_time_ms: f64,
    /// It changed the displayed score.
    pub displaced: bool,
    /// Unix ms.
    pub created_at: i64,
    /// `reading`, `pending`, `disagreed` or `unverified`.
    pub status: String,
    /// What a `protocol` run's probe observed.
    pub observed: Value,
    /// The keyed id of the provider's client network.
    pub network: Option<String>,
}

const SUBMISSION_COLUMNS: &str =
    "submission_id, provider_id, recorded_score, dimensions, test_results, runner_id, \
     execution_time_ms, displaced, created_at, status, observed, network";

fn submission_row(r: &AnyRow) -> DbResult<Submission> {
    let json = |col: &str| -> DbResult<Value> {
        let text: Option<String> = r.try_get(col)?;
        text.map_or(Ok(Value::Null), |t| {
            serde_json::from_str(&t).map_err(DbError::internal)
        })
    };
    Ok(Submission {
        submission_id: r.try_get("submission_id")?,
        provider_id: r.try_get("provider_id")?,
        recorded_score: r.try_get("recorded_score")?,
        dimensions: json("dimensions")?,
        test_results: json("test_results")?,
        runner_id: r.try_get("runner_id")?,
        execution_time_ms: r.try_get("execution_time_ms")?,
        displaced: r.try_get::<i64, _>("displaced")? != 0,
        created_at: r.try_get("created_at")?,
        status: r.try_get("status")?,
        observed: json("observed")?,
        network: r.try_get("network")?,
    })
}

/// One submission.
pub async fn submission(db: &Db, id: &str) -> DbResult<Option<Submission>> {
    let sql =
        format!("SELECT {SUBMISSION_COLUMNS} FROM benchmark_submissions WHERE submission_id = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_owned())
        .fetch_optional(&db.pool)
        .await?
        .as_ref()
        .map(submission_row)
        .transpose()
}

/// Every submission of a directive, oldest first.
pub async fn submissions_of(db: &Db, directive_id: &str) -> DbResult<Vec<Submission>> {
    let sql = format!(
        "SELECT {SUBMISSION_COLUMNS} FROM benchmark_submissions WHERE directive_id = $1 \
         ORDER BY created_at, submission_id"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(directive_id.to_owned())
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(submission_row).collect()
}

fn run_row(r: &AnyRow) -> DbResult<Run> {
    Ok(Run {
        submission_id: r.try_get("submission_id")?,
        provider_id: r.try_get("provider_id")?,
        network: r
            .try_get::<Option<String>, _>("network")?
            .unwrap_or_default(),
        overall_score: r.try_get("recorded_score")?,
    })
}

/// The pending (`agent`) results of a directive, oldest first.
pub(crate) async fn pending_runs(
    conn: &mut AnyConnection,
    directive_id: &str,
) -> DbResult<Vec<Run>> {
    let rows = sqlx::query(
        "SELECT submission_id, provider_id, network, recorded_score FROM benchmark_submissions \
         WHERE directive_id = $1 AND status = 'pending' ORDER BY created_at, submission_id",
    )
    .bind(directive_id.to_owned())
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(run_row).collect()
}

/// The pending (`agent`) results of a directive, oldest first (outside a transaction).
pub async fn pending_of(db: &Db, directive_id: &str) -> DbResult<Vec<Run>> {
    let mut conn = db.pool.acquire().await?;
    pending_runs(&mut conn, directive_id).await
}

/// The pending results of every open directive, by directive.
pub async fn pending_by_directive(db: &Db) -> DbResult<BTreeMap<String, Vec<Run>>> {
    let rows = sqlx::query(
        "SELECT s.submission_id, s.provider_id, s.network, s.recorded_score, s.directive_id \
         FROM benchmark_submissions s JOIN benchmark_directives d ON d.directive_id = s.directive_id \
         WHERE d.status = 'open' AND s.status = 'pending' ORDER BY s.created_at, s.submission_id",
    )
    .fetch_all(&db.pool)
    .await?;
    let mut out: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for r in &rows {
        out.entry(r.try_get("directive_id")?)
            .or_default()
            .push(run_row(r)?);
    }
    Ok(out)
}

/// Sets a submission's status (and, for a reading, when it was counted).
pub(crate) async fn set_status(
    conn: &mut AnyConnection,
    submission_id: &str,
    status: &str,
    counted_at: Option<i64>,
) -> DbResult<()> {
    sqlx::query(
        "UPDATE benchmark_submissions SET status = $1, counted_at = $2 WHERE submission_id = $3",
    )
    .bind(status.to_owned())
    .bind(counted_at)
    .bind(submission_id.to_owned())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A provider's `agent` results waiting for agreement.
pub async fn awaiting_agreement(db: &Db, provider_id: &str) -> DbResult<i64> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS n FROM benchmark_submissions WHERE provider_id = $1 AND status = 'pending'",
    )
    .bind(provider_id.to_owned())
    .fetch_one(&db.pool)
    .await?;
    Ok(row.try_get("n")?)
}

/// When `provider_id`'s disagreements after `since` (unix ms) happened.
pub async fn disagreement_times(db: &Db, provider_id: &str, since: i64) -> DbResult<Vec<i64>> {
    let rows = sqlx::query(
        "SELECT created_at FROM provider_disagreements WHERE provider_id = $1 AND created_at > $2",
    )
    .bind(provider_id.to_owned())
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    rows.iter().map(|r| Ok(r.try_get("created_at")?)).collect()
}

/// Every provider's disagreements after `since` (unix ms), counted.
pub async fn disagreement_counts(db: &Db, since: i64) -> DbResult<BTreeMap<String, u32>> {
    let rows = sqlx::query(
        "SELECT provider_id, COUNT(*) AS n FROM provider_disagreements WHERE created_at > $1 GROUP BY provider_id",
    )
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("provider_id")?,
                u32::try_from(r.try_get::<i64, _>("n")?).unwrap_or(u32::MAX),
            ))
        })
        .collect()
}
