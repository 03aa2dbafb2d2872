//! OTLP request bodies, written by hand: `ExportTraceServiceRequest` and
//! `ExportMetricsServiceRequest` of `opentelemetry-proto` (v1) in protobuf and in the OTLP
//! JSON mapping (ids as hex, 64-bit integers as decimal strings, enums as numbers, camelCase
//! keys). Only the fields the proxy fills are written; no protobuf library is needed, so the
//! WebAssembly fallback stays small.

use super::span::ExchangeSpan;
use super::Protocol;
use super::{DURATION_BUCKETS, DURATION_DESCRIPTION, DURATION_METRIC, DURATION_UNIT};

/// Who sends: the resource and the instrumentation scope of every request.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    /// The resource's attributes (`service.name` first).
    pub resource: Vec<(String, String)>,
    /// The instrumentation scope's name.
    pub scope_name: String,
    /// The instrumentation scope's version.
    pub scope_version: String,
}

/// A span ready to encode.
#[derive(Debug, Clone, Copy)]
pub struct SpanOut<'a> {
    /// 16 random bytes (each exchange is its own trace: the proxy has no parent context).
    pub trace_id: [u8; 16],
    /// 8 random bytes.
    pub span_id: [u8; 8],
    /// What the span says.
    pub span: &'a ExchangeSpan,
}

/// One cumulative histogram point.
#[derive(Debug, Clone, PartialEq)]
pub struct HistPoint {
    /// Its attributes.
    pub attributes: Vec<(&'static str, String)>,
    /// Values recorded.
    pub count: u64,
    /// Their sum, seconds.
    pub sum: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// Counts per bucket of [`DURATION_BUCKETS`] (one more than the boundaries).
    pub buckets: Vec<u64>,
}

/// `ms` since the epoch in nanoseconds.
pub fn nanos(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        // Whole milliseconds and the fraction apart: ms * 1e6 would round away the
        // microseconds of a present-day time.
        let whole = ms.trunc();
        (whole as u64) * 1_000_000 + ((ms - whole) * 1e6).round() as u64
    } else {
        0
    }
}

const SPAN_KIND_CLIENT: u64 = 3;
const STATUS_ERROR: u64 = 2;
const CUMULATIVE: u64 = 2;

/// The body of a traces export.
pub fn traces(origin: &Origin, spans: &[SpanOut<'_>], protocol: Protocol) -> Vec<u8> {
    match protocol {
        Protocol::Json => traces_json(origin, spans),
        Protocol::Protobuf => {
            let mut scope_spans = Pb::default();
            scope_spans.msg(1, &scope(origin));
            for s in spans {
                scope_spans.msg(2, &span_pb(s));
            }
            let mut rs = Pb::default();
            rs.msg(1, &resource(origin));
            rs.msg(2, &scope_spans.0);
            let mut req = Pb::default();
            req.msg(1, &rs.0);
            req.0
        }
    }
}

/// The body of a metrics export: the duration histogram's cumulative points since `start_ms`.
pub fn metrics(
    origin: &Origin,
    points: &[HistPoint],
    start_ms: f64,
    now_ms: f64,
    protocol: Protocol,
) -> Vec<u8> {
    let (start, now) = (nanos(start_ms), nanos(now_ms));
    match protocol {
        Protocol::Json => metrics_json(origin, points, start, now),
        Protocol::Protobuf => {
            let mut hist = Pb::default();
            for p in points {
                let mut dp = Pb::default();
                dp.fixed64(2, start);
                dp.fixed64(3, now);
                dp.fixed64(4, p.count);
                dp.double(5, p.sum);
                let mut packed = Vec::with_capacity(p.buckets.len() * 8);
                for b in &p.buckets {
                    packed.extend_from_slice(&b.to_le_bytes());
                }
                dp.bytes(6, &packed);
                let mut bounds = Vec::with_capacity(DURATION_BUCKETS.len() * 8);
                for b in DURATION_BUCKETS {
                    bounds.extend_from_slice(&b.to_le_bytes());
                }
                dp.bytes(7, &bounds);
                for (k, v) in &p.attributes {
                    dp.msg(9, &kv(k, v));
                }
                dp.double(11, p.min);
                dp.double(12, p.max);
                hist.msg(1, &dp.0);
            }
            hist.varint(2, CUMULATIVE);
            let mut metric = Pb::default();
            metric.string(1, DURATION_METRIC);
            metric.string(2, DURATION_DESCRIPTION);
            metric.string(3, DURATION_UNIT);
            metric.msg(9, &hist.0);
            let mut sm = Pb::default();
            sm.msg(1, &scope(origin));
            sm.msg(2, &metric.0);
            let mut rm = Pb::default();
            rm.msg(1, &resource(origin));
            rm.msg(2, &sm.0);
            let mut req = Pb::default();
            req.msg(1, &rm.0);
            req.0
        }
    }
}

fn span_pb(s: &SpanOut<'_>) -> Vec<u8> {
    let sp = s.span;
    let mut m = Pb::default();
    m.bytes(1, &s.trace_id);
    m.bytes(2, &s.span_id);
    m.string(5, &sp.name());
    m.varint(6, SPAN_KIND_CLIENT);
    m.fixed64(7, nanos(sp.start_ms));
    m.fixed64(8, nanos(sp.start_ms + sp.latency_ms));
    for (k, v) in sp.attributes() {
        m.msg(9, &kv(k, &v));
    }
    if sp.is_error() {
        let mut status = Pb::default();
        status.varint(3, STATUS_ERROR);
        m.msg(15, &status.0);
    }
    m.0
}

fn kv(k: &str, v: &str) -> Vec<u8> {
    let mut any = Pb::default();
    any.string(1, v);
    let mut m = Pb::default();
    m.string(1, k);
    m.msg(2, &any.0);
    m.0
}

fn resource(origin: &Origin) -> Vec<u8> {
    let mut m = Pb::default();
    for (k, v) in &origin.resource {
        m.msg(1, &kv(k, v));
    }
    m.0
}

fn scope(origin: &Origin) -> Vec<u8> {
    let mut m = Pb::default();
    m.string(1, &origin.scope_name);
    m.string(2, &origin.scope_version);
    m.0
}

/// A protobuf message being written.
#[derive(Default)]
struct Pb(Vec<u8>);

impl Pb {
    fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn tag(&mut self, field: u32, wire: u8) {
        self.raw_varint(u64::from(field) << 3 | u64::from(wire));
    }
    fn varint(&mut self, field: u32, v: u64) {
        self.tag(field, 0);
        self.raw_varint(v);
    }
    fn fixed64(&mut self, field: u32, v: u64) {
        self.tag(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn double(&mut self, field: u32, v: f64) {
        self.tag(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.tag(field, 2);
        self.raw_varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn string(&mut self, field: u32, s: &str) {
        self.bytes(field, s.as_bytes());
    }
    fn msg(&mut self, field: u32, m: &[u8]) {
        self.bytes(field, m);
    }
}

/// OTLP JSON, written straight into a string: no `serde_json::Value` tree (smaller in the
/// WebAssembly build, and one pass).
#[derive(Default)]
struct Js(String);

impl Js {
    fn raw(&mut self, s: &str) -> &mut Self {
        self.0.push_str(s);
        self
    }
    fn string(&mut self, s: &str) -> &mut Self {
        self.0.push('"');
        for c in s.chars() {
            match c {
                '"' => self.0.push_str("\\\""),
                '\\' => self.0.push_str("\\\\"),
                c if (c as u32) < 0x20 => self.0.push_str(&format!("\\u{:04x}", c as u32)),
                c => self.0.push(c),
            }
        }
        self.0.push('"');
        self
    }
    /// `,"key":` (or `"key":` first in an object: `first`).
    fn key(&mut self, key: &str, first: bool) -> &mut Self {
        if !first {
            self.0.push(',');
        }
        self.string(key).raw(":")
    }
    fn number(&mut self, v: f64) -> &mut Self {
        // ryu-js (JavaScript's shortest form, already in the core) rather than `f64`'s
        // `Display`, whose float formatting would add kilobytes to the WebAssembly build.
        let v = if v.is_finite() { v } else { 0.0 };
        self.raw(ryu_js::Buffer::new().format_finite(v))
    }
    /// A 64-bit integer as the OTLP JSON mapping writes it: a decimal string.
    fn long(&mut self, v: u64) -> &mut Self {
        self.raw("\"").raw(&v.to_string()).raw("\"")
    }
    fn attributes<K: AsRef<str>>(&mut self, attrs: &[(K, String)]) -> &mut Self {
        self.raw("[");
        for (i, (k, v)) in attrs.iter().enumerate() {
            if i > 0 {
                self.raw(",");
            }
            self.raw("{\"key\":").string(k.as_ref());
            self.raw(",\"value\":{\"stringValue\":").string(v).raw("}}");
        }
        self.raw("]")
    }
    /// `{"resource":{...},"scope<kind>":[{"scope":{...},"<items>":` — the caller writes the
    /// items and closes with [`Js::close_origin`].
    fn open_origin(&mut self, origin: &Origin, kind: &str, items: &str) -> &mut Self {
        self.raw("{\"resource\":{\"attributes\":")
            .attributes(&origin.resource)
            .raw("},")
            .string(kind)
            .raw(":[{\"scope\":{\"name\":")
            .string(&origin.scope_name)
            .raw(",\"version\":")
            .string(&origin.scope_version)
            .raw("},")
            .string(items)
            .raw(":[")
    }
    fn close_origin(&mut self) -> &mut Self {
        self.raw("]}]}]}")
    }
}

fn traces_json(origin: &Origin, spans: &[SpanOut<'_>]) -> Vec<u8> {
    let mut j = Js::default();
    j.raw("{\"resourceSpans\":[")
        .open_origin(origin, "scopeSpans", "spans");
    for (i, s) in spans.iter().enumerate() {
        let sp = s.span;
        if i > 0 {
            j.raw(",");
        }
        j.raw("{")
            .key("traceId", true)
            .string(&hex::encode(s.trace_id));
        j.key("spanId", false).string(&hex::encode(s.span_id));
        j.key("name", false).string(&sp.name());
        j.key("kind", false).raw(&SPAN_KIND_CLIENT.to_string());
        j.key("startTimeUnixNano", false).long(nanos(sp.start_ms));
        j.key("endTimeUnixNano", false)
            .long(nanos(sp.start_ms + sp.latency_ms));
        j.key("attributes", false).attributes(&sp.attributes());
        if sp.is_error() {
            j.key("status", false)
                .raw("{\"code\":")
                .raw(&STATUS_ERROR.to_string())
                .raw("}");
        }
        j.raw("}");
    }
    j.close_origin();
    j.0.into_bytes()
}

fn metrics_json(origin: &Origin, points: &[HistPoint], start: u64, now: u64) -> Vec<u8> {
    let mut j = Js::default();
    j.raw("{\"resourceMetrics\":[")
        .open_origin(origin, "scopeMetrics", "metrics")
        .raw("{");
    j.key("name", true).string(DURATION_METRIC);
    j.key("description", false).string(DURATION_DESCRIPTION);
    j.key("unit", false).string(DURATION_UNIT);
    j.key("histogram", false).raw("{\"dataPoints\":[");
    for (i, p) in points.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.raw("{");
        j.key("attributes", true).attributes(&p.attributes);
        j.key("startTimeUnixNano", false).long(start);
        j.key("timeUnixNano", false).long(now);
        j.key("count", false).long(p.count);
        j.key("sum", false).number(p.sum);
        j.key("bucketCounts", false).raw("[");
        for (k, b) in p.buckets.iter().enumerate() {
            if k > 0 {
                j.raw(",");
            }
            j.long(*b);
        }
        j.raw("]");
        j.key("explicitBounds", false).raw("[");
        for (k, b) in DURATION_BUCKETS.iter().enumerate() {
            if k > 0 {
                j.raw(",");
            }
            j.number(*b);
        }
        j.raw("]");
        j.key("min", false).number(p.min);
        j.key("max", false).number(p.max);
        j.raw("}");
    }
    j.raw("],\"aggregationTemporality\":")
        .raw(&CUMULATIVE.to_string())
        .raw("}}");
    j.close_origin();
    j.0.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Outcome;
    use serde_json::Value;

    fn span() -> ExchangeSpan {
        ExchangeSpan {
            method: "tools/call".into(),
            tool: Some("echo".into()),
            request_id: "7".into(),
            start_ms: 1_700_000_000_000.5,
            latency_ms: 2.25,
            error_type: Some("tool_error".into()),
            status_code: None,
            protocol_version: None,
            server_name: None,
            server_version: None,
            outcome: Outcome::Failure,
            error_layer: None,
            target: "npm:x".into(),
        }
    }

    fn origin() -> Origin {
        Origin {
            resource: vec![("service.name".into(), "svc".into())],
            scope_name: "lowdown-proxy".into(),
            scope_version: "0.2.0".into(),
        }
    }

    #[test]
    fn varints_and_nanos() {
        let mut p = Pb::default();
        p.varint(1, 300);
        assert_eq!(p.0, [0x08, 0xac, 0x02]);
        assert_eq!(nanos(1.5), 1_500_000);
        assert_eq!(nanos(f64::NAN), 0);
    }

    #[test]
    fn protobuf_traces_hold_the_fields_at_their_numbers() {
        let sp = span();
        let out = SpanOut {
            trace_id: [1; 16],
            span_id: [2; 8],
            span: &sp,
        };
        let body = traces(&origin(), &[out], Protocol::Protobuf);
        let needle = |b: &[u8]| body.windows(b.len()).any(|w| w == b);
        // trace_id: field 1, wire type 2, 16 bytes
        assert!(needle(&[0x0a, 16, 1, 1, 1]));
        assert!(needle(b"tools/call echo"));
        // status { code: ERROR }
        assert!(needle(&[0x7a, 2, 0x18, 2]));
        // the end time: start + 2.25 ms in ns, fixed64 field 8
        let mut end = vec![0x41];
        end.extend_from_slice(&nanos(1_700_000_000_002.75).to_le_bytes());
        assert!(needle(&end));
    }

    #[test]
    fn json_strings_are_escaped() {
        let mut j = Js::default();
        j.string("a\"b\\c\nd\u{1}é");
        let back: String = serde_json::from_str(&j.0).unwrap();
        assert_eq!(back, "a\"b\\c\nd\u{1}é");
    }

    #[test]
    fn json_uses_the_otlp_mapping() {
        let sp = span();
        let out = SpanOut {
            trace_id: [0xab; 16],
            span_id: [0xcd; 8],
            span: &sp,
        };
        let v: Value = serde_json::from_slice(&traces(&origin(), &[out], Protocol::Json)).unwrap();
        let s = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(s["traceId"], "abababababababababababababababab");
        assert_eq!(s["kind"], 3);
        assert_eq!(s["status"]["code"], 2);
        assert_eq!(s["startTimeUnixNano"], "1700000000000500000");
        let p = HistPoint {
            attributes: vec![("mcp.method.name", "ping".into())],
            count: 2,
            sum: 0.5,
            min: 0.1,
            max: 0.4,
            buckets: vec![0; 15],
        };
        let v: Value =
            serde_json::from_slice(&metrics(&origin(), &[p], 1.0, 2.0, Protocol::Json)).unwrap();
        let m = &v["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0];
        assert_eq!(m["name"], DURATION_METRIC);
        assert_eq!(m["histogram"]["aggregationTemporality"], 2);
        assert_eq!(m["histogram"]["dataPoints"][0]["count"], "2");
        assert_eq!(
            m["histogram"]["dataPoints"][0]["explicitBounds"]
                .as_array()
                .unwrap()
                .len(),
            14
        );
    }
}
