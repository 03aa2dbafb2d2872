//! What several HTTP surfaces share above storage: the agent behind a request and its
//! reputation, a service's benchmark block, the `source` block of every answer, and the
//! storing of interaction records whichever route brought them.

pub mod agents;
pub mod changes;
pub mod records;
pub mod registry_view;
pub mod scores;
pub mod source;
