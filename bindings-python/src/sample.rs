//! Sampling decisions (SPEC §4): computed and verified the same way by anyone.

use crate::convert::to_py;
use lowdown_core::sample;
use pyo3::prelude::*;

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
