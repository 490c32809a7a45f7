//! `GET /api/v1/rules`: the rule set the scans are made with (`toolmark-rules/N`), as its
//! canonical bytes, whose SHA-256 is the `rulesDigest` every scan names. Also in
//! `/api/v1/issuer` (`rules`, `rulesDigest`).

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use toolmark_toolset::rules;

use crate::AppState;

/// The rule set's RFC 8785 bytes and their SRI digest, computed once.
static RULES: LazyLock<(Vec<u8>, String)> = LazyLock::new(|| {
    let bytes = rules::canonical_bytes();
    let digest = toolmark_toolset::Sri::of(&bytes).to_string();
    (bytes, digest)
});

/// The SRI digest of the rule set's canonical bytes.
pub fn digest() -> &'static str {
    &RULES.1
}

/// The rule routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/api/v1/rules", get(document))
}

/// The rule set's canonical bytes, immutable for a digest (an `ETag` of it).
async fn document() -> Response {
    let (bytes, digest) = &*RULES;
    let mut res = bytes.clone().into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(etag) = HeaderValue::from_str(&format!("\"{digest}\"")) {
        h.insert(header::ETAG, etag);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    res
}
