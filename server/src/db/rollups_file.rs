//! SQLite: the roll-ups live in a second file beside the database, `<database>-rollups`,
//! so that the roller writes them in parallel with the ingest writer (SQLite locks each file
//! apart; see [`super::roller`]).
//!
//! It holds every table only the roll writes ([`SCHEMA`]: the `rollup_*` tables, `nodes`,
//! `node_days`, `node_targets`, the per-network cap's marks and the watermark) and is
//! ATTACHed to every pooled connection as [`NAME`], so reads name its tables unqualified.
//! It is a cache of what the raw `interactions` rows of the main file imply: stamped with
//! [`ROLLUPS_VERSION`] and the main file's `database_id`, and made again empty (watermark 0,
//! the roll then adds every raw row) when it is missing, of another version, of another
//! database, or ahead of the raw rows (a main file restored from a backup). It need not be
//! backed up until the retention job has removed raw rows (`super::retention`): from then
//! on it alone counts them, and a file that would be made again is refused instead.

use sqlx::{AnyConnection, AssertSqlSafe, Connection, Executor, Row};

use super::DbResult;

/// The schema name the file is attached as.
pub(crate) const NAME: &str = "rollups";

/// The version of [`SCHEMA`]; a file of another version is made again.
const ROLLUPS_VERSION: i64 = 2;

/// The file's tables, as a fresh one holds them.
const SCHEMA: &str = include_str!("../../migrations/rollups.sqlite.sql");

/// The roll-ups file of the SQLite database file `main`.
pub(crate) fn path_beside(main: &str) -> String {
    format!("{main}-rollups")
}

/// Attaches the roll-ups file beside the connection's main file, with the main file's
/// settings (an in-memory database gets a private in-memory one).
pub(super) async fn attach(conn: &mut AnyConnection) -> Result<(), sqlx::Error> {
    let main: String = sqlx::query("SELECT file FROM pragma_database_list WHERE name = 'main'")
        .fetch_one(&mut *conn)
        .await?
        .try_get("file")?;
    let path = match main.is_empty() {
        true => String::new(),
        false => path_beside(&main),
    };
    sqlx::query(AssertSqlSafe(format!("ATTACH DATABASE $1 AS {NAME}")))
        .bind(path)
        .execute(&mut *conn)
        .await?;
    let kept = format!("journal_size_limit = {}", super::checkpoint::WAL_KEPT_BYTES);
    for pragma in [
        "journal_mode = WAL",
        "synchronous = NORMAL",
        "cache_size = -65536",
        "mmap_size = 1073741824",
        &kept,
    ] {
        conn.execute(AssertSqlSafe(format!("PRAGMA {NAME}.{pragma}")))
            .await?;
    }
    Ok(())
}

/// Makes the attached file current for the database of `pool`; true when it was made
/// again (empty, so the roll adds every raw row). Runs on a connection of its own to the
/// file, in one transaction that takes its write lock first: servers opening together
/// agree, and a reader sees the old tables or the new ones.
pub(super) async fn ensure(pool: &sqlx::AnyPool) -> DbResult<bool> {
    let mut conn = pool.acquire().await?;
    let id = database_id(&mut conn).await?;
    let path: String = sqlx::query(AssertSqlSafe(format!(
        "SELECT file FROM pragma_database_list WHERE name = '{NAME}'"
    )))
    .fetch_one(&mut *conn)
    .await?
    .try_get("file")?;
    if path.is_empty() {
        // In memory: private to each connection, and made with the connection.
        return Ok(false);
    }
    let mut file =
        AnyConnection::connect(&format!("sqlite://{}?mode=rwc", url_path(&path))).await?;
    // Made again only when it is this server's: another SQLite database that happens to
    // lie there is refused, never emptied.
    let foreign: i64 = sqlx::query(
        "SELECT COUNT(*) AS n FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' \
         AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'rollup_stamp')",
    )
    .fetch_one(&mut file)
    .await?
    .try_get("n")?;
    if foreign > 0 {
        return Err(super::DbError::internal(format!(
            "{path} holds another database, not this server's roll-ups; move it away"
        )));
    }
    file.execute("PRAGMA journal_mode = WAL").await?;
    file.execute(
        "CREATE TABLE IF NOT EXISTS rollup_stamp (id BIGINT NOT NULL PRIMARY KEY, \
         version BIGINT NOT NULL, database_id TEXT NOT NULL)",
    )
    .await?;
    let mut tx = file.begin().await?;
    // A write first, so the transaction holds the file's write lock before it reads.
    let stamp = sqlx::query(
        "INSERT INTO rollup_stamp (id, version, database_id) VALUES (1, 0, '') \
         ON CONFLICT (id) DO UPDATE SET version = rollup_stamp.version \
         RETURNING version, database_id",
    )
    .fetch_one(&mut *tx)
    .await?;
    let (version, of): (i64, String) = (stamp.try_get("version")?, stamp.try_get("database_id")?);
    let removed = super::retention::sqlite_removed_through(&mut conn).await?;
    if version == ROLLUPS_VERSION && of == id && !ahead_of_raw_rows(&mut tx, &mut conn).await? {
        let rolled = watermark(&mut tx).await?.unwrap_or(0);
        if removed.is_some_and(|r| r > rolled) {
            // A roll-ups file older than the main file's last removal (restored from an
            // older backup): the rows in between are gone, and it never counted them.
            return Err(super::DbError::internal(format!(
                "{path} counts raw rows up to {rolled}, but rows up to {} were removed \
                 (--retain-raw-days): it cannot count them any more; restore the roll-ups \
                 file backed up just before this database (see server/README.md, Retention)",
                removed.unwrap_or_default()
            )));
        }
        tx.commit().await?;
        return Ok(false);
    }
    if removed.is_some() {
        // Made again from the raw rows, it would count only those still kept: every
        // answer would lose what the retention job removed.
        return Err(super::DbError::internal(format!(
            "{path} is missing or does not match the database, and cannot be made again: \
             raw rows older than --retain-raw-days were removed, and only this file still \
             counts them; restore it from the backup taken with the database (see \
             server/README.md, Retention)"
        )));
    }
    let objects = sqlx::query(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') \
         AND name <> 'rollup_stamp' AND name NOT LIKE 'sqlite_%'",
    )
    .fetch_all(&mut *tx)
    .await?;
    for o in objects {
        let (kind, name): (String, String) = (o.try_get("type")?, o.try_get("name")?);
        let kind = if kind == "view" { "VIEW" } else { "TABLE" };
        tx.execute(AssertSqlSafe(format!("DROP {kind} IF EXISTS \"{name}\"")))
            .await?;
    }
    tx.execute(SCHEMA).await?;
    sqlx::query("UPDATE rollup_stamp SET version = $1, database_id = $2 WHERE id = 1")
        .bind(ROLLUPS_VERSION)
        .bind(&id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    file.close().await?;
    Ok(true)
}

/// A file path as the path of a `sqlite://` URL, which sqlx percent-decodes (a `?`, `#`
/// or `%` in a directory name would otherwise cut or change it).
fn url_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The main file's `database_id` (`server_meta`), made by the first server to open it.
async fn database_id(conn: &mut AnyConnection) -> DbResult<String> {
    sqlx::query(
        "INSERT INTO server_meta (key, value) VALUES ('database_id', $1) \
         ON CONFLICT (key) DO NOTHING",
    )
    .bind(super::random_id("db_", 16)?)
    .execute(&mut *conn)
    .await?;
    Ok(
        sqlx::query("SELECT value FROM server_meta WHERE key = 'database_id'")
            .fetch_one(&mut *conn)
            .await?
            .try_get("value")?,
    )
}

/// Whether the watermark (read on `file`, whose write lock is held, so no roll moves it)
/// lies past the last raw row of the main file (read after it on `main`).
async fn ahead_of_raw_rows(file: &mut AnyConnection, main: &mut AnyConnection) -> DbResult<bool> {
    let rolled = watermark(file).await?;
    let last: i64 = sqlx::query("SELECT COALESCE(MAX(rowid), 0) AS last FROM main.interactions")
        .fetch_one(&mut *main)
        .await?
        .try_get("last")?;
    Ok(rolled.is_none_or(|r| r > last))
}

/// The file's watermark (`None` in a file without one).
async fn watermark(file: &mut AnyConnection) -> DbResult<Option<i64>> {
    Ok(
        sqlx::query("SELECT rolled FROM rollup_watermark WHERE id = 1")
            .fetch_optional(&mut *file)
            .await?
            .map(|r| r.try_get("rolled"))
            .transpose()?,
    )
}

/// Registers the targets of raw rows that have none in `targets` (the main file): ingest
/// registers each record's target, but an older server left that to its roll, which had
/// not reached rows stored just before an upgrade. Run when the file was made again.
pub(super) async fn register_targets(conn: &mut AnyConnection) -> DbResult<()> {
    let rows = sqlx::query(
        "SELECT target, MIN(created_at) AS first_seen FROM main.interactions \
         WHERE target NOT IN (SELECT target FROM main.targets) GROUP BY target",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut targets = Vec::with_capacity(rows.len());
    for row in rows {
        targets.push((
            row.try_get::<String, _>("target")?,
            row.try_get::<i64, _>("first_seen")?,
        ));
    }
    super::rollup::add_targets(conn, targets.iter().map(|(t, at)| (t.as_str(), *at))).await?;
    Ok(())
}
