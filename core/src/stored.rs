//! The settings a user stores in `LOWDOWN_HOME/config.json` (`lowdown-proxy config set`),
//! and where a host delivers given them, its environment and the local node's announcement
//! (SPEC §2). Hosts read the two files and keep no rules.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::local_node;
use crate::settings::Settings;

/// The file's name under `LOWDOWN_HOME`.
pub const FILE_NAME: &str = "config.json";

/// The keys a user may store, as `config set` spells them.
pub const KEYS: &[&str] = &["api-url"];

/// Why the stored settings cannot be read or changed: a stable `type`
/// (`unknown_setting`, `invalid_value`, `not_settings`) and words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invalid {
    /// What kind of refusal.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// What to do about it.
    pub message: String,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn invalid(kind: &'static str, message: String) -> Invalid {
    Invalid { kind, message }
}

/// The file's keys are written with `_` for the `-` of [`KEYS`].
fn field(key: &str) -> Result<String, Invalid> {
    if KEYS.contains(&key) {
        Ok(key.replace('-', "_"))
    } else {
        Err(invalid(
            "unknown_setting",
            format!("unknown setting {key:?} (settings: {})", KEYS.join(", ")),
        ))
    }
}

/// The object a file's text holds (none for a missing or empty file).
fn object(text: Option<&str>) -> Result<Map<String, Value>, Invalid> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(invalid(
            "not_settings",
            format!("{FILE_NAME} is not a JSON object of settings; fix or remove it"),
        )),
    }
}

/// The value stored for `key` in a file's `text` (`None` for a missing file), or `None`.
pub fn get(text: Option<&str>, key: &str) -> Result<Option<String>, Invalid> {
    let field = field(key)?;
    match object(text)?.get(&field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(v)) => check(key, v).map(Some),
        Some(_) => Err(invalid(
            "invalid_value",
            format!("{FILE_NAME}: {field} is not text"),
        )),
    }
}

/// The file's text with `key` set to `value` (checked as [`get`] reads it), or removed for
/// `None`; other keys are kept as they are.
pub fn set(text: Option<&str>, key: &str, value: Option<&str>) -> Result<String, Invalid> {
    let field = field(key)?;
    let mut m = object(text)?;
    match value {
        Some(v) => {
            m.insert(field, Value::String(check(key, v)?));
        }
        None => {
            m.remove(&field);
        }
    }
    Ok(serde_json::to_string_pretty(&Value::Object(m)).unwrap_or_default() + "\n")
}

/// `value` as stored for `key`: for `api-url`, an API base URL ([`api_url`]).
fn check(key: &str, value: &str) -> Result<String, Invalid> {
    debug_assert_eq!(key, "api-url");
    api_url(key, value)
}

/// `value` (named `name` in what is said) as an API base URL: `http` or `https`, with a
/// host, without credentials, a query or a fragment, without a trailing `/`.
pub fn api_url(name: &str, value: &str) -> Result<String, Invalid> {
    let bad = |why: &str| Err(invalid("invalid_value", format!("{name} {value:?} {why}")));
    let v = value.trim();
    let Some(rest) = v
        .strip_prefix("https://")
        .or_else(|| v.strip_prefix("http://"))
    else {
        return bad("must start with http:// or https://");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() || authority.starts_with(':') {
        return bad("has no host");
    }
    if authority.contains('@') {
        return bad("must not carry credentials");
    }
    if v.contains(['?', '#']) || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("must be a base URL, without spaces, a query or a fragment");
    }
    Ok(v.trim_end_matches('/').to_owned())
}

/// How a host found where to deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// `LOWDOWN_API_URL` (or `PROWL_API_URL` for the telemetry clients).
    Environment,
    /// `api-url` in [`FILE_NAME`].
    Stored,
    /// The running local node's announcement.
    LocalNode,
    /// Nothing configured and no node announced: the default address.
    Default,
}

/// Where a host delivers and queries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Destination {
    /// The API's base URL, without a trailing `/`.
    pub url: String,
    /// How it was found.
    pub via: Via,
    /// When nothing answers there, the host may start the local node
    /// ([`Settings::autostart`], and no deployment configured).
    pub may_start: bool,
    /// Why the environment's URL cannot be used (not an API base URL, see [`api_url`]):
    /// then nothing is sent anywhere else either; hosts keep the records and say this once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Where a host with `settings` delivers, given the text of [`FILE_NAME`] and of the local
/// node's announcement (`None` when missing): the environment's URL, else the stored one,
/// else the announced node, else the default address. A stored file that cannot be read
/// counts as no stored URL, so records still reach the local node; hosts report it.
pub fn destination(
    settings: &Settings,
    stored: Option<&str>,
    announcement: Option<&str>,
) -> Destination {
    let at = |url: String, via: Via, may_start: bool| Destination {
        url,
        via,
        may_start,
        problem: None,
    };
    if !settings.local_node {
        return match api_url("the API URL", &settings.api_url) {
            Ok(url) => at(url, Via::Environment, false),
            Err(e) => Destination {
                problem: Some(e.message),
                ..at(settings.api_url.clone(), Via::Environment, false)
            },
        };
    }
    if let Ok(Some(url)) = get(stored, "api-url") {
        return at(url, Via::Stored, false);
    }
    match announcement.and_then(local_node::url) {
        Some(url) => at(url, Via::LocalNode, settings.autostart),
        None => at(settings.api_url.clone(), Via::Default, settings.autostart),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_urls_a_user_may_store() {
        for (given, stored) in [
            ("https://lowdown.example/", "https://lowdown.example"),
            ("http://10.0.0.5:7077", "http://10.0.0.5:7077"),
            (
                " https://team.example/lowdown// ",
                "https://team.example/lowdown",
            ),
        ] {
            let text = set(None, "api-url", Some(given)).unwrap();
            assert_eq!(
                get(Some(&text), "api-url").unwrap().as_deref(),
                Some(stored)
            );
        }
        for bad in [
            "lowdown.example",
            "ftp://x",
            "https://",
            "https://:80",
            "https://user:pw@x.example",
            "https://x.example/?k=1",
            "https://x.example/a b",
        ] {
            assert!(set(None, "api-url", Some(bad)).is_err(), "{bad}");
        }
        let said = |r: Result<String, Invalid>| r.unwrap_err().to_string();
        assert_eq!(
            said(set(None, "api-url", Some("https://me:pw@x.example"))),
            r#"api-url "https://me:pw@x.example" must not carry credentials"#
        );
        assert_eq!(
            said(set(Some("[1]"), "api-url", None)),
            "config.json is not a JSON object of settings; fix or remove it"
        );
        assert_eq!(
            said(set(None, "api_url", None)),
            r#"unknown setting "api_url" (settings: api-url)"#
        );
    }
}
