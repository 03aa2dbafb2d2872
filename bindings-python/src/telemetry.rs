//! Telemetry (SPEC §4): the host privacy filter, observations, status classes and weights.

use crate::convert::{from_py, parse_enum, to_py};
use crate::errors::to_py_err;
use lowdown_core::telemetry::{self, HostPolicy, TelemetryRollup, WeightTier};
use pyo3::prelude::*;

/// The reporting policy, from the raw ``PROWL_TELEMETRY_ALLOWLIST`` and
/// ``PROWL_TELEMETRY_ALLOW_PRIVATE`` values (``None`` when unset).
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

    /// The canonical allowlisted hosts; empty means no restriction.
    #[getter]
    fn allowlist(&self) -> Vec<String> {
        self.inner.allowlist.clone()
    }

    /// Whether local and private hosts may be reported (local testing only).
    #[getter]
    fn allow_private(&self) -> bool {
        self.inner.allow_private
    }

    /// The plain form: ``{"allowlist": [...], "allow_private": bool}``.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!(
            "HostPolicy(allowlist={:?}, allow_private={})",
            self.inner.allowlist, self.inner.allow_private
        )
    }
}

/// Whether ``host`` (as a URL parser gives it) never names a public server: localhost,
/// internal names (``.svc``, ``.consul``, ``.fritz.box``, ...), single labels, special-use
/// names and blocked address literals. Invalid and non-ASCII hosts count as private.
#[pyfunction]
pub fn is_private_name(host: &str) -> bool {
    telemetry::is_private_name(host)
}

/// Whether an address (``ipaddress.IPv4Address``/``IPv6Address``) is in a blocked range;
/// IPv4-mapped and other IPv6 forms embedding IPv4 are judged by the IPv4 address.
#[pyfunction]
pub fn is_blocked_ip(ip: std::net::IpAddr) -> bool {
    telemetry::is_blocked_ip(ip)
}

/// The canonical host a WHATWG URL parser would give for ``url``, or ``None``.
#[pyfunction]
pub fn host_from_url(url: &str) -> Option<String> {
    telemetry::host_from_url(url)
}

/// Whether ``host`` may be reported under ``policy``: ``{"verdict": "report", "host"}`` or
/// ``{"verdict": "blocked", "reason"}``.
#[pyfunction]
pub fn host_verdict<'py>(
    py: Python<'py>,
    host: &str,
    policy: &PyHostPolicy,
) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &telemetry::host_verdict(host, &policy.inner))
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

/// Validates one observation (a dict, as the API receives it); raises ``LowdownError``
/// whose ``.type`` is the problem and ``.details["path"]`` the field.
#[pyfunction]
pub fn validate_observation<'py>(body: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_py(
        body.py(),
        &telemetry::validate_observation(&from_py(body)?).map_err(to_py_err)?,
    )
}

/// Validates one observation or a list of 1..=1000 (all-or-nothing; errors name
/// ``observations[i].field``).
#[pyfunction]
pub fn validate_observations<'py>(body: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_py(
        body.py(),
        &telemetry::validate_observations(&from_py(body)?).map_err(to_py_err)?,
    )
}

/// How a status counts: ``None``/5xx ``"failure"``, 429 ``"throttled"``, other 4xx
/// ``"rejected"``, 1xx–3xx ``"success"``.
#[pyfunction]
pub fn status_class(py: Python<'_>, status: Option<u16>) -> PyResult<Bound<'_, PyAny>> {
    to_py(py, &telemetry::status_class(status))
}

/// The server-side weight of one observation: 0.1, 0.3, 0.5 or 1.0 (SPEC §4).
#[pyfunction]
pub fn weight(valid_agent_key: bool, known_host: bool) -> f64 {
    telemetry::weight(valid_agent_key, known_host)
}

/// The weight tier of one observation (``"anonymous_unknown_host"`` ... ``"key_known_host"``).
#[pyfunction]
pub fn weight_tier(
    py: Python<'_>,
    valid_agent_key: bool,
    known_host: bool,
) -> PyResult<Bound<'_, PyAny>> {
    to_py(py, &WeightTier::of(valid_agent_key, known_host))
}

/// Index of the latency histogram bucket ``latency_ms`` falls in.
#[pyfunction]
pub fn latency_bucket(latency_ms: f64) -> usize {
    telemetry::latency_bucket(latency_ms)
}

/// The public telemetry block of one host from its stored rollup (a dict).
#[pyfunction]
pub fn summarize_telemetry<'py>(rollup: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_py(
        rollup.py(),
        &telemetry::summarize_telemetry(&from_py(rollup)?),
    )
}

/// What the server stores per host: status classes per weight tier, exact status codes and
/// the latency histogram. Rollups merge, so stored ones can be combined.
#[pyclass(name = "TelemetryRollup", module = "prowl._native")]
pub struct PyTelemetryRollup {
    inner: TelemetryRollup,
}

#[pymethods]
impl PyTelemetryRollup {
    /// An empty rollup, or one read back from its stored form (``to_dict()``).
    #[new]
    #[pyo3(signature = (stored=None))]
    fn new(stored: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(PyTelemetryRollup {
            inner: stored.map(from_py).transpose()?.unwrap_or_default(),
        })
    }

    /// Adds one observation: its status (``None`` for no response), latency and weight tier.
    fn add(&mut self, status: Option<u16>, latency_ms: f64, tier: &str) -> PyResult<()> {
        self.inner.add(status, latency_ms, parse_enum(tier)?);
        Ok(())
    }

    /// Adds every count of ``other`` to this rollup.
    fn merge(&mut self, other: PyRef<'_, PyTelemetryRollup>) {
        self.inner.merge(&other.inner);
    }

    /// The plain, storable form (what ``TelemetryRollup(stored)`` reads back).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner)
    }

    /// The public telemetry block of this rollup (:func:`summarize_telemetry`).
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &telemetry::summarize_telemetry(&self.inner))
    }
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

    /// Milliseconds from ``now_ms`` until at least one observation may be sent (0: now).
    fn wait_ms(&self, now_ms: f64) -> f64 {
        self.inner.wait_ms(now_ms)
    }
}
