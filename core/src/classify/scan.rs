//! A validating JSON scanner that walks one line without building values.
//!
//! It checks the grammar exactly (a line the peer's `JSON.parse` would reject is rejected
//! here too), but it never copies: strings come back as spans of the input, and values the
//! classifier does not need are skipped. Skipping is iterative, so nesting depth is
//! unlimited, and string bodies are searched 32 bytes a block ([`super::swar`]), which
//! keeps a 10 MB result well above 1 GB/s. Bytes inside strings are not checked for UTF-8 validity:
//! Node peers decode invalid sequences to U+FFFD and carry on, and so does the classifier
//! (see [`super::text`]).

/// The line is not JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Invalid;

/// A JSON string: the bytes between its quotes, and whether they hold escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Str {
    pub start: usize,
    pub end: usize,
    pub escaped: bool,
}

impl Str {
    /// The raw bytes between the quotes.
    pub fn raw<'a>(&self, line: &'a [u8]) -> &'a [u8] {
        &line[self.start..self.end]
    }
}

/// Length of the escape starting with the backslash at `p`, or `Invalid`.
#[inline(always)]
fn escape_len(b: &[u8], p: usize) -> Result<usize, Invalid> {
    match b.get(p + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(2),
        Some(b'u') => match b.get(p + 2..p + 6) {
            Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => Ok(6),
            _ => Err(Invalid),
        },
        _ => Err(Invalid),
    }
}

/// Cursor over one line.
pub(super) struct Scanner<'a> {
    pub b: &'a [u8],
    pub i: usize,
}

use super::swar::{special, special_bits, word};

/// Open containers while skipping: one bit per level (1 = object), spilling past 64 levels.
struct Stack {
    bits: u64,
    depth: usize,
    spill: Vec<u64>,
}

impl Stack {
    fn push(&mut self, object: bool) {
        if self.depth > 0 && self.depth % 64 == 0 {
            self.spill.push(self.bits);
            self.bits = 0;
        }
        self.bits = (self.bits << 1) | u64::from(object);
        self.depth += 1;
    }
    fn top_is_object(&self) -> bool {
        self.bits & 1 == 1
    }
    fn pop(&mut self) {
        self.depth -= 1;
        self.bits >>= 1;
        if self.depth > 0 && self.depth % 64 == 0 {
            self.bits = self.spill.pop().unwrap_or(0);
        }
    }
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `b`.
    pub fn new(b: &'a [u8]) -> Self {
        Scanner { b, i: 0 }
    }

    /// Skips JSON whitespace, except `\n`: a framed line never holds one, and when
    /// scanning straight from a chunk it ends the line.
    #[inline]
    pub fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// The next non-whitespace byte, not consumed.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// Consumes `c` (after whitespace) or fails.
    #[inline]
    pub fn eat(&mut self, c: u8) -> Result<(), Invalid> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(Invalid)
        }
    }

    /// After trailing whitespace: `Some(index of the \n)` ending the line, `None` at the
    /// end of the input, or `Invalid` when anything else follows the value.
    pub fn line_end(&mut self) -> Result<Option<usize>, Invalid> {
        self.ws();
        match self.b.get(self.i) {
            None => Ok(None),
            Some(b'\n') => Ok(Some(self.i)),
            Some(_) => Err(Invalid),
        }
    }

    /// Scans a string starting at its opening quote.
    ///
    /// Works 32 bytes a block: the block's special bytes (`"`, `\\`, controls) are
    /// flagged at once ([`super::swar::special_bits`]) and then visited in order, so a
    /// text dense with escapes costs a few instructions per escape, not a new search.
    pub fn string(&mut self) -> Result<Str, Invalid> {
        self.eat(b'"')?;
        let b = self.b;
        let start = self.i;
        // Most strings (keys, methods, ids) end within one word: one mask settles them.
        if let Some(c) = b.get(start..start + 8) {
            let m = special(word(c));
            let p = start + (m.trailing_zeros() / 8) as usize;
            if m != 0 && b[p] == b'"' {
                return Ok(self.close_string(start, p, false));
            }
        }
        let mut escaped = false;
        // Bytes before `next` are consumed (an escape's tail may be flagged too).
        let mut next = start;
        let mut i = start;
        while let Some(block) = b.get(i..i + 32).and_then(|c| c.try_into().ok()) {
            let mut bits = special_bits(block);
            while bits != 0 {
                let p = i + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if p >= next {
                    match b[p] {
                        b'"' => return Ok(self.close_string(start, p, escaped)),
                        b'\\' => {
                            escaped = true;
                            next = p + escape_len(b, p)?;
                        }
                        0..=0x1f => return Err(Invalid),
                        // The word-at-a-time fallback flagged a byte above a real one.
                        _ => {}
                    }
                }
            }
            i += 32;
        }
        let mut p = next.max(i);
        while let Some(&c) = b.get(p) {
            match c {
                b'"' => return Ok(self.close_string(start, p, escaped)),
                b'\\' => {
                    escaped = true;
                    p += escape_len(b, p)?;
                }
                0..=0x1f => return Err(Invalid),
                _ => p += 1,
            }
        }
        Err(Invalid)
    }

    fn close_string(&mut self, start: usize, end: usize, escaped: bool) -> Str {
        self.i = end + 1;
        Str {
            start,
            end,
            escaped,
        }
    }

    fn digits(&mut self) -> usize {
        let from = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - from
    }

    /// Scans a number, returning its text span.
    pub fn number(&mut self) -> Result<(usize, usize), Invalid> {
        self.ws();
        let start = self.i;
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match self.b.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Invalid),
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(Invalid);
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(Invalid);
            }
        }
        Ok((start, self.i))
    }

    fn literal(&mut self) -> Result<(), Invalid> {
        for word in [&b"true"[..], b"false", b"null"] {
            if self.b[self.i..].starts_with(word) {
                self.i += word.len();
                return Ok(());
            }
        }
        Err(Invalid)
    }

    /// Skips one scalar value; `Ok(false)` when the next value is a container instead.
    fn scalar(&mut self) -> Result<bool, Invalid> {
        match self.peek() {
            Some(b'"') => self.string().map(|_| true),
            Some(b'-' | b'0'..=b'9') => self.number().map(|_| true),
            Some(b't' | b'f' | b'n') => self.literal().map(|()| true),
            Some(b'{' | b'[') => Ok(false),
            _ => Err(Invalid),
        }
    }

    /// Skips any value, returning its span. Iterative, so depth is unlimited.
    pub fn skip_value(&mut self) -> Result<(usize, usize), Invalid> {
        self.ws();
        let start = self.i;
        let mut stack = Stack {
            bits: 0,
            depth: 0,
            spill: Vec::new(),
        };
        loop {
            // Expect a value.
            if !self.scalar()? {
                let object = self.b[self.i] == b'{';
                self.i += 1;
                let close = if object { b'}' } else { b']' };
                if self.peek() == Some(close) {
                    self.i += 1;
                } else {
                    stack.push(object);
                    if object {
                        self.string()?;
                        self.eat(b':')?;
                    }
                    continue;
                }
            }
            // After a value: close containers or move to the next member.
            loop {
                if stack.depth == 0 {
                    return Ok((start, self.i));
                }
                let object = stack.top_is_object();
                match self.peek() {
                    Some(b',') => {
                        self.i += 1;
                        if object {
                            self.string()?;
                            self.eat(b':')?;
                        }
                        break;
                    }
                    Some(b'}') if object => {
                        self.i += 1;
                        stack.pop();
                    }
                    Some(b']') if !object => {
                        self.i += 1;
                        stack.pop();
                    }
                    _ => return Err(Invalid),
                }
            }
        }
    }

    /// Walks an object's members. `member` is called with each key and the scanner at the
    /// value, and must consume that value.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, Str) -> Result<(), Invalid>,
    ) -> Result<(), Invalid> {
        self.eat(b'{')?;
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            member(self, key)?;
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Invalid),
            }
        }
    }

    /// Walks an array's elements. `element` is called with the scanner at each element and
    /// must consume it.
    pub fn array(
        &mut self,
        mut element: impl FnMut(&mut Self) -> Result<(), Invalid>,
    ) -> Result<(), Invalid> {
        self.eat(b'[')?;
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            element(self)?;
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Invalid),
            }
        }
    }

    /// Whether key `k` (as scanned) equals `want`, resolving escapes when present.
    pub fn key_is(&self, k: Str, want: &str) -> bool {
        let raw = k.raw(self.b);
        if !k.escaped {
            return raw == want.as_bytes();
        }
        // An escaped key is at most 6 bytes per character; longer ones cannot match.
        raw.len() <= want.len() * 6 && super::text::units(raw).eq(want.encode_utf16())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(s: &str) -> Result<(usize, usize), Invalid> {
        let mut sc = Scanner::new(s.as_bytes());
        let span = sc.skip_value()?;
        if sc.line_end() == Ok(None) {
            Ok(span)
        } else {
            Err(Invalid)
        }
    }

    #[test]
    fn accepts_valid_json_and_rejects_the_rest() {
        for ok in [
            "{}",
            "[]",
            r#"{"a":[1,-2.5e+3,true,false,null,"x\"\u00e9"]}"#,
            " [ [ ] , { } ] ",
            "0",
            "-0.0e0",
        ] {
            assert!(skip(ok).is_ok(), "{ok}");
        }
        for bad in [
            "{",
            "[1,]",
            r#"{"a"}"#,
            "01",
            "1.",
            "-",
            "tru",
            r#""\x""#,
            "\"a\u{1}\"",
            "[1 2]",
            "{\"a\":1,}",
            "]",
        ] {
            assert!(skip(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn strings_end_and_escape_correctly_at_every_offset() {
        // Block boundaries are every 32 bytes: put each feature at every offset around them.
        let features = [
            r#"\""#,
            r#"\\"#,
            r#"\u00e9"#,
            r#"\ud83d\ude00"#,
            "é",
            r#"\n\t"#,
        ];
        for pad in 0..70 {
            for f in features {
                let body = format!("{}{f}{}", "a".repeat(pad), "b".repeat(pad % 7));
                let text = format!("\"{body}\",1");
                let mut sc = Scanner::new(text.as_bytes());
                let s = sc.string().expect(&text);
                assert_eq!(
                    (s.start, s.end, s.escaped),
                    (1, 1 + body.len(), f.starts_with('\\')),
                    "{text}"
                );
                assert_eq!(sc.i, body.len() + 2);
                for bad in [r#"\x"#, r#"\u12g4"#, "\u{1}", r#"\u12"#] {
                    let text = format!("\"{}{bad}{f}\"", "a".repeat(pad));
                    assert!(Scanner::new(text.as_bytes()).string().is_err(), "{text}");
                }
                let open = format!("\"{body}");
                assert!(Scanner::new(open.as_bytes()).string().is_err(), "{open}");
            }
        }
    }

    #[test]
    fn deep_nesting_is_skipped_without_recursion() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(skip(&deep), Ok((0, 200_000)));
        let unbalanced = format!("{}{}", "[{\"a\":".repeat(1000), "]".repeat(1000));
        assert!(skip(&unbalanced).is_err());
    }
}
