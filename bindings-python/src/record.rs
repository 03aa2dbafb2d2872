//! Interaction records: building one from a classified exchange, publishing rules.

use crate::convert::{from_py, to_py};
use crate::errors::to_py_err;
use crate::options::PyRecordContext;
use lowdown_core::record::{build, validate};
use pyo3::prelude::*;

/// The SPEC §3.2 record (a dict) for one exchange from ``Classifier.feed``, with the
/// session's ``facts`` and a context dict (``actor``, ``target``, ``source``, ``node_id``,
/// ``recorder_version``); ``None`` for a server→client request.
#[pyfunction]
#[pyo3(signature = (exchange, facts, ctx=None, record_id=None))]
pub fn build_record<'py>(
    exchange: &Bound<'py, PyAny>,
    facts: &Bound<'py, PyAny>,
    ctx: Option<&Bound<'py, PyAny>>,
    record_id: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let ctx = ctx
        .map(from_py::<PyRecordContext>)
        .transpose()?
        .unwrap_or_default()
        .try_into()?;
    to_py(
        exchange.py(),
        &build::build_record(&from_py(exchange)?, &from_py(facts)?, &ctx, record_id),
    )
}

/// SPEC §3.2's published form of ``serverInfo.version``: control characters removed, kept
/// only when it matches ``^[0-9A-Za-z.+_-]{1,32}$``, else ``None``.
#[pyfunction]
pub fn sanitize_server_version(raw: &str) -> Option<String> {
    build::sanitize_server_version(raw)
}

/// Validates one interaction record (a dict, as the API receives it); raises
/// ``LowdownError`` whose ``.type`` is the problem and ``.details["path"]`` the field.
#[pyfunction]
pub fn validate_record<'py>(body: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_py(
        body.py(),
        &validate::validate_record(&from_py(body)?).map_err(to_py_err)?,
    )
}

/// Validates one record or a list of 1..=1000 (all-or-nothing; errors name ``records[i].field``).
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
