//! The daily record (SPEC §9): per UTC day, what the Scanner recorded: its runs, the
//! Registry's declaration changes, observation counts by level, status and error type with
//! their denominators (probe attempts and blocked URLs apart), members not probed and why,
//! how many servers' tool definitions changed, and values observed for the first time.
//! Counts and lists only: no score, rank or verdict on any server.
//!
//! Rendered as HTML by `crate::pages::daily` and as feeds by [`feed`]; every date in it
//! comes from the data.

pub mod cache;
pub mod feed;

use std::collections::{BTreeMap, BTreeSet};

use lowdown_core::scanner::changes::Comparison;
use lowdown_core::scanner::days::{day_number, iso};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::db::daily::{self as store, FirstColumn};
use crate::db::{Db, DbResult};

/// Most items listed per list (the totals are always given).
pub const LIST_MAX: usize = 50;
/// Days in the feeds.
pub const FEED_DAYS: i64 = 30;

/// A list with its full length.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Counted<T> {
    /// How many there are.
    pub total: u64,
    /// The first [`LIST_MAX`], in name order.
    pub items: Vec<T>,
}

impl<T> Default for Counted<T> {
    fn default() -> Self {
        Counted {
            total: 0,
            items: Vec::new(),
        }
    }
}

impl<T> Counted<T> {
    fn of(mut all: Vec<T>) -> Self {
        let total = all.len() as u64;
        all.truncate(LIST_MAX);
        Counted { total, items: all }
    }
}

/// One scan run of the day, with the denominators its summary recorded.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "DailyRun")]
pub struct Run {
    /// The run's id.
    pub scan_run_id: String,
    /// `completed`, `registry_failed`, `failed`, or `running` (a run that stopped).
    pub status: String,
    /// When it started (ISO-8601).
    pub started_at: String,
    /// When it ended, if it did.
    pub finished_at: Option<String>,
    #[serde(skip)]
    started_ms: i64,
    #[serde(skip)]
    finished_ms: Option<i64>,
    /// Registry entries read, active and latest ones, those with a probeable remote.
    pub entries: Option<u64>,
    /// Active and latest entries.
    pub active_latest: Option<u64>,
    /// Of those, with a probeable remote.
    pub probeable: Option<u64>,
    /// Cohort members.
    pub members: Option<u64>,
    /// Remotes to probe.
    pub remotes: Option<u64>,
}

/// A Registry declaration change.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "DailyChange")]
pub struct Change {
    /// The Registry name.
    pub name: String,
    /// `listed`, `version`, `status` or `remote_hosts`.
    pub field: String,
    /// Before.
    pub from: Value,
    /// After.
    pub to: Value,
}

/// The day's observations, counted. Levels, statuses and error types count probe
/// attempts; URLs the SSRF rules refused (`blocked_url`, nothing sent) are apart.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[schemars(rename = "DailyObservations")]
pub struct Observations {
    /// Every observation stored.
    pub total: u64,
    /// Observations of a probe that was sent (`total - blocked`).
    pub probe_attempts: u64,
    /// URLs refused before anything was sent.
    pub blocked: u64,
    /// Distinct servers with a probe attempt.
    pub targets: u64,
    /// Probe attempts per reached level (`0`, `1`, `2`).
    pub by_level: BTreeMap<String, u64>,
    /// Probe attempts per HTTP status (`none`: no response).
    pub by_status: BTreeMap<String, u64>,
    /// Probe attempts per error type (those without one are not listed).
    pub by_error_type: BTreeMap<String, u64>,
}

/// Servers whose tool definitions changed that day.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[schemars(rename = "DailyDefinitionChanges")]
pub struct DefinitionChanges {
    /// Servers reaching level 2 that day with an earlier level-2 observation of the same
    /// remote to compare with.
    pub compared: u64,
    /// Of those, servers with a changed schema, description or name hash.
    pub changed: Counted<String>,
}

/// A value observed for a server for the first time.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "DailyFirstValue")]
pub struct FirstValue {
    /// `mcp:<name>`.
    pub target: String,
    /// The value.
    pub value: String,
}

/// Values observed for the first time that day.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "DailyFirstObserved")]
pub struct FirstObserved {
    /// Servers observed for the first time.
    pub targets: Counted<String>,
    /// Server versions a server reported for the first time.
    pub server_versions: Counted<FirstValue>,
    /// Tool schema hashes first seen for a server.
    pub schema_hashes: Counted<FirstValue>,
}

/// One day's record.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DailyRecord {
    /// The UTC day.
    pub day: String,
    /// The stable id of the day's feed item: `lowdown-daily:<day>`.
    pub id: String,
    /// When the day's last run ended (or started, if it never ended): the item's date.
    pub published_at: String,
    /// The same, in unix milliseconds.
    #[serde(skip)]
    pub published_ms: i64,
    /// The day's scan runs, in start order.
    pub runs: Vec<Run>,
    /// Registry declaration changes.
    pub registry_changes: Counted<Change>,
    /// Declaration changes per field.
    pub registry_changes_by_field: BTreeMap<String, u64>,
    /// Observations.
    pub observations: Observations,
    /// Cohort members not probed, per reason (`not_listed`, `no_probeable_remote`).
    pub not_probed: BTreeMap<String, u64>,
    /// Tool definition changes.
    pub definition_changes: DefinitionChanges,
    /// First-observed values.
    pub first_observed: FirstObserved,
}

/// The days with a scan run, newest first, at most `limit`.
pub async fn days(db: &Db, limit: i64) -> DbResult<Vec<String>> {
    store::days(db, limit).await
}

fn opt_u64(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

async fn runs(db: &Db, day: &str) -> DbResult<Vec<Run>> {
    Ok(store::runs(db, day)
        .await?
        .into_iter()
        .map(|r| {
            let s: Value = r
                .summary
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            Run {
                scan_run_id: r.scan_run_id,
                status: r.status,
                started_ms: r.started_ms,
                finished_ms: r.finished_ms,
                started_at: iso(r.started_ms),
                finished_at: r.finished_ms.map(iso),
                entries: opt_u64(&s, "entries"),
                active_latest: opt_u64(&s, "active_latest"),
                probeable: opt_u64(&s, "probeable"),
                members: opt_u64(&s, "members"),
                remotes: opt_u64(&s, "remotes"),
            }
        })
        .collect())
}

async fn observations(db: &Db, day: &str) -> DbResult<Observations> {
    let mut o = Observations::default();
    for r in store::observation_counts(db, day).await? {
        let n = r.n;
        o.total += n;
        if r.error_type.as_deref() == Some("blocked_url") {
            o.blocked += n;
            continue;
        }
        o.probe_attempts += n;
        *o.by_level.entry(r.reached_level.to_string()).or_default() += n;
        let status = r.http_status.map_or("none".to_owned(), |s| s.to_string());
        *o.by_status.entry(status).or_default() += n;
        if let Some(e) = r.error_type {
            *o.by_error_type.entry(e).or_default() += n;
        }
    }
    o.targets = store::observed_targets(db, day).await?;
    Ok(o)
}

async fn registry_changes(db: &Db, day: &str) -> DbResult<(Vec<Change>, BTreeMap<String, u64>)> {
    let rows = store::registry_changes(db, day).await?;
    let mut by_field = BTreeMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        *by_field.entry(r.field.clone()).or_default() += 1;
        out.push(Change {
            name: r.name,
            field: r.field,
            from: serde_json::from_str(&r.from_value).unwrap_or_default(),
            to: serde_json::from_str(&r.to_value).unwrap_or_default(),
        });
    }
    Ok((out, by_field))
}

async fn not_probed(db: &Db, day: &str) -> DbResult<BTreeMap<String, u64>> {
    Ok(store::skip_reasons(db, day).await?.into_iter().collect())
}

/// Servers reaching level 2 on `day`, each compared (by the core's rule) with the previous
/// level-2 observation of the same remote.
async fn definition_changes(db: &Db, day: &str) -> DbResult<DefinitionChanges> {
    let mut per_target: BTreeMap<String, (Vec<_>, bool)> = BTreeMap::new();
    for (target, obs, earlier) in store::level2_observations(db, day).await? {
        let e = per_target.entry(target).or_default();
        e.0.push(obs);
        e.1 |= earlier;
    }
    let d = day_number(day).unwrap_or(0);
    let mut out = DefinitionChanges::default();
    let mut changed = Vec::new();
    for (target, (obs, has_earlier)) in per_target {
        if has_earlier {
            out.compared += 1;
            if Comparison::new(&obs, d).changed_on(d) {
                changed.push(target);
            }
        }
    }
    out.changed = Counted::of(changed);
    Ok(out)
}

async fn first_values(db: &Db, day: &str, column: FirstColumn) -> DbResult<Counted<FirstValue>> {
    let all = store::first_values(db, day, column)
        .await?
        .into_iter()
        .map(|(target, value)| FirstValue { target, value })
        .collect();
    Ok(Counted::of(all))
}

async fn first_observed(db: &Db, day: &str) -> DbResult<FirstObserved> {
    let targets: BTreeSet<String> = store::first_targets(db, day).await?.into_iter().collect();
    Ok(FirstObserved {
        targets: Counted::of(targets.into_iter().collect()),
        server_versions: first_values(db, day, FirstColumn::ServerVersion).await?,
        schema_hashes: first_values(db, day, FirstColumn::SchemaHash).await?,
    })
}

/// The record of `day`, or `None` when no scan ran that day.
pub async fn record(db: &Db, day: &str) -> DbResult<Option<DailyRecord>> {
    let runs = runs(db, day).await?;
    let Some(published_ms) = runs
        .iter()
        .map(|r| r.finished_ms.unwrap_or(r.started_ms))
        .max()
    else {
        return Ok(None);
    };
    let (changes, by_field) = registry_changes(db, day).await?;
    Ok(Some(DailyRecord {
        day: day.to_owned(),
        id: format!("lowdown-daily:{day}"),
        published_at: iso(published_ms),
        published_ms,
        registry_changes: Counted::of(changes),
        registry_changes_by_field: by_field,
        observations: observations(db, day).await?,
        not_probed: not_probed(db, day).await?,
        definition_changes: definition_changes(db, day).await?,
        first_observed: first_observed(db, day).await?,
        runs,
    }))
}

fn counts(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".to_owned();
    }
    m.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The record in a few plain sentences (feed items; the page's summary). Counts with
/// their denominators, nothing else.
pub fn summary(r: &DailyRecord) -> Vec<String> {
    let o = &r.observations;
    let statuses: Vec<String> = r.runs.iter().map(|x| x.status.clone()).collect();
    let mut lines = vec![format!(
        "{} scan run(s): {}.",
        r.runs.len(),
        statuses.join(", ")
    )];
    lines.push(format!(
        "Registry declaration changes: {} ({}).",
        r.registry_changes.total,
        counts(&r.registry_changes_by_field)
    ));
    lines.push(format!(
        "Observations: {} = {} probe attempts on {} servers + {} blocked URLs (nothing sent).",
        o.total, o.probe_attempts, o.targets, o.blocked
    ));
    let level = |l: &str| o.by_level.get(l).copied().unwrap_or(0);
    lines.push(format!(
        "Reached level of the {} probe attempts: 2 (initialize and tools/list) {}, 1 (initialize only) {}, 0 {}.",
        o.probe_attempts,
        level("2"),
        level("1"),
        level("0")
    ));
    lines.push(format!(
        "HTTP status of the probe attempts: {}.",
        counts(&o.by_status)
    ));
    lines.push(format!(
        "Error types of the probe attempts: {}.",
        counts(&o.by_error_type)
    ));
    lines.push(format!("Members not probed: {}.", counts(&r.not_probed)));
    lines.push(format!(
        "Tool definitions changed on {} of {} servers compared with their previous observation.",
        r.definition_changes.changed.total, r.definition_changes.compared
    ));
    let f = &r.first_observed;
    lines.push(format!(
        "First observed: {} servers, {} server versions, {} tool schema hashes.",
        f.targets.total, f.server_versions.total, f.schema_hashes.total
    ));
    lines
}
