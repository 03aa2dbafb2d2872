//! Aggregation (SPEC §5): outcome classes, reputation summaries, comparison.

use crate::convert::{from_py, parse_enum, to_py};
use crate::errors::to_py_err;
use lowdown_core::aggregate;
use pyo3::prelude::*;

/// Which counter one interaction goes to: ``"protocol"`` first, then ``"cancelled"``, then
/// a request-layer ``"rejected"``, else its outcome.
#[pyfunction]
#[pyo3(signature = (request_kind, outcome, error_layer=None))]
pub fn outcome_class<'py>(
    py: Python<'py>,
    request_kind: &str,
    outcome: &str,
    error_layer: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let layer = error_layer.map(parse_enum).transpose()?;
    to_py(
        py,
        &aggregate::outcome_class(parse_enum(request_kind)?, parse_enum(outcome)?, layer),
    )
}

/// The reputation summary (success rate from organic data only, confidence, counts by
/// source) from per-source counters (a dict; missing counts are 0).
#[pyfunction]
pub fn summarize<'py>(counts: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_py(counts.py(), &aggregate::summarize(&from_py(counts)?))
}

/// Ranks 2–5 ``(target, summary)`` pairs by success rate (``None`` last) with the
/// recommendation rule; raises ``candidate_count`` or ``duplicate_candidate``.
#[pyfunction]
pub fn compare<'py>(candidates: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let list: Vec<(String, aggregate::Summary)> = from_py(candidates)?;
    to_py(
        candidates.py(),
        &aggregate::compare(&list).map_err(to_py_err)?,
    )
}

/// The one-sentence reading of a summary for ``target``.
#[pyfunction]
pub fn message(target: &str, summary: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(aggregate::message(target, &from_py(summary)?))
}
