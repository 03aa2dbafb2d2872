//! OTLP/HTTP protobuf bodies (`Content-Type: application/x-protobuf`): the subset of
//! `opentelemetry-proto` the mapping reads, declared by hand with the same field numbers
//! (no `protoc`, no build script). Fields not declared here (span names, events, links,
//! status messages, every attribute value type but strings and integers) are skipped by
//! the decoder without being kept.

use prost::Message;

use super::{
    AttrValue, DecodeError, Mapped, Metrics, ResourceFacts, ResourceSpans, Span, SpanKind,
    StatusCode, Traces,
};

/// `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct ExportTraceServiceRequest {
    /// Field 1.
    #[prost(message, repeated, tag = "1")]
    pub resource_spans: Vec<PbResourceSpans>,
}

/// `opentelemetry.proto.trace.v1.ResourceSpans`.
#[derive(Clone, PartialEq, Message)]
pub struct PbResourceSpans {
    /// Field 1.
    #[prost(message, optional, tag = "1")]
    pub resource: Option<PbResource>,
    /// Field 2.
    #[prost(message, repeated, tag = "2")]
    pub scope_spans: Vec<PbScopeSpans>,
}

/// `opentelemetry.proto.resource.v1.Resource`.
#[derive(Clone, PartialEq, Message)]
pub struct PbResource {
    /// Field 1.
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
}

/// `opentelemetry.proto.trace.v1.ScopeSpans` (the scope itself is skipped).
#[derive(Clone, PartialEq, Message)]
pub struct PbScopeSpans {
    /// Field 2.
    #[prost(message, repeated, tag = "2")]
    pub spans: Vec<PbSpan>,
}

/// `opentelemetry.proto.trace.v1.Span`, without its name, events, links and state.
#[derive(Clone, PartialEq, Message)]
pub struct PbSpan {
    /// Field 1.
    #[prost(bytes = "vec", tag = "1")]
    pub trace_id: Vec<u8>,
    /// Field 2.
    #[prost(bytes = "vec", tag = "2")]
    pub span_id: Vec<u8>,
    /// Field 4.
    #[prost(bytes = "vec", tag = "4")]
    pub parent_span_id: Vec<u8>,
    /// Field 6 (`SpanKind`).
    #[prost(int32, tag = "6")]
    pub kind: i32,
    /// Field 7.
    #[prost(fixed64, tag = "7")]
    pub start_time_unix_nano: u64,
    /// Field 8.
    #[prost(fixed64, tag = "8")]
    pub end_time_unix_nano: u64,
    /// Field 9.
    #[prost(message, repeated, tag = "9")]
    pub attributes: Vec<KeyValue>,
    /// Field 15.
    #[prost(message, optional, tag = "15")]
    pub status: Option<PbStatus>,
}

/// `opentelemetry.proto.trace.v1.Status`, without its message.
#[derive(Clone, PartialEq, Message)]
pub struct PbStatus {
    /// Field 3 (`StatusCode`).
    #[prost(int32, tag = "3")]
    pub code: i32,
}

/// `opentelemetry.proto.common.v1.KeyValue`.
#[derive(Clone, PartialEq, Message)]
pub struct KeyValue {
    /// Field 1.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Field 2.
    #[prost(message, optional, tag = "2")]
    pub value: Option<AnyValue>,
}

/// `opentelemetry.proto.common.v1.AnyValue`: strings and integers only.
#[derive(Clone, PartialEq, Message)]
pub struct AnyValue {
    /// The `value` oneof.
    #[prost(oneof = "Any", tags = "1, 3")]
    pub value: Option<Any>,
}

/// The kept cases of `AnyValue.value`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Any {
    /// `string_value` (1).
    #[prost(string, tag = "1")]
    StringValue(String),
    /// `int_value` (3).
    #[prost(int64, tag = "3")]
    IntValue(i64),
}

/// `opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct ExportMetricsServiceRequest {
    /// Field 1.
    #[prost(message, repeated, tag = "1")]
    pub resource_metrics: Vec<PbResourceMetrics>,
}

/// `opentelemetry.proto.metrics.v1.ResourceMetrics` (the resource is skipped).
#[derive(Clone, PartialEq, Message)]
pub struct PbResourceMetrics {
    /// Field 2.
    #[prost(message, repeated, tag = "2")]
    pub scope_metrics: Vec<PbScopeMetrics>,
}

/// `opentelemetry.proto.metrics.v1.ScopeMetrics`.
#[derive(Clone, PartialEq, Message)]
pub struct PbScopeMetrics {
    /// Field 2.
    #[prost(message, repeated, tag = "2")]
    pub metrics: Vec<PbMetric>,
}

/// `opentelemetry.proto.metrics.v1.Metric`: its name and how many points each kind of
/// data holds (the `data` oneof's cases as optional fields: the same bytes on the wire).
#[derive(Clone, PartialEq, Message)]
pub struct PbMetric {
    /// Field 1.
    #[prost(string, tag = "1")]
    pub name: String,
    /// `gauge` (5).
    #[prost(message, optional, tag = "5")]
    pub gauge: Option<Points>,
    /// `sum` (7).
    #[prost(message, optional, tag = "7")]
    pub sum: Option<Points>,
    /// `histogram` (9).
    #[prost(message, optional, tag = "9")]
    pub histogram: Option<Points>,
    /// `exponential_histogram` (10).
    #[prost(message, optional, tag = "10")]
    pub exponential_histogram: Option<Points>,
    /// `summary` (11).
    #[prost(message, optional, tag = "11")]
    pub summary: Option<Points>,
}

/// Any of the data messages: only their `data_points` (field 1), counted.
#[derive(Clone, PartialEq, Message)]
pub struct Points {
    /// Field 1, each point skipped.
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<Skipped>,
}

/// A message read past.
#[derive(Clone, PartialEq, Message)]
pub struct Skipped {}

/// `ExportTracePartialSuccess` (trace) or `ExportMetricsPartialSuccess` (metrics): the
/// same two fields.
#[derive(Clone, PartialEq, Message)]
pub struct PartialSuccess {
    /// `rejected_spans` / `rejected_data_points` (1).
    #[prost(int64, tag = "1")]
    pub rejected: i64,
    /// `error_message` (2).
    #[prost(string, tag = "2")]
    pub error_message: String,
}

/// `ExportTraceServiceResponse` / `ExportMetricsServiceResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct ExportResponse {
    /// `partial_success` (1).
    #[prost(message, optional, tag = "1")]
    pub partial_success: Option<PartialSuccess>,
}

/// `google.rpc.Status`, the OTLP/HTTP error body (without `details`).
#[derive(Clone, PartialEq, Message)]
pub struct RpcStatus {
    /// `code` (1), a `google.rpc.Code`.
    #[prost(int32, tag = "1")]
    pub code: i32,
    /// `message` (2).
    #[prost(string, tag = "2")]
    pub message: String,
}

fn protobuf_error(e: prost::DecodeError) -> DecodeError {
    DecodeError::Protobuf {
        detail: e.to_string(),
    }
}

fn keep_all<F: FnMut(&str, AttrValue)>(attrs: Vec<KeyValue>, mut keep: F) {
    for kv in attrs {
        let value = match kv.value.and_then(|v| v.value) {
            Some(Any::StringValue(s)) => AttrValue::Str(s),
            Some(Any::IntValue(i)) => AttrValue::Int(i),
            None => AttrValue::Other,
        };
        keep(&kv.key, value);
    }
}

/// Decodes an `ExportTraceServiceRequest`.
pub fn decode_traces(bytes: &[u8]) -> Result<Traces, DecodeError> {
    let req = ExportTraceServiceRequest::decode(bytes).map_err(protobuf_error)?;
    let resources = req
        .resource_spans
        .into_iter()
        .map(|rs| {
            let mut resource = ResourceFacts::default();
            if let Some(r) = rs.resource {
                keep_all(r.attributes, |k, v| resource.keep(k, v));
            }
            let spans = rs
                .scope_spans
                .into_iter()
                .flat_map(|ss| ss.spans)
                .map(|s| {
                    let mut attrs = Mapped::default();
                    keep_all(s.attributes, |k, v| attrs.keep(k, v));
                    Span {
                        trace_id: s.trace_id,
                        span_id: s.span_id,
                        parent_span_id: s.parent_span_id,
                        kind: SpanKind::from_i32(s.kind),
                        start_ns: s.start_time_unix_nano,
                        end_ns: s.end_time_unix_nano,
                        status: StatusCode::from_i32(s.status.map_or(0, |st| st.code)),
                        attrs,
                    }
                })
                .collect();
            ResourceSpans { resource, spans }
        })
        .collect();
    Ok(Traces { resources })
}

/// Decodes an `ExportMetricsServiceRequest` and counts its points.
pub fn decode_metrics(bytes: &[u8]) -> Result<Metrics, DecodeError> {
    let req = ExportMetricsServiceRequest::decode(bytes).map_err(protobuf_error)?;
    let mut m = Metrics::default();
    for metric in req
        .resource_metrics
        .iter()
        .flat_map(|r| &r.scope_metrics)
        .flat_map(|s| &s.metrics)
    {
        let n: u64 = [
            &metric.gauge,
            &metric.sum,
            &metric.histogram,
            &metric.exponential_histogram,
            &metric.summary,
        ]
        .into_iter()
        .flatten()
        .map(|p| p.data_points.len() as u64)
        .sum();
        m.data_points += n;
        if metric.name == super::MCP_CLIENT_DURATION {
            m.mcp_duration_points += n;
        }
    }
    Ok(m)
}

/// The protobuf export answer: `partial_success` only when something was refused or there
/// is a message (an empty message is a full success).
pub fn export_response(rejected: u64, error_message: &str) -> Vec<u8> {
    let partial_success = (rejected > 0 || !error_message.is_empty()).then(|| PartialSuccess {
        rejected: i64::try_from(rejected).unwrap_or(i64::MAX),
        error_message: error_message.to_owned(),
    });
    ExportResponse { partial_success }.encode_to_vec()
}

/// A protobuf `google.rpc.Status` error body.
pub fn status(code: i32, message: &str) -> Vec<u8> {
    RpcStatus {
        code,
        message: message.to_owned(),
    }
    .encode_to_vec()
}
