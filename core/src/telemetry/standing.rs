//! How an agent key earns its weight (SPEC §4).
//!
//! The seed gives a valid agent key a flat 5 to 10 times the weight of anonymous telemetry.
//! Keys are free, so that would let anyone buy weight with registrations. Here a key earns
//! it with tenure and with history the server accepted:
//!
//! | stage | condition | unknown host | catalog host |
//! |---|---|---|---|
//! | new | under 1 day old, or under 50 accepted observations | 0.1 | 0.3 (anonymous weights) |
//! | earning | 1 to 7 days old and 50 or more accepted | 0.5 | 0.5 |
//! | earned | 7 days old or more and 500 or more accepted | 0.5 | 1.0 (the seed's) |
//!
//! An observation is counted in the tier whose weight it carries, so a new key's
//! observations appear among the anonymous ones.

use super::WeightTier;

/// Tenure a key needs before it weighs more than anonymous telemetry.
pub const EARNING_TENURE_MS: i64 = 86_400_000;
/// Accepted observations a key needs before it weighs more than anonymous telemetry.
pub const EARNING_ACCEPTED: u64 = 50;
/// Tenure a key needs for the seed's full weights.
pub const EARNED_TENURE_MS: i64 = 7 * 86_400_000;
/// Accepted observations a key needs for the seed's full weights.
pub const EARNED_ACCEPTED: u64 = 500;

/// What the server knows of an agent key when it weighs an observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeyStanding {
    /// Unix ms of the key's registration.
    pub registered_at_ms: i64,
    /// Observations from the key the server accepted before.
    pub accepted: u64,
}

/// The tier of an observation sent with `key` (`None`: no valid key) for a host in the
/// catalog (`known_host`) or not, at `now_ms`.
pub fn key_tier(key: Option<KeyStanding>, known_host: bool, now_ms: i64) -> WeightTier {
    let Some(k) = key else {
        return WeightTier::of(false, known_host);
    };
    let tenure = now_ms.saturating_sub(k.registered_at_ms);
    if tenure >= EARNED_TENURE_MS && k.accepted >= EARNED_ACCEPTED {
        WeightTier::of(true, known_host)
    } else if tenure >= EARNING_TENURE_MS && k.accepted >= EARNING_ACCEPTED {
        WeightTier::KeyUnknownHost
    } else {
        WeightTier::of(false, known_host)
    }
}
