//! The host protocol prowl follows like every other host (SPEC §2, §3.5): settings from the
//! environment and where to deliver (node.json's plan is in `plans`); prowl keeps only the
//! IO.

use lowdown_core::{settings, stored};
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

/// Where a host with ``settings`` (from :func:`settings_from_env`) delivers, given the texts
/// of ``config.json`` and ``local-node.json`` (``None``: missing): ``{url, via, may_start}``.
#[pyfunction]
#[pyo3(signature = (settings, stored_text, announcement))]
pub fn destination<'py>(
    py: Python<'py>,
    settings: &Bound<'py, PyAny>,
    stored_text: Option<&str>,
    announcement: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let s: settings::Settings = crate::convert::from_py(settings)?;
    crate::convert::to_py(py, &stored::destination(&s, stored_text, announcement))
}

/// Adds these functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(settings_from_env, m)?)?;
    m.add_function(wrap_pyfunction!(destination, m)?)?;
    Ok(())
}
