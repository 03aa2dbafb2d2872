//! Plain-object conversion both ways through serde (pythonize): results become dicts and
//! lists with the core's snake_case keys; data inputs (records to validate) are read the
//! same way.

use crate::errors::invalid_argument;
use pyo3::prelude::*;
use serde::{de::DeserializeOwned, Serialize};

/// A core value as plain Python data.
pub fn to_py<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, value)?)
}

/// Plain Python data as a core type; a wrong shape raises `invalid_argument`.
pub fn from_py<T: DeserializeOwned>(value: &Bound<'_, PyAny>) -> PyResult<T> {
    pythonize::depythonize(value).map_err(invalid_argument)
}

/// A core enum from its snake_case name (`"organic"`, `"synthetic"`, ...).
pub fn parse_enum<T: DeserializeOwned>(name: &str) -> PyResult<T> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).map_err(invalid_argument)
}
