//! [`Exporter`]: a session's spans and histogram, and when and what to send (sans-IO: the
//! host asks for a body, posts it, and says what came back).
//!
//! Decisions:
//! - Spans wait in a queue of at most [`QUEUE_MAX`]; past it the oldest are dropped and
//!   counted. A batch (at most [`BATCH_MAX`]) is due [`EXPORT_DELAY_MS`] after its first span,
//!   or at once when full, and when the session ends ([`Exporter::batch`] with `closing`).
//! - The histogram is cumulative from the session's start, so a failed metrics export loses
//!   nothing: the next one carries the same totals. It is due [`METRICS_INTERVAL_MS`] after
//!   the previous one when something new was recorded, and at the end.
//! - One request per signal at a time. A 2xx delivered the batch; anything else (no answer, a
//!   timeout, any status) drops the spans with a count and leaves that signal alone for
//!   [`BACKOFF_MS`] (spans keep queueing, bounded). No retries: a collector that is down or
//!   hangs costs a count, never memory or time.
//! - At the end every queued span goes in one last batch per signal, even while a request is
//!   in flight (the collector may only be slow): the host's exit budget bounds it. A signal
//!   paused after a failure gets no last batch: its spans are dropped and counted
//!   ([`Exporter::close`]), so a collector that is down costs the exit nothing.
//! - Trace and span ids come from a generator seeded by the host (the core has no
//!   randomness); each exchange is its own trace, as the proxy has no parent context.

use std::collections::VecDeque;

use serde::Serialize;

use super::config::ExportConfig;
use super::encode::{self, HistPoint, Origin, SpanOut};
use super::span::ExchangeSpan;
use super::{Protocol, DURATION_BUCKETS};

/// Spans held at most; past this the oldest are dropped.
pub const QUEUE_MAX: usize = 2048;
/// Spans per request at most.
pub const BATCH_MAX: usize = 512;
/// How long the first span of a batch waits for others.
pub const EXPORT_DELAY_MS: f64 = 1_000.0;
/// The shortest time between two metrics exports (but the last).
pub const METRICS_INTERVAL_MS: f64 = 10_000.0;
/// How long a signal is left alone after a failed request.
pub const BACKOFF_MS: f64 = 5_000.0;

/// The two signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Spans.
    Traces,
    /// The duration histogram.
    Metrics,
}

/// What export came to so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExportStats {
    /// Spans a collector took.
    pub spans_sent: u64,
    /// Spans dropped: the queue was full, or their request failed.
    pub spans_dropped: u64,
    /// Spans waiting.
    pub spans_queued: u64,
    /// Metrics exports a collector took.
    pub metric_exports: u64,
    /// Metrics exports that failed.
    pub metric_failures: u64,
}

#[derive(Debug, Clone)]
struct Hist {
    attributes: Vec<(&'static str, String)>,
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    buckets: [u64; DURATION_BUCKETS.len() + 1],
}

#[derive(Debug, Clone)]
struct Lane {
    protocol: Protocol,
    /// Spans (1 for metrics) of each request in flight, oldest first: one at a time, and at
    /// the end one more beside it (answers are credited in the order the requests went).
    inflight: VecDeque<usize>,
    paused_until: f64,
}

/// One session's export state (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct Exporter {
    origin: Origin,
    traces: Option<Lane>,
    metrics: Option<Lane>,
    rng: u64,
    queue: VecDeque<([u8; 16], [u8; 8], ExchangeSpan)>,
    first_queued_ms: Option<f64>,
    hists: Vec<Hist>,
    dirty: bool,
    start_ms: f64,
    last_metrics_ms: f64,
    stats: ExportStats,
}

impl Exporter {
    /// An exporter for a session that starts at `now_ms`, sending as `config` says, as
    /// `lowdown-proxy/<version>`; `seed`: random bytes from the host (16 or more).
    pub fn new(config: &ExportConfig, version: &str, seed: &[u8], now_ms: f64) -> Exporter {
        let lane = |s: &Option<super::config::SignalConfig>| {
            s.as_ref().map(|s| Lane {
                protocol: s.protocol,
                inflight: VecDeque::new(),
                paused_until: 0.0,
            })
        };
        let mut resource = vec![("service.name".to_owned(), config.service_name.clone())];
        resource.extend(config.resource.iter().cloned());
        for (k, v) in [
            ("telemetry.sdk.name", "lowdown"),
            ("telemetry.sdk.language", "rust"),
            ("telemetry.sdk.version", version),
        ] {
            if !resource.iter().any(|(have, _)| have == k) {
                resource.push((k.to_owned(), v.to_owned()));
            }
        }
        let rng = seed.iter().fold(0x9e37_79b9_7f4a_7c15_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
        Exporter {
            origin: Origin {
                resource,
                scope_name: "lowdown-proxy".to_owned(),
                scope_version: version.to_owned(),
            },
            traces: lane(&config.traces),
            metrics: lane(&config.metrics),
            rng,
            queue: VecDeque::new(),
            first_queued_ms: None,
            hists: Vec::new(),
            dirty: false,
            start_ms: now_ms,
            last_metrics_ms: now_ms,
            stats: ExportStats::default(),
        }
    }

    /// SplitMix64: ids need to be unique, not secret.
    fn next(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)).max(1)
    }

    /// Takes one exchange's span (queued when traces are on) and histogram point (when
    /// metrics are), at `now_ms`.
    pub fn add(&mut self, span: ExchangeSpan, now_ms: f64) {
        if self.metrics.is_some() {
            self.record(&span);
        }
        if self.traces.is_none() {
            return;
        }
        let mut trace_id = [0u8; 16];
        trace_id[..8].copy_from_slice(&self.next().to_be_bytes());
        trace_id[8..].copy_from_slice(&self.next().to_be_bytes());
        let span_id = self.next().to_be_bytes();
        if self.queue.len() >= QUEUE_MAX {
            self.queue.pop_front();
            self.stats.spans_dropped += 1;
        }
        self.queue.push_back((trace_id, span_id, span));
        self.first_queued_ms.get_or_insert(now_ms);
    }

    /// [`Exporter::add`] for each span of JSON lines (a [`crate::record::Recorder`]'s
    /// `take_spans`); a line that is not a span is skipped.
    pub fn add_lines(&mut self, lines: &str, now_ms: f64) {
        for line in lines.split('\n').filter(|l| !l.is_empty()) {
            if let Ok(span) = serde_json::from_str::<ExchangeSpan>(line) {
                self.add(span, now_ms);
            }
        }
    }

    fn record(&mut self, span: &ExchangeSpan) {
        let attributes = span.metric_attributes();
        let secs = span.latency_ms / 1000.0;
        let i = match self.hists.iter().position(|h| h.attributes == attributes) {
            Some(i) => i,
            None => {
                self.hists.push(Hist {
                    attributes,
                    count: 0,
                    sum: 0.0,
                    min: f64::INFINITY,
                    max: f64::NEG_INFINITY,
                    buckets: [0; DURATION_BUCKETS.len() + 1],
                });
                self.hists.len() - 1
            }
        };
        let h = &mut self.hists[i];
        h.count += 1;
        h.sum += secs;
        h.min = h.min.min(secs);
        h.max = h.max.max(secs);
        // A value on a boundary belongs to the bucket it closes (upper bounds are inclusive).
        let bucket = DURATION_BUCKETS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(DURATION_BUCKETS.len());
        h.buckets[bucket] += 1;
        self.dirty = true;
    }

    /// The body to post for `signal` now, or `None` when nothing is due (or that signal is
    /// off, busy or paused). `closing`: the session ended, everything goes now. The host posts
    /// it and reports with [`Exporter::done`].
    pub fn batch(&mut self, signal: Signal, now_ms: f64, closing: bool) -> Option<Vec<u8>> {
        let due = self.due_in(signal, now_ms, closing)?;
        if due > 0.0 {
            return None;
        }
        match signal {
            Signal::Traces => {
                let protocol = self.traces.as_ref()?.protocol;
                let n = if closing {
                    self.queue.len()
                } else {
                    self.queue.len().min(BATCH_MAX)
                };
                let taken: Vec<_> = self.queue.drain(..n).collect();
                self.first_queued_ms = (!self.queue.is_empty()).then_some(now_ms);
                let out: Vec<SpanOut<'_>> = taken
                    .iter()
                    .map(|(trace_id, span_id, span)| SpanOut {
                        trace_id: *trace_id,
                        span_id: *span_id,
                        span,
                    })
                    .collect();
                let body = encode::traces(&self.origin, &out, protocol);
                if let Some(lane) = self.traces.as_mut() {
                    lane.inflight.push_back(n);
                }
                Some(body)
            }
            Signal::Metrics => {
                let protocol = self.metrics.as_ref()?.protocol;
                let points: Vec<HistPoint> = self
                    .hists
                    .iter()
                    .map(|h| HistPoint {
                        attributes: h.attributes.clone(),
                        count: h.count,
                        sum: h.sum,
                        min: h.min,
                        max: h.max,
                        buckets: h.buckets.to_vec(),
                    })
                    .collect();
                self.dirty = false;
                self.last_metrics_ms = now_ms;
                if let Some(lane) = self.metrics.as_mut() {
                    lane.inflight.push_back(1);
                }
                Some(encode::metrics(
                    &self.origin,
                    &points,
                    self.start_ms,
                    now_ms,
                    protocol,
                ))
            }
        }
    }

    /// Milliseconds until `signal` has a batch due (0: now), or `None` when nothing waits.
    fn due_in(&self, signal: Signal, now_ms: f64, closing: bool) -> Option<f64> {
        let (lane, waiting, ready_at) = match signal {
            Signal::Traces => (
                self.traces.as_ref()?,
                !self.queue.is_empty(),
                if self.queue.len() >= BATCH_MAX {
                    now_ms
                } else {
                    self.first_queued_ms.unwrap_or(now_ms) + EXPORT_DELAY_MS
                },
            ),
            Signal::Metrics => (
                self.metrics.as_ref()?,
                self.dirty,
                self.last_metrics_ms + METRICS_INTERVAL_MS,
            ),
        };
        if !waiting {
            return None;
        }
        if closing {
            // A collector that just failed is not given the exit budget again.
            return (now_ms >= lane.paused_until).then_some(0.0);
        }
        if !lane.inflight.is_empty() {
            return None;
        }
        Some((ready_at.max(lane.paused_until) - now_ms).max(0.0))
    }

    /// Milliseconds until the host should call [`Exporter::batch`] again, or `None` when
    /// nothing waits (or every waiting signal has a request in flight).
    pub fn next_due_ms(&self, now_ms: f64) -> Option<f64> {
        [Signal::Traces, Signal::Metrics]
            .into_iter()
            .filter_map(|s| self.due_in(s, now_ms, false))
            .reduce(f64::min)
    }

    /// What became of `signal`'s request in flight: its HTTP `status`, or `None` when no
    /// answer came (unreachable, timed out, aborted at exit).
    pub fn done(&mut self, signal: Signal, status: Option<u16>, now_ms: f64) {
        let ok = status.is_some_and(|s| (200..300).contains(&s));
        let lane = match signal {
            Signal::Traces => self.traces.as_mut(),
            Signal::Metrics => self.metrics.as_mut(),
        };
        let Some(lane) = lane else { return };
        let n = lane.inflight.pop_front().unwrap_or(0) as u64;
        if !ok {
            lane.paused_until = now_ms + BACKOFF_MS;
        }
        match (signal, ok) {
            (Signal::Traces, true) => self.stats.spans_sent += n,
            (Signal::Traces, false) => self.stats.spans_dropped += n,
            (Signal::Metrics, true) => self.stats.metric_exports += 1,
            (Signal::Metrics, false) => {
                self.stats.metric_failures += 1;
                self.dirty = true;
            }
        }
    }

    /// The session ended at `now_ms` and every last batch was asked for: what is still queued
    /// (its signal paused after a failure) is dropped and counted.
    pub fn close(&mut self, _now_ms: f64) {
        self.stats.spans_dropped += self.queue.len() as u64;
        self.queue.clear();
        self.first_queued_ms = None;
    }

    /// What export came to so far.
    pub fn stats(&self) -> ExportStats {
        ExportStats {
            spans_queued: self.queue.len() as u64,
            ..self.stats.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otel_export::config::from_env;
    use crate::record::Outcome;

    fn exporter(extra: &[(&str, &str)]) -> Exporter {
        let mut vars = vec![
            ("LOWDOWN_OTEL", "1"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ];
        vars.extend_from_slice(extra);
        let env = move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        };
        Exporter::new(&from_env(&env).unwrap(), "0.2.0", &[7; 16], 0.0)
    }

    fn span(latency_ms: f64) -> ExchangeSpan {
        ExchangeSpan {
            method: "ping".into(),
            tool: None,
            request_id: "1".into(),
            start_ms: 10.0,
            latency_ms,
            error_type: None,
            status_code: None,
            protocol_version: None,
            server_name: None,
            server_version: None,
            outcome: Outcome::Success,
            error_layer: None,
            target: "t".into(),
        }
    }

    fn json(body: Vec<u8>) -> serde_json::Value {
        serde_json::from_slice(&body).unwrap()
    }

    #[test]
    fn batches_wait_for_the_delay_or_the_end() {
        let mut e = exporter(&[]);
        assert_eq!(e.next_due_ms(0.0), None);
        e.add(span(5.0), 100.0);
        assert_eq!(e.next_due_ms(100.0), Some(1000.0));
        assert!(e.batch(Signal::Traces, 500.0, false).is_none());
        let body = json(e.batch(Signal::Traces, 500.0, true).unwrap());
        let spans = &body["resourceSpans"][0]["scopeSpans"][0]["spans"];
        assert_eq!(spans.as_array().unwrap().len(), 1);
        assert_eq!(spans[0]["traceId"].as_str().unwrap().len(), 32);
        e.done(Signal::Traces, Some(200), 510.0);
        assert_eq!(e.stats().spans_sent, 1);
    }

    #[test]
    fn the_queue_is_bounded_and_failures_drop_with_a_count() {
        let mut e = exporter(&[]);
        for _ in 0..QUEUE_MAX + 3 {
            e.add(span(1.0), 0.0);
        }
        assert_eq!(e.stats().spans_dropped, 3);
        assert_eq!(e.next_due_ms(0.0), Some(0.0));
        assert!(e.batch(Signal::Traces, 0.0, false).is_some());
        // in flight: no second request until it ends
        assert!(e.batch(Signal::Traces, 0.0, false).is_none());
        e.done(Signal::Traces, Some(500), 10.0);
        assert_eq!(e.stats().spans_dropped, 3 + BATCH_MAX as u64);
        // paused for the backoff, also at the end: what waits is dropped and counted
        assert!(e.batch(Signal::Traces, 20.0, false).is_none());
        assert_eq!(e.next_due_ms(20.0), Some(BACKOFF_MS - 10.0));
        assert!(e.batch(Signal::Traces, 20.0, true).is_none());
        e.close(20.0);
        assert_eq!(e.stats().spans_dropped, QUEUE_MAX as u64 + 3);
        assert_eq!(e.stats().spans_queued, 0);
        // past the pause, the end sends everything, even with a request in flight
        let mut e = exporter(&[]);
        for _ in 0..BATCH_MAX + 1 {
            e.add(span(1.0), 0.0);
        }
        assert!(e.batch(Signal::Traces, 0.0, false).is_some());
        assert!(e.batch(Signal::Traces, 5.0, true).is_some());
        e.done(Signal::Traces, Some(200), 6.0);
        e.done(Signal::Traces, Some(200), 7.0);
        assert_eq!(e.stats().spans_sent, BATCH_MAX as u64 + 1);
    }

    #[test]
    fn the_histogram_is_cumulative_with_the_advised_buckets() {
        let mut e = exporter(&[("OTEL_TRACES_EXPORTER", "none")]);
        for ms in [5.0, 10.0, 15.0, 400_000.0] {
            e.add(span(ms), 0.0);
        }
        assert_eq!(e.stats().spans_queued, 0);
        assert_eq!(e.next_due_ms(0.0), Some(METRICS_INTERVAL_MS));
        let body = json(e.batch(Signal::Metrics, 20.0, true).unwrap());
        let p = &body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["histogram"]
            ["dataPoints"][0];
        let buckets: Vec<&str> = p["bucketCounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        // 0.005 and 0.010 in (-inf, 0.01], 0.015 in (0.01, 0.02], 400 s past 300
        assert_eq!(buckets[..2], ["2", "1"]);
        assert_eq!(buckets[14], "1");
        assert_eq!(p["count"], "4");
        assert_eq!(p["min"], 0.005);
        e.done(Signal::Metrics, Some(503), 30.0);
        // cumulative: the totals go again with the next export, after the pause
        assert!(e.batch(Signal::Metrics, 40.0, true).is_none());
        let body = json(e.batch(Signal::Metrics, 30.0 + BACKOFF_MS, true).unwrap());
        let p = &body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["histogram"]
            ["dataPoints"][0];
        assert_eq!(p["count"], "4");
        assert_eq!(p["startTimeUnixNano"], "0");
    }
}
