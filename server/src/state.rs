//! What every handler shares.

use std::sync::Arc;

use crate::db::Db;
use crate::gateway::Prowl;

/// Shared state of the app: the database and the deployment's name. Nothing else: rate
/// limits live in the database, so any number of servers can share one.
#[derive(Clone)]
pub struct AppState {
    /// Storage.
    pub db: Db,
    /// Named in every answer's `source` block, e.g. `lowdown-server (local)`.
    pub deployment: String,
    /// The sampling gateway: catalog, clock, upstream client (empty catalog by default).
    pub prowl: Arc<Prowl>,
}

impl AppState {
    /// State over `db`, naming the deployment `deployment`.
    pub fn new(db: Db, deployment: impl Into<String>) -> Self {
        AppState {
            db,
            deployment: deployment.into(),
            prowl: Arc::new(Prowl::default()),
        }
    }

    /// The same state serving `prowl`'s catalog and gateway.
    pub fn with_prowl(mut self, prowl: Prowl) -> Self {
        self.prowl = Arc::new(prowl);
        self
    }
}
