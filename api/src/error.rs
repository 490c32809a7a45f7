//! The one error type handlers return: a status and a JSON body `{"error", "detail"}`, and
//! [`uniform_errors`], which gives every error the router answers — axum's own rejections
//! (413, 400, 404 for an unknown route, 405, 415…) included — that body on the API's paths and
//! the desk's HTML error page elsewhere.

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
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
    /// The service is busy (a bounded resource is in use); retry later.
    #[error("{0}")]
    Unavailable(String),
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
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
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
        json_error(status, &detail)
    }
}

/// The JSON error shape is the connection layer's, so a refusal looks the same whichever
/// layer made it.
pub use toolmark_server::{error_code, json_error};

/// Longest text of a framework rejection read back to become the `detail` of a JSON error
/// (axum's rejection texts are one sentence; anything longer is not one of them).
pub const MAX_REJECTION_TEXT: usize = 4 * 1024;

/// Whether `path` belongs to the API (JSON errors) rather than the desk (HTML error pages):
/// `/api/…`, the log's files, the change and security feeds and the operations routes.
pub fn is_api_path(path: &str) -> bool {
    path.starts_with("/api/")
        || path == "/api"
        || path == "/checkpoint"
        || path.starts_with("/tile/")
        || path.starts_with("/feed.")
        || path.starts_with("/security-feed.")
        || path == "/health"
        || path == "/metrics"
}

/// Make every error response of the router uniform: on API paths ([`is_api_path`]) an error
/// that is not already JSON (axum's rejections are `text/plain`, its 404 and 405 have no body)
/// becomes `{"error", "detail"}` with the same status and headers (`Allow`, `Retry-After`);
/// on desk paths one that is not already HTML becomes the desk's error page.
pub async fn uniform_errors(request: Request, next: Next) -> Response {
    let api = is_api_path(request.uri().path());
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let wanted = if api { "application/json" } else { "text/html" };
    if content_type.starts_with(wanted) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_REJECTION_TEXT)
        .await
        .ok()
        .and_then(|b| String::from_utf8(b.to_vec()).ok())
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let detail = text.unwrap_or_else(|| default_detail(status));
    let fresh = if api {
        json_error(status, &detail)
    } else {
        crate::desk::error_page(status, &detail)
    };
    let (fresh_parts, fresh_body) = fresh.into_parts();
    for name in [header::CONTENT_TYPE, header::CONTENT_LENGTH] {
        parts.headers.remove(&name);
    }
    for (name, value) in &fresh_parts.headers {
        parts.headers.insert(name.clone(), value.clone());
    }
    if api {
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    Response::from_parts(parts, fresh_body)
}

/// What an error without a text of its own says.
fn default_detail(status: StatusCode) -> String {
    match status {
        StatusCode::NOT_FOUND => "no such route".to_owned(),
        StatusCode::METHOD_NOT_ALLOWED => {
            "the route does not take this method (see the Allow header)".to_owned()
        }
        other => other.canonical_reason().unwrap_or("error").to_owned(),
    }
}

impl From<toolmark_index::IndexError> for ApiError {
    fn from(e: toolmark_index::IndexError) -> Self {
        ApiError::internal(e)
    }
}
