//! Golden vectors for `aggregate::compare` over summaries of the given counts.
mod common;
use lowdown_core::aggregate::{compare, summarize, Independence, SourceCounts};

#[test]
fn compare_vectors() {
    common::check("compare.json", |input| {
        let mut candidates = Vec::new();
        for c in input["candidates"].as_array().unwrap() {
            let counts: SourceCounts =
                serde_json::from_value(c["counts"].clone()).map_err(|e| e.to_string())?;
            let who: Independence = common::optional(c, "independence")?;
            candidates.push((
                c["target"].as_str().unwrap().to_owned(),
                summarize(&counts, &who),
            ));
        }
        match compare(&candidates) {
            Ok(c) => Ok(serde_json::to_value(c).unwrap()),
            Err(e) => Err(common::error_kind(&e)),
        }
    });
}
