//! Reading the MCP Registry (SPEC §8): the v0.1 page shape, the read's loop guards, which
//! entries are kept, which remotes are probeable, and what changed between two reads.
//!
//! Decisions:
//! - One odd entry never fails a page: an entry without a usable name (missing, over 200
//!   characters, or with whitespace or control characters) is counted and skipped.
//! - Only entries marked `isLatest` are recorded (any status); of those, the ones with
//!   `status == "active"` are *kept*: cohort candidates, probed when they are members.
//! - The first occurrence of a name wins; later ones are counted as entries only.
//! - A page carrying a `nextCursor` that adds no new `name@version`, a cursor seen before,
//!   or more than [`MAX_REGISTRY_PAGES`] pages stop the read with an error: an incomplete
//!   read must never make anyone `not_listed`.
//! - The declared version is published under the same rule as an observed server version
//!   (SPEC §3.2), so the two compare like for like.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::record::build::sanitize_server_version;
use crate::telemetry::host_from_url;

/// The official MCP Registry.
pub const DEFAULT_REGISTRY_URL: &str = "https://registry.modelcontextprotocol.io";
/// Path of the server list under the Registry URL.
pub const SERVERS_PATH: &str = "/v0.1/servers";
/// Entries asked for per page.
pub const PAGE_LIMIT: u32 = 100;
/// Most pages one read follows.
pub const MAX_REGISTRY_PAGES: usize = 500;
/// Milliseconds one page request may take.
pub const REGISTRY_TIMEOUT_MS: u64 = 30_000;
/// Waits before the second and third attempt at a page (network errors, 5xx, 429).
pub const RETRY_BACKOFF_MS: [u64; 2] = [1_000, 2_000];
/// Longest Registry name accepted (a target id is `mcp:` + name, at most 256 characters).
pub const MAX_NAME: usize = 200;
/// The `_meta` key of the official Registry's own fields.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// Whether a page request answered with `status` is tried again (5xx and 429).
pub fn is_retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// A remote as declared: transport type and URL (possibly templated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remote {
    /// `streamable-http`, `sse`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// The URL as declared.
    pub url: String,
}

/// A package as declared (room for the packages block).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// `npm`, `pypi`, `oci`, ...
    pub registry_type: String,
    /// The package name.
    pub identifier: String,
    /// The declared version, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// One Registry entry, reduced to what the Scanner records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The Registry name, e.g. `io.github.user/server` (the target is `mcp:` + name).
    pub name: String,
    /// The declared version, published only under the §3.2 version rule.
    pub version: Option<String>,
    /// `active`, `deprecated`, `deleted`, ... (`unknown` when absent).
    pub status: String,
    /// The official `isLatest` flag.
    pub is_latest: bool,
    /// Every declared remote.
    pub remotes: Vec<Remote>,
    /// Every declared package.
    pub packages: Vec<Package>,
    /// Official `publishedAt`.
    pub published_at: Option<String>,
    /// Official `updatedAt`.
    pub updated_at: Option<String>,
    /// The entry's `server` object (its server.json) exactly as the Registry served it,
    /// compact JSON, so a Registry-format view can serve it back unchanged.
    #[serde(default)]
    pub server_json: String,
    /// The entry's `_meta["io.modelcontextprotocol.registry/official"]` as served, compact
    /// JSON (`{}` when absent).
    #[serde(default)]
    pub official_json: String,
}

impl Entry {
    /// The target id, `mcp:` + name.
    pub fn target_id(&self) -> String {
        format!("mcp:{}", self.name)
    }

    /// Active and latest: a cohort candidate, probed when a member.
    pub fn is_kept(&self) -> bool {
        self.is_latest && self.status == "active"
    }

    /// The remotes the Scanner may probe: `streamable-http`, no `{` in the URL (templated
    /// URLs need values only a user has), each URL once, in declared order.
    pub fn probeable_remotes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.remotes {
            if r.kind == "streamable-http" && !r.url.contains('{') && !out.contains(&r.url) {
                out.push(r.url.clone());
            }
        }
        out
    }

    /// Hosts of every declared remote (any type), sorted, each once; templated or
    /// unreadable URLs have none.
    pub fn remote_hosts(&self) -> Vec<String> {
        let hosts: BTreeSet<String> = self
            .remotes
            .iter()
            .filter(|r| !r.url.contains('{'))
            .filter_map(|r| host_from_url(&r.url))
            .collect();
        hosts.into_iter().collect()
    }

    /// What the `registry` block compares from one read to the next.
    pub fn declaration(&self) -> Declaration {
        Declaration {
            version: self.version.clone(),
            status: self.status.clone(),
            remote_hosts: self.remote_hosts(),
            listed: true,
        }
    }
}

/// One parsed page.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// Entries with a usable name, in page order.
    pub entries: Vec<Entry>,
    /// Server items on the page, usable or not.
    pub servers: usize,
    /// `metadata.nextCursor`, when present and a non-empty string.
    pub next_cursor: Option<String>,
}

/// Why a Registry read stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RegistryError {
    /// A page is not the v0.1 shape.
    #[error("registry page {page}: {message}")]
    InvalidPage {
        /// 1-based page number.
        page: usize,
        /// What is wrong.
        message: String,
    },
    /// A page with a next cursor added no new `name@version`.
    #[error("registry page {page} adds no new entry; stopping (the Registry is looping)")]
    NoProgress {
        /// 1-based page number.
        page: usize,
    },
    /// A cursor came back a second time.
    #[error("registry page {page} repeats a cursor; stopping (the Registry is looping)")]
    RepeatedCursor {
        /// 1-based page number.
        page: usize,
    },
    /// More than [`MAX_REGISTRY_PAGES`] pages.
    #[error("the Registry has more than {limit} pages; stopping")]
    TooManyPages {
        /// The page limit.
        limit: usize,
    },
    /// A page could not be fetched after every attempt (set by the host).
    #[error("registry page {page}: {message}")]
    Fetch {
        /// 1-based page number.
        page: usize,
        /// What failed, without any response body.
        message: String,
    },
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_owned)
}

fn usable_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME
        && !name.chars().any(|c| c.is_control() || c.is_whitespace())
}

fn parse_entry(item: &Value) -> Option<Entry> {
    let server = item.get("server")?;
    let name = server.get("name")?.as_str()?;
    if !usable_name(name) {
        return None;
    }
    let official = item.get("_meta").and_then(|m| m.get(OFFICIAL_META));
    let remotes = server
        .get("remotes")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|r| {
                    Some(Remote {
                        kind: r.get("type")?.as_str()?.to_owned(),
                        url: r.get("url")?.as_str()?.to_owned(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let packages = server
        .get("packages")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|p| {
                    Some(Package {
                        registry_type: p.get("registryType")?.as_str()?.to_owned(),
                        identifier: p.get("identifier")?.as_str()?.to_owned(),
                        version: text(p.get("version")),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Entry {
        name: name.to_owned(),
        version: server
            .get("version")
            .and_then(Value::as_str)
            .and_then(sanitize_server_version),
        status: text(official.and_then(|o| o.get("status"))).unwrap_or_else(|| "unknown".into()),
        is_latest: official
            .and_then(|o| o.get("isLatest"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        remotes,
        packages,
        published_at: text(official.and_then(|o| o.get("publishedAt"))),
        updated_at: text(official.and_then(|o| o.get("updatedAt"))),
        server_json: server.to_string(),
        official_json: official.map_or_else(|| "{}".to_owned(), Value::to_string),
    })
}

/// Parses page number `page` (1-based, for messages) of `GET /v0.1/servers`.
pub fn parse_page(json: &[u8], page: usize) -> Result<Page, RegistryError> {
    let invalid = |message: &str| RegistryError::InvalidPage {
        page,
        message: message.to_owned(),
    };
    let v: Value = serde_json::from_slice(json).map_err(|_| invalid("not JSON"))?;
    let servers = v
        .get("servers")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("no `servers` array"))?;
    let next_cursor = v
        .get("metadata")
        .and_then(|m| m.get("nextCursor"))
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    Ok(Page {
        entries: servers.iter().filter_map(parse_entry).collect(),
        servers: servers.len(),
        next_cursor,
    })
}

/// Counts of one read, for the run summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadCounts {
    /// Pages read.
    pub pages: usize,
    /// Server items on every page (usable or not, latest or not).
    pub entries: usize,
    /// Distinct names that are active and latest.
    pub active_latest: usize,
    /// Of those, the ones with at least one probeable remote.
    pub probeable: usize,
}

/// A read in progress: feed it pages until [`RegistryRead::add_page`] returns no cursor.
#[derive(Debug, Default)]
pub struct RegistryRead {
    counts: ReadCounts,
    cursors: BTreeSet<String>,
    keys: BTreeSet<String>,
    names: BTreeSet<String>,
    entries: Vec<Entry>,
}

impl RegistryRead {
    /// A read that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of pages added so far.
    pub fn pages(&self) -> usize {
        self.counts.pages
    }

    /// Adds the next page; returns the cursor of the page after it, or `None` when the
    /// read is complete.
    pub fn add_page(&mut self, page: Page) -> Result<Option<String>, RegistryError> {
        self.counts.pages += 1;
        let n = self.counts.pages;
        if n > MAX_REGISTRY_PAGES {
            return Err(RegistryError::TooManyPages {
                limit: MAX_REGISTRY_PAGES,
            });
        }
        self.counts.entries += page.servers;
        let mut added = 0;
        for e in page.entries {
            if self
                .keys
                .insert(format!("{}@{}", e.name, e.version.as_deref().unwrap_or("")))
            {
                added += 1;
            }
            if e.is_latest && self.names.insert(e.name.clone()) {
                if e.is_kept() {
                    self.counts.active_latest += 1;
                    if !e.probeable_remotes().is_empty() {
                        self.counts.probeable += 1;
                    }
                }
                self.entries.push(e);
            }
        }
        let Some(cursor) = page.next_cursor else {
            return Ok(None);
        };
        if added == 0 {
            return Err(RegistryError::NoProgress { page: n });
        }
        if !self.cursors.insert(cursor.clone()) {
            return Err(RegistryError::RepeatedCursor { page: n });
        }
        Ok(Some(cursor))
    }

    /// The finished read: every latest entry (first occurrence per name) and the counts.
    pub fn finish(self) -> (Vec<Entry>, ReadCounts) {
        (self.entries, self.counts)
    }
}

/// What the `registry` block tracks of an entry from one read to the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declaration {
    /// Declared version (§3.2 rule).
    pub version: Option<String>,
    /// Registry status.
    pub status: String,
    /// Hosts of the declared remotes.
    pub remote_hosts: Vec<String>,
    /// In the latest successful read.
    pub listed: bool,
}

/// One changed field between two reads: `{day, field, from, to}` in the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// `version`, `status`, `remote_hosts` or `listed`.
    pub field: String,
    /// The value before, as JSON.
    pub from: Value,
    /// The value after, as JSON.
    pub to: Value,
}

/// The fields that differ from `old` to `new`, in a fixed order.
pub fn changes(old: &Declaration, new: &Declaration) -> Vec<Change> {
    let mut out = Vec::new();
    let mut diff = |field: &str, from: Value, to: Value| {
        if from != to {
            out.push(Change {
                field: field.to_owned(),
                from,
                to,
            });
        }
    };
    diff("listed", old.listed.into(), new.listed.into());
    if new.listed {
        diff(
            "version",
            old.version.clone().into(),
            new.version.clone().into(),
        );
        diff(
            "status",
            old.status.clone().into(),
            new.status.clone().into(),
        );
        diff(
            "remote_hosts",
            old.remote_hosts.clone().into(),
            new.remote_hosts.clone().into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(name: &str, version: &str, status: &str, latest: bool, remotes: Value) -> Value {
        json!({"server": {"name": name, "version": version, "remotes": remotes,
                "packages": [{"registryType": "npm", "identifier": "@a/b", "version": "1.0.0"}]},
               "_meta": {OFFICIAL_META: {"status": status, "isLatest": latest,
                "publishedAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-02T00:00:00Z"}}})
    }

    fn page(items: Vec<Value>, cursor: Option<&str>) -> Page {
        let body = json!({"servers": items, "metadata": {"nextCursor": cursor, "count": 1}});
        parse_page(body.to_string().as_bytes(), 1).unwrap()
    }

    #[test]
    fn a_page_keeps_active_latest_entries_and_probeable_remotes() {
        let remotes = json!([
            {"type": "streamable-http", "url": "https://a.example.com/mcp"},
            {"type": "streamable-http", "url": "https://a.example.com/mcp"},
            {"type": "streamable-http", "url": "https://{tenant}.example.com/mcp"},
            {"type": "sse", "url": "https://b.example.com/sse"}
        ]);
        let p = page(
            vec![
                item("io.a/one", "1.0.0", "active", true, remotes),
                item("io.a/two", "2.0.0", "deprecated", true, json!([])),
                item("io.a/three", "0.9.0", "active", false, json!([])),
                json!({"server": {"name": "bad name"}}),
                json!(7),
            ],
            None,
        );
        assert_eq!(p.servers, 5);
        assert_eq!(p.entries.len(), 3);
        let one = &p.entries[0];
        assert!(one.is_kept());
        assert_eq!(one.probeable_remotes(), vec!["https://a.example.com/mcp"]);
        assert_eq!(one.remote_hosts(), vec!["a.example.com", "b.example.com"]);
        assert_eq!(one.packages[0].identifier, "@a/b");
        let as_served = item("io.a/one", "1.0.0", "active", true, Value::Null);
        let server: Value = serde_json::from_str(&one.server_json).unwrap();
        assert_eq!(
            server["packages"], as_served["server"]["packages"],
            "server.json kept whole"
        );
        assert_eq!(server["remotes"].as_array().map(Vec::len), Some(4));
        let official: Value = serde_json::from_str(&one.official_json).unwrap();
        assert_eq!(official, as_served["_meta"][OFFICIAL_META]);
        assert!(!p.entries[1].is_kept());
        assert!(!p.entries[2].is_kept());
        let mut read = RegistryRead::new();
        assert_eq!(read.add_page(p).unwrap(), None);
        let (entries, counts) = read.finish();
        assert_eq!(entries.len(), 2, "non-latest entries are not recorded");
        assert_eq!(
            counts,
            ReadCounts {
                pages: 1,
                entries: 5,
                active_latest: 1,
                probeable: 1
            }
        );
    }

    #[test]
    fn loops_and_bad_pages_stop_the_read() {
        let mut read = RegistryRead::new();
        let a = item("io.a/one", "1", "active", true, json!([]));
        assert_eq!(
            read.add_page(page(vec![a.clone()], Some("c1"))).unwrap(),
            Some("c1".into())
        );
        assert_eq!(
            read.add_page(page(vec![a.clone()], Some("c2"))),
            Err(RegistryError::NoProgress { page: 2 })
        );
        let mut read = RegistryRead::new();
        read.add_page(page(vec![a], Some("c1"))).unwrap();
        let b = item("io.a/two", "1", "active", true, json!([]));
        assert_eq!(
            read.add_page(page(vec![b], Some("c1"))),
            Err(RegistryError::RepeatedCursor { page: 2 })
        );
        assert!(matches!(
            parse_page(b"<html>", 3),
            Err(RegistryError::InvalidPage { page: 3, .. })
        ));
        assert!(parse_page(b"{\"servers\": {}}", 1).is_err());
        let mut read = RegistryRead::new();
        for i in 0..MAX_REGISTRY_PAGES {
            let e = item(&format!("io.a/n{i}"), "1", "active", true, json!([]));
            read.add_page(page(vec![e], Some(&format!("c{i}"))))
                .unwrap();
        }
        let e = item("io.a/last", "1", "active", true, json!([]));
        assert_eq!(
            read.add_page(page(vec![e], None)),
            Err(RegistryError::TooManyPages { limit: 500 })
        );
    }

    #[test]
    fn declaration_changes_name_each_field() {
        let old = Declaration {
            version: Some("1.0.0".into()),
            status: "active".into(),
            remote_hosts: vec!["a.example.com".into()],
            listed: true,
        };
        assert!(changes(&old, &old).is_empty());
        let new = Declaration {
            version: Some("1.1.0".into()),
            status: "deprecated".into(),
            ..old.clone()
        };
        let c = changes(&old, &new);
        assert_eq!(
            c.iter().map(|c| c.field.as_str()).collect::<Vec<_>>(),
            ["version", "status"]
        );
        assert_eq!(c[0].from, json!("1.0.0"));
        let gone = Declaration {
            listed: false,
            ..old.clone()
        };
        assert_eq!(changes(&old, &gone).len(), 1, "only `listed` when it left");
        assert!(is_retryable_status(503) && is_retryable_status(429) && !is_retryable_status(404));
    }
}
