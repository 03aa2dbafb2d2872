//! A target's changes over 30 days, as `/t/{target}/changes` lists them and its RSS and
//! JSON feeds carry them: facts with their source and sample sizes, never a score.
//!
//! The host reads the blocks of the answer (Registry, packages, Scanner) and what nodes
//! recorded first (a server version or a tool schema hash); this module turns them into
//! dated items, newest first, each with a stable id
//! (`lowdown-change:<target>:<day>:<kind>:<subject>`, the subject being the field, package,
//! remote or value that changed), so a feed reader never sees one twice even as the counts
//! in a title grow.
//!
//! Kinds:
//! - `registry`: a declaration field changed (version, status, remote hosts, listed).
//! - `package`: a declared package's latest version, deprecation, yank, PEP 792 status or
//!   presence changed between daily checks.
//! - `reachability`: the Scanner's level changed from one observed day to the next.
//! - `definitions`: the Scanner saw the tool definitions of a remote change.
//! - `version`: nodes recorded a server version for the first time; with the organic
//!   success rate of it and of the version before it once each has [`MIN_RATED`] rated
//!   calls (else their counts so far).
//! - `schema`: nodes recorded a tool schema hash for the first time.

use serde::{Deserialize, Serialize};

use crate::days::day_of;
use crate::scanner::changes::Event;
use crate::scanner::days::day_number;
use crate::scanner::history::{Daily, DayChange};
use crate::scanner::WINDOW_DAYS;

/// Rated organic calls a version needs before its success rate is stated.
pub const MIN_RATED: u64 = 10;
/// First sightings listed per kind (`version`, `schema`), newest first: anyone can send
/// records with made-up versions, so how many the feed shows is bounded.
pub const MAX_FIRSTS: usize = 20;
/// Days within which `get_lowdown` calls a change recent.
pub const RECENT_DAYS: i64 = 7;

/// A value nodes recorded, with when they first did and its organic calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirstSeen {
    /// The server version or schema hash.
    pub value: String,
    /// Unix ms of the first record carrying it.
    pub first_seen_ms: i64,
    /// Organic success + partial + failure carrying it.
    pub rated: u64,
    /// Organic successes carrying it.
    pub successes: u64,
}

/// What the host read for one target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangeFacts {
    /// Today (UTC).
    pub today: String,
    /// The Registry block's `changes_30d`.
    pub registry: Vec<DayChange>,
    /// Each declared package (`registry_type:identifier`) with its `changes_30d`.
    pub packages: Vec<(String, Vec<DayChange>)>,
    /// The Scanner's `daily_30d`.
    pub daily: Vec<Daily>,
    /// The Scanner's definition events.
    pub definitions: Vec<Event>,
    /// Server versions nodes recorded.
    pub versions: Vec<FirstSeen>,
    /// Tool schema hashes nodes recorded.
    pub schemas: Vec<FirstSeen>,
}

/// One change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Change {
    /// Stable across reads and hosts.
    pub id: String,
    /// UTC day.
    pub day: String,
    /// `registry`, `package`, `reachability`, `definitions`, `version` or `schema`.
    pub kind: String,
    /// One line, facts only.
    pub title: String,
    /// Who observed it.
    pub source: String,
}

fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "none".to_owned(),
        other => other.to_string(),
    }
}

fn rate(rated: u64, successes: u64) -> String {
    if rated < MIN_RATED {
        return format!("{rated} rated calls so far");
    }
    format!(
        "{:.1}% of {rated} rated calls succeeded",
        successes as f64 * 100.0 / rated as f64
    )
}

const SCANNER: &str = "Lowdown Scanner (daily initialize and tools/list)";
const NODES: &str = "records of Lowdown nodes (organic)";

/// The changes of `target` in the 30 days ending today, newest first (see the module docs).
pub fn changes(target: &str, f: &ChangeFacts) -> Vec<Change> {
    let start = day_number(&f.today).unwrap_or(0) - (WINDOW_DAYS - 1);
    // (day, kind, subject, title, source)
    let mut out: Vec<(String, &'static str, String, String, &'static str)> = Vec::new();
    for c in &f.registry {
        let title = format!(
            "MCP Registry {}: {} → {}",
            c.field,
            json_text(&c.from),
            json_text(&c.to)
        );
        out.push((
            c.day.clone(),
            "registry",
            c.field.clone(),
            title,
            "the official MCP Registry",
        ));
    }
    for (package, list) in &f.packages {
        for c in list {
            let title = format!(
                "{package} {}: {} → {}",
                c.field,
                json_text(&c.from),
                json_text(&c.to)
            );
            let subject = format!("{package}:{}", c.field);
            out.push((
                c.day.clone(),
                "package",
                subject,
                title,
                "npm and PyPI, checked daily",
            ));
        }
    }
    for w in f.daily.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.reached_level != b.reached_level {
            let status = |d: &Daily| {
                d.http_status
                    .map_or("no response".to_owned(), |s| format!("HTTP {s}"))
            };
            let title = format!(
                "reachability: level {} ({}) on {} → level {} ({})",
                a.reached_level,
                status(a),
                a.day,
                b.reached_level,
                status(b)
            );
            out.push((
                b.day.clone(),
                "reachability",
                "level".to_owned(),
                title,
                SCANNER,
            ));
        }
    }
    for e in &f.definitions {
        let count = |n: Option<u64>| n.map_or("?".to_owned(), |n| n.to_string());
        let mut title = format!(
            "tool definitions changed ({}): {} → {} tools",
            e.changed.join(", "),
            count(e.tool_count.from),
            count(e.tool_count.to)
        );
        if !e.tools_added.is_empty() {
            title.push_str(&format!("; added {}", e.tools_added.join(", ")));
        }
        if !e.tools_removed.is_empty() {
            title.push_str(&format!("; removed {}", e.tools_removed.join(", ")));
        }
        out.push((
            e.day.clone(),
            "definitions",
            e.remote_url.clone(),
            title,
            SCANNER,
        ));
    }
    let mut versions: Vec<&FirstSeen> = f.versions.iter().collect();
    versions.sort_by(|a, b| (a.first_seen_ms, &a.value).cmp(&(b.first_seen_ms, &b.value)));
    for (i, v) in versions.iter().enumerate() {
        let mut title = format!(
            "new server version {}: {}",
            v.value,
            rate(v.rated, v.successes)
        );
        if let Some(before) = i.checked_sub(1).map(|j| versions[j]) {
            title.push_str(&format!(
                "; version before, {}: {}",
                before.value,
                rate(before.rated, before.successes)
            ));
        }
        out.push((
            day_of(v.first_seen_ms),
            "version",
            v.value.clone(),
            title,
            NODES,
        ));
    }
    for s in &f.schemas {
        let short: String = s.value.chars().take(12).collect();
        let title = format!(
            "new tool schema hash {short}…: {}",
            rate(s.rated, s.successes)
        );
        out.push((
            day_of(s.first_seen_ms),
            "schema",
            s.value.clone(),
            title,
            NODES,
        ));
    }
    out.retain(|(day, ..)| day_number(day).is_some_and(|d| d >= start));
    out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(&b.2)));
    out.dedup_by(|a, b| (&a.0, a.1, &a.2) == (&b.0, b.1, &b.2));
    let (mut versions_kept, mut schemas_kept) = (0, 0);
    out.retain(|(_, kind, ..)| {
        let kept = match *kind {
            "version" => &mut versions_kept,
            "schema" => &mut schemas_kept,
            _ => return true,
        };
        *kept += 1;
        *kept <= MAX_FIRSTS
    });
    out.into_iter()
        .map(|(day, kind, subject, title, source)| Change {
            id: format!("lowdown-change:{target}:{day}:{kind}:{subject}"),
            day,
            kind: kind.to_owned(),
            title,
            source: source.to_owned(),
        })
        .collect()
}

/// The changes of the last [`RECENT_DAYS`] days (today included) among `all`.
pub fn recent<'a>(all: &'a [Change], today: &str) -> impl Iterator<Item = &'a Change> {
    let from = day_number(today).unwrap_or(0) - (RECENT_DAYS - 1);
    all.iter()
        .filter(move |c| day_number(&c.day).is_some_and(|d| d >= from))
}

#[cfg(test)]
mod tests;
