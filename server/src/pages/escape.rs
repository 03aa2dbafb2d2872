//! The one escaping function for everything the server writes into HTML or XML: page text,
//! attribute values (always double-quoted), SVG labels and feed elements.

/// `s` made safe as HTML or XML text and as a double-quoted attribute value: `&`, `<`, `>`,
/// `"` and `'` become character references, and characters XML 1.0 cannot carry at all
/// (C0 controls other than tab, line feed and carriage return; U+FFFE, U+FFFF) are
/// dropped, so one hostile string can neither close an element or an attribute nor make a
/// feed unparsable.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// A URL path segment for a target name: everything but unreserved characters and the
/// `:`, `@` and `/` that target names are made of is percent-encoded (so `?`, `#`, `%`
/// and spaces never change what the link points to). The result is then [`escape`]d like
/// any attribute value.
pub fn path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b':' | b'@' | b'/')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_strings_stay_text() {
        let cases = [
            (
                "<script>alert(1)</script>",
                "&lt;script&gt;alert(1)&lt;/script&gt;",
            ),
            (
                "\"><img src=x onerror=alert(1)>",
                "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;",
            ),
            ("' onmouseover='x", "&#39; onmouseover=&#39;x"),
            ("a & b &amp; c", "a &amp; b &amp;amp; c"),
            ("]]><x/><![CDATA[", "]]&gt;&lt;x/&gt;&lt;![CDATA["),
            ("\u{0}\u{1b}[31mred\u{7}\u{FFFE}", "[31mred"),
            ("line\nbreak\ttab", "line\nbreak\ttab"),
            ("npm:@scope/naïve–名前", "npm:@scope/naïve–名前"),
            ("--><!--", "--&gt;&lt;!--"),
        ];
        for (input, expected) in cases {
            assert_eq!(escape(input), expected, "{input:?}");
            let e = escape(input);
            assert!(
                !e.contains('<') && !e.contains('"') && !e.contains('\''),
                "{e}"
            );
        }
    }

    #[test]
    fn path_segments_keep_target_names_readable() {
        assert_eq!(
            path_segment("npm:@modelcontextprotocol/server-everything"),
            "npm:@modelcontextprotocol/server-everything"
        );
        assert_eq!(path_segment("a b?c#d%e\"f<g"), "a%20b%3Fc%23d%25e%22f%3Cg");
        assert_eq!(path_segment("é"), "%C3%A9");
    }
}
