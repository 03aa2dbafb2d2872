//! The API's acceptance rules, applied before anything is queued: LangChain records and the
//! node id they carry.

use crate::convert::{from_py, to_py};
use crate::errors::to_py_err;
use lowdown_core::record::validate;
use pyo3::prelude::*;

/// Validates one interaction record or a list of 1..=1000 (a dict or a list of dicts, as the
/// API receives them), all-or-nothing; returns the typed records as a list. Raises
/// ``LowdownError`` whose ``.type`` is the problem and ``.details["path"]`` the field
/// (``records[i].field`` in a list, the bare field for one record).
#[pyfunction]
pub fn validate_records<'py>(body: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_py(
        body.py(),
        &validate::validate_records(&from_py(body)?).map_err(to_py_err)?,
    )
}

/// Checks a node id (``^ld_[A-Za-z0-9_-]{1,64}$``); raises ``LowdownError``
/// (``.type == "invalid_format"``) otherwise.
#[pyfunction]
pub fn validate_node_id(node_id: &str) -> PyResult<()> {
    validate::validate_node_id(node_id).map_err(to_py_err)
}

/// Adds the validation functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_records, m)?)?;
    m.add_function(wrap_pyfunction!(validate_node_id, m)?)?;
    Ok(())
}
