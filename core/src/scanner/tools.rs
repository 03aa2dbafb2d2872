//! What the Scanner keeps of `tools/list` over every page (SPEC §3.3, §8).
//!
//! - `schema_hash` and `desc_hash` come from the first page only, exactly as §3.3 (and the
//!   proxy) compute them.
//! - `tool_count` counts the tools of every page read; `name_hash` is the sha256 of `[` +
//!   every string `name` sorted in UTF-16 order, each written as `JSON.stringify` writes
//!   it, joined by `,` + `]` (tools without a string name are counted but not named).
//! - `tool_names` (public) are the distinct names, sorted, each with control characters
//!   removed and cut to 128 characters (`(empty)` for an empty name), at most
//!   [`MAX_TOOL_NAMES`] of them.
//! - Definitions (private): each tool object's canonical JSON, keyed by its sha256; tools
//!   that are not objects have none. At most [`MAX_DEFINITION_BYTES`] of them per probe, so
//!   a hostile server cannot grow memory or storage past that.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::quality::ToolQuality;
use super::rpc::RpcMessage;
use crate::schema_hash::parser::{cmp_utf16, into_string, write_string, write_value, Value};
use crate::schema_hash::{hash_tools_value, ToolHashes};

/// Most tool names kept per observation.
pub const MAX_TOOL_NAMES: usize = 1_000;
/// Longest tool name kept, in characters.
pub const MAX_TOOL_NAME_CHARS: usize = 128;
/// Most bytes of tool definitions kept per probe.
pub const MAX_DEFINITION_BYTES: usize = 8 << 20;

/// One tool definition, stored privately once per distinct hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Lowercase hex sha256 of `canonical`.
    pub hash: String,
    /// The tool object as canonical JSON (§3.3 rules). Never published.
    pub canonical: String,
}

/// A `tools/list` page's result, as far as the probe needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageFacts {
    /// `tools` was an array.
    pub is_tool_list: bool,
    /// `nextCursor`, when a non-empty string.
    pub next_cursor: Option<String>,
}

/// Everything kept of one remote's tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolsSummary {
    /// Tools over every page read.
    pub tool_count: u64,
    /// The last page read still had a `nextCursor` (page limit, repeated cursor, or a
    /// later page that failed).
    pub tools_has_more: bool,
    /// §3.3 schema hash of the first page.
    pub schema_hash: Option<String>,
    /// §3.3 description hash of the first page.
    pub desc_hash: Option<String>,
    /// sha256 of the sorted names over every page.
    pub name_hash: Option<String>,
    /// Public tool names (see the module docs).
    pub tool_names: Vec<String>,
    /// Private definitions, distinct, sorted by hash.
    pub definitions: Vec<ToolDefinition>,
    /// Conformance counts over every tool of every page (counts only, public).
    #[serde(default)]
    pub quality: ToolQuality,
}

/// Accumulates pages of one remote's `tools/list`.
#[derive(Debug, Default)]
pub struct ToolsAccumulator {
    pages: usize,
    first: Option<ToolHashes>,
    count: u64,
    names: Vec<Vec<u8>>,
    definitions: BTreeMap<String, String>,
    definition_bytes: usize,
    has_more: bool,
    quality: ToolQuality,
}

/// Control characters removed, cut to [`MAX_TOOL_NAME_CHARS`], `(empty)` when nothing is left.
fn public_name(raw: &[u8]) -> String {
    let s: String = String::from_utf8_lossy(raw)
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_TOOL_NAME_CHARS)
        .collect();
    if s.is_empty() {
        "(empty)".to_owned()
    } else {
        s
    }
}

impl ToolsAccumulator {
    /// Nothing read yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pages added so far.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Adds one answer to `tools/list`. A result whose `tools` is not an array adds
    /// nothing and reports `is_tool_list: false`.
    pub fn add_page(&mut self, answer: &RpcMessage) -> PageFacts {
        let result = answer.result();
        let tools = match result.and_then(|r| r.get("tools")) {
            Some(Value::Array(items)) => items,
            _ => {
                return PageFacts {
                    is_tool_list: false,
                    next_cursor: None,
                }
            }
        };
        let next_cursor = match result.and_then(|r| r.get("nextCursor")) {
            Some(Value::String(c)) if !c.is_empty() => Some(into_string(c.clone())),
            _ => None,
        };
        if self.pages == 0 {
            self.first = Some(hash_tools_value(result.and_then(|r| r.get("tools"))));
        }
        self.pages += 1;
        self.count += tools.len() as u64;
        self.has_more = result
            .and_then(|r| r.get("nextCursor"))
            .is_some_and(|c| *c != Value::Null);
        for tool in tools {
            self.quality.add(tool);
            if !matches!(tool, Value::Object(_)) {
                continue;
            }
            if let Some(Value::String(name)) = tool.get("name") {
                self.names.push(name.clone());
            }
            let mut canonical = Vec::new();
            write_value(tool, &mut canonical);
            if self.definition_bytes + canonical.len() <= MAX_DEFINITION_BYTES {
                let hash = hex::encode(Sha256::digest(&canonical));
                if !self.definitions.contains_key(&hash) {
                    self.definition_bytes += canonical.len();
                    self.definitions.insert(hash, into_string(canonical));
                }
            }
        }
        PageFacts {
            is_tool_list: true,
            next_cursor,
        }
    }

    /// Marks that pages remain unread (limit reached, cursor repeated, later page failed).
    pub fn mark_incomplete(&mut self) {
        self.has_more = true;
    }

    /// The summary; `None` when no page was a tool list.
    pub fn finish(mut self) -> Option<ToolsSummary> {
        let first = self.first?;
        self.names.sort_by(|a, b| cmp_utf16(a, b));
        let mut text = vec![b'['];
        for (i, n) in self.names.iter().enumerate() {
            if i > 0 {
                text.push(b',');
            }
            write_string(n, &mut text);
        }
        text.push(b']');
        let public: BTreeSet<String> = self.names.iter().map(|n| public_name(n)).collect();
        Some(ToolsSummary {
            tool_count: self.count,
            tools_has_more: self.has_more,
            schema_hash: Some(first.schema_hash),
            desc_hash: Some(first.desc_hash),
            name_hash: Some(hex::encode(Sha256::digest(&text))),
            tool_names: public.into_iter().take(MAX_TOOL_NAMES).collect(),
            definitions: self
                .definitions
                .into_iter()
                .map(|(hash, canonical)| ToolDefinition { hash, canonical })
                .collect(),
            quality: self.quality,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scanner::rpc::AnswerReader;
    use crate::schema_hash::hash_tools_result;

    fn answer(id: u64, result: &str) -> RpcMessage {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
        let mut r = AnswerReader::new(Some("application/json"), id, 1 << 20);
        r.feed(text.as_bytes());
        r.finish().unwrap()
    }

    #[test]
    fn counts_and_names_cover_every_page_and_hashes_the_first() {
        let p1 = r#"{"tools":[{"name":"b","inputSchema":{"type":"object"}},{"name":"a","description":"x"}],"nextCursor":"2"}"#;
        let p2 = r#"{"tools":[{"name":"c\u0007"},7],"nextCursor":"3"}"#;
        let p3 = r#"{"tools":[{"name":"a","description":"x"}]}"#;
        let mut acc = ToolsAccumulator::new();
        assert_eq!(
            acc.add_page(&answer(2, p1)).next_cursor.as_deref(),
            Some("2")
        );
        acc.add_page(&answer(3, p2));
        let last = acc.add_page(&answer(4, p3));
        assert_eq!((last.is_tool_list, last.next_cursor), (true, None));
        let s = acc.finish().unwrap();
        assert_eq!(s.tool_count, 5);
        assert!(!s.tools_has_more);
        let first = hash_tools_result(p1.as_bytes()).unwrap();
        assert_eq!(s.schema_hash, Some(first.schema_hash));
        assert_eq!(s.desc_hash, Some(first.desc_hash));
        // node -e 'const c=require("crypto");console.log(c.createHash("sha256")
        //   .update("["+["b","a","c\u0007","a"].sort().map(n=>JSON.stringify(n)).join(",")+"]").digest("hex"))'
        assert_eq!(
            s.name_hash.as_deref(),
            Some("36c1471c98cb28a5d8e9e8743d3bdb59a17f5b3f2829740fbbc6d36889b5deb3")
        );
        assert_eq!(s.tool_names, ["a", "b", "c"]);
        assert_eq!(s.definitions.len(), 3, "the repeated tool is stored once");
        assert!(s
            .definitions
            .iter()
            .any(|d| d.canonical == r#"{"description":"x","name":"a"}"#));
    }

    #[test]
    fn a_result_without_a_tools_array_is_not_a_tool_list() {
        let mut acc = ToolsAccumulator::new();
        assert!(!acc.add_page(&answer(2, r#"{"tools":{}}"#)).is_tool_list);
        assert!(acc.finish().is_none());
        let mut acc = ToolsAccumulator::new();
        acc.add_page(&answer(2, r#"{"tools":[{"name":""}],"nextCursor":"x"}"#));
        let s = acc.finish().unwrap();
        assert!(s.tools_has_more);
        assert_eq!(s.tool_names, ["(empty)"]);
    }
}
