//! What the probe notes for conformance scoring (SPEC §11): presence flags and counts,
//! never the text they were counted from, so a probe result may travel (to a provider's
//! submission, to a Python host) without carrying a tool definition.
//!
//! Counting rules, shared by every host through this module:
//! - *Characters* are Unicode code points (a lone surrogate counts as one, as in
//!   JavaScript's `[...s].length`).
//! - *Trimmed* means ASCII whitespace (space, tab, LF, CR, form feed) removed at both ends.
//! - A tool is *documented* when its `description` is a string of at least
//!   [`MIN_DESCRIPTION_CHARS`] characters, trimmed.
//! - A tool *has a schema* when its `inputSchema` is a JSON object.
//! - Its *properties* are the members of `inputSchema.properties` (an object; top level
//!   only); a property is *described* when it is an object whose `description` is a
//!   non-empty string, trimmed.
//! - A tool *name is long* when it is a string of more than [`MAX_TOOL_NAME_CHARS`]
//!   characters.
//! - Entries of `tools` that are not objects count as tools with none of the above.

use serde::{Deserialize, Serialize};

use crate::schema_hash::parser::Value;

/// Shortest description that counts as documentation, in characters after trimming.
pub const MIN_DESCRIPTION_CHARS: usize = 25;
/// Longest tool name that is not a finding, in characters.
pub const MAX_TOOL_NAME_CHARS: usize = 100;

/// What `initialize` (or `server/discover`) said about the server itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerFacts {
    /// `instructions` is a non-empty string (trimmed).
    pub instructions: bool,
    /// `serverInfo.name` is a non-empty string (trimmed).
    pub name: bool,
    /// `serverInfo.version` is a non-empty string (trimmed), whatever its form.
    pub version: bool,
}

/// Counts over every tool of every `tools/list` page read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolQuality {
    /// Entries of every `tools` array.
    pub tools: u64,
    /// Tools whose description has at least [`MIN_DESCRIPTION_CHARS`] characters.
    pub documented: u64,
    /// Tools whose `inputSchema` is an object.
    pub with_schema: u64,
    /// Top-level properties of every input schema.
    pub properties: u64,
    /// Of those, properties with a non-empty description.
    pub described_properties: u64,
    /// Tools whose name has more than [`MAX_TOOL_NAME_CHARS`] characters.
    pub long_names: u64,
}

fn trimmed(s: &[u8]) -> &[u8] {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c);
    let start = s.iter().position(|b| !ws(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
    &s[start..end]
}

/// Code points of WTF-8 text: every byte that does not continue a sequence starts one.
fn chars(s: &[u8]) -> usize {
    s.iter().filter(|b| (**b & 0xC0) != 0x80).count()
}

fn text_chars(v: Option<&Value>) -> Option<usize> {
    match v? {
        Value::String(s) => Some(chars(trimmed(s))),
        _ => None,
    }
}

impl ServerFacts {
    /// The facts of an `initialize` result; `info` is its server description
    /// (`serverInfo`, or the `_meta` entry `server/discover` uses).
    pub(crate) fn of(result: &Value, info: Option<&Value>) -> ServerFacts {
        let present = |v: Option<&Value>| text_chars(v).is_some_and(|n| n > 0);
        ServerFacts {
            instructions: present(result.get("instructions")),
            name: present(info.and_then(|i| i.get("name"))),
            version: present(info.and_then(|i| i.get("version"))),
        }
    }
}

impl ToolQuality {
    /// Counts one entry of a `tools` array.
    pub(crate) fn add(&mut self, tool: &Value) {
        self.tools += 1;
        if !matches!(tool, Value::Object(_)) {
            return;
        }
        if text_chars(tool.get("description")).is_some_and(|n| n >= MIN_DESCRIPTION_CHARS) {
            self.documented += 1;
        }
        if let Some(Value::String(name)) = tool.get("name") {
            if chars(name) > MAX_TOOL_NAME_CHARS {
                self.long_names += 1;
            }
        }
        let Some(schema @ Value::Object(_)) = tool.get("inputSchema") else {
            return;
        };
        self.with_schema += 1;
        if let Some(Value::Object(props)) = schema.get("properties") {
            for p in props.values() {
                self.properties += 1;
                if text_chars(p.get("description")).is_some_and(|n| n > 0) {
                    self.described_properties += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema_hash::parser::parse;

    fn quality(tools: &str) -> ToolQuality {
        let mut q = ToolQuality::default();
        if let Value::Array(items) = parse(tools.as_bytes()).unwrap() {
            items.iter().for_each(|t| q.add(t));
        }
        q
    }

    #[test]
    fn descriptions_count_trimmed_code_points() {
        let exactly_25 = format!(r#"[{{"description":"  {}\n"}}]"#, "é".repeat(25));
        assert_eq!(quality(&exactly_25).documented, 1);
        let short = format!(r#"[{{"description":"{}"}}]"#, "a".repeat(24));
        assert_eq!(quality(&short).documented, 0);
        // 24 characters plus a lone surrogate: 25, as JavaScript counts.
        let lone = format!(r#"[{{"description":"{}\ud800"}}]"#, "a".repeat(24));
        assert_eq!(quality(&lone).documented, 1);
    }

    #[test]
    fn schemas_and_properties_are_counted_at_the_top_level() {
        let q = quality(
            r#"[{"name":"a","inputSchema":{"type":"object","properties":{
                "x":{"type":"string","description":"what x is"},
                "y":{"type":"object","properties":{"z":{"description":"nested"}}},
                "w":{"description":"   "}}}},
              {"name":"b","inputSchema":"not a schema"},
              7]"#,
        );
        assert_eq!(
            q,
            ToolQuality {
                tools: 3,
                documented: 0,
                with_schema: 1,
                properties: 3,
                described_properties: 1,
                long_names: 0,
            }
        );
    }

    #[test]
    fn long_names_and_server_facts() {
        let long = format!(
            r#"[{{"name":"{}"}},{{"name":"{}"}}]"#,
            "n".repeat(101),
            "n".repeat(100)
        );
        assert_eq!(quality(&long).long_names, 1);
        let init =
            parse(br#"{"instructions":" use x ","serverInfo":{"name":"s","version":""}}"#).unwrap();
        assert_eq!(
            ServerFacts::of(&init, init.get("serverInfo")),
            ServerFacts {
                instructions: true,
                name: true,
                version: false
            }
        );
    }
}
