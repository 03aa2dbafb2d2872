//! Plain-object conversion both ways through serde: results become objects with the core's
//! snake_case keys; data inputs (exchanges, facts, counters) are read the same way.

use crate::errors::{from_napi, invalid_argument, Result};
use napi::bindgen_prelude::{Env, Unknown};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

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

/// A core enum from its snake_case name (`"client_to_server"`, `"synthetic"`, ...).
pub fn parse_enum<T: DeserializeOwned>(name: &str) -> Result<T> {
    serde_json::from_value(Value::String(name.to_owned())).map_err(invalid_argument)
}
