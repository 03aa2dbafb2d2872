//! `Classifier`: the streaming MCP session classifier (SPEC §3.1) as a Python class.

use crate::convert::{parse_enum, to_py};
use lowdown_core::classify::Classifier;
use pyo3::prelude::*;

/// Classifies one MCP stdio session: feed it the bytes of both directions as they arrive,
/// with your clock; it returns every exchange that finished.
#[pyclass(name = "Classifier", module = "prowl._native")]
pub struct PyClassifier {
    inner: Classifier,
}

#[pymethods]
impl PyClassifier {
    /// A classifier for a new session.
    #[new]
    fn new() -> Self {
        PyClassifier {
            inner: Classifier::new(),
        }
    }

    /// Feeds bytes that travelled ``direction`` (``"client_to_server"`` or
    /// ``"server_to_client"``) at ``now_ms``; returns the exchanges that finished.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        direction: &str,
        data: &[u8],
        now_ms: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.feed(parse_enum(direction)?, data, now_ms))
    }

    /// ``feed``, with the exchanges as one JSON text (``"[]"`` when none): ``json.loads``
    /// of it gives what ``feed`` gives. For hosts that usually find nothing finished.
    fn feed_json(&mut self, direction: &str, data: &[u8], now_ms: f64) -> PyResult<String> {
        let exchanges = self.inner.feed(parse_enum(direction)?, data, now_ms);
        serde_json::to_string(&exchanges).map_err(crate::errors::invalid_argument)
    }

    /// Ends the session at ``now_ms``: frames unterminated last lines and reports every
    /// request and task still waiting. ``reason`` says who ended it: ``"client_ended"``
    /// (stdin EOF, a signal: they are cancelled) or ``"server_ended"`` (the server died or
    /// broke its pipe: they are server errors). Returns those exchanges.
    fn close<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: f64,
        reason: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.close(now_ms, parse_enum(reason)?))
    }

    /// What the classifier has learnt: server name and version, protocol version, schema hashes.
    fn facts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.inner.facts())
    }

    /// Number of requests still waiting for a response (both directions), and of tool calls
    /// running as tasks still waiting for their outcome.
    fn pending(&self) -> usize {
        self.inner.pending()
    }

    /// Bytes held for lines not yet terminated (both directions).
    fn buffered(&self) -> usize {
        self.inner.buffered()
    }
}
