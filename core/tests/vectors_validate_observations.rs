//! Golden vectors for `telemetry::validate_observations`, including each error's path.
mod common;
use lowdown_core::telemetry::validate_observations;
use serde_json::Value;

#[test]
fn validate_observations_vectors() {
    common::check(
        "validate_observations.json",
        |input| match validate_observations(&input["body"]) {
            Ok(obs) => {
                let out = serde_json::to_value(obs).unwrap();
                assert!(
                    !out.to_string().contains("CANARY"),
                    "an unknown field was kept: {out}"
                );
                Ok(out)
            }
            Err(e) => Err(common::error_kind(&e)),
        },
    );
}

#[test]
fn validate_observations_errors_name_their_path() {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/validate_observations.json"
    ));
    let doc: Value = serde_json::from_str(text).unwrap();
    for case in doc["cases"].as_array().unwrap() {
        let Some(path) = case["error_path"].as_str() else {
            continue;
        };
        let e = validate_observations(&common::expand(&case["input"])["body"]).unwrap_err();
        assert_eq!(e.path, path, "{}", case["name"]);
    }
}
