//! The per-network cap (SPEC §5), defined once for both engines: per network, target and
//! UTC day, the first [`NETWORK_DAILY_CAP`] rated organic records count; the rest become
//! [`OutcomeClass::Capped`]. Trusted networks and records of no known network are never
//! capped. `rollup_networks.day`/`day_n` hold each network's count of the latest day it
//! sent.
//!
//! Each part is written here once as SQL: which records count ([`CAPPABLE_SQL`]), what a
//! network had already sent that day ([`before_sql`]) and how a day's count is stored
//! ([`DAY_COUNT`]). Both engines apply it as they roll raw rows up ([`super::roller`]):
//! SQLite keeps its marks in the roll-ups file (`capped_rows`) and in a copy of the roll's
//! rows the rules then read, since its roll never writes the main file ([`cap_rows`]);
//! PostgreSQL marks the rows it is moving out of `interactions_pending` before they reach
//! `interactions` ([`cap_moving`]).

use std::sync::LazyLock;

use lowdown_core::aggregate::{OutcomeClass, NETWORK_DAILY_CAP};
use sqlx::{AnyConnection, AssertSqlSafe, Row};

use super::rollup::rated_organic_sql;
use crate::db::DbResult;
use crate::names::enum_label;

/// A rated organic record of an untrusted, known network, as SQL over the `interactions`
/// row `i`: what counts against its network's cap.
static CAPPABLE_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "i.trusted = 0 AND i.network IS NOT NULL{}",
        rated_organic_sql("i.", "")
    )
});

/// How many records a network had already sent on `day`, from what its `rollup_networks`
/// row `d` (NULL when none) holds: a later day stored (a clock that stepped back) means
/// that day's cap holds.
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

/// PostgreSQL: the rows a roll moves out of `interactions_pending`, in a temporary table
/// (see [`super::roller`]); `seq` is their order of arrival.
pub(super) const MOVING: &str = "roll_moving";

/// PostgreSQL's statements (see [`cap_moving`]): the moving rows grouped by (target,
/// network, day) and added to `rollup_networks` one day at a time (one statement may not
/// update a row twice); the groups whose count came out past the cap, with what came
/// before them, kept in `roll_over`. Only then, which an honest load never needs, the
/// cappable rows of those groups are ranked in arrival order, those past the cap marked
/// capped, and taken back out of `n` (capped rows are not rated).
struct PgCapSql {
    prepare: [&'static str; 2],
    group: String,
    add: String,
    mark: String,
}

static PG_CAP_SQL: LazyLock<PgCapSql> = LazyLock::new(|| {
    let capped = enum_label(&OutcomeClass::Capped);
    let cappable = &*CAPPABLE_SQL;
    PgCapSql {
        prepare: [
            "CREATE TEMP TABLE IF NOT EXISTS roll_networks (target TEXT NOT NULL, \
             network TEXT NOT NULL, day TEXT NOT NULL, rated BIGINT NOT NULL, \
             cappable BIGINT NOT NULL) ON COMMIT DELETE ROWS",
            "CREATE TEMP TABLE IF NOT EXISTS roll_over (target TEXT NOT NULL, \
             network TEXT NOT NULL, day TEXT NOT NULL, before BIGINT NOT NULL) \
             ON COMMIT DELETE ROWS",
        ],
        group: format!(
            "INSERT INTO roll_networks (target, network, day, rated, cappable) \
             SELECT i.target, i.network, i.day, SUM(CASE WHEN true{rated} THEN 1 ELSE 0 END), \
             SUM(CASE WHEN i.trusted = 0 THEN 1 ELSE 0 END) FROM {MOVING} i \
             WHERE i.network IS NOT NULL{rated_or_capped} GROUP BY 1, 2, 3",
            rated = rated_organic_sql("i.", ""),
            rated_or_capped = rated_organic_sql("i.", &format!(", '{capped}'")),
        ),
        // What came before a group, from the row its upsert returns: [`before_sql`] over
        // the row as it was (a later day stored: the cap holds; the same day: the count
        // less this group's).
        add: format!(
            "WITH added AS (INSERT INTO rollup_networks (target, network, n, day, day_n) \
             SELECT target, network, rated, day, cappable FROM roll_networks WHERE day = $1 \
             {ADD}{DAY_COUNT} RETURNING target, network, day, day_n) \
             INSERT INTO roll_over (target, network, day, before) \
             SELECT g.target, g.network, g.day, CASE WHEN a.day > g.day THEN {NETWORK_DAILY_CAP} \
             ELSE a.day_n - g.cappable END FROM added a JOIN roll_networks g \
             ON g.target = a.target AND g.network = a.network AND g.day = $1 \
             WHERE (a.day > $1 OR a.day_n > {NETWORK_DAILY_CAP}) AND g.cappable > 0"
        ),
        mark: format!(
            "WITH marked AS (UPDATE {MOVING} m SET outcome_class = '{capped}' FROM \
             (SELECT i.seq AS seq, o.before AS before, ROW_NUMBER() OVER (PARTITION BY \
             i.target, i.network, i.day ORDER BY i.seq) AS k FROM {MOVING} i JOIN roll_over o \
             ON o.target = i.target AND o.network = i.network AND o.day = i.day \
             WHERE {cappable}) r WHERE m.seq = r.seq AND r.before + r.k > {NETWORK_DAILY_CAP} \
             RETURNING m.target, m.network) \
             UPDATE rollup_networks d SET n = d.n - c.k FROM (SELECT target, network, \
             COUNT(*) AS k FROM marked GROUP BY 1, 2) c \
             WHERE d.target = c.target AND d.network = c.network"
        ),
    }
});

/// PostgreSQL: applies the cap to the rows in [`MOVING`] (marking the capped ones there)
/// and adds them to `rollup_networks` (see [`PgCapSql`]).
pub(super) async fn cap_moving(conn: &mut AnyConnection) -> DbResult<()> {
    let c = &*PG_CAP_SQL;
    for sql in c.prepare {
        sqlx::query(sql).execute(&mut *conn).await?;
    }
    sqlx::query(AssertSqlSafe(c.group.as_str()))
        .execute(&mut *conn)
        .await?;
    let days = sqlx::query("SELECT DISTINCT day FROM roll_networks ORDER BY day")
        .fetch_all(&mut *conn)
        .await?;
    let mut over = 0;
    for row in days {
        let day: String = row.try_get("day")?;
        over += sqlx::query(AssertSqlSafe(c.add.as_str()))
            .bind(day)
            .execute(&mut *conn)
            .await?
            .rows_affected();
    }
    if over > 0 {
        // Temporary tables have no statistics: without them the ranking joins row by row
        // (seconds for a roll where a flood is capped).
        sqlx::query(AssertSqlSafe(format!("ANALYZE {MOVING}, roll_over")))
            .execute(&mut *conn)
            .await?;
        sqlx::query(AssertSqlSafe(c.mark.as_str()))
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}
