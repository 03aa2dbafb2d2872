//! The one place core errors become Python exceptions.
//!
//! Every core error serialises with a stable `type` (`#[serde(tag = "type")]`). It is raised
//! as `prowl.LowdownError` (a `ValueError`) whose `.type` and `.kind` attributes hold that
//! kind and whose `.details` holds the error's other fields. The message is the core
//! error's `Display`, which never quotes the caller's arguments.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::Serialize;
use std::fmt::Display;

pyo3::create_exception!(
    _native,
    LowdownError,
    PyValueError,
    "A core operation refused its input. `.type` (alias `.kind`) is the stable error kind, e.g. `\"invalid_json\"`; `.details` the error's other fields."
);

/// Converts any core error into a `LowdownError` carrying its kind.
pub fn to_py_err<E: Serialize + Display>(err: E) -> PyErr {
    let value = serde_json::to_value(&err).unwrap_or(serde_json::Value::Null);
    let kind = value
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("internal")
        .to_owned();
    raise(&kind, err.to_string(), &value)
}

/// Converts a failed argument conversion (wrong option shape, unknown enum name).
pub fn invalid_argument(err: impl Display) -> PyErr {
    raise(
        "invalid_argument",
        err.to_string(),
        &serde_json::Value::Null,
    )
}

fn raise(kind: &str, message: String, details: &serde_json::Value) -> PyErr {
    Python::attach(|py| {
        let err = LowdownError::new_err(message);
        let value = err.value(py);
        let details = pythonize::pythonize(py, details).ok();
        // Setting attributes on a fresh exception instance cannot fail; ignore to stay infallible.
        let _ = value.setattr("type", kind);
        let _ = value.setattr("kind", kind);
        let _ = value.setattr("details", details);
        err
    })
}
