//! Sampling decisions for gateway routing (SPEC §4, §10), verifiable by anyone who knows the salt.
//!
//! `roll = sha256(utf8(service_id + "|" + agent_id + "|" + salt_id + "|" + salt))`,
//! `bucket = u32 big-endian of roll[0..4] / 2^32`, sampled iff `bucket < sampling_rate`.
//! Salts rotate every 24 h (epochs start at 00:00 UTC, counted from the Unix epoch); after
//! a rotation the previous salt stays accepted for 60 minutes.
//!
//! Decisions: a `sampling_rate` ≤ 0 or NaN samples nothing, ≥ 1 samples everything (the
//! comparison alone gives this; no clamping). Fields are joined as given: a `|` inside an
//! id is not escaped, exactly as the formula reads.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod check;
mod salt;

pub use check::{check_decision, salt_accepted, DecisionRefusal, DECISION_HEADER, SALT_ID_HEADER};
pub use salt::{
    salt_id, salt_id_epoch, salt_published, salt_state, salt_window, SaltState, SaltWindow,
};

/// Length of one salt epoch: 24 hours in milliseconds.
pub const SALT_EPOCH_MS: i64 = 86_400_000;
/// How long the previous salt stays accepted after a rotation: 60 minutes.
pub const SALT_OVERLAP_MS: i64 = 3_600_000;

/// One sampling decision, as carried in the decision header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingDecision {
    /// sha256 of the joined inputs, 64 lowercase hex digits.
    pub roll: String,
    /// First four bytes of the roll as a big-endian u32, divided by 2^32: in `[0, 1)`.
    pub bucket: f64,
    /// Whether `bucket < sampling_rate`.
    pub sampled: bool,
}

/// Computes the decision for one (service, agent) pair under one salt.
pub fn decide(
    service_id: &str,
    agent_id: &str,
    salt_id: &str,
    salt: &str,
    sampling_rate: f64,
) -> SamplingDecision {
    let mut h = Sha256::new();
    for (i, part) in [service_id, agent_id, salt_id, salt]
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            h.update(b"|");
        }
        h.update(part.as_bytes());
    }
    let roll = h.finalize();
    let head = u32::from_be_bytes([roll[0], roll[1], roll[2], roll[3]]);
    // Exact: a u32 fits an f64 and dividing by a power of two only changes the exponent.
    let bucket = f64::from(head) / 4_294_967_296.0;
    SamplingDecision {
        roll: hex::encode(roll),
        bucket,
        sampled: bucket < sampling_rate,
    }
}

/// Recomputes a past decision and says whether the claimed roll (hex, any case) and
/// sampled flag are the ones the inputs give.
pub fn verify(
    service_id: &str,
    agent_id: &str,
    salt_id: &str,
    salt: &str,
    sampling_rate: f64,
    claimed_roll: &str,
    claimed_sampled: bool,
) -> bool {
    let d = decide(service_id, agent_id, salt_id, salt, sampling_rate);
    d.roll.eq_ignore_ascii_case(claimed_roll) && d.sampled == claimed_sampled
}

/// The salt epoch in force at `now_ms` (Unix milliseconds): whole days since 1970-01-01
/// UTC, rounding down (so times before 1970 get negative epochs).
pub fn salt_epoch(now_ms: i64) -> i64 {
    now_ms.div_euclid(SALT_EPOCH_MS)
}

/// The epochs whose salts are accepted at `now_ms`, current first: the current epoch, and
/// the previous one during the first 60 minutes after a rotation (end exclusive).
pub fn accepted_epochs(now_ms: i64) -> Vec<i64> {
    let epoch = salt_epoch(now_ms);
    if now_ms.rem_euclid(SALT_EPOCH_MS) < SALT_OVERLAP_MS {
        vec![epoch, epoch - 1]
    } else {
        vec![epoch]
    }
}
