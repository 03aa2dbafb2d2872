//! The `source` block closing every answer (SPEC §5): which dataset, under which licence,
//! when, and how to cite it. The decision behind the names is in the server README.

use serde_json::{json, Value};

use crate::clock;
use crate::state::AppState;

/// Licence of everything an answer publishes.
pub const LICENSE: &str = "CC BY 4.0";
/// Where the licence text is.
pub const LICENSE_URL: &str = "https://creativecommons.org/licenses/by/4.0/";

/// The dataset an answer of this deployment comes from: `Lowdown records: <deployment>`.
pub fn dataset(state: &AppState) -> String {
    format!("Lowdown records: {}", state.deployment)
}

/// `{dataset, license, retrieved_at, cite}` for an answer about `subject` (a target, or
/// the compared targets) given at `now` (unix ms).
pub fn block(state: &AppState, now: i64, subject: &str) -> Value {
    let dataset = dataset(state);
    let at = clock::iso(now);
    json!({
        "dataset": dataset,
        "license": LICENSE,
        "retrieved_at": at,
        "cite": format!("{dataset}, {subject}, retrieved {at}. {LICENSE}, {LICENSE_URL}"),
    })
}
