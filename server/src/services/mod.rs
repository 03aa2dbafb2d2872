//! What several HTTP surfaces share above storage: the agent behind a request and its
//! reputation, a service's benchmark block, the `source` block of every answer.

pub mod agents;
pub mod changes;
pub mod registry_view;
pub mod scores;
pub mod source;
