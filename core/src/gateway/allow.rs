//! What a catalog service lets the gateway carry (SPEC §10): `allow` rules (`"GET /v1/search"`:
//! a method, one space, a path prefix under the upstream's base) and whose credential the
//! vendor sees (`inject`: the operator's; `passthrough`: the agent's own). The gateway and
//! both clients decide with [`GatewayRules`], so a client routes exactly what the gateway
//! would carry and sends it exactly the headers it would forward.
//!
//! Paths are checked as sent, never rewritten: `\`, control characters, `%2e`, `%2f`, `%5c`,
//! `%25`, a malformed `%`, `.` and `..` segments and empty segments (`//`) make a path
//! `bad_path`, so no decoding upstream can climb out of the prefix that matched.

use serde::Serialize;

use super::headers::forward_request_header;

/// Whose credential a service's sampled calls carry to the vendor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum Mode {
    /// The operator's key, injected by the gateway (public read-only APIs); the agent's
    /// credential header never leaves the client.
    Inject,
    /// The agent's own credential header, forwarded as sent and never stored or logged
    /// (account-scoped APIs).
    Passthrough,
}

/// Why a path is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathProblem {
    /// Not starting with `/`.
    NotAbsolute,
    /// A backslash, control character, space, `#` or non-ASCII byte.
    BadChar,
    /// `%2e`, `%2f`, `%5c`, `%25` or a `%` not followed by two hex digits.
    Encoded,
    /// A `.` or `..` segment.
    DotSegment,
    /// An empty segment (`//`).
    EmptySegment,
}

/// What the rules say about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// An `allow` rule matches: the gateway carries it.
    Allowed,
    /// No `allow` rule matches (403 `not_allowed`).
    NotAllowed,
    /// The path could escape its prefix (400 `bad_path`).
    BadPath {
        /// What is wrong with it.
        why: PathProblem,
    },
}

/// A catalog entry's rules that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RuleError {
    /// An `allow` entry is not `METHOD /prefix`.
    #[error("allow entry {entry:?}: {why}")]
    BadAllowRule {
        /// The entry as written.
        entry: String,
        /// What is wrong.
        why: String,
    },
    /// `mode` is neither `inject` nor `passthrough`.
    #[error("credential.mode {mode:?}: must be inject or passthrough")]
    BadMode {
        /// The mode as written.
        mode: String,
    },
    /// A `passthrough` service names no credential header.
    #[error(
        "credential.header: a passthrough service names the header the agent's credential is in"
    )]
    MissingHeader,
}

/// The methods and prefixes a service allows, and its credential mode and header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayRules {
    allow: Vec<(String, String)>,
    mode: Mode,
    credential_header: Option<String>,
}

/// Checks a path as sent (the part before any `?`).
pub fn check_path(path: &str) -> Result<(), PathProblem> {
    if !path.starts_with('/') {
        return Err(PathProblem::NotAbsolute);
    }
    let b = path.as_bytes();
    for (i, c) in b.iter().enumerate() {
        match c {
            b'\\' | b'#' | b' ' | 0..=0x1f | 0x7f..=0xff => return Err(PathProblem::BadChar),
            b'%' => {
                let hex = |j: usize| b.get(j).is_some_and(u8::is_ascii_hexdigit);
                if !(hex(i + 1) && hex(i + 2)) {
                    return Err(PathProblem::Encoded);
                }
                let code = path[i + 1..i + 3].to_ascii_lowercase();
                if matches!(code.as_str(), "2e" | "2f" | "5c" | "25") {
                    return Err(PathProblem::Encoded);
                }
            }
            _ => {}
        }
    }
    let segments: Vec<&str> = path[1..].split('/').collect();
    for (i, s) in segments.iter().enumerate() {
        if *s == "." || *s == ".." {
            return Err(PathProblem::DotSegment);
        }
        // A trailing slash is one empty last segment; `/` alone is the root.
        if s.is_empty() && i + 1 < segments.len() {
            return Err(PathProblem::EmptySegment);
        }
    }
    Ok(())
}

/// Parses one `allow` entry into `(method, prefix)`; the prefix loses a trailing `/`.
pub fn parse_rule(entry: &str) -> Result<(String, String), RuleError> {
    let bad = |why: &str| RuleError::BadAllowRule {
        entry: entry.to_owned(),
        why: why.to_owned(),
    };
    let (method, prefix) = entry
        .split_once(' ')
        .ok_or_else(|| bad("write a method, one space and a path prefix: \"GET /v1/search\""))?;
    if method.is_empty() || method.len() > 16 || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad("the method is upper-case letters, like GET or POST"));
    }
    if prefix.contains('?') {
        return Err(bad("the prefix is a path: no query"));
    }
    check_path(prefix).map_err(|p| {
        bad(match p {
            PathProblem::NotAbsolute => "the prefix starts with /",
            PathProblem::DotSegment => "the prefix has no . or .. segment",
            PathProblem::EmptySegment => "the prefix has no empty segment (//)",
            _ => "the prefix has no \\, space, control character or encoded . / \\ %",
        })
    })?;
    let trimmed = match prefix.trim_end_matches('/') {
        "" => "/",
        p => p,
    };
    Ok((method.to_owned(), trimmed.to_owned()))
}

impl GatewayRules {
    /// The rules of one service: its `allow` entries (none: nothing is carried), `mode`
    /// (`inject`, the default when absent, or `passthrough`) and credential header.
    pub fn new(
        allow: &[String],
        mode: Option<&str>,
        credential_header: Option<&str>,
    ) -> Result<GatewayRules, RuleError> {
        let mode = match mode {
            None | Some("inject") => Mode::Inject,
            Some("passthrough") => Mode::Passthrough,
            Some(other) => {
                return Err(RuleError::BadMode {
                    mode: other.to_owned(),
                })
            }
        };
        let credential_header = credential_header
            .filter(|h| !h.is_empty())
            .map(str::to_ascii_lowercase);
        if mode == Mode::Passthrough && credential_header.is_none() {
            return Err(RuleError::MissingHeader);
        }
        Ok(GatewayRules {
            allow: allow
                .iter()
                .map(|e| parse_rule(e))
                .collect::<Result<_, _>>()?,
            mode,
            credential_header,
        })
    }

    /// The credential mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The credential header the agent's own value crosses in (`passthrough` only).
    pub fn passthrough_header(&self) -> Option<&str> {
        match self.mode {
            Mode::Passthrough => self.credential_header.as_deref(),
            Mode::Inject => None,
        }
    }

    /// Whether the gateway carries `method` to `target` (a path under the upstream's base,
    /// with or without its `?query`; empty stands for `/`). The method matches exactly; a
    /// prefix matches itself and what lies under it at a `/`: `/v1/search` matches
    /// `/v1/search` and `/v1/search/x`, never `/v1/searchy`.
    pub fn check(&self, method: &str, target: &str) -> Verdict {
        let path = match target.split_once('?').map_or(target, |(p, _)| p) {
            "" => "/",
            p => p,
        };
        if let Err(why) = check_path(path) {
            return Verdict::BadPath { why };
        }
        let under = |prefix: &str| {
            prefix == "/"
                || path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        if self.allow.iter().any(|(m, p)| m == method && under(p)) {
            Verdict::Allowed
        } else {
            Verdict::NotAllowed
        }
    }

    /// Of a call's request header `names`, those a client sends to the gateway (as given):
    /// those the gateway forwards to the vendor, and `Transfer-Encoding`, which frames the
    /// body on the way to the gateway (the gateway frames it again). For an `inject` service
    /// that leaves the user's `Authorization`, `Cookie`, `Proxy-Authorization` and the
    /// service's credential header behind.
    pub fn keep_request_headers<S: AsRef<str>>(&self, names: &[S]) -> Vec<String> {
        names
            .iter()
            .map(AsRef::as_ref)
            .filter(|n| {
                let n = n.to_ascii_lowercase();
                n == "transfer-encoding"
                    || forward_request_header(&n, &[], self.passthrough_header())
            })
            .map(str::to_owned)
            .collect()
    }
}

/// Whether a client routes the service `slug`/`service_id` under `PROWL_GATEWAY_SERVICES`
/// (`filter`, the raw value): unset or blank routes every catalog service; otherwise only
/// those whose slug or service id is one of its comma-separated names (so a value naming
/// none, like `none`, routes nothing).
pub fn service_selected(filter: Option<&str>, slug: &str, service_id: &str) -> bool {
    match filter.map(str::trim).filter(|f| !f.is_empty()) {
        None => true,
        Some(f) => f
            .split(',')
            .map(str::trim)
            .any(|n| !n.is_empty() && (n == slug || n == service_id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_at_segment_boundaries() {
        let r = GatewayRules::new(&["GET /v1/search".into()], None, None).unwrap();
        assert_eq!(r.check("GET", "/v1/search?q=1"), Verdict::Allowed);
        assert_eq!(r.check("GET", "/v1/searchy"), Verdict::NotAllowed);
        assert_eq!(r.check("POST", "/v1/search"), Verdict::NotAllowed);
        assert_eq!(
            r.check("GET", "/v1/search/%2e%2e/admin"),
            Verdict::BadPath {
                why: PathProblem::Encoded
            }
        );
        assert!(GatewayRules::new(&["get /x".into()], None, None).is_err());
        assert!(GatewayRules::new(&[], Some("passthrough"), None).is_err());
    }
}
