//! The host protocol prowl follows like every other host (SPEC §2, §3.5): settings from the
//! environment and the node identity file's format; prowl keeps only the IO.

use lowdown_core::{identity, settings};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::HashMap;

/// The settings of a host (``client``: ``"proxy"`` or ``"telemetry"``) from its environment
/// and the user's home directory: ``{api_url, home, record, telemetry, debug}``.
#[pyfunction]
pub fn settings_from_env<'py>(
    py: Python<'py>,
    env: HashMap<String, String>,
    user_home: &str,
    client: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let client = match client {
        "proxy" => settings::Client::Proxy,
        "telemetry" => settings::Client::Telemetry,
        _ => return Err(PyValueError::new_err("client must be proxy or telemetry")),
    };
    let s = settings::from_env(&|k| env.get(k).cloned(), user_home, client);
    crate::convert::to_py(py, &s)
}

/// The identity a ``node.json`` holds (``{node_id, created_at}``), or ``None`` when its text
/// is not one (make a new one and replace the file).
#[pyfunction]
pub fn parse_node_identity<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    crate::convert::to_py(py, &identity::parse(text))
}

/// A new node identity's ``node.json`` text, from 6 random bytes (12 hex digits) and the clock.
#[pyfunction]
pub fn new_node_identity(random_hex: &str, now_iso: &str) -> PyResult<String> {
    identity::new_identity_hex(random_hex, now_iso)
        .map(|id| identity::format(&id))
        .ok_or_else(|| PyValueError::new_err("random_hex must be 12 hex digits"))
}

/// Adds these functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(settings_from_env, m)?)?;
    m.add_function(wrap_pyfunction!(parse_node_identity, m)?)?;
    m.add_function(wrap_pyfunction!(new_node_identity, m)?)?;
    Ok(())
}
