//! A small strict JSON parser whose strings hold exactly what JavaScript's `JSON.parse` sees.
//!
//! `serde_json` rejects lone surrogate escapes such as `"\ud800"`, which JavaScript accepts
//! and keeps; the hashes must match what JavaScript computes, so strings here are WTF-8:
//! UTF-8 that may also encode lone surrogates (as the 3-byte form of their code point).
//! Surrogate pairs written as two escapes become the one character they stand for, as in
//! JavaScript. Objects are `BTreeMap`s keyed by [`Key`], which orders by UTF-16 code units:
//! iteration order is JavaScript's default `sort` order, and inserting a repeated key keeps
//! the last value, as `JSON.parse` does. Nesting is bounded by [`MAX_DEPTH`], so hostile input cannot overflow
//! the stack; the parser is otherwise linear in the input size.

use std::collections::BTreeMap;

pub(crate) use super::utf16::Key;

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 512;

/// A string as WTF-8 bytes (UTF-8, plus lone surrogates in their 3-byte form).
pub(crate) type JStr = Vec<u8>;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(JStr),
    Array(Vec<Value>),
    Object(BTreeMap<Key, Value>),
}

impl Value {
    /// The member `name` of an object, if this is an object that has it.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.get(&Key(name.as_bytes().to_vec())),
            _ => None,
        }
    }
}

/// Why the text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonError {
    /// Not JSON; the message names the byte offset.
    Syntax(String),
    /// Arrays/objects nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

/// Parses a whole JSON text (surrounding whitespace allowed, nothing else).
pub(crate) fn parse(text: &[u8]) -> Result<Value, JsonError> {
    let mut p = Parser::new(text);
    let v = p.value(0)?;
    p.ws();
    if p.pos != text.len() {
        return Err(p.err("unexpected text after the JSON value"));
    }
    Ok(v)
}

/// A cursor over JSON text, usable step by step (the `append_text_item` rewriter walks
/// a message with it to find byte positions).
pub(crate) struct Parser<'a> {
    /// The whole text.
    pub(crate) bytes: &'a [u8],
    /// Current byte offset.
    pub(crate) pos: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `bytes`.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Parser { bytes, pos: 0 }
    }

    pub(crate) fn err(&self, what: &str) -> JsonError {
        JsonError::Syntax(format!("{what} at byte {}", self.pos))
    }

    /// Skips JSON whitespace (space, tab, LF, CR).
    pub(crate) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next non-whitespace byte, not consumed.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes.get(self.pos).copied()
    }

    /// Consumes `b` (after whitespace) or fails.
    pub(crate) fn expect(&mut self, b: u8) -> Result<(), JsonError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", b as char)))
        }
    }

    /// Parses one value at nesting `depth` (0 for the top level).
    pub(crate) fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
            None => Err(self.err("unexpected end of input")),
        }
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, JsonError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        self.pos += 1;
        let mut map = BTreeMap::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a string key"));
            }
            let key = Key(self.string()?);
            self.expect(b':')?;
            let v = self.value(depth)?;
            map.insert(key, v);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        self.pos += 1;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.err("expected ',' or ']'")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        let b = self.bytes;
        let digits = |p: &mut usize| {
            let s = *p;
            while b.get(*p).is_some_and(u8::is_ascii_digit) {
                *p += 1;
            }
            *p - s
        };
        let mut p = self.pos;
        if b[p] == b'-' {
            p += 1;
        }
        match b.get(p) {
            Some(b'0') => p += 1,
            Some(b'1'..=b'9') => {
                digits(&mut p);
            }
            _ => return Err(self.err("invalid number")),
        }
        if b.get(p) == Some(&b'.') {
            p += 1;
            if digits(&mut p) == 0 {
                self.pos = p;
                return Err(self.err("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = b.get(p) {
            p += 1;
            if let Some(b'+' | b'-') = b.get(p) {
                p += 1;
            }
            if digits(&mut p) == 0 {
                self.pos = p;
                return Err(self.err("invalid number"));
            }
        }
        self.pos = p;
        // The slice is ASCII by construction; Rust's parser rounds correctly, like JavaScript's,
        // and overflows to infinity as `JSON.parse` does.
        let text = std::str::from_utf8(&b[start..p]).map_err(|_| self.err("invalid number"))?;
        text.parse::<f64>()
            .map(Value::Number)
            .map_err(|_| self.err("invalid number"))
    }

    /// The four hex digits of a `\\u` escape at `at`.
    fn hex4(&self, at: usize) -> Result<u16, JsonError> {
        let hex = self
            .bytes
            .get(at..at + 4)
            .ok_or_else(|| self.err("short \\u escape"))?;
        hex.iter().try_fold(0u16, |acc, &h| {
            let d = (h as char)
                .to_digit(16)
                .ok_or_else(|| self.err("invalid \\u escape"))?;
            Ok(acc << 4 | d as u16)
        })
    }

    /// Parses a string literal starting at the current `"`.
    pub(crate) fn string(&mut self) -> Result<JStr, JsonError> {
        self.pos += 1;
        let b = self.bytes;
        let mut out: JStr = Vec::new();
        loop {
            let run = self.pos;
            while let Some(&c) = b.get(self.pos) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.extend_from_slice(&b[run..self.pos]);
            match b.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let unit = match b.get(self.pos) {
                        Some(b'"') => 0x22,
                        Some(b'\\') => 0x5c,
                        Some(b'/') => 0x2f,
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0c,
                        Some(b'n') => 0x0a,
                        Some(b'r') => 0x0d,
                        Some(b't') => 0x09,
                        Some(b'u') => {
                            let unit = self.hex4(self.pos + 1)?;
                            self.pos += 4;
                            // A high surrogate escape followed by a low one is one character.
                            if (0xD800..0xDC00).contains(&unit)
                                && b.get(self.pos + 1..self.pos + 3) == Some(b"\\u")
                            {
                                if let Ok(low @ 0xDC00..=0xDFFF) = self.hex4(self.pos + 3) {
                                    self.pos += 6;
                                    u32::from(unit - 0xD800) << 10
                                        | u32::from(low - 0xDC00)
                                        | 0x10000
                                } else {
                                    u32::from(unit)
                                }
                            } else {
                                u32::from(unit)
                            }
                        }
                        _ => return Err(self.err("invalid escape")),
                    };
                    self.pos += 1;
                    push_wtf8(unit, &mut out);
                }
                Some(_) => return Err(self.err("control character in string")),
                None => return Err(self.err("unterminated string")),
            }
        }
    }
}

/// Appends code point `cp` (a surrogate included) in its WTF-8 form.
fn push_wtf8(cp: u32, out: &mut Vec<u8>) {
    match cp {
        0..=0x7F => out.push(cp as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]),
        0x800..=0xFFFF => {
            out.extend_from_slice(&[
                0xE0 | (cp >> 12) as u8,
                0x80 | ((cp >> 6) & 0x3F) as u8,
                0x80 | (cp & 0x3F) as u8,
            ]);
        }
        _ => out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
    }
}
