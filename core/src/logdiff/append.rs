//! Appending the log block to a `tools/call` result without touching any other byte.

use crate::schema_hash::json_string_literal;
use crate::schema_hash::parser::{Parser, Value};

/// Returns `message` (one JSON-RPC response, without its newline) with
/// `{"type":"text","text":<text>}` appended as the last item of `result.content`, every
/// other byte unchanged (unknown fields, number text, `id`, key order, whitespace).
///
/// `None`, meaning "relay the message as it is and keep the lines pending", when the
/// message is not a JSON object, has no `result` object or an `error`, its `result` has no
/// `content` array (e.g. task results), or the result is interim
/// (`"resultType": "input_required"`). Repeated keys resolve as `JSON.parse` does: the last wins.
pub fn append_text_item(message: &[u8], text: &str) -> Option<Vec<u8>> {
    std::str::from_utf8(message).ok()?;
    let end = content_end(message)?;
    let empty = message[..end]
        .iter()
        .rev()
        .find(|b| !b.is_ascii_whitespace())
        == Some(&b'[');
    let item = format!(
        "{}{{\"type\":\"text\",\"text\":{}}}",
        if empty { "" } else { "," },
        json_string_literal(text)
    );
    let mut out = Vec::with_capacity(message.len() + item.len());
    out.extend_from_slice(&message[..end]);
    out.extend_from_slice(item.as_bytes());
    out.extend_from_slice(&message[end..]);
    Some(out)
}

/// Byte offset of the `]` closing `result.content`, when the message may carry the item.
fn content_end(message: &[u8]) -> Option<usize> {
    let mut p = Parser::new(message);
    let mut content = None;
    let mut has_error = false;
    members(&mut p, |p, key| {
        if key == b"result" {
            content = if p.peek() == Some(b'{') {
                result_content(p)?
            } else {
                skip(p)?
            };
        } else {
            has_error |= key == b"error";
            skip(p)?;
        }
        Some(())
    })?;
    p.ws();
    (p.pos == message.len() && !has_error).then_some(content?)
}

/// Walks the `result` object: the end of its last `content` array, unless it is interim.
fn result_content(p: &mut Parser<'_>) -> Option<Option<usize>> {
    let mut content = None;
    let mut interim = false;
    members(p, |p, key| {
        if key == b"content" {
            let is_array = p.peek() == Some(b'[');
            p.value(1).ok()?;
            content = is_array.then_some(p.pos - 1);
        } else if key == b"resultType" {
            let v = p.value(1).ok()?;
            interim = v == Value::String(b"input_required".to_vec());
        } else {
            skip(p)?;
        }
        Some(())
    })?;
    Some(if interim { None } else { content })
}

fn skip(p: &mut Parser<'_>) -> Option<Option<usize>> {
    p.value(1).ok().map(|_| None)
}

/// Calls `each` with every key of the object at the cursor, the cursor on its value.
fn members(
    p: &mut Parser<'_>,
    mut each: impl FnMut(&mut Parser<'_>, Vec<u8>) -> Option<()>,
) -> Option<()> {
    p.expect(b'{').ok()?;
    if p.peek() == Some(b'}') {
        p.pos += 1;
        return Some(());
    }
    loop {
        if p.peek() != Some(b'"') {
            return None;
        }
        let key = p.string().ok()?;
        p.expect(b':').ok()?;
        each(p, key)?;
        match p.peek()? {
            b',' => p.pos += 1,
            b'}' => {
                p.pos += 1;
                return Some(());
            }
            _ => return None,
        }
    }
}
