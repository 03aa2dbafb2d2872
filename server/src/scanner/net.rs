//! The Scanner's HTTP client: SSRF checks on every URL and on every address at connect
//! time, no redirects, no proxies, rustls with the Mozilla roots, and the `error_type` of
//! a failed request.
//!
//! URLs are parsed by the same parser the client connects with (`reqwest::Url`), so the
//! host judged is the host reached; the rules themselves are the core's
//! ([`lowdown_core::scanner::target`]). Names are resolved through a [`Lookup`] (the
//! system resolver by default; tests inject their own) and every address is checked
//! before the connector sees it: a name with any blocked address is refused whole, so no
//! connection is opened and no byte is sent. IP-literal hosts never reach the resolver;
//! they are judged as part of the URL.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use lowdown_core::scanner::target::{self, Policy, Refusal};
use lowdown_core::scanner::{ErrorType, CLIENT_NAME};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;

/// Resolves host names to addresses.
pub trait Lookup: Send + Sync + 'static {
    /// Every address of `host`.
    fn lookup(&self, host: &str) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send>>;
}

/// The operating system's resolver.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send>> {
        let host = host.to_owned();
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .map(|a| a.ip())
                .collect())
        })
    }
}

/// A name that resolved to an address the SSRF rules refuse.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BlockedAddress(pub Refusal);

/// A name that did not resolve.
#[derive(Debug, thiserror::Error)]
#[error("the name does not resolve")]
pub struct LookupFailed;

/// Resolves through a [`Lookup`] and refuses names with any blocked address.
struct GuardedResolver {
    lookup: Arc<dyn Lookup>,
    policy: Policy,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let (lookup, policy, host) = (self.lookup.clone(), self.policy, name.as_str().to_owned());
        Box::pin(async move {
            let addrs = lookup.lookup(&host).await.map_err(|_| LookupFailed)?;
            if addrs.is_empty() {
                return Err(LookupFailed.into());
            }
            for a in &addrs {
                target::address_verdict(*a, policy).map_err(BlockedAddress)?;
            }
            let addrs: Addrs = Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// The client every Scanner request goes through, with the policy it enforces.
#[derive(Clone)]
pub struct Net {
    /// The HTTP client (guarded resolver, no redirects, no proxy).
    pub client: reqwest::Client,
    /// What may be reached.
    pub policy: Policy,
}

impl Net {
    /// A client under `policy`, resolving through `lookup`; `user_agent_version` goes into
    /// `User-Agent: lowdown-scanner/<version>`.
    pub fn new(
        policy: Policy,
        lookup: Arc<dyn Lookup>,
        user_agent_version: &str,
    ) -> reqwest::Result<Net> {
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver { lookup, policy }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(format!("{CLIENT_NAME}/{user_agent_version}"))
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(15))
            .build()?;
        Ok(Net { client, policy })
    }

    /// Parses `url` and applies the URL rules.
    pub fn check_url(&self, url: &str) -> Result<Url, Refusal> {
        check_url(url, self.policy)
    }
}

/// Parses `url` as the client will and judges scheme, userinfo and host.
pub fn check_url(url: &str, policy: Policy) -> Result<Url, Refusal> {
    let parsed = Url::parse(url).map_err(|_| Refusal::Unparsable)?;
    let host = parsed.host_str().ok_or(Refusal::Unparsable)?;
    let userinfo = !parsed.username().is_empty() || parsed.password().is_some();
    target::url_verdict(parsed.scheme(), userinfo, host, policy)?;
    Ok(parsed)
}

/// Every error behind `e`: its `source()` chain, and inside each `io::Error` the error it
/// wraps (`io::Error::source` skips that one, and TLS errors arrive as an `io::Error` inside
/// an `io::Error`).
fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Vec<&'a (dyn std::error::Error + 'static)> {
    let mut out = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        out.push(err);
        let mut io = err.downcast_ref::<io::Error>();
        while let Some(inner) = io.and_then(io::Error::get_ref) {
            let inner: &(dyn std::error::Error + 'static) = inner;
            out.push(inner);
            io = inner.downcast_ref::<io::Error>();
        }
        next = err.source();
    }
    out
}

/// The `error_type` of a request that failed without (or while reading) a response.
pub fn error_type(e: &reqwest::Error) -> ErrorType {
    let causes = causes(e);
    let any = |f: &dyn Fn(&(dyn std::error::Error + 'static)) -> bool| causes.iter().any(|c| f(*c));
    if any(&|c| c.is::<BlockedAddress>()) {
        return ErrorType::BlockedUrl;
    }
    if any(&|c| c.is::<LookupFailed>()) {
        return ErrorType::Dns;
    }
    if any(&|c| c.is::<rustls::Error>()) {
        return ErrorType::Tls;
    }
    if e.is_timeout() {
        return ErrorType::Timeout;
    }
    for c in &causes {
        if c.downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_incomplete_message)
        {
            return ErrorType::ConnReset;
        }
        if let Some(io) = c.downcast_ref::<io::Error>() {
            match io.kind() {
                io::ErrorKind::ConnectionRefused => return ErrorType::ConnRefused,
                io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof => return ErrorType::ConnReset,
                io::ErrorKind::TimedOut => return ErrorType::Timeout,
                _ => {}
            }
        }
    }
    ErrorType::NetworkError
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_judged_as_the_client_parses_them() {
        let strict = Policy::default();
        assert!(check_url("https://mcp.example.com/mcp", strict).is_ok());
        assert_eq!(
            check_url("https://user:pw@mcp.example.com/", strict).unwrap_err(),
            Refusal::Userinfo
        );
        // WHATWG forms of 127.0.0.1 are read as the address they mean.
        for u in [
            "https://0x7f.1/",
            "https://2130706433/",
            "https://[::ffff:127.0.0.1]/",
        ] {
            assert!(
                matches!(check_url(u, strict), Err(Refusal::Host { .. })),
                "{u}"
            );
        }
        assert_eq!(
            check_url("not a url", strict).unwrap_err(),
            Refusal::Unparsable
        );
        let loopback = Policy {
            allow_loopback: true,
        };
        assert!(check_url("http://127.0.0.1:8080/mcp", loopback).is_ok());
        assert!(check_url("http://localhost:8080/mcp", loopback).is_err());
    }
}
