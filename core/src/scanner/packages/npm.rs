//! npm: which names are asked for, the request, and what an answer means.
//!
//! `GET {registry}/{name}` with the abbreviated-metadata `Accept` header (the same document
//! npm installs from: `dist-tags`, and per version its `deprecated` message when there is
//! one), scoped names as `@scope%2fname`.

use serde_json::Value;

use super::{version, Check, Facts};

/// `Accept` of the metadata request: the abbreviated document, full JSON as a fallback.
pub const ACCEPT: &str = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8";
/// Largest metadata document read (packages with thousands of versions are large).
pub const BODY_CAP: usize = 64 << 20;
/// Longest package name npm accepts.
pub const MAX_NAME: usize = 214;

fn part_ok(part: &str, scope: bool) -> bool {
    let mut chars = part.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let first_ok =
        first.is_ascii_alphanumeric() || first == '-' || first == '~' || (scope && first == '*');
    first_ok && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'))
}

/// Whether `name` is an npm package name (`name` or `@scope/name`, URL-safe characters,
/// at most 214 characters). Upper case is accepted: older packages have it.
pub fn valid_name(name: &str) -> bool {
    if name.len() > MAX_NAME {
        return false;
    }
    match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, pkg)) => part_ok(scope, true) && part_ok(pkg, false),
            None => false,
        },
        None => part_ok(name, false),
    }
}

/// The request path under the registry URL: `/name`, `/@scope%2fname`.
pub fn path(name: &str) -> String {
    format!("/{}", name.replacen('/', "%2f", 1))
}

/// What an answer (`status`, `body`) means. Only a 404 is `NotFound`.
pub fn read(status: u16, body: &[u8]) -> Check {
    if status == 404 {
        return Check::NotFound { kind: None };
    }
    if !(200..300).contains(&status) {
        return Check::Failed {
            reason: format!("HTTP {status}"),
        };
    }
    let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(body) else {
        return Check::Failed {
            reason: "not npm package metadata".into(),
        };
    };
    let latest = doc
        .get("dist-tags")
        .and_then(|t| t.get("latest"))
        .and_then(Value::as_str);
    let deprecated = latest
        .and_then(|v| doc.get("versions")?.get(v)?.get("deprecated"))
        .and_then(Value::as_str)
        .is_some_and(|m| !m.is_empty());
    Check::Found(Facts {
        latest: version(latest),
        latest_deprecated: deprecated,
        ..Facts::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_as_npm_accepts_them() {
        for ok in [
            "x",
            "@modelcontextprotocol/server-everything",
            "lodash.get",
            "JSONStream",
            "@a/b-c_d.e~f",
        ] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "@scope",
            "@/x",
            "a b",
            "a/b",
            "../x",
            "x?y",
            "@s/x/y",
            "é",
            &"a".repeat(215),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert_eq!(path("@scope/pkg"), "/@scope%2fpkg");
        assert_eq!(path("pkg"), "/pkg");
    }

    #[test]
    fn the_abbreviated_document_as_the_registry_serves_it() {
        let doc = json!({
            "name": "@fixture/weather",
            "modified": "2026-11-02T10:00:00.000Z",
            "dist-tags": {"latest": "2.0.0", "next": "3.0.0-rc.1"},
            "versions": {
                "1.0.0": {"name": "@fixture/weather", "version": "1.0.0", "dist": {"tarball": "https://r/x.tgz"}},
                "2.0.0": {"name": "@fixture/weather", "version": "2.0.0", "deprecated": "use @fixture/forecast"},
            },
        });
        assert_eq!(
            read(200, doc.to_string().as_bytes()),
            Check::Found(Facts {
                latest: Some("2.0.0".into()),
                latest_deprecated: true,
                ..Facts::default()
            })
        );
        // Only the latest counts: an older deprecated version says nothing.
        let doc = json!({"dist-tags": {"latest": "1.0.0"}, "versions": {
            "0.9.0": {"deprecated": "old"}, "1.0.0": {"deprecated": ""}}});
        assert_eq!(
            read(200, doc.to_string().as_bytes()),
            Check::Found(Facts {
                latest: Some("1.0.0".into()),
                ..Facts::default()
            })
        );
    }

    #[test]
    fn only_a_404_is_not_found() {
        assert_eq!(
            read(404, br#"{"error":"Not found"}"#),
            Check::NotFound { kind: None }
        );
        for (status, body) in [
            (500, &b"oops"[..]),
            (429, b""),
            (200, b"<html>"),
            (301, b""),
        ] {
            assert!(
                matches!(read(status, body), Check::Failed { .. }),
                "{status}"
            );
        }
        // An unpublished package answers 200 without dist-tags: it exists, with no latest.
        let gone = json!({"name": "x", "time": {"unpublished": {"time": "2026-01-01T00:00:00Z"}}});
        assert_eq!(
            read(200, gone.to_string().as_bytes()),
            Check::Found(Facts::default())
        );
    }

    #[test]
    fn a_latest_that_is_not_a_plain_version_is_not_published() {
        let doc = json!({"dist-tags": {"latest": "1.0.0 <script>"}, "versions": {}});
        assert_eq!(
            read(200, doc.to_string().as_bytes()),
            Check::Found(Facts::default())
        );
    }
}
