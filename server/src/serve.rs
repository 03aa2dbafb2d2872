//! Running the app on a socket with graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

use crate::listen::Limits;
use crate::local_node::{track, Activity};
use crate::state::AppState;

/// Serves `state` on `listener` with the default [`Limits`] until `shutdown` resolves; see
/// [`serve_within`].
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_within(listener, state, Limits::default(), None, shutdown).await
}

/// Serves `state` on `listener` within `limits` until `shutdown` resolves, counting every
/// request in `activity` when given (`--idle-exit`); then stops accepting, lets in-flight
/// requests finish (their transactions commit before their answers are sent), and closes
/// the database pool.
pub async fn serve_within(
    listener: TcpListener,
    state: AppState,
    limits: Limits,
    activity: Option<Arc<Activity>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let db = state.db.clone();
    let mut app = crate::routes::app(state);
    if let Some(activity) = activity {
        app = app.layer(axum::middleware::from_fn_with_state(activity, track));
    }
    crate::listen::serve(listener, app, limits, shutdown).await?;
    db.close().await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down: draining in-flight requests");
}
