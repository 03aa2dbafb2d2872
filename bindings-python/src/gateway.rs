//! What the gateway router routes (SPEC §10): a catalog service's `allow` rules and
//! credential mode, as the gateway itself applies them.

use crate::convert::to_py;
use crate::errors::to_py_err;
use lowdown_core::gateway::allow::GatewayRules;
use pyo3::prelude::*;

/// One catalog service's rules: which calls the gateway carries and which request headers
/// it forwards.
#[pyclass(name = "GatewayRules", module = "prowl._native", frozen)]
pub struct PyGatewayRules {
    inner: GatewayRules,
}

#[pymethods]
impl PyGatewayRules {
    /// The rules of a ``GET /v1/services`` entry: ``allow`` (``"GET /v1/search"`` each),
    /// ``mode`` (``inject``, the default, or ``passthrough``) and ``credential_header``.
    /// Raises ``LowdownError`` (``bad_allow_rule``, ``bad_mode``, ``missing_header``).
    #[new]
    #[pyo3(signature = (allow, mode=None, credential_header=None))]
    fn new(
        allow: Vec<String>,
        mode: Option<&str>,
        credential_header: Option<&str>,
    ) -> PyResult<Self> {
        GatewayRules::new(&allow, mode, credential_header)
            .map(|inner| PyGatewayRules { inner })
            .map_err(to_py_err)
    }

    /// The verdict on ``method`` to ``target`` (a path under the upstream's base, with its
    /// query): ``{"verdict": "allowed" | "not_allowed" | "bad_path", "why"?}``.
    fn check<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        target: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.check(method, target))
    }

    /// Of the request header ``names``, those to send the gateway (as given).
    fn keep_request_headers(&self, names: Vec<String>) -> Vec<String> {
        self.inner.keep_request_headers(&names)
    }
}

/// Whether prowl routes the service ``slug``/``service_id`` under ``PROWL_GATEWAY_SERVICES``
/// (``filter``, the raw value or ``None``): unset or blank routes every catalog service.
#[pyfunction]
#[pyo3(signature = (filter, slug, service_id))]
pub fn gateway_service_selected(filter: Option<&str>, slug: &str, service_id: &str) -> bool {
    lowdown_core::gateway::allow::service_selected(filter, slug, service_id)
}

/// Adds the gateway rules to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGatewayRules>()?;
    m.add_function(wrap_pyfunction!(gateway_service_selected, m)?)
}
