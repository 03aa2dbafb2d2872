//! A telemetry client's own count of what it may still send (SPEC §4): the server takes at
//! most [`RATE_LIMIT_PER_IP_PER_HOUR`] observations an hour from an anonymous caller and
//! [`RATE_LIMIT_PER_KEY_PER_HOUR`] from a registered agent, so a client sends no more than
//! that, and stops sending (telemetry only: interaction records never wait on it) when the
//! server says it is over anyway.
//!
//! Decisions:
//! - The hour is a window that starts with the first observation sent and restarts an hour
//!   later; what was not sent waits (or, past the host's queue bound, is dropped and counted).
//! - A refusal (a 429, or an answer with `rate_limited` items) pauses sending for the
//!   server's `Retry-After`, at least one second and at most an hour: the server knows better
//!   than the client's count (another process may share the caller). The server accepts a
//!   request up to its remaining budget, so the next send after the pause makes progress.
//! - What an answer means is decided here for every host ([`Budget::answered`]): telemetry
//!   is never resent, so each observation sent is delivered, throttled (over the server's
//!   quota: dropped, and sending pauses) or failed (no answer, any other status, a 2xx that
//!   is not the API's answer, or an item the API refused as invalid).

use super::{RATE_LIMIT_PER_IP_PER_HOUR, RATE_LIMIT_PER_KEY_PER_HOUR};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One hour, in milliseconds.
const HOUR_MS: f64 = 3_600_000.0;

/// What the answer to one telemetry request came to, for the host's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answered {
    /// Observations the API took.
    pub delivered: u32,
    /// Observations refused over the server's quota (sending is paused).
    pub throttled: u32,
    /// Observations lost otherwise: no answer, an error status, or refused as invalid.
    pub failed: u32,
}

/// What a client may still send this hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Observations allowed per window.
    pub limit: u32,
    /// Observations sent in the current window.
    pub used: u32,
    /// When the current window started (the host's clock, ms); none before the first send.
    pub window_start_ms: Option<f64>,
    /// No sending before this time (after a refusal), ms.
    pub paused_until_ms: f64,
}

impl Budget {
    /// The budget of an anonymous client, or of one sending with an agent key.
    pub fn new(with_agent_key: bool) -> Budget {
        Budget {
            limit: if with_agent_key {
                RATE_LIMIT_PER_KEY_PER_HOUR
            } else {
                RATE_LIMIT_PER_IP_PER_HOUR
            },
            used: 0,
            window_start_ms: None,
            paused_until_ms: 0.0,
        }
    }

    /// How many of `want` observations may be sent at `now_ms`; those count as sent.
    pub fn take(&mut self, now_ms: f64, want: u32) -> u32 {
        if now_ms < self.paused_until_ms {
            return 0;
        }
        self.roll(now_ms);
        let n = want.min(self.limit.saturating_sub(self.used));
        if n > 0 && self.window_start_ms.is_none() {
            self.window_start_ms = Some(now_ms);
        }
        self.used += n;
        n
    }

    /// The server refused observations as over its limit at `now_ms`, asking to wait
    /// `retry_after_s` seconds: no more are sent before then.
    pub fn refused(&mut self, now_ms: f64, retry_after_s: f64) {
        let wait_s = if retry_after_s.is_finite() {
            retry_after_s.clamp(1.0, 3600.0)
        } else {
            1.0
        };
        self.paused_until_ms = now_ms + wait_s * 1000.0;
    }

    /// Reads the answer (`status` `None` when none came) to `sent` observations posted at
    /// `now_ms`, pausing when the server says the caller is over its quota.
    pub fn answered(
        &mut self,
        now_ms: f64,
        sent: u32,
        status: Option<u16>,
        retry_after: Option<&str>,
        body: Option<&str>,
    ) -> Answered {
        let retry_after_s = retry_after
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(f64::NAN);
        let failed = Answered {
            failed: sent,
            ..Answered::default()
        };
        match status {
            Some(429) => {
                self.refused(now_ms, retry_after_s);
                Answered {
                    throttled: sent,
                    ..Answered::default()
                }
            }
            Some(200..=299) => {
                let answer: Option<Value> = body.and_then(|b| serde_json::from_str(b).ok());
                let count = |key: &str| {
                    answer
                        .as_ref()
                        .and_then(|a| a.get(key)?.as_u64())
                        .map(|n| n.min(u64::from(sent)) as u32)
                };
                let Some(accepted) = count("accepted") else {
                    return failed;
                };
                let throttled = count("rate_limited").unwrap_or(0);
                if throttled > 0 {
                    self.refused(now_ms, retry_after_s);
                }
                let delivered = accepted.min(sent - throttled);
                Answered {
                    delivered,
                    throttled,
                    failed: sent - throttled - delivered,
                }
            }
            _ => failed,
        }
    }

    /// Milliseconds from `now_ms` until at least one observation may be sent (0: now).
    pub fn wait_ms(&self, now_ms: f64) -> f64 {
        let pause = (self.paused_until_ms - now_ms).max(0.0);
        let window = match self.window_start_ms {
            Some(start) if self.used >= self.limit => (start + HOUR_MS - now_ms).max(0.0),
            _ => 0.0,
        };
        pause.max(window)
    }

    fn roll(&mut self, now_ms: f64) {
        if self
            .window_start_ms
            .is_some_and(|start| now_ms >= start + HOUR_MS)
        {
            self.window_start_ms = None;
            self.used = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anonymous_client_sends_sixty_an_hour_then_waits_for_the_window() {
        let mut b = Budget::new(false);
        assert_eq!(b.take(1000.0, 200), 60);
        assert_eq!(b.take(2000.0, 5), 0);
        assert_eq!(b.wait_ms(2000.0), 3_599_000.0);
        assert_eq!(b.take(1000.0 + HOUR_MS, 5), 5);
        assert_eq!(Budget::new(true).take(0.0, 1000), 600);
    }

    #[test]
    fn a_refusal_pauses_for_retry_after_within_bounds() {
        let mut b = Budget::new(true);
        b.take(0.0, 10);
        b.refused(500.0, 30.0);
        assert_eq!(b.take(1000.0, 1), 0);
        assert_eq!(b.wait_ms(1000.0), 29_500.0);
        assert_eq!(b.take(30_500.0, 1), 1);
        b.refused(0.0, f64::NAN);
        assert_eq!(b.paused_until_ms, 1000.0);
        b.refused(0.0, 1e9);
        assert_eq!(b.paused_until_ms, HOUR_MS);
    }

    #[test]
    fn an_answer_counts_each_observation_once_and_pauses_on_a_refusal() {
        let mut b = Budget::new(false);
        let a = b.answered(
            0.0,
            10,
            Some(200),
            Some("30"),
            Some(r#"{"accepted":6,"rate_limited":3}"#),
        );
        assert_eq!((a.delivered, a.throttled, a.failed), (6, 3, 1));
        assert_eq!(b.wait_ms(0.0), 30_000.0);
        let a = b.answered(0.0, 10, Some(404), None, Some("<html>"));
        assert_eq!((a.delivered, a.throttled, a.failed), (0, 0, 10));
        let a = b.answered(0.0, 4, Some(200), None, Some("ok"));
        assert_eq!(
            a.failed, 4,
            "a 2xx that is not the API's answer delivered nothing"
        );
    }
}
