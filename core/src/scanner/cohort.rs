//! The fixed sample the Scanner observes every day (SPEC §8).
//!
//! Targets `mcp:<name>` are ordered by `sha256_hex(id)` (ties by id); a new cohort takes
//! the first N of the active, latest entries. A cohort is never rebuilt: members never
//! leave (one that leaves the Registry is reported `not_listed`), and its membership only
//! changes under a new version, when it grows:
//! - a larger size keeps every member and adds the next candidates by hash;
//! - a cohort holding fewer members than its size (the Registry listed fewer entries than
//!   asked for) takes the next candidates by hash as the Registry grows, each addition
//!   recorded as a new version;
//! - a smaller size is refused.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The cohort's order key of a target id: lowercase hex sha256 of its UTF-8 bytes.
pub fn sort_key(target_id: &str) -> String {
    hex::encode(Sha256::digest(target_id.as_bytes()))
}

/// Sorts target ids into cohort order (hash, then id).
pub fn sort(ids: &mut [String]) {
    ids.sort_by_cached_key(|id| (sort_key(id), id.clone()));
}

/// The stored cohort a plan starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Current<'a> {
    /// Its version.
    pub version: u64,
    /// Its declared size.
    pub size: u64,
    /// Its members (target ids).
    pub members: &'a BTreeSet<String>,
}

/// What a run does to the cohort before probing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The size in force after this run.
    pub size: u64,
    /// Targets to add, in cohort order.
    pub add: Vec<String>,
    /// The version to record, when anything changed (size or members); `None` keeps the
    /// current version.
    pub new_version: Option<u64>,
}

/// Why a cohort cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CohortError {
    /// The size asked for is smaller than the stored one.
    #[error("--cohort-size {requested} is smaller than the cohort's size {size} (version {version}); a cohort only grows, it is never rebuilt")]
    Shrink {
        /// The size asked for.
        requested: u64,
        /// The stored size.
        size: u64,
        /// The stored version.
        version: u64,
    },
    /// A size of zero.
    #[error("--cohort-size must be at least 1")]
    Empty,
}

/// Plans the cohort for a run: `requested` is `--cohort-size` (absent: the stored size,
/// or `default_size` for a new cohort); `kept` are the target ids of this read's active,
/// latest entries.
pub fn plan(
    current: Option<&Current<'_>>,
    requested: Option<u64>,
    default_size: u64,
    kept: &[String],
) -> Result<Plan, CohortError> {
    let size = requested.unwrap_or(current.map_or(default_size, |c| c.size));
    if size == 0 {
        return Err(CohortError::Empty);
    }
    let empty = BTreeSet::new();
    let members = current.map_or(&empty, |c| c.members);
    if let Some(c) = current {
        if size < c.size {
            return Err(CohortError::Shrink {
                requested: size,
                size: c.size,
                version: c.version,
            });
        }
    }
    let room = usize::try_from(size)
        .unwrap_or(usize::MAX)
        .saturating_sub(members.len());
    let mut candidates: Vec<String> = kept
        .iter()
        .filter(|id| !members.contains(*id))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    sort(&mut candidates);
    candidates.truncate(room);
    let changed = current.is_none_or(|c| c.size != size) || !candidates.is_empty();
    Ok(Plan {
        size,
        new_version: changed.then(|| current.map_or(1, |c| c.version + 1)),
        add: candidates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("mcp:io.example/s{i}")).collect()
    }

    #[test]
    fn sort_key_is_sha256_hex_of_the_id() {
        // printf 'mcp:io.github.user/server' | sha256sum
        assert_eq!(
            sort_key("mcp:io.github.user/server"),
            "854037dd28cb3ca87116db8ece8d0622753bf63114c1e5032a6ac059154a3e3d"
        );
    }

    #[test]
    fn a_new_cohort_takes_the_first_by_hash_and_grows_without_losing_anyone() {
        let all = ids(10);
        let p = plan(None, Some(3), 5_000, &all).unwrap();
        assert_eq!(p.new_version, Some(1));
        let mut sorted = all.clone();
        sort(&mut sorted);
        assert_eq!(p.add, sorted[..3]);
        let members: BTreeSet<String> = p.add.iter().cloned().collect();
        let cur = Current {
            version: 1,
            size: 3,
            members: &members,
        };
        let same = plan(Some(&cur), None, 5_000, &all).unwrap();
        assert_eq!((same.size, same.new_version, same.add.len()), (3, None, 0));
        let grown = plan(Some(&cur), Some(5), 5_000, &all).unwrap();
        assert_eq!(grown.new_version, Some(2));
        assert_eq!(grown.add, sorted[3..5]);
        assert_eq!(
            plan(Some(&cur), Some(2), 5_000, &all),
            Err(CohortError::Shrink {
                requested: 2,
                size: 3,
                version: 1
            })
        );
        assert_eq!(plan(None, Some(0), 5_000, &all), Err(CohortError::Empty));
    }

    #[test]
    fn members_that_left_stay_and_a_short_cohort_fills_as_the_registry_grows() {
        let all = ids(4);
        let p = plan(None, None, 10, &all).unwrap();
        assert_eq!((p.size, p.add.len()), (10, 4));
        let members: BTreeSet<String> = p.add.iter().cloned().collect();
        let cur = Current {
            version: 1,
            size: 10,
            members: &members,
        };
        // One member left the Registry, two entries are new: nobody leaves, both join.
        let mut now = all[1..].to_vec();
        now.push("mcp:io.example/new1".into());
        now.push("mcp:io.example/new2".into());
        let p = plan(Some(&cur), None, 10, &now).unwrap();
        assert_eq!(p.new_version, Some(2));
        assert_eq!(p.add.len(), 2);
        assert!(p.add.iter().all(|id| id.contains("new")));
    }
}
