//! Golden vectors for `aggregate::outcome_class`.
mod common;
use lowdown_core::aggregate::outcome_class;

#[test]
fn outcome_class_vectors() {
    common::check("outcome_class.json", |input| {
        let kind =
            serde_json::from_value(input["request_kind"].clone()).map_err(|e| e.to_string())?;
        let outcome =
            serde_json::from_value(input["outcome"].clone()).map_err(|e| e.to_string())?;
        let layer =
            serde_json::from_value(input["error_layer"].clone()).map_err(|e| e.to_string())?;
        Ok(serde_json::to_value(outcome_class(kind, outcome, layer)).unwrap())
    });
}
