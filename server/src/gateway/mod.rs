//! Prowl's sampling gateway (SPEC §10): the catalog, the gateway listener that forwards
//! sampled calls to vendors, the audit job, and the API answers built on them (services
//! with their live score, salts, receipts, agent reputation).
//!
//! Rules (the decision check, header hygiene, score, audit, probe health, receipts,
//! reputation) come from `lowdown_core::{sample, gateway}`; this module does the IO.

pub mod api;
pub mod audit;
pub mod catalog;
pub mod cli;
pub mod metered;
pub mod openapi;
pub mod proxy;
pub mod recorder;
pub mod services;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue};

pub use catalog::{Credential, Service};

use crate::db::gateway::AgentInfo;

/// How the gateway reaches upstreams.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Longest wait for the upstream's response headers, and for each read of its body
    /// (an SSE stream may last as long as it keeps sending). Past it: 504.
    pub timeout: Duration,
    /// Admit `http://` loopback upstreams (`--unsafe-allow-loopback`, tests only).
    pub allow_loopback: bool,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            timeout: Duration::from_secs(30),
            allow_loopback: false,
        }
    }
}

/// The credential a service's calls get.
#[derive(Debug, Clone)]
pub(crate) enum Injected {
    /// The service declares none, or forwards the agent's own (`passthrough`).
    Nothing,
    /// Header and value, resolved from the environment at start.
    Header(HeaderName, HeaderValue),
    /// The environment variable is unset (or not a valid header value).
    Missing(String),
}

/// Everything the gateway and its API answers share.
pub struct Prowl {
    /// The catalog, in file order.
    pub services: Vec<Service>,
    /// Upstream settings.
    pub config: GatewayConfig,
    pub(crate) client: reqwest::Client,
    pub(crate) credentials: HashMap<String, Injected>,
    // Salts never change once stored, and keys are never reassigned: both are cached
    // so a gateway call costs no database read in the common case.
    pub(crate) salts: Mutex<HashMap<String, String>>,
    pub(crate) agents: Mutex<HashMap<String, AgentInfo>>,
    /// (agent, service) pairs found to meet `min_reputation`, until the given time.
    pub(crate) reputable: Mutex<HashMap<(String, String), i64>>,
    /// Writes ProxyCalls in batches, off the request path.
    pub recorder: recorder::Recorder,
}

/// Entries kept in each in-memory cache before it is emptied and refilled.
const CACHE_MAX: usize = 10_000;

pub(crate) fn cache_put<K: std::hash::Hash + Eq, V>(m: &Mutex<HashMap<K, V>>, k: K, v: V) {
    let mut m = m.lock().unwrap_or_else(|e| e.into_inner());
    if m.len() >= CACHE_MAX {
        m.clear();
    }
    m.insert(k, v);
}

impl Prowl {
    /// The gateway over `services`, reading vendor credentials with `env` (the process
    /// environment in the binary, a map in tests).
    pub fn new(
        services: Vec<Service>,
        config: GatewayConfig,
        env_of: impl Fn(&str) -> Option<String>,
    ) -> Prowl {
        let credentials = services
            .iter()
            .map(|s| {
                let injected = match &s.credential {
                    Some(Credential {
                        env: Some(env),
                        header,
                        format,
                        ..
                    }) => match (
                        env_of(env),
                        HeaderName::from_bytes(header.to_ascii_lowercase().as_bytes()),
                    ) {
                        (Some(secret), Ok(name)) if !secret.is_empty() => {
                            let value =
                                lowdown_core::gateway::headers::credential_value(format, &secret);
                            match HeaderValue::from_str(&value) {
                                Ok(mut v) => {
                                    v.set_sensitive(true);
                                    Injected::Header(name, v)
                                }
                                Err(_) => Injected::Missing(env.clone()),
                            }
                        }
                        _ => Injected::Missing(env.clone()),
                    },
                    // No credential, or the agent's own (passthrough).
                    _ => Injected::Nothing,
                };
                (s.slug.clone(), injected)
            })
            .collect();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .read_timeout(config.timeout)
            // Never route vendor calls through a proxy named in the environment.
            .no_proxy()
            .use_rustls_tls()
            .build()
            .expect("the TLS backend initialises");
        Prowl {
            services,
            config,
            client,
            credentials,
            salts: Mutex::default(),
            agents: Mutex::default(),
            reputable: Mutex::default(),
            recorder: recorder::Recorder::default(),
        }
    }

    /// The catalog entry routed at `/{slug}`.
    pub fn by_slug(&self, slug: &str) -> Option<&Service> {
        self.services.iter().find(|s| s.slug == slug)
    }

    /// The catalog entry with `service_id`.
    pub fn by_service_id(&self, id: &str) -> Option<&Service> {
        self.services.iter().find(|s| s.service_id == id)
    }

    /// Environment variables named by the catalog that are unset (logged at start).
    pub fn missing_credentials(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self
            .credentials
            .iter()
            .filter_map(|(slug, c)| match c {
                Injected::Missing(env) => Some((slug.clone(), env.clone())),
                _ => None,
            })
            .collect();
        v.sort();
        v
    }
}

impl Default for Prowl {
    fn default() -> Self {
        Prowl::new(Vec::new(), GatewayConfig::default(), |_| None)
    }
}
