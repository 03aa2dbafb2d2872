//! Command line, environment and the service catalog file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::db::catalog::Service;

/// Default listen address (matches `lowdown_core::defaults::API_URL`).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7077";
/// SQLite file name inside `LOWDOWN_HOME`.
pub const DB_FILE: &str = "lowdown.db";

/// `lowdown-server`: the Lowdown API over SQLite (default) or PostgreSQL.
#[derive(Debug, Parser)]
#[command(name = "lowdown-server", version, about, long_about = None)]
pub struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = DEFAULT_LISTEN, global = true)]
    pub listen: SocketAddr,
    /// Database: a SQLite file path, `sqlite://PATH`, or `postgres://USER@HOST/DB`.
    /// Default: $DATABASE_URL if set, else $LOWDOWN_HOME/lowdown.db (LOWDOWN_HOME
    /// defaults to ~/.lowdown). SQLite runs in WAL mode; migrations apply on start.
    #[arg(long, global = true)]
    pub db: Option<String>,
    /// Service catalog file (JSON or TOML) loaded into the database on start:
    /// `{"services":[{"id":"stripe","name":"Stripe","hosts":["api.stripe.com"]}]}`.
    #[arg(long, global = true)]
    pub catalog: Option<PathBuf>,
    /// Deployment name shown in every answer's `source` block.
    #[arg(
        long,
        env = "LOWDOWN_DEPLOYMENT",
        default_value = "lowdown-server (local)",
        global = true
    )]
    pub name: String,
    /// A reverse proxy (CIDR such as 10.0.0.0/8, or one address) whose X-Forwarded-For
    /// names the client for rate limits; repeatable. Without it the peer address is the
    /// client and X-Forwarded-For is ignored.
    #[arg(long = "trusted-proxy", value_name = "CIDR", global = true)]
    pub trusted_proxies: Vec<String>,
    /// UNSAFE, for local testing only: store and list private and special-use hosts
    /// (localhost, RFC 1918 and other private addresses, .local, .internal, single-label
    /// names), which the server otherwise refuses whatever a client sent.
    #[arg(long = "unsafe-allow-private-hosts", global = true)]
    pub unsafe_allow_private_hosts: bool,
    /// `serve` options for the bare command, which is `serve`.
    #[command(flatten)]
    pub serve: crate::scanner::cli::ServeArgs,
    /// What to do (default: `serve`).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (what the bare command does).
    Serve(crate::scanner::cli::ServeArgs),
    /// Run the Registry Scanner once: read the MCP Registry, probe the cohort, store the
    /// observations. Progress on stderr, the summary as JSON on stdout.
    Scan(crate::scanner::cli::ScanArgs),
    /// The service catalog ("known hosts" for telemetry weights and targets).
    #[command(subcommand)]
    Catalog(CatalogCommand),
}

/// `lowdown-server catalog ...`.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Add (or replace) a service and its hosts.
    Add {
        /// Service id, e.g. `stripe`.
        id: String,
        /// A host of the service (repeatable), e.g. `--host api.stripe.com`.
        #[arg(long = "host", required = true)]
        hosts: Vec<String>,
        /// Display name (default: the id).
        #[arg(long = "service-name")]
        service_name: Option<String>,
    },
    /// List services and their hosts as JSON.
    List,
}

/// The database URL to use: `--db`, then `DATABASE_URL`, then the SQLite file in the
/// state directory. A plain path becomes a SQLite URL that creates the file.
pub fn database_url(flag: Option<&str>, env_url: Option<&str>, home: &Path) -> String {
    match flag.or(env_url).filter(|s| !s.is_empty()) {
        Some(u) if u.contains("://") || u.starts_with("sqlite:") => u.to_owned(),
        Some(path) => sqlite_url(Path::new(path)),
        None => sqlite_url(&home.join(DB_FILE)),
    }
}

/// `sqlite://PATH?mode=rwc`.
pub fn sqlite_url(path: &Path) -> String {
    format!("sqlite://{}?mode=rwc", path.display())
}

/// `LOWDOWN_HOME`, else `~/.lowdown`.
pub fn lowdown_home(env_home: Option<&str>, user_home: Option<&str>) -> PathBuf {
    match env_home.filter(|s| !s.is_empty()) {
        Some(h) => PathBuf::from(h),
        None => PathBuf::from(user_home.unwrap_or(".")).join(lowdown_core::defaults::HOME_DIR_NAME),
    }
}

/// Why a catalog file was refused.
#[derive(Debug, thiserror::Error, serde::Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CatalogError {
    /// The file could not be parsed.
    #[error("catalog: cannot parse {format}: {message}")]
    Parse {
        /// `JSON` or `TOML`.
        format: String,
        /// The parser's message.
        message: String,
    },
    /// An entry is invalid.
    #[error("catalog: services[{index}].{field}: {message}")]
    Invalid {
        /// Position of the service.
        index: usize,
        /// The field at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(serde::Deserialize)]
struct CatalogFile {
    services: Vec<Service>,
}

/// Parses a catalog (`.toml` by extension, else JSON; JSON may also be a bare array) and
/// checks every entry: ids of `[A-Za-z0-9._-]{1,64}`, at least one host, hosts of
/// `[a-z0-9.-]` with a dot (lower-cased on the way in).
pub fn parse_catalog(text: &str, toml_format: bool) -> Result<Vec<Service>, CatalogError> {
    let services = if toml_format {
        toml::from_str::<CatalogFile>(text)
            .map_err(|e| CatalogError::Parse {
                format: "TOML".into(),
                message: e.message().to_owned(),
            })?
            .services
    } else {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| CatalogError::Parse {
            format: "JSON".into(),
            message: e.to_string(),
        })?;
        let list = if v.is_array() {
            v
        } else {
            v.get("services")
                .cloned()
                .unwrap_or(serde_json::Value::Null)
        };
        serde_json::from_value(list).map_err(|e| CatalogError::Parse {
            format: "JSON".into(),
            message: e.to_string(),
        })?
    };
    services
        .into_iter()
        .enumerate()
        .map(|(i, s)| check_service(i, s))
        .collect()
}

/// Checks and normalises one service.
pub fn check_service(index: usize, mut s: Service) -> Result<Service, CatalogError> {
    let bad = |field: &str, message: &str| CatalogError::Invalid {
        index,
        field: field.into(),
        message: message.into(),
    };
    let id_ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if s.id.is_empty() || s.id.len() > 64 || !s.id.chars().all(id_ok) {
        return Err(bad("id", "must match ^[A-Za-z0-9._-]{1,64}$"));
    }
    if s.name.chars().count() > 128 || s.name.chars().any(char::is_control) {
        return Err(bad("name", "at most 128 characters, no control characters"));
    }
    if s.hosts.is_empty() {
        return Err(bad("hosts", "must list at least one host"));
    }
    for h in &mut s.hosts {
        *h = h.trim().to_ascii_lowercase();
        let ok = h.len() <= 253
            && h.contains('.')
            && !h.starts_with('.')
            && !h.ends_with('.')
            && h.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'));
        if !ok {
            return Err(bad(
                "hosts",
                "each host must be a bare DNS name like api.example.com",
            ));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_url_prefers_flag_then_env_then_home() {
        let home = Path::new("/h/.lowdown");
        assert_eq!(
            database_url(None, None, home),
            "sqlite:///h/.lowdown/lowdown.db?mode=rwc"
        );
        assert_eq!(
            database_url(Some("/tmp/x.db"), Some("postgres://a/b"), home),
            "sqlite:///tmp/x.db?mode=rwc"
        );
        assert_eq!(
            database_url(None, Some("postgres://a/b"), home),
            "postgres://a/b"
        );
        assert_eq!(
            lowdown_home(None, Some("/root")),
            PathBuf::from("/root/.lowdown")
        );
        assert_eq!(lowdown_home(Some("/x"), Some("/root")), PathBuf::from("/x"));
    }

    #[test]
    fn catalogs_parse_in_json_and_toml_and_bad_entries_are_named() {
        let json = r#"{"services":[{"id":"stripe","name":"Stripe","hosts":["API.Stripe.com"]}]}"#;
        let s = parse_catalog(json, false).unwrap();
        assert_eq!(s[0].hosts, vec!["api.stripe.com"]);
        let toml = "[[services]]\nid = \"resend\"\nhosts = [\"api.resend.com\"]\n";
        assert_eq!(parse_catalog(toml, true).unwrap()[0].id, "resend");
        let bad = r#"[{"id":"x","hosts":["http://a.com/path"]}]"#;
        assert_eq!(
            parse_catalog(bad, false).unwrap_err().to_string(),
            "catalog: services[0].hosts: each host must be a bare DNS name like api.example.com"
        );
    }
}
