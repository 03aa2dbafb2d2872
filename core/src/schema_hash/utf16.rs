//! JavaScript's string order (UTF-16 code units) over WTF-8 bytes.

use super::json::JStr;
use std::cmp::Ordering;

/// An object key, ordered by UTF-16 code units as JavaScript's `sort` orders strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key(pub(crate) JStr);

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_utf16(&self.0, &other.0)
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Compares two WTF-8 (or UTF-8) strings in UTF-16 code-unit order. Byte order agrees with
/// it except past the BMP, so only the first differing character is decoded.
pub(crate) fn cmp_utf16(a: &[u8], b: &[u8]) -> Ordering {
    let Some(i) = mismatch(a, b) else {
        return a.len().cmp(&b.len());
    };
    // The strings agree before `i`, so the character containing `i` starts at the same place.
    let mut start = i;
    while start > 0 && a[start] & 0xC0 == 0x80 {
        start -= 1;
    }
    // A lone high surrogate can equal the first unit of a pair, so compare on until a unit differs.
    units(&a[start..]).cmp(units(&b[start..]))
}

/// The first index where `a` and `b` differ, comparing 32-byte blocks first (canonical
/// entries often share long prefixes).
fn mismatch(a: &[u8], b: &[u8]) -> Option<usize> {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 32 <= n && a[i..i + 32] == b[i..i + 32] {
        i += 32;
    }
    a[i..n]
        .iter()
        .zip(&b[i..n])
        .position(|(x, y)| x != y)
        .map(|d| i + d)
}

/// The UTF-16 code units of a WTF-8 string.
fn units(s: &[u8]) -> impl Iterator<Item = u16> + '_ {
    let mut i = 0;
    let mut low = None;
    std::iter::from_fn(move || {
        if let Some(unit) = low.take() {
            return Some(unit);
        }
        let lead = *s.get(i)?;
        let byte = |k: usize| u32::from(s.get(i + k).copied().unwrap_or(0x80) & 0x3F);
        let (cp, len) = match lead {
            0..=0x7F => (u32::from(lead), 1),
            0xC0..=0xDF => ((u32::from(lead & 0x1F) << 6) | byte(1), 2),
            0xE0..=0xEF => ((u32::from(lead & 0x0F) << 12) | (byte(1) << 6) | byte(2), 3),
            _ => (
                (u32::from(lead & 0x07) << 18) | (byte(1) << 12) | (byte(2) << 6) | byte(3),
                4,
            ),
        };
        i += len;
        if cp >= 0x10000 {
            let v = cp - 0x10000;
            low = Some(0xDC00 + (v & 0x3FF) as u16);
            Some(0xD800 + (v >> 10) as u16)
        } else {
            Some(cp as u16)
        }
    })
}
