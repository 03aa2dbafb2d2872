//! Golden vectors for `aggregate::summarize`.
mod common;
use lowdown_core::aggregate::{summarize, Independence, SourceCounts};

#[test]
fn summarize_vectors() {
    common::check("summarize.json", |input| {
        let counts: SourceCounts =
            serde_json::from_value(input["counts"].clone()).map_err(|e| e.to_string())?;
        let who: Independence = common::optional(input, "independence")?;
        Ok(serde_json::to_value(summarize(&counts, &who)).unwrap())
    });
}
