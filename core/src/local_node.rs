//! The local node: the `lowdown-server` a user's hosts start for them when no deployment is
//! configured (SPEC §2), one per `LOWDOWN_HOME`. While it runs it holds [`LOCK_NAME`] locked
//! and announces where it listens in [`FILE_NAME`], where every host looks first; it logs to
//! [`LOG_NAME`] and ends after [`IDLE_EXIT_SECS`] without a request.

use serde::{Deserialize, Serialize};

/// The announcement's name under `LOWDOWN_HOME`.
pub const FILE_NAME: &str = "local-node.json";
/// The lock the running node holds (an OS file lock, released when the process ends).
pub const LOCK_NAME: &str = "local-node.lock";
/// The node's log, beside them.
pub const LOG_NAME: &str = "local-node.log";
/// Environment variable that, set off (`0`), stops hosts from starting a node.
pub const AUTOSTART_ENV: &str = "LOWDOWN_AUTOSTART";
/// How long the node waits without a request before it ends, by default.
pub const IDLE_EXIT_SECS: u64 = 1800;

/// What a running node announces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalNode {
    /// Its API's base URL: `http://127.0.0.1:<port>` or `http://[::1]:<port>`.
    pub url: String,
    /// Its process id.
    pub pid: u32,
    /// When it started (ISO-8601, from its clock).
    pub started_at: String,
}

/// The text of the announcement.
pub fn format(node: &LocalNode) -> String {
    serde_json::to_string(node).unwrap_or_default() + "\n"
}

/// The node an announcement names, or `None` when the text is not one. Only a loopback
/// `http` URL with a port counts: anyone who can write the file must not be able to send a
/// user's records elsewhere.
pub fn parse(text: &str) -> Option<LocalNode> {
    let node: LocalNode = serde_json::from_str(text).ok()?;
    is_loopback_url(&node.url).then_some(node)
}

/// The URL of the node an announcement's text names (see [`parse`]).
pub fn url(text: &str) -> Option<String> {
    parse(text).map(|n| n.url)
}

/// Whether `url` is `http://127.0.0.1:<port>` or `http://[::1]:<port>` (port 1 to 65535,
/// nothing after it).
pub fn is_loopback_url(url: &str) -> bool {
    let Some(port) = url
        .strip_prefix("http://127.0.0.1:")
        .or_else(|| url.strip_prefix("http://[::1]:"))
    else {
        return false;
    };
    !port.is_empty()
        && port.len() <= 5
        && port.bytes().all(|b| b.is_ascii_digit())
        && port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(url: &str) -> LocalNode {
        LocalNode {
            url: url.to_owned(),
            pid: 42,
            started_at: "2026-12-07T12:00:00Z".to_owned(),
        }
    }

    #[test]
    fn an_announcement_reads_back() {
        for url in [
            "http://127.0.0.1:7077",
            "http://[::1]:65535",
            "http://127.0.0.1:1",
        ] {
            assert_eq!(parse(&format(&node(url))), Some(node(url)));
        }
    }

    #[test]
    fn only_a_loopback_http_url_with_a_port_is_a_node() {
        for url in [
            "http://10.0.0.5:7077",
            "https://127.0.0.1:7077",
            "http://127.0.0.1",
            "http://127.0.0.1:",
            "http://127.0.0.1:0",
            "http://127.0.0.1:65536",
            "http://127.0.0.1:7077/",
            "http://127.0.0.1:7077@evil.example",
            "http://127.0.0.1.evil.example:80",
            "http://localhost:7077",
            "http://127.0.0.1:+7077",
        ] {
            assert_eq!(parse(&format(&node(url))), None, "{url}");
        }
    }

    #[test]
    fn anything_else_is_no_node() {
        for text in [
            "",
            "{}",
            "null",
            "[1]",
            "{\"url\":\"http://127.0.0.1:7077\"}",
            "\u{0}",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }
}
