//! The spool's and node.json's plans (SPEC §3, §3.5): the core's `spool::Claim`,
//! `spool::Write` and `identity::Load`, shared with every other host. Each step is a dict
//! ``{"step": …}`` (the core's `files::Step`); prowl performs it and feeds back what happened:
//! ``feed(result, text)`` with ``result`` one of ``ok``, ``missing``, ``exists``, ``failed``
//! (``text``: a read's text), or ``listed(entries)`` after a ``list`` step.

use crate::convert::to_py;
use crate::errors::invalid_argument;
use lowdown_core::files::{Outcome, Step};
use lowdown_core::identity::{self, Load};
use lowdown_core::record::spool::{Claim, Write};
use pyo3::prelude::*;

fn step<'py>(py: Python<'py>, s: &Step) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, s)
}

fn outcome(result: &str, text: Option<String>) -> PyResult<Outcome> {
    Outcome::named(result, text).ok_or_else(|| invalid_argument("unknown result"))
}

/// A plan class `$py` (exported as `$name`) over the core's `$inner`: its own `$methods`,
/// and `start` and `feed`.
macro_rules! plan {
    ($(#[$doc:meta])* $name:literal $py:ident($inner:ty) { $($methods:tt)* }) => {
        $(#[$doc])*
        #[pyclass(name = $name, module = "prowl._native")]
        pub struct $py {
            inner: $inner,
        }

        #[pymethods]
        impl $py {
            $($methods)*

            /// The first step.
            fn start<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                step(py, &self.inner.start())
            }

            /// What the last step did; the next step.
            #[pyo3(signature = (result, text=None))]
            fn feed<'py>(
                &mut self,
                py: Python<'py>,
                result: &str,
                text: Option<String>,
            ) -> PyResult<Bound<'py, PyAny>> {
                step(py, &self.inner.feed(outcome(result, text)?))
            }
        }
    };
}

plan! {
    /// Which spool file this process delivers next: ``list``, ``claim``, ``read``, ``deliver``
    /// (then :meth:`finish`), ``delete``, ``rename``, ``done``.
    "SpoolClaim" PySpoolClaim(Claim) {
        /// A plan for the process ``pid`` at ``now_ms`` (Unix milliseconds).
        #[new]
        fn new(pid: u32, now_ms: f64) -> Self {
            PySpoolClaim {
                inner: Claim::new(pid, now_ms),
            }
        }

        /// The directory's ``(name, mtime_ms or None)`` entries; the next step.
        fn listed<'py>(
            &mut self,
            py: Python<'py>,
            entries: Vec<(String, Option<f64>)>,
        ) -> PyResult<Bound<'py, PyAny>> {
            step(py, &self.inner.feed(Outcome::Listing(entries)))
        }

        /// After ``deliver``: whether the records were taken; the next step.
        fn finish<'py>(&mut self, py: Python<'py>, taken: bool) -> PyResult<Bound<'py, PyAny>> {
            step(py, &self.inner.finish(taken))
        }
    }
}

plan! {
    /// How this process spools records: ``write``, ``rename``, ``list``, ``read``, ``delete``,
    /// ``done``, ``failed``.
    "SpoolWrite" PySpoolWrite(Write) {
        /// A plan for ``records`` (JSON texts); ``seq`` is the last sequence number this process
        /// used (0 at first), ``token`` a random token.
        #[new]
        fn new(
            records: Vec<String>,
            seq: u64,
            pid: u32,
            now_ms: u64,
            now_iso: &str,
            token: &str,
        ) -> Self {
            PySpoolWrite {
                inner: Write::new(&records, seq, pid, now_ms, now_iso, token),
            }
        }

        /// The last sequence number this plan's files use (the next plan's ``seq``).
        fn seq(&self) -> u64 {
            self.inner.seq()
        }

        /// The directory's ``(name, mtime_ms or None)`` entries; the next step.
        fn listed<'py>(
            &mut self,
            py: Python<'py>,
            entries: Vec<(String, Option<f64>)>,
        ) -> PyResult<Bound<'py, PyAny>> {
            step(py, &self.inner.feed(Outcome::Listing(entries)))
        }
    }
}

plan! {
    /// How this process loads ``node.json``: ``read``, ``write``, ``link``, ``rename``,
    /// ``delete``, then ``identity`` (``node_id``, ``created_at``, ``created``) or ``failed``.
    "NodeIdentityLoad" PyNodeIdentityLoad(Load) {
        /// A plan whose fresh identity comes from 6 random bytes (12 hex digits) and the clock;
        /// ``pid`` and a random ``token`` name its temporary file. Raises ``invalid_argument``
        /// when ``random_hex`` is not 12 hex digits.
        #[new]
        fn new(random_hex: &str, now_iso: &str, pid: u32, token: &str) -> PyResult<Self> {
            let fresh = identity::new_identity_hex(random_hex, now_iso)
                .ok_or_else(|| invalid_argument("random_hex must be 12 hex digits"))?;
            Ok(PyNodeIdentityLoad {
                inner: Load::new(fresh, pid, token),
            })
        }
    }
}

/// Adds the plans to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySpoolClaim>()?;
    m.add_class::<PySpoolWrite>()?;
    m.add_class::<PyNodeIdentityLoad>()
}
