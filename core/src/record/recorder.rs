//! [`Recorder`]: a session's bytes in, finished interaction records out, as the JSON lines a
//! host sends or spools without parsing them.
//!
//! It is [`Classifier`] and [`build_record`] joined, so a host crosses into the core once per
//! chunk of bytes and gets back finished records (SPEC §3), never exchanges it would have to
//! parse and hand back in. Each record is one line of JSON (no `\n` inside), in the order its
//! request finished; several records are joined by `\n`. Record ids are the host's per-session
//! prefix (the core has no randomness) followed by `-` and a sequence number in hex.

use super::build::{build_record, RecordContext};
use crate::classify::{Classifier, CloseReason, Direction, Exchange};

/// Bit of [`Recorder::flags`]: the last feed finished a client→server `tools/call` whose result
/// has a `content` array (the only kind the proxy's `--watch-log` block may be appended to).
pub const CARRIES_LOG: u32 = 1;

/// Classifies one MCP session and builds its records (see the [module docs](self)).
#[derive(Debug)]
pub struct Recorder {
    classifier: Classifier,
    ctx: RecordContext,
    id_prefix: String,
    seq: u64,
    flags: u32,
    /// With OpenTelemetry export on: the spans of exchanges finished since the last
    /// [`Recorder::take_spans`], as JSON lines of [`crate::otel_export::ExchangeSpan`].
    spans: Option<String>,
}

impl Recorder {
    /// A recorder for a new session; `id_prefix` is a random token from the host (at most 40
    /// of `[A-Za-z0-9_-]`, so that every id fits the API's 64-character `record_id`).
    pub fn new(ctx: RecordContext, id_prefix: &str) -> Recorder {
        Recorder {
            classifier: Classifier::new(),
            ctx,
            id_prefix: id_prefix.chars().take(40).collect(),
            seq: 0,
            flags: 0,
            spans: None,
        }
    }

    /// Also builds each finished client request's OpenTelemetry span
    /// ([`crate::otel_export::exchange_span`]), for [`Recorder::take_spans`].
    pub fn collect_spans(&mut self) {
        self.spans.get_or_insert_with(String::new);
    }

    /// The spans built since the last call, as JSON lines (empty when none, or when
    /// [`Recorder::collect_spans`] was never called), for an
    /// [`crate::otel_export::Exporter`] that may live on another thread.
    pub fn take_spans(&mut self) -> String {
        self.spans.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Feeds bytes that travelled `direction` at the host's `now_ms`; returns the records they
    /// finished as JSON lines (empty when none).
    pub fn feed(&mut self, direction: Direction, bytes: &[u8], now_ms: f64) -> String {
        let exchanges = self.classifier.feed(direction, bytes, now_ms);
        self.flags = if exchanges.iter().any(carries_log) {
            CARRIES_LOG
        } else {
            0
        };
        self.records(&exchanges)
    }

    /// Ends the session at `now_ms`, ended as `reason` says (see [`Classifier::close`]);
    /// returns the last records.
    pub fn close(&mut self, now_ms: f64, reason: CloseReason) -> String {
        let exchanges = self.classifier.close(now_ms, reason);
        self.flags = 0;
        self.records(&exchanges)
    }

    /// What the last feed finished, as [`CARRIES_LOG`] bits.
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// The classifier underneath, for what it has learnt ([`Classifier::facts`]).
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    fn records(&mut self, exchanges: &[Exchange]) -> String {
        let mut out = String::new();
        for e in exchanges {
            if let Some(spans) = self.spans.as_mut() {
                let facts = self.classifier.facts();
                if let Some(span) = crate::otel_export::exchange_span(e, facts, &self.ctx.target) {
                    if !spans.is_empty() {
                        spans.push('\n');
                    }
                    // Strings, numbers and enums: serialising cannot fail.
                    spans.push_str(&serde_json::to_string(&span).unwrap_or_default());
                }
            }
            let id = format!("{}-{:x}", self.id_prefix, self.seq);
            let Some(record) = build_record(e, self.classifier.facts(), &self.ctx, Some(id)) else {
                continue;
            };
            self.seq += 1;
            if !out.is_empty() {
                out.push('\n');
            }
            // A record holds strings and numbers only: serialising it cannot fail.
            out.push_str(&serde_json::to_string(&record).unwrap_or_default());
        }
        out
    }
}

fn carries_log(e: &Exchange) -> bool {
    e.direction == Direction::ClientToServer
        && e.request_kind == crate::record::RequestKind::Tool
        && e.has_content
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}
"#;
    const RESULT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}
"#;

    #[test]
    fn records_come_back_as_json_lines_with_ids_from_the_prefix() {
        let ctx = RecordContext {
            target: "npm:x".into(),
            ..RecordContext::default()
        };
        let mut r = Recorder::new(ctx, "abc");
        assert_eq!(r.feed(Direction::ClientToServer, CALL, 0.0), "");
        let out = r.feed(Direction::ServerToClient, RESULT, 2.5);
        assert_eq!(r.flags(), CARRIES_LOG);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["record_id"], "abc-0");
        assert_eq!(v["task_type"], "echo");
        assert_eq!(v["latency_ms"], 2.5);
        r.feed(Direction::ClientToServer, CALL, 3.0);
        let out = r.close(4.0, CloseReason::ServerEnded);
        assert_eq!(r.flags(), 0);
        assert!(out.contains(r#""record_id":"abc-1""#), "{out}");
        assert!(!out.contains('\n'));
    }

    #[test]
    fn spans_only_when_asked_and_once() {
        let mut r = Recorder::new(RecordContext::default(), "p");
        r.feed(Direction::ClientToServer, CALL, 0.0);
        r.feed(Direction::ServerToClient, RESULT, 1.0);
        assert_eq!(r.take_spans(), "");
        r.collect_spans();
        r.feed(Direction::ClientToServer, CALL, 2.0);
        r.feed(Direction::ServerToClient, RESULT, 3.0);
        let line = r.take_spans();
        let span: crate::otel_export::ExchangeSpan = serde_json::from_str(&line).unwrap();
        assert_eq!(span.name(), "tools/call echo");
        assert_eq!(r.take_spans(), "");
    }

    #[test]
    fn server_requests_build_no_record_and_use_no_id() {
        let mut r = Recorder::new(RecordContext::default(), "p");
        r.feed(
            Direction::ServerToClient,
            br#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}
"#,
            0.0,
        );
        assert_eq!(
            r.feed(
                Direction::ClientToServer,
                br#"{"jsonrpc":"2.0","id":7,"result":{}}
"#,
                1.0
            ),
            ""
        );
        r.feed(Direction::ClientToServer, CALL, 0.0);
        let out = r.feed(Direction::ServerToClient, RESULT, 1.0);
        assert!(out.contains(r#""record_id":"p-0""#), "{out}");
    }
}
