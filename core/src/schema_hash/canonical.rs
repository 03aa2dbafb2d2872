//! Canonical JSON text, byte for byte as the Lowdown Scanner's JavaScript writes it:
//! sorted keys (UTF-16 order), no whitespace, `JSON.stringify` string escapes and
//! `Number.prototype.toString` numbers.

use super::json::Value;

/// Appends the canonical text of `v` to `out`.
pub(crate) fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(*n, out),
        Value::String(s) => write_utf16_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            // BTreeMap<Vec<u16>, _> iterates in UTF-16 code-unit order, JavaScript's sort order.
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_utf16_string(k, out);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

/// A number as `JSON.stringify` writes it: non-finite values become `null`, `-0` becomes `0`,
/// everything else is the shortest round-trip text in JavaScript's notation.
pub(crate) fn write_number(n: f64, out: &mut String) {
    if !n.is_finite() {
        out.push_str("null");
    } else if n == 0.0 {
        out.push('0');
    } else {
        out.push_str(ryu_js::Buffer::new().format_finite(n));
    }
}

/// A UTF-16 string as `JSON.stringify` writes it, lone surrogates escaped as `\udXXX`.
pub(crate) fn write_utf16_string(s: &[u16], out: &mut String) {
    out.push('"');
    let mut i = 0;
    while i < s.len() {
        let unit = s[i];
        i += 1;
        match unit {
            0xD800..=0xDBFF if s.get(i).is_some_and(|u| (0xDC00..=0xDFFF).contains(u)) => {
                let c = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(s[i]) - 0xDC00);
                i += 1;
                out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            0xD800..=0xDFFF => push_u_escape(unit, out),
            _ => push_char(char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER), out),
        }
    }
    out.push('"');
}

/// A Rust string as `JSON.stringify` writes it (a `&str` holds no lone surrogates).
pub(crate) fn write_str(s: &str, out: &mut String) {
    out.push('"');
    let mut run = 0;
    for (i, b) in s.bytes().enumerate() {
        if b < 0x20 || b == b'"' || b == b'\\' {
            out.push_str(&s[run..i]);
            push_char(b as char, out);
            run = i + 1;
        }
    }
    out.push_str(&s[run..]);
    out.push('"');
}

fn push_char(c: char, out: &mut String) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x20 => push_u_escape(c as u16, out),
        c => out.push(c),
    }
}

fn push_u_escape(unit: u16, out: &mut String) {
    out.push_str(&format!("\\u{unit:04x}"));
}
