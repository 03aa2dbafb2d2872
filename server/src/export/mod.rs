//! The open dataset (SPEC §9): `lowdown-server export --out DIR` writes every Scanner
//! observation as monthly CSV files (`scanner_observations/YYYY-MM.csv`, by the run's UTC
//! day, rows in id order) and a `REPORT.md` describing them ([`report`]).
//!
//! Deterministic: the bytes depend on the database (and the deployment name) only. Every
//! date in the files comes from the data; files are written whole and renamed into place,
//! and month files of an earlier export that the database no longer has are removed.

pub mod csv;
pub mod report;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use lowdown_core::scanner::days::iso;
use serde::Serialize;

use crate::db::Db;

/// The CSV header, in column order.
pub const HEADER: &str = "id,scan_run_id,target_id,observed_at,remote_url,http_status,reached_level,latency_ms,error_type,tool_count,server_version,schema_hash";
/// The directory of the monthly files under `--out`.
pub const OBSERVATIONS_DIR: &str = "scanner_observations";

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Reading the database failed.
    #[error("database: {0}")]
    Db(#[from] crate::db::DbError),
}

/// What was written.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Exported {
    /// Month files, in order (`scanner_observations/YYYY-MM.csv`).
    pub files: Vec<String>,
    /// Rows over every file.
    pub rows: u64,
    /// `REPORT.md`.
    pub report: String,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// A latency as stored, written the shortest way that reads back the same number.
fn number(v: Option<f64>) -> Option<String> {
    v.map(|x| x.to_string())
}

async fn month_csv(db: &Db, month: &str) -> Result<(Vec<u8>, u64), ExportError> {
    let mut out = Vec::with_capacity(1 << 16);
    out.extend_from_slice(HEADER.as_bytes());
    out.push(b'\n');
    let mut rows = 0;
    crate::db::export::each_row(db, month, |r| {
        let int = |v: Option<i64>| v.map(|v| v.to_string());
        let fields = [
            int(r.id),
            r.scan_run_id,
            r.target_id,
            Some(iso(r.observed_at)),
            r.remote_url,
            int(r.http_status),
            int(r.reached_level),
            number(r.latency_ms),
            r.error_type,
            int(r.tool_count),
            r.server_version,
            r.schema_hash,
        ];
        out.extend_from_slice(csv::record(fields.iter().map(Option::as_deref)).as_bytes());
        rows += 1;
    })
    .await?;
    Ok((out, rows))
}

/// Exports the dataset of `db` into `out`, naming the deployment `deployment`.
pub async fn export(db: &Db, out: &Path, deployment: &str) -> Result<Exported, ExportError> {
    let dir = out.join(OBSERVATIONS_DIR);
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let months = crate::db::export::months(db).await?;
    let mut exported = Exported::default();
    let mut written = BTreeSet::new();
    for month in &months {
        let (bytes, rows) = month_csv(db, month).await?;
        let name = format!("{month}.csv");
        write_whole(&dir.join(&name), &bytes)?;
        exported.files.push(format!("{OBSERVATIONS_DIR}/{name}"));
        exported.rows += rows;
        written.insert(name);
    }
    // Month files of an earlier export that this database does not have.
    for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
        let entry = entry.map_err(io(&dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name.len() == 11
            && name.ends_with(".csv")
            && name.as_bytes()[4] == b'-'
            && name[..4]
                .bytes()
                .chain(name[5..7].bytes())
                .all(|b| b.is_ascii_digit());
        if ours && !written.contains(&name) {
            std::fs::remove_file(entry.path()).map_err(io(&entry.path()))?;
        }
    }
    let text = report::report(db, deployment, &exported).await?;
    let path = out.join("REPORT.md");
    let mut bytes = Vec::new();
    bytes.write_all(text.as_bytes()).map_err(io(&path))?;
    write_whole(&path, &bytes)?;
    exported.report = "REPORT.md".to_owned();
    Ok(exported)
}
