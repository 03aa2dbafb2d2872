//! Runs `tests/vectors/schema_hash.json` against `lowdown_core::schema_hash`.

mod common;

use lowdown_core::schema_hash::{hash_tools, hash_tools_result, SchemaHashError};
use serde_json::Value;

fn kind(e: SchemaHashError) -> String {
    common::error_kind(&e)
}

#[test]
fn schema_hash_vectors() {
    common::check("schema_hash.json", |input| {
        let out = if let Some(tools) = input.get("tools_json") {
            hash_tools(&common::bytes(tools))
        } else {
            hash_tools_result(&common::bytes(&input["result_json"]))
        };
        out.map(|h| serde_json::to_value(h).expect("serialises"))
            .map_err(kind)
    });
}

#[test]
fn error_kinds_serialise_with_a_type_tag() {
    let e = hash_tools_result(b"{").unwrap_err();
    let v: Value = serde_json::to_value(&e).unwrap();
    assert_eq!(v["type"], "invalid_json");
    assert!(e.to_string().starts_with("invalid JSON"), "{e}");
    let deep = "[".repeat(10_000);
    assert_eq!(kind(hash_tools(deep.as_bytes()).unwrap_err()), "too_deep");
}
