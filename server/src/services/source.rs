//! The `source` block closing every answer (SPEC §5): which dataset, under which licence,
//! when, and how to cite it. The decision behind the names is in the server README.

use serde::Serialize;

use crate::clock;
use crate::state::AppState;

/// Licence of everything an answer publishes.
pub const LICENSE: &str = "CC BY 4.0";
/// Where the licence text is.
pub const LICENSE_URL: &str = "https://creativecommons.org/licenses/by/4.0/";

/// The dataset an answer of this deployment comes from: `Lowdown records: <deployment>`.
pub fn dataset(state: &AppState) -> String {
    dataset_of(&state.deployment)
}

/// `Lowdown records: <deployment>`, for a deployment name.
pub fn dataset_of(deployment: &str) -> String {
    format!("Lowdown records: {deployment}")
}

/// The attribution line: `<dataset>, <subject>, retrieved <at>. CC BY 4.0, <licence URL>`
/// (an answer's `cite`, and the dataset's `REPORT.md`, `LICENSE` and dataset card).
pub fn cite(dataset: &str, subject: &str, at: &str) -> String {
    format!("{dataset}, {subject}, retrieved {at}. {LICENSE}, {LICENSE_URL}")
}

/// Always the answer's last field: where the numbers come from and how to cite them
/// (serialised in this field order).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Source {
    /// `Lowdown records: <deployment name>`.
    pub dataset: String,
    /// Always `CC BY 4.0`.
    #[schemars(extend("const" = LICENSE))]
    pub license: &'static str,
    /// When the answer was given (ISO-8601, UTC).
    #[schemars(extend("format" = "date-time"))]
    pub retrieved_at: String,
    /// `<dataset>, <subject>, retrieved <retrieved_at>. CC BY 4.0,
    /// https://creativecommons.org/licenses/by/4.0/`: include it when republishing.
    pub cite: String,
}

/// `{dataset, license, retrieved_at, cite}` for an answer about `subject` (a target, or
/// the compared targets) given at `now` (unix ms).
pub fn block(state: &AppState, now: i64, subject: &str) -> Source {
    let dataset = dataset(state);
    let at = clock::iso(now);
    Source {
        cite: cite(&dataset, subject, &at),
        dataset,
        license: LICENSE,
        retrieved_at: at,
    }
}
