//! One file's matching lines: cleaning, matching, redaction, cutting and rendering.

use crate::redact::redact;
use regex_lite::Regex;
use std::collections::VecDeque;

/// Matching lines of one file not yet quoted.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// How many lines matched since the last block (may exceed `lines.len()`).
    pub(super) count: u64,
    /// The last matching lines, redacted and cut.
    lines: VecDeque<String>,
}

impl Pending {
    /// Judges one complete line (without its `\n`) and keeps it when it matches.
    pub(super) fn line(&mut self, raw: &[u8], pattern: &Regex, max_lines: usize, max_chars: usize) {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = clean(&String::from_utf8_lossy(raw));
        if !pattern.is_match(&text) {
            return;
        }
        self.count += 1;
        if self.lines.len() == max_lines {
            self.lines.pop_front();
        }
        self.lines.push_back(cut(&redact(&text), max_chars));
    }

    /// Appends this file's part of the block and clears it.
    pub(super) fn render(&mut self, path: &str, out: &mut String) {
        let shown = self.lines.len() as u64;
        out.push('\n');
        out.push_str(&clean(path));
        if shown < self.count {
            out.push_str(&format!(": {} new line(s), last {shown} shown", self.count));
        } else {
            out.push_str(&format!(": {} new line(s)", self.count));
        }
        for line in self.lines.drain(..) {
            out.push_str("\n  | ");
            out.push_str(&line);
        }
        self.count = 0;
    }
}

/// Removes ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL/ST`, two-byte `ESC x`)
/// and every other control character except tab, so colour codes neither hide words from
/// the pattern nor reach the quoted text.
pub(super) fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    for x in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&x) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(x) = chars.next() {
                        if x == '\u{7}' || (x == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The first `max_chars` characters of `s`, ending in `…` when something was cut.
fn cut(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}
