//! The detectors behind [`super::redact`]: one pass over the bytes returns the byte spans
//! to mask. Every span starts and ends next to an ASCII byte, so slicing the `&str` there is
//! always on a character boundary.

use super::keys::{sensitive, MAX_KEY};

const ALNUM: u8 = 2;
/// First byte of a prefixed key, a JWT or `Bearer`.
const PREFIX: u8 = 4;
/// `:` or `=`, the separator of a key/value pair.
const SEP: u8 = 8;

const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            t[b] |= ALNUM;
        }
        if matches!(
            c,
            b's' | b'r' | b'g' | b'x' | b'A' | b'e' | b'n' | b'h' | b'B' | b'b'
        ) {
            t[b] |= PREFIX;
        }
        if matches!(c, b':' | b'=') {
            t[b] |= SEP;
        }
        b += 1;
    }
    t
};

/// Shortest hex run that is masked.
const MIN_HEX: usize = 32;

/// Byte spans `(start, end)` of every secret in `b`, unsorted, possibly overlapping.
///
/// The text is walked word by word (a word is a maximal run of ASCII letters and digits):
/// separators are checked for key/value pairs, a word's first byte for a prefixed secret,
/// and only words of 32 bytes or more for hex runs (hex digits are letters and digits, so a
/// hex run never crosses a word). Most bytes cost one table lookup.
pub(super) fn find(b: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    super::pem::blocks(b, &mut spans);
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c = CLASS[b[i] as usize];
        if c & ALNUM == 0 {
            if c & SEP != 0 {
                if let Some(span) = pair_value(b, i) {
                    spans.push(span);
                }
            }
            i += 1;
            continue;
        }
        let word = i;
        if c & PREFIX != 0 {
            if let Some(span) = prefixed(b, i) {
                spans.push(span);
            }
        }
        i += 1;
        while i < n && CLASS[b[i] as usize] & ALNUM != 0 {
            i += 1;
        }
        if i - word >= MIN_HEX {
            hex_runs(&b[..i], word, &mut spans);
        }
    }
    spans
}

/// Every run of [`MIN_HEX`] or more hex digits in `b[from..]`.
fn hex_runs(b: &[u8], from: usize, spans: &mut Vec<(usize, usize)>) {
    let mut i = from;
    while i < b.len() {
        let n = run(b, i, |x| x.is_ascii_hexdigit());
        if n >= MIN_HEX {
            spans.push((i, i + n));
        }
        i += n + 1;
    }
}

/// Length of the run at `from` of bytes accepted by `ok`.
fn run(b: &[u8], from: usize, ok: impl Fn(u8) -> bool) -> usize {
    b.get(from..)
        .map_or(0, |rest| rest.iter().take_while(|&&x| ok(x)).count())
}

fn alnum(x: u8) -> bool {
    x.is_ascii_alphanumeric()
}
fn alnum_dash_under(x: u8) -> bool {
    x.is_ascii_alphanumeric() || x == b'-' || x == b'_'
}
fn alnum_under(x: u8) -> bool {
    x.is_ascii_alphanumeric() || x == b'_'
}
fn upper_digit(x: u8) -> bool {
    x.is_ascii_uppercase() || x.is_ascii_digit()
}
fn alnum_dash(x: u8) -> bool {
    x.is_ascii_alphanumeric() || x == b'-'
}
/// RFC 6750 `b64token` characters.
fn token68(x: u8) -> bool {
    x.is_ascii_alphanumeric() || matches!(x, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

/// A secret whose body, after a fixed `prefix`, is at least `min` bytes accepted by `ok`.
fn body(
    b: &[u8],
    i: usize,
    prefix: &[u8],
    min: usize,
    ok: fn(u8) -> bool,
) -> Option<(usize, usize)> {
    if !b[i..].starts_with(prefix) {
        return None;
    }
    let n = run(b, i + prefix.len(), ok);
    (n >= min).then_some((i, i + prefix.len() + n))
}

/// A prefixed API key, a JWT or a bearer token starting at `i` (a word start).
fn prefixed(b: &[u8], i: usize) -> Option<(usize, usize)> {
    match b[i] {
        b's' => body(b, i, b"sk-", 20, alnum_dash_under)
            .or_else(|| body(b, i, b"sk_live_", 10, alnum))
            .or_else(|| body(b, i, b"sk_test_", 10, alnum)),
        b'r' => body(b, i, b"rk_live_", 10, alnum).or_else(|| body(b, i, b"rk_test_", 10, alnum)),
        b'g' => {
            if b.get(i + 1) == Some(&b'h')
                && matches!(b.get(i + 2), Some(b'p' | b'o' | b'u' | b's' | b'r'))
            {
                if let Some(span) = body(b, i + 3, b"_", 20, alnum) {
                    return Some((i, span.1));
                }
            }
            body(b, i, b"github_pat_", 20, alnum_under)
                .or_else(|| body(b, i, b"glpat-", 20, alnum_dash_under))
        }
        b'x' => {
            let kind = *b.get(i + 3)?;
            if b[i..].starts_with(b"xox") && matches!(kind, b'a' | b'b' | b'p' | b'r' | b's' | b'e')
            {
                return body(b, i + 4, b"-", 10, alnum_dash).map(|s| (i, s.1));
            }
            None
        }
        b'A' => body(b, i, b"AKIA", 16, upper_digit)
            .or_else(|| body(b, i, b"ASIA", 16, upper_digit))
            .or_else(|| body(b, i, b"AIza", 30, alnum_dash_under)),
        b'e' => jwt(b, i),
        b'n' => body(b, i, b"npm_", 30, alnum),
        b'h' => body(b, i, b"hf_", 30, alnum),
        b'B' | b'b' => bearer(b, i),
        _ => None,
    }
}

/// `eyJ<header>.<payload>.<signature>` (the signature may be empty, as with `alg: none`).
fn jwt(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if !b[i..].starts_with(b"eyJ") {
        return None;
    }
    let header = run(b, i, alnum_dash_under);
    let dot1 = i + header;
    if header < 8 || b.get(dot1) != Some(&b'.') {
        return None;
    }
    let payload = run(b, dot1 + 1, alnum_dash_under);
    let dot2 = dot1 + 1 + payload;
    if payload < 4 || b.get(dot2) != Some(&b'.') {
        return None;
    }
    Some((i, dot2 + 1 + run(b, dot2 + 1, alnum_dash_under)))
}

/// The token after `Bearer` and blanks.
fn bearer(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if !b.get(i..i + 6)?.eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let start = i + 6 + run(b, i + 6, |x| x == b' ' || x == b'\t');
    if start == i + 6 {
        return None;
    }
    let n = run(b, start, token68);
    (n > 0).then_some((start, start + n))
}

/// The value after the separator at `sep` when the key before it names a secret
/// ([`super::keys::sensitive`]), or the password of `scheme://user:password@host` when
/// `sep` is the scheme's `:`.
fn pair_value(b: &[u8], sep: usize) -> Option<(usize, usize)> {
    if b[sep] == b':' && b.get(sep + 1..sep + 3) == Some(b"//") {
        return url_password(b, sep + 3);
    }
    let mut j = sep;
    while j > 0 && sep - j < 8 && matches!(b[j - 1], b' ' | b'\t') {
        j -= 1;
    }
    if j > 0 && matches!(b[j - 1], b'"' | b'\'') {
        j -= 1;
        if j > 0 && b[j - 1] == b'\\' {
            j -= 1;
        }
    }
    let key_end = j;
    while j > 0 && key_end - j <= MAX_KEY && (alnum_dash_under(b[j - 1]) || b[j - 1] == b'.') {
        j -= 1;
    }
    let key = &b[j..key_end];
    // `//user:` is the user of URL credentials, handled at the scheme's `:`.
    let in_url = j >= 2 && &b[j - 2..j] == b"//";
    if key.is_empty() || key.len() > MAX_KEY || in_url || !sensitive(key) {
        return None;
    }
    value(b, sep + 1)
}

/// The password of the authority starting at `from` (after `scheme://`): everything
/// between the first `:` of the userinfo and the last `@` before the host, as URL parsers
/// read it (a password may hold `@` and `:`).
fn url_password(b: &[u8], from: usize) -> Option<(usize, usize)> {
    let len = run(b, from, |x| {
        !x.is_ascii_whitespace()
            && !matches!(
                x,
                b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'\\' | b'`'
            )
    });
    let authority = &b[from..from + len];
    let at = authority.iter().rposition(|&x| x == b'@')?;
    let colon = authority[..at].iter().position(|&x| x == b':')?;
    unmasked(b, from + colon + 1, from + at)
}

/// The value starting at `from` (after blanks): quoted, escaped-quoted, an auth scheme and
/// its token, or a bare word.
fn value(b: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut k = from + run(b, from, |x| x == b' ' || x == b'\t');
    match b.get(k)? {
        b'\\' if b.get(k + 1) == Some(&b'"') => {
            let start = k + 2;
            let n = run(b, start, |x| !matches!(x, b'\\' | b'"' | b'\n' | b'\r'));
            unmasked(b, start, start + n)
        }
        &q @ (b'"' | b'\'') => {
            let start = k + 1;
            let mut e = start;
            while e < b.len() && b[e] != q && b[e] != b'\n' && b[e] != b'\r' {
                e += if b[e] == b'\\' { 2 } else { 1 };
            }
            unmasked(b, start, e.min(b.len()))
        }
        b'{' | b'[' => None,
        _ => {
            for scheme in [&b"bearer"[..], b"basic", b"token"] {
                let end = k + scheme.len();
                if b.get(k..end)
                    .is_some_and(|w| w.eq_ignore_ascii_case(scheme))
                    && matches!(b.get(end), Some(b' ' | b'\t'))
                {
                    k = end + run(b, end, |x| x == b' ' || x == b'\t');
                    break;
                }
            }
            if matches!(b.get(k), Some(b'[' | b'{')) {
                return None;
            }
            let n = run(b, k, |x| {
                !x.is_ascii_whitespace()
                    && !matches!(
                        x,
                        b'&' | b','
                            | b';'
                            | b'"'
                            | b'\''
                            | b'<'
                            | b'>'
                            | b')'
                            | b']'
                            | b'}'
                            | b'\\'
                    )
            });
            let word = &b[k..k + n];
            if n == 0 || word == b"null" || word == b"true" || word == b"false" {
                return None;
            }
            Some((k, k + n))
        }
    }
}

/// The span, unless it is empty or already exactly the mask.
fn unmasked(b: &[u8], start: usize, end: usize) -> Option<(usize, usize)> {
    (end > start && &b[start..end] != super::MASK.as_bytes()).then_some((start, end))
}
