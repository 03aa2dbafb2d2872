//! Runs `tests/vectors/target_label.json` against `lowdown_core::target_label::target_label`.

mod common;

use lowdown_core::target_label::target_label;
use serde_json::Value;

fn argv(input: &Value) -> Vec<String> {
    input["argv"]
        .as_array()
        .expect("argv")
        .iter()
        .map(|a| a.as_str().expect("string").to_owned())
        .collect()
}

#[test]
fn target_label_vectors() {
    common::check("target_label.json", |input| {
        Ok(target_label(&argv(input)).map_or(Value::Null, Value::String))
    });
}

#[test]
fn labels_never_carry_arguments_or_credentials() {
    for case in common::load("target_label.json") {
        let label = target_label(&argv(&case.input)).unwrap_or_default();
        for canary in [
            "SECRET", "secret", "hunter2", "tok", "pw@", "val", "/Users", "/home",
        ] {
            assert!(!label.contains(canary), "{}: {label}", case.name);
        }
    }
}
