//! `GET /api/node/{node_id}`.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::Json;
use serde_json::{json, Value};

use crate::clock::iso;
use crate::db::nodes;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// A node's contribution and the network totals; `status: "unknown"` for a valid id that
/// never sent a record.
pub async fn get(
    State(state): State<AppState>,
    node_id: Result<Path<String>, PathRejection>,
) -> AppResult<Json<Value>> {
    let Path(node_id) = node_id.map_err(|_| AppError::bad_request("node_id: not valid UTF-8"))?;
    lowdown_core::record::validate::validate_node_id(&node_id)
        .map_err(|e| AppError::bad_request(e.to_string()))?;
    let network = nodes::network(&state.db).await?;
    let network_json = json!({
        "total_nodes": network.total_nodes,
        "total_interactions": network.total_interactions,
    });
    let Some(c) = nodes::contribution(&state.db, &node_id).await? else {
        return Ok(Json(json!({
            "node_id": node_id,
            "status": "unknown",
            "contribution": null,
            "network": network_json,
        })));
    };
    // Percentile rank: the share of nodes that contributed no more than this one, 0-100.
    let percentile = if network.total_nodes == 0 {
        0.0
    } else {
        (1000.0 * c.nodes_at_or_below as f64 / network.total_nodes as f64).round() / 10.0
    };
    Ok(Json(json!({
        "node_id": node_id,
        "status": "active",
        "contribution": {
            "interactions": c.interactions,
            "targets_observed": c.targets_observed,
            "active_days": c.active_days,
            "first_seen": iso(c.first_seen),
            "last_seen": iso(c.last_seen),
        },
        "network": network_json,
        "rank": {"percentile": percentile},
    })))
}
