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
    registry_block, scanner_block, RegistryBlock, RegistryFacts, ScannerBlock, ScannerFacts,
    StoredObservation,
};
use lowdown_core::scanner::message::{lead, message, MessageFacts};
use lowdown_core::scanner::packages::{findings, item, PackageItem, PackageKey};
use lowdown_core::scanner::registry::{Change, Declaration, Package};
use lowdown_core::scanner::{MissingReason, WINDOW_DAYS};
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::db::Db;
use crate::error::AppResult;
use crate::names::parse_enum;

/// The blocks added to the answer for a Registry entry.
#[derive(Debug, Clone, Serialize)]
pub struct Blocks {
    /// What the Registry declares.
    pub registry: RegistryBlock,
    /// What the Scanner observed.
    pub scanner: ScannerBlock,
    /// What npm and PyPI say about the declared packages (others listed as unchecked).
    pub packages: Vec<PackageItem>,
    #[serde(skip)]
    facts: MessageFacts,
}

/// What an answer for an `npm:`/`pypi:` name adds: the Registry entries declaring the
/// package, and the package's own facts when it was checked.
#[derive(Debug, Clone, Serialize)]
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
pub async fn package_blocks(db: &Db, target: &str) -> AppResult<Option<PackageBlocks>> {
    let Some(key) = PackageKey::of_target(target) else {
        return Ok(None);
    };
    let registry_entries = super::packages::store::declaring_entries(db, target).await?;
    let state = super::packages::store::state(db, &key).await?;
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
            .map(|s| vec![item(&asked, Some(&s))])
            .unwrap_or_default(),
    }))
}

/// The columns [`observation`] reads, in order.
pub(crate) const OBS_COLS: &str =
    "day, observed_at, remote_url, reached_level, http_status, error_type, \
    latency_ms, server_version, tool_count, schema_hash, desc_hash, name_hash, tool_names, \
    www_authenticate";

/// One stored observation from a row selected with [`OBS_COLS`] first.
pub(crate) fn observation(r: &AnyRow) -> Result<StoredObservation, sqlx::Error> {
    let names: String = r.try_get(12)?;
    Ok(StoredObservation {
        day: r.try_get(0)?,
        observed_at_ms: r.try_get(1)?,
        remote_url: r.try_get(2)?,
        reached_level: r.try_get::<i64, _>(3)? as u8,
        http_status: r.try_get::<Option<i64>, _>(4)?.map(|s| s as u16),
        error_type: r
            .try_get::<Option<String>, _>(5)?
            .as_deref()
            .and_then(parse_enum),
        latency_ms: r.try_get(6)?,
        server_version: r.try_get(7)?,
        tool_count: r.try_get::<Option<i64>, _>(8)?.map(|n| n as u64),
        schema_hash: r.try_get(9)?,
        desc_hash: r.try_get(10)?,
        name_hash: r.try_get(11)?,
        tool_names: serde_json::from_str(&names).unwrap_or_default(),
        www_authenticate: r.try_get::<i64, _>(13)? == 1,
    })
}

async fn min_day(db: &Db, sql: &'static str) -> AppResult<Option<String>> {
    Ok(sqlx::query(sql).fetch_one(&db.pool).await?.try_get(0)?)
}

/// The blocks for `target` at time `now`, when it is an `mcp:` name the Registry declared.
pub async fn blocks(db: &Db, target: &str, now: i64) -> AppResult<Option<Blocks>> {
    let Some(name) = target.strip_prefix("mcp:") else {
        return Ok(None);
    };
    let Some(row) = sqlx::query(
        "SELECT version, status, remote_hosts, listed, first_seen_day, packages FROM registry_entries WHERE name = $1",
    )
    .bind(name.to_owned())
    .fetch_optional(&db.pool)
    .await?
    else {
        return Ok(None);
    };
    let today = day_of(now);
    let since = day_string(day_number(&today).unwrap_or(0) - (WINDOW_DAYS - 1));
    let hosts: String = row.try_get(2)?;
    let declaration = Declaration {
        version: row.try_get(0)?,
        status: row.try_get(1)?,
        remote_hosts: serde_json::from_str(&hosts).unwrap_or_default(),
        listed: row.try_get::<i64, _>(3)? == 1,
    };
    let changes = sqlx::query(
        "SELECT day, field, from_value, to_value FROM registry_changes WHERE name = $1 AND day >= $2",
    )
    .bind(name.to_owned())
    .bind(since.clone())
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| {
        let (from, to): (String, String) = (r.try_get(2)?, r.try_get(3)?);
        Ok((
            r.try_get::<String, _>(0)?,
            Change {
                field: r.try_get(1)?,
                from: serde_json::from_str(&from).unwrap_or_default(),
                to: serde_json::from_str(&to).unwrap_or_default(),
            },
        ))
    })
    .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let registry = registry_block(&RegistryFacts {
        today: today.clone(),
        declaration: declaration.clone(),
        first_seen_day: row.try_get(4)?,
        baseline_day: min_day(db, "SELECT MIN(day) FROM scan_runs WHERE registry_ok = 1").await?,
        changes,
    });
    let declared: Vec<Package> =
        serde_json::from_str(&row.try_get::<String, _>(5)?).unwrap_or_default();
    let packages = super::packages::store::items(db, &declared).await?;
    let facts = scanner_facts(db, target, today, &since, declaration).await?;
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

async fn scanner_facts(
    db: &Db,
    target: &str,
    today: String,
    since: &str,
    declaration: Declaration,
) -> AppResult<ScannerFacts> {
    let target = target.to_owned();
    let joined = sqlx::query("SELECT joined_day FROM scanner_cohort WHERE target_id = $1")
        .bind(target.clone())
        .fetch_optional(&db.pool)
        .await?
        .map(|r| r.try_get::<String, _>(0))
        .transpose()?;
    let first_observed_at_ms: Option<i64> =
        sqlx::query("SELECT MIN(observed_at) FROM scanner_observations WHERE target_id = $1")
            .bind(target.clone())
            .fetch_one(&db.pool)
            .await?
            .try_get(0)?;
    let mut facts = ScannerFacts {
        today,
        first_run_day: min_day(db, "SELECT MIN(day) FROM scan_runs").await?,
        joined_day: joined,
        first_observed_at_ms,
        declared_version: declaration.version,
        declared_hosts: declaration.remote_hosts,
        ..ScannerFacts::default()
    };
    if facts.joined_day.is_none() {
        return Ok(facts);
    }
    for r in sqlx::query(
        "SELECT day, CAST(MAX(registry_ok) AS BIGINT) FROM scan_runs WHERE day >= $1 GROUP BY day",
    )
    .bind(since.to_owned())
    .fetch_all(&db.pool)
    .await?
    {
        facts
            .run_days
            .push((r.try_get(0)?, r.try_get::<i64, _>(1)? == 1));
    }
    for r in sqlx::query("SELECT day, reason FROM scanner_skips WHERE target_id = $1 AND day >= $2")
        .bind(target.clone())
        .bind(since.to_owned())
        .fetch_all(&db.pool)
        .await?
    {
        let reason: String = r.try_get(1)?;
        if let Some(reason) = parse_enum::<MissingReason>(&reason) {
            facts.skips.push((r.try_get(0)?, reason));
        }
    }
    let sql =
        format!("SELECT {OBS_COLS} FROM scanner_observations WHERE target_id = $1 AND day >= $2");
    for r in sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(target.clone())
        .bind(since.to_owned())
        .fetch_all(&db.pool)
        .await?
    {
        facts.observations.push(observation(&r)?);
    }
    // Each remote's last level-2 observation before the window: its first day in the
    // window is compared with it.
    let urls: std::collections::BTreeSet<String> = facts
        .observations
        .iter()
        .map(|o| o.remote_url.clone())
        .collect();
    let sql = format!(
        "SELECT {OBS_COLS} FROM scanner_observations WHERE target_id = $1 AND remote_url = $2 \
         AND day < $3 AND reached_level = 2 ORDER BY id DESC LIMIT 1"
    );
    for url in urls {
        if let Some(r) = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
            .bind(target.clone())
            .bind(url)
            .bind(since.to_owned())
            .fetch_optional(&db.pool)
            .await?
        {
            facts.observations.push(observation(&r)?);
        }
    }
    Ok(facts)
}
