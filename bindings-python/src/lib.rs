//! Python binding of `lowdown-core` (pyo3): the private module `prowl._native`.
//!
//! It exports what the `prowl` package uses and nothing else: the observation path
//! ([`observe`]), record and node-id validation ([`record`]), the delivery policy ([`spool`]), the spool's and node.json's plans ([`plans`]) and
//! the host protocol ([`host`]). Every other core operation is proven by the Rust vectors and
//! the server's tests. Each function is a thin wrapper: it converts Python values, calls the
//! core, and converts the result (plain dicts and lists with the core's snake_case keys) or
//! the error (see [`errors`]). Python names equal the Rust ones; classes are prefixed `Py` in
//! Rust and exported without the prefix. No logic lives here.

use lowdown_core::defaults;
use pyo3::prelude::*;

mod convert;
mod errors;
mod gateway;
mod host;
mod observe;
mod plans;
mod provider;
mod record;
mod spool;

/// The private native module behind the `prowl` package; the constants are the core's
/// shared defaults that prowl reads (SPEC §2).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("LowdownError", m.py().get_type::<errors::LowdownError>())?;
    m.add("API_URL", defaults::API_URL)?;
    m.add("API_URL_ENV", defaults::API_URL_ENV)?;
    m.add("PROWL_API_URL_ENV", defaults::PROWL_API_URL_ENV)?;
    m.add("HOME_ENV", defaults::HOME_ENV)?;
    m.add("AGENT_KEY_HEADER", defaults::AGENT_KEY_HEADER)?;
    observe::register(m)?;
    gateway::register(m)?;
    record::register(m)?;
    spool::register(m)?;
    plans::register(m)?;
    host::register(m)?;
    provider::register(m)?;
    Ok(())
}
