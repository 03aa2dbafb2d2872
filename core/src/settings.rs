//! What every host reads from its environment (SPEC §2, §4), as one function of that
//! environment: the API's address (or the local node), the state directory, whether to
//! record or report. Hosts
//! hand in a lookup of their variables and the user's home directory, and keep no rules.

use crate::defaults::{API_URL, API_URL_ENV, HOME_DIR_NAME, HOME_ENV, PROWL_API_URL_ENV};
use crate::local_node::AUTOSTART_ENV;
use serde::{Deserialize, Serialize};

/// Which kind of host asks: the proxy reads `LOWDOWN_API_URL`; the telemetry clients (prowl,
/// observe) read `PROWL_API_URL` first (SPEC §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// `lowdown-proxy`, `lowdown-mcp`, `wrap`.
    Proxy,
    /// `prowl`, `observe(fetch)`.
    Telemetry,
}

/// A host's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// The API's base URL, without a trailing `/`.
    pub api_url: String,
    /// The state directory (`LOWDOWN_HOME`, else `<user home>/.lowdown`).
    pub home: String,
    /// The proxy records (`LOWDOWN_RECORD=0` turns it off).
    pub record: bool,
    /// The telemetry clients report (`PROWL_TELEMETRY=0` turns it off).
    pub telemetry: bool,
    /// Diagnostics on stderr (`LOWDOWN_DEBUG=1`).
    pub debug: bool,
    /// No API URL is configured: the host delivers to the local node its `LOWDOWN_HOME`
    /// announces ([`crate::local_node`]), else to `api_url`.
    pub local_node: bool,
    /// And when nothing answers, the host may start that node (`LOWDOWN_AUTOSTART=0` says
    /// no).
    pub autostart: bool,
}

/// Whether a variable says "off": `0`, `false`, `off` or `no`, any case, around spaces.
pub fn is_off(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "false" | "off" | "no"
        )
    })
}

/// The settings `env` gives a host of kind `client` whose user's home directory is
/// `user_home` (empty or missing variables count as unset).
pub fn from_env(env: &dyn Fn(&str) -> Option<String>, user_home: &str, client: Client) -> Settings {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    let url = match client {
        Client::Telemetry => get(PROWL_API_URL_ENV).or_else(|| get(API_URL_ENV)),
        Client::Proxy => get(API_URL_ENV),
    };
    let local_node = url.is_none();
    let api_url = url.unwrap_or_else(|| API_URL.to_owned());
    Settings {
        api_url: api_url.trim_end_matches('/').to_owned(),
        home: get(HOME_ENV).unwrap_or_else(|| join(user_home, HOME_DIR_NAME)),
        record: !is_off(get("LOWDOWN_RECORD").as_deref()),
        telemetry: !is_off(get("PROWL_TELEMETRY").as_deref()),
        debug: get("LOWDOWN_DEBUG").as_deref() == Some("1"),
        local_node,
        autostart: local_node && !is_off(get(AUTOSTART_ENV).as_deref()),
    }
}

/// `dir` and `name` joined with the separator `dir` already uses (`\` for a Windows path).
fn join(dir: &str, name: &str) -> String {
    let sep = if dir.contains('\\') && !dir.contains('/') {
        '\\'
    } else {
        '/'
    };
    format!("{}{sep}{name}", dir.trim_end_matches(['/', '\\']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn defaults_and_precedence() {
        let s = from_env(&env(&[]), "/home/ann", Client::Proxy);
        assert_eq!(
            (
                s.api_url.as_str(),
                s.home.as_str(),
                s.record,
                s.telemetry,
                s.debug
            ),
            (API_URL, "/home/ann/.lowdown", true, true, false)
        );
        let both = [
            ("PROWL_API_URL", "https://p.example/"),
            ("LOWDOWN_API_URL", "https://l.example"),
        ];
        assert_eq!(
            from_env(&env(&both), "/h", Client::Telemetry).api_url,
            "https://p.example"
        );
        assert_eq!(
            from_env(&env(&both), "/h", Client::Proxy).api_url,
            "https://l.example"
        );
        assert_eq!(
            from_env(&env(&[]), r"C:\Users\ann", Client::Proxy).home,
            r"C:\Users\ann\.lowdown"
        );
        let off = from_env(
            &env(&[
                ("LOWDOWN_RECORD", "0"),
                ("PROWL_TELEMETRY", " Off "),
                ("LOWDOWN_HOME", "/srv/ld"),
                ("LOWDOWN_DEBUG", "1"),
            ]),
            "/h",
            Client::Proxy,
        );
        assert_eq!(
            (off.record, off.telemetry, off.home.as_str(), off.debug),
            (false, false, "/srv/ld", true)
        );
        assert!(from_env(&env(&[("LOWDOWN_API_URL", "")]), "/h", Client::Proxy).api_url == API_URL);
    }
}
