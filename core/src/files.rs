//! The file steps of the core's sans-IO plans (the spool's [`Claim`](crate::record::spool::Claim)
//! and [`Write`](crate::record::spool::Write), node.json's [`Load`](crate::identity::Load)).
//!
//! A plan answers each observation with the next [`Step`]; the host performs it and feeds
//! back what happened as an [`Outcome`], until a final step ([`Step::Done`],
//! [`Step::Identity`], [`Step::Failed`]). Names are relative to the plan's directory (the
//! spool directory, `LOWDOWN_HOME`). The host decides nothing: which file, what to do when it
//! is empty, corrupt, taken or racing another host, is the plan's.

use serde::Serialize;

/// The next thing a host does for a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// List the directory: answer [`Outcome::Listing`] (each name with its modification
    /// time), or [`Outcome::Missing`] / [`Outcome::Failed`].
    List,
    /// Read the file `name` as UTF-8 (invalid bytes replaced): answer [`Outcome::Text`],
    /// [`Outcome::Missing`] or [`Outcome::Failed`].
    Read {
        /// The file.
        name: String,
    },
    /// Write `text` to `name` (created or truncated, mode 0600), creating the directory
    /// (mode 0700) when it is missing: answer [`Outcome::Ok`] or [`Outcome::Failed`].
    Write {
        /// The file.
        name: String,
        /// Its new content.
        text: String,
    },
    /// Rename `from` to `to`, replacing `to`: answer [`Outcome::Ok`] or another outcome.
    Rename {
        /// The file renamed.
        from: String,
        /// Its new name.
        to: String,
    },
    /// Claim a file: rename `from` to `to` and set `to`'s modification time to now (so other
    /// hosts see a fresh claim): answer [`Outcome::Ok`] or another outcome.
    Claim {
        /// The file claimed.
        from: String,
        /// Its claimed name.
        to: String,
    },
    /// Create `to` exclusively as a hard link to `from`: answer [`Outcome::Ok`],
    /// [`Outcome::Exists`] (another host made it first) or [`Outcome::Failed`].
    Link {
        /// The file linked.
        from: String,
        /// The name it must not take over.
        to: String,
    },
    /// Delete `name` (already gone is fine): answer [`Outcome::Ok`] whatever happened.
    Delete {
        /// The file.
        name: String,
    },
    /// Deliver these records (JSON texts), then say whether they were taken
    /// ([`Claim::finish`](crate::record::spool::Claim::finish)).
    Deliver {
        /// The claimed file's records.
        records: Vec<String>,
    },
    /// This node's identity: the end of [`Load`](crate::identity::Load).
    Identity {
        /// `ld_` and 12 lowercase hex digits.
        node_id: String,
        /// When it was created.
        created_at: String,
        /// Whether this load wrote it.
        created: bool,
    },
    /// The plan is over.
    Done,
    /// The plan could not be carried out: the host reports (or raises) the IO error it saw.
    Failed,
}

/// What happened when the host performed a [`Step`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It worked (a write, rename, claim, link or delete).
    Ok,
    /// A read's text.
    Text(String),
    /// A listing: each name with its modification time in Unix milliseconds (`None` when it
    /// could not be read: the file went meanwhile).
    Listing(Vec<(String, Option<f64>)>),
    /// The file (or directory) does not exist.
    Missing,
    /// The target exists already (a link's `EEXIST`).
    Exists,
    /// Any other error.
    Failed,
}

impl Outcome {
    /// The outcome a host names (`ok`, `missing`, `exists`, `failed`), or a read's `text`
    /// when one is given; `None` for an unknown name.
    pub fn named(name: &str, text: Option<String>) -> Option<Outcome> {
        if let Some(text) = text {
            return Some(Outcome::Text(text));
        }
        Some(match name {
            "ok" => Outcome::Ok,
            "missing" => Outcome::Missing,
            "exists" => Outcome::Exists,
            "failed" => Outcome::Failed,
            _ => return None,
        })
    }
}
