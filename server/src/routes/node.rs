//! `GET /api/node/{node_id}`.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::Json;
use serde::Serialize;

use crate::clock::iso;
use crate::db::nodes;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// The answer of `GET /api/node/{node_id}` (keys in alphabetical order, as always given).
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Node")]
pub struct NodeAnswer {
    /// What the node sent; null for a node that never sent a record.
    pub contribution: Option<Contribution>,
    /// The totals of the whole network.
    pub network: Network,
    /// The node id asked about.
    pub node_id: String,
    /// Where the node stands among the others; absent for an unknown node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<Rank>,
    /// `active`, or `unknown` for a valid id that never sent a record.
    pub status: &'static str,
}

/// What one node sent.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Contribution {
    /// Distinct UTC days with at least one record.
    pub active_days: u64,
    /// First record (ISO-8601).
    pub first_seen: String,
    /// Records sent by the node.
    pub interactions: u64,
    /// Latest record (ISO-8601).
    pub last_seen: String,
    /// Distinct targets in those records.
    pub targets_observed: u64,
}

/// The network totals.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "NodeNetwork")]
pub struct Network {
    /// Every stored record (all sources, all classes).
    pub total_interactions: u64,
    /// Distinct node ids that ever sent a record.
    pub total_nodes: u64,
}

/// A node's rank.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "NodeRank")]
pub struct Rank {
    /// The share of nodes that contributed no more than this one, 0-100, one decimal.
    pub percentile: f64,
}

/// A node's contribution and the network totals; `status: "unknown"` for a valid id that
/// never sent a record.
pub async fn get(
    State(state): State<AppState>,
    node_id: Result<Path<String>, PathRejection>,
) -> AppResult<Json<NodeAnswer>> {
    let Path(node_id) = node_id.map_err(|_| AppError::bad_request("node_id: not valid UTF-8"))?;
    lowdown_core::record::validate::validate_node_id(&node_id)
        .map_err(|e| AppError::bad_request(e.to_string()))?;
    let network = nodes::network(&state.db).await?;
    let totals = Network {
        total_interactions: network.total_interactions,
        total_nodes: network.total_nodes,
    };
    let Some(c) = nodes::contribution(&state.db, &node_id).await? else {
        return Ok(Json(NodeAnswer {
            contribution: None,
            network: totals,
            node_id,
            rank: None,
            status: "unknown",
        }));
    };
    // Percentile rank: the share of nodes that contributed no more than this one, 0-100.
    let percentile = if network.total_nodes == 0 {
        0.0
    } else {
        (1000.0 * c.nodes_at_or_below as f64 / network.total_nodes as f64).round() / 10.0
    };
    Ok(Json(NodeAnswer {
        contribution: Some(Contribution {
            active_days: c.active_days,
            first_seen: iso(c.first_seen),
            interactions: c.interactions,
            last_seen: iso(c.last_seen),
            targets_observed: c.targets_observed,
        }),
        network: totals,
        node_id,
        rank: Some(Rank { percentile }),
        status: "active",
    }))
}
