//! Golden vectors for `sample::salt_epoch` and `sample::accepted_epochs`.
mod common;
use lowdown_core::sample::{accepted_epochs, salt_epoch};
use serde_json::json;

#[test]
fn salt_epochs_vectors() {
    common::check("salt_epochs.json", |input| {
        let now = input["now_ms"].as_i64().unwrap();
        Ok(json!({"epoch": salt_epoch(now), "accepted": accepted_epochs(now)}))
    });
}
