//! `definition_changes` (SPEC §8): how often a server's tool definitions changed over the
//! last 30 days of observations.
//!
//! Each remote URL is compared with itself only: per URL, the last level-2 observation of
//! each day is compared with that URL's previous level-2 observation (which may predate the
//! window) by `schema_hash`, `desc_hash` and `name_hash`. A day is *compared* when some URL
//! had a previous observation to compare with, and *changed* when some URL differed.
//! - `pattern`: `not_enough_observations` with fewer than 3 observed days (days with a
//!   level-2 observation) in the window; else `no_change_observed`, `changes_on_most_days`
//!   (changed on more than half of the compared days) or `changed`.
//! - `last_change`: the latest changed day; `stable_days_before_last_change`: days from the
//!   change before it (or, without one, from the first observation compared) to it.
//! - `events`: the 5 most recent changes, newest first, with hashes' kinds and public tool
//!   names added or removed; never a description.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::days::day_number;
use super::history::StoredObservation;

/// Most events listed.
pub const MAX_EVENTS: usize = 5;
/// Most tool names listed as added or removed per event.
pub const MAX_EVENT_NAMES: usize = 50;

/// The overall shape of the changes seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Fewer than 3 observed days in the window.
    NotEnoughObservations,
    /// No compared day changed.
    NoChangeObserved,
    /// More than half of the compared days changed.
    ChangesOnMostDays,
    /// Some days changed.
    Changed,
}

/// `{from, to}` of a count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FromTo {
    /// Before.
    pub from: Option<u64>,
    /// After.
    pub to: Option<u64>,
}

/// One change of one remote's definitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(rename = "DefinitionEvent"))]
pub struct Event {
    /// The day it was observed.
    pub day: String,
    /// The remote whose definitions changed.
    pub remote_url: String,
    /// Which hashes changed: `schema`, `description`, `names`.
    pub changed: Vec<String>,
    /// Tool count before and after.
    pub tool_count: FromTo,
    /// Public names that appeared.
    pub tools_added: Vec<String>,
    /// Public names that went away.
    pub tools_removed: Vec<String>,
}

/// The `definition_changes` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct DefinitionChanges {
    /// See [`Pattern`].
    pub pattern: Pattern,
    /// The latest changed day.
    pub last_change: Option<String>,
    /// Days stable before the last change.
    pub stable_days_before_last_change: Option<i64>,
    /// Up to [`MAX_EVENTS`] most recent changes.
    pub events: Vec<Event>,
}

fn names_diff(a: &[String], b: &[String]) -> Vec<String> {
    let old: BTreeSet<&String> = a.iter().collect();
    b.iter()
        .filter(|n| !old.contains(n))
        .take(MAX_EVENT_NAMES)
        .cloned()
        .collect()
}

/// Every comparison of a target's observations in a window.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    observed_days: BTreeSet<i64>,
    compared_days: BTreeSet<i64>,
    changed_days: BTreeSet<i64>,
    first_day: Option<i64>,
    events: Vec<Event>,
}

impl Comparison {
    /// Compares observations (any order, any remote); `window_start` is the day number of
    /// the window's first day.
    pub fn new(obs: &[StoredObservation], window_start: i64) -> Self {
        // Per URL, the last level-2 observation of each day.
        let mut per_url: BTreeMap<&str, BTreeMap<i64, &StoredObservation>> = BTreeMap::new();
        for o in obs
            .iter()
            .filter(|o| o.reached_level == 2 && o.schema_hash.is_some())
        {
            let Some(day) = day_number(&o.day) else {
                continue;
            };
            let slot = per_url
                .entry(&o.remote_url)
                .or_default()
                .entry(day)
                .or_insert(o);
            if o.observed_at_ms >= slot.observed_at_ms {
                *slot = o;
            }
        }
        let mut c = Comparison::default();
        for (url, days) in &per_url {
            let mut prev: Option<(i64, &StoredObservation)> = None;
            for (&day, &o) in days {
                if day >= window_start {
                    c.observed_days.insert(day);
                    if let Some((p_day, p)) = prev {
                        c.compare(url, p_day, p, day, o);
                    }
                }
                prev = Some((day, o));
            }
        }
        c.events.sort_by(|a, b| {
            b.day
                .cmp(&a.day)
                .then_with(|| a.remote_url.cmp(&b.remote_url))
        });
        c
    }

    fn compare(
        &mut self,
        url: &str,
        p_day: i64,
        p: &StoredObservation,
        day: i64,
        o: &StoredObservation,
    ) {
        self.compared_days.insert(day);
        self.first_day = Some(self.first_day.map_or(p_day, |f| f.min(p_day)));
        let kinds: Vec<String> = [
            ("schema", &p.schema_hash, &o.schema_hash),
            ("description", &p.desc_hash, &o.desc_hash),
            ("names", &p.name_hash, &o.name_hash),
        ]
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(kind, _, _)| kind.to_owned())
        .collect();
        if kinds.is_empty() {
            return;
        }
        self.changed_days.insert(day);
        self.events.push(Event {
            day: o.day.clone(),
            remote_url: url.to_owned(),
            changed: kinds,
            tool_count: FromTo {
                from: p.tool_count,
                to: o.tool_count,
            },
            tools_added: names_diff(&p.tool_names, &o.tool_names),
            tools_removed: names_diff(&o.tool_names, &p.tool_names),
        });
    }

    /// Whether some remote's definitions changed on day number `day`.
    pub fn changed_on(&self, day: i64) -> bool {
        self.changed_days.contains(&day)
    }

    /// The `definition_changes` block.
    pub fn block(mut self) -> DefinitionChanges {
        let changed = &self.changed_days;
        let pattern = if self.observed_days.len() < 3 {
            Pattern::NotEnoughObservations
        } else if changed.is_empty() {
            Pattern::NoChangeObserved
        } else if changed.len() * 2 > self.compared_days.len() {
            Pattern::ChangesOnMostDays
        } else {
            Pattern::Changed
        };
        let last = changed.iter().next_back().copied();
        let stable = last.map(|l| {
            let before = changed.range(..l).next_back().copied();
            l - before.or(self.first_day).unwrap_or(l)
        });
        self.events.truncate(MAX_EVENTS);
        DefinitionChanges {
            pattern,
            last_change: last.map(super::days::day_string),
            stable_days_before_last_change: stable,
            events: self.events,
        }
    }
}

/// The `definition_changes` block of observations (see [`Comparison::new`]).
pub fn definition_changes(obs: &[StoredObservation], window_start: i64) -> DefinitionChanges {
    Comparison::new(obs, window_start).block()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(day: &str, url: &str, schema: &str, names: &[&str]) -> StoredObservation {
        StoredObservation {
            day: day.into(),
            observed_at_ms: day_number(day).unwrap() * 86_400_000,
            remote_url: url.into(),
            reached_level: 2,
            http_status: Some(200),
            tool_count: Some(names.len() as u64),
            schema_hash: Some(schema.into()),
            desc_hash: Some("d".into()),
            name_hash: Some(names.join(",")),
            tool_names: names.iter().map(|s| s.to_string()).collect(),
            ..StoredObservation::default()
        }
    }

    fn start() -> i64 {
        day_number("2026-10-01").unwrap()
    }

    #[test]
    fn patterns_follow_the_share_of_changed_days() {
        let u = "https://a.example.com/mcp";
        let two = [
            obs("2026-10-01", u, "s1", &["a"]),
            obs("2026-10-02", u, "s2", &["a"]),
        ];
        let c = definition_changes(&two, start());
        assert_eq!(c.pattern, Pattern::NotEnoughObservations);
        assert_eq!(c.last_change.as_deref(), Some("2026-10-02"));
        let mut stable: Vec<_> = (1..=9)
            .map(|d| obs(&format!("2026-10-0{d}"), u, "s1", &["a"]))
            .collect();
        assert_eq!(
            definition_changes(&stable, start()).pattern,
            Pattern::NoChangeObserved
        );
        stable.push(obs("2026-10-10", u, "s2", &["a", "b"]));
        let c = definition_changes(&stable, start());
        assert_eq!(c.pattern, Pattern::Changed);
        assert_eq!(c.last_change.as_deref(), Some("2026-10-10"));
        assert_eq!(c.stable_days_before_last_change, Some(9));
        assert_eq!(c.events.len(), 1);
        assert_eq!(c.events[0].changed, ["schema", "names"]);
        assert_eq!(c.events[0].tools_added, ["b"]);
        assert_eq!(
            c.events[0].tool_count,
            FromTo {
                from: Some(1),
                to: Some(2)
            }
        );
        let flapping: Vec<_> = (1..=7)
            .map(|d| obs(&format!("2026-10-0{d}"), u, &format!("s{}", d % 2), &["a"]))
            .collect();
        let c = definition_changes(&flapping, start());
        assert_eq!(c.pattern, Pattern::ChangesOnMostDays);
        assert_eq!(c.events.len(), MAX_EVENTS);
        assert_eq!(c.events[0].day, "2026-10-07", "newest first");
        assert_eq!(c.stable_days_before_last_change, Some(1));
    }

    #[test]
    fn each_remote_is_compared_with_itself_and_earlier_baselines_count() {
        let (a, b) = ("https://a.example.com/mcp", "https://b.example.com/mcp");
        let list = [
            obs("2026-09-01", a, "s0", &["a"]),
            obs("2026-10-01", a, "s1", &["a"]),
            obs("2026-10-01", b, "other", &["z"]),
            obs("2026-10-02", a, "s1", &["a"]),
            obs("2026-10-02", b, "other", &["z"]),
            obs("2026-10-03", a, "s1", &["a"]),
        ];
        let c = definition_changes(&list, start());
        assert_eq!(
            c.pattern,
            Pattern::Changed,
            "two URLs never compare with each other"
        );
        assert_eq!(c.last_change.as_deref(), Some("2026-10-01"));
        assert_eq!(c.stable_days_before_last_change, Some(30));
        let mut failed = obs("2026-10-04", a, "x", &[]);
        failed.reached_level = 0;
        let mut with_failure = list.to_vec();
        with_failure.push(failed);
        assert_eq!(definition_changes(&with_failure, start()).events.len(), 1);
    }
}
