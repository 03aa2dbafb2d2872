//! Aggregation (SPEC §5): outcome classes, reputation summaries, comparison; and sampling (SPEC §4).

use crate::convert::{from_py, parse_enum, to_py};
use crate::errors::to_py_err;
use lowdown_core::{aggregate, sample};
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

/// The decision for one (service, agent) pair under one salt: ``{"roll", "bucket", "sampled"}``.
#[pyfunction]
pub fn decide<'py>(
    py: Python<'py>,
    service_id: &str,
    agent_id: &str,
    salt_id: &str,
    salt: &str,
    sampling_rate: f64,
) -> PyResult<Bound<'py, PyAny>> {
    to_py(
        py,
        &sample::decide(service_id, agent_id, salt_id, salt, sampling_rate),
    )
}

/// Whether a claimed roll (hex, any case) and sampled flag are what these inputs give.
#[pyfunction]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the core's signature one to one"
)]
pub fn verify(
    service_id: &str,
    agent_id: &str,
    salt_id: &str,
    salt: &str,
    sampling_rate: f64,
    claimed_roll: &str,
    claimed_sampled: bool,
) -> bool {
    sample::verify(
        service_id,
        agent_id,
        salt_id,
        salt,
        sampling_rate,
        claimed_roll,
        claimed_sampled,
    )
}

/// The salt epoch (whole UTC days since 1970) in force at ``now_ms``.
#[pyfunction]
pub fn salt_epoch(now_ms: i64) -> i64 {
    sample::salt_epoch(now_ms)
}

/// The epochs whose salts are accepted at ``now_ms``, current first (the previous one
/// during the first hour after a rotation).
#[pyfunction]
pub fn accepted_epochs(now_ms: i64) -> Vec<i64> {
    sample::accepted_epochs(now_ms)
}
