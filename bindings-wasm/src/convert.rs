//! Plain-object conversion both ways, JSON-compatible (objects, not `Map`s; `null`, not
//! `undefined`; integers as numbers), so results compare equal to the vectors' JSON.

use crate::errors::{invalid_argument, Result};
use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::JsValue;

/// A core value as a plain JavaScript value.
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(invalid_argument)
}

/// A plain JavaScript value as a core (or mirror) type; `undefined` and `null` read as absent.
/// It is read as JSON first so that every key is seen: serde-wasm-bindgen looks up only the
/// fields a struct declares, which would let a misspelt option pass unnoticed.
pub fn from_js<T: DeserializeOwned>(value: JsValue) -> Result<T> {
    let json: serde_json::Value =
        serde_wasm_bindgen::from_value(value).map_err(invalid_argument)?;
    serde_json::from_value(json).map_err(invalid_argument)
}

/// A core enum from its snake_case name (`"client_to_server"`, `"synthetic"`, ...).
pub fn parse_enum<T: DeserializeOwned>(name: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).map_err(invalid_argument)
}
