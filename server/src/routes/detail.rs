//! The contributor detail of a reputation answer (SPEC §5): per task, per day, per server
//! version and per schema hash. Every row is organic (the population of `success_rate`)
//! and exists only when it has an organic tool interaction in it ([`organic_row`]): no
//! protocol-only task, empty day, version or hash.

use std::collections::BTreeMap;

use lowdown_core::aggregate::{organic_row, ClassCounts, OrganicRow, SourceCounts};
use serde::Serialize;

use crate::clock;
use crate::db::reputation::{self as store, Dimension};
use crate::error::AppResult;
use crate::state::AppState;

/// Days covered by `recent_trends`, today included.
pub const TREND_DAYS: i64 = 30;

/// Key for records that carried no server version or schema hash; `(` cannot occur in
/// either, so it never collides with a real value.
const NONE_KEY: &str = "(none)";

/// The detail block, flattened into the answer.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Contributor {
    /// Contributors only; organic; tasks with an organic tool interaction.
    pub(crate) task_breakdown: BTreeMap<String, TaskRow>,
    /// Contributors only; organic; the last 30 days that had an organic tool interaction.
    pub(crate) recent_trends: Vec<Trend>,
    /// Contributors only; `(none)` for records without one.
    pub(crate) by_server_version: BTreeMap<String, OrganicRow>,
    /// Contributors only; `(none)` for records without one.
    pub(crate) by_schema_hash: BTreeMap<String, OrganicRow>,
}

/// One task: organic counts per class, rated failures per type, and the row figures.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct TaskRow {
    pub(crate) success: u64,
    pub(crate) partial: u64,
    pub(crate) failure: u64,
    pub(crate) rejected: u64,
    pub(crate) cancelled: u64,
    pub(crate) failure_types: BTreeMap<String, u64>,
    #[serde(flatten)]
    pub(crate) row: OrganicRow,
}

/// One day: organic tool interactions and the organic success rate.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Trend {
    /// The UTC day.
    #[schemars(extend("format" = "date"))]
    pub(crate) date: String,
    /// Organic tool interactions that day.
    #[schemars(range(min = 1))]
    pub(crate) count: u64,
    pub(crate) success_rate: Option<f64>,
}

/// The detail for `target` (optionally one task) at `now`.
pub(crate) async fn contributor(
    state: &AppState,
    target: &str,
    task: Option<&str>,
    now: i64,
) -> AppResult<Contributor> {
    let db = &state.db;
    let since = clock::day_before(now, TREND_DAYS - 1);
    // Independent reads, run at once (see `reputation::reply`).
    let (tasks, days, versions, hashes) = tokio::try_join!(
        store::task_breakdown(db, target, task),
        store::grouped(db, Dimension::Day, target, task, Some(&since)),
        store::grouped(db, Dimension::ServerVersion, target, task, None),
        store::grouped(db, Dimension::SchemaHash, target, task, None),
    )?;
    let mut task_breakdown = BTreeMap::new();
    for (task, (counts, failure_types)) in tasks {
        let o: &ClassCounts = &counts.organic;
        if let Some(row) = organic_row(o) {
            let entry = TaskRow {
                success: o.success,
                partial: o.partial,
                failure: o.failure,
                rejected: o.rejected,
                cancelled: o.cancelled,
                failure_types,
                row,
            };
            task_breakdown.insert(task, entry);
        }
    }
    let recent_trends = days
        .into_iter()
        .filter_map(|(date, counts)| {
            organic_row(&counts.organic).map(|r| Trend {
                date,
                count: r.interactions,
                success_rate: r.success_rate,
            })
        })
        .collect();
    let by_server_version = rows(versions);
    let by_schema_hash = rows(hashes);
    Ok(Contributor {
        task_breakdown,
        recent_trends,
        by_server_version,
        by_schema_hash,
    })
}

/// The non-empty organic rows of a grouping, `(none)` for the empty key.
fn rows(groups: BTreeMap<String, SourceCounts>) -> BTreeMap<String, OrganicRow> {
    groups
        .into_iter()
        .filter_map(|(k, c)| {
            let key = if k.is_empty() { NONE_KEY.to_owned() } else { k };
            organic_row(&c.organic).map(|r| (key, r))
        })
        .collect()
}
