//! Host extraction from a URL, the one piece of a request URL that may leave the machine.
//!
//! Follows what a WHATWG URL parser (`new URL()`) does to the authority, so a host seen by
//! the Python and WASM hosts is judged exactly as a browser would resolve it: leading and
//! trailing spaces/controls trimmed, tabs and newlines removed, `\` as `/` and any number
//! of slashes after `http:`-like schemes, userinfo up to the last `@` dropped, port
//! dropped, percent-escapes in the host decoded.

use super::host::parse_host;

/// Schemes whose URLs always have a host and accept `\` and missing slashes.
const SPECIAL: [&str; 5] = ["http", "https", "ws", "wss", "ftp"];

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The canonical host of `url` (lowercase, no port, userinfo, path or trailing dot; IPv4
/// in dotted form; IPv6 bracketed), or `None` when the URL has no host this filter can
/// read: no scheme, `file:` or another scheme without `//`, an empty host, a Unicode host
/// (pass URLs as the client sends them on the wire, with `xn--` labels), or an invalid one.
pub fn host_from_url(url: &str) -> Option<String> {
    let trimmed = url.trim_matches(|c: char| c <= ' ');
    let cleaned: String = trimmed
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let (scheme, rest) = cleaned.split_once(':')?;
    let mut sc = scheme.chars();
    if !sc.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !sc.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let scheme = scheme.to_ascii_lowercase();
    let special = SPECIAL.contains(&scheme.as_str());
    let after = if special {
        rest.trim_start_matches(['/', '\\'])
    } else if scheme == "file" {
        return None;
    } else {
        rest.strip_prefix("//")?
    };
    let end = after
        .find(|c| matches!(c, '/' | '?' | '#') || (special && c == '\\'))
        .unwrap_or(after.len());
    let authority = &after[..end];
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if hostport.starts_with('[') {
        hostport[..=hostport.find(']')?].to_owned()
    } else {
        percent_decode(hostport.split(':').next().unwrap_or(""))?
    };
    parse_host(&host).ok().map(|h| h.to_string())
}
