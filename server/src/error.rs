//! The one error type every handler returns, and how it becomes an HTTP response.
//!
//! 4xx errors say what is wrong with the input (naming the field); 5xx errors say only
//! "internal error" to the client and log the cause with `tracing`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// An error a handler can return.
#[derive(Debug, thiserror::Error, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AppError {
    /// The request is malformed or fails validation (400).
    #[error("{message}")]
    BadRequest {
        /// What is wrong, naming the field.
        message: String,
    },
    /// The request body is larger than the limit (413).
    #[error("request body is larger than {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// No item of a batch is valid (400); each refused item is listed by index.
    #[error("{message}")]
    NoneValid {
        /// What is wrong, naming the first refused item.
        message: String,
        /// Every refused item.
        rejected: Vec<lowdown_core::record::validate::Rejection>,
    },
    /// Nothing exists under that name (404).
    #[error("{message}")]
    NotFound {
        /// What was not found.
        message: String,
    },
    /// The caller is over its rate limit (429); retry after `retry_after_secs`.
    #[error("rate limit exceeded: {limit} {what} per hour for this {scope}; retry after {retry_after_secs} s")]
    RateLimited {
        /// What is counted: `observations` or `registrations`.
        what: String,
        /// `agent key` or `IP address`.
        scope: String,
        /// The hourly limit that applies.
        limit: u32,
        /// Seconds until the window frees enough capacity.
        retry_after_secs: u64,
    },
    /// The request body did not arrive in full in time (408); the connection is closed.
    #[error("request body not received within {limit_secs} s")]
    RequestTimeout {
        /// The body deadline in seconds (`--body-timeout`).
        limit_secs: u64,
    },
    /// Something failed inside the server (500). The detail is logged, never sent.
    #[error("internal error")]
    Internal {
        /// The cause, for the log only.
        #[serde(skip)]
        detail: String,
    },
}

impl AppError {
    /// A 400 with a message naming the problem.
    pub fn bad_request(message: impl Into<String>) -> Self {
        AppError::BadRequest {
            message: message.into(),
        }
    }

    /// A 500 whose cause is logged, not returned.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        AppError::Internal {
            detail: detail.to_string(),
        }
    }

    /// The HTTP status this error maps to.
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::BadRequest { .. } | AppError::NoneValid { .. } => StatusCode::BAD_REQUEST,
            AppError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::NotFound { .. } => StatusCode::NOT_FOUND,
            AppError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            AppError::RequestTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            AppError::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<crate::db::DbError> for AppError {
    fn from(e: crate::db::DbError) -> Self {
        use crate::db::DbError;
        match e {
            DbError::RateLimited {
                what,
                scope,
                limit,
                retry_after_secs,
            } => AppError::RateLimited {
                what,
                scope,
                limit,
                retry_after_secs,
            },
            DbError::Internal { detail } => AppError::Internal { detail },
            other => AppError::internal(other),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        if let AppError::Internal { detail } = &self {
            tracing::error!(error = %detail, "request failed");
        }
        let status = self.status();
        let mut body = serde_json::json!({ "error": self.to_string() });
        if let AppError::NoneValid { rejected, .. } = &self {
            body["rejected"] = serde_json::json!(rejected);
        }
        let mut response = (status, axum::Json(body)).into_response();
        if let AppError::RateLimited {
            retry_after_secs, ..
        } = &self
        {
            if let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        if let AppError::RequestTimeout { .. } = &self {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// The result type of handlers.
pub type AppResult<T> = Result<T, AppError>;

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
