//! OTLP/HTTP JSON bodies (`Content-Type: application/json`), by the OTLP/JSON rules:
//! field names in lowerCamelCase (the proto names are accepted too, as proto3 JSON
//! parsers do), trace and span ids in hex, 64-bit integers as strings or numbers, enums
//! as integers (their names are accepted too). Unknown fields are ignored; only the
//! mapped attributes are kept (see [`super`]).

use serde_json::{json, Map, Value};

use super::{
    AttrValue, DecodeError, Mapped, Metrics, ResourceFacts, ResourceSpans, Span, SpanKind,
    StatusCode, Traces,
};

fn bad(detail: impl Into<String>) -> DecodeError {
    DecodeError::Json {
        detail: detail.into(),
    }
}

/// The field `camel` (or its proto name `snake`) of `m`; JSON `null` reads as absent.
fn field<'a>(m: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    m.get(camel)
        .or_else(|| m.get(snake))
        .filter(|v| !v.is_null())
}

fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, DecodeError> {
    v.as_object()
        .ok_or_else(|| bad(format!("{path}: must be an object")))
}

/// The array `camel` of `m` (absent reads as empty).
fn array<'a>(
    m: &'a Map<String, Value>,
    camel: &str,
    snake: &str,
    path: &str,
) -> Result<&'a [Value], DecodeError> {
    match field(m, camel, snake) {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(bad(format!("{path}.{camel}: must be an array"))),
    }
}

fn hex_id(
    m: &Map<String, Value>,
    camel: &str,
    snake: &str,
    path: &str,
) -> Result<Vec<u8>, DecodeError> {
    match field(m, camel, snake) {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => {
            hex::decode(s).map_err(|_| bad(format!("{path}.{camel}: must be hex")))
        }
        Some(_) => Err(bad(format!("{path}.{camel}: must be a hex string"))),
    }
}

/// A 64-bit unsigned integer given as a string or a number (absent reads as 0).
fn uint64(
    m: &Map<String, Value>,
    camel: &str,
    snake: &str,
    path: &str,
) -> Result<u64, DecodeError> {
    let err = || {
        bad(format!(
            "{path}.{camel}: must be an unsigned 64-bit integer"
        ))
    };
    match field(m, camel, snake) {
        None => Ok(0),
        Some(Value::String(s)) => s.parse().map_err(|_| err()),
        Some(Value::Number(n)) => n.as_u64().ok_or_else(err),
        Some(_) => Err(err()),
    }
}

/// An enum given as its number or its name (`SPAN_KIND_CLIENT`); `names` lists the names
/// in number order.
fn enumeration(
    m: &Map<String, Value>,
    key: &str,
    names: &[&str],
    path: &str,
) -> Result<i32, DecodeError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Number(n)) => n
            .as_i64()
            .and_then(|i| i32::try_from(i).ok())
            .ok_or_else(|| bad(format!("{path}.{key}: must be an integer"))),
        Some(Value::String(s)) => Ok(names
            .iter()
            .position(|n| n == s)
            .and_then(|i| i32::try_from(i).ok())
            .unwrap_or(-1)),
        Some(_) => Err(bad(format!("{path}.{key}: must be an integer"))),
    }
}

const KINDS: &[&str] = &[
    "SPAN_KIND_UNSPECIFIED",
    "SPAN_KIND_INTERNAL",
    "SPAN_KIND_SERVER",
    "SPAN_KIND_CLIENT",
    "SPAN_KIND_PRODUCER",
    "SPAN_KIND_CONSUMER",
];
const STATUSES: &[&str] = &["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"];

/// Hands every `{key, value}` of `attributes` to `keep`.
fn attributes(
    m: &Map<String, Value>,
    path: &str,
    mut keep: impl FnMut(&str, AttrValue),
) -> Result<(), DecodeError> {
    for (i, kv) in array(m, "attributes", "attributes", path)?
        .iter()
        .enumerate()
    {
        let here = format!("{path}.attributes[{i}]");
        let kv = object(kv, &here)?;
        let Some(Value::String(key)) = kv.get("key") else {
            return Err(bad(format!("{here}.key: must be a string")));
        };
        let value = match kv.get("value") {
            Some(Value::Object(v)) => {
                if let Some(Value::String(s)) = field(v, "stringValue", "string_value") {
                    AttrValue::Str(s.clone())
                } else {
                    match field(v, "intValue", "int_value") {
                        Some(Value::String(s)) => {
                            s.parse().map(AttrValue::Int).unwrap_or(AttrValue::Other)
                        }
                        Some(Value::Number(n)) => {
                            n.as_i64().map_or(AttrValue::Other, AttrValue::Int)
                        }
                        _ => AttrValue::Other,
                    }
                }
            }
            _ => AttrValue::Other,
        };
        keep(key, value);
    }
    Ok(())
}

fn root(bytes: &[u8]) -> Result<Map<String, Value>, DecodeError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(bad("body: must be a JSON object")),
        // serde_json's message names line and column and never echoes the input.
        Err(e) => Err(bad(format!("malformed JSON: {e}"))),
    }
}

/// Decodes an `ExportTraceServiceRequest` in OTLP/JSON.
pub fn decode_traces(bytes: &[u8]) -> Result<Traces, DecodeError> {
    let m = root(bytes)?;
    let mut resources = Vec::new();
    for (i, rs) in array(&m, "resourceSpans", "resource_spans", "body")?
        .iter()
        .enumerate()
    {
        let path = format!("resourceSpans[{i}]");
        let rs = object(rs, &path)?;
        let mut resource = ResourceFacts::default();
        if let Some(r) = field(rs, "resource", "resource") {
            attributes(
                object(r, &format!("{path}.resource"))?,
                &format!("{path}.resource"),
                |k, v| resource.keep(k, v),
            )?;
        }
        let mut spans = Vec::new();
        for (j, ss) in array(rs, "scopeSpans", "scope_spans", &path)?
            .iter()
            .enumerate()
        {
            let path = format!("{path}.scopeSpans[{j}]");
            let ss = object(ss, &path)?;
            for (k, s) in array(ss, "spans", "spans", &path)?.iter().enumerate() {
                let path = format!("{path}.spans[{k}]");
                let s = object(s, &path)?;
                let mut attrs = Mapped::default();
                attributes(s, &path, |k, v| attrs.keep(k, v))?;
                let status = match field(s, "status", "status") {
                    Some(st) => enumeration(
                        object(st, &format!("{path}.status"))?,
                        "code",
                        STATUSES,
                        &format!("{path}.status"),
                    )?,
                    None => 0,
                };
                spans.push(Span {
                    trace_id: hex_id(s, "traceId", "trace_id", &path)?,
                    span_id: hex_id(s, "spanId", "span_id", &path)?,
                    parent_span_id: hex_id(s, "parentSpanId", "parent_span_id", &path)?,
                    kind: SpanKind::from_i32(enumeration(s, "kind", KINDS, &path)?),
                    start_ns: uint64(s, "startTimeUnixNano", "start_time_unix_nano", &path)?,
                    end_ns: uint64(s, "endTimeUnixNano", "end_time_unix_nano", &path)?,
                    status: StatusCode::from_i32(status),
                    attrs,
                });
            }
        }
        resources.push(ResourceSpans { resource, spans });
    }
    Ok(Traces { resources })
}

/// Decodes an `ExportMetricsServiceRequest` in OTLP/JSON and counts its points.
pub fn decode_metrics(bytes: &[u8]) -> Result<Metrics, DecodeError> {
    let m = root(bytes)?;
    let mut out = Metrics::default();
    for (i, rm) in array(&m, "resourceMetrics", "resource_metrics", "body")?
        .iter()
        .enumerate()
    {
        let path = format!("resourceMetrics[{i}]");
        let rm = object(rm, &path)?;
        for (j, sm) in array(rm, "scopeMetrics", "scope_metrics", &path)?
            .iter()
            .enumerate()
        {
            let path = format!("{path}.scopeMetrics[{j}]");
            let sm = object(sm, &path)?;
            for (k, metric) in array(sm, "metrics", "metrics", &path)?.iter().enumerate() {
                let path = format!("{path}.metrics[{k}]");
                let metric = object(metric, &path)?;
                let mut n = 0u64;
                for (camel, snake) in [
                    ("gauge", "gauge"),
                    ("sum", "sum"),
                    ("histogram", "histogram"),
                    ("exponentialHistogram", "exponential_histogram"),
                    ("summary", "summary"),
                ] {
                    if let Some(data) = field(metric, camel, snake) {
                        let here = format!("{path}.{camel}");
                        n += array(object(data, &here)?, "dataPoints", "data_points", &here)?.len()
                            as u64;
                    }
                }
                out.data_points += n;
                if metric.get("name").and_then(Value::as_str) == Some(super::MCP_CLIENT_DURATION) {
                    out.mcp_duration_points += n;
                }
            }
        }
    }
    Ok(out)
}

/// The JSON export answer, `rejected_key` being `rejectedSpans` or `rejectedDataPoints`:
/// `{}` for a full success, else `{"partialSuccess": {<rejected_key>: "N", "errorMessage": …}}`
/// (an int64 is a string in proto3 JSON).
pub fn export_response(rejected_key: &str, rejected: u64, error_message: &str) -> Value {
    if rejected == 0 && error_message.is_empty() {
        return json!({});
    }
    let mut partial = Map::new();
    partial.insert(rejected_key.to_owned(), Value::String(rejected.to_string()));
    partial.insert(
        "errorMessage".to_owned(),
        Value::String(error_message.to_owned()),
    );
    json!({ "partialSuccess": partial })
}
