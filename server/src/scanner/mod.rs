//! The Registry Scanner (SPEC §8): once a day, read the MCP Registry, keep the fixed
//! cohort, probe every member's streamable-HTTP remotes (or, with `--cohort all`, every
//! entry's) and store one observation per remote, in the same database as everything else.
//!
//! A run: take the `scan` lease → record the run → read every Registry page → store the
//! declarations and their changes → grow the cohort if asked → record members that
//! cannot be probed (`not_listed`, `no_probeable_remote`) → probe the rest under a total
//! and a per-host limit ([`probing`]), writing observations in small batches as they
//! finish → check the npm and
//! PyPI packages the kept entries declare ([`packages`]) → record the summary → give the
//! lease back. The rules behind each step are in `lowdown_core::scanner`.

pub mod answer;
pub mod cli;
pub mod http;
pub mod net;
pub mod packages;
pub mod progress;
pub mod registry;
pub mod schedule;

mod probing;
mod run;

pub use run::{run, run_daily, Clock, CohortMode, ScanConfig, ScanError, Summary};
