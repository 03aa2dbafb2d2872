//! The `packages` block (SPEC §8): what npm and PyPI say about the packages a Registry
//! entry declares, checked daily with the scan.
//!
//! The host fetches; everything else is here:
//! - [`PackageKey::of`]: which declared packages are checked (npm and PyPI names that are
//!   valid names there) and the paths asked for ([`npm`], [`pypi`]).
//! - [`npm::read`] and [`pypi::read`]: one answer (or a 404, or a failure) → a [`Check`].
//! - [`PackageState::next`]: what is kept from one check to the next (`not_found_since`,
//!   the last good facts when a check fails).
//! - [`item`] and [`findings`]: the answer's block and the facts that lead its `message`.
//!
//! Decisions:
//! - `not_found` is set by a real 404 only; a timeout, a 5xx or a refused URL is a failed
//!   check that keeps the previous facts (with `last_check_failed`).
//! - `not_found_since` is the day a package that had been found started answering 404, or
//!   [`FIRST_CHECK`] when it has answered 404 at every check since Lowdown's first, so
//!   "always missing" reads apart from "went missing".
//! - `changes_30d` lists what changed between two successful checks (the latest version,
//!   its deprecation or yank, the PEP 792 status, found ↔ not found), kept 30 days. The
//!   first check is the baseline and changes nothing; a failed check compares nothing.
//! - Versions are published under the §3.2 version rule, like the Registry's declared
//!   version, so the two compare like for like; deprecation messages and yank reasons are
//!   maintainers' prose and are never published (only that the version is deprecated or
//!   yanked), for the same reason server versions are sanitised.
//! - PyPI names are PEP 503 normalised before any request (PyPI redirects other spellings,
//!   and the Scanner never follows redirects).

pub mod npm;
pub mod pypi;

use serde::{Deserialize, Serialize};

use super::days::{day_number, day_of, iso};
use super::history::DayChange;
use super::registry::Package;
use super::WINDOW_DAYS;
use crate::record::build::sanitize_server_version;
use crate::target_label::lookup_form;

/// The public npm registry.
pub const DEFAULT_NPM_REGISTRY_URL: &str = "https://registry.npmjs.org";
/// The public Python Package Index.
pub const DEFAULT_PYPI_URL: &str = "https://pypi.org";
/// Milliseconds one package request may take, answer included.
pub const CHECK_TIMEOUT_MS: u64 = 30_000;
/// Package checks in flight at once.
pub const CHECK_CONCURRENCY: usize = 8;
/// `not_found_since` of a package that has answered 404 at every check since the first.
pub const FIRST_CHECK: &str = "first_check";

/// A package registry Lowdown checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ecosystem {
    /// registry.npmjs.org and its mirrors.
    Npm,
    /// pypi.org and its mirrors.
    Pypi,
}

impl Ecosystem {
    /// The Registry's `registryType` and the target namespace: `npm`, `pypi`.
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Npm => "npm",
            Ecosystem::Pypi => "pypi",
        }
    }

    /// The `registryType` this names, if Lowdown checks it.
    pub fn parse(registry_type: &str) -> Option<Ecosystem> {
        match registry_type {
            "npm" => Some(Ecosystem::Npm),
            "pypi" => Some(Ecosystem::Pypi),
            _ => None,
        }
    }
}

/// A checked package: its registry and its name there (npm lower case, PyPI by PEP 503).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PackageKey {
    /// npm or PyPI.
    pub ecosystem: Ecosystem,
    /// The normalised name.
    pub name: String,
}

impl PackageKey {
    /// The key of a declared package, when Lowdown checks it: an npm or PyPI package whose
    /// identifier is a valid name there.
    pub fn of(p: &Package) -> Result<PackageKey, Unchecked> {
        let Some(ecosystem) = Ecosystem::parse(&p.registry_type) else {
            return Err(Unchecked::RegistryType);
        };
        let valid = match ecosystem {
            Ecosystem::Npm => npm::valid_name(&p.identifier),
            Ecosystem::Pypi => pypi::valid_name(&p.identifier),
        };
        if !valid {
            return Err(Unchecked::InvalidName);
        }
        let form = lookup_form(&format!("{}:{}", ecosystem.as_str(), p.identifier));
        Ok(PackageKey {
            ecosystem,
            name: form[ecosystem.as_str().len() + 1..].to_owned(),
        })
    }

    /// The target this package is recorded under, in lookup form: `npm:<name>`,
    /// `pypi:<name>` (what `lookup_form` makes of an `npm:`/`pypi:` name).
    pub fn target(&self) -> String {
        format!("{}:{}", self.ecosystem.as_str(), self.name)
    }

    /// The key of an `npm:`/`pypi:` target name asked for, if it is one.
    pub fn of_target(target: &str) -> Option<PackageKey> {
        let (ns, name) = target.split_once(':')?;
        let ecosystem = Ecosystem::parse(ns)?;
        PackageKey::of(&Package {
            registry_type: ecosystem.as_str().to_owned(),
            identifier: name.to_owned(),
            version: None,
        })
        .ok()
    }
}

/// Why a declared package is listed as unchecked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Unchecked {
    /// Lowdown checks npm and PyPI only (`oci`, `nuget`, `mcpb`, ... are listed as declared).
    RegistryType,
    /// The identifier is not a valid name in that registry, so nothing was asked.
    InvalidName,
}

/// What one answer from a package registry means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Check {
    /// The package exists.
    Found(Facts),
    /// A real 404 (`kind` for PyPI: `no_project` or `no_releases`).
    NotFound {
        /// PyPI only.
        kind: Option<NotFoundKind>,
    },
    /// No usable answer (network, 5xx, unreadable body): the previous facts stand.
    Failed {
        /// What went wrong, in a few words (never a response body).
        reason: String,
    },
}

/// Facts about an existing package.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    /// The latest version (npm `dist-tags.latest`, PyPI `info.version`), §3.2 rule.
    pub latest: Option<String>,
    /// npm: the latest version carries a deprecation.
    pub latest_deprecated: bool,
    /// PyPI: the latest version is yanked (PyPI shows a yanked one only when every
    /// release is yanked).
    pub latest_yanked: bool,
    /// PyPI: the PEP 792 project status (`active` when the index states none).
    pub project_status: Option<ProjectStatus>,
}

/// PEP 792 project status markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProjectStatus {
    /// The default.
    Active,
    /// No further updates expected; files still offered.
    Archived,
    /// Considered unsafe (e.g. malware); no files offered.
    Quarantined,
    /// Obsolete, perhaps superseded.
    Deprecated,
}

/// How a PyPI package is missing (from the Index API).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NotFoundKind {
    /// The index has no project of that name (404).
    NoProject,
    /// The project exists and offers no release.
    NoReleases,
}

/// What is kept about one package between checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageState {
    /// The facts of the last successful check (a 404 clears them).
    pub facts: Facts,
    /// The last successful check (an answer or a 404), unix ms.
    pub checked_at_ms: Option<i64>,
    /// The last successful check was a 404.
    pub not_found: bool,
    /// PyPI: how it is missing.
    pub not_found_kind: Option<NotFoundKind>,
    /// The UTC day of the first 404 in the current run of 404s, or [`FIRST_CHECK`].
    pub not_found_since: Option<String>,
    /// The last check failed (the facts are from an earlier one).
    pub last_check_failed: bool,
    /// Changes between successful checks, oldest first, within the window of the last check.
    #[serde(default)]
    pub changes: Vec<DayChange>,
}

impl PackageState {
    /// The state after `check` at `now_ms`, from `prev` (none before the first check).
    pub fn next(prev: Option<&PackageState>, check: &Check, now_ms: i64) -> PackageState {
        let prev = prev.cloned().unwrap_or_default();
        let mut next = match check {
            Check::Found(facts) => PackageState {
                facts: facts.clone(),
                checked_at_ms: Some(now_ms),
                ..PackageState::default()
            },
            Check::NotFound { kind } => PackageState {
                facts: Facts::default(),
                checked_at_ms: Some(now_ms),
                not_found: true,
                not_found_kind: *kind,
                not_found_since: match (prev.not_found, &prev.not_found_since) {
                    (true, Some(since)) => Some(since.clone()),
                    _ if prev.checked_at_ms.is_none() => Some(FIRST_CHECK.to_owned()),
                    _ => Some(day_of(now_ms)),
                },
                ..PackageState::default()
            },
            Check::Failed { .. } => {
                return PackageState {
                    last_check_failed: true,
                    ..prev
                }
            }
        };
        let day = day_of(now_ms);
        let start = day_number(&day).unwrap_or(0) - (WINDOW_DAYS - 1);
        next.changes = prev
            .changes
            .iter()
            .filter(|c| day_number(&c.day).is_some_and(|d| d >= start))
            .cloned()
            .collect();
        if prev.checked_at_ms.is_some() {
            next.changes.extend(
                differences(&prev, &next).map(|(field, from, to)| DayChange {
                    day: day.clone(),
                    field: field.to_owned(),
                    from,
                    to,
                }),
            );
        }
        next
    }
}

/// The fields that differ between two successful checks: `not_found` alone when the
/// package appeared or went missing, otherwise each fact that changed.
fn differences(
    a: &PackageState,
    b: &PackageState,
) -> impl Iterator<Item = (&'static str, serde_json::Value, serde_json::Value)> {
    use serde_json::json;
    let pairs = if a.not_found != b.not_found {
        vec![("not_found", json!(a.not_found), json!(b.not_found))]
    } else if a.not_found {
        vec![(
            "not_found_kind",
            json!(a.not_found_kind),
            json!(b.not_found_kind),
        )]
    } else {
        let (x, y) = (&a.facts, &b.facts);
        vec![
            ("latest", json!(x.latest), json!(y.latest)),
            (
                "latest_deprecated",
                json!(x.latest_deprecated),
                json!(y.latest_deprecated),
            ),
            (
                "latest_yanked",
                json!(x.latest_yanked),
                json!(y.latest_yanked),
            ),
            (
                "project_status",
                json!(x.project_status),
                json!(y.project_status),
            ),
        ]
    };
    pairs.into_iter().filter(|(_, from, to)| from != to)
}

/// Publishes a version under the §3.2 rule.
pub(crate) fn version(raw: Option<&str>) -> Option<String> {
    raw.and_then(sanitize_server_version)
}

/// One declared package in the answer's `packages` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct PackageItem {
    /// The Registry's `registryType` (`npm`, `pypi`, `oci`, ...).
    pub registry_type: String,
    /// The identifier as declared.
    pub identifier: String,
    /// The normalised name asked for (npm lower case, PyPI by PEP 503).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The version the Registry entry declares, §3.2 rule.
    pub declared_version: Option<String>,
    /// Whether Lowdown checks this package.
    pub checked: bool,
    /// Why not, when unchecked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchecked_reason: Option<Unchecked>,
    /// The facts, for checked packages.
    #[serde(flatten)]
    pub facts: Option<ItemFacts>,
}

/// The checked facts of a [`PackageItem`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ItemFacts {
    /// See [`Facts::latest`].
    pub latest: Option<String>,
    /// npm only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_deprecated: Option<bool>,
    /// PyPI only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_yanked: Option<bool>,
    /// PyPI only: PEP 792 status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_status: Option<ProjectStatus>,
    /// npm only: the declared version is the latest (null when either is unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared_is_latest: Option<Option<bool>>,
    /// A real 404 at the last successful check.
    pub not_found: bool,
    /// PyPI only: how it is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_found_kind: Option<NotFoundKind>,
    /// First day of the current run of 404s, or `first_check` when every check answered 404.
    pub not_found_since: Option<String>,
    /// The last successful check (ISO-8601); null before the first one.
    pub checked_at: Option<String>,
    /// The latest check failed; these facts are from `checked_at`.
    pub last_check_failed: bool,
    /// Changes between daily checks in the last 30 days, oldest first: `latest`,
    /// `latest_deprecated`, `latest_yanked`, `project_status`, `not_found`,
    /// `not_found_kind`.
    pub changes_30d: Vec<DayChange>,
}

/// The block item for `declared` on `today`, with the stored state of its package (none
/// before its first check).
pub fn item(declared: &Package, state: Option<&PackageState>, today: &str) -> PackageItem {
    let declared_version = version(declared.version.as_deref());
    let mut out = PackageItem {
        registry_type: declared.registry_type.clone(),
        identifier: declared.identifier.clone(),
        name: None,
        declared_version: declared_version.clone(),
        checked: false,
        unchecked_reason: None,
        facts: None,
    };
    let key = match PackageKey::of(declared) {
        Ok(k) => k,
        Err(why) => {
            out.unchecked_reason = Some(why);
            return out;
        }
    };
    let s = state.cloned().unwrap_or_default();
    let npm = key.ecosystem == Ecosystem::Npm;
    let found = s.checked_at_ms.is_some() && !s.not_found;
    out.name = Some(key.name);
    out.checked = true;
    out.facts = Some(ItemFacts {
        latest: s.facts.latest.clone(),
        latest_deprecated: (npm && found).then_some(s.facts.latest_deprecated),
        latest_yanked: (!npm && found).then_some(s.facts.latest_yanked),
        project_status: if npm { None } else { s.facts.project_status },
        declared_is_latest: npm.then(|| match (&declared_version, &s.facts.latest) {
            (Some(d), Some(l)) => Some(d == l),
            _ => None,
        }),
        not_found: s.not_found,
        not_found_kind: s.not_found_kind,
        not_found_since: s.not_found_since.clone(),
        checked_at: s.checked_at_ms.map(iso),
        last_check_failed: s.last_check_failed,
        changes_30d: {
            let start = day_number(today).unwrap_or(0) - (WINDOW_DAYS - 1);
            s.changes
                .iter()
                .filter(|c| day_number(&c.day).is_some_and(|d| d >= start))
                .cloned()
                .collect()
        },
    });
    out
}

/// The facts that lead an answer's `message`: a deprecated or yanked latest version, an
/// archived, quarantined or deprecated project, a 404; one phrase each, in block order.
pub fn findings(items: &[PackageItem]) -> Vec<String> {
    let mut out = Vec::new();
    for it in items {
        let (Some(f), Some(name)) = (&it.facts, &it.name) else {
            continue;
        };
        let target = format!("{}:{}", it.registry_type, name);
        let latest = f.latest.as_deref().unwrap_or("(unknown)");
        if f.not_found {
            let since = match f.not_found_since.as_deref() {
                Some(FIRST_CHECK) => "Lowdown's first check",
                Some(day) => day,
                None => "?",
            };
            out.push(match f.not_found_kind {
                Some(NotFoundKind::NoReleases) => {
                    format!("{target} has no releases on PyPI (since {since})")
                }
                Some(NotFoundKind::NoProject) => {
                    format!("{target} not found on PyPI (404 since {since})")
                }
                None => format!("{target} not found on npm (404 since {since})"),
            });
            continue;
        }
        if f.latest_deprecated == Some(true) {
            out.push(format!("{target} {latest} is deprecated on npm"));
        }
        if f.latest_yanked == Some(true) {
            out.push(format!("{target} {latest} is yanked on PyPI"));
        }
        if let Some(status) = f.project_status {
            let word = match status {
                ProjectStatus::Active => continue,
                ProjectStatus::Archived => "archived",
                ProjectStatus::Quarantined => "quarantined",
                ProjectStatus::Deprecated => "deprecated",
            };
            out.push(format!("{target} is {word} on PyPI"));
        }
    }
    out
}

#[cfg(test)]
mod tests;
