//! Golden vectors for `aggregate::message`.
mod common;
use lowdown_core::aggregate::{message, summarize, Independence, SourceCounts};

#[test]
fn message_vectors() {
    common::check("message.json", |input| {
        let counts: SourceCounts =
            serde_json::from_value(input["counts"].clone()).map_err(|e| e.to_string())?;
        let who: Independence = common::optional(input, "independence")?;
        Ok(message(input["target"].as_str().unwrap(), &summarize(&counts, &who)).into())
    });
}
