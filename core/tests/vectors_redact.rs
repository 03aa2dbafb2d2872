//! Runs `tests/vectors/redact.json` against `lowdown_core::redact::redact`.

mod common;

use lowdown_core::redact::{redact, MASK};
use serde_json::Value;
use std::borrow::Cow;

#[test]
fn redact_vectors() {
    common::check("redact.json", |input| {
        Ok(Value::String(
            redact(&common::string(&input["text"])).into_owned(),
        ))
    });
}

#[test]
fn redaction_is_idempotent_on_every_vector() {
    for case in common::load("redact.json") {
        let once = redact(&common::string(&case.input["text"])).into_owned();
        assert_eq!(redact(&once), once, "{}", case.name);
    }
}

#[test]
fn clean_text_is_borrowed_not_copied() {
    let text = "21:14:20 ERROR connect ECONNREFUSED 127.0.0.1:5432\n".repeat(1000);
    assert!(matches!(redact(&text), Cow::Borrowed(_)));
}

#[test]
fn a_canary_secret_never_survives_in_a_huge_line() {
    let canary = "sk-CANARYcanary0123456789abcdef";
    let text = format!("{} Bearer {canary} token={canary}", "x".repeat(12 << 20));
    let out = redact(&text);
    assert!(!out.contains("CANARY"), "canary leaked");
    assert_eq!(out.matches(MASK).count(), 2);
}
