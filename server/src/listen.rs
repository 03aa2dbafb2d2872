//! The two listeners (the API and the gateway): HTTP/1.1 with timeouts and connection caps,
//! so a slow or stalled client cannot hold the server, nor one address every connection.
//!
//! - **Header timeout** (hyper's): the whole request head must arrive within it, counted
//!   from when the connection starts waiting for a request. So it also closes a keep-alive
//!   connection that stays idle that long.
//! - **Body deadline**: the request body must be read in full within it from the head;
//!   otherwise the answer is `408` and the connection is closed.
//! - **Connection caps**: per client address (an IPv4 address, an IPv6 /64; a
//!   `--trusted-proxy` only counts in the total) and in total. A connection over a cap is
//!   closed as soon as it is accepted, so everyone else keeps being answered.

mod body;
mod conns;

use std::future::Future;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::caller::TrustedProxies;

pub use conns::Conns;

/// Default `--header-timeout`, seconds.
pub const HEADER_TIMEOUT_SECS: u64 = 10;
/// Default `--body-timeout`, seconds.
pub const BODY_TIMEOUT_SECS: u64 = 30;
/// Default `--max-connections-per-address`.
pub const MAX_PER_ADDRESS: usize = 256;
/// Default `--max-connections` (lowered to half the process's file limit when that is less).
pub const MAX_CONNECTIONS: usize = 8192;

/// The listeners' options of `serve` (they apply to the API and the gateway alike).
#[derive(Debug, Clone, clap::Args)]
pub struct ListenArgs {
    /// Seconds a connection may take to send a request head, counted from when it
    /// starts waiting for one (so an idle keep-alive connection closes after it too).
    #[arg(long, value_name = "SECS", default_value_t = HEADER_TIMEOUT_SECS)]
    pub header_timeout: u64,
    /// Seconds a request body may take to arrive in full, from its head (then 408).
    #[arg(long, value_name = "SECS", default_value_t = BODY_TIMEOUT_SECS)]
    pub body_timeout: u64,
    /// Open connections from one client address (an IPv4 address, an IPv6 /64) per
    /// listener; a `--trusted-proxy` counts only in --max-connections.
    #[arg(long, value_name = "N", default_value_t = MAX_PER_ADDRESS)]
    pub max_connections_per_address: usize,
    /// Open connections per listener in all (at most half the process's open-file limit).
    #[arg(long, value_name = "N", default_value_t = MAX_CONNECTIONS)]
    pub max_connections: usize,
}

impl Default for ListenArgs {
    fn default() -> Self {
        ListenArgs {
            header_timeout: HEADER_TIMEOUT_SECS,
            body_timeout: BODY_TIMEOUT_SECS,
            max_connections_per_address: MAX_PER_ADDRESS,
            max_connections: MAX_CONNECTIONS,
        }
    }
}

impl ListenArgs {
    /// Whether any option differs from its default (they belong to `serve`).
    pub fn any_given(&self) -> bool {
        self.header_timeout != HEADER_TIMEOUT_SECS
            || self.body_timeout != BODY_TIMEOUT_SECS
            || self.max_connections_per_address != MAX_PER_ADDRESS
            || self.max_connections != MAX_CONNECTIONS
    }

    /// The limits, with `proxies` exempt from the per-address cap and the total within
    /// the open-file limit (`open_files`, when known).
    pub fn limits(&self, proxies: TrustedProxies, open_files: Option<u64>) -> Limits {
        let mut total = self.max_connections.max(1);
        if let Some(n) = open_files {
            let room = usize::try_from(n / 2).unwrap_or(usize::MAX).max(1);
            if room < total {
                tracing::warn!(
                    max_connections = total,
                    open_file_limit = n,
                    "--max-connections lowered to {room}, half the open-file limit"
                );
                total = room;
            }
        }
        Limits {
            header: Duration::from_secs(self.header_timeout.max(1)),
            body: Duration::from_secs(self.body_timeout.max(1)),
            per_address: self.max_connections_per_address.max(1),
            total,
            proxies,
        }
    }
}

/// What one listener enforces.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Time for a request head, counted from when the connection waits for one.
    pub header: Duration,
    /// Time for a whole request body, from its head.
    pub body: Duration,
    /// Open connections per client address.
    pub per_address: usize,
    /// Open connections in all.
    pub total: usize,
    /// Addresses that count only in the total (a load balancer's).
    pub proxies: TrustedProxies,
}

impl Default for Limits {
    fn default() -> Self {
        ListenArgs::default().limits(TrustedProxies::default(), None)
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown` resolves; then stops
/// accepting and lets open connections finish their requests. Handlers see the peer as
/// `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = body::with_deadline(router, limits.body);
    let conns = Conns::new(limits.per_address, limits.total, limits.proxies.clone());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(());
    let (open_tx, open_rx) = tokio::sync::watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors or a connection reset before accept: the
                    // listener itself is fine; pause a moment rather than spin.
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(slot) = conns.admit(peer.ip()) else {
            tracing::debug!(%peer, "connection over the cap closed");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let mut stop = stop_rx.clone();
        let open = open_rx.clone();
        let header = limits.header;
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                router.clone().oneshot(req.map(axum::body::Body::new))
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => { if let Err(e) = r { tracing::debug!(error = %e, %peer, "connection ended"); } }
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(slot);
            drop(open);
        });
    }
    drop(listener);
    drop(stop_tx);
    drop(open_rx);
    open_tx.closed().await;
    Ok(())
}

/// The process's soft open-file limit, raised to the hard limit first when it is lower.
#[cfg(unix)]
#[allow(
    unsafe_code,
    reason = "getrlimit/setrlimit through libc, the one way to read the open-file limit"
)]
pub fn open_file_limit() -> Option<libc::rlim_t> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed in.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    Some(lim.rlim_cur)
}

/// Unknown off Unix.
#[cfg(not(unix))]
pub fn open_file_limit() -> Option<u64> {
    None
}
