//! `GET /desk/{name}`: the stylesheet, the two scripts and the icon, embedded in the binary and
//! served with content-versioned caching.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::extract::{Path, Query};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{not_found, security_headers};

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: [Asset; 4] = [
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("style.css"),
    },
    Asset {
        name: "verify.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("verify.js"),
    },
    Asset {
        name: "check.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("check.js"),
    },
    Asset {
        name: "icon.svg",
        content_type: "image/svg+xml",
        body: include_str!("icon.svg"),
    },
];

/// The first 16 hex digits of SHA-256 of each asset (its version in URLs and its `ETag`).
fn versions() -> &'static HashMap<&'static str, String> {
    static V: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    V.get_or_init(|| {
        use sha2::Digest;
        ASSETS
            .iter()
            .map(|a| {
                let d = sha2::Sha256::digest(a.body.as_bytes());
                (a.name, d[..8].iter().map(|b| format!("{b:02x}")).collect())
            })
            .collect()
    })
}

/// The URL a page links an asset by (content-versioned, so it can be cached forever).
pub fn asset_url(name: &str) -> String {
    match versions().get(name) {
        Some(v) => format!("/desk/{name}?v={v}"),
        None => format!("/desk/{name}"),
    }
}

/// `GET /desk/{name}`: immutable under its current `?v=`, revalidated (`ETag`) otherwise.
pub(super) async fn asset(
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let Some(a) = ASSETS.iter().find(|a| a.name == name) else {
        return not_found("No such desk file.").into_response();
    };
    let version = &versions()[a.name];
    let etag = format!("\"{version}\"");
    let cache = if params.get("v") == Some(version) {
        crate::logroutes::IMMUTABLE
    } else {
        "no-cache"
    };
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut r = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        a.body.into_response()
    };
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(a.content_type),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    security_headers(h);
    r
}
