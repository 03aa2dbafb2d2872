//! Salt days (SPEC §10): one salt per UTC day, named `s_YYYYMMDD`, accepted from 00:00 UTC
//! of its day until 60 minutes after the next rotation, published only after that.

use serde::{Deserialize, Serialize};

use super::{salt_epoch, SALT_EPOCH_MS, SALT_OVERLAP_MS};
use crate::days::{civil_from_days, days_from_civil};

/// Where a salt id stands at a given time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SaltState {
    /// Not of the form `s_YYYYMMDD` with a real date.
    Malformed,
    /// Its day has not begun.
    Future,
    /// The salt of the current day.
    Current,
    /// Yesterday's salt, inside the 60 minutes after the rotation.
    Overlap,
    /// No longer accepted: it may be published.
    Expired,
}

/// The times of one salt day, in unix milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaltWindow {
    /// 00:00 UTC of its day.
    pub valid_from: i64,
    /// The next rotation (00:00 UTC of the next day): clients switch salts here.
    pub valid_until: i64,
    /// The end of the overlap: the gateway accepts it until here (exclusive), and it is
    /// published from here on.
    pub accepted_until: i64,
}

/// `s_YYYYMMDD` for a salt epoch (days since 1970-01-01 UTC).
pub fn salt_id(epoch: i64) -> String {
    let (y, m, d) = civil_from_days(epoch);
    format!("s_{y:04}{m:02}{d:02}")
}

/// The epoch a salt id names, or `None` unless it is exactly `s_` + eight digits forming a
/// real date (years 0000-9999).
pub fn salt_id_epoch(id: &str) -> Option<i64> {
    let digits = id.strip_prefix("s_")?;
    if digits.len() != 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| digits[r].parse::<u32>().ok();
    let (y, m, d) = (i64::from(n(0..4)?), n(4..6)?, n(6..8)?);
    let days = days_from_civil(y, m, d);
    // Round-trip to reject dates such as 2026-02-30 that normalise into another day.
    (civil_from_days(days) == (y, m, d)).then_some(days)
}

/// The window of a salt epoch.
pub fn salt_window(epoch: i64) -> SaltWindow {
    let valid_from = epoch * SALT_EPOCH_MS;
    SaltWindow {
        valid_from,
        valid_until: valid_from + SALT_EPOCH_MS,
        accepted_until: valid_from + SALT_EPOCH_MS + SALT_OVERLAP_MS,
    }
}

/// Where salt `id` stands at `now_ms`.
pub fn salt_state(id: &str, now_ms: i64) -> SaltState {
    let Some(epoch) = salt_id_epoch(id) else {
        return SaltState::Malformed;
    };
    let w = salt_window(epoch);
    let current = salt_epoch(now_ms);
    if epoch > current {
        SaltState::Future
    } else if epoch == current {
        SaltState::Current
    } else if now_ms < w.accepted_until {
        SaltState::Overlap
    } else {
        SaltState::Expired
    }
}

/// Whether salt `id` may be published at `now_ms`: only once it is no longer accepted.
pub fn salt_published(id: &str, now_ms: i64) -> bool {
    salt_state(id, now_ms) == SaltState::Expired
}
