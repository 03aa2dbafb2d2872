//! What interaction records add to the rollups (`rollup_*`, `nodes`, `node_days`,
//! `node_targets`): one definition, [`RULES`], from which both engines' rolls generate
//! their SQL (see [`super::roller`]); and the registration of `targets`, which ingest
//! does itself ([`Added::targets`]), since a target's lookup keys come from the core.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use lowdown_core::aggregate::OutcomeClass;
use lowdown_core::record::Source;
use lowdown_core::target_label::lookup_form;
use lowdown_core::telemetry::LATENCY_BUCKETS_MS;
use sqlx::AnyConnection;

use super::known::Known;
use super::upsert::{insert_ignore, Val};
use crate::db::DbResult;
use crate::names::{enum_label, name_key};

/// The SQL test of a rated organic record (what latency, independence and the
/// per-network cap count) over an `interactions` row whose columns are prefixed `p`:
/// ` AND {p}source = 'organic' AND {p}outcome_class IN (...)`, `also` (`, 'x'`) added to
/// the classes.
pub(super) fn rated_organic_sql(p: &str, also: &str) -> String {
    let rated = [
        OutcomeClass::Success,
        OutcomeClass::Partial,
        OutcomeClass::Failure,
    ]
    .map(|c| enum_label(&c));
    format!(
        " AND {p}source = '{}' AND {p}outcome_class IN ('{}'{also})",
        enum_label(&Source::Organic),
        rated.join("', '")
    )
}

/// One key column of a rollup table: its name and the expression over an `interactions`
/// row that gives it. A record whose key is NULL adds nothing to the table.
struct Key {
    col: &'static str,
    sql: String,
    /// `sql` can be NULL, so the roll filters on it (a test per row and key otherwise).
    nullable: bool,
}

/// A value column of a rollup table, aggregated over the records of a key.
#[derive(Clone, Copy)]
enum Agg {
    /// How many records (added on conflict), in the named column.
    Count(&'static str),
    /// `sum_ms`: the sum of their latencies (added on conflict).
    SumMs,
    /// `first_seen`: their earliest `created_at` (kept on conflict).
    First,
    /// `last_seen`: their latest `created_at` (replaces on conflict).
    Last,
}

impl Agg {
    fn col(self) -> &'static str {
        match self {
            Agg::Count(c) => c,
            Agg::SumMs => "sum_ms",
            Agg::First => "first_seen",
            Agg::Last => "last_seen",
        }
    }

    /// Over the rows of a key (`grouped`), or one row's own share.
    fn sql(self, grouped: bool) -> &'static str {
        match (self, grouped) {
            (Agg::Count(_), true) => "COUNT(*)",
            (Agg::Count(_), false) => "1",
            (Agg::SumMs, true) => "SUM(latency_ms)",
            (Agg::SumMs, false) => "latency_ms",
            (Agg::First, true) => "MIN(created_at)",
            (Agg::Last, true) => "MAX(created_at)",
            (Agg::First | Agg::Last, false) => "created_at",
        }
    }
}

/// Which records a rollup table counts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    Every,
    /// Organic records (what nodes recorded first).
    Organic,
    /// Rated organic records (what latency and independence count).
    Rated,
    /// Rated organic records with a latency.
    Timed,
}

/// What a record adds to one rollup table: the one definition both engines use.
pub(super) struct Rule {
    pub(super) table: &'static str,
    keys: Vec<Key>,
    when: When,
    /// Empty: the table only records that a key exists (`ON CONFLICT DO NOTHING`).
    aggs: &'static [Agg],
    /// SQLite's roll sums the rows of each key first (`GROUP BY`), then upserts each key
    /// once; else it upserts row by row in rowid order. Sorting costs more than it saves
    /// where a key is wide or rarely repeats within a roll, and always for a table that
    /// only records that a key exists (a conflict there writes nothing); measured per table
    /// on a roll of 50,000 bench records, with keys spread and with keys repeating.
    /// PostgreSQL always groups: one statement may not update a row twice.
    group: bool,
}

impl Rule {
    /// `ON CONFLICT (keys) DO ...`: counts and sums add up, `last_seen` moves on.
    fn on_conflict(&self) -> String {
        let t = self.table;
        let keys: Vec<&str> = self.keys.iter().map(|k| k.col).collect();
        let sets: Vec<String> = self
            .aggs
            .iter()
            .filter_map(|a| match *a {
                Agg::Count(c) => Some(format!("{c} = {t}.{c} + excluded.{c}")),
                Agg::SumMs => Some(format!("sum_ms = {t}.sum_ms + excluded.sum_ms")),
                Agg::First => None,
                Agg::Last => Some("last_seen = excluded.last_seen".to_owned()),
            })
            .collect();
        match sets.is_empty() {
            true => format!("ON CONFLICT ({}) DO NOTHING", keys.join(", ")),
            false => format!(
                "ON CONFLICT ({}) DO UPDATE SET {}",
                keys.join(", "),
                sets.join(", ")
            ),
        }
    }

    /// The statement that adds the rows of `from` (`FROM <table> WHERE ...`) to this
    /// table, aggregated by the database itself; `group_all` groups every table
    /// (PostgreSQL), else only those whose [`Rule::group`] says so.
    pub(super) fn roll_sql(&self, from: &str, group_all: bool) -> String {
        let grouped = group_all || self.group;
        let rated = rated_organic_sql("", "");
        let mut filter = match self.when {
            When::Every => String::new(),
            When::Organic => " AND source = 'organic'".to_owned(),
            When::Rated => rated,
            When::Timed => format!(" AND latency_ms IS NOT NULL{rated}"),
        };
        let (mut cols, mut select, mut group) = (vec![], vec![], vec![]);
        for (i, k) in self.keys.iter().enumerate() {
            if k.nullable {
                filter.push_str(&format!(" AND {} IS NOT NULL", k.sql));
            }
            cols.push(k.col);
            select.push(k.sql.as_str());
            group.push((i + 1).to_string());
        }
        for a in self.aggs {
            cols.push(a.col());
            select.push(a.sql(grouped));
        }
        let group = match grouped {
            true => format!(" GROUP BY {}", group.join(", ")),
            false => String::new(),
        };
        format!(
            "INSERT INTO {} ({}) SELECT {} {from}{filter}{group} {}",
            self.table,
            cols.join(", "),
            select.join(", "),
            self.on_conflict()
        )
    }
}

/// A text key whose `sql` is never NULL (a `NOT NULL` column, or one `COALESCE`d).
fn text(col: &'static str, sql: &str) -> Key {
    Key {
        col,
        sql: sql.to_owned(),
        nullable: false,
    }
}

/// A text key whose `sql` can be NULL: records without it add nothing.
fn opt_text(col: &'static str, sql: &str) -> Key {
    Key {
        nullable: true,
        ..text(col, sql)
    }
}

/// What each record adds to each rollup table (besides `targets`, registered with the
/// core's lookup keys, and `rollup_networks`, which holds the per-network cap).
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let target = || text("target", "target");
    let task = || text("task_type", "task_type");
    let source = || text("source", "source");
    let class = || text("outcome_class", "outcome_class");
    let node = || opt_text("node_id", "node_id");
    // The core's latency bucket, stored with each row at ingest (rows stored before
    // migration 0011 have none: then the first bound a latency does not exceed).
    let mut bucket = String::from("COALESCE(latency_bucket, CASE");
    for (i, bound) in LATENCY_BUCKETS_MS.iter().enumerate() {
        bucket.push_str(&format!(" WHEN latency_ms <= {bound:?} THEN {i}"));
    }
    bucket.push_str(&format!(" ELSE {} END)", LATENCY_BUCKETS_MS.len() - 1));
    let rule = |table, keys, when, aggs: &'static [Agg]| Rule {
        table,
        keys,
        when,
        aggs,
        group: !aggs.is_empty(),
    };
    const N: &[Agg] = &[Agg::Count("n")];
    vec![
        // Seven columns, one a 64-character hash: sorting them cost more than upserting.
        Rule {
            group: false,
            ..rule(
                "rollup_releases",
                vec![
                    target(),
                    task(),
                    text("server_version", "COALESCE(server_version, '')"),
                    text("schema_hash", "COALESCE(schema_hash, '')"),
                    source(),
                    class(),
                    text("failure_type", "COALESCE(failure_type, '')"),
                ],
                When::Every,
                N,
            )
        },
        Rule {
            group: false,
            ..rule(
                "rollup_days",
                vec![target(), text("day", "day"), task(), source(), class()],
                When::Every,
                N,
            )
        },
        rule(
            "rollup_latency",
            vec![
                target(),
                task(),
                // Timed records have a latency, and the CASE an ELSE.
                Key {
                    col: "bucket",
                    sql: bucket,
                    nullable: false,
                },
            ],
            When::Timed,
            &[Agg::Count("n"), Agg::SumMs],
        ),
        rule(
            "nodes",
            vec![node()],
            When::Every,
            &[Agg::Count("interactions"), Agg::First, Agg::Last],
        ),
        rule(
            "node_days",
            vec![node(), text("day", "day")],
            When::Every,
            &[],
        ),
        rule("node_targets", vec![node(), target()], When::Every, &[]),
        // Who a record counts as: the agent behind the request's key when it had one
        // (keys are issued and limited per network), else the node id. Agent ids (`ag_…`)
        // and node ids (`ld_…`) never look alike, so one column holds both.
        rule(
            "rollup_contributors",
            vec![
                target(),
                opt_text("contributor", "COALESCE(agent_id, node_id)"),
            ],
            When::Rated,
            &[],
        ),
        rule(
            "rollup_targets",
            vec![target(), source(), class()],
            When::Every,
            N,
        ),
        // The networks behind each server version's rated organic records: a version's
        // figures in the preflight verdict need as many networks as confidence does.
        rule(
            "rollup_version_networks",
            vec![
                target(),
                opt_text("server_version", "server_version"),
                opt_text("network", "network"),
            ],
            When::Rated,
            &[],
        ),
        // When organic records first carried each server version and schema hash: the
        // change feed's "new version" and "new schema" (kept on conflict: rolls come in
        // order). The kind is a literal, so one table holds both.
        rule(
            "rollup_firsts",
            vec![
                target(),
                text("kind", "'server_version'"),
                opt_text("value", "server_version"),
            ],
            When::Organic,
            &[Agg::First],
        ),
        rule(
            "rollup_firsts",
            vec![
                target(),
                text("kind", "'schema_hash'"),
                opt_text("value", "schema_hash"),
            ],
            When::Organic,
            &[Agg::First],
        ),
    ]
});

/// Targets ingest registered, for [`Known`] once committed.
#[derive(Default)]
pub(super) struct Added {
    targets: Vec<String>,
}

impl Added {
    /// Registers `targets` (none of them known, first seen at `now`) and notes them.
    pub(super) async fn targets(
        conn: &mut AnyConnection,
        targets: &BTreeSet<&str>,
        now: i64,
    ) -> DbResult<Added> {
        if !targets.is_empty() {
            add_targets(conn, targets.iter().map(|t| (*t, now))).await?;
        }
        Ok(Added {
            targets: targets.iter().map(|t| (*t).to_owned()).collect(),
        })
    }

    /// Tells `known` (call only after the transaction committed).
    pub(super) fn commit_to(self, known: &Known) {
        known.targets.extend(self.targets);
    }
}

/// Registers `targets` (their name key and lookup form, first seen at the time given);
/// targets already known keep their row. Interactions and telemetry subjects share the
/// `targets` table.
pub(super) async fn add_targets<'a>(
    conn: &mut AnyConnection,
    targets: impl IntoIterator<Item = (&'a str, i64)>,
) -> Result<(), sqlx::Error> {
    let rows: Vec<Vec<Val>> = targets
        .into_iter()
        .map(|(t, first_seen)| {
            vec![
                Val::Text(t.to_owned()),
                Val::Text(name_key(t)),
                Val::Text(lookup_form(t)),
                Val::Int(first_seen),
            ]
        })
        .collect();
    insert_ignore(
        conn,
        "targets",
        &["target", "name_key", "lookup_key", "first_seen"],
        "target",
        &rows,
    )
    .await
}
