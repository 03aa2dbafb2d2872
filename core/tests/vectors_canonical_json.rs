//! Runs `tests/vectors/canonical_json.json` against `lowdown_core::schema_hash::canonical_json`.

mod common;

use lowdown_core::schema_hash::canonical_json;
use serde_json::Value;

#[test]
fn canonical_json_vectors() {
    common::check("canonical_json.json", |input| {
        canonical_json(&common::bytes(&input["json"]))
            .map(Value::String)
            .map_err(|e| common::error_kind(&e))
    });
}
