//! The reads behind the Registry-format view (`GET /v0.1/servers`): the Registry entries
//! the last successful read listed, each with its server.json and official `_meta` as
//! the Registry served them, in name order, one page after a cursor.

use sqlx::any::AnyRow;
use sqlx::Row;

use super::Db;
use crate::db::DbResult;
use crate::names::like_escape;

/// One listed Registry entry as stored for the view.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The Registry name (the target is `mcp:` + name).
    pub name: String,
    /// The entry's `server` object, compact JSON as the Registry served it.
    pub server_json: String,
    /// Its `_meta["io.modelcontextprotocol.registry/official"]`, compact JSON.
    pub official_json: String,
}

/// What a page asks for.
#[derive(Debug, Clone, Default)]
pub struct PageQuery {
    /// Names strictly after this one (the previous page's last name).
    pub after: Option<String>,
    /// Names containing this, case-insensitively (`%`, `_` and `\` literal).
    pub search: Option<String>,
    /// Entries whose official `updatedAt` is at or after this (unix ms).
    pub updated_since_ms: Option<i64>,
    /// Most entries returned.
    pub limit: u32,
}

fn document(r: &AnyRow) -> Result<Document, sqlx::Error> {
    Ok(Document {
        name: r.try_get("name")?,
        server_json: r.try_get("server_json")?,
        official_json: r.try_get("official_json")?,
    })
}

/// Entries of the last successful read that have their server.json stored (entries read
/// before migration 20 have none until the next read), never unlisted ones.
const LISTED: &str = "listed = 1 AND server_json IS NOT NULL AND official_json IS NOT NULL";

/// One page of listed entries in name order, `limit + 1` at most so the caller knows
/// whether another page follows. Every input is bound, never spliced.
pub async fn page(db: &Db, q: &PageQuery) -> DbResult<Vec<Document>> {
    let mut sql =
        format!("SELECT name, server_json, official_json FROM registry_entries WHERE {LISTED}");
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };
    // The fragments are fixed strings; only their placeholders' numbers vary.
    let after = q.after.as_ref().map(|_| format!(" AND name > ${}", next()));
    let search = q
        .search
        .as_ref()
        .map(|_| format!(" AND LOWER(name) LIKE ${} ESCAPE '\\'", next()));
    let since = q
        .updated_since_ms
        .map(|_| format!(" AND updated_ms >= ${}", next()));
    for part in [after, search, since].into_iter().flatten() {
        sql.push_str(&part);
    }
    sql.push_str(&format!(" ORDER BY name LIMIT {}", u64::from(q.limit) + 1));
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    if let Some(a) = &q.after {
        query = query.bind(a.clone());
    }
    if let Some(s) = &q.search {
        query = query.bind(format!("%{}%", like_escape(&s.to_lowercase())));
    }
    if let Some(ms) = q.updated_since_ms {
        query = query.bind(ms);
    }
    let rows = query.fetch_all(&db.pool).await?;
    let docs: Vec<Document> = rows.iter().map(document).collect::<Result<_, _>>()?;
    Ok(docs)
}

/// The listed entry `name`, when the last successful read had it.
pub async fn one(db: &Db, name: &str) -> DbResult<Option<Document>> {
    let sql = format!(
        "SELECT name, server_json, official_json FROM registry_entries WHERE name = $1 AND {LISTED}"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(name.to_owned())
        .fetch_optional(&db.pool)
        .await?;
    Ok(match row {
        Some(r) => Some(document(&r)?),
        None => None,
    })
}
