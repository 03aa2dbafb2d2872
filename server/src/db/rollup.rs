//! What interaction records add to the rollups (`rollup_*`, `targets`, `nodes`,
//! `node_days`, `node_targets`), and writing it, in PostgreSQL's ingest transaction.
//! SQLite adds committed raw rows many at a time with the same keys, in SQL (see
//! [`super::roller`]); both take the latency rule from here.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use lowdown_core::aggregate::OutcomeClass;
use lowdown_core::record::Source;
use lowdown_core::target_label::lookup_form;
use lowdown_core::telemetry::latency_bucket;
use sqlx::AnyConnection;

use super::batch::{Cell, Rows};
use super::known::Known;
use super::latency::LatencyRows;
use super::upsert::{add_text_counts, insert_ignore, insert_text_keys, Val};
use crate::db::DbResult;
use crate::names::{enum_label, name_key};

/// One stored record as the rollups see it: the raw row's columns, `""` for an absent
/// version, hash or failure type.
pub(super) struct Fact<'a> {
    pub target: &'a str,
    pub task: &'a str,
    pub version: &'a str,
    pub hash: &'a str,
    pub source: &'a str,
    pub class: &'a str,
    pub failure: &'a str,
    pub latency_ms: Option<f64>,
    pub node: Option<&'a str>,
    pub day: &'a str,
    /// The keyed id of the sender's network.
    pub network: Option<&'a str>,
    /// The agent behind the sender's key.
    pub agent: Option<&'a str>,
}

/// Who a record counts as in `rollup_contributors`: the agent behind the request's key
/// when it had one (keys are issued and limited per network), else the node id. Agent ids
/// (`ag_…`) and node ids (`ld_…`) never look alike, so one column holds both.
pub(super) fn contributor<'a>(agent: Option<&'a str>, node: Option<&'a str>) -> Option<&'a str> {
    agent.or(node)
}

/// The labels of the records whose latency `rollup_latency` counts: rated organic calls.
struct LatencyRule {
    organic: Cow<'static, str>,
    rated: [Cow<'static, str>; 3],
}

static LATENCY_RULE: LazyLock<LatencyRule> = LazyLock::new(|| LatencyRule {
    organic: enum_label(&Source::Organic),
    rated: [
        OutcomeClass::Success,
        OutcomeClass::Partial,
        OutcomeClass::Failure,
    ]
    .map(|c| enum_label(&c)),
});

impl LatencyRule {
    /// Whether `f` is a rated organic record (what latency and independence count).
    fn counts(&self, f: &Fact<'_>) -> bool {
        f.source == self.organic && self.rated.iter().any(|c| f.class == c)
    }
}

/// The labels `rollup_latency` counts: (organic, the three rated classes).
pub(super) fn latency_rule() -> (&'static str, [&'static str; 3]) {
    let r = &*LATENCY_RULE;
    (&r.organic, [&r.rated[0], &r.rated[1], &r.rated[2]])
}

/// What a set of records registered, for [`Known`] once committed.
#[derive(Default)]
pub(super) struct Added {
    targets: Vec<String>,
    node_days: Vec<String>,
    node_targets: Vec<String>,
}

impl Added {
    /// Tells `known` (call only after the transaction committed).
    pub(super) fn commit_to(self, known: &Known) {
        known.targets.extend(self.targets);
        known.node_days.extend(self.node_days);
        known.node_targets.extend(self.node_targets);
    }
}

/// The [`super::known::KnownKeys`] key of a pair.
fn pair_key(pair: &[&str; 2]) -> String {
    format!("{}\0{}", pair[0], pair[1])
}

/// The rollup rows a set of records adds, keyed by borrowed strings. Every map is in the
/// one order all writers take row locks in, so servers sharing a PostgreSQL database
/// wait on each other and never deadlock.
#[derive(Default)]
pub(super) struct Rollup<'a> {
    /// Targets not known to be registered.
    targets: BTreeSet<&'a str>,
    by_target: BTreeMap<[&'a str; 3], i64>,
    by_release: BTreeMap<[&'a str; 7], i64>,
    by_day: BTreeMap<[&'a str; 5], i64>,
    nodes: BTreeMap<&'a str, i64>,
    node_days: BTreeSet<[&'a str; 2]>,
    node_targets: BTreeSet<[&'a str; 2]>,
    latency: LatencyRows<&'a str>,
    /// Rated organic records per (target, network): `rollup_networks.n`.
    networks: BTreeMap<[&'a str; 2], i64>,
    contributors: BTreeSet<[&'a str; 2]>,
    /// The day these records were stored on (a new `rollup_networks` row starts at it).
    day: &'a str,
}

impl<'a> Rollup<'a> {
    /// Adds one record; `known` registrations are not written again.
    pub(super) fn add(&mut self, f: &Fact<'a>, known: &Known) {
        if !known.targets.contains(f.target) {
            self.targets.insert(f.target);
        }
        *self
            .by_target
            .entry([f.target, f.source, f.class])
            .or_insert(0) += 1;
        *self
            .by_release
            .entry([
                f.target, f.task, f.version, f.hash, f.source, f.class, f.failure,
            ])
            .or_insert(0) += 1;
        *self
            .by_day
            .entry([f.target, f.day, f.task, f.source, f.class])
            .or_insert(0) += 1;
        let rated_organic = LATENCY_RULE.counts(f);
        if let (true, Some(ms)) = (rated_organic, f.latency_ms) {
            let e = self
                .latency
                .entry((f.target, f.task, latency_bucket(ms) as i64))
                .or_insert((0, 0.0));
            e.0 += 1;
            e.1 += ms;
        }
        if rated_organic {
            if let Some(n) = f.network {
                *self.networks.entry([f.target, n]).or_insert(0) += 1;
            }
            if let Some(c) = contributor(f.agent, f.node) {
                self.contributors.insert([f.target, c]);
            }
        }
        self.day = f.day;
        if let Some(node) = f.node {
            *self.nodes.entry(node).or_insert(0) += 1;
            let day = [node, f.day];
            if !known.node_days.contains(&pair_key(&day)) {
                self.node_days.insert(day);
            }
            let target = [node, f.target];
            if !known.node_targets.contains(&pair_key(&target)) {
                self.node_targets.insert(target);
            }
        }
    }

    /// Writes every row, as stored at `now`; returns what was registered (for
    /// [`Added::commit_to`]).
    pub(super) async fn write(self, conn: &mut AnyConnection, now: i64) -> DbResult<Added> {
        if !self.targets.is_empty() {
            add_targets(conn, self.targets.iter().map(|t| (*t, now))).await?;
        }
        let target_keys = ["target", "source", "outcome_class"];
        add_text_counts(conn, "rollup_targets", &target_keys, &self.by_target).await?;
        let release_keys = [
            "target",
            "task_type",
            "server_version",
            "schema_hash",
            "source",
            "outcome_class",
            "failure_type",
        ];
        add_text_counts(conn, "rollup_releases", &release_keys, &self.by_release).await?;
        let day_keys = ["target", "day", "task_type", "source", "outcome_class"];
        add_text_counts(conn, "rollup_days", &day_keys, &self.by_day).await?;
        if !self.latency.is_empty() {
            super::latency::add(conn, &self.latency).await?;
        }
        if !self.nodes.is_empty() {
            upsert_nodes(conn, &self.nodes, now).await?;
        }
        insert_text_keys(conn, "node_days", &["node_id", "day"], &self.node_days).await?;
        insert_text_keys(
            conn,
            "node_targets",
            &["node_id", "target"],
            &self.node_targets,
        )
        .await?;
        add_networks(conn, &self.networks, self.day).await?;
        insert_text_keys(
            conn,
            "rollup_contributors",
            &["target", "contributor"],
            &self.contributors,
        )
        .await?;
        Ok(Added {
            targets: self.targets.iter().map(|t| (*t).to_owned()).collect(),
            node_days: self.node_days.iter().map(pair_key).collect(),
            node_targets: self.node_targets.iter().map(pair_key).collect(),
        })
    }
}

/// The columns of `rollup_networks`, as its two PostgreSQL writers (this and the cap at
/// ingest) insert them.
pub(super) const NETWORK_COLS: [(&str, &str); 5] = [
    ("target", "text"),
    ("network", "text"),
    ("n", "bigint"),
    ("day", "text"),
    ("day_n", "bigint"),
];

/// Adds rated organic records per (target, network) to `rollup_networks.n`; a network new
/// to a target starts its cap count at `day` with none.
async fn add_networks(
    conn: &mut AnyConnection,
    rows: &BTreeMap<[&str; 2], i64>,
    day: &str,
) -> DbResult<()> {
    let mut batch = Rows::new(&NETWORK_COLS, rows.len());
    for ([target, network], n) in rows {
        for cell in [
            Cell::Text(target),
            Cell::Text(network),
            Cell::Int(*n),
            Cell::Text(day),
            Cell::Int(0),
        ] {
            batch.push(cell);
        }
    }
    batch
        .insert(
            conn,
            "rollup_networks",
            "ON CONFLICT (target, network) DO UPDATE SET n = rollup_networks.n + excluded.n",
        )
        .await?;
    Ok(())
}

/// Registers `targets` (their name key and lookup form, first seen at the time given);
/// targets already known keep their row. Interactions and telemetry subjects share the
/// `targets` table.
pub(super) async fn add_targets<'a>(
    conn: &mut AnyConnection,
    targets: impl IntoIterator<Item = (&'a str, i64)>,
) -> Result<(), sqlx::Error> {
    let rows = targets
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
        rows,
    )
    .await
}

async fn upsert_nodes(
    conn: &mut AnyConnection,
    nodes: &BTreeMap<&str, i64>,
    now: i64,
) -> DbResult<()> {
    let cols = [
        ("node_id", "text"),
        ("interactions", "bigint"),
        ("first_seen", "bigint"),
        ("last_seen", "bigint"),
    ];
    let mut rows = Rows::new(&cols, nodes.len());
    for (node, n) in nodes {
        for cell in [
            Cell::Text(node),
            Cell::Int(*n),
            Cell::Int(now),
            Cell::Int(now),
        ] {
            rows.push(cell);
        }
    }
    rows.insert(
        conn,
        "nodes",
        "ON CONFLICT (node_id) DO UPDATE SET interactions = nodes.interactions + excluded.interactions, \
         last_seen = excluded.last_seen",
    )
    .await?;
    Ok(())
}
