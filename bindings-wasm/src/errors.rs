//! The one place core errors become JavaScript errors.
//!
//! Every core error serialises with a stable `type` (`#[serde(tag = "type")]`). It is thrown
//! as a `js_sys::Error` whose `code` is that kind and whose `details` is the whole serialised
//! error (`{type, path, field, index, ...}` for validation errors), exactly as the napi
//! binding throws it, so one `catch` works for both. The message is the core error's
//! `Display`, which never quotes the caller's arguments.

use serde::Serialize;
use std::fmt::Display;
use wasm_bindgen::JsValue;

/// The result of every export: on error, a thrown `Error` with `code` = the error's kind.
pub type Result<T> = std::result::Result<T, JsValue>;

/// Converts any core error into an `Error` carrying its kind and details.
pub fn to_js_error<E: Serialize + Display>(err: E) -> JsValue {
    let details = serde_json::to_value(&err).unwrap_or_default();
    let kind = details
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("internal");
    error(kind, &err.to_string(), &details)
}

/// A misuse of the API (wrong option shape, unknown enum name): `code: "invalid_argument"`.
pub fn invalid_argument(err: impl Display) -> JsValue {
    error(
        "invalid_argument",
        &err.to_string(),
        &serde_json::Value::Null,
    )
}

fn error(kind: &str, message: &str, details: &serde_json::Value) -> JsValue {
    let err = js_sys::Error::new(message);
    let details = details
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL);
    // Reflect::set on a fresh, extensible Error object cannot fail.
    let _ = js_sys::Reflect::set(&err, &"code".into(), &kind.into());
    let _ = js_sys::Reflect::set(&err, &"details".into(), &details);
    err.into()
}
