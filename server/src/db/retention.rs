//! Removal of raw interaction rows older than the retention period, once the roll-ups
//! count them (the job is `crate::retention`; the decision is in `server/README.md`,
//! *Retention*).
//!
//! - **SQLite**: rows go in commit (rowid) order, a chunk per transaction, and only rows the
//!   roll-ups already include (at or below `rollup_watermark.rolled`). Their ids move to
//!   `record_ids` in the same transaction, so a replay stays a duplicate. The newest row is
//!   never removed: SQLite gives a new row the largest rowid plus one, and an emptied table
//!   would start again below the watermark, where the roller would never see its rows.
//!   `server_meta.raw_removed_through` records the last rowid removed: from then on the
//!   roll-ups file cannot be made again from the raw rows (`rollups_file::ensure` refuses).
//! - **PostgreSQL**: `interactions` is partitioned by UTC day of `created_at` (migration
//!   0015); a partition whose whole day is past the cutoff is dropped, and rows that landed
//!   in the default partition are deleted. Roll-ups are written in the ingest transaction,
//!   so every committed row is already counted. `record_ids` keeps every id.

use sqlx::{AnyConnection, AssertSqlSafe, Row};

use super::{Backend, Db, DbError, DbResult};

/// Rows one SQLite removal transaction takes at most (ingest waits for the writer that long).
pub const SQLITE_CHUNK: i64 = 10_000;

/// Milliseconds in a UTC day.
const DAY_MS: i64 = 86_400_000;

/// What one call of [`remove_before`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    /// Raw rows removed.
    pub rows: u64,
    /// PostgreSQL: the partitions dropped.
    pub partitions: Vec<String>,
}

/// Removes raw rows created before `cutoff` (unix ms) that the roll-ups count: on SQLite
/// at most [`SQLITE_CHUNK`] of them (call again while it removes some), on PostgreSQL
/// every partition wholly before `cutoff` and the default partition's rows before it.
pub async fn remove_before(db: &Db, cutoff: i64) -> DbResult<Removed> {
    match db.backend {
        Backend::Sqlite => {
            let rows = db
                .write(move |conn| Box::pin(async move { sqlite_chunk(conn, cutoff).await }))
                .await?;
            Ok(Removed {
                rows,
                partitions: Vec::new(),
            })
        }
        Backend::Postgres => {
            db.write(move |conn| Box::pin(async move { drop_partitions(conn, cutoff).await }))
                .await
        }
    }
}

/// SQLite: one chunk of the oldest rows, in rowid order while they are older than `cutoff`,
/// rolled up, and not the newest row.
async fn sqlite_chunk(conn: &mut AnyConnection, cutoff: i64) -> DbResult<u64> {
    let head = sqlx::query(
        "WITH head AS (SELECT rowid AS id, created_at FROM interactions \
         WHERE rowid <= (SELECT rolled FROM rollup_watermark WHERE id = 1) \
         AND rowid < (SELECT MAX(rowid) FROM interactions) ORDER BY rowid LIMIT $2) \
         SELECT (SELECT MIN(id) FROM head WHERE created_at >= $1) AS young, \
         (SELECT MIN(id) FROM head) AS first, (SELECT MAX(id) FROM head) AS last",
    )
    .bind(cutoff)
    .bind(SQLITE_CHUNK)
    .fetch_one(&mut *conn)
    .await?;
    let young: Option<i64> = head.try_get("young")?;
    let first: Option<i64> = head.try_get("first")?;
    let last: Option<i64> = head.try_get("last")?;
    let upto = match (young, last) {
        (Some(y), _) => y - 1,
        (None, Some(l)) => l,
        (None, None) => return Ok(0),
    };
    if first.is_none_or(|f| upto < f) {
        return Ok(0);
    }
    sqlx::query(
        "INSERT INTO record_ids (record_id) SELECT record_id FROM interactions \
         WHERE rowid <= $1 ON CONFLICT (record_id) DO NOTHING",
    )
    .bind(upto)
    .execute(&mut *conn)
    .await?;
    let removed = sqlx::query("DELETE FROM interactions WHERE rowid <= $1")
        .bind(upto)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    sqlx::query(
        "INSERT INTO server_meta (key, value) VALUES ('raw_removed_through', $1) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )
    .bind(upto.to_string())
    .execute(&mut *conn)
    .await?;
    Ok(removed)
}

/// SQLite: the last rowid the retention job removed from this main file, if it ever
/// removed any (then its roll-ups file holds counts no raw row backs, and cannot be made
/// again from them).
pub(super) async fn sqlite_removed_through(conn: &mut AnyConnection) -> DbResult<Option<i64>> {
    let value: Option<String> =
        sqlx::query("SELECT value FROM server_meta WHERE key = 'raw_removed_through'")
            .fetch_optional(&mut *conn)
            .await?
            .map(|r| r.try_get("value"))
            .transpose()?;
    value
        .map(|v| {
            v.parse()
                .map_err(|_| DbError::internal("server_meta.raw_removed_through is not a rowid"))
        })
        .transpose()
}

/// One partition of `interactions`: its name and its range `[from, to)` (`None`: the
/// default partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// The table's name.
    pub name: String,
    /// `[from, to)` in unix ms (`i64::MIN` for `MINVALUE`), or `None` for the default.
    pub range: Option<(i64, i64)>,
}

/// PostgreSQL: the partitions of `interactions`, by name.
pub async fn partitions(db: &Db) -> DbResult<Vec<Partition>> {
    let mut conn = db.pool.acquire().await?;
    list_partitions(&mut conn).await
}

async fn list_partitions(conn: &mut AnyConnection) -> DbResult<Vec<Partition>> {
    let rows = sqlx::query(
        "SELECT CAST(c.relname AS TEXT) AS name, pg_get_expr(c.relpartbound, c.oid) AS bound \
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = CAST('interactions' AS regclass) ORDER BY 1",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let name: String = row.try_get("name")?;
        let bound: String = row.try_get("bound")?;
        let range = match bound.trim() {
            "DEFAULT" => None,
            b => Some(parse_bound(b).ok_or_else(|| {
                DbError::internal(format!("partition {name}: unexpected bound {b:?}"))
            })?),
        };
        out.push(Partition { name, range });
    }
    Ok(out)
}

/// `FOR VALUES FROM (MINVALUE) TO ('1796083200000')` → `(i64::MIN, 1796083200000)`.
fn parse_bound(bound: &str) -> Option<(i64, i64)> {
    let value = |s: &str| -> Option<i64> {
        let s = s.trim().trim_matches('\'');
        match s {
            "MINVALUE" => Some(i64::MIN),
            "MAXVALUE" => Some(i64::MAX),
            _ => s.parse().ok(),
        }
    };
    let rest = bound.strip_prefix("FOR VALUES FROM (")?;
    let (from, rest) = rest.split_once(")")?;
    let to = rest.trim().strip_prefix("TO (")?.strip_suffix(")")?;
    Some((value(from)?, value(to)?))
}

/// A partition name as an identifier; only the names this module makes, or the
/// migration's, are ever dropped.
fn quoted(name: &str) -> DbResult<String> {
    let ours = name.starts_with("interactions_")
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    match ours {
        true => Ok(format!("\"{name}\"")),
        false => Err(DbError::internal(format!(
            "unexpected partition {name:?} of interactions"
        ))),
    }
}

/// PostgreSQL: drops the partitions wholly before `cutoff` and deletes the default
/// partition's rows before it.
async fn drop_partitions(conn: &mut AnyConnection, cutoff: i64) -> DbResult<Removed> {
    let mut removed = Removed::default();
    for p in list_partitions(conn).await? {
        let table = quoted(&p.name)?;
        match p.range {
            Some((_, to)) if to <= cutoff => {
                let n: i64 =
                    sqlx::query(AssertSqlSafe(format!("SELECT COUNT(*) AS n FROM {table}")))
                        .fetch_one(&mut *conn)
                        .await?
                        .try_get("n")?;
                sqlx::query(AssertSqlSafe(format!("DROP TABLE {table}")))
                    .execute(&mut *conn)
                    .await?;
                removed.rows += u64::try_from(n).unwrap_or(0);
                removed.partitions.push(p.name);
            }
            Some(_) => {}
            None => {
                removed.rows += sqlx::query(AssertSqlSafe(format!(
                    "DELETE FROM {table} WHERE created_at < $1"
                )))
                .bind(cutoff)
                .execute(&mut *conn)
                .await?
                .rows_affected();
            }
        }
    }
    Ok(removed)
}

/// PostgreSQL: makes the partitions of the UTC days from the day of `now` to `ahead` days
/// later that are missing; returns their names. A day the default partition already holds
/// rows of (the job did not run that day) is left to the default partition. No-op on SQLite.
pub async fn prepare_partitions(db: &Db, now: i64, ahead: i64) -> DbResult<Vec<String>> {
    if db.backend != Backend::Postgres {
        return Ok(Vec::new());
    }
    db.write(move |conn| {
        Box::pin(async move {
            let existing = list_partitions(conn).await?;
            let today = now.div_euclid(DAY_MS);
            let mut made = Vec::new();
            for day in today..=today + ahead {
                let (from, to) = (day * DAY_MS, (day + 1) * DAY_MS);
                let overlaps = existing
                    .iter()
                    .filter_map(|p| p.range)
                    .any(|(a, b)| a < to && from < b);
                if overlaps {
                    continue;
                }
                let in_default = sqlx::query(
                    "SELECT 1 AS one FROM interactions_default \
                     WHERE created_at >= $1 AND created_at < $2 LIMIT 1",
                )
                .bind(from)
                .bind(to)
                .fetch_optional(&mut *conn)
                .await?;
                if in_default.is_some() {
                    continue;
                }
                let name = format!(
                    "interactions_d{}",
                    crate::clock::day_of(from).replace('-', "")
                );
                sqlx::query(AssertSqlSafe(format!(
                    "CREATE TABLE {} PARTITION OF interactions FOR VALUES FROM ({from}) TO ({to})",
                    quoted(&name)?
                )))
                .execute(&mut *conn)
                .await?;
                made.push(name);
            }
            Ok(made)
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_bounds_parse_as_postgresql_prints_them() {
        assert_eq!(
            parse_bound("FOR VALUES FROM (MINVALUE) TO ('1796083200000')"),
            Some((i64::MIN, 1_796_083_200_000))
        );
        assert_eq!(
            parse_bound("FOR VALUES FROM (1796083200000) TO (1796169600000)"),
            Some((1_796_083_200_000, 1_796_169_600_000))
        );
        assert_eq!(parse_bound("DEFAULT"), None);
        assert_eq!(parse_bound("FOR VALUES IN (1)"), None);
    }

    #[test]
    fn only_our_partition_names_are_quoted() {
        assert_eq!(
            quoted("interactions_d20261207").unwrap(),
            "\"interactions_d20261207\""
        );
        assert!(quoted("users").is_err());
        assert!(quoted("interactions_x\"; DROP TABLE y").is_err());
    }
}
