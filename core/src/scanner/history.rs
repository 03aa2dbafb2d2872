//! The `registry` and `scanner` blocks of a reputation answer (SPEC §8), assembled from
//! stored rows. The host reads the rows; every rule about what they mean is here.
//!
//! Decisions:
//! - The window is the 30 UTC days ending today; it ends yesterday while no run has
//!   started today, so a scan scheduled for later in the day is not reported missing.
//! - `missing_days` starts at the later of the window's start and the Scanner's first run
//!   on this deployment (days before it had no Scanner). Days before the target joined the
//!   cohort are `not_in_sample`; days with no run, with only failed Registry reads, or whose
//!   run stopped before this target are `scanner_did_not_run`; otherwise the reason the
//!   run recorded (`not_listed`, `no_probeable_remote`).
//! - With several remotes, a day (and `latest`) shows its highest level and that
//!   observation's status (the later one on a tie).
//! - `observed_hosts` are the hosts of remotes whose latest observation in the window got
//!   an HTTP response; `observed_server_version` is the latest one published.
//! - `schema_versions_30d` counts the distinct schema hashes of the window's observations;
//!   `status_distribution_30d` counts them by HTTP status as observed (`no_response` when
//!   none arrived).
//! - Fields come in the order of the printed answers (SPEC §8): `target`, `observed`, what
//!   was seen (`last_observed_at` … `status_distribution_30d`), `in_sample`, then the detail,
//!   `observation_method` last.
//! - Outside the sample the block is `{target, observed, in_sample: false, note}`: it says
//!   nothing about the server.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::changes::{Comparison, DefinitionChanges};
use super::days::{day_number, day_string, iso};
use super::registry::{Change, Declaration};
use super::{ErrorType, MissingReason, WINDOW_DAYS};
use crate::telemetry::host_from_url;

/// The note of a target outside the sample.
pub const NOT_IN_SAMPLE_NOTE: &str =
    "not in the Lowdown Scanner sample: this says nothing about the server";

/// One stored observation, as the answer reads it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredObservation {
    /// The run's UTC day.
    pub day: String,
    /// Unix milliseconds.
    pub observed_at_ms: i64,
    /// The remote probed.
    pub remote_url: String,
    /// 0, 1 or 2.
    pub reached_level: u8,
    /// Status seen.
    pub http_status: Option<u16>,
    /// Reason, when any.
    pub error_type: Option<ErrorType>,
    /// Initialize latency.
    pub latency_ms: Option<f64>,
    /// Published server version.
    pub server_version: Option<String>,
    /// Tools over every page.
    pub tool_count: Option<u64>,
    /// §3.3 schema hash.
    pub schema_hash: Option<String>,
    /// §3.3 description hash.
    pub desc_hash: Option<String>,
    /// Name hash over every page.
    pub name_hash: Option<String>,
    /// Public tool names.
    pub tool_names: Vec<String>,
    /// `WWW-Authenticate` seen.
    pub www_authenticate: bool,
}

/// What the host read for one target's `scanner` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScannerFacts {
    /// The target asked for (`mcp:<name>`).
    pub target: String,
    /// Today (UTC).
    pub today: String,
    /// The day of this deployment's first scan run, if any.
    pub first_run_day: Option<String>,
    /// The day the target joined the cohort; `None` outside the sample.
    pub joined_day: Option<String>,
    /// Days in the window with a run, and whether some run that day read the Registry.
    pub run_days: Vec<(String, bool)>,
    /// Recorded reasons for members not probed, by day.
    pub skips: Vec<(String, MissingReason)>,
    /// Observations in the window, plus, per remote, the last level-2 one before it.
    pub observations: Vec<StoredObservation>,
    /// The target's first observation ever.
    pub first_observed_at_ms: Option<i64>,
    /// The Registry's declared version.
    pub declared_version: Option<String>,
    /// The Registry's declared remote hosts.
    pub declared_hosts: Vec<String>,
}

/// `latest`: the most recent day's best observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(rename = "ScannerLatest"))]
pub struct Latest {
    /// 0, 1 or 2.
    pub reached_level: u8,
    /// Status seen.
    pub http_status: Option<u16>,
    /// Initialize latency.
    pub latency_ms: Option<f64>,
    /// Tools over every page.
    pub tool_count: Option<u64>,
    /// Published server version.
    pub server_version: Option<String>,
    /// Reason, when any.
    pub error_type: Option<ErrorType>,
    /// `WWW-Authenticate` seen.
    pub www_authenticate: bool,
    /// When.
    pub observed_at: String,
}

/// One day of the 30-day strip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(rename = "ScannerDay"))]
pub struct Daily {
    /// UTC day.
    pub day: String,
    /// The day's highest level.
    pub reached_level: u8,
    /// That observation's status.
    pub http_status: Option<u16>,
    /// That observation's tool count.
    pub tool_count: Option<u64>,
    /// Some remote's definitions changed that day.
    pub tools_changed: bool,
    /// That observation's reason, when any.
    pub error_type: Option<ErrorType>,
}

/// A day without an observation, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(rename = "MissingDay"))]
pub struct Missing {
    /// UTC day.
    pub day: String,
    /// Why.
    pub reason: MissingReason,
}

/// Declared (Registry) beside observed (Scanner).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct DeclaredVsObserved {
    /// Registry version.
    pub declared_version: Option<String>,
    /// Latest published `serverInfo.version`.
    pub observed_server_version: Option<String>,
    /// Registry remote hosts.
    pub declared_hosts: Vec<String>,
    /// Hosts that answered.
    pub observed_hosts: Vec<String>,
}

/// What the Scanner saw of a cohort member (the fields before `in_sample`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ScannerSeen {
    /// Last observation.
    pub last_observed_at: Option<String>,
    /// Observations in the window (every remote).
    pub observations_30d: u64,
    /// The latest day's best observation.
    pub latest: Option<Latest>,
    /// Distinct tool schema hashes in the window.
    pub schema_versions_30d: u64,
    /// Observations in the window by HTTP status (`no_response` when none arrived).
    pub status_distribution_30d: BTreeMap<String, u64>,
}

/// The detail of a cohort member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ScannerDetail {
    /// First observation ever.
    pub first_observed_at: Option<String>,
    /// One entry per observed day in the window.
    pub daily_30d: Vec<Daily>,
    /// Tool names of the latest level-2 observation.
    pub tool_names: Vec<String>,
    /// Days without an observation.
    pub missing_days: Vec<Missing>,
    /// Declared beside observed.
    pub declared_vs_observed: DeclaredVsObserved,
    /// Tool definition changes.
    pub definition_changes: DefinitionChanges,
    /// How these observations are made.
    pub observation_method: ObservationMethod,
}

/// How the Scanner observes: the same for every member, stated so that an answer read on
/// its own says what its numbers are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ObservationMethod {
    /// Who connects.
    pub observer: String,
    /// How often.
    pub schedule: String,
    /// Which remotes of the Registry entry are connected to.
    pub remotes: String,
    /// The requests sent, in order.
    pub requests: Vec<String>,
    /// Always false: no tool is ever called.
    pub calls_tools: bool,
    /// Each request's time limit.
    pub request_timeout_ms: u64,
    /// What each `reached_level` means.
    pub levels: BTreeMap<String, String>,
    /// How `http_status` is reported.
    pub http_status: String,
}

impl ObservationMethod {
    /// The method of this Scanner (SPEC §8, [`super::probe`]).
    pub fn current() -> ObservationMethod {
        let levels = [
            ("0", "initialize did not succeed"),
            ("1", "initialize succeeded; tools/list did not"),
            ("2", "initialize and tools/list succeeded"),
        ];
        ObservationMethod {
            observer: super::CLIENT_NAME.to_owned(),
            schedule: "once per UTC day".to_owned(),
            remotes: "every streamable-http remote the MCP Registry entry declares (templated URLs excepted); packages are never installed or run".to_owned(),
            requests: ["initialize", "notifications/initialized", "tools/list"]
                .map(String::from)
                .to_vec(),
            calls_tools: false,
            request_timeout_ms: super::REQUEST_TIMEOUT_MS,
            levels: levels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            http_status: "as observed on the last initialize or tools/list that got a response: a 401 is a 401, not down".to_owned(),
        }
    }
}

/// The `scanner` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ScannerBlock {
    /// The target (`mcp:<name>`).
    pub target: String,
    /// At least one observation exists.
    pub observed: bool,
    /// Only for members.
    #[serde(flatten)]
    pub seen: Option<ScannerSeen>,
    /// A cohort member.
    pub in_sample: bool,
    /// Only outside the sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Only for members.
    #[serde(flatten)]
    pub detail: Option<ScannerDetail>,
}

fn best<'a>(a: &'a StoredObservation, b: &'a StoredObservation) -> &'a StoredObservation {
    if (b.reached_level, b.observed_at_ms) > (a.reached_level, a.observed_at_ms) {
        b
    } else {
        a
    }
}

/// Builds the `scanner` block (see the module docs).
pub fn scanner_block(f: &ScannerFacts) -> ScannerBlock {
    let Some(joined) = f.joined_day.as_deref().and_then(day_number) else {
        return ScannerBlock {
            target: f.target.clone(),
            observed: f.first_observed_at_ms.is_some(),
            seen: None,
            in_sample: false,
            note: Some(NOT_IN_SAMPLE_NOTE.to_owned()),
            detail: None,
        };
    };
    let today = day_number(&f.today).unwrap_or(0);
    let window_start = today - (WINDOW_DAYS - 1);
    let in_window: Vec<&StoredObservation> = f
        .observations
        .iter()
        .filter(|o| day_number(&o.day).is_some_and(|d| d >= window_start))
        .collect();
    let comparison = Comparison::new(&f.observations, window_start);
    let mut by_day: BTreeMap<&str, &StoredObservation> = BTreeMap::new();
    for o in &in_window {
        by_day
            .entry(o.day.as_str())
            .and_modify(|b| *b = best(b, o))
            .or_insert(o);
    }
    let daily_30d = by_day
        .iter()
        .map(|(day, o)| Daily {
            day: (*day).to_owned(),
            reached_level: o.reached_level,
            http_status: o.http_status,
            tool_count: o.tool_count,
            tools_changed: day_number(day).is_some_and(|d| comparison.changed_on(d)),
            error_type: o.error_type,
        })
        .collect();
    let latest = by_day.values().next_back().map(|o| Latest {
        reached_level: o.reached_level,
        http_status: o.http_status,
        latency_ms: o.latency_ms,
        tool_count: o.tool_count,
        server_version: o.server_version.clone(),
        error_type: o.error_type,
        www_authenticate: o.www_authenticate,
        observed_at: iso(o.observed_at_ms),
    });
    let newest = |keep: &dyn Fn(&StoredObservation) -> bool| {
        in_window
            .iter()
            .filter(|o| keep(o))
            .max_by_key(|o| o.observed_at_ms)
            .copied()
    };
    let mut latest_per_url: BTreeMap<&str, &StoredObservation> = BTreeMap::new();
    for o in &in_window {
        let slot = latest_per_url.entry(o.remote_url.as_str()).or_insert(o);
        if o.observed_at_ms > slot.observed_at_ms {
            *slot = o;
        }
    }
    let observed_hosts: BTreeSet<String> = latest_per_url
        .values()
        .filter(|o| o.http_status.is_some())
        .filter_map(|o| host_from_url(&o.remote_url))
        .collect();
    let schema_versions: BTreeSet<&str> = in_window
        .iter()
        .filter_map(|o| o.schema_hash.as_deref())
        .collect();
    let mut statuses: BTreeMap<String, u64> = BTreeMap::new();
    for o in &in_window {
        let key = o
            .http_status
            .map_or_else(|| "no_response".to_owned(), |s| s.to_string());
        *statuses.entry(key).or_default() += 1;
    }
    ScannerBlock {
        target: f.target.clone(),
        observed: f.first_observed_at_ms.is_some(),
        seen: Some(ScannerSeen {
            last_observed_at: f
                .observations
                .iter()
                .map(|o| o.observed_at_ms)
                .max()
                .map(iso),
            observations_30d: in_window.len() as u64,
            latest,
            schema_versions_30d: schema_versions.len() as u64,
            status_distribution_30d: statuses,
        }),
        in_sample: true,
        note: None,
        detail: Some(ScannerDetail {
            first_observed_at: f.first_observed_at_ms.map(iso),
            daily_30d,
            tool_names: newest(&|o| o.reached_level == 2)
                .map(|o| o.tool_names.clone())
                .unwrap_or_default(),
            missing_days: missing_days(f, &by_day, joined, window_start, today),
            declared_vs_observed: DeclaredVsObserved {
                declared_version: f.declared_version.clone(),
                observed_server_version: newest(&|o| o.server_version.is_some())
                    .and_then(|o| o.server_version.clone()),
                declared_hosts: f.declared_hosts.clone(),
                observed_hosts: observed_hosts.into_iter().collect(),
            },
            definition_changes: comparison.block(),
            observation_method: ObservationMethod::current(),
        }),
    }
}

fn missing_days(
    f: &ScannerFacts,
    observed: &BTreeMap<&str, &StoredObservation>,
    joined: i64,
    window_start: i64,
    today: i64,
) -> Vec<Missing> {
    let runs: BTreeMap<i64, bool> = f
        .run_days
        .iter()
        .filter_map(|(d, ok)| Some((day_number(d)?, *ok)))
        .fold(BTreeMap::new(), |mut m, (d, ok)| {
            *m.entry(d).or_insert(false) |= ok;
            m
        });
    let skips: BTreeMap<i64, MissingReason> = f
        .skips
        .iter()
        .filter_map(|(d, r)| Some((day_number(d)?, *r)))
        .collect();
    let Some(first_run) = f.first_run_day.as_deref().and_then(day_number) else {
        return Vec::new();
    };
    let end = if runs.contains_key(&today) {
        today
    } else {
        today - 1
    };
    (window_start.max(first_run)..=end)
        .filter_map(|d| {
            let day = day_string(d);
            if observed.contains_key(day.as_str()) {
                return None;
            }
            let reason = if d < joined {
                MissingReason::NotInSample
            } else if runs.get(&d) != Some(&true) {
                MissingReason::ScannerDidNotRun
            } else {
                skips
                    .get(&d)
                    .copied()
                    .unwrap_or(MissingReason::ScannerDidNotRun)
            };
            Some(Missing { day, reason })
        })
        .collect()
}

/// What the host read for one target's `registry` block.
#[derive(Debug, Clone, PartialEq)]
pub struct RegistryFacts {
    /// Today (UTC).
    pub today: String,
    /// The stored declaration.
    pub declaration: Declaration,
    /// The day the entry was first recorded.
    pub first_seen_day: String,
    /// The day of this deployment's first successful Registry read.
    pub baseline_day: Option<String>,
    /// Recorded changes with their days.
    pub changes: Vec<(String, Change)>,
}

/// One change in `changes_30d`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct DayChange {
    /// UTC day of the read that saw it.
    pub day: String,
    /// The field.
    pub field: String,
    /// Before.
    pub from: serde_json::Value,
    /// After.
    pub to: serde_json::Value,
}

/// The `registry` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct RegistryBlock {
    /// In the latest successful Registry read (any status).
    pub listed: bool,
    /// The declared version (§3.2 rule).
    pub declared_version: Option<String>,
    /// The Registry status.
    pub status: String,
    /// Hosts of the declared remotes.
    pub remote_hosts: Vec<String>,
    /// Recorded since this deployment's first Registry read, so `changes_30d` is complete
    /// since then; false for entries that appeared later.
    pub recorded_since_baseline: bool,
    /// Changes seen in the last 30 days, oldest first.
    pub changes_30d: Vec<DayChange>,
}

/// Builds the `registry` block.
pub fn registry_block(f: &RegistryFacts) -> RegistryBlock {
    let window_start = day_number(&f.today).unwrap_or(0) - (WINDOW_DAYS - 1);
    let mut changes: Vec<DayChange> = f
        .changes
        .iter()
        .filter(|(d, _)| day_number(d).is_some_and(|d| d >= window_start))
        .map(|(day, c)| DayChange {
            day: day.clone(),
            field: c.field.clone(),
            from: c.from.clone(),
            to: c.to.clone(),
        })
        .collect();
    changes.sort_by(|a, b| a.day.cmp(&b.day));
    RegistryBlock {
        listed: f.declaration.listed,
        declared_version: f.declaration.version.clone(),
        status: f.declaration.status.clone(),
        remote_hosts: f.declaration.remote_hosts.clone(),
        recorded_since_baseline: f
            .baseline_day
            .as_deref()
            .is_some_and(|b| f.first_seen_day.as_str() <= b),
        changes_30d: changes,
    }
}

#[cfg(test)]
mod tests;
