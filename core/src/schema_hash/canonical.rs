//! Canonical JSON text, byte for byte as the Lowdown Scanner's JavaScript writes it:
//! sorted keys (UTF-16 order), no whitespace, `JSON.stringify` string escapes and
//! `Number.prototype.toString` numbers. Output is UTF-8 bytes.

use super::json::Value;

/// Appends the canonical text of `v` to `out`.
pub(crate) fn write_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(*n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            // `Key` orders by UTF-16 code units, JavaScript's sort order.
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(&k.0, out);
                out.push(b':');
                write_value(item, out);
            }
            out.push(b'}');
        }
    }
}

/// A number as `JSON.stringify` writes it: non-finite values become `null`, `-0` becomes `0`,
/// everything else is the shortest round-trip text in JavaScript's notation.
pub(crate) fn write_number(n: f64, out: &mut Vec<u8>) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
    } else if n == 0.0 {
        out.push(b'0');
    } else {
        out.extend_from_slice(ryu_js::Buffer::new().format_finite(n).as_bytes());
    }
}

/// A WTF-8 string as `JSON.stringify` writes it: `"`, `\` and control characters escaped,
/// lone surrogates (the bytes `ED A0..BF xx`) escaped as `\udXXX`, everything else as is.
pub(crate) fn write_string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c >= 0x20 && c != b'"' && c != b'\\' && c != 0xED {
            i += 1;
            continue;
        }
        if c == 0xED && s.get(i + 1).is_none_or(|&x| x < 0xA0) {
            i += 1;
            continue;
        }
        out.extend_from_slice(&s[run..i]);
        if c == 0xED {
            let cp = 0xD000
                | (u16::from(s[i + 1] & 0x3F) << 6)
                | u16::from(s.get(i + 2).copied().unwrap_or(0x80) & 0x3F);
            push_u_escape(cp, out);
            i += 3;
        } else {
            match c {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                _ => push_u_escape(u16::from(c), out),
            }
            i += 1;
        }
        run = i;
    }
    out.extend_from_slice(&s[run.min(s.len())..]);
    out.push(b'"');
}

fn push_u_escape(unit: u16, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[usize::from((unit >> shift) & 0xF)]);
    }
}

/// Canonical bytes as a `String`. They are UTF-8 whenever the parsed text was (lone
/// surrogates are escaped); anything else is replaced, never a panic.
pub(crate) fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
