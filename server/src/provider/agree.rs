//! `agent` results (SPEC §11), recorded in one transaction under the caller's live lease
//! and settled by the core's agreement rule ([`lowdown_core::benchmark::agreement`]):
//!
//! - a result from a provider, or a network, that already has a pending result on the
//!   directive, or from an unknown network, is refused (the claim ends);
//! - otherwise it is stored as pending, the claim ends and the directive is open again,
//!   to providers of other networks;
//! - once it agrees with a pending result of another network, the directive is done:
//!   the agreeing results become readings (the displacement rule runs once, the new one
//!   last), their providers share the directive's 70 % (held until then), and the
//!   pending results that do not agree are disagreed: no credit, a disagreement each.

use lowdown_core::benchmark::agreement::{self, Barred, Run, Settlement};
use lowdown_core::benchmark::displace::Decision;
use lowdown_core::benchmark::provider_share_millicredits;

use crate::db::leases::Misuse;
use crate::db::provider as store;
use crate::db::submissions::{self as record, Submission};
use crate::db::Db;
use crate::db::DbResult;

/// What an `agent` submission came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// `bs_` + 16 hex.
    pub submission_id: String,
    /// The score recorded (the core's recomputation).
    pub recorded_score: f64,
    /// `None` while it waits for agreement; the displacement decision once agreed.
    pub decision: Option<Decision>,
    /// Credited to the caller now (0 while pending), in thousandths of a credit.
    pub millicredits: i64,
}

/// Why an `agent` submission was not recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A lease misuse.
    Misuse(Misuse),
    /// Agreement bars the caller (the claim has ended).
    Barred(Barred),
}

/// Records `checked` from `provider` on `network` for the `agent` directive it leases.
pub async fn submit_agent(db: &Db, s: Submission, now: i64) -> DbResult<Result<Settled, Refused>> {
    db.write(move |conn| {
        Box::pin(async move {
            let d = match s.leased(conn, now).await? {
                Ok(d) => d,
                Err(m) => return Ok(Err(Refused::Misuse(m))),
            };
            let Submission {
                submission_id,
                provider,
                network,
                checked,
                ..
            } = &s;
            let pending = store::pending_runs(conn, &d.directive_id).await?;
            if let Err(b) = agreement::may_run(&pending, provider, network.as_deref()) {
                record::end_lease(conn, &d.directive_id, now, "refused").await?;
                return Ok(Err(Refused::Barred(b)));
            }
            record::end_lease(conn, &d.directive_id, now, "submitted").await?;
            s.insert(conn, &d, "pending", now).await?;
            let new = Run {
                submission_id: submission_id.clone(),
                provider_id: provider.clone(),
                network: network.clone().unwrap_or_default(),
                overall_score: checked.recorded_score,
            };
            let (counted, disagreed) = match agreement::settle(&pending, &new) {
                Settlement::Pending => {
                    return Ok(Ok(Settled {
                        submission_id: submission_id.clone(),
                        recorded_score: checked.recorded_score,
                        decision: None,
                        millicredits: 0,
                    }))
                }
                Settlement::Agreed { counted, disagreed } => (counted, disagreed),
            };
            let runs: Vec<&Run> = pending.iter().chain(std::iter::once(&new)).collect();
            let by_id = |id: &str| runs.iter().copied().find(|r| r.submission_id == id);
            for id in &disagreed {
                store::set_status(conn, id, "disagreed", None).await?;
                if let Some(r) = by_id(id) {
                    let field = agreement::disagreement(r, &new).unwrap_or("agent_result");
                    record::disagreement(conn, &r.provider_id, &d, field, now).await?;
                }
            }
            for id in &counted {
                store::set_status(conn, id, "reading", Some(now)).await?;
            }
            record::complete(conn, &d, submission_id, now).await?;
            let decision = record::display(conn, &d, submission_id, now).await?;
            let shares = agreement::split_millicredits(
                provider_share_millicredits(d.price_credits),
                counted.len(),
            );
            let mut mine = 0;
            for (id, share) in counted.iter().zip(shares) {
                let Some(r) = by_id(id) else { continue };
                record::credit(conn, &r.provider_id, &d.directive_id, id, share, now).await?;
                if r.provider_id == *provider {
                    mine = share;
                }
            }
            Ok(Ok(Settled {
                submission_id: submission_id.clone(),
                recorded_score: checked.recorded_score,
                decision: Some(decision),
                millicredits: mine,
            }))
        })
    })
    .await
}
