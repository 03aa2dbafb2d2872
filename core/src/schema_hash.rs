//! `schema_hash`: SPEC §3.3, bit-compatible with the Lowdown Scanner (JavaScript).
//!
//! From the `tools` array of a `tools/list` result, every tool yields a schema entry
//! `{name, inputSchema, outputSchema}` and a description entry `{name, title, description}`
//! (absent keys left out, `null` kept; a tool that is not an object counts as `{}`). Each
//! entry is written as canonical JSON ([`canonical_json`]), the texts are sorted in UTF-16
//! order, joined with `,` inside `[` `]`, and hashed with SHA-256 (lowercase hex).
//!
//! Decisions where JavaScript compatibility or the SPEC left a choice:
//! - Input that is not valid UTF-8 is decoded with U+FFFD replacement first, as
//!   `Buffer.toString("utf8")`/`TextDecoder` would before `JSON.parse`.
//! - Lone surrogate escapes (`"\ud800"`) are accepted and written back as `\ud800`, as
//!   `JSON.stringify` does; repeated keys keep the last value, as `JSON.parse` does.
//! - Numbers are JavaScript doubles: `1.0`→`1`, `1e21`→`1e+21`, `-0`→`0`, integers past 2^53
//!   are rounded, and numbers too large for a double (`1e400`) are written `null` exactly
//!   as `JSON.stringify(Infinity)` is.
//! - A result that is not an object, or whose `tools` is missing or not an array, hashes
//!   like an empty list (`tool_count` 0). `has_more` is true when `nextCursor` is present and
//!   not `null`.
//! - Arrays and objects nested deeper than 512 levels give [`SchemaHashError::TooDeep`].

mod canonical;
mod json;
mod utf16;

use json::{JsonError, Value};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use json::MAX_DEPTH;

/// Hashes of one `tools/list` result (SPEC §3.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolHashes {
    /// sha256 of the sorted canonical `{name, inputSchema, outputSchema}` entries.
    pub schema_hash: String,
    /// sha256 of the sorted canonical `{name, title, description}` entries.
    pub desc_hash: String,
    /// Number of elements in the `tools` array.
    pub tool_count: usize,
    /// The result had a `nextCursor` (only the first page was hashed).
    pub has_more: bool,
}

/// Why a `tools/list` result could not be hashed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SchemaHashError {
    /// The input is not JSON.
    #[error("invalid JSON: {message}")]
    InvalidJson {
        /// What the parser reported.
        message: String,
    },
    /// Arrays or objects are nested deeper than [`MAX_DEPTH`] levels.
    #[error("JSON nested deeper than {limit} levels")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
}

impl From<JsonError> for SchemaHashError {
    fn from(e: JsonError) -> Self {
        match e {
            JsonError::Syntax(message) => SchemaHashError::InvalidJson { message },
            JsonError::TooDeep => SchemaHashError::TooDeep { limit: MAX_DEPTH },
        }
    }
}

fn parse_text(text: &[u8]) -> Result<Value, SchemaHashError> {
    let text = String::from_utf8_lossy(text);
    Ok(json::parse(text.as_bytes())?)
}

/// Hashes the JSON text of a `tools/list` `result` object (its `tools` and `nextCursor`).
pub fn hash_tools_result(result_json: &[u8]) -> Result<ToolHashes, SchemaHashError> {
    let result = parse_text(result_json)?;
    let has_more = result.get("nextCursor").is_some_and(|c| *c != Value::Null);
    Ok(ToolHashes {
        has_more,
        ..hash_tools_value(result.get("tools"))
    })
}

/// Hashes the JSON text of a `tools` array (`has_more` is then always false).
pub fn hash_tools(tools_json: &[u8]) -> Result<ToolHashes, SchemaHashError> {
    let tools = parse_text(tools_json)?;
    Ok(hash_tools_value(Some(&tools)))
}

/// Canonical JSON of a JSON text: keys sorted by UTF-16 code units, no whitespace,
/// strings and numbers written exactly as JavaScript's `JSON.stringify` writes them.
pub fn canonical_json(json: &[u8]) -> Result<String, SchemaHashError> {
    let v = parse_text(json)?;
    let mut out = Vec::with_capacity(json.len());
    canonical::write_value(&v, &mut out);
    Ok(canonical::into_string(out))
}

pub(crate) fn hash_tools_value(tools: Option<&Value>) -> ToolHashes {
    let tools: &[Value] = match tools {
        Some(Value::Array(items)) => items,
        _ => &[],
    };
    let mut schema = Vec::with_capacity(tools.len());
    let mut desc = Vec::with_capacity(tools.len());
    for tool in tools {
        // Keys listed in UTF-16 order, so the entries come out canonical directly.
        schema.push(entry(tool, &["inputSchema", "name", "outputSchema"]));
        desc.push(entry(tool, &["description", "name", "title"]));
    }
    ToolHashes {
        schema_hash: hash_sorted(schema),
        desc_hash: hash_sorted(desc),
        tool_count: tools.len(),
        has_more: false,
    }
}

/// The canonical text of `{key: tool[key]}` for the keys present in `tool` (non-objects give `{}`).
fn entry(tool: &Value, keys: &[&str]) -> Vec<u8> {
    let mut out = vec![b'{'];
    if let Value::Object(map) = tool {
        for key in keys {
            if let Some(v) = map.get(&json::Key(key.as_bytes().to_vec())) {
                if out.len() > 1 {
                    out.push(b',');
                }
                canonical::write_string(key.as_bytes(), &mut out);
                out.push(b':');
                canonical::write_value(v, &mut out);
            }
        }
    }
    out.push(b'}');
    out
}

fn hash_sorted(mut entries: Vec<Vec<u8>>) -> String {
    // JavaScript sorts strings by UTF-16 code units, not by UTF-8 bytes.
    entries.sort_unstable_by(|a, b| utf16::cmp_utf16(a, b));
    let mut h = Sha256::new();
    h.update(b"[");
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            h.update(b",");
        }
        h.update(e);
    }
    h.update(b"]");
    hex::encode(h.finalize())
}

/// Escapes `text` as a JSON string literal exactly as `JSON.stringify` does (with quotes).
pub(crate) fn json_string_literal(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + 2);
    canonical::write_string(text.as_bytes(), &mut out);
    canonical::into_string(out)
}

/// Parser access for other core modules that rewrite JSON in place.
pub(crate) mod parser {
    pub(crate) use super::canonical::{into_string, write_string, write_value};
    pub(crate) use super::json::{parse, Parser, Value};
    pub(crate) use super::utf16::cmp_utf16;
}
