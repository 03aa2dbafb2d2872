//! A target's changes (`lowdown_core::change_feed`): the reads behind `/t/{target}/changes`,
//! its feeds and `get_lowdown`'s recent changes.

use std::collections::BTreeMap;

use lowdown_core::change_feed::{changes, Change, ChangeFacts, FirstSeen};
use lowdown_core::scanner::days::day_of;
use lowdown_core::scanner::packages::PackageItem;

use crate::db::reputation::{self as store, Dimension};
use crate::db::{Db, DbResult};
use crate::scanner::answer::{blocks, package_blocks};

fn package_changes(
    items: &[PackageItem],
) -> Vec<(String, Vec<lowdown_core::scanner::history::DayChange>)> {
    items
        .iter()
        .filter_map(|i| {
            let f = i.facts.as_ref()?;
            Some((
                format!("{}:{}", i.registry_type, i.identifier),
                f.changes_30d.clone(),
            ))
        })
        .collect()
}

/// The changes of the stored target `target` in the 30 days ending at `now`, newest first.
pub async fn of(db: &Db, target: &str, now: i64) -> DbResult<Vec<Change>> {
    let (entry, package, firsts, versions, schemas) = tokio::try_join!(
        blocks(db, target, now),
        package_blocks(db, target, now),
        store::firsts(db, target),
        store::grouped(db, Dimension::ServerVersion, target, None, None),
        store::grouped(db, Dimension::SchemaHash, target, None, None),
    )?;
    let mut facts = ChangeFacts {
        today: day_of(now),
        ..ChangeFacts::default()
    };
    if let Some(b) = entry {
        facts.registry = b.registry.changes_30d;
        facts.packages = package_changes(&b.packages);
        if let Some(d) = b.scanner.detail {
            facts.daily = d.daily_30d;
            facts.definitions = d.definition_changes.events;
        }
    } else if let Some(p) = package {
        facts.packages = package_changes(&p.packages);
    }
    let counts = |table: &BTreeMap<String, lowdown_core::aggregate::SourceCounts>, v: &str| {
        table
            .get(v)
            .map_or((0, 0), |c| (c.organic.rated(), c.organic.success))
    };
    for (kind, value, first_seen_ms) in firsts {
        let (table, list) = match kind.as_str() {
            "server_version" => (&versions, &mut facts.versions),
            "schema_hash" => (&schemas, &mut facts.schemas),
            _ => continue,
        };
        let (rated, successes) = counts(table, &value);
        list.push(FirstSeen {
            value,
            first_seen_ms,
            rated,
            successes,
        });
    }
    Ok(changes(target, &facts))
}
