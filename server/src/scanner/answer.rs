//! The `registry`, `scanner` and `packages` blocks of `GET /api/reputation/mcp:<name>`,
//! and the `registry_entries` and `packages` of an `npm:`/`pypi:` answer: the reads behind
//! them. What the rows mean is decided in `lowdown_core::scanner::history` and
//! `lowdown_core::scanner::packages`.
//!
//! Scanner data is reported beside the interaction numbers and never changes them:
//! `success_rate`, `confidence` and the compare ranking come from interactions only.

use lowdown_core::aggregate::{self, Summary};
use lowdown_core::scanner::days::{day_number, day_of, day_string};
use lowdown_core::scanner::history::{
    registry_block, scanner_block, RegistryBlock, RegistryFacts, ScannerBlock,
};
use lowdown_core::scanner::message::{lead, message, MessageFacts};
use lowdown_core::scanner::packages::{findings, item, PackageItem, PackageKey};
use lowdown_core::scanner::registry::Package;
use lowdown_core::scanner::WINDOW_DAYS;
use serde::Serialize;

use crate::db::{observations, Db, DbResult};

/// The blocks added to the answer for a Registry entry.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Blocks {
    /// What the Registry declares.
    pub registry: RegistryBlock,
    /// What npm and PyPI say about the declared packages (others listed as unchecked).
    pub packages: Vec<PackageItem>,
    /// What the Scanner observed.
    pub scanner: ScannerBlock,
    #[serde(skip)]
    facts: MessageFacts,
}

/// What an answer for an `npm:`/`pypi:` name adds: the Registry entries declaring the
/// package, and the package's own facts when it was checked.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PackageBlocks {
    /// `mcp:<name>` of every Registry entry declaring this package, sorted.
    pub registry_entries: Vec<String>,
    /// The package's facts (one item), when Lowdown checked it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<PackageItem>,
}

impl Blocks {
    /// The answer's message: the Registry and Scanner sentence, then the interactions.
    pub fn message(&self, target: &str, s: &Summary) -> String {
        let recorded = s.interactions > 0 || s.protocol_requests > 0;
        let interactions = recorded.then(|| aggregate::message(target, s));
        message(&self.facts, interactions.as_deref())
    }
}

/// The message for `target`: [`Blocks::message`] when it is a Registry entry, otherwise
/// the interaction message, led by the package's findings for an `npm:`/`pypi:` name.
pub fn answer_message(
    blocks: Option<&Blocks>,
    package: Option<&PackageBlocks>,
    target: &str,
    s: &Summary,
) -> String {
    match (blocks, package) {
        (Some(b), _) => b.message(target, s),
        (None, Some(p)) => lead(&findings(&p.packages), &aggregate::message(target, s)),
        (None, None) => aggregate::message(target, s),
    }
}

/// The [`PackageBlocks`] of `target` when it names an `npm:`/`pypi:` package that a
/// Registry entry declares or that Lowdown checked.
pub async fn package_blocks(db: &Db, target: &str, now: i64) -> DbResult<Option<PackageBlocks>> {
    let Some(key) = PackageKey::of_target(target) else {
        return Ok(None);
    };
    let registry_entries = crate::db::packages::declaring_entries(db, target).await?;
    let state = crate::db::packages::state(db, &key).await?;
    if registry_entries.is_empty() && state.is_none() {
        return Ok(None);
    }
    let asked = Package {
        registry_type: key.ecosystem.as_str().to_owned(),
        identifier: target[key.ecosystem.as_str().len() + 1..].to_owned(),
        version: None,
    };
    Ok(Some(PackageBlocks {
        registry_entries,
        packages: state
            .map(|s| vec![item(&asked, Some(&s), &day_of(now))])
            .unwrap_or_default(),
    }))
}

/// The blocks for `target` at time `now`, when it is an `mcp:` name the Registry declared.
pub async fn blocks(db: &Db, target: &str, now: i64) -> DbResult<Option<Blocks>> {
    let Some(name) = target.strip_prefix("mcp:") else {
        return Ok(None);
    };
    let Some(entry) = observations::registry_entry(db, name).await? else {
        return Ok(None);
    };
    let today = day_of(now);
    let since = day_string(day_number(&today).unwrap_or(0) - (WINDOW_DAYS - 1));
    let registry = registry_block(&RegistryFacts {
        today: today.clone(),
        declaration: entry.declaration.clone(),
        first_seen_day: entry.first_seen_day,
        baseline_day: observations::first_run_day(db, true).await?,
        changes: observations::registry_changes(db, name, &since).await?,
    });
    let packages = crate::db::packages::items(db, &entry.packages, &today).await?;
    let facts = observations::scanner_facts(db, target, today, &since, entry.declaration).await?;
    let scanner = scanner_block(&facts);
    let message_facts = MessageFacts {
        listed: registry.listed,
        status: registry.status.clone(),
        in_sample: scanner.in_sample,
        observed_since: facts.first_observed_at_ms.map(day_of),
        packages: findings(&packages),
    };
    Ok(Some(Blocks {
        registry,
        scanner,
        packages,
        facts: message_facts,
    }))
}
