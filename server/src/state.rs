//! What every handler shares.

use std::sync::Arc;

use crate::caller::{TrustedNetworks, TrustedProxies};
use crate::db::quota::Limits;
use crate::db::Db;
use crate::gateway::Prowl;

/// Shared state of the app: the database, the deployment's name and its request policy.
/// Rate limits live in the database, so any number of servers can share one.
#[derive(Clone)]
pub struct AppState {
    /// Storage.
    pub db: Db,
    /// The one clock every handler and service reads (tests move it instead of waiting).
    pub clock: Arc<crate::clock::Clock>,
    /// Named in every answer's `source` block, e.g. `lowdown-server (local)`.
    pub deployment: String,
    /// Proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`).
    pub trusted_proxies: Arc<TrustedProxies>,
    /// Networks exempt from quotas and caps (`--trusted-network`). @default none
    pub trusted_networks: Arc<TrustedNetworks>,
    /// Write quotas (`--quota-*`). @default the core's
    pub limits: Limits,
    /// `--unsafe-allow-private-hosts`: store and list private and special-use hosts (for
    /// local testing only). @default false
    pub allow_private_hosts: bool,
    /// The sampling gateway: catalog, upstream client (empty catalog by default).
    pub prowl: Arc<Prowl>,
    /// `--public-url`: the base of absolute links in feeds (else links are relative).
    pub public_url: Option<String>,
    /// Daily records already computed (see [`crate::daily::cache`]).
    pub daily: Arc<crate::daily::cache::Cache>,
    /// `LOWDOWN_ADMIN_TOKEN`: the operator's bearer token for posting benchmark directives
    /// (SPEC §11); without one those routes refuse. @default None
    pub admin_token: Option<Arc<str>>,
    /// The server's own probes of `protocol` remotes, checking provider submissions
    /// (SPEC §11), under the gateway's `--unsafe-allow-loopback`.
    pub prober: Arc<crate::provider::verify::Prober>,
}

impl AppState {
    /// State over `db`, naming the deployment `deployment`; no trusted proxies, private
    /// hosts refused.
    pub fn new(db: Db, deployment: impl Into<String>) -> Self {
        AppState {
            db,
            clock: Arc::default(),
            deployment: deployment.into(),
            trusted_proxies: Arc::default(),
            trusted_networks: Arc::default(),
            limits: Limits::default(),
            allow_private_hosts: false,
            prowl: Arc::new(Prowl::default()),
            public_url: None,
            daily: Arc::default(),
            admin_token: None,
            prober: Arc::default(),
        }
    }

    /// The same state, writing absolute links (feeds) under `url`.
    pub fn with_public_url(mut self, url: Option<String>) -> Self {
        self.public_url = url;
        self
    }

    /// The same state, believing `X-Forwarded-For` from `proxies`.
    pub fn with_trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.trusted_proxies = Arc::new(proxies);
        self
    }

    /// The same state, exempting `networks` from quotas and caps.
    pub fn with_trusted_networks(mut self, networks: TrustedNetworks) -> Self {
        self.trusted_networks = Arc::new(networks);
        self
    }

    /// The same state with these write quotas.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Unix milliseconds now, on the state's one clock (tests move it instead of waiting).
    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// The same state, storing and listing private hosts when `allow` (unsafe).
    pub fn with_private_hosts(mut self, allow: bool) -> Self {
        self.allow_private_hosts = allow;
        self
    }

    /// The same state accepting `token` as the operator's bearer token.
    pub fn with_admin_token(mut self, token: Option<String>) -> Self {
        self.admin_token = token.map(Arc::from);
        self
    }

    /// The same state serving `prowl`'s catalog and gateway.
    pub fn with_prowl(mut self, prowl: Prowl) -> Self {
        self.prowl = Arc::new(prowl);
        self
    }
}
