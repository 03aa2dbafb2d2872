//! Storing interaction records, whichever door they came in by (`POST /api/interactions`,
//! OTLP's `POST /v1/traces`): the host filter, the budgets of the sender (node id, agent
//! key, network), the per-network cap and idempotency are applied here once, so no door
//! is a side path around them.

use std::collections::HashMap;
use std::net::IpAddr;

use lowdown_core::record::validate::Rejection;
use lowdown_core::record::InteractionRecord;
use lowdown_core::telemetry::unlisted_target;

use crate::db::ingest::{Fate, Sender};
use crate::db::quota::{Draws, Quota};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Where a write comes from, as the handler found it (`crate::extract::Origin`).
#[derive(Debug, Clone, Default)]
pub struct Client {
    /// The client address.
    pub ip: Option<IpAddr>,
    /// The keyed id of its network.
    pub network: Option<String>,
    /// Inside `--trusted-network`.
    pub trusted: bool,
}

/// The error of an item refused for naming a private or special-use host:
/// `host: a private or special-use host (loopback) is never stored`.
pub fn private_host_error(field: &str, reason: lowdown_core::telemetry::BlockReason) -> String {
    format!(
        "{field}: a private or special-use host ({}) is never stored",
        crate::names::enum_str(&reason)
    )
}

/// Valid records a request brought, with their positions in it, and what was refused.
#[derive(Debug, Default)]
pub struct Screened {
    /// Records that may be stored.
    pub valid: Vec<InteractionRecord>,
    /// The request's index of each of them.
    pub indices: Vec<usize>,
    /// The refused items by index (`field: what is wrong`).
    pub rejected: Vec<Rejection>,
}

/// Sorts the checked items of a request: a valid record whose target names a private or
/// special-use host (`url:localhost`, `10.0.0.7`) is refused like an invalid one.
pub fn screen(state: &AppState, items: Vec<Result<InteractionRecord, Rejection>>) -> Screened {
    let mut out = Screened::default();
    for (index, item) in items.into_iter().enumerate() {
        match item {
            Ok(record) => match unlisted_target(&record.target, state.allow_private_hosts) {
                None => {
                    out.valid.push(record);
                    out.indices.push(index);
                }
                Some(reason) => out.rejected.push(Rejection {
                    index,
                    error: private_host_error("target", reason),
                }),
            },
            Err(r) => out.rejected.push(Rejection { index, ..r }),
        }
    }
    out
}

/// What became of the valid records of a request.
#[derive(Debug)]
pub struct Stored {
    /// Taken (each is now stored), duplicates included.
    pub accepted: usize,
    /// Among them, those whose `record_id` was already stored or repeated.
    pub duplicates: usize,
    /// The request's indices of those refused over a budget.
    pub rate_limited: Vec<usize>,
    /// The first budget that refused one, as an error, and the longest `Retry-After`.
    pub refusal: Option<(AppError, u64)>,
}

/// Stores `screened.valid` for the sender (`client`, and the agent of the request's key):
/// each new record draws on its node id's, the key's and the network's hourly budget
/// (none from a trusted network); a duplicate draws on nothing.
pub async fn store(
    state: &AppState,
    client: &Client,
    agent_id: Option<String>,
    screened: Screened,
) -> AppResult<Stored> {
    let sender = sender(state, client, agent_id, &screened.valid);
    let ingested = crate::db::ingest::store_interactions(
        &state.db,
        screened.valid,
        sender.clone(),
        state.now(),
    )
    .await?;
    let (mut accepted, mut duplicates, mut rate_limited) = (0, 0, Vec::new());
    for (fate, index) in ingested.fates.iter().zip(&screened.indices) {
        match fate {
            Fate::Stored => accepted += 1,
            Fate::Duplicate => {
                accepted += 1;
                duplicates += 1;
            }
            Fate::RateLimited(_) => rate_limited.push(*index),
        }
    }
    crate::db::quota::prune_if_due(&state.db, state.now()).await;
    let refusal = ingested
        .refusal(&sender)
        .map(|(q, retry)| (AppError::from(q.refusal(retry)), retry));
    Ok(Stored {
        accepted,
        duplicates,
        rate_limited,
        refusal,
    })
}

/// Who sends `records`, and the budgets each of them draws on: its node id's, the agent
/// key's and the network's (none from a trusted network).
fn sender(
    state: &AppState,
    origin: &Client,
    agent_id: Option<String>,
    records: &[InteractionRecord],
) -> Sender {
    let (secret, limits) = (state.db.caller_secret(), &state.limits);
    let mut draws = Draws::default();
    if !origin.trusted {
        let mut shared = Vec::new();
        if let Some(a) = &agent_id {
            shared.push(draws.quota(Quota::key_records(secret, limits, a)));
        }
        shared.push(draws.quota(Quota::network_records(secret, limits, origin.ip)));
        // A batch usually comes from one node: its quota (an HMAC) is made once.
        let mut nodes: HashMap<&str, usize> = HashMap::new();
        for r in records {
            let mut item = shared.clone();
            if let Some(node) = &r.node_id {
                let q = *nodes
                    .entry(node)
                    .or_insert_with(|| draws.quota(Quota::node_records(secret, limits, node)));
                item.push(q);
            }
            draws.item(item);
        }
    }
    Sender {
        network: origin.network.clone(),
        agent_id,
        trusted: origin.trusted,
        draws,
    }
}
