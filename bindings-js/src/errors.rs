//! The one place core errors become JavaScript errors, for both builds.
//!
//! Every core error serialises with a stable `type` (`#[serde(tag = "type")]`); it is thrown as
//! an `Error` whose `code` is that kind and whose message is the core error's `Display`, which
//! never quotes the caller's arguments. Callers branch on `err.code`, never on the text.

#[cfg(feature = "proxy")]
use serde::Serialize;
use std::fmt::Display;

/// What every fallible export returns; on error a JavaScript `Error` with `code`.
#[cfg(not(target_arch = "wasm32"))]
pub type Result<T> = napi::Result<T, String>;
/// What every fallible export returns; on error a JavaScript `Error` with `code`.
#[cfg(target_arch = "wasm32")]
pub type Result<T> = std::result::Result<T, wasm_bindgen::JsValue>;

/// The error thrown for a core error.
#[cfg(not(target_arch = "wasm32"))]
pub type Error = napi::Error<String>;
/// The error thrown for a core error.
#[cfg(target_arch = "wasm32")]
pub type Error = wasm_bindgen::JsValue;

/// A core error as a thrown `Error` with `code` = its serde `type`.
#[cfg(feature = "proxy")]
pub fn core_error<E: Serialize + Display>(err: E) -> Error {
    let kind = serde_json::to_value(&err)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "internal".to_owned());
    error(&kind, &err.to_string())
}

/// A misuse of the API (bad JSON options, unknown enum name): `code: "invalid_argument"`.
#[allow(
    dead_code,
    reason = "unused only in builds without a feature that needs it"
)]
pub fn invalid_argument(err: impl Display) -> Error {
    error("invalid_argument", &err.to_string())
}

#[cfg(not(target_arch = "wasm32"))]
fn error(kind: &str, message: &str) -> Error {
    napi::Error::new(kind.to_owned(), message.to_owned())
}

#[cfg(target_arch = "wasm32")]
fn error(kind: &str, message: &str) -> Error {
    let err = js_sys::Error::new(message);
    // Setting a property on a fresh, extensible Error cannot fail.
    let _ = js_sys::Reflect::set(&err, &"code".into(), &kind.into());
    err.into()
}

/// Options or other structured input given as JSON text (`null`/absent: the default).
#[cfg(feature = "proxy")]
pub fn from_json<T: serde::de::DeserializeOwned + Default>(json: Option<&str>) -> Result<T> {
    match json {
        None | Some("") | Some("null") => Ok(T::default()),
        Some(text) => serde_json::from_str(text).map_err(invalid_argument),
    }
}

/// Optional text as JavaScript sees it: `null` when absent, in both builds (wasm-bindgen alone
/// would give `undefined`, napi gives `null`).
#[cfg(not(target_arch = "wasm32"))]
pub type OptText = Option<String>;
/// Optional text as JavaScript sees it: `null` when absent, in both builds (wasm-bindgen alone
/// would give `undefined`, napi gives `null`).
#[cfg(target_arch = "wasm32")]
pub type OptText = wasm_bindgen::JsValue;

/// `text`, or `null` (see [`OptText`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn opt_text(text: Option<String>) -> OptText {
    text
}
/// `text`, or `null` (see [`OptText`]).
#[cfg(target_arch = "wasm32")]
pub fn opt_text(text: Option<String>) -> OptText {
    text.map_or(wasm_bindgen::JsValue::NULL, Into::into)
}
