//! What an answer of `POST /api/interactions` means for the batch a host sent (SPEC §3,
//! §5): which records were taken, which were refused for good, which the host keeps (in its
//! spool) to send again, and how long it leaves the API alone. Every host that delivers
//! records (the proxy, `prowl`) asks here, so they never decide differently.
//!
//! Decisions:
//! - Records carry `record_id`s, so sending one again is always safe: the API acknowledges
//!   a repeat as a duplicate and never counts it twice. When in doubt, keep.
//! - 2xx with the API's answer: `rejected` records are invalid and would be refused
//!   forever, so they are dropped and counted; `rate_limited` ones are kept and the API is
//!   left alone for its `Retry-After`; the rest are delivered.
//! - 400: the API refused every record as invalid: all are dropped.
//! - 429: every record is kept (those listed in `rate_limited`, or all), for `Retry-After`.
//! - Anything else (no answer, a timeout, 5xx, 413, and every other 4xx such as the 404 of a
//!   mistyped `LOWDOWN_API_URL`), and a 2xx that is not the API's answer: every record is
//!   kept and the API left alone for [`BACKOFF_MS`]. A wrong URL never loses records.
//! - `Retry-After` is whole seconds, bounded to 1 s .. 1 h; unreadable or missing means
//!   [`BACKOFF_MS`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Records (or observations) a host sends in one request.
pub const BATCH_MAX: usize = 100;
/// How long a host waits for one delivery request before it keeps the batch.
pub const SEND_TIMEOUT_MS: u64 = 1_000;
/// How long a host's exit waits for deliveries still pending; what is left goes to the spool.
pub const EXIT_BUDGET_MS: u64 = 100;
/// The most bytes of the API's answer to one delivery a host reads: the answer is a few
/// kilobytes (one small item per record or observation); a longer one is not the API's, and
/// the batch is kept as after no answer, so a hostile API URL cannot make a host buffer any size.
pub const ANSWER_MAX_BYTES: u64 = 64 * 1024;
/// How long a host leaves the API alone after a failed delivery.
pub const BACKOFF_MS: u64 = 30_000;
/// The longest pause an answer's `Retry-After` can ask for.
pub const MAX_PAUSE_MS: u64 = 3_600_000;

/// What a batch's answer came to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// Records the API took (stored now or acknowledged as duplicates).
    pub delivered: u32,
    /// Of those, acknowledged duplicates.
    pub duplicates: u32,
    /// Records refused as invalid: dropped, never sent again.
    pub rejected: u32,
    /// Indices (into the batch) of the records to keep and send again later.
    pub keep: Vec<u32>,
    /// Of those, the ones kept because the API said the caller is over a quota.
    pub limited: u32,
    /// Milliseconds to leave the API alone (0: go on).
    pub pause_ms: u64,
    /// Why the records were kept, for a host's diagnostics (`None` when none were).
    pub reason: Option<String>,
}

/// The pause a `Retry-After` header value asks for.
fn retry_after_ms(retry_after: Option<&str>) -> u64 {
    match retry_after.and_then(|v| v.trim().parse::<u64>().ok()) {
        Some(s) => s.saturating_mul(1000).clamp(1000, MAX_PAUSE_MS),
        None => BACKOFF_MS,
    }
}

/// Indices listed in `rate_limited` that fall inside a batch of `len`, in order, once each.
fn listed(answer: &Value, len: u32) -> Option<Vec<u32>> {
    let items = answer.get("rate_limited")?.as_array()?;
    let mut out: Vec<u32> = items
        .iter()
        .filter_map(Value::as_u64)
        .filter(|i| *i < u64::from(len))
        .map(|i| i as u32)
        .collect();
    out.sort_unstable();
    out.dedup();
    Some(out)
}

fn keep_all(len: u32, pause_ms: u64, reason: String) -> Delivery {
    Delivery {
        keep: (0..len).collect(),
        pause_ms,
        reason: Some(reason),
        ..Delivery::default()
    }
}

/// What the answer to a batch of `len` records means: its HTTP `status` (`None` when no
/// answer came: unreachable, timed out), its `Retry-After` header and its body.
pub fn delivery(
    len: u32,
    status: Option<u16>,
    retry_after: Option<&str>,
    body: Option<&str>,
) -> Delivery {
    let Some(status) = status else {
        return keep_all(len, BACKOFF_MS, "no answer".to_owned());
    };
    let answer: Option<Value> = body.and_then(|b| serde_json::from_str(b).ok());
    match status {
        200..=299 => {
            let Some(a) = answer.filter(|a| a.get("accepted").is_some_and(Value::is_u64)) else {
                return keep_all(
                    len,
                    BACKOFF_MS,
                    format!("status {status} without the API's answer"),
                );
            };
            let keep = listed(&a, len).unwrap_or_default();
            let rejected = a
                .get("rejected")
                .and_then(Value::as_array)
                .map_or(0, |r| r.len() as u32)
                .min(len - keep.len() as u32);
            let delivered = len
                .saturating_sub(rejected)
                .saturating_sub(keep.len() as u32);
            let duplicates = a
                .get("duplicates")
                .and_then(Value::as_u64)
                .map_or(0, |d| d.min(u64::from(delivered)) as u32);
            let limited = !keep.is_empty();
            Delivery {
                delivered,
                duplicates,
                rejected,
                pause_ms: if limited {
                    retry_after_ms(retry_after)
                } else {
                    0
                },
                reason: limited.then(|| format!("{} over a quota", keep.len())),
                limited: keep.len() as u32,
                keep,
            }
        }
        400 => Delivery {
            rejected: len,
            ..Delivery::default()
        },
        429 => {
            let keep = answer
                .as_ref()
                .and_then(|a| listed(a, len))
                .filter(|k| !k.is_empty())
                .unwrap_or_else(|| (0..len).collect());
            let rejected = answer
                .as_ref()
                .and_then(|a| a.get("rejected"))
                .and_then(Value::as_array)
                .map_or(0, |r| r.len() as u32)
                .min(len - keep.len() as u32);
            Delivery {
                rejected,
                pause_ms: retry_after_ms(retry_after),
                reason: Some("status 429".to_owned()),
                limited: keep.len() as u32,
                keep,
                ..Delivery::default()
            }
        }
        _ => keep_all(len, BACKOFF_MS, format!("status {status}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_never_exceed_the_batch() {
        let d = delivery(
            2,
            Some(201),
            None,
            Some(r#"{"accepted":9,"duplicates":9,"rejected":[{},{},{}],"rate_limited":[0,7]}"#),
        );
        assert_eq!((d.delivered, d.rejected, d.keep.clone()), (0, 1, vec![0]));
        assert!(d.delivered + d.rejected + d.keep.len() as u32 <= 2);
    }
}
