//! What prowl routes through the sampling gateway (SPEC §10): the core's `Router`, with the
//! host doing the fetching and the requests. Times are Unix milliseconds.

use crate::convert::to_py;
use lowdown_core::gateway::router::Router;
use pyo3::prelude::*;

/// The catalog, salt and decisions of one set of settings.
#[pyclass(name = "Router", module = "prowl._native")]
pub struct PyRouter {
    inner: Router,
}

#[pymethods]
impl PyRouter {
    /// The router for ``PROWL_AGENT_KEY``, ``PROWL_GATEWAY_URL`` and
    /// ``PROWL_GATEWAY_SERVICES`` (``None`` when unset); without a key and a gateway it never
    /// fetches or routes.
    #[new]
    #[pyo3(signature = (agent_key, gateway_url, services=None))]
    fn new(agent_key: Option<&str>, gateway_url: Option<&str>, services: Option<&str>) -> Self {
        PyRouter {
            inner: Router::new(agent_key, gateway_url, services),
        }
    }

    /// Whether to fetch the catalog and the salt now; ``True`` counts the fetch as started.
    fn wants_fetch(&mut self, now_ms: i64) -> bool {
        self.inner.wants_fetch(now_ms)
    }

    /// The fetch's answers (JSON text); whether they are usable.
    fn loaded(&mut self, now_ms: i64, catalog: &str, salt: &str) -> bool {
        self.inner.loaded(now_ms, catalog, salt)
    }

    /// The fetch failed: it is tried again in a minute.
    fn fetch_failed(&mut self, now_ms: i64) {
        self.inner.fetch_failed(now_ms);
    }

    /// A new ``PROWL_GATEWAY_SERVICES`` value (``None``: unset).
    #[pyo3(signature = (services))]
    fn select(&mut self, services: Option<&str>) {
        self.inner.select(services);
    }

    /// Where a ``method`` call to ``url`` with these request header names goes:
    /// ``{url, slug, service_id, headers: [(name, value)], keep: [names], vendor}``, or
    /// ``None`` (straight to the vendor).
    fn route<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        method: &str,
        url: &str,
        header_names: Vec<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.route(now_ms, method, url, &header_names))
    }

    /// A routed call answered ``status`` with this body ``reason``: ``{gateway, fetch_at}``.
    #[pyo3(signature = (now_ms, status, reason))]
    fn refused<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        status: u16,
        reason: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.refused(now_ms, status, reason))
    }

    /// A gateway redirect's ``location`` as the vendor URL it stands for (``vendor`` and
    /// ``slug`` from the route); any other location unchanged.
    fn vendor_location(&self, vendor: &str, slug: &str, location: &str) -> String {
        self.inner.vendor_location(vendor, slug, location)
    }

    /// ``{ready, agent_id, salt_id, services, counts}``.
    fn status<'py>(&self, py: Python<'py>, now_ms: i64) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.status(now_ms))
    }
}

/// Adds the router to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRouter>()
}
