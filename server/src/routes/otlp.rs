//! OTLP/HTTP in (issue 27): `POST /v1/traces` and `POST /v1/metrics`, so any agent with an
//! OpenTelemetry SDK contributes its MCP client spans (`OTEL_EXPORTER_OTLP_ENDPOINT` set
//! to this server). The core decodes and maps (`lowdown_core::otlp`); the records go
//! through [`crate::services::records`], the path of `POST /api/interactions`, so the
//! host filter, the budgets, the per-network cap and idempotency apply alike. The caller
//! is the request's address (its network), like anonymous telemetry, and the agent of an
//! `X-Agent-Key` header when one is sent (`OTEL_EXPORTER_OTLP_HEADERS=X-Agent-Key=ak_…`).
//!
//! Answers follow the OTLP/HTTP specification: 200 with an `Export…ServiceResponse` in the
//! request's encoding, its `partial_success` counting the refused spans with the reasons;
//! 429 with `Retry-After` when spans were valid and every one was over a budget; a
//! `google.rpc.Status` in the request's encoding for a body that is not OTLP (400), too
//! large (413), of another content type (415, in JSON).

use std::io::Read;

use axum::body::Body;
use axum::extract::{FromRequest, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use lowdown_core::otlp::{self, json, proto};
use lowdown_core::record::validate::Rejection;

use crate::error::AppError;
use crate::extract::{read_body, Origin, MAX_BODY_BYTES};
use crate::services::records;
use crate::state::AppState;

/// Largest body once gunzipped: 4 MiB. A body that expands past it (a gzip bomb) is a 413.
pub const MAX_INFLATED_BYTES: usize = 4 * 1024 * 1024;

/// The two OTLP/HTTP encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/x-protobuf`.
    Protobuf,
    /// `application/json`.
    Json,
}

impl Format {
    fn content_type(self) -> &'static str {
        match self {
            Format::Protobuf => "application/x-protobuf",
            Format::Json => "application/json",
        }
    }
}

/// An OTLP request body: its encoding, and its bytes read within [`MAX_BODY_BYTES`] and,
/// when `Content-Encoding: gzip`, inflated within [`MAX_INFLATED_BYTES`].
pub struct OtlpBody {
    format: Format,
    bytes: Vec<u8>,
}

/// An error answered as OTLP/HTTP says: a `google.rpc.Status` in the request's encoding.
#[derive(Debug)]
pub struct OtlpError {
    format: Format,
    error: AppError,
}

impl IntoResponse for OtlpError {
    fn into_response(self) -> Response {
        if let AppError::Internal { detail } = &self.error {
            tracing::error!(error = %detail, "OTLP request failed");
        }
        let status = self.error.status();
        // google.rpc.Code: INVALID_ARGUMENT, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, INTERNAL.
        let code = match status.as_u16() {
            413 | 429 => 8,
            408 => 4,
            500.. => 13,
            _ => 3,
        };
        let message = self.error.to_string();
        let body = match self.format {
            Format::Protobuf => proto::status(code, &message),
            Format::Json => {
                serde_json::to_vec(&serde_json::json!({"code": code, "message": message}))
                    .unwrap_or_default()
            }
        };
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(self.format.content_type()),
        );
        if let Some(secs) = self.error.retry_after() {
            crate::error::set_retry_after(headers, secs);
        }
        response
    }
}

impl<S: Send + Sync> FromRequest<S> for OtlpBody {
    type Rejection = OtlpError;

    async fn from_request(req: Request<Body>, _state: &S) -> Result<Self, Self::Rejection> {
        let (format, gzip) = negotiate(req.headers())?;
        let fail = |error| OtlpError { format, error };
        let raw = read_body(req, MAX_BODY_BYTES).await.map_err(fail)?;
        let bytes = if gzip {
            gunzip(&raw).map_err(fail)?
        } else {
            raw.to_vec()
        };
        Ok(OtlpBody { format, bytes })
    }
}

/// The body's encoding and whether it is gzipped, from `Content-Type` and
/// `Content-Encoding` (415 for anything else).
fn negotiate(headers: &HeaderMap) -> Result<(Format, bool), OtlpError> {
    let header = |name| {
        headers.get(name).and_then(|v| v.to_str().ok()).map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
    };
    let format = match header(header::CONTENT_TYPE).as_deref() {
        Some("application/x-protobuf" | "application/protobuf") => Format::Protobuf,
        Some("application/json") => Format::Json,
        _ => {
            return Err(OtlpError {
                format: Format::Json,
                error: AppError::Refused {
                    status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    reason: "unsupported_media_type",
                    message: "content-type: must be application/x-protobuf or application/json"
                        .to_owned(),
                    retry_after: None,
                },
            })
        }
    };
    let fail = |error| OtlpError { format, error };
    let gzip = match header(header::CONTENT_ENCODING).as_deref() {
        None | Some("" | "identity") => false,
        Some("gzip") => true,
        Some(_) => {
            return Err(fail(AppError::Refused {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                reason: "unsupported_media_type",
                message: "content-encoding: must be gzip or none".to_owned(),
                retry_after: None,
            }))
        }
    };
    Ok((format, gzip))
}

/// `raw` inflated, refusing a body that is not gzip (400) or expands past
/// [`MAX_INFLATED_BYTES`] (413: only that much plus one byte is ever inflated).
fn gunzip(raw: &[u8]) -> Result<Vec<u8>, AppError> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(raw)
        .take(MAX_INFLATED_BYTES as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|_| AppError::bad_request("body: not valid gzip"))?;
    if out.len() > MAX_INFLATED_BYTES {
        return Err(AppError::Refused {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            reason: "payload_too_large",
            message: format!("body: expands past {MAX_INFLATED_BYTES} bytes when gunzipped"),
            retry_after: None,
        });
    }
    Ok(out)
}

/// The export answer, `rejected` items refused for `message`, in `format`.
fn export_answer(
    format: Format,
    status: StatusCode,
    rejected_key: &str,
    rejected: usize,
    message: &str,
) -> Response {
    let body = match format {
        Format::Protobuf => proto::export_response(rejected as u64, message),
        Format::Json => serde_json::to_vec(&json::export_response(
            rejected_key,
            rejected as u64,
            message,
        ))
        .unwrap_or_default(),
    };
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    response
}

/// `POST /v1/traces`: every MCP span becomes a record (see `lowdown_core::otlp` for the
/// mapping); every other span is refused in `partial_success` with the reason.
pub async fn traces(
    State(state): State<AppState>,
    origin: Origin,
    headers: HeaderMap,
    body: OtlpBody,
) -> Result<Response, OtlpError> {
    let format = body.format;
    let fail = |error| OtlpError { format, error };
    let decoded = match format {
        Format::Protobuf => proto::decode_traces(&body.bytes),
        Format::Json => json::decode_traces(&body.bytes),
    }
    .map_err(|e| fail(AppError::bad_request(e.to_string())))?;
    drop(body);
    let items = otlp::span_records(&decoded)
        .into_iter()
        .enumerate()
        .map(|(index, r)| {
            r.map_err(|e| Rejection {
                index,
                error: e.to_string(),
            })
        })
        .collect();
    let mut screened = records::screen(&state, items);
    let mut reasons: Vec<String> = screened.rejected.drain(..).map(|r| r.error).collect();
    let mut retry = None;
    if !screened.valid.is_empty() {
        let agent_id = super::telemetry::agent(&state, &headers)
            .await
            .map_err(fail)?
            .map(|a| a.agent_id);
        let stored = records::store(&state, &super::client(&origin), agent_id, screened)
            .await
            .map_err(fail)?;
        if let Some((e, secs)) = stored.refusal {
            if stored.accepted == 0 {
                // Nothing taken: OTLP's throttling answer, so the exporter sends it again.
                return Err(fail(e));
            }
            reasons.extend(stored.rate_limited.iter().map(|_| e.to_string()));
            retry = Some(secs);
        }
    }
    let message = otlp::refusal_summary(reasons.iter().map(String::as_str), "span");
    let mut response = export_answer(
        format,
        StatusCode::OK,
        "rejectedSpans",
        reasons.len(),
        &message,
    );
    if let Some(secs) = retry {
        crate::error::set_retry_after(response.headers_mut(), secs);
    }
    Ok(response)
}

/// `POST /v1/metrics`: decoded and acknowledged; no data point becomes a record (see
/// `lowdown_core::otlp::metric_records`: calls are counted from spans only).
pub async fn metrics(body: OtlpBody) -> Result<Response, OtlpError> {
    let format = body.format;
    let decoded = match format {
        Format::Protobuf => proto::decode_metrics(&body.bytes),
        Format::Json => json::decode_metrics(&body.bytes),
    }
    .map_err(|e| OtlpError {
        format,
        error: AppError::bad_request(e.to_string()),
    })?;
    debug_assert!(otlp::metric_records(&decoded).is_empty());
    Ok(export_answer(
        format,
        StatusCode::OK,
        "rejectedDataPoints",
        0,
        "",
    ))
}
