//! Golden vectors for `record::validate::validate_records`, including the error path
//! (`error_path`, e.g. `records[2].outcome`) each rejection must name.
mod common;
use lowdown_core::record::validate::{
    validate_record, validate_records, ValidationError, MAX_BATCH,
};
use lowdown_core::record::InteractionRecord;
use serde_json::{json, Value};

fn kind(e: &ValidationError) -> String {
    common::error_kind(e)
}

fn run(input: &Value) -> Result<Value, String> {
    match validate_records(&input["body"]) {
        Ok(records) => {
            let out = serde_json::to_value(records).unwrap();
            assert!(
                !out.to_string().contains("CANARY"),
                "an unknown field was kept: {out}"
            );
            Ok(out)
        }
        Err(e) => Err(kind(&e)),
    }
}

#[test]
fn validate_records_vectors() {
    common::check("validate_records.json", run);
}

#[test]
fn validate_records_errors_name_their_path() {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/validate_records.json"
    ));
    let doc: Value = serde_json::from_str(text).unwrap();
    let mut checked = 0;
    for case in doc["cases"].as_array().unwrap() {
        let Some(path) = case["error_path"].as_str() else {
            continue;
        };
        let e = validate_records(&common::expand(&case["input"])["body"])
            .expect_err(case["name"].as_str().unwrap());
        assert_eq!(e.path, path, "{}", case["name"]);
        assert!(e.to_string().starts_with(&format!("{path}: ")), "{e}");
        checked += 1;
    }
    assert!(checked > 40, "only {checked} error paths checked");
}

fn minimal() -> Value {
    json!({"target": "npm:x", "target_type": "tool", "task_type": "echo", "outcome": "success"})
}

#[test]
fn a_full_batch_is_accepted_and_one_more_is_not() {
    let full = Value::Array(vec![minimal(); MAX_BATCH]);
    assert_eq!(validate_records(&full).unwrap().len(), MAX_BATCH);
    let over = Value::Array(vec![minimal(); MAX_BATCH + 1]);
    assert_eq!(
        validate_records(&over).unwrap_err().to_string(),
        "records: must hold 1 to 1000 items, got 1001"
    );
}

#[test]
fn the_error_text_is_what_the_api_shows() {
    let mut bad = minimal();
    bad["outcome"] = json!("won");
    let e = validate_records(&json!([minimal(), minimal(), minimal(), bad])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "records[3].outcome: must be one of success|partial|failure|cancelled"
    );
    assert_eq!(e.index, Some(3));
    assert_eq!(e.field, "outcome");
    let wire = serde_json::to_value(&e).unwrap();
    assert_eq!(wire["type"], "unknown_value");
    assert_eq!(wire["path"], "records[3].outcome");
}

#[test]
fn messages_never_echo_the_submitted_value() {
    let mut bad = minimal();
    bad["target"] = json!(format!("CANARY{}", "x".repeat(300)));
    let e = validate_record(&bad).unwrap_err();
    assert_eq!(e.to_string(), "target: must be at most 256 characters");
    bad["target"] = json!("CANARY\u{7}");
    assert!(!validate_record(&bad)
        .unwrap_err()
        .to_string()
        .contains("CANARY"));
}

/// Built records the server rightly refuses, with the refusal. `build` with an empty
/// context has no target label; the proxy always supplies one, and a record naming no
/// target says nothing about anything, so the API answers 400 rather than store it.
const NOT_SENDABLE: &[(&str, &str)] = &[(
    "context defaults fill missing fields",
    "target: must not be empty",
)];

/// The contract between the proxy and the server: every record `record::build` is expected
/// to produce (tests/vectors/record_build.json) passes validation unchanged.
#[test]
fn every_built_record_is_accepted_unchanged() {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/record_build.json"
    ));
    let doc: Value = serde_json::from_str(text).unwrap();
    let mut checked = 0;
    for case in doc["cases"].as_array().unwrap() {
        let Some(built) = case.get("expected").filter(|e| e.is_object()) else {
            continue;
        };
        let name = case["name"].as_str().unwrap();
        if let Some((_, why)) = NOT_SENDABLE.iter().find(|(n, _)| *n == name) {
            let e = validate_record(built).expect_err(name);
            assert_eq!(e.to_string(), *why, "{name}");
            continue;
        }
        let record = validate_record(built).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Compared as records, so `240` and `240.0` are the same latency.
        let as_built: InteractionRecord = serde_json::from_value(built.clone()).unwrap();
        assert_eq!(record, as_built, "{}", case["name"]);
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} built records checked");
}
