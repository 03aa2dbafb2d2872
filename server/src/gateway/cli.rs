//! The gateway's `serve` options.

use std::net::SocketAddr;

/// `--gateway-listen`, `--gateway-timeout` (`--unsafe-allow-loopback` is shared with the
/// Scanner: `crate::scanner::cli::ScanArgs`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GatewayArgs {
    /// Also serve the sampling gateway (`/{slug}/{path}` for each service in
    /// services.toml) on this address, in the same process.
    #[arg(long, value_name = "ADDR")]
    pub gateway_listen: Option<SocketAddr>,
    /// Seconds the gateway waits for an upstream's response headers, and for each read
    /// of its body, before answering 504.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub gateway_timeout: u64,
}

impl GatewayArgs {
    /// Whether any option was given (they belong to `serve`).
    pub fn any_given(&self) -> bool {
        self.gateway_listen.is_some() || self.gateway_timeout != 30
    }
}

/// Serves the gateway router on `listener` with the default listener limits; see
/// [`serve_gateway_within`].
pub async fn serve_gateway(
    listener: tokio::net::TcpListener,
    state: crate::state::AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_gateway_within(listener, state, crate::listen::Limits::default(), shutdown).await
}

/// Serves the gateway router on `listener` within `limits` until `shutdown` resolves,
/// letting in-flight calls (streams included) finish.
pub async fn serve_gateway_within(
    listener: tokio::net::TcpListener,
    state: crate::state::AppState,
    limits: crate::listen::Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    crate::listen::serve(listener, super::proxy::router(state), limits, shutdown).await
}
