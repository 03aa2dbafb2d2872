//! The sampling gateway's rules (SPEC §10), free of IO: which calls and headers cross the gateway,
//! the live score, the audit and probe-health cap, receipts and agent reputation, and what a
//! client routes through it ([`router`]).
//!
//! The sampling decision itself (the roll, salt days, the gateway's check) lives in
//! [`crate::sample`], shared with the clients that compute decisions.

pub mod allow;
pub mod headers;
pub mod receipt;
pub mod reputation;
pub mod router;
pub mod score;
pub mod share;

use serde::Serializer;

/// Rounds a rate for an answer: 3 decimals, halves away from zero.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Writes a whole `f64` as a JSON integer (`7`, not `7.0`) and anything else as a float,
/// so counts and days read as integers in every host.
pub(crate) fn serialize_num<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        None => s.serialize_none(),
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => s.serialize_i64(*x as i64),
        Some(x) => s.serialize_f64(*x),
    }
}
