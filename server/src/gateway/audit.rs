//! The audit (SPEC §10): once per service per 24 h over its last 1,000 ProxyCalls and the
//! organic observations of the last 24 h (what agents reported: the mirror path; at most
//! 1,000 per network), on each path and on both together.
//!
//! An audit runs when a service is read and its last one is over 24 h old, and a
//! background job audits every due service every ten minutes under the `audit` lease, so
//! with several servers on one database one of them does the work. Storing is
//! conditional on the stored audit still being due, so two servers racing store one.

use std::time::Duration;

use lowdown_core::gateway::score::{audit, AUDIT_WINDOW, TELEMETRY_WINDOW_MS};

use super::Service;
use crate::db::gateway::calls::{self, StoredAudit};
use crate::db::lease::{self, AUDIT_LEASE};
use crate::error::AppResult;
use crate::state::AppState;

/// How often an audit runs per service.
pub const AUDIT_EVERY_MS: i64 = 24 * 3_600_000;
/// How often the background job looks for due services.
pub const JOB_EVERY: Duration = Duration::from_secs(600);

/// The service's audit, running a new one first when the last is 24 h old (or missing).
pub async fn audit_if_due(
    state: &AppState,
    s: &Service,
    now: i64,
) -> AppResult<Option<StoredAudit>> {
    let stored = calls::audit_of(&state.db, &s.service_id).await?;
    if stored
        .as_ref()
        .is_some_and(|a| a.checked_at > now - AUDIT_EVERY_MS)
    {
        return Ok(stored);
    }
    let mut recent = calls::recent(&state.db, &s.service_id, AUDIT_WINDOW).await?;
    let since = now - TELEMETRY_WINDOW_MS;
    recent.extend(calls::observations_since(&state.db, &s.service_id, since, AUDIT_WINDOW).await?);
    calls::store_audit(
        &state.db,
        &s.service_id,
        audit(&recent),
        now,
        now - AUDIT_EVERY_MS,
    )
    .await?;
    Ok(calls::audit_of(&state.db, &s.service_id).await?)
}

/// Audits every due service, under the lease; returns how many it looked at (0 when
/// another server holds the lease).
pub async fn run_due(state: &AppState, holder: &str) -> AppResult<usize> {
    let now = state.now();
    if lease::acquire(&state.db, AUDIT_LEASE, holder, now, 10 * 60_000)
        .await?
        .is_err()
    {
        return Ok(0);
    }
    let mut n = 0;
    let result = async {
        for s in &state.prowl.services {
            audit_if_due(state, s, now).await?;
            n += 1;
        }
        Ok::<_, crate::error::AppError>(())
    }
    .await;
    lease::release(&state.db, AUDIT_LEASE, holder).await?;
    result.map(|()| n)
}

/// Runs [`run_due`] now and every [`JOB_EVERY`] until the process ends.
pub async fn job(state: AppState) {
    let holder = crate::db::random_id("srv_", 8).unwrap_or_else(|_| "srv".into());
    let mut tick = tokio::time::interval(JOB_EVERY);
    loop {
        tick.tick().await;
        if let Err(e) = run_due(&state, &holder).await {
            tracing::warn!(error = %e, "audit job failed; retrying at the next tick");
        }
    }
}
