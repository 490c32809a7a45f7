//! The one error type handlers return: a status and a JSON body `{"error", "detail"}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// What went wrong with a request.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed (wrong type, out of range, bad JSON…).
    #[error("{0}")]
    BadRequest(String),
    /// No such thing.
    #[error("{0}")]
    NotFound(String),
    /// The body is larger than the route allows.
    #[error("{0}")]
    TooLarge(String),
    /// The client exceeded its rate limit.
    #[error("{0}")]
    TooManyRequests(String),
    /// Our side failed (storage, a missing tile…); the detail is logged, not shown.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Wrap any storage-side error as internal.
    pub fn internal(e: impl std::fmt::Display) -> ApiError {
        ApiError::Internal(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = match &self {
            ApiError::Internal(d) => {
                eprintln!("toolmark api: internal error: {d}");
                "internal error (logged)".to_owned()
            }
            other => other.to_string(),
        };
        let code = status
            .canonical_reason()
            .unwrap_or("error")
            .to_ascii_lowercase()
            .replace(' ', "-");
        let body = serde_json::json!({ "error": code, "detail": detail });
        (status, axum::Json(body)).into_response()
    }
}

impl From<toolmark_index::IndexError> for ApiError {
    fn from(e: toolmark_index::IndexError) -> Self {
        ApiError::internal(e)
    }
}
