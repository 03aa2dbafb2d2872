//! Runs `tests/vectors/target_label.json` against `lowdown_core::target_label::target_label`.

mod common;

use lowdown_core::target_label::{target_label, LabelFacts};
use serde_json::Value;

fn argv(input: &Value) -> Vec<String> {
    input["argv"]
        .as_array()
        .expect("argv")
        .iter()
        .map(|a| a.as_str().expect("string").to_owned())
        .collect()
}

/// The host's facts, when the case gives them (`LabelFacts::default()` otherwise).
fn facts(input: &Value) -> Result<LabelFacts, String> {
    match input.get("facts") {
        None | Some(Value::Null) => Ok(LabelFacts::default()),
        Some(f) => serde_json::from_value(f.clone()).map_err(|e| format!("bad facts: {e}")),
    }
}

#[test]
fn target_label_vectors() {
    common::check("target_label.json", |input| {
        Ok(target_label(&argv(input), &facts(input)?).map_or(Value::Null, Value::String))
    });
}

#[test]
fn labels_never_carry_arguments_credentials_or_private_hosts() {
    for case in common::load("target_label.json") {
        let label =
            target_label(&argv(&case.input), &facts(&case.input).unwrap()).unwrap_or_default();
        for canary in [
            "SECRET",
            "secret",
            "hunter2",
            "tok",
            "pw@",
            "val",
            "/Users",
            "/home",
            "localhost",
            ".internal",
            ".svc",
            "10.0.0",
            "?",
            "#",
            "@sha",
        ] {
            assert!(!label.contains(canary), "{}: {label}", case.name);
        }
    }
}
