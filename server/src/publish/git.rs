//! The `git` binary, run so that the same files give the same commit whoever runs it:
//! the user's and the system's git configuration are not read (no signing, no line-end
//! conversion, no hooks, no identity from `~/.gitconfig`), every `GIT_*` variable of the
//! environment is dropped, and the identity and dates are given on each commit.
//! Plumbing only (`add`, `write-tree`, `commit-tree`, `update-ref`): nothing here pushes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::PublishError;

/// Who commits and when (unix seconds, UTC).
pub struct Identity {
    /// Author and committer name.
    pub name: String,
    /// Author and committer email.
    pub email: String,
    /// Author and committer date.
    pub at_secs: i64,
}

/// A repository's work tree, its top level.
pub struct Repo {
    /// The work tree.
    pub dir: PathBuf,
}

fn command(dir: &Path) -> Command {
    let mut c = Command::new("git");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            c.env_remove(k);
        }
    }
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .args(["-c", "core.autocrlf=false", "-c", "core.safecrlf=false"])
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "commit.gpgSign=false",
        ])
        .arg("-C")
        .arg(dir);
    c
}

fn run(mut c: Command, what: &str) -> Result<Output, PublishError> {
    c.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => PublishError::GitMissing,
        _ => PublishError::Git {
            what: what.to_owned(),
            detail: e.to_string(),
        },
    })
}

/// `git ARGS` in `dir`: its stdout, trimmed, or the error with git's own words.
fn git(dir: &Path, args: &[&str]) -> Result<String, PublishError> {
    let mut c = command(dir);
    c.args(args);
    let out = run(c, &args.join(" "))?;
    if !out.status.success() {
        return Err(PublishError::Git {
            what: args.join(" "),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

/// Whether git runs at all.
pub fn available() -> Result<(), PublishError> {
    git(Path::new("."), &["--version"]).map(drop)
}

/// The top level of the work tree `dir` is in, if any (`None`: not in one).
pub fn toplevel(dir: &Path) -> Result<Option<PathBuf>, PublishError> {
    let mut c = command(dir);
    c.args(["rev-parse", "--show-toplevel"]);
    let out = run(c, "rev-parse")?;
    let top = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok((out.status.success() && !top.is_empty()).then(|| PathBuf::from(top)))
}

impl Repo {
    /// `git init` in `dir` (branch `main`).
    pub fn init(dir: &Path) -> Result<Repo, PublishError> {
        git(dir, &["init", "--quiet", "--initial-branch=main"])?;
        Ok(Repo {
            dir: dir.to_owned(),
        })
    }

    /// Uncommitted changes (tracked, staged or untracked, ignored files aside), as git's
    /// short status lines.
    pub fn changes(&self) -> Result<Vec<String>, PublishError> {
        let s = git(
            &self.dir,
            &["status", "--porcelain=v1", "--untracked-files=all"],
        )?;
        Ok(s.lines().map(str::to_owned).collect())
    }

    /// The repository's own directory (`.git`, or what a `.git` file points to).
    pub fn git_dir(&self) -> Result<PathBuf, PublishError> {
        let d = PathBuf::from(git(&self.dir, &["rev-parse", "--absolute-git-dir"])?);
        Ok(d)
    }

    /// The commit `HEAD` names, `None` on a branch with no commit yet.
    pub fn head(&self) -> Result<Option<String>, PublishError> {
        let mut c = command(&self.dir);
        c.args(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
        let out = run(c, "rev-parse HEAD")?;
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !id.is_empty()).then_some(id))
    }

    /// A commit's subject, author email and parents.
    pub fn describe(&self, commit: &str) -> Result<(String, String, Vec<String>), PublishError> {
        let s = git(
            &self.dir,
            &["show", "-s", "--format=%s%x00%ae%x00%P", commit],
        )?;
        let mut parts = s.split('\0');
        let subject = parts.next().unwrap_or_default().to_owned();
        let email = parts.next().unwrap_or_default().to_owned();
        let parents = parts
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        Ok((subject, email, parents))
    }

    /// Stages the whole work tree (deletions too) and writes its tree.
    pub fn stage_all(&self) -> Result<String, PublishError> {
        git(&self.dir, &["add", "--all", "--", "."])?;
        git(&self.dir, &["write-tree"])
    }

    /// The tree of a commit.
    pub fn tree_of(&self, commit: &str) -> Result<String, PublishError> {
        git(&self.dir, &["rev-parse", &format!("{commit}^{{tree}}")])
    }

    /// Writes a commit of `tree` on `parent` and moves `HEAD` to it from `old` (what
    /// `HEAD` named when the publish began: a concurrent move makes this fail).
    pub fn commit(
        &self,
        tree: &str,
        parent: Option<&str>,
        old: Option<&str>,
        message: &str,
        who: &Identity,
    ) -> Result<String, PublishError> {
        let date = format!("@{} +0000", who.at_secs);
        let mut c = command(&self.dir);
        c.args(["commit-tree", "--no-gpg-sign", tree, "-m", message]);
        if let Some(p) = parent {
            c.args(["-p", p]);
        }
        for role in ["AUTHOR", "COMMITTER"] {
            c.env(format!("GIT_{role}_NAME"), &who.name)
                .env(format!("GIT_{role}_EMAIL"), &who.email)
                .env(format!("GIT_{role}_DATE"), &date);
        }
        let out = run(c, "commit-tree")?;
        if !out.status.success() {
            return Err(PublishError::Git {
                what: "commit-tree".into(),
                detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        git(
            &self.dir,
            &[
                "update-ref",
                "-m",
                "lowdown-server publish",
                "HEAD",
                &id,
                old.unwrap_or(""),
            ],
        )?;
        Ok(id)
    }
}
