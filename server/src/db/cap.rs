//! The per-network cap (SPEC §5), defined once for both engines: per network, target and
//! UTC day, the first [`NETWORK_DAILY_CAP`] rated organic records count; the rest become
//! [`OutcomeClass::Capped`]. Trusted networks and records of no known network are never
//! capped. `rollup_networks.day`/`day_n` hold each network's count of the latest day it
//! sent.
//!
//! Each part is written here once, in Rust beside its SQL: which records count
//! ([`cappable`]), what a network had already sent that day ([`before`]) and how a day's
//! count is stored ([`DAY_COUNT`]). PostgreSQL applies them at ingest ([`over_cap`]) and
//! stores the class in the raw rows; SQLite runs the SQL as it rolls the raw rows up
//! ([`cap_rows`]) and keeps its marks in the roll-ups file (`capped_rows`) and in a copy of
//! the roll's rows the rules then read, since the roll never writes the main file.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use lowdown_core::aggregate::{under_cap, OutcomeClass, NETWORK_DAILY_CAP};
use sqlx::{AnyConnection, AssertSqlSafe, Row};

use super::batch::{Cell, Rows};
use super::rollup::{rated_organic, rated_organic_sql};
use crate::db::DbResult;
use crate::names::enum_label;

/// Whether a record counts against its network's cap: a rated organic record of an
/// untrusted, known network. As SQL over an `interactions` row: [`CAPPABLE_SQL`].
pub(super) fn cappable(source: &str, class: &str, trusted: bool, network: Option<&str>) -> bool {
    rated_organic(source, class) && !trusted && network.is_some()
}

/// [`cappable`] over the `interactions` row `i`.
static CAPPABLE_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "i.trusted = 0 AND i.network IS NOT NULL{}",
        rated_organic_sql("i.", "")
    )
});

/// How many records a network had already sent on `day`, from what `rollup_networks`
/// holds (`stored_day`, `day_n`): a later day stored (a clock that stepped back) means that
/// day's cap holds. As SQL: [`before_sql`].
fn before(stored_day: &str, day_n: i64, day: &str) -> u64 {
    match stored_day.cmp(day) {
        std::cmp::Ordering::Equal => day_n.max(0) as u64,
        std::cmp::Ordering::Greater => NETWORK_DAILY_CAP,
        std::cmp::Ordering::Less => 0,
    }
}

/// [`before`] for the `rollup_networks` row `d` (NULL when none) and the day `day`.
fn before_sql(d: &str, day: &str) -> String {
    format!(
        "CASE WHEN {d}.day = {day} THEN {d}.day_n WHEN {d}.day > {day} THEN {NETWORK_DAILY_CAP} ELSE 0 END"
    )
}

/// `rollup_networks` on conflict: a day's records add to its count, a later day starts
/// its own, an earlier one leaves the count alone.
const DAY_COUNT: &str = "day_n = CASE WHEN excluded.day = rollup_networks.day \
     THEN rollup_networks.day_n + excluded.day_n \
     WHEN excluded.day > rollup_networks.day THEN excluded.day_n ELSE rollup_networks.day_n END, \
     day = CASE WHEN excluded.day > rollup_networks.day THEN excluded.day ELSE rollup_networks.day END";

/// The columns of `rollup_networks`, as PostgreSQL's ingest inserts them.
const NETWORK_COLS: [(&str, &str); 5] = [
    ("target", "text"),
    ("network", "text"),
    ("n", "bigint"),
    ("day", "text"),
    ("day_n", "bigint"),
];

/// One (target, network)'s rated organic records of a PostgreSQL batch.
#[derive(Default)]
pub(super) struct Group {
    /// How many: what they add to `rollup_networks.n` unless capped.
    pub(super) rated: i64,
    /// The [`cappable`] ones (indices, in order): what they add to the day's count.
    pub(super) cappable: Vec<usize>,
}

/// PostgreSQL: adds each (target, network)'s rated organic records of this batch to
/// `rollup_networks`, `n` and the count of `day` in one upsert (the statement SQLite's
/// roll runs, [`CapSql::add`]); returns the indices past the cap, which it takes back
/// out of `n`.
pub(super) async fn over_cap(
    conn: &mut AnyConnection,
    groups: &BTreeMap<(&str, &str), Group>,
    day: &str,
) -> DbResult<Vec<usize>> {
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    // The sorted keys are the one lock order every writer shares.
    let mut rows = Rows::new(&NETWORK_COLS, groups.len());
    for ((target, network), g) in groups {
        for cell in [
            Cell::Text(target),
            Cell::Text(network),
            Cell::Int(g.rated),
            Cell::Text(day),
            Cell::Int(g.cappable.len() as i64),
        ] {
            rows.push(cell);
        }
    }
    let conflict = format!("{ADD}{DAY_COUNT} RETURNING target, network, day, day_n");
    let mut capped = Vec::new();
    let mut taken_back: Vec<(String, String, i64)> = Vec::new();
    for row in rows.insert(conn, "rollup_networks", &conflict).await? {
        let (target, network): (String, String) = (row.try_get("target")?, row.try_get("network")?);
        let (stored_day, day_n): (String, i64) = (row.try_get("day")?, row.try_get("day_n")?);
        let Some(g) = groups.get(&(target.as_str(), network.as_str())) else {
            continue;
        };
        let wanted = g.cappable.len() as u64;
        // The count returned includes this batch.
        let before = before(&stored_day, day_n - wanted as i64, day);
        let over = &g.cappable[under_cap(before, wanted) as usize..];
        if !over.is_empty() {
            capped.extend_from_slice(over);
            taken_back.push((target.clone(), network.clone(), over.len() as i64));
        }
    }
    // Only networks past their cap get here, in one statement; their rows are locked already.
    if !taken_back.is_empty() {
        let rows: Vec<serde_json::Value> = taken_back
            .iter()
            .map(|(t, n, k)| serde_json::json!({"target": t, "network": n, "k": k}))
            .collect();
        sqlx::query(
            "UPDATE rollup_networks r SET n = r.n - v.k \
             FROM json_to_recordset(CAST($1 AS json)) AS v(target text, network text, k bigint) \
             WHERE r.target = v.target AND r.network = v.network",
        )
        .bind(serde_json::Value::Array(rows).to_string())
        .execute(&mut *conn)
        .await?;
    }
    Ok(capped)
}

/// Adds rows to `rollup_networks`: `n` adds up, the day's count as [`DAY_COUNT`] says.
const ADD: &str =
    "ON CONFLICT (target, network) DO UPDATE SET n = rollup_networks.n + excluded.n, ";

/// The raw rows of a roll: `interactions` rowids `$1` (excluded) to `$2`.
pub(super) const RAW: &str = "main.interactions";

/// The roll's rows copied with the cap applied, made only when some are capped: the
/// columns the cap and the rules read, `id` being the `interactions` rowid (so `rowid`
/// ranges select the same rows in both).
pub(super) const CAPPED_COPY: &str = "temp.roll_rows";

/// The columns of [`CAPPED_COPY`].
const COPY_COLS: &str = "target, task_type, server_version, schema_hash, source, \
     outcome_class, failure_type, latency_ms, latency_bucket, node_id, day, created_at, \
     agent_id, network, trusted";

/// SQLite's statements (see [`cap_rows`]).
///
/// The roll's rows are grouped once by (target, network, day) into a temporary table
/// (`temp_store` is memory): the groups over the cap are those whose count, with what the
/// network had already sent that day ([`before`]), passes [`NETWORK_DAILY_CAP`]. Only then,
/// which an honest load never needs, the rows are copied to [`CAPPED_COPY`], the rows of
/// those groups ranked (in rowid order, so the first 20 count), the rest marked in
/// `capped_rows` and in the copy, and the copy grouped again. Then the groups are added to
/// `rollup_networks` in key order.
struct CapSql {
    /// Creates the temporary tables once per connection and empties them.
    prepare: [&'static str; 6],
    /// Fills `roll_networks` from the raw rows, then from the copy.
    group: [String; 2],
    /// Fills `roll_over` with the groups over the cap and what came before them.
    over: String,
    /// Copies the raw rows to [`CAPPED_COPY`].
    copy: String,
    /// Adds the rows of `roll_over`'s groups past the cap to `capped_rows`.
    mark: String,
    /// Gives the copied rows in `capped_rows` the capped class.
    apply: String,
    /// Adds `roll_networks` to `rollup_networks`.
    add: String,
}

static CAP_SQL: LazyLock<CapSql> = LazyLock::new(|| {
    let capped = enum_label(&OutcomeClass::Capped);
    let before = before_sql("d", "g.day");
    let cappable = &*CAPPABLE_SQL;
    // `rated` is rollup_networks.n (trusted networks included); `cappable` the day's
    // count, which keeps the rows this roll capped. Row by row: as for the wide
    // rollups ([`super::rollup`]'s `group`), sorting the rows first cost more.
    let group = |from: &str| {
        format!(
            "INSERT INTO temp.roll_networks (target, network, day, rated, cappable) \
             SELECT i.target, i.network, i.day, CASE WHEN true{rated} THEN 1 ELSE 0 END, \
             CASE WHEN i.trusted = 0 THEN 1 ELSE 0 END FROM {from} i \
             WHERE i.rowid > $1 AND i.rowid <= $2{rated_or_capped} \
             AND i.network IS NOT NULL ON CONFLICT (target, network, day) DO UPDATE SET \
             rated = rated + excluded.rated, cappable = cappable + excluded.cappable",
            rated = rated_organic_sql("i.", ""),
            rated_or_capped = rated_organic_sql("i.", &format!(", '{capped}'")),
        )
    };
    CapSql {
        prepare: [
            "CREATE TEMP TABLE IF NOT EXISTS roll_networks (target TEXT NOT NULL, network TEXT NOT NULL, \
             day TEXT NOT NULL, rated BIGINT NOT NULL, cappable BIGINT NOT NULL, \
             PRIMARY KEY (target, network, day)) WITHOUT ROWID",
            "CREATE TEMP TABLE IF NOT EXISTS roll_over (target TEXT NOT NULL, network TEXT NOT NULL, \
             day TEXT NOT NULL, before BIGINT NOT NULL, PRIMARY KEY (target, network, day)) WITHOUT ROWID",
            "CREATE TEMP TABLE IF NOT EXISTS roll_rows (id INTEGER PRIMARY KEY, target TEXT, \
             task_type TEXT, server_version TEXT, schema_hash TEXT, source TEXT, outcome_class TEXT, \
             failure_type TEXT, latency_ms DOUBLE PRECISION, latency_bucket BIGINT, node_id TEXT, \
             day TEXT, created_at BIGINT, agent_id TEXT, network TEXT, trusted BIGINT)",
            "DELETE FROM temp.roll_networks",
            "DELETE FROM temp.roll_over",
            "DELETE FROM temp.roll_rows",
        ],
        group: [group(RAW), group(CAPPED_COPY)],
        over: format!(
            "INSERT INTO temp.roll_over (target, network, day, before) \
             SELECT g.target, g.network, g.day, {before} \
             FROM temp.roll_networks g LEFT JOIN rollup_networks d \
             ON d.target = g.target AND d.network = g.network \
             WHERE {before} + g.cappable > {NETWORK_DAILY_CAP}"
        ),
        copy: format!(
            "INSERT INTO {CAPPED_COPY} (id, {COPY_COLS}) SELECT rowid, {COPY_COLS} \
             FROM {RAW} WHERE rowid > $1 AND rowid <= $2"
        ),
        mark: format!(
            "INSERT INTO capped_rows (id) SELECT r.id FROM (SELECT i.id AS id, o.before AS before, \
             ROW_NUMBER() OVER (PARTITION BY i.target, i.network, i.day ORDER BY i.id) AS k \
             FROM {CAPPED_COPY} i JOIN temp.roll_over o \
             ON o.target = i.target AND o.network = i.network AND o.day = i.day \
             WHERE {cappable}) r \
             WHERE r.before + r.k > {NETWORK_DAILY_CAP} ORDER BY r.id"
        ),
        apply: format!(
            "UPDATE {CAPPED_COPY} SET outcome_class = '{capped}' \
             WHERE id IN (SELECT id FROM capped_rows WHERE id > $1 AND id <= $2)"
        ),
        add: format!(
            "INSERT INTO rollup_networks (target, network, n, day, day_n) \
             SELECT target, network, rated, day, cappable FROM temp.roll_networks \
             WHERE true ORDER BY target, network, day {ADD}{DAY_COUNT}"
        ),
    }
});

/// SQLite: applies the cap to the `interactions` rows with rowids in `from` (excluded) to
/// `to` and adds them to `rollup_networks` (see [`CapSql`]); returns where the rules read
/// the rows, with the capped ones in their class: [`RAW`] when none is, else
/// [`CAPPED_COPY`].
pub(super) async fn cap_rows(
    conn: &mut AnyConnection,
    from: i64,
    to: i64,
) -> DbResult<&'static str> {
    let c = &*CAP_SQL;
    for sql in c.prepare {
        sqlx::query(sql).execute(&mut *conn).await?;
    }
    let run = |sql: &'static str| sqlx::query(AssertSqlSafe(sql)).bind(from).bind(to);
    run(&c.group[0]).execute(&mut *conn).await?;
    let over = sqlx::query(AssertSqlSafe(c.over.as_str()))
        .execute(&mut *conn)
        .await?
        .rows_affected();
    let mut source = RAW;
    if over > 0 {
        run(&c.copy).execute(&mut *conn).await?;
        sqlx::query(AssertSqlSafe(c.mark.as_str()))
            .execute(&mut *conn)
            .await?;
        run(&c.apply).execute(&mut *conn).await?;
        // Capped rows are no longer rated: group again.
        sqlx::query("DELETE FROM temp.roll_networks")
            .execute(&mut *conn)
            .await?;
        run(&c.group[1]).execute(&mut *conn).await?;
        source = CAPPED_COPY;
    }
    sqlx::query(AssertSqlSafe(c.add.as_str()))
        .execute(&mut *conn)
        .await?;
    Ok(source)
}
