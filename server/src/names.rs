//! Small conversions between the core's enums, stored text and lookup keys.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The snake_case name a core enum serialises to (`OutcomeClass::Success` → `success`).
pub fn enum_str<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Parses a stored snake_case name back into a core enum.
pub fn parse_enum<T: DeserializeOwned>(s: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(s.to_owned())).ok()
}

/// The short-name key of a target: its last segment after `:` or `/`, lower-cased.
/// `npm:@modelcontextprotocol/server-github` → `server-github`; `brave-search` → itself.
pub fn name_key(target: &str) -> String {
    target
        .rsplit([':', '/'])
        .next()
        .unwrap_or(target)
        .to_lowercase()
}

/// Escapes `\`, `%` and `_` so a user's text matches itself literally in `LIKE ... ESCAPE '\'`.
pub fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_keys_and_like_escapes() {
        assert_eq!(
            name_key("npm:@modelcontextprotocol/server-github"),
            "server-github"
        );
        assert_eq!(name_key("Brave-Search"), "brave-search");
        assert_eq!(name_key("pypi:mcp-fetch"), "mcp-fetch");
        assert_eq!(like_escape(r"50%_a\b"), r"50\%\_a\\b");
    }
}
