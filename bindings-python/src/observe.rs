//! What `prowl.observe` and the Claude Code hook use (SPEC §4): the reporting policy, one
//! observation per request and the hourly budget.

use crate::convert::{parse_enum, to_py};
use lowdown_core::telemetry::{self, HostPolicy};
use pyo3::prelude::*;

/// The reporting policy, from the raw ``PROWL_TELEMETRY_ALLOWLIST`` and
/// ``PROWL_TELEMETRY_ALLOW_PRIVATE`` values (``None`` when unset). Opaque: it is handed to
/// :func:`prepare_observation`.
#[pyclass(name = "HostPolicy", module = "prowl._native", frozen)]
pub struct PyHostPolicy {
    inner: HostPolicy,
}

#[pymethods]
impl PyHostPolicy {
    /// The policy for these two environment values: a comma-separated allowlist of hosts
    /// (with subdomains), and ``1``/``true``/``yes``/``on`` to lift the private block.
    #[new]
    #[pyo3(signature = (allowlist=None, allow_private=None))]
    fn new(allowlist: Option<&str>, allow_private: Option<&str>) -> Self {
        PyHostPolicy {
            inner: HostPolicy::from_env_values(allowlist, allow_private),
        }
    }

    // `prowl.configure()` returns settings holding a policy; this is how they print.
    fn __repr__(&self) -> String {
        format!(
            "HostPolicy(allowlist={:?}, allow_private={})",
            self.inner.allowlist, self.inner.allow_private
        )
    }
}

/// The observation (a dict) to send for one HTTP request, or ``None`` when nothing may be
/// sent (host blocked or unreadable, latency not finite). Only the host of ``url`` is kept.
#[pyfunction]
#[allow(
    clippy::too_many_arguments,
    reason = "mirrors the core's signature one to one"
)]
pub fn prepare_observation<'py>(
    py: Python<'py>,
    url: &str,
    method: &str,
    status: Option<u16>,
    latency_ms: f64,
    response_bytes: Option<u64>,
    source: &str,
    policy: &PyHostPolicy,
) -> PyResult<Bound<'py, PyAny>> {
    let obs = telemetry::prepare_observation(
        url,
        method,
        status,
        latency_ms,
        response_bytes,
        parse_enum(source)?,
        &policy.inner,
    );
    to_py(py, &obs)
}

/// What this client may still send this hour (SPEC §4): 60 observations anonymously, 600
/// with an agent key; paused after the server refuses some.
#[pyclass(name = "TelemetryBudget", module = "prowl._native")]
pub struct PyTelemetryBudget {
    inner: telemetry::Budget,
}

#[pymethods]
impl PyTelemetryBudget {
    /// The budget of an anonymous client, or of one sending with an agent key.
    #[new]
    fn new(with_agent_key: bool) -> Self {
        PyTelemetryBudget {
            inner: telemetry::Budget::new(with_agent_key),
        }
    }

    /// How many of ``want`` observations may be sent at ``now_ms``; those count as sent.
    fn take(&mut self, now_ms: f64, want: u32) -> u32 {
        self.inner.take(now_ms, want)
    }

    /// The server refused some as over its limit at ``now_ms``, asking to wait ``retry_after_s``.
    fn refused(&mut self, now_ms: f64, retry_after_s: f64) {
        self.inner.refused(now_ms, retry_after_s);
    }

    /// What the answer (``status`` ``None`` when none came) to ``sent`` observations posted
    /// at ``now_ms`` came to: ``(delivered, throttled, failed)``; pauses on a refusal.
    #[pyo3(signature = (now_ms, sent, status, retry_after, body))]
    fn answered(
        &mut self,
        now_ms: f64,
        sent: u32,
        status: Option<u16>,
        retry_after: Option<&str>,
        body: Option<&str>,
    ) -> (u32, u32, u32) {
        let a = self.inner.answered(now_ms, sent, status, retry_after, body);
        (a.delivered, a.throttled, a.failed)
    }

    /// Milliseconds from ``now_ms`` until at least one observation may be sent (0: now).
    fn wait_ms(&self, now_ms: f64) -> f64 {
        self.inner.wait_ms(now_ms)
    }
}

/// Adds the policy, observation and budget to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHostPolicy>()?;
    m.add_class::<PyTelemetryBudget>()?;
    m.add_function(wrap_pyfunction!(prepare_observation, m)?)?;
    Ok(())
}
