//! The spool's format, names and bounds (SPEC §3), shared with every other host: prowl keeps
//! the interaction records it could not deliver here, and drains what any host left.

use lowdown_core::record::spool;
use pyo3::prelude::*;

/// The name of a new spool file (``now_ms``, a per-process sequence number, the process id,
/// a random token).
#[pyfunction]
pub fn spool_file_name(now_ms: u64, seq: u64, pid: u32, token: &str) -> String {
    spool::file_name(now_ms, seq, pid, token)
}

/// The name a claim by ``pid`` gives the spool file ``name``.
#[pyfunction]
pub fn spool_claim_name(name: &str, pid: u32) -> String {
    spool::claim_name(name, pid)
}

/// What a spool directory entry is: ``("waiting", None, None)``, ``("claimed", pid,
/// original_name)`` or ``("other", None, None)``.
#[pyfunction]
pub fn spool_entry(name: &str) -> (&'static str, Option<u32>, Option<String>) {
    match spool::entry(name) {
        spool::Entry::Waiting => ("waiting", None, None),
        spool::Entry::Claimed { pid, original } => ("claimed", Some(pid), Some(original)),
        spool::Entry::Other => ("other", None, None),
    }
}

/// The text of a spool file holding ``records`` (each one record's JSON text).
#[pyfunction]
pub fn spool_encode(records: Vec<String>) -> String {
    spool::encode(&records)
}

/// A spool file's records (JSON texts) and how many lines were not records:
/// ``(records, corrupt)``.
#[pyfunction]
pub fn spool_decode(text: &str) -> (Vec<String>, usize) {
    let d = spool::decode(text);
    (d.records, d.corrupt)
}

/// Which of the spool files ``names`` go to keep the bound (the oldest).
#[pyfunction]
pub fn spool_over_bound(names: Vec<String>) -> Vec<String> {
    spool::over_bound(&names)
}

/// The new text of ``dropped.json`` once ``records`` more were dropped at ``now_iso``.
#[pyfunction]
#[pyo3(signature = (previous, records, now_iso))]
pub fn spool_dropped(previous: Option<&str>, records: u64, now_iso: &str) -> String {
    spool::dropped(previous, records, now_iso)
}

/// What the answer to a batch of ``len`` records means (``status`` ``None`` when none
/// came): ``(delivered, duplicates, rejected, keep, limited, pause_ms, reason)``, ``keep``
/// the indices to spool and send again (``limited`` of them over a quota) (the core's ``record::delivery``, as every host has it).
#[pyfunction]
#[pyo3(signature = (len, status, retry_after, body))]
pub fn delivery(
    len: u32,
    status: Option<u16>,
    retry_after: Option<&str>,
    body: Option<&str>,
) -> (u32, u32, u32, Vec<u32>, u32, u64, Option<String>) {
    let d = lowdown_core::record::delivery::delivery(len, status, retry_after, body);
    (
        d.delivered,
        d.duplicates,
        d.rejected,
        d.keep,
        d.limited,
        d.pause_ms,
        d.reason,
    )
}

/// Adds the spool functions and the two sizes prowl reads to the module (`spool_over_bound`
/// applies the bound on files).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SPOOL_MAX_RECORDS_PER_FILE", spool::MAX_RECORDS_PER_FILE)?;
    m.add("SPOOL_STALE_CLAIM_MS", spool::STALE_CLAIM_MS)?;
    m.add_function(wrap_pyfunction!(spool_file_name, m)?)?;
    m.add_function(wrap_pyfunction!(spool_claim_name, m)?)?;
    m.add_function(wrap_pyfunction!(spool_entry, m)?)?;
    m.add_function(wrap_pyfunction!(spool_encode, m)?)?;
    m.add_function(wrap_pyfunction!(spool_decode, m)?)?;
    m.add_function(wrap_pyfunction!(spool_over_bound, m)?)?;
    m.add_function(wrap_pyfunction!(spool_dropped, m)?)?;
    m.add_function(wrap_pyfunction!(delivery, m)?)?;
    Ok(())
}
