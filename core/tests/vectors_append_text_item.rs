//! Runs `tests/vectors/append_text_item.json` against `lowdown_core::logdiff::append_text_item`.

mod common;

use lowdown_core::logdiff::append_text_item;
use serde_json::Value;

#[test]
fn append_text_item_vectors() {
    common::check("append_text_item.json", |input| {
        let out = append_text_item(
            &common::bytes(&input["message"]),
            &common::string(&input["text"]),
        );
        Ok(out.map_or(Value::Null, |b| {
            Value::String(String::from_utf8(b).expect("UTF-8 out"))
        }))
    });
}

#[test]
fn a_ten_megabyte_result_keeps_every_byte() {
    let body = "x".repeat(10 << 20);
    let msg = format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{body}\"}}]}}}}");
    let out = append_text_item(msg.as_bytes(), "log").expect("rewritten");
    let tail = b",{\"type\":\"text\",\"text\":\"log\"}]}}";
    assert_eq!(out.len(), msg.len() + tail.len() - 3);
    assert_eq!(&out[..msg.len() - 3], &msg.as_bytes()[..msg.len() - 3]);
    assert!(out.ends_with(tail));
}
