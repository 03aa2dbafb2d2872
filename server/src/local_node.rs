//! `serve --local-node` and `--idle-exit`: the server as a user's local node (SPEC §2), the
//! one their hosts deliver to when no deployment is configured. What the node's files are
//! called and say is the core's ([`lowdown_core::local_node`]); here is their IO: the lock
//! held for the process's life, the announcement written once listening and removed at the
//! end, and the idle timer.

use std::fs::{File, OpenOptions, TryLockError};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use lowdown_core::local_node::{self, LocalNode};
use tokio::time::Instant;

/// The `serve` options of the local node.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct NodeArgs {
    /// Run as this user's local node: one per LOWDOWN_HOME (a second start exits at once),
    /// announced in LOWDOWN_HOME/local-node.json, on --listen or, when the default port is
    /// taken, another loopback port; loopback is trusted (the user's own records draw on no
    /// quota and no cap), and it ends after --idle-exit seconds without a request.
    #[arg(long)]
    pub local_node: bool,
    /// End after SECS without a request (default: never; 1800 with --local-node).
    #[arg(long, value_name = "SECS")]
    pub idle_exit: Option<u64>,
}

impl NodeArgs {
    /// Whether any of these options was given.
    pub fn any_given(&self) -> bool {
        self.local_node || self.idle_exit.is_some()
    }

    /// How long the server may go without a request, if it ends at all.
    pub fn idle(&self) -> Option<Duration> {
        self.idle_exit
            .or(self.local_node.then_some(local_node::IDLE_EXIT_SECS))
            .map(|s| Duration::from_secs(s.max(1)))
    }
}

/// The networks a local node trusts: loopback.
pub const TRUSTED: [&str; 2] = ["127.0.0.0/8", "::1/128"];

/// This process's hold on `LOWDOWN_HOME` as its local node; dropping it removes the
/// announcement (if it is still this process's) and releases the lock.
#[derive(Debug)]
pub struct Claim {
    _lock: File,
    announcement: PathBuf,
}

/// Takes the local node's lock in `home`; `None` when another process holds it.
pub fn claim(home: &Path) -> std::io::Result<Option<Claim>> {
    // A new LOWDOWN_HOME is 0700, as the server makes it (it holds the server's secrets).
    crate::files::prepare_home(home)?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(home.join(local_node::LOCK_NAME))?;
    match lock.try_lock() {
        Ok(()) => Ok(Some(Claim {
            _lock: lock,
            announcement: home.join(local_node::FILE_NAME),
        })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

impl Claim {
    /// The `LOWDOWN_HOME` this node serves.
    pub fn home(&self) -> &Path {
        self.announcement.parent().unwrap_or(Path::new("."))
    }

    /// Announces that this process listens at `addr` (written whole: a temporary file
    /// renamed over the old announcement).
    pub fn announce(&self, addr: SocketAddr, now_iso: &str) -> std::io::Result<()> {
        let node = LocalNode {
            url: format!("http://{addr}"),
            pid: std::process::id(),
            started_at: now_iso.to_owned(),
        };
        let tmp = self
            .announcement
            .with_extension(format!("{}.tmp", node.pid));
        std::fs::write(&tmp, local_node::format(&node))?;
        std::fs::rename(&tmp, &self.announcement)
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let ours = std::fs::read_to_string(&self.announcement)
            .ok()
            .and_then(|t| local_node::parse(&t))
            .is_some_and(|n| n.pid == std::process::id());
        if ours {
            let _ = std::fs::remove_file(&self.announcement);
        }
    }
}

/// Binds `addr`; for the local node on the default address, another loopback port when
/// that one is taken.
pub async fn bind(addr: SocketAddr, fall_back: bool) -> std::io::Result<tokio::net::TcpListener> {
    match tokio::net::TcpListener::bind(addr).await {
        Err(e) if fall_back && e.kind() == std::io::ErrorKind::AddrInUse => {
            tokio::net::TcpListener::bind(SocketAddr::new(addr.ip(), 0)).await
        }
        bound => bound,
    }
}

/// Requests in flight and when the last one ended, for [`idle`].
#[derive(Debug)]
pub struct Activity {
    in_flight: AtomicUsize,
    last: Mutex<Instant>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            in_flight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
        }
    }
}

impl Activity {
    fn last(&self) -> Instant {
        *self.last.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn touch(&self) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }
}

/// Middleware counting every request in [`Activity`].
pub async fn track(
    axum::extract::State(activity): axum::extract::State<Arc<Activity>>,
    request: Request,
    next: Next,
) -> Response {
    activity.in_flight.fetch_add(1, Ordering::AcqRel);
    activity.touch();
    let response = next.run(request).await;
    activity.touch();
    activity.in_flight.fetch_sub(1, Ordering::AcqRel);
    response
}

/// Resolves once no request has been in flight for `after`. While one is, it looks again
/// every `after`.
pub async fn idle(activity: Arc<Activity>, after: Duration) {
    loop {
        let now = Instant::now();
        let due = activity.last() + after;
        if activity.in_flight.load(Ordering::Acquire) == 0 && due <= now {
            return;
        }
        tokio::time::sleep_until(if due > now { due } else { now + after }).await;
    }
}
