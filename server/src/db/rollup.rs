//! What interaction records add to the rollups (`rollup_*`, `nodes`, `node_days`,
//! `node_targets`) and to `targets`: one definition, [`RULES`], that both engines run.
//! PostgreSQL adds a batch in Rust in its ingest transaction ([`Rollup`]); SQLite adds
//! committed raw rows many at a time in SQL generated from the same rules (see
//! [`super::roller`]), and registers targets at ingest ([`Added::targets`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use lowdown_core::aggregate::OutcomeClass;
use lowdown_core::record::Source;
use lowdown_core::target_label::lookup_form;
use lowdown_core::telemetry::{latency_bucket, LATENCY_BUCKETS_MS};
use sqlx::AnyConnection;

use super::batch::{Cell, Col, Rows};
use super::known::{Known, KnownKeys};
use super::upsert::{insert_ignore, Val};
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
    /// When it was stored (unix ms).
    pub at: i64,
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
    /// Whether a record of these labels is a rated organic one (what latency, independence
    /// and the per-network cap count).
    fn counts(&self, source: &str, class: &str) -> bool {
        source == self.organic && self.rated.iter().any(|c| class == c)
    }

    /// The same test as SQL over an `interactions` row whose columns are prefixed `p`,
    /// with `also` (quoted labels) counted beside the rated classes.
    fn sql(&self, p: &str, also: &str) -> String {
        format!(
            " AND {p}source = '{}' AND {p}outcome_class IN ('{}'{also})",
            self.organic,
            self.rated.join("', '")
        )
    }
}

/// Whether a record of these labels is rated organic (see [`LatencyRule`]).
pub(super) fn rated_organic(source: &str, class: &str) -> bool {
    LATENCY_RULE.counts(source, class)
}

/// [`rated_organic`] as SQL: ` AND {p}source = 'organic' AND {p}outcome_class IN (...)`,
/// `also` (`, 'x'`) added to the classes.
pub(super) fn rated_organic_sql(p: &str, also: &str) -> String {
    LATENCY_RULE.sql(p, also)
}

/// A key column's value: text, or an integer (a latency bucket).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum K<'a> {
    T(&'a str),
    I(i64),
}

/// One key column of a rollup table: its name and PostgreSQL type, the expression over
/// an `interactions` row that gives it (SQLite rolls up in SQL, [`super::roller`]), and
/// the value a [`Fact`] gives it (PostgreSQL rolls up in Rust, [`Rollup`]). A record
/// whose key is NULL (`None`) adds nothing to the table.
struct Key {
    col: &'static str,
    ty: &'static str,
    sql: String,
    /// `sql` can be NULL, so the roll filters on it (a test per row and key otherwise).
    nullable: bool,
    of: for<'a> fn(&Fact<'a>) -> Option<K<'a>>,
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

    fn cell(self, a: &Acc) -> Cell<'static> {
        match self {
            Agg::Count(_) => Cell::Int(a.n),
            Agg::SumMs => Cell::OptFloat(Some(a.sum_ms)),
            Agg::First => Cell::Int(a.first),
            Agg::Last => Cell::Int(a.last),
        }
    }
}

/// Which records a rollup table counts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    Every,
    /// Rated organic records (what latency and independence count).
    Rated,
    /// Rated organic records with a latency.
    Timed,
}

/// Which of [`Known`]'s sets holds a table's stored keys.
type KnownOf = fn(&Known) -> &KnownKeys;

/// What a record adds to one rollup table: the one definition both engines use.
pub(super) struct Rule {
    pub(super) table: &'static str,
    keys: Vec<Key>,
    when: When,
    /// Empty: the table only records that a key exists (`ON CONFLICT DO NOTHING`).
    aggs: &'static [Agg],
    /// The keys ingest remembers as stored, to skip writing them again (PostgreSQL).
    known: Option<KnownOf>,
    /// The SQLite roll sums the rows of each key first (`GROUP BY`), then upserts each key
    /// once; else it upserts row by row in rowid order. Sorting costs more than it saves
    /// where a key is wide or rarely repeats within a roll, and always for a table that
    /// only records that a key exists (a conflict there writes nothing); measured per table
    /// on a roll of 50,000 bench records, with keys spread and with keys repeating.
    group: bool,
}

impl Rule {
    /// The columns, keys first.
    fn cols(&self) -> Vec<Col<'static>> {
        let aggs = self.aggs.iter().map(|a| {
            let ty = if matches!(a, Agg::SumMs) {
                "double precision"
            } else {
                "bigint"
            };
            (a.col(), ty)
        });
        self.keys
            .iter()
            .map(|k| (k.col, k.ty))
            .chain(aggs)
            .collect()
    }

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

    /// The statement that adds the `interactions` rows of `from` (`FROM interactions
    /// WHERE ...`) to this table, aggregated by the database itself.
    pub(super) fn roll_sql(&self, from: &str) -> String {
        let rated = rated_organic_sql("", "");
        let mut filter = match self.when {
            When::Every => String::new(),
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
            select.push(a.sql(self.group));
        }
        let group = match self.group {
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

/// The most key columns of any rule.
const MAX_KEYS: usize = 7;

/// A text key whose `sql` is never NULL (a `NOT NULL` column, or one `COALESCE`d).
fn text(col: &'static str, sql: &str, of: for<'a> fn(&Fact<'a>) -> Option<K<'a>>) -> Key {
    Key {
        col,
        ty: "text",
        sql: sql.to_owned(),
        nullable: false,
        of,
    }
}

/// A text key whose `sql` can be NULL: records without it add nothing.
fn opt_text(col: &'static str, sql: &str, of: for<'a> fn(&Fact<'a>) -> Option<K<'a>>) -> Key {
    Key {
        nullable: true,
        ..text(col, sql, of)
    }
}

/// What each record adds to each rollup table (besides `targets`, registered with the
/// core's lookup keys, and `rollup_networks`, which holds the per-network cap).
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let target = || text("target", "target", |f| Some(K::T(f.target)));
    let task = || text("task_type", "task_type", |f| Some(K::T(f.task)));
    let source = || text("source", "source", |f| Some(K::T(f.source)));
    let class = || text("outcome_class", "outcome_class", |f| Some(K::T(f.class)));
    let node = || opt_text("node_id", "node_id", |f| f.node.map(K::T));
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
        known: None,
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
                    text("server_version", "COALESCE(server_version, '')", |f| {
                        Some(K::T(f.version))
                    }),
                    text("schema_hash", "COALESCE(schema_hash, '')", |f| {
                        Some(K::T(f.hash))
                    }),
                    source(),
                    class(),
                    text("failure_type", "COALESCE(failure_type, '')", |f| {
                        Some(K::T(f.failure))
                    }),
                ],
                When::Every,
                N,
            )
        },
        Rule {
            group: false,
            ..rule(
                "rollup_days",
                vec![
                    target(),
                    text("day", "day", |f| Some(K::T(f.day))),
                    task(),
                    source(),
                    class(),
                ],
                When::Every,
                N,
            )
        },
        rule(
            "rollup_latency",
            vec![
                target(),
                task(),
                Key {
                    col: "bucket",
                    ty: "bigint",
                    sql: bucket,
                    // Timed records have a latency, and the CASE an ELSE.
                    nullable: false,
                    of: |f| f.latency_ms.map(|ms| K::I(latency_bucket(ms) as i64)),
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
        Rule {
            known: Some(|k| &k.node_days),
            ..rule(
                "node_days",
                vec![node(), text("day", "day", |f| Some(K::T(f.day)))],
                When::Every,
                &[],
            )
        },
        Rule {
            known: Some(|k| &k.node_targets),
            ..rule("node_targets", vec![node(), target()], When::Every, &[])
        },
        Rule {
            known: Some(|k| &k.contributors),
            ..rule(
                "rollup_contributors",
                vec![
                    target(),
                    opt_text("contributor", "COALESCE(agent_id, node_id)", |f| {
                        contributor(f.agent, f.node).map(K::T)
                    }),
                ],
                When::Rated,
                &[],
            )
        },
        // Last: its rows are the ones every batch shares (a target's counts per class),
        // and PostgreSQL holds a row lock from the upsert to the commit, so the ingest
        // transactions running at once wait on each other for the shortest time.
        rule(
            "rollup_targets",
            vec![target(), source(), class()],
            When::Every,
            N,
        ),
    ]
});

/// What the records of one key add up to.
#[derive(Default)]
struct Acc {
    n: i64,
    sum_ms: f64,
    first: i64,
    last: i64,
}

/// What a set of records registered, for [`Known`] once committed.
#[derive(Default)]
pub(super) struct Added {
    targets: Vec<String>,
    /// Per rule with `known`, the keys written.
    keys: Vec<(KnownOf, Vec<String>)>,
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
            keys: Vec::new(),
        })
    }

    /// Tells `known` (call only after the transaction committed).
    pub(super) fn commit_to(self, known: &Known) {
        known.targets.extend(self.targets);
        for (of, keys) in self.keys {
            of(known).extend(keys);
        }
    }
}

/// The [`KnownKeys`] key of a key: its texts joined by `\0`.
fn known_key(key: &[K<'_>]) -> String {
    let texts: Vec<&str> = key
        .iter()
        .map(|k| match k {
            K::T(s) => *s,
            K::I(_) => "",
        })
        .collect();
    texts.join("\0")
}

type KeyOf<'a> = [K<'a>; MAX_KEYS];

/// The rollup rows a set of records adds, keyed by borrowed strings. Every map is in the
/// one order all writers take row locks in, so servers sharing a PostgreSQL database
/// wait on each other and never deadlock.
pub(super) struct Rollup<'a> {
    /// Targets not known to be registered.
    targets: BTreeSet<&'a str>,
    /// Per rule of [`RULES`], what each key adds.
    tables: Vec<BTreeMap<KeyOf<'a>, Acc>>,
}

impl Default for Rollup<'_> {
    fn default() -> Self {
        Rollup {
            targets: BTreeSet::new(),
            tables: RULES.iter().map(|_| BTreeMap::new()).collect(),
        }
    }
}

impl<'a> Rollup<'a> {
    /// Adds one record; `known` registrations are not written again.
    pub(super) fn add(&mut self, f: &Fact<'a>, known: &Known) {
        if !known.targets.contains(f.target) {
            self.targets.insert(f.target);
        }
        let rated = LATENCY_RULE.counts(f.source, f.class);
        'rules: for (rule, rows) in RULES.iter().zip(&mut self.tables) {
            let counts = match rule.when {
                When::Every => true,
                When::Rated => rated,
                When::Timed => rated && f.latency_ms.is_some(),
            };
            if !counts {
                continue;
            }
            let mut key = [K::I(0); MAX_KEYS];
            for (slot, k) in key.iter_mut().zip(&rule.keys) {
                match (k.of)(f) {
                    Some(v) => *slot = v,
                    None => continue 'rules,
                }
            }
            if let Some(of) = rule.known {
                if of(known).contains(&known_key(&key[..rule.keys.len()])) {
                    continue;
                }
            }
            let acc = rows.entry(key).or_insert(Acc {
                first: f.at,
                ..Acc::default()
            });
            acc.n += 1;
            acc.sum_ms += f.latency_ms.unwrap_or(0.0);
            acc.first = acc.first.min(f.at);
            acc.last = acc.last.max(f.at);
        }
    }

    /// Writes every row, as stored at `now`; returns what was registered (for
    /// [`Added::commit_to`]).
    pub(super) async fn write(self, conn: &mut AnyConnection, now: i64) -> DbResult<Added> {
        let mut added = Added::targets(conn, &self.targets, now).await?;
        for (rule, rows) in RULES.iter().zip(&self.tables) {
            if rows.is_empty() {
                continue;
            }
            let cols = rule.cols();
            let width = rule.keys.len();
            let mut batch = Rows::new(&cols, rows.len());
            for (key, acc) in rows {
                for k in &key[..width] {
                    batch.push(match *k {
                        K::T(s) => Cell::Text(s),
                        K::I(i) => Cell::Int(i),
                    });
                }
                for a in rule.aggs {
                    batch.push(a.cell(acc));
                }
            }
            batch.insert(conn, rule.table, &rule.on_conflict()).await?;
            if let Some(of) = rule.known {
                let keys = rows.keys().map(|k| known_key(&k[..width])).collect();
                added.keys.push((of, keys));
            }
        }
        Ok(added)
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
