//! Package states (`package_checks`) and which Registry entries declare which package
//! (`registry_packages`), and the reads behind the answers.

use lowdown_core::scanner::packages::{item, PackageItem, PackageKey, PackageState};
use lowdown_core::scanner::registry::Package;
use sqlx::Row;

use crate::db::upsert::{insert_ignore, Val};
use crate::db::Db;
use crate::db::{DbError, DbResult};
use crate::names::enum_str;

/// The stored state of `key`, if it was ever checked.
pub async fn state(db: &Db, key: &PackageKey) -> DbResult<Option<PackageState>> {
    let row = sqlx::query("SELECT state FROM package_checks WHERE ecosystem = $1 AND name = $2")
        .bind(enum_str(&key.ecosystem))
        .bind(key.name.clone())
        .fetch_optional(&db.pool)
        .await?;
    Ok(match row {
        Some(r) => serde_json::from_str(&r.try_get::<String, _>("state")?).ok(),
        None => None,
    })
}

/// The packages (`(ecosystem, name)`) whose last check was attempted at `since` or later
/// (what a scan taken over from a holder that died has already checked).
pub async fn attempted_since(db: &Db, since: i64) -> DbResult<Vec<(String, String)>> {
    let rows =
        sqlx::query("SELECT ecosystem, name FROM package_checks WHERE last_attempt_at >= $1")
            .bind(since)
            .fetch_all(&db.pool)
            .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("ecosystem")?, r.try_get("name")?)))
        .collect()
}

/// Stores the state of `key` after a check at `now`.
pub async fn save_state(db: &Db, key: &PackageKey, state: &PackageState, now: i64) -> DbResult<()> {
    let json = serde_json::to_string(state).map_err(DbError::internal)?;
    let (eco, name) = (enum_str(&key.ecosystem), key.name.clone());
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO package_checks (ecosystem, name, state, last_attempt_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (ecosystem, name) DO UPDATE SET state = excluded.state, \
                 last_attempt_at = excluded.last_attempt_at",
            )
            .bind(eco)
            .bind(name)
            .bind(json)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    })
    .await
}

/// Rebuilds `registry_packages` from every stored Registry entry (listed or not), so an
/// `npm:`/`pypi:` lookup finds the entries declaring that package. Run after each
/// successful Registry read.
pub async fn rebuild_declarations(db: &Db) -> DbResult<usize> {
    let rows = sqlx::query("SELECT name, packages FROM registry_entries")
        .fetch_all(&db.pool)
        .await?;
    let mut pairs = std::collections::BTreeSet::new();
    for r in &rows {
        let name: String = r.try_get("name")?;
        let packages: Vec<Package> =
            serde_json::from_str(&r.try_get::<String, _>("packages")?).unwrap_or_default();
        for p in &packages {
            if let Ok(key) = PackageKey::of(p) {
                pairs.insert((key.target(), name.clone()));
            }
        }
    }
    let n = pairs.len();
    let values: Vec<Vec<Val>> = pairs
        .into_iter()
        .map(|(target, name)| vec![Val::Text(target), Val::Text(name)])
        .collect();
    db.write(move |conn| {
        Box::pin(async move {
            sqlx::query("DELETE FROM registry_packages")
                .execute(&mut *conn)
                .await?;
            // 500 rows per statement, like the Registry writes (memory, not the parameter bound).
            for chunk in values.chunks(500) {
                let cols = ["package_target", "name"];
                insert_ignore(
                    conn,
                    "registry_packages",
                    &cols,
                    "package_target, name",
                    chunk,
                )
                .await?;
            }
            Ok(())
        })
    })
    .await?;
    Ok(n)
}

/// The Registry entries (`mcp:<name>`) declaring the package `target` names (any
/// spelling of an `npm:`/`pypi:` name), sorted.
pub async fn declaring_entries(db: &Db, target: &str) -> DbResult<Vec<String>> {
    let Some(key) = PackageKey::of_target(target) else {
        return Ok(Vec::new());
    };
    let rows =
        sqlx::query("SELECT name FROM registry_packages WHERE package_target = $1 ORDER BY name")
            .bind(key.target())
            .fetch_all(&db.pool)
            .await?;
    rows.iter()
        .map(|r| Ok(format!("mcp:{}", r.try_get::<String, _>("name")?)))
        .collect()
}

/// The block items of `declared` packages on `today`, with their stored states.
pub async fn items(db: &Db, declared: &[Package], today: &str) -> DbResult<Vec<PackageItem>> {
    let mut out = Vec::with_capacity(declared.len());
    for p in declared {
        let state = match PackageKey::of(p) {
            Ok(key) => state(db, &key).await?,
            Err(_) => None,
        };
        out.push(item(p, state.as_ref(), today));
    }
    Ok(out)
}
