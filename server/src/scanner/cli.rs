//! The Scanner's command-line options: `lowdown-server scan [OPTIONS]`, and the same
//! options plus `--scan-at HH:MM` on `lowdown-server serve` (and on the bare command,
//! which is `serve`).

use std::sync::Arc;

use clap::Args;
use lowdown_core::scanner::dispatch::{Limits, DEFAULT_CONCURRENCY, DEFAULT_PER_HOST_CONCURRENCY};
use lowdown_core::scanner::packages::{DEFAULT_NPM_REGISTRY_URL, DEFAULT_PYPI_URL};
use lowdown_core::scanner::registry::DEFAULT_REGISTRY_URL;
use lowdown_core::scanner::target::Policy;

use super::progress::Mode;
use super::schedule::ScanAt;
use super::{CohortMode, ScanConfig};

/// Options of a scan run.
#[derive(Debug, Clone, Args)]
pub struct ScanArgs {
    /// The MCP Registry to read (`GET <URL>/v0.1/servers`).
    #[arg(long, value_name = "URL", default_value = DEFAULT_REGISTRY_URL)]
    pub registry_url: String,
    /// What is probed: `fixed`, the cohort (a fixed sample, see --cohort-size), or `all`,
    /// every active, latest entry with a streamable-HTTP remote. `all` leaves the stored
    /// cohort as it is: a later `fixed` run probes the same members as before.
    #[arg(long, value_name = "fixed|all", value_enum, default_value_t = CohortMode::Fixed)]
    pub cohort: CohortMode,
    /// How many Registry entries the Scanner observes daily, chosen by sha256 of
    /// `mcp:<name>`. Default: the stored cohort's size (5000 for a new cohort). A larger
    /// size keeps every member and adds the next ones under a new cohort version; a
    /// smaller one is refused (a cohort is never rebuilt).
    #[arg(long, value_name = "N", conflicts_with = "cohort")]
    pub cohort_size: Option<u64>,
    /// Try `server/discover` (MCP 2026-07-28) before `initialize`.
    #[arg(long)]
    pub modern: bool,
    /// Probes in flight at once, over every host.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONCURRENCY, value_parser = concurrency)]
    pub concurrency: usize,
    /// Probes in flight at once against one host (a URL's host name or address, any port);
    /// a host that hangs holds at most this many of the --concurrency slots.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PER_HOST_CONCURRENCY,
          value_parser = concurrency)]
    pub per_host_concurrency: usize,
    /// UNSAFE, for tests only: the Scanner may also reach plain http URLs and loopback
    /// addresses (127.0.0.0/8, ::1), e.g. fixtures on 127.0.0.1, and services.toml may name
    /// such upstreams for the gateway. Every other blocked range (private, link-local,
    /// metadata, ...) stays blocked. Never use it on a deployment.
    #[arg(long)]
    pub unsafe_allow_loopback: bool,
    /// The npm registry the declared npm packages are checked at (`GET <URL>/<name>`).
    #[arg(long, value_name = "URL", default_value = DEFAULT_NPM_REGISTRY_URL)]
    pub npm_registry_url: String,
    /// The Python Package Index the declared PyPI packages are checked at (Index API
    /// `<URL>/simple/<name>/`, JSON API `<URL>/pypi/<name>/json`).
    #[arg(long, value_name = "URL", default_value = DEFAULT_PYPI_URL)]
    pub pypi_url: String,
    /// Do not check the declared npm and PyPI packages.
    #[arg(long)]
    pub skip_packages: bool,
}

fn concurrency(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("{s:?}: expected a number from 1 to 1024")),
    }
}

impl ScanArgs {
    /// The run configuration these options describe (system resolver and clock).
    pub fn config(&self, progress: Mode) -> ScanConfig {
        ScanConfig {
            registry_url: self.registry_url.clone(),
            cohort: self.cohort,
            cohort_size: self.cohort_size,
            modern: self.modern,
            limits: Limits {
                total: self.concurrency,
                per_host: self.per_host_concurrency,
            },
            policy: Policy {
                allow_loopback: self.unsafe_allow_loopback,
            },
            lookup: Arc::new(super::net::SystemLookup),
            clock: Arc::new(crate::clock::now_ms),
            progress,
            packages: (!self.skip_packages).then(|| super::packages::PackageSources {
                npm_registry_url: self.npm_registry_url.clone(),
                pypi_url: self.pypi_url.clone(),
            }),
        }
    }
}

/// Options of `serve` that belong to the Scanner.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Run the Scanner every day at HH:MM UTC inside the server (off by default). With
    /// several servers on one database, one scan runs at a time (a database lease) and a
    /// day that already has a completed scan is not scanned again.
    #[arg(long, value_name = "HH:MM")]
    pub scan_at: Option<ScanAt>,
    /// After each day's scan, publish the dataset: a git repository at DIR (made when DIR
    /// is missing or empty; one commit per UTC day; never pushed) and a Hugging Face
    /// dataset layout in DIR/huggingface (see server/README.md, Publishing the dataset).
    #[arg(long, value_name = "DIR", requires = "scan_at")]
    pub publish: Option<std::path::PathBuf>,
    /// Options of the daily scan (its `--unsafe-allow-loopback` also lets services.toml
    /// name loopback http upstreams for the gateway).
    #[command(flatten)]
    pub scan: ScanArgs,
    /// The sampling gateway's options.
    #[command(flatten)]
    pub gateway: crate::gateway::cli::GatewayArgs,
    /// The listeners' timeouts and connection caps (API and gateway alike).
    #[command(flatten)]
    pub listen: crate::listen::ListenArgs,
    /// The local node (`--local-node`, `--idle-exit`).
    #[command(flatten)]
    pub node: crate::local_node::NodeArgs,
}

impl ServeArgs {
    /// Whether any of these options was given (they belong to the bare command only).
    pub fn any_given(&self) -> bool {
        let s = &self.scan;
        self.scan_at.is_some()
            || self.publish.is_some()
            || s.registry_url != DEFAULT_REGISTRY_URL
            || s.cohort != CohortMode::Fixed
            || s.cohort_size.is_some()
            || s.modern
            || s.concurrency != DEFAULT_CONCURRENCY
            || s.per_host_concurrency != DEFAULT_PER_HOST_CONCURRENCY
            || s.unsafe_allow_loopback
            || s.npm_registry_url != DEFAULT_NPM_REGISTRY_URL
            || s.pypi_url != DEFAULT_PYPI_URL
            || s.skip_packages
            || self.gateway.any_given()
            || self.listen.any_given()
            || self.node.any_given()
    }
}
