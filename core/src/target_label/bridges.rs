//! Commands that run something other than themselves: the Python SDK's `mcp run FILE` and
//! `fastmcp run FILE` (the file is the server), and bridges to a remote server (the remote
//! host is the server, `url:<host>`).

use super::flags::first_positional;
use super::Resolver;
use crate::telemetry::{host_from_url, is_private_name};

/// Packages that bridge stdio to a remote MCP server named by a URL argument:
/// `mcp-remote` (npm, `mcp-remote URL`), `supergateway` (npm, `--sse URL` or
/// `--streamableHttp URL`) and `mcp-proxy` (PyPI, its client mode `mcp-proxy URL`).
/// A bare command of the same name (installed globally) is the same bridge.
const BRIDGES: &[&str] = &[
    "npm:mcp-remote",
    "npm:supergateway",
    "pypi:mcp-proxy",
    "mcp-remote",
    "supergateway",
    "mcp-proxy",
];

/// Options of `mcp run` and `fastmcp run` that take a value.
const RUN_VALUES: &[&str] = &[
    "-t",
    "--transport",
    "--host",
    "-p",
    "--port",
    "--path",
    "-l",
    "--log-level",
    "--python",
    "--with",
    "--with-editable",
    "--with-requirements",
    "--project",
];

fn is_http_url(s: &str) -> bool {
    let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// `url:<host>` of a remote server's URL: only the host (no credentials, port, path or
/// query), and nothing for a host that is private (`localhost`, internal names, private
/// addresses), which never leaves the machine.
pub(super) fn url_label(url: &str) -> Option<String> {
    let host = host_from_url(url)?;
    (!is_private_name(&host)).then(|| format!("url:{host}"))
}

/// A bridge's label is its remote host: the first `http(s)://` word after the bridge's own
/// name. A bridge run without one (supergateway serving a local command) keeps `label`.
pub(super) fn bridged(label: Option<String>, after: &[&str]) -> Option<String> {
    let is_bridge = label.as_deref().is_some_and(|l| BRIDGES.contains(&l));
    match after.iter().find(|a| is_http_url(a)) {
        Some(url) if is_bridge => url_label(url),
        _ => label,
    }
}

/// `FILE:OBJECT` of `mcp run`/`fastmcp run` is FILE (not a Windows drive's `C:`).
fn without_object(spec: &str) -> &str {
    match spec.rsplit_once(':') {
        Some((file, obj))
            if file.len() > 1
                && !obj.is_empty()
                && obj.chars().all(|c| c.is_alphanumeric() || c == '_') =>
        {
            file
        }
        _ => spec,
    }
}

impl Resolver<'_> {
    /// The words after `mcp run` / `fastmcp run`: a file (`server.py`, `server.py:app`),
    /// or a URL that fastmcp bridges to.
    pub(super) fn mcp_run(&self, args: &[&str]) -> Option<String> {
        let spec = args[first_positional(args, RUN_VALUES, &[])?];
        if is_http_url(spec) {
            return url_label(spec);
        }
        self.file(without_object(spec))
    }

    /// `mcp run …` or `fastmcp run …` at the start of `args` (a command run by `uv run`,
    /// `uvx`, `pipx run`), if that is what they are.
    pub(super) fn python_cli_run(&self, args: &[&str]) -> Option<Option<String>> {
        let (cmd, rest) = args.split_first()?;
        let name = super::command_name(cmd);
        let is_cli = matches!(name.as_str(), "mcp" | "fastmcp");
        (is_cli && rest.first() == Some(&"run")).then(|| self.mcp_run(&rest[1..]))
    }
}
