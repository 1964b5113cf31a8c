//! One error type for every HTTP refusal: a status and the protocol's JSON error body. Handlers
//! return `Result<_, ApiError>` and use `?`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use protocol::{ErrorBody, ErrorCode};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    // Boxed: a small `Err` keeps every handler's `Result` small.
    pub body: Box<ErrorBody>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: Box::new(ErrorBody::new(code, message)),
        }
    }

    /// 400: the request cannot be read.
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::Malformed, message)
    }

    /// 429 with `retry_after_ms` (and a `Retry-After` header, in whole seconds).
    pub fn rate_limited(l: &crate::limits::Limited) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::RateLimited,
            l.message(),
        );
        e.body.retry_after_ms = Some(l.retry_after_ms());
        e
    }

    /// 500: the server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            message,
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let retry = self
            .body
            .retry_after_ms
            .map(|ms| ms.div_ceil(1000).to_string());
        let mut response = (self.status, axum::Json(self.body)).into_response();
        if let Some(secs) = retry
            && let Ok(v) = axum::http::HeaderValue::from_str(&secs)
        {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, v);
        }
        response
    }
}
