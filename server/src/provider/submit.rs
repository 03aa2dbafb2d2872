//! `POST /v1/provider/submit` (SPEC §11): a provider's result for the directive it holds.
//! The body is checked by the core (each fault named); then, under a live lease of the
//! caller:
//!
//! - `protocol`: the server probes the remote itself ([`super::verify`]); a result the
//!   probe agrees with is recorded ([`super::record::submit_protocol`]), one it contradicts
//!   is refused as `contradicts_probe` naming the field, one it cannot confirm as
//!   `probe_unverified`. A refused result earns nothing and the directive is back in the
//!   queue.
//! - `agent`: the result waits for a provider of another network to agree
//!   ([`super::agree`]); the caller's network comes from [`Origin`].

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use lowdown_core::benchmark::agreement::Barred;
use lowdown_core::benchmark::agreement::AGREEMENT_POINTS;
use lowdown_core::benchmark::directive::Spec;
use lowdown_core::benchmark::displace::{Decision, Reason};
use lowdown_core::benchmark::submission::{check, directive_id, SubmissionError};
use lowdown_core::benchmark::verify::Verdict;
use lowdown_core::benchmark::Kind;
use serde::Serialize;

use super::agree::{self, Refused};
use super::auth::provider;
use super::directives::credits;
use super::verify;
use crate::db::leases::{self as lease, Misuse};
use crate::db::provider::{self as store, Directive};
use crate::db::submissions::{self as record, Turned};
use crate::error::AppError;
use crate::extract::{JsonBody, Origin};
use crate::state::AppState;

/// The refusal of a provider barred from an `agent` directive by agreement.
pub fn barred(b: Barred, id: &str) -> AppError {
    match b {
        Barred::AlreadySubmitted => AppError::refused(StatusCode::CONFLICT, "already_submitted",
            format!("directive {id}: you already submitted a result for it; it waits for a provider of another network")),
        Barred::SameNetwork => AppError::refused(StatusCode::CONFLICT, "same_network",
            format!("directive {id}: a result from your network waits for a provider of another network to agree; yours cannot confirm it")),
        Barred::UnknownNetwork => AppError::refused(StatusCode::FORBIDDEN, "unknown_network",
            format!("directive {id}: an agent result counts only from a known client network, and yours is not known")),
    }
}

fn turned_down(id: &str, verdict: &Verdict) -> AppError {
    let back = "nothing is recorded or credited, and the directive is back in the queue";
    match verdict {
        Verdict::Contradicts(c) => AppError::refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "contradicts_probe",
            format!("directive {id}: contradicts_probe: {c}; {back}"),
        ),
        Verdict::Unverifiable {
            http_status,
            error_type,
            ..
        } => {
            let saw = match (http_status, error_type) {
                (Some(s), _) => format!("HTTP {s}"),
                (None, Some(e)) => crate::names::enum_str(e),
                (None, None) => "no answer".to_owned(),
            };
            AppError::refused(
                StatusCode::CONFLICT,
                "probe_unverified",
                format!("directive {id}: the server's own probe of the remote did not complete initialize ({saw}), so it cannot confirm your result; {back} (this does not count against you)"),
            )
        }
        Verdict::Agrees => AppError::internal("an agreeing probe turned down"),
    }
}

/// A recorded submission, as the 201 answer shows it.
struct Accepted {
    submission_id: String,
    recorded_score: f64,
    verification: &'static str,
    decision: Option<Decision>,
    millicredits: i64,
}

/// The 201 answer of `POST /v1/provider/submit` (keys in alphabetical order, as always given).
#[derive(Serialize, schemars::JsonSchema)]
pub struct SubmissionResult {
    /// Recorded (refusals are 4xx).
    #[schemars(extend("const" = true))]
    pub accepted: bool,
    /// Credits earned by it now.
    pub credited_credits: f64,
    /// It became the service's displayed benchmark score.
    pub displaced: bool,
    /// Why it did.
    pub displaced_reason: Option<Reason>,
    /// The score recorded.
    #[schemars(range(min = 0, max = 100))]
    pub recorded_score: f64,
    /// Its id.
    pub submission_id: String,
    /// How it was checked (the description names [`AGREEMENT_POINTS`] as it is).
    #[schemars(extend("enum" = ["probe", "pending", "agreed"]))]
    #[schemars(description = format!("probe: a protocol result the server's own probe agreed with (completed, credited); pending: an agent result waiting for a provider of another network (credit held); agreed: an agent result that agreed with one of another network (same verdict, overall within {AGREEMENT_POINTS} points): completed, the credit split among the agreeing providers."))]
    pub verification: &'static str,
}

impl Accepted {
    fn answer(self) -> (StatusCode, Json<SubmissionResult>) {
        let d = self.decision;
        (
            StatusCode::CREATED,
            Json(SubmissionResult {
                accepted: true,
                credited_credits: credits(self.millicredits),
                displaced: d.is_some_and(|d| d.replace),
                displaced_reason: d.and_then(|d| d.reason),
                recorded_score: self.recorded_score,
                submission_id: self.submission_id,
                verification: self.verification,
            }),
        )
    }
}

/// 201 `{submission_id, accepted, verification, recorded_score, displaced, displaced_reason,
/// credited_credits}`. `verification` is `probe` (a `protocol` result the server's probe
/// agreed with), `pending` (an `agent` result waiting for another network) or `agreed`.
pub async fn post(
    State(state): State<AppState>,
    origin: Origin,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<SubmissionResult>), AppError> {
    let me = provider(&state, &headers).await?;
    let bad = |e: SubmissionError| -> AppError { AppError::bad_request(e.to_string()) };
    let id = directive_id(&body).map_err(bad)?;
    let d = store::directive(&state.db, &id)
        .await?
        .ok_or_else(|| Misuse::Unknown.refusal(&id))?;
    if let Some(e) = d.refused() {
        return Err(super::directives::spec_refusal(&e));
    }
    let checked = check(&body, d.kind).map_err(bad)?;
    let submitted = body["overall_score"]
        .as_f64()
        .unwrap_or(checked.recorded_score);
    let run = Run {
        state: &state,
        s: record::Submission::new(&me.provider_id, origin.network, checked, submitted)?,
    };
    let accepted = match d.kind {
        Kind::Agent => run.agent(&id).await?,
        Kind::Protocol => run.protocol(&d).await?,
    };
    Ok(accepted.answer())
}

/// One submission on its way to storage.
struct Run<'a> {
    state: &'a AppState,
    s: record::Submission,
}

impl Run<'_> {
    async fn agent(self, id: &str) -> Result<Accepted, AppError> {
        match agree::submit_agent(&self.state.db, self.s, self.state.now()).await? {
            Ok(s) => Ok(Accepted {
                submission_id: s.submission_id,
                recorded_score: s.recorded_score,
                verification: if s.decision.is_some() {
                    "agreed"
                } else {
                    "pending"
                },
                decision: s.decision,
                millicredits: s.millicredits,
            }),
            Err(Refused::Misuse(m)) => Err(m.refusal(id)),
            Err(Refused::Barred(b)) => Err(barred(b, id)),
        }
    }

    async fn protocol(self, d: &Directive) -> Result<Accepted, AppError> {
        let id = d.directive_id.as_str();
        let Ok(Spec::Protocol { remote_url }) = serde_json::from_value(d.spec.clone()) else {
            return Err(AppError::internal(format!(
                "directive {id}: a protocol directive without a remote"
            )));
        };
        let db = &self.state.db;
        // Only the lease holder's submission costs the vendor's remote a probe.
        let now = self.state.now();
        if let Err(m) = lease::holds(db, id, &self.s.provider, now).await? {
            return Err(m.refusal(id));
        }
        let verdict = verify::check(self.state, &remote_url, &self.s.checked).await?;
        // The lease is checked again, after the probe, as the outcome is recorded.
        let now = self.state.now();
        let why = match &verdict {
            Verdict::Agrees => {
                return match record::submit_protocol(db, self.s, now).await? {
                    Ok(r) => Ok(Accepted {
                        submission_id: r.submission_id,
                        recorded_score: r.recorded_score,
                        verification: "probe",
                        decision: Some(r.decision),
                        millicredits: r.millicredits,
                    }),
                    Err(m) => Err(m.refusal(id)),
                };
            }
            Verdict::Contradicts(c) => Turned::Contradicted {
                field: c.field.clone(),
            },
            Verdict::Unverifiable { .. } => Turned::Unverified,
        };
        match record::refuse(db, id, &self.s.provider, now, why).await? {
            Ok(()) => Err(turned_down(id, &verdict)),
            Err(m) => Err(m.refusal(id)),
        }
    }
}
