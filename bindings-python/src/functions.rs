//! The core's pure functions, exported under their Rust names.

use crate::convert::{from_py, to_py};
use crate::errors::to_py_err;
use lowdown_core::{redact as core_redact, schema_hash, target_label as core_target_label};
use pyo3::prelude::*;

/// Hashes the JSON text of a ``tools/list`` result (SPEC §3.3).
///
/// Returns ``{"schema_hash", "desc_hash", "tool_count", "has_more"}``; raises
/// ``LowdownError`` with ``.type`` ``"invalid_json"`` or ``"too_deep"``.
#[pyfunction]
fn hash_tools_result<'py>(py: Python<'py>, result_json: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    to_py(
        py,
        &schema_hash::hash_tools_result(result_json).map_err(to_py_err)?,
    )
}

/// Hashes the JSON text of a ``tools`` array (SPEC §3.3); same result and errors as
/// :func:`hash_tools_result` (``has_more`` is always false).
#[pyfunction]
fn hash_tools<'py>(py: Python<'py>, tools_json: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &schema_hash::hash_tools(tools_json).map_err(to_py_err)?)
}

/// The SPEC §3.3 canonical JSON text of any JSON document (keys sorted by UTF-16 code
/// units, JavaScript number formatting). Raises ``LowdownError`` (``invalid_json``, ``too_deep``).
#[pyfunction]
fn canonical_json(json: &[u8]) -> PyResult<String> {
    schema_hash::canonical_json(json).map_err(to_py_err)
}

/// Masks secrets (bearer tokens, API keys, JWTs, ``token=``-style values, URL passwords,
/// long hex runs) in ``text`` with ``[REDACTED]``.
#[pyfunction]
fn redact(text: &str) -> String {
    core_redact::redact(text).into_owned()
}

/// The SPEC §3.2 target label of a command line (``argv[0]`` is the command): ``npm:pkg``,
/// ``pypi:pkg``, ``oci:image``, ``url:host``, ``go:path`` or a file's name; ``None`` when
/// none is safe to publish. ``facts`` is what the caller resolved by reading files:
/// ``{"packages": [{"arg": word, "registry": "npm" | "pypi", "name": package}], "cwd": dir}``.
#[pyfunction]
#[pyo3(signature = (argv, facts=None))]
fn target_label(argv: Vec<String>, facts: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let facts: core_target_label::LabelFacts = facts.map(from_py).transpose()?.unwrap_or_default();
    Ok(core_target_label::target_label(&argv, &facts))
}

/// Adds every function of this module to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(hash_tools_result, m)?)?;
    m.add_function(wrap_pyfunction!(hash_tools, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(redact, m)?)?;
    m.add_function(wrap_pyfunction!(crate::logdiff::expand_path, m)?)?;
    m.add_function(wrap_pyfunction!(crate::logdiff::append_text_item, m)?)?;
    m.add_function(wrap_pyfunction!(crate::record::build_record, m)?)?;
    m.add_function(wrap_pyfunction!(crate::record::sanitize_server_version, m)?)?;
    m.add_function(wrap_pyfunction!(target_label, m)?)?;
    m.add_function(wrap_pyfunction!(crate::record::validate_record, m)?)?;
    m.add_function(wrap_pyfunction!(crate::record::validate_records, m)?)?;
    m.add_function(wrap_pyfunction!(crate::record::validate_node_id, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::host_from_url, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::host_verdict, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::is_private_name, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::is_blocked_ip, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::prepare_observation, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::validate_observation, m)?)?;
    m.add_function(wrap_pyfunction!(
        crate::telemetry::validate_observations,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::status_class, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::weight, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::weight_tier, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::latency_bucket, m)?)?;
    m.add_function(wrap_pyfunction!(crate::telemetry::summarize_telemetry, m)?)?;
    m.add_function(wrap_pyfunction!(crate::aggregate::outcome_class, m)?)?;
    m.add_function(wrap_pyfunction!(crate::aggregate::summarize, m)?)?;
    m.add_function(wrap_pyfunction!(crate::aggregate::compare, m)?)?;
    m.add_function(wrap_pyfunction!(crate::aggregate::message, m)?)?;
    m.add_function(wrap_pyfunction!(crate::sample::decide, m)?)?;
    m.add_function(wrap_pyfunction!(crate::sample::verify, m)?)?;
    m.add_function(wrap_pyfunction!(crate::sample::salt_epoch, m)?)?;
    m.add_function(wrap_pyfunction!(crate::sample::accepted_epochs, m)?)?;
    m.add_class::<crate::telemetry::PyHostPolicy>()?;
    m.add_class::<crate::telemetry::PyTelemetryRollup>()?;
    m.add_class::<crate::telemetry::PyTelemetryBudget>()?;
    m.add_class::<crate::classify::PyClassifier>()?;
    m.add_class::<crate::logdiff::PyLogDiff>()?;
    Ok(())
}
