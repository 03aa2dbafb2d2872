//! PyPI: which names are asked for, the two requests, and what their answers mean.
//!
//! First the Index API (PEP 691 JSON, `GET {pypi}/simple/{name}/` with
//! `Accept: application/vnd.pypi.simple.v1+json`): a 404 is `no_project`; the PEP 792
//! project status (`project-status.status`, `active` when absent); no file and no version
//! is `no_releases` (a quarantined project offers none and is reported by its status).
//! Then, for a project with releases, the JSON API (`GET {pypi}/pypi/{name}/json`):
//! `info.version` is the latest and `info.yanked` says whether it is yanked (PyPI shows a
//! yanked release there only when every release is yanked).

use serde_json::Value;

use super::{version, Check, Facts, NotFoundKind, ProjectStatus};

/// `Accept` of the Index API request (PEP 691, version 1 JSON).
pub const SIMPLE_ACCEPT: &str = "application/vnd.pypi.simple.v1+json";
/// Largest Index or JSON API answer read.
pub const BODY_CAP: usize = 32 << 20;
/// Longest project name asked for.
pub const MAX_NAME: usize = 200;

/// Whether `name` is a valid Python project name (PEP 508: ASCII letters and digits, with
/// `.`, `_` and `-` inside).
pub fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_NAME
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// The Index API path of a normalised name: `/simple/<name>/`.
pub fn simple_path(name: &str) -> String {
    format!("/simple/{name}/")
}

/// The JSON API path of a normalised name: `/pypi/<name>/json`.
pub fn json_path(name: &str) -> String {
    format!("/pypi/{name}/json")
}

/// What the Index API said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Index {
    /// 404: no such project.
    NoProject,
    /// The project, its status, and whether it offers any release.
    Project {
        /// PEP 792 status.
        status: ProjectStatus,
        /// Some file or version is listed.
        releases: bool,
    },
    /// No usable answer.
    Failed(String),
}

impl Index {
    /// Whether the JSON API is asked next.
    pub fn wants_json(&self) -> bool {
        matches!(self, Index::Project { releases: true, .. })
    }
}

fn status_of(doc: &Value) -> Option<ProjectStatus> {
    // The specification puts it at `project-status.status`; its example (and API 1.4
    // drafts) in `meta["project-status"]`.
    let text = doc
        .get("project-status")
        .and_then(|s| s.get("status"))
        .or_else(|| doc.get("meta").and_then(|m| m.get("project-status")))
        .and_then(Value::as_str)?;
    serde_json::from_value(Value::String(text.to_owned())).ok()
}

/// Reads an Index API answer.
pub fn read_index(status: u16, body: &[u8]) -> Index {
    if status == 404 {
        return Index::NoProject;
    }
    if !(200..300).contains(&status) {
        return Index::Failed(format!("Index API: HTTP {status}"));
    }
    let Ok(doc) = serde_json::from_slice::<Value>(body) else {
        return Index::Failed("Index API: not JSON".into());
    };
    let listed = |key: &str| {
        doc.get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    if doc.get("files").and_then(Value::as_array).is_none() {
        return Index::Failed("Index API: no files list".into());
    }
    Index::Project {
        status: status_of(&doc).unwrap_or(ProjectStatus::Active),
        releases: listed("files") || listed("versions"),
    }
}

/// The check from the Index API's answer and, when it was asked, the JSON API's
/// (`status`, `body`).
pub fn read(index: Index, json: Option<(u16, &[u8])>) -> Check {
    let (status, releases) = match index {
        Index::NoProject => {
            return Check::NotFound {
                kind: Some(NotFoundKind::NoProject),
            }
        }
        Index::Failed(reason) => return Check::Failed { reason },
        Index::Project { status, releases } => (status, releases),
    };
    let base = Facts {
        project_status: Some(status),
        ..Facts::default()
    };
    if !releases {
        return if status == ProjectStatus::Quarantined {
            Check::Found(base)
        } else {
            Check::NotFound {
                kind: Some(NotFoundKind::NoReleases),
            }
        };
    }
    match json {
        // Listed in the index but without a release the JSON API shows (all quarantined).
        Some((404, _)) => Check::Found(base),
        Some((s, body)) if (200..300).contains(&s) => {
            let Ok(doc) = serde_json::from_slice::<Value>(body) else {
                return Check::Failed {
                    reason: "JSON API: not JSON".into(),
                };
            };
            let Some(info) = doc.get("info") else {
                return Check::Failed {
                    reason: "JSON API: no info".into(),
                };
            };
            Check::Found(Facts {
                latest: version(info.get("version").and_then(Value::as_str)),
                latest_yanked: info.get("yanked").and_then(Value::as_bool).unwrap_or(false),
                ..base
            })
        }
        Some((s, _)) => Check::Failed {
            reason: format!("JSON API: HTTP {s}"),
        },
        None => Check::Failed {
            reason: "JSON API not asked".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index(doc: Value) -> Index {
        read_index(200, doc.to_string().as_bytes())
    }

    #[test]
    fn names_by_pep_508() {
        for ok in ["mcp-server-fetch", "Mcp_Server.Fetch", "a", "a1"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a b", "a/b", "é", "a..b?"] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert_eq!(simple_path("mcp-server-fetch"), "/simple/mcp-server-fetch/");
        assert_eq!(json_path("mcp-server-fetch"), "/pypi/mcp-server-fetch/json");
    }

    #[test]
    fn the_index_api_as_pypi_serves_it() {
        // Warehouse's shape: project-status at the top, versions (PEP 700), files.
        let doc = json!({
            "meta": {"api-version": "1.4", "_last-serial": 123},
            "name": "mcp-server-fetch",
            "project-status": {"status": "archived"},
            "versions": ["0.1.0", "0.2.0"],
            "files": [{"filename": "mcp_server_fetch-0.2.0.tar.gz", "url": "https://f/x", "hashes": {"sha256": "00"},
                       "requires-python": ">=3.10", "size": 10, "upload-time": "2026-01-01T00:00:00.000000Z", "yanked": false}],
        });
        assert_eq!(
            index(doc),
            Index::Project {
                status: ProjectStatus::Archived,
                releases: true
            }
        );
        // The specification's example puts the marker in meta; no marker means active.
        let meta = json!({"meta": {"api-version": "1.4", "project-status": "deprecated"}, "name": "x", "files": [], "versions": ["1.0"]});
        assert_eq!(
            index(meta),
            Index::Project {
                status: ProjectStatus::Deprecated,
                releases: true
            }
        );
        let old = json!({"meta": {"api-version": "1.1"}, "name": "x", "files": [{"filename": "x-1.0.tar.gz"}]});
        assert_eq!(
            index(old),
            Index::Project {
                status: ProjectStatus::Active,
                releases: true
            }
        );
        assert_eq!(read_index(404, b"Not Found"), Index::NoProject);
        assert!(matches!(read_index(503, b""), Index::Failed(_)));
        assert!(matches!(read_index(200, b"<html>"), Index::Failed(_)));
    }

    #[test]
    fn latest_and_yanked_from_the_json_api() {
        let project = Index::Project {
            status: ProjectStatus::Active,
            releases: true,
        };
        assert!(project.wants_json());
        let doc = json!({"info": {"name": "x", "version": "0.2.0", "yanked": true, "yanked_reason": "broken"},
                         "urls": [], "releases": {"0.2.0": []}, "last_serial": 1});
        assert_eq!(
            read(project.clone(), Some((200, doc.to_string().as_bytes()))),
            Check::Found(Facts {
                latest: Some("0.2.0".into()),
                latest_yanked: true,
                project_status: Some(ProjectStatus::Active),
                ..Facts::default()
            })
        );
        assert!(matches!(
            read(project, Some((502, &b""[..]))),
            Check::Failed { .. }
        ));
    }

    #[test]
    fn missing_projects_and_missing_releases() {
        assert_eq!(
            read(Index::NoProject, None),
            Check::NotFound {
                kind: Some(NotFoundKind::NoProject)
            }
        );
        let empty = index(
            json!({"meta": {"api-version": "1.4"}, "name": "x", "files": [], "versions": []}),
        );
        assert!(!empty.wants_json());
        assert_eq!(
            read(empty, None),
            Check::NotFound {
                kind: Some(NotFoundKind::NoReleases)
            }
        );
        // Quarantine hides every file: the project is there, and its status says why.
        let q = index(
            json!({"meta": {"api-version": "1.4"}, "name": "x", "project-status": {"status": "quarantined"},
                             "files": [], "versions": []}),
        );
        assert_eq!(
            read(q, None),
            Check::Found(Facts {
                project_status: Some(ProjectStatus::Quarantined),
                ..Facts::default()
            })
        );
    }
}
