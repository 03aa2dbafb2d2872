//! What an ingest answer means for a batch (SPEC §3, §5), shared with every other host: what
//! is kept goes to the spool, whose plans are in `plans`.

use pyo3::prelude::*;

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

/// Adds the delivery policy to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(delivery, m)?)?;
    Ok(())
}
