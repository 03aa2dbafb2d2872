//! Delivery receipts, keyed by the statement hash so a replay is refused.

use lowdown_core::gateway::receipt::Statement;

use crate::db::Db;
use crate::db::DbResult;

/// Stores a verified receipt; `false` when its statement hash was seen before.
pub async fn insert(
    db: &Db,
    st: &Statement,
    agent_signed: bool,
    service_signed: bool,
    weight: f64,
    now: i64,
) -> DbResult<bool> {
    let st = st.clone();
    db.write(move |conn| {
        Box::pin(async move {
            let row = sqlx::query(
                "INSERT INTO receipts (statement_hash, service_id, agent_id, call_at, outcome, latency_ms, agent_signed, service_signed, weight_tenths, submitted_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (statement_hash) DO NOTHING RETURNING statement_hash",
            )
            .bind(st.hash)
            .bind(st.service_id)
            .bind(st.agent_id)
            .bind(st.call_at)
            .bind(st.outcome)
            .bind(st.latency_ms)
            .bind(i64::from(agent_signed))
            .bind(i64::from(service_signed))
            .bind((weight * 10.0).round() as i64)
            .bind(now)
            .fetch_optional(&mut *conn)
            .await?;
            Ok(row.is_some())
        })
    })
    .await
}
