//! Plain-object conversion both ways through serde: results become objects with the core's
//! snake_case keys; data inputs (exchanges, facts, counters) are read the same way.

use crate::errors::{from_napi, invalid_argument, to_js_error, Result};
use napi::bindgen_prelude::{Env, Unknown};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;
use std::fmt::Display;

/// A core value as a plain JavaScript value. Integers always cross as numbers: napi's
/// serializer refuses those above 2^32, so such a value is retried through JSON with them
/// written as doubles (what `JSON.parse` would give). The direct path is the fast one.
pub fn to_js<'e, T: Serialize>(env: &'e Env, value: &T) -> Result<Unknown<'e>> {
    env.to_js_value(value).or_else(|_| {
        let mut value = serde_json::to_value(value).map_err(invalid_argument)?;
        widen_integers(&mut value);
        env.to_js_value(&value).map_err(from_napi)
    })
}

/// A core value as JSON text (integers above 2^53 read back as doubles in `JSON.parse`,
/// as [`to_js`] gives them).
pub fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(invalid_argument)
}

fn widen_integers(v: &mut Value) {
    match v {
        Value::Number(n) if n.as_u64().is_some_and(|u| u > u64::from(u32::MAX)) => {
            // JavaScript numbers are doubles: this is the value JSON.parse would give.
            *v = n
                .as_f64()
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number);
        }
        Value::Array(a) => a.iter_mut().for_each(widen_integers),
        Value::Object(m) => m.values_mut().for_each(widen_integers),
        _ => {}
    }
}

/// A plain JavaScript value as a core type; a wrong shape throws `code: "invalid_argument"`.
pub fn from_js<T: DeserializeOwned>(env: &Env, value: Unknown<'_>) -> Result<T> {
    env.from_js_value(value)
        .map_err(|e| invalid_argument(e.reason))
}

/// An optional argument (absent, `undefined` or `null` all give `T::default()`) as a core
/// or mirror type.
pub fn from_js_or_default<T: DeserializeOwned + Default>(
    env: &Env,
    value: Option<Unknown<'_>>,
) -> Result<T> {
    let value: Option<Option<T>> = value.map(|v| from_js(env, v)).transpose()?;
    Ok(value.flatten().unwrap_or_default())
}

/// A core enum from its snake_case name (`"client_to_server"`, `"synthetic"`, ...).
pub fn parse_enum<T: DeserializeOwned>(name: &str) -> Result<T> {
    serde_json::from_value(Value::String(name.to_owned())).map_err(invalid_argument)
}

/// Runs a core validator on `body` (any plain value) and returns what it accepted; its error
/// is thrown with `code` = the problem's kind (see `errors.rs`).
pub fn validate_js<'e, T: Serialize, E: Serialize + Display>(
    env: &'e Env,
    body: Unknown<'_>,
    validate: impl FnOnce(&Value) -> std::result::Result<T, E>,
) -> Result<Unknown<'e>> {
    let body: Value = from_js(env, body)?;
    to_js(env, &validate(&body).map_err(|e| to_js_error(env, e))?)
}

/// An HTTP status from JavaScript; one past `u16` becomes 0, outside every status range.
pub fn http_status(status: Option<u32>) -> Option<u16> {
    status.map(|s| u16::try_from(s).unwrap_or(0))
}
