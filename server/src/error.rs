//! The one error type every handler returns, and how it becomes an HTTP response: always
//! `{"error": <what is wrong>, "reason": <stable snake_case kind>}` (plus `rejected` when no
//! item of a batch is valid), the router's fallbacks and the gateway's refusals included.
//!
//! 4xx errors say what is wrong with the input (naming the field); 5xx errors say only
//! "internal error" to the client and log the cause with `tracing`. [`set_retry_after`] is
//! the one place that writes `Retry-After`.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// An error a handler can return.
#[derive(Debug, thiserror::Error)]
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
    /// The caller is over its rate limit (429, with `Retry-After`).
    #[error(transparent)]
    RateLimited(crate::db::OverQuota),
    /// The request body did not arrive in full in time (408); the connection is closed.
    #[error("request body not received within {limit_secs} s")]
    RequestTimeout {
        /// The body deadline in seconds (`--body-timeout`).
        limit_secs: u64,
    },
    /// No route has that method (405).
    #[error("method not allowed on this endpoint; see /openapi.json")]
    MethodNotAllowed,
    /// A refusal with its own status and reason (the gateway's, provider mode's: e.g. 403
    /// `expired_salt`, 409 `salt_not_published`, 429 `gateway_rate_limited`).
    #[error("{message}")]
    Refused {
        /// HTTP status.
        status: StatusCode,
        /// Stable kind, for programs.
        reason: &'static str,
        /// What is wrong, for people.
        message: String,
        /// Seconds for `Retry-After`, when retrying later helps.
        retry_after: Option<u64>,
    },
    /// Something failed inside the server (500). The detail is logged, never sent.
    #[error("internal error")]
    Internal {
        /// The cause, for the log only.
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

    /// A refusal with `status`, a stable `reason` and a `message` naming what is wrong.
    pub fn refused(status: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        AppError::Refused {
            status,
            reason,
            message: message.into(),
            retry_after: None,
        }
    }

    /// The 400 of a body with no valid `item` (`record`, `observation`) in it: a single
    /// item's own error, or for an array the first refused item (`records[i].field: …`) and
    /// every refusal by index.
    pub fn none_valid(
        item: &str,
        single: bool,
        rejected: Vec<lowdown_core::record::validate::Rejection>,
    ) -> Self {
        let first = rejected
            .first()
            .map_or_else(String::new, |r| r.error.clone());
        if single {
            return AppError::bad_request(first);
        }
        let index = rejected.first().map_or(0, |r| r.index);
        let at = match first.strip_prefix(&format!("{item}: ")) {
            Some(why) => format!("{item}s[{index}]: {why}"),
            None => format!("{item}s[{index}].{first}"),
        };
        AppError::NoneValid {
            message: format!(
                "{item}s: no valid {item} ({} refused; {at})",
                rejected.len()
            ),
            rejected,
        }
    }

    /// A 404 naming what was not found.
    pub fn not_found(message: impl Into<String>) -> Self {
        AppError::NotFound {
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
            AppError::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            AppError::RequestTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::Refused { status, .. } => *status,
            AppError::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable snake_case kind of this error, the answer's `reason`.
    pub fn reason(&self) -> &'static str {
        match self {
            AppError::BadRequest { .. } | AppError::NoneValid { .. } => "bad_request",
            AppError::PayloadTooLarge { .. } => "payload_too_large",
            AppError::NotFound { .. } => "not_found",
            AppError::RateLimited(_) => "rate_limited",
            AppError::RequestTimeout { .. } => "request_timeout",
            AppError::MethodNotAllowed => "method_not_allowed",
            AppError::Refused { reason, .. } => reason,
            AppError::Internal { .. } => "internal",
        }
    }

    /// Seconds a client should wait before sending this again, when that helps.
    pub(crate) fn retry_after(&self) -> Option<u64> {
        match self {
            AppError::RateLimited(q) => Some(q.retry_after_secs),
            AppError::Refused { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// Writes `Retry-After: secs` (at least 1) into `headers`: every 429, and a 201 with
/// items refused over a quota, say when to send again through this one function.
pub fn set_retry_after(headers: &mut HeaderMap, secs: u64) {
    headers.insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
}

impl From<crate::db::DbError> for AppError {
    fn from(e: crate::db::DbError) -> Self {
        use crate::db::DbError;
        match e {
            DbError::RateLimited(q) => AppError::RateLimited(q),
            DbError::Internal { detail } => AppError::Internal { detail },
            other => AppError::internal(other),
        }
    }
}

/// The body of every error answer (the `Error` schema of `/openapi.json`).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "Error")]
pub struct ErrorBody {
    /// What is wrong, naming the field (a 5xx says only `internal error`).
    pub error: String,
    /// Stable snake_case kind, for programs: bad_request, not_found, payload_too_large,
    /// rate_limited, request_timeout, method_not_allowed, internal, or a refusal's own (e.g.
    /// expired_salt, salt_not_published, agent_key).
    pub reason: &'static str,
    /// When no item of an array is valid: every refused item by index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<Vec<lowdown_core::record::validate::Rejection>>,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        if let AppError::Internal { detail } = &self {
            tracing::error!(error = %detail, "request failed");
        }
        let body = ErrorBody {
            error: self.to_string(),
            reason: self.reason(),
            rejected: match &self {
                AppError::NoneValid { rejected, .. } => Some(rejected.clone()),
                _ => None,
            },
        };
        let mut response = (self.status(), axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after() {
            set_retry_after(response.headers_mut(), secs);
        }
        if let AppError::RequestTimeout { .. } = &self {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// The result type of handlers and services.
pub type AppResult<T> = Result<T, AppError>;
