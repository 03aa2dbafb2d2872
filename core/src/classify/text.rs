//! Decoding JSON string bodies the way a JavaScript peer sees them.
//!
//! MCP peers are mostly Node processes: they decode stdin with a lossy UTF-8 decoder (an
//! invalid sequence becomes U+FFFD) and then `JSON.parse` the line, so a string is a list
//! of UTF-16 code units in which lone surrogates may appear. The classifier compares ids
//! and method names as such unit lists, and turns values it reports (method, tool name,
//! server version) into Rust strings with lone surrogates replaced by U+FFFD.

use std::borrow::Cow;
use std::str::Chars;

/// UTF-16 code units of a raw JSON string body (the bytes between the quotes), escapes
/// resolved. Stops early at a truncated or malformed escape (the scanner has already
/// rejected those in whole lines; this only happens on a deliberately cut prefix).
pub(super) fn units(raw: &[u8]) -> Units<'_> {
    Units {
        text: String::from_utf8_lossy(raw),
        pos: 0,
        low: None,
    }
}

/// Iterator behind [`units`].
pub(super) struct Units<'a> {
    text: Cow<'a, str>,
    pos: usize,
    low: Option<u16>,
}

fn hex4(chars: &mut Chars<'_>) -> Option<u16> {
    let mut v = 0u16;
    for _ in 0..4 {
        v = v * 16 + chars.next()?.to_digit(16)? as u16;
    }
    Some(v)
}

impl Iterator for Units<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        if let Some(low) = self.low.take() {
            return Some(low);
        }
        let mut chars = self.text[self.pos..].chars();
        let c = chars.next()?;
        let unit = if c == '\\' {
            match chars.next()? {
                'b' => 0x08,
                'f' => 0x0c,
                'n' => 0x0a,
                'r' => 0x0d,
                't' => 0x09,
                'u' => hex4(&mut chars)?,
                other => other as u16, // `"`, `\`, `/`
            }
        } else {
            let mut buf = [0u16; 2];
            let enc = c.encode_utf16(&mut buf);
            if enc.len() == 2 {
                self.low = Some(enc[1]);
            }
            enc[0]
        };
        self.pos = self.text.len() - chars.as_str().len();
        Some(unit)
    }
}

/// A raw JSON string body as a Rust string (escapes resolved, invalid UTF-8 and lone
/// surrogates replaced by U+FFFD).
pub(super) fn string(raw: &[u8], escaped: bool) -> String {
    if escaped {
        String::from_utf16_lossy(&units(raw).collect::<Vec<u16>>())
    } else {
        String::from_utf8_lossy(raw).into_owned()
    }
}

/// Whether the decoded string starts with `prefix`, decoding only what it needs.
pub(super) fn starts_with(raw: &[u8], prefix: &str) -> bool {
    // Each character of the prefix takes at most 6 raw bytes (`\uXXXX`), plus one more
    // character to look past it.
    let head = &raw[..raw.len().min(prefix.len() * 6 + 6)];
    let mut it = units(head);
    prefix.encode_utf16().all(|want| it.next() == Some(want))
}

/// The decoded unit right after a prefix of `skip` units, if any.
pub(super) fn unit_at(raw: &[u8], skip: usize) -> Option<u16> {
    let head = &raw[..raw.len().min(skip * 6 + 6)];
    units(head).nth(skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_escapes_and_keeps_lone_surrogates_as_units() {
        let u: Vec<u16> = units(br#"a\n\u00e9\ud83d\ude00\ud800"#).collect();
        assert_eq!(u, vec![0x61, 0x0a, 0xe9, 0xd83d, 0xde00, 0xd800]);
        assert_eq!(
            string(br#"a\u00e9\ud83d\ude00\ud800"#, true),
            "aé😀\u{fffd}"
        );
        assert_eq!(string(b"a\xffb", false), "a\u{fffd}b");
        assert!(starts_with(
            br#"\u004dCP error -32602: x"#,
            "MCP error -32602"
        ));
        assert!(!starts_with(b"MCP err", "MCP error -32602"));
        assert_eq!(unit_at(b"MCP error -32602: bad", 16), Some(u16::from(b':')));
    }
}
