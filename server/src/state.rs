//! What every handler shares.

use crate::db::Db;

/// Shared state of the app: the database and the deployment's name. Nothing else: rate
/// limits live in the database, so any number of servers can share one.
#[derive(Clone)]
pub struct AppState {
    /// Storage.
    pub db: Db,
    /// Named in every answer's `source` block, e.g. `lowdown-server (local)`.
    pub deployment: String,
}

impl AppState {
    /// State over `db`, naming the deployment `deployment`.
    pub fn new(db: Db, deployment: impl Into<String>) -> Self {
        AppState {
            db,
            deployment: deployment.into(),
        }
    }
}
