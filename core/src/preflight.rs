//! The preflight verdict: whether an agent should be asked before it calls a server's tool,
//! from what Lowdown recorded of that server. The server gathers the facts and answers
//! `GET /api/preflight/{target}`; the hooks only ask it and print the decision.
//!
//! Decisions (each reason is a fact with its source and sample size, never a score):
//! - The MCP Registry marks the entry `deleted`.
//! - A declared package has a finding that leads an answer's message (a deprecated or
//!   yanked latest version, an archived, quarantined or deprecated project, a 404):
//!   [`crate::scanner::packages::findings`], so the two never disagree.
//! - The Scanner saw the tool definitions change in the last [`RECENT_DAYS`] days after at
//!   least [`STABLE_DAYS`] stable days. A server whose definitions change most days is not
//!   flagged: a change there is the usual.
//! - The newest version with at least [`MIN_RATED`] rated organic calls from at least
//!   [`MIN_NETWORKS`] client networks succeeds at least [`SHARP_DROP`] less often than the
//!   other versions together (also at least [`MIN_RATED`]). The newest is the version the
//!   Registry declares or the Scanner last saw when it has enough calls, else the highest
//!   version number. The networks bound what one participant can claim: one network's
//!   records (at most 20 rated a day per target) never make a version look broken alone.
//!
//! Anything else, including nothing recorded, is no decision: the hook stays silent.

use serde::{Deserialize, Serialize};

use crate::scanner::changes::{DefinitionChanges, Pattern};
use crate::scanner::days::day_number;

/// A change within this many days (today included) is recent.
pub const RECENT_DAYS: i64 = 7;
/// Stable days before a definition change for it to be flagged.
pub const STABLE_DAYS: i64 = 7;
/// Rated organic calls each side of a version comparison needs.
pub const MIN_RATED: u64 = 10;
/// Client networks behind the newest version's rated calls (as confidence needs).
pub const MIN_NETWORKS: u64 = 3;
/// The success-rate drop (as a fraction) that asks.
pub const SHARP_DROP: f64 = 0.25;

/// Organic calls of one server version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionCalls {
    /// The server version (`(none)` for records without one is left out by the host).
    pub version: String,
    /// Organic success + partial + failure.
    pub rated: u64,
    /// Organic successes.
    pub successes: u64,
    /// Client networks behind the rated calls.
    pub networks: u64,
}

/// What the host read for one target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreflightFacts {
    /// Today (UTC).
    pub today: String,
    /// The Registry status, for an entry.
    pub registry_status: Option<String>,
    /// The packages' findings, as the answer's message leads with them.
    pub package_findings: Vec<String>,
    /// The Scanner's definition changes, for a member of its sample.
    pub definitions: Option<DefinitionChanges>,
    /// The version the Registry declares or the Scanner last saw.
    pub current_version: Option<String>,
    /// Organic calls per server version.
    pub versions: Vec<VersionCalls>,
}

/// What the hook does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Ask the user before the call, with the reasons.
    Ask,
    /// Nothing to say: the call goes ahead as it would without Lowdown.
    None,
}

/// The verdict: a decision and the facts behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Verdict {
    /// `ask` when at least one reason holds.
    pub decision: Decision,
    /// One fact per reason, in the order of the module docs.
    pub reasons: Vec<String>,
}

/// The verdict for `target` from its facts (see the module docs).
pub fn verdict(target: &str, f: &PreflightFacts) -> Verdict {
    let mut reasons = Vec::new();
    if f.registry_status.as_deref() == Some("deleted") {
        reasons.push(format!("the MCP Registry marks {target} deleted"));
    }
    reasons.extend(f.package_findings.iter().cloned());
    if let Some(r) = definition_reason(f) {
        reasons.push(r);
    }
    if let Some(r) = version_reason(f) {
        reasons.push(r);
    }
    Verdict {
        decision: if reasons.is_empty() {
            Decision::None
        } else {
            Decision::Ask
        },
        reasons,
    }
}

fn definition_reason(f: &PreflightFacts) -> Option<String> {
    let d = f.definitions.as_ref()?;
    let day = d.last_change.as_deref()?;
    let recent = day_number(&f.today)? - day_number(day)? < RECENT_DAYS;
    let stable = d.stable_days_before_last_change.unwrap_or(0);
    (d.pattern == Pattern::Changed && recent && stable >= STABLE_DAYS).then(|| {
        format!("its tool definitions changed on {day} after {stable} stable days (Lowdown Scanner, daily)")
    })
}

/// The numeric parts of a version, for ordering (`v1.10.0-rc1` → 1, 10, 0, 1).
fn numbers(v: &str) -> Vec<u64> {
    v.split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().unwrap_or(u64::MAX))
        .collect()
}

fn version_reason(f: &PreflightFacts) -> Option<String> {
    let enough: Vec<&VersionCalls> = f
        .versions
        .iter()
        .filter(|v| v.rated >= MIN_RATED && v.networks >= MIN_NETWORKS)
        .collect();
    let newest = f
        .current_version
        .as_deref()
        .and_then(|c| enough.iter().find(|v| v.version == c))
        .or_else(|| enough.iter().max_by_key(|v| numbers(&v.version)))?;
    let (rated, successes) = f
        .versions
        .iter()
        .filter(|v| v.version != newest.version)
        .fold((0, 0), |(r, s), v| (r + v.rated, s + v.successes));
    if rated < MIN_RATED {
        return None;
    }
    let before = successes as f64 / rated as f64;
    let now = newest.successes as f64 / newest.rated as f64;
    (before - now >= SHARP_DROP).then(|| {
        format!(
            "version {} succeeded in {:.1}% of {} rated calls, other versions in {:.1}% of {rated} (organic records)",
            newest.version,
            now * 100.0,
            newest.rated,
            before * 100.0
        )
    })
}

#[cfg(test)]
mod tests;
