//! The `benchmark` block of a catalog service (`GET /v1/services[/{slug}]`): the displayed
//! benchmark score of each kind, limited on every read by the service's probe-health cap
//! (SPEC §10), exactly as the live score is. Only checked readings reach it: `protocol`
//! results the server's probe agreed with, `agent` results two networks agreed on.

use lowdown_core::benchmark::displace::capped;
use lowdown_core::benchmark::Kind;
use serde_json::{json, Map, Value};

use crate::clock::iso;
use crate::db::provider as store;
use crate::error::AppResult;
use crate::state::AppState;

/// `{protocol: {value, capped_by, uncapped, providers, reason, set_at, verified_by} | null,
/// agent: …}`. `verified_by`: `server_probe` (protocol: each reading agreed with the
/// server's own probe) or `two_networks` (agent: each reading agreed with a provider's of
/// another network).
pub async fn block(state: &AppState, service_id: &str, cap: Option<u32>) -> AppResult<Value> {
    let mut out = Map::new();
    out.insert("protocol".into(), Value::Null);
    out.insert("agent".into(), Value::Null);
    for s in store::scores(&state.db, service_id).await? {
        let (value, capped_by) = capped(s.value, cap);
        let verified_by = if s.kind == Kind::Agent.as_str() {
            "two_networks"
        } else {
            "server_probe"
        };
        out.insert(
            s.kind.clone(),
            json!({
                "value": value, "capped_by": capped_by, "uncapped": s.value,
                "providers": s.providers, "reason": s.reason, "set_at": iso(s.set_at),
                "verified_by": verified_by,
            }),
        );
    }
    Ok(Value::Object(out))
}
