//! `LogDiff`: the ``--watch-log`` state machine as a Python class, and its two helpers.

use crate::convert::{from_py, to_py};
use crate::errors::to_py_err;
use crate::options::PyLogDiffOptions;
use lowdown_core::logdiff::{self, LogDiff};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::collections::HashMap;

/// Watches log files for new matching lines. The host reads the files (from
/// ``offset(path)``) and supplies the time; this holds cursors, partial lines and matches.
#[pyclass(name = "LogDiff", module = "prowl._native")]
pub struct PyLogDiff {
    inner: LogDiff,
}

#[pymethods]
impl PyLogDiff {
    /// A watcher; options as keywords (``pattern``, ``max_lines``, ``max_line_chars``).
    /// Raises ``LowdownError`` with ``.type == "invalid_pattern"`` on a bad pattern.
    #[new]
    #[pyo3(signature = (**options))]
    fn new(options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let opts = options
            .map(|o| from_py::<PyLogDiffOptions>(o.as_any()))
            .transpose()?
            .unwrap_or_default();
        Ok(PyLogDiff {
            inner: LogDiff::new(opts.try_into()?).map_err(to_py_err)?,
        })
    }

    /// Starts watching ``path`` (expanded, absolute); ``initial_size`` is its size now,
    /// ``None`` when it does not exist yet. Watching a path again changes nothing.
    #[pyo3(signature = (path, initial_size=None))]
    fn watch(&mut self, path: &str, initial_size: Option<u64>) {
        self.inner.watch(path, initial_size);
    }

    /// Takes ``data`` read from ``offset(path)`` of a file whose size is now ``file_size``;
    /// returns ``"read"``, ``"restarted"`` (read again from the new offset) or ``"not_watched"``.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        path: &str,
        file_size: u64,
        data: &[u8],
    ) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.feed(path, file_size, data))
    }

    /// The file at ``path`` was replaced (rotation): read it again from its start.
    fn restart(&mut self, path: &str) {
        self.inner.restart(path);
    }

    /// Where to read ``path`` from next (0 when it is not watched).
    fn offset(&self, path: &str) -> u64 {
        self.inner.offset(path)
    }

    /// Whether any file has matching lines waiting.
    fn has_pending(&self) -> bool {
        self.inner.has_pending()
    }

    /// Watched paths, in the order they were added.
    fn paths(&self) -> Vec<String> {
        self.inner.paths().map(str::to_owned).collect()
    }

    /// The ``[lowdown] Since HH:MM:SS, ...`` block of every file with lines waiting (which
    /// are then cleared), or ``None`` when nothing matched.
    fn take_block(&mut self, since_hhmmss: &str) -> Option<String> {
        self.inner.take_block(since_hhmmss)
    }
}

/// Expands ``%VAR%``, ``$VAR``, ``${VAR}`` and a leading ``~`` in a ``--watch-log`` path;
/// ``env`` is a dict of variables, unknown ones are left as written.
#[pyfunction]
#[pyo3(signature = (path, env, home=None))]
pub fn expand_path(path: &str, env: HashMap<String, String>, home: Option<&str>) -> String {
    logdiff::expand_path(path, &|name| env.get(name).cloned(), home)
}

/// Appends one ``text`` content item to a JSON-RPC result line, keeping every other byte;
/// ``None`` when the message has no result ``content`` array to carry it.
#[pyfunction]
pub fn append_text_item<'py>(
    py: Python<'py>,
    message: &[u8],
    text: &str,
) -> Option<Bound<'py, PyBytes>> {
    logdiff::append_text_item(message, text).map(|b| PyBytes::new(py, &b))
}
