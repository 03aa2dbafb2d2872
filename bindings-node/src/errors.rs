//! The one place core errors become JavaScript errors.
//!
//! Every core error serialises with a stable `type` (`#[serde(tag = "type")]`). It is thrown
//! as an `Error` whose `code` is that kind and whose `details` is the whole serialised error
//! (`{type, path, field, index, ...}` for validation errors), so callers and the vector
//! runners branch on `err.code === "invalid_json"`, never on message text. The message is
//! the core error's `Display`, which never quotes the caller's arguments.

use napi::bindgen_prelude::{Env, JsObjectValue, JsValue, Object};
use napi::JsError;
use serde::Serialize;
use std::fmt::Display;

/// The result of every export: on error, a JavaScript `Error` whose `code` is the core
/// error's kind. (Spelled `Result` so that `#[napi]` recognises it and throws.)
pub type Result<T> = napi::Result<T, String>;

/// Throws `err` as an `Error` with `code` (its serde `type`) and `details` (all its fields).
pub fn to_js_error<E: Serialize + Display>(env: &Env, err: E) -> napi::Error<String> {
    let details = serde_json::to_value(&err).unwrap_or_default();
    let kind = details
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("internal")
        .to_owned();
    let error = JsError::from(napi::Error::new(kind.clone(), err.to_string())).into_unknown(*env);
    let mut obj = Object::from_raw(env.raw(), error.raw());
    let thrown = env
        .to_js_value(&details)
        .and_then(|d| obj.set_named_property("details", d))
        .and_then(|()| env.throw(obj));
    match thrown {
        // Already thrown with its details; napi must not throw a second, plainer error.
        Ok(()) => napi::Error::new("PendingException".to_owned(), String::new()),
        Err(_) => napi::Error::new(kind, err.to_string()),
    }
}

/// A misuse of the API (wrong option shape, unknown enum name): `code: "invalid_argument"`.
pub fn invalid_argument(err: impl Display) -> napi::Error<String> {
    napi::Error::new("invalid_argument".to_owned(), err.to_string())
}

/// A napi failure (a value could not be built) in this error type.
pub fn from_napi(err: napi::Error) -> napi::Error<String> {
    napi::Error::new("internal".to_owned(), err.reason)
}
