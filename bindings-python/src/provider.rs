//! Provider mode for the Python hook (SPEC §11): what a directive may ask (checked again
//! before the hook runs anything), the Scanner's probe as a state machine the host feeds
//! with HTTP replies, the Scanner's SSRF rules for URLs and resolved addresses, and the
//! verdict of an `agent` run. The host only moves bytes; every rule is the core's.

use crate::convert::{from_py, parse_enum, to_py};
use crate::errors::{invalid_argument, to_py_err};
use lowdown_core::benchmark::{agent, conformance, directive};
use lowdown_core::scanner::probe::{BodyError, Method};
use lowdown_core::scanner::rpc::AnswerReader;
use lowdown_core::scanner::target::{self, Policy};
use lowdown_core::scanner::{ErrorType, Probe, Reply, Step};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// Reads the JSON-RPC answer to one request from body chunks (JSON or an SSE stream),
/// under a byte cap; hand it to :meth:`Probe.on_response` once :meth:`feed` says done or
/// the body ended.
#[pyclass(name = "AnswerReader", module = "prowl._native")]
pub struct PyAnswerReader {
    inner: Option<AnswerReader>,
}

#[pymethods]
impl PyAnswerReader {
    /// A reader for the answer to request ``id`` given the response's ``Content-Type``.
    #[new]
    fn new(content_type: Option<&str>, id: u64, cap: usize) -> Self {
        PyAnswerReader {
            inner: Some(AnswerReader::new(content_type, id, cap)),
        }
    }

    /// Feeds the next chunk; ``True`` once the answer is complete (stop reading).
    fn feed(&mut self, chunk: &[u8]) -> bool {
        self.inner.as_mut().is_none_or(|r| r.feed(chunk))
    }

    /// The answer itself as JSON text (``{"id", "jsonrpc", "result" | "error"}``), once
    /// :meth:`feed` said done or the body ended; raises ``LowdownError``
    /// (``not_json_rpc``, ``no_answer``, ``too_large``), and ``invalid_argument`` when
    /// already taken.
    fn answer<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let reader = self
            .inner
            .take()
            .ok_or_else(|| invalid_argument("the answer was already taken"))?;
        let text = reader.finish().map_err(to_py_err)?.to_json_text();
        Ok(PyBytes::new(py, &text))
    }
}

/// The probe of one MCP remote (``initialize``, ``tools/list`` over every page, the
/// session's ``DELETE``). Each step is ``{"method", "headers", "body", "answer"}`` to send
/// (``answer`` is ``(id, cap)`` when a JSON-RPC answer is to be read, else ``None``) or
/// ``{"done": conformance}``: the scored result (dimensions, overall_score, findings,
/// test_results, and ``observed``: the level, tool count and schema hash the server checks
/// against its own probe), never a tool definition.
#[pyclass(name = "Probe", module = "prowl._native")]
pub struct PyProbe {
    inner: Probe,
}

fn step<'py>(py: Python<'py>, s: Step) -> PyResult<Bound<'py, PyAny>> {
    let d = PyDict::new(py);
    match s {
        Step::Done(result) => d.set_item("done", to_py(py, &conformance::score(&result))?)?,
        Step::Send(req) => {
            let method = if req.method == Method::Post {
                "POST"
            } else {
                "DELETE"
            };
            d.set_item("method", method)?;
            d.set_item("headers", req.headers)?;
            d.set_item("body", PyBytes::new(py, &req.body))?;
            d.set_item("answer", req.answer)?;
        }
    }
    Ok(d.into_any())
}

#[pymethods]
impl PyProbe {
    /// A probe announcing ``lowdown-scanner/<client_version>``; ``modern`` tries
    /// ``server/discover`` first.
    #[new]
    #[pyo3(signature = (client_version, modern=false))]
    fn new(client_version: &str, modern: bool) -> Self {
        PyProbe {
            inner: Probe::new(modern, client_version),
        }
    }

    /// The first request.
    fn start<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        step(py, self.inner.start())
    }

    /// No HTTP response: ``error_type`` is ``timeout``, ``dns``, ``tls``, ``conn_refused``,
    /// ``conn_reset``, ``network_error`` or ``blocked_url``.
    fn on_failed<'py>(&mut self, py: Python<'py>, error_type: &str) -> PyResult<Bound<'py, PyAny>> {
        let e: ErrorType = parse_enum(error_type)?;
        step(py, self.inner.on_reply(Reply::Failed(e)))
    }

    /// An HTTP response. ``answer`` is the reader fed with a 2xx body the step asked for
    /// (``None`` otherwise); ``body_error`` the ``error_type`` that broke the body off.
    #[pyo3(signature = (status, session_id, www_authenticate, elapsed_ms, answer=None, body_error=None))]
    #[allow(
        clippy::too_many_arguments,
        reason = "mirrors Reply::Http field by field, as Python calls it"
    )]
    fn on_response<'py>(
        &mut self,
        py: Python<'py>,
        status: u16,
        session_id: Option<String>,
        www_authenticate: bool,
        elapsed_ms: f64,
        answer: Option<&mut PyAnswerReader>,
        body_error: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let answer = match (body_error, answer.and_then(|a| a.inner.take())) {
            (Some(e), _) => Err(BodyError::Transport(parse_enum(e)?)),
            (None, Some(reader)) => reader.finish().map_err(BodyError::Answer),
            (None, None) => Err(BodyError::NotRead),
        };
        let reply = Reply::Http {
            status,
            session_id,
            www_authenticate,
            elapsed_ms,
            answer,
        };
        step(py, self.inner.on_reply(reply))
    }
}

/// The host of ``url`` the Scanner's SSRF rules accept (https, no userinfo, a public
/// host; ``allow_loopback`` also admits http and 127.0.0.0/8, ::1 for tests). Raises
/// ``LowdownError`` (``scheme``, ``userinfo``, ``unparsable``, ``host``) otherwise.
#[pyfunction]
pub fn probe_url_host(url: &str, allow_loopback: bool) -> PyResult<String> {
    target::check_url_text(url, Policy { allow_loopback }).map_err(to_py_err)
}

/// Raises ``LowdownError`` (``address``) when a resolved address may not be connected to.
#[pyfunction]
pub fn check_probe_address(ip: std::net::IpAddr, allow_loopback: bool) -> PyResult<()> {
    target::address_verdict(ip, Policy { allow_loopback }).map_err(to_py_err)
}

/// ``{service_id, kind, spec, price_credits, critical}`` checked as the server checks a
/// posted directive, returned checked; raises ``LowdownError`` (``invalid``,
/// ``local_command_refused``, ``mcp_server_not_https``; ``details["field"]`` names it).
#[pyfunction]
pub fn check_directive<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let body: serde_json::Value = from_py(body)?;
    to_py(py, &directive::check_new(&body).map_err(to_py_err)?)
}

/// The verdict of an ``agent`` run: passes when ``answer`` contains every string of
/// ``contains``; ``{"passed", "dimensions", "overall_score", "test_results"}``.
#[pyfunction]
pub fn agent_verdict<'py>(
    py: Python<'py>,
    answer: &str,
    contains: Vec<String>,
    latency_ms: f64,
) -> PyResult<Bound<'py, PyAny>> {
    if !latency_ms.is_finite() {
        return Err(invalid_argument("latency_ms: must be a finite number"));
    }
    to_py(py, &agent::verdict(answer, &contains, latency_ms))
}

/// Adds this module's classes and functions to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyProbe>()?;
    m.add_class::<PyAnswerReader>()?;
    m.add_function(wrap_pyfunction!(probe_url_host, m)?)?;
    m.add_function(wrap_pyfunction!(check_probe_address, m)?)?;
    m.add_function(wrap_pyfunction!(agent_verdict, m)?)?;
    m.add_function(wrap_pyfunction!(check_directive, m)?)?;
    Ok(())
}
