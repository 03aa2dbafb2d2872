//! What every handler shares.

use std::sync::Arc;

use crate::db::Db;
use crate::ratelimit::RateLimiter;

/// Shared state of the app: the database, the deployment's name and the rate limiter.
#[derive(Clone)]
pub struct AppState {
    /// Storage.
    pub db: Db,
    /// Named in every answer's `source` block, e.g. `lowdown-server (local)`.
    pub deployment: String,
    /// Telemetry rate limits (in memory, per process).
    pub limiter: Arc<RateLimiter>,
}

impl AppState {
    /// State with the default rate limits.
    pub fn new(db: Db, deployment: impl Into<String>) -> Self {
        AppState {
            db,
            deployment: deployment.into(),
            limiter: Arc::new(RateLimiter::default()),
        }
    }
}
