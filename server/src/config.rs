//! Command line, environment and the service catalog file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

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
    /// The service catalog, services.toml (default $LOWDOWN_HOME/services.toml; a
    /// missing default file is an empty catalog): `[[service]]` tables with slug,
    /// service_id, upstream, hosts, sampling_rate, credential (see server/README.md).
    /// Loaded on start; its hosts give telemetry its service ids.
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
    /// A network this deployment trusts (CIDR such as 10.0.0.0/8, or one address;
    /// repeatable): its writes draw on no quota and no per-network cap limits them.
    /// Nothing is trusted by default, loopback included.
    #[arg(long = "trusted-network", value_name = "CIDR", global = true)]
    pub trusted_networks: Vec<String>,
    /// A write quota per sliding hour, NAME=N (repeatable): records-per-node (default
    /// 60000), records-per-key (60000), records-per-network (200000), observations-per-key
    /// (600), observations-per-anonymous-network (60), observations-per-network (3000,
    /// every key of one network together), registrations-per-network (10),
    /// gateway-calls-per-agent (600), gateway-calls-per-network (1200, every agent of one
    /// network together). A network is an IPv4 /24 or an IPv6 /48.
    #[arg(long = "quota", value_name = "NAME=N", global = true)]
    pub quotas: Vec<String>,
    /// UNSAFE, for local testing only: store and list private and special-use hosts
    /// (localhost, RFC 1918 and other private addresses, .local, .internal, single-label
    /// names), which the server otherwise refuses whatever a client sent.
    #[arg(long = "unsafe-allow-private-hosts", global = true)]
    pub unsafe_allow_private_hosts: bool,
    /// The public base URL of this server (e.g. `https://lowdown.example.org`), for the
    /// absolute links of the daily feeds. Without it the links are relative, never built
    /// from the request's Host, which any client sets.
    #[arg(long, value_name = "URL", global = true)]
    pub public_url: Option<String>,
    /// Days raw interaction records are kept (at least 1): older ones are removed once the
    /// roll-ups count them, and every answer, page, feed and export is unchanged by it
    /// (see server/README.md, Retention).
    #[arg(
        long = "retain-raw-days",
        value_name = "DAYS",
        default_value_t = crate::retention::DEFAULT_DAYS,
        value_parser = clap::value_parser!(u32).range(1..=36_500),
        global = true
    )]
    pub retain_raw_days: u32,
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
    /// Serve the API, and the sampling gateway with --gateway-listen (what the bare
    /// command does).
    Serve(crate::scanner::cli::ServeArgs),
    /// Run the Registry Scanner once: read the MCP Registry, probe the cohort, store the
    /// observations. Progress on stderr, the summary as JSON on stdout.
    Scan(crate::scanner::cli::ScanArgs),
    /// The service catalog, services.toml.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Write the open dataset: every Scanner observation as monthly CSV
    /// (DIR/scanner_observations/YYYY-MM.csv) and DIR/REPORT.md. The same database gives
    /// the same bytes.
    Export {
        /// The directory to write into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Publish the open dataset once, as `serve --publish DIR` does after each day's scan:
    /// the export, REPORT.md and a CC BY 4.0 LICENSE committed in the git repository DIR
    /// (made when DIR is missing or empty; one commit per UTC day; never pushed), and a
    /// Hugging Face dataset layout in DIR/huggingface. What was done as JSON on stdout.
    Publish {
        /// The git repository to write into.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// `lowdown-server catalog ...`.
#[derive(Debug, Subcommand)]
#[allow(
    clippy::large_enum_variant,
    reason = "parsed once per process; boxing would only obscure the clap definition"
)]
pub enum CatalogCommand {
    /// Append a `[[service]]` to services.toml (the file is checked whole first).
    Add {
        /// Route segment, e.g. `stripe` (the gateway serves /stripe/{path}).
        slug: String,
        /// Stable id, e.g. `svc_stripe`.
        #[arg(long)]
        service_id: String,
        /// Upstream base URL, https, e.g. `https://api.stripe.com`.
        #[arg(long)]
        upstream: String,
        /// A host of the service (repeatable), e.g. `--host api.stripe.com`.
        #[arg(long = "host", required = true)]
        hosts: Vec<String>,
        /// Share of agents sampled through the gateway, 0 to 1.
        #[arg(long)]
        sampling_rate: f64,
        /// A call the gateway carries, `METHOD /prefix` (repeatable), e.g.
        /// `--allow "GET /v1/search"`. Without one, the gateway carries nothing.
        #[arg(long = "allow", value_name = "METHOD /PREFIX")]
        allow: Vec<String>,
        /// Whose credential the vendor sees: `inject` (the operator's, from
        /// --credential-env; the default) or `passthrough` (the agent's own header).
        #[arg(long, requires = "credential_header")]
        credential_mode: Option<String>,
        /// Header the credential is in, e.g. `Authorization`.
        #[arg(long)]
        credential_header: Option<String>,
        /// Environment variable holding the operator's credential (`inject`), e.g. `STRIPE_API_KEY`.
        #[arg(long, requires = "credential_header")]
        credential_env: Option<String>,
        /// Credential value template, `{}` standing for the secret (default `{}`).
        #[arg(long, default_value = "{}")]
        credential_format: String,
        /// Display name (default: the slug).
        #[arg(long = "service-name")]
        service_name: Option<String>,
        /// base64 Ed25519 public key verifying the service's receipt signatures.
        #[arg(long)]
        public_key: Option<String>,
        /// Accept an http:// loopback upstream (UNSAFE, local testing only).
        #[arg(long)]
        unsafe_allow_loopback: bool,
    },
    /// List the catalog as JSON (never the credentials).
    List,
}

/// The write quotas: the defaults with each `--quota NAME=N` applied.
pub fn limits(overrides: &[String]) -> Result<crate::db::quota::Limits, String> {
    let mut l = crate::db::quota::Limits::default();
    for o in overrides {
        let (name, n) = o.split_once('=').ok_or_else(|| {
            format!("--quota {o:?}: expected NAME=N, e.g. records-per-node=60000")
        })?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("--quota {o:?}: {n:?} is not a whole number"))?;
        let slot = match name.trim() {
            "records-per-node" => &mut l.records_per_node,
            "records-per-key" => &mut l.records_per_key,
            "records-per-network" => &mut l.records_per_network,
            "observations-per-key" => &mut l.observations_per_key,
            "observations-per-anonymous-network" => &mut l.observations_per_anonymous_network,
            "observations-per-network" => &mut l.observations_per_network,
            "registrations-per-network" => &mut l.registrations_per_network,
            "gateway-calls-per-agent" => &mut l.gateway_calls_per_agent,
            "gateway-calls-per-network" => &mut l.gateway_calls_per_network,
            other => {
                return Err(format!(
                    "--quota {other:?}: not a quota (records-per-node, records-per-key, \
                     records-per-network, observations-per-key, \
                     observations-per-anonymous-network, observations-per-network, \
                     registrations-per-network, gateway-calls-per-agent, \
                     gateway-calls-per-network)"
                ))
            }
        };
        *slot = n;
    }
    Ok(l)
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
    fn quotas_are_overridden_by_name() {
        let l = limits(&[
            "records-per-node=5".into(),
            " records-per-network = 7".into(),
        ])
        .unwrap();
        assert_eq!((l.records_per_node, l.records_per_network), (5, 7));
        assert_eq!(l.observations_per_key, 600);
        assert!(limits(&["records=5".into()])
            .unwrap_err()
            .contains("not a quota"));
        assert!(limits(&["records-per-node".into()])
            .unwrap_err()
            .contains("NAME=N"));
        assert!(limits(&["records-per-node=-1".into()]).is_err());
    }
}
