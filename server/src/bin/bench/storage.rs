//! `storage`: bytes on disk per record, before and after the retention job.
//!
//! Seeds `records` records through the storage layer, spread evenly over `days` UTC days
//! ending today (on PostgreSQL each day in its own partition, made as the job makes them),
//! rolls them up and prints every table's size; then runs the retention job as of the
//! start of tomorrow with `--retain-raw-days` = `retain`, which keeps the last `retain`
//! days and removes the others (half of them with the defaults, 10 and 5), and prints the
//! sizes again.
//!
//! Sizes: SQLite's `dbstat` (the pages of each table with its indexes, per file) and the
//! files themselves; PostgreSQL's `pg_total_relation_size` (heap, indexes, TOAST, free
//! space and visibility maps), the partitions of `interactions` summed.

use std::collections::BTreeMap;
use std::time::Instant;

use lowdown_core::record::validate::validate_records;
use lowdown_server::db::{ingest, retention, Backend, Db};
use lowdown_server::{clock, AppState};
use sqlx::Row;

use crate::records::{body, sender, Spread};
use crate::scratch::Scratch;

const DAY_MS: i64 = 86_400_000;

/// Bytes per table (`interactions` with all its partitions), and the files on SQLite.
async fn sizes(db: &Db, url: &str) -> anyhow::Result<BTreeMap<String, i64>> {
    let mut out = BTreeMap::new();
    match db.backend {
        Backend::Sqlite => {
            let mut conn = db.pool.acquire().await?;
            for schema in ["main", "rollups"] {
                let sql = format!(
                    "SELECT COALESCE(m.tbl_name, d.name) AS t, SUM(d.pgsize) AS bytes \
                     FROM dbstat('{schema}') d LEFT JOIN {schema}.sqlite_master m ON m.name = d.name \
                     GROUP BY t"
                );
                for row in sqlx::query(sqlx::AssertSqlSafe(sql))
                    .fetch_all(&mut *conn)
                    .await?
                {
                    let t: String = row.try_get("t")?;
                    let prefix = if schema == "main" { "" } else { "rollups." };
                    out.insert(format!("{prefix}{t}"), row.try_get::<i64, _>("bytes")?);
                }
            }
            let path = url
                .strip_prefix("sqlite://")
                .and_then(|p| p.split('?').next())
                .unwrap_or_default();
            for (name, file) in [
                ("file:main", path.to_owned()),
                ("file:rollups", lowdown_server::db::rollups_path(path)),
            ] {
                let len = std::fs::metadata(&file)
                    .map(|m| m.len() as i64)
                    .unwrap_or(0);
                out.insert(name.to_owned(), len);
            }
        }
        Backend::Postgres => {
            let rows = sqlx::query(
                "SELECT CAST(c.relname AS TEXT) AS t, pg_total_relation_size(c.oid) AS bytes \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = 'public' AND c.relkind = 'r'",
            )
            .fetch_all(&db.pool)
            .await?;
            for row in rows {
                let t: String = row.try_get("t")?;
                let t = match t.starts_with("interactions_") {
                    true => "interactions".to_owned(),
                    false => t,
                };
                *out.entry(t).or_default() += row.try_get::<i64, _>("bytes")?;
            }
            let total: i64 = sqlx::query("SELECT pg_database_size(current_database()) AS bytes")
                .fetch_one(&db.pool)
                .await?
                .try_get("bytes")?;
            out.insert("database".to_owned(), total);
        }
    }
    Ok(out)
}

async fn count(db: &Db, table: &str) -> anyhow::Result<i64> {
    Ok(sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT COUNT(*) AS n FROM {table}"
    )))
    .fetch_one(&db.pool)
    .await?
    .try_get("n")?)
}

fn print(label: &str, db: &Db, sizes: &BTreeMap<String, i64>, raw: i64, ids: i64) {
    let get = |t: &str| sizes.get(t).copied().unwrap_or(0);
    let rollups: i64 = sizes
        .iter()
        .filter(|(t, _)| {
            t.starts_with("rollups.") || t.starts_with("rollup_") || t.starts_with("node")
        })
        .map(|(_, b)| *b)
        .sum();
    let per = |bytes: i64, n: i64| if n > 0 { bytes as f64 / n as f64 } else { 0.0 };
    println!(
        "storage backend={:?} at={label} raw_rows={raw} raw_bytes={} raw_bytes_per_row={:.1} \
         ids={ids} ids_bytes={} ids_bytes_per_id={:.1} rollups_bytes={rollups}",
        db.backend,
        get("interactions"),
        per(get("interactions"), raw),
        get("record_ids"),
        per(get("record_ids"), ids),
    );
    println!(
        "storage backend={:?} at={label} tables {}",
        db.backend,
        sizes
            .iter()
            .map(|(t, b)| format!("{t}={b}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
}

/// See the module documentation.
pub async fn run(url: &str, records: u64, days: u64, retain: u32) -> anyhow::Result<()> {
    let scratch = Scratch::create(url).await?;
    let db = Db::open(&scratch.url, 16).await?;
    let state = AppState::new(db.clone(), "bench");
    let today = clock::now_ms().div_euclid(DAY_MS);
    let first = today - days as i64 + 1;
    let per_day = records.div_ceil(days);
    let seed_start = Instant::now();
    let mut b = 0;
    for day in 0..days as i64 {
        // Noon of the day: every record of it in its partition.
        let at = (first + day) * DAY_MS + DAY_MS / 2;
        retention::prepare_partitions(&db, at, 0).await?;
        let n = per_day.min(records - b * 1000).div_ceil(1000);
        for _ in 0..n {
            let recs = validate_records(&body(b, 1000, "storage", Spread::Even))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let from = sender(&db, b, &recs);
            ingest::store_interactions(&db, recs, from, at)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            b += 1;
        }
    }
    db.settle().await?;
    let seed_secs = seed_start.elapsed().as_secs_f64();
    let raw = count(&db, "interactions").await?;
    let ids = count(&db, "record_ids").await?;
    println!(
        "storage backend={:?} records={raw} days={days} seed_seconds={seed_secs:.1}",
        db.backend
    );
    print("seeded", &db, &sizes(&db, &scratch.url).await?, raw, ids);
    // The job as of the start of tomorrow.
    state.clock.shift((today + 1) * DAY_MS - clock::now_ms());
    let started = Instant::now();
    let report = lowdown_server::retention::run_once(&state, retain, "bench")
        .await
        .map_err(|e| anyhow::anyhow!("{e:?}"))?
        .ok_or_else(|| anyhow::anyhow!("retention lease held"))?;
    let removal_ms = started.elapsed().as_secs_f64() * 1000.0;
    let raw = count(&db, "interactions").await?;
    let ids = count(&db, "record_ids").await?;
    println!(
        "storage backend={:?} removed_rows={} dropped_partitions={} removal_ms={removal_ms:.0} retain_days={retain}",
        db.backend,
        report.rows,
        report.dropped.len()
    );
    print(
        "after_retention",
        &db,
        &sizes(&db, &scratch.url).await?,
        raw,
        ids,
    );
    db.close().await;
    scratch.delete().await
}
