//! Publishing the open dataset (issue 26): `serve --scan-at HH:MM --publish DIR` after each
//! day's scan, and `lowdown-server publish --out DIR` by hand, write the dataset into a git
//! repository at DIR and a Hugging Face dataset layout at `DIR/huggingface`, so that an
//! operator only has to push. Nothing here pushes.
//!
//! - The repository holds what `export` writes (`scanner_observations/YYYY-MM.csv`,
//!   `REPORT.md`) and a `LICENSE` (CC BY 4.0 with the attribution line), one commit per
//!   UTC day: a second publish of the same day replaces that day's commit, and a publish
//!   that changes nothing commits nothing. The day, the dates and the identity come from
//!   the data and the deployment name ([`identity`]), never the clock, so the same database
//!   gives the same commit ids.
//! - `DIR/huggingface` ([`card`], [`parquet`], and a copy of `REPORT.md`) is excluded from the repository (through
//!   `.git/info/exclude`, which is not part of any commit): Parquet files change whole
//!   every day and belong in a Hugging Face dataset repository, not in git history.
//! - A DIR that cannot be used is refused before anything is written: a file, a non-empty
//!   directory that is not the top of a git work tree, or a work tree with uncommitted
//!   changes (they are the user's: nothing is overwritten, staged or committed).

pub mod card;
mod git;
pub mod parquet;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::db::Db;
use crate::export::{self, ExportError};

/// The Hugging Face layout's directory under DIR.
pub const HF_DIR: &str = "huggingface";
/// The Parquet files' directory under [`HF_DIR`].
pub const HF_DATA_DIR: &str = "data/scanner_observations";

/// Why a publish did not happen. Nothing the user had is lost in any of these.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// No `git` on PATH.
    #[error("publishing needs the `git` command, which was not found on PATH")]
    GitMissing,
    /// DIR exists and is not a directory.
    #[error("{0}: not a directory")]
    NotADirectory(PathBuf),
    /// DIR holds files and is not the top of a git work tree.
    #[error("{0}: not empty and not a git repository (its top level); give a new or empty directory, or a git repository")]
    NotARepository(PathBuf),
    /// The work tree has uncommitted changes.
    #[error("{dir}: the git work tree has uncommitted changes ({}); commit, stash or remove them: nothing was written", .changes.join("; "))]
    Uncommitted {
        /// DIR.
        dir: PathBuf,
        /// git's short status lines (the first few).
        changes: Vec<String>,
    },
    /// No scan has run: there is no day to publish.
    #[error("nothing to publish: no scan has run on this database")]
    NoRun,
    /// A git command failed.
    #[error("git {what}: {detail}")]
    Git {
        /// The command.
        what: String,
        /// What git said.
        detail: String,
    },
    /// Writing the files failed.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// The publish's own task failed (a panic), reported instead of taking the caller down.
    #[error("the publish stopped: {0}")]
    Task(String),
    /// Writing a Parquet file failed.
    #[error("parquet {month}: {detail}")]
    Parquet {
        /// The month.
        month: String,
        /// The error.
        detail: String,
    },
}

impl From<crate::db::DbError> for PublishError {
    fn from(e: crate::db::DbError) -> Self {
        PublishError::Export(ExportError::Db(e))
    }
}

/// What a publish did to the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A new commit for the day.
    Committed,
    /// The day's commit was replaced by one with the new files.
    Replaced,
    /// Nothing changed: no commit.
    Unchanged,
}

/// What was published.
#[derive(Debug, Clone, Serialize)]
pub struct Published {
    /// The UTC day the commit is for (the latest run's day).
    pub day: String,
    /// What happened to the repository.
    pub action: Action,
    /// `HEAD` afterwards.
    pub commit: String,
    /// The CSV export.
    pub export: export::Exported,
    /// The Hugging Face layout's directory.
    pub huggingface: PathBuf,
    /// Its Parquet files, in order (relative to it).
    pub parquet: Vec<String>,
}

/// Who the commits are by: the deployment name (without `<`, `>` and control characters,
/// which git refuses), at `<slug>@lowdown.invalid`, the slug being the name's ASCII letters
/// and digits in lower case with runs of anything else as one `-` (`.invalid` is reserved:
/// the address reaches nobody).
pub fn identity(deployment: &str, at_ms: i64) -> git::Identity {
    let name: String = deployment
        .chars()
        .filter(|c| !c.is_control() && *c != '<' && *c != '>')
        .collect();
    let mut slug = String::new();
    for c in deployment.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    let name = name.trim();
    git::Identity {
        name: if name.is_empty() { "lowdown" } else { name }.to_owned(),
        email: format!(
            "{}@lowdown.invalid",
            if slug.is_empty() { "lowdown" } else { slug }
        ),
        at_secs: at_ms.div_euclid(1000),
    }
}

/// The subject of the commit for `day`; a `HEAD` with this subject and identity is that
/// day's commit, replaced by the next publish of the day.
pub fn subject(day: &str) -> String {
    format!("Lowdown Scanner observations {day}")
}

/// Checks what can be checked of DIR before anything runs (`serve --publish` at start):
/// git runs, and DIR is missing, an empty directory, or the top of a git work tree.
pub fn check(dir: &Path) -> Result<(), PublishError> {
    git::available()?;
    usable(dir).map(drop)
}

/// Whether DIR is a repository already (`Some`), can become one (`None`), or neither.
fn usable(dir: &Path) -> Result<Option<git::Repo>, PublishError> {
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ExportError::Io {
                path: dir.to_owned(),
                source,
            }
            .into())
        }
    };
    if !meta.is_dir() {
        return Err(PublishError::NotADirectory(dir.to_owned()));
    }
    let real = std::fs::canonicalize(dir).map_err(|source| ExportError::Io {
        path: dir.to_owned(),
        source,
    })?;
    if let Some(top) = git::toplevel(&real)? {
        if std::fs::canonicalize(&top).ok().as_deref() == Some(real.as_path()) {
            return Ok(Some(git::Repo { dir: real }));
        }
    }
    let empty = std::fs::read_dir(&real)
        .map_err(|source| ExportError::Io {
            path: dir.to_owned(),
            source,
        })?
        .next()
        .is_none();
    if empty {
        Ok(None)
    } else {
        Err(PublishError::NotARepository(dir.to_owned()))
    }
}

/// Opens the repository at DIR, making it when DIR is missing or empty, and refuses one
/// with uncommitted changes; the Hugging Face directory is excluded from it.
fn open(dir: &Path) -> Result<git::Repo, PublishError> {
    git::available()?;
    let repo = match usable(dir)? {
        Some(repo) => repo,
        None => {
            std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
                path: dir.to_owned(),
                source,
            })?;
            let real = std::fs::canonicalize(dir).map_err(|source| ExportError::Io {
                path: dir.to_owned(),
                source,
            })?;
            git::Repo::init(&real)?
        }
    };
    let exclude = repo.git_dir()?.join("info").join("exclude");
    let line = format!("/{HF_DIR}/");
    let now = std::fs::read_to_string(&exclude).unwrap_or_default();
    if !now.lines().any(|l| l.trim() == line) {
        let io = |source| ExportError::Io {
            path: exclude.clone(),
            source,
        };
        if let Some(parent) = exclude.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut text = now;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&line);
        text.push('\n');
        std::fs::write(&exclude, text).map_err(io)?;
    }
    let changes = repo.changes()?;
    let marker = repo.git_dir()?.join(MARKER);
    // What a publish that was cut off left: files of its own only, under its marker.
    let interrupted = marker.exists() && changes.iter().all(|l| ours(l));
    if interrupted && !changes.is_empty() {
        tracing::warn!(dir = %dir.display(), changes = changes.len(), "an earlier publish was cut off; its files are written again");
        // Its temporary files would otherwise be committed; the others are written again.
        for line in changes
            .iter()
            .filter(|l| l.starts_with("?? ") && l.ends_with(".tmp"))
        {
            let path = repo.dir.join(&line[3..]);
            std::fs::remove_file(&path).map_err(|source| ExportError::Io { path, source })?;
        }
    } else if !changes.is_empty() {
        return Err(PublishError::Uncommitted {
            dir: dir.to_owned(),
            changes: changes.into_iter().take(5).collect(),
        });
    }
    std::fs::write(&marker, "a publish is under way, or was cut off\n").map_err(|source| {
        ExportError::Io {
            path: marker.clone(),
            source,
        }
    })?;
    Ok(repo)
}

/// The file in the repository's git directory that a publish holds from its first write
/// to its commit: a publish cut off in between leaves it, and the next one takes the
/// changes to its own files as its own instead of refusing them.
pub const MARKER: &str = "lowdown-publish";

/// Whether a `git status --porcelain` line is about a file a publish writes (the export's
/// months, the report, the notice, or their temporary files), not about a rename.
fn ours(line: &str) -> bool {
    let path = line.get(3..).unwrap_or_default();
    if path.contains(" -> ") || path.starts_with('"') {
        return false;
    }
    let name = path.strip_prefix("scanner_observations/").unwrap_or(path);
    let own =
        path != name && !name.contains('/') && (name.ends_with(".csv") || name.ends_with(".tmp"));
    own || matches!(path, "REPORT.md" | "REPORT.tmp" | "LICENSE" | "LICENSE.tmp")
}

/// Publishes the dataset of `db` into DIR for the deployment `deployment` (see the module
/// docs). Blocking file and git work runs off the async threads.
pub async fn publish(db: &Db, dir: &Path, deployment: &str) -> Result<Published, PublishError> {
    let run = crate::db::export::latest_runs(db, 1)
        .await?
        .into_iter()
        .next()
        .ok_or(PublishError::NoRun)?;
    let at_ms = run.finished_ms.unwrap_or(run.started_ms);
    let dir_owned = dir.to_owned();
    let repo = tokio::task::spawn_blocking(move || open(&dir_owned))
        .await
        .map_err(|e| PublishError::Task(e.to_string()))??;
    let exported = export::export(db, &repo.dir, deployment).await?;
    let retrieved = crate::clock::iso(at_ms);
    write_whole(
        &repo.dir.join("LICENSE"),
        card::license(deployment, &retrieved).as_bytes(),
    )?;
    let hf = repo.dir.join(HF_DIR);
    let parquet = huggingface(db, &hf, deployment, &retrieved, exported.rows).await?;
    // The daily report travels with the Hugging Face copy, which the card points to.
    let report = repo.dir.join(&exported.report);
    let text = std::fs::read(&report).map_err(|source| ExportError::Io {
        path: report,
        source,
    })?;
    write_whole(&hf.join("REPORT.md"), &text)?;

    let day = run.day.clone();
    let message = format!(
        "{}\n\n{} observations in {} monthly files, retrieved {retrieved} (the latest run, {}).\n{}\n",
        subject(&day),
        exported.rows,
        exported.files.len(),
        run.scan_run_id,
        crate::services::source::cite(
            &crate::services::source::dataset_of(deployment),
            export::report::SUBJECT,
            &retrieved
        ),
    );
    let who = identity(deployment, at_ms);
    let (commit, action, marker) = tokio::task::spawn_blocking(move || {
        let (commit, action) = commit_day(&repo, &day, &message, &who)?;
        Ok::<_, PublishError>((commit, action, repo.git_dir()?.join(MARKER)))
    })
    .await
    .map_err(|e| PublishError::Task(e.to_string()))??;
    std::fs::remove_file(&marker).map_err(|source| ExportError::Io {
        path: marker,
        source,
    })?;
    Ok(Published {
        day: run.day,
        action,
        commit,
        export: exported,
        huggingface: hf,
        parquet,
    })
}

/// Commits the work tree as `day`'s commit: a new one on `HEAD`, or one replacing `HEAD`
/// when `HEAD` is that day's commit by the same identity; none when the tree is unchanged.
fn commit_day(
    repo: &git::Repo,
    day: &str,
    message: &str,
    who: &git::Identity,
) -> Result<(String, Action), PublishError> {
    let head = repo.head()?;
    let tree = repo.stage_all()?;
    let Some(head) = head else {
        let id = repo.commit(&tree, None, None, message, who)?;
        return Ok((id, Action::Committed));
    };
    if repo.tree_of(&head)? == tree {
        return Ok((head, Action::Unchanged));
    }
    let (subject_then, email, parents) = repo.describe(&head)?;
    let same_day = subject_then == subject(day) && email == who.email;
    if same_day && parents.len() <= 1 {
        let parent = parents.first().map(String::as_str);
        let id = repo.commit(&tree, parent, Some(&head), message, who)?;
        Ok((id, Action::Replaced))
    } else {
        let id = repo.commit(&tree, Some(&head), Some(&head), message, who)?;
        Ok((id, Action::Committed))
    }
}

fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    let io = |source| ExportError::Io {
        path: path.to_owned(),
        source,
    };
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// Writes the Hugging Face layout into `hf`: a Parquet file per month and the card;
/// month files the database no longer has are removed. The Parquet files, in order.
async fn huggingface(
    db: &Db,
    hf: &Path,
    deployment: &str,
    retrieved: &str,
    rows: u64,
) -> Result<Vec<String>, PublishError> {
    let data = hf.join(HF_DATA_DIR);
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ExportError::Io { path, source }
    };
    std::fs::create_dir_all(&data).map_err(io(&data))?;
    let mut written = Vec::new();
    for month in crate::db::export::months(db).await? {
        let mut rows = Vec::new();
        crate::db::export::each_row(db, &month, |r| rows.push(r)).await?;
        let bytes = parquet::month(rows).map_err(|e| PublishError::Parquet {
            month: month.clone(),
            detail: e.to_string(),
        })?;
        let name = format!("{month}.parquet");
        write_whole(&data.join(&name), &bytes)?;
        written.push(name);
    }
    for entry in std::fs::read_dir(&data).map_err(io(&data))? {
        let entry = entry.map_err(io(&data))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".parquet") && month_name(&name) && !written.contains(&name) {
            std::fs::remove_file(entry.path()).map_err(io(&entry.path()))?;
        }
    }
    let files: Vec<String> = written
        .iter()
        .map(|n| format!("{HF_DATA_DIR}/{n}"))
        .collect();
    let text = card::card(deployment, retrieved, rows, &files);
    write_whole(&hf.join("README.md"), text.as_bytes())?;
    Ok(files)
}

/// `YYYY-MM.parquet`.
fn month_name(name: &str) -> bool {
    let b = name.as_bytes();
    name.len() == 15 && b[4] == b'-' && b[..4].iter().chain(&b[5..7]).all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_comes_from_the_deployment_name() {
        let i = identity("Lowdown <public> instance", 1_796_020_496_999);
        assert_eq!(i.name, "Lowdown public instance");
        assert_eq!(i.email, "lowdown-public-instance@lowdown.invalid");
        assert_eq!(i.at_secs, 1_796_020_496);
        let i = identity("lowdown-server (local)", 0);
        assert_eq!(i.email, "lowdown-server-local@lowdown.invalid");
        let i = identity("<>\n", 0);
        assert_eq!(
            (i.name.as_str(), i.email.as_str()),
            ("lowdown", "lowdown@lowdown.invalid")
        );
        assert!(month_name("2026-11.parquet") && !month_name("notes.parquet"));
        for line in [
            " M REPORT.md",
            "?? scanner_observations/2026-11.tmp",
            "M  LICENSE",
            " D scanner_observations/2026-10.csv",
        ] {
            assert!(ours(line), "{line}");
        }
        for line in [
            "?? notes.txt",
            " M scanner_observations/x/y.csv",
            "R  REPORT.md -> R.md",
            "?? \"REPORT.md\"",
            "?? scanner_observations/notes.txt",
        ] {
            assert!(!ours(line), "{line}");
        }
    }
}
