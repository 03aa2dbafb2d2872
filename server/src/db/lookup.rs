//! How a name asked for maps to stored targets (SPEC §5). Never a silent substitution:
//!
//! 1. The name exactly as recorded.
//! 2. Its lookup form (`pypi:` by PEP 503, `npm:` lower case; the core's `lookup_form`),
//!    matched against the lookup form of every stored target; one match resolves, several
//!    are candidates.
//! 3. An `npm:`/`pypi:` name without records of its own resolves to the one Registry
//!    entry declaring that package (`mcp:<name>`); several declaring entries are
//!    `candidates`, never chosen between.
//! 4. A namespaced name (anything with `:`: `npm:`, `pypi:`, `mcp:`, `url:`, …) stops
//!    here: stored names of the same namespace containing it are returned as `candidates`,
//!    even when there is only one, and the caller chooses.
//! 5. A short name (no `:`) resolves when exactly one target matches it: first by last
//!    segment (`server-brave-search` for `npm:@modelcontextprotocol/server-brave-search`,
//!    case-insensitive), then by substring; several matches are candidates.
//!
//! LIKE wildcards in the name are always escaped. A private or special-use host is never
//! listed (the core's `unlisted_target`), whatever the database holds: rows stored before
//! the server ran the host filter, or under `--unsafe-allow-private-hosts`, stay hidden.

use lowdown_core::target_label::lookup_form;
use lowdown_core::telemetry::unlisted_target;
use sqlx::Row;

use super::Db;
use crate::db::DbResult;
use crate::names::{like_escape, name_key};

/// How a requested target name maps to stored targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The stored target to answer for.
    Found(String),
    /// Stored targets the name may mean; the caller must pick one.
    Candidates(Vec<String>),
    /// Nothing matches.
    Nothing,
}

/// Most candidates listed.
pub const MAX_CANDIDATES: usize = 20;
/// Rows read per matching step: more than are listed, so hidden (private) names cannot
/// crowd out listable ones.
const READ_LIMIT: i64 = 100;

/// Resolves `name` as described in the module docs. `allow_private` is the server's
/// `--unsafe-allow-private-hosts`.
pub async fn resolve(db: &Db, name: &str, allow_private: bool) -> DbResult<Resolution> {
    db.settle().await?;
    // The name asked for is only search text; what is filtered is every stored name found.
    let listed = |t: &String| unlisted_target(t, allow_private).is_none();
    let exact = targets(db, "target = $1", name.to_owned()).await?;
    if exact.iter().any(listed) {
        return Ok(Resolution::Found(name.to_owned()));
    }
    let form = lookup_form(name);
    if let Some(r) = pick(targets(db, "lookup_key = $1", form.clone()).await?, listed) {
        return Ok(r);
    }
    let declaring = crate::db::packages::declaring_entries(db, name).await?;
    if let Some(r) = pick(declaring, listed) {
        return Ok(r);
    }
    if let Some((namespace, rest)) = form.split_once(':') {
        let pattern = format!(
            "{}:%{}%",
            like_escape(&namespace.to_lowercase()),
            like_escape(&rest.to_lowercase())
        );
        let similar = targets(db, "LOWER(lookup_key) LIKE $1 ESCAPE '\\'", pattern).await?;
        let mut names: Vec<String> = similar.into_iter().filter(listed).collect();
        names.truncate(MAX_CANDIDATES);
        return Ok(if names.is_empty() {
            Resolution::Nothing
        } else {
            Resolution::Candidates(names)
        });
    }
    if !name.contains('/') {
        if let Some(r) = pick(targets(db, "name_key = $1", name_key(name)).await?, listed) {
            return Ok(r);
        }
    }
    let pattern = format!("%{}%", like_escape(&name.to_lowercase()));
    let substring = targets(db, "LOWER(target) LIKE $1 ESCAPE '\\'", pattern).await?;
    Ok(pick(substring, listed).unwrap_or(Resolution::Nothing))
}

/// Stored targets matching `condition` (on one bound value), in name order.
async fn targets(db: &Db, condition: &str, value: String) -> DbResult<Vec<String>> {
    // `condition` is one of the fixed strings above, never input.
    let sql =
        format!("SELECT target FROM targets WHERE {condition} ORDER BY target LIMIT {READ_LIMIT}");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(value)
        .fetch_all(&db.pool)
        .await?;
    rows.iter()
        .map(|r| r.try_get::<String, _>("target"))
        .collect::<Result<_, _>>()
        .map_err(Into::into)
}

/// One listable match resolves, several are candidates, none is `None`.
fn pick(rows: Vec<String>, listed: impl Fn(&String) -> bool) -> Option<Resolution> {
    let mut names: Vec<String> = rows.into_iter().filter(listed).collect();
    match names.len() {
        0 => None,
        1 => names.pop().map(Resolution::Found),
        _ => {
            names.truncate(MAX_CANDIDATES);
            Some(Resolution::Candidates(names))
        }
    }
}
