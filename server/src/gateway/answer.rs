//! Refusals of the gateway and of its API answers, as JSON `{"error", "reason"}` with the
//! right status (403 for a refused decision, 429 with `Retry-After`, 504 on a timeout).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::AppError;

/// A refusal: status, a message naming what is wrong, a stable `reason`.
#[derive(Debug)]
pub struct Refusal {
    /// HTTP status.
    pub status: StatusCode,
    /// What is wrong, for people.
    pub message: String,
    /// Stable kind, for programs (e.g. `expired_salt`).
    pub reason: &'static str,
    /// Seconds for `Retry-After` (429).
    pub retry_after: Option<u64>,
}

impl Refusal {
    /// A refusal with `status`, `reason` and `message`.
    pub fn new(status: StatusCode, reason: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            message: message.into(),
            reason,
            retry_after: None,
        }
    }
}

impl From<AppError> for Refusal {
    fn from(e: AppError) -> Refusal {
        let reason = match &e {
            AppError::BadRequest { .. } | AppError::NoneValid { .. } => "bad_request",
            AppError::PayloadTooLarge { .. } => "payload_too_large",
            AppError::NotFound { .. } => "not_found",
            AppError::RateLimited { .. } => "rate_limited",
            AppError::RequestTimeout { .. } => "request_timeout",
            AppError::Internal { detail } => {
                tracing::error!(error = %detail, "gateway request failed");
                "internal"
            }
        };
        Refusal {
            status: e.status(),
            message: e.to_string(),
            reason,
            retry_after: None,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.message, "reason": self.reason});
        let mut r = (self.status, axum::Json(body)).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s.max(1)));
        }
        r
    }
}

impl From<crate::db::DbError> for Refusal {
    fn from(e: crate::db::DbError) -> Refusal {
        Refusal::from(AppError::from(e))
    }
}
