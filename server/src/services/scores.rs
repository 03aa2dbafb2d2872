//! The `benchmark` block of a catalog service (`GET /v1/services[/{slug}]`): the displayed
//! benchmark score of each kind, limited on every read by the service's probe-health cap
//! (SPEC §10), exactly as the live score is. Only checked readings reach it: `protocol`
//! results the server's probe agreed with, `agent` results two networks agreed on.

use lowdown_core::benchmark::displace::capped;
use lowdown_core::benchmark::Kind;
use serde::Serialize;

use crate::clock::iso;
use crate::db::provider as store;
use crate::error::AppResult;
use crate::state::AppState;

/// The `benchmark` block: the displayed score of each kind, null before the first.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Benchmark")]
pub struct Scores {
    /// The `agent` score: each reading agreed with a provider's of another network.
    pub agent: Option<Score>,
    /// The `protocol` score: each reading agreed with the server's own probe.
    pub protocol: Option<Score>,
}

/// One displayed score (keys in alphabetical order, as always given).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Score {
    /// `probe_health` when the probe-health cap lowered it, else null.
    pub capped_by: Option<&'static str>,
    /// Distinct providers behind it.
    pub providers: i64,
    /// Why it was set (`first`, `higher`, `providers`, `stale`).
    pub reason: String,
    /// When it was set (ISO-8601).
    pub set_at: String,
    /// 0–100, before the cap.
    pub uncapped: f64,
    /// 0–100, after the cap.
    pub value: f64,
    /// `server_probe` (protocol) or `two_networks` (agent).
    pub verified_by: &'static str,
}

/// The `benchmark` block of `service_id` under the probe-health `cap`.
pub async fn block(state: &AppState, service_id: &str, cap: Option<u32>) -> AppResult<Scores> {
    let mut out = Scores::default();
    for s in store::scores(&state.db, service_id).await? {
        let (value, capped_by) = capped(s.value, cap);
        let agent = s.kind == Kind::Agent.as_str();
        let score = Score {
            capped_by,
            providers: s.providers,
            reason: s.reason,
            set_at: iso(s.set_at),
            uncapped: s.value,
            value,
            verified_by: if agent {
                "two_networks"
            } else {
                "server_probe"
            },
        };
        match agent {
            true => out.agent = Some(score),
            false => out.protocol = Some(score),
        }
    }
    Ok(out)
}
