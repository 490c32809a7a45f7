//! The log as C2SP `tlog-tiles` and the proofs a client needs.
//!
//! - `GET /checkpoint`, `GET /tile/<L>/<N>[.p/<W>]`, `GET /tile/entries/<N>[.p/<W>]`: the public
//!   directory exactly as published (any tlog-tiles client, e.g. Go's `sumdb/tlog`, reads it).
//!   Full tiles and bundles never change: `Cache-Control: public, max-age=31536000, immutable`.
//!   Partial ones are replaced as the log grows and the checkpoint changes with every append:
//!   both are served `no-cache`.
//! - `GET /api/v1/log/vkey`: the log's verifier key (signed-note format).
//! - `GET /api/v1/proof/inclusion?index=&size=` and `GET /api/v1/proof/consistency?old=&new=`:
//!   proofs as base64 hashes, with the checkpoint they were computed against.
//! - `GET /api/v1/lookup/{id}`: the latest entry of a target (16-hex id) as a
//!   `c2sp.org/tlog-proof@v1` bundle (`text/plain`), checkable offline.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use toolmark_log::tiles::{self, ParsedPath};

use crate::servers::Params;
use crate::{ApiError, AppState};

/// Cache lifetime of immutable files (full tiles and bundles): a year, the longest browsers
/// and CDNs honour, with `immutable` so they never revalidate.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Cache policy of files that change as the log grows (checkpoint, partial tiles).
pub const MUTABLE: &str = "no-cache";

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/checkpoint", get(checkpoint))
        .route("/tile/{*path}", get(tile))
        .route("/api/v1/log/vkey", get(vkey))
        .route("/api/v1/proof/inclusion", get(inclusion))
        .route("/api/v1/proof/consistency", get(consistency))
        .route("/api/v1/lookup/{id}", get(lookup))
}

fn with(body: impl IntoResponse, content_type: &'static str, cache: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    r
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(ApiError::internal)?
}

async fn checkpoint(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let (note, published) = blocking(move || {
        // When the log last published (a batch or a heartbeat re-signing the same tree): the
        // note has no time of its own, so this is how a client sees the log is alive.
        let published = state.log.checkpoint_written();
        let note = state
            .log
            .file("checkpoint")
            .map_err(ApiError::internal)?
            .ok_or_else(|| ApiError::NotFound("no checkpoint published".into()))?;
        Ok((note, published))
    })
    .await?;
    let mut r = with(note, "text/plain; charset=utf-8", MUTABLE);
    if let Some(v) = published.and_then(|t| HeaderValue::from_str(&httpdate::fmt_http_date(t)).ok())
    {
        r.headers_mut().insert(header::LAST_MODIFIED, v);
    }
    Ok(r)
}

async fn tile(
    State(state): State<Arc<AppState>>,
    Path(path): Path<String>,
) -> Result<Response, ApiError> {
    let full_path = format!("tile/{path}");
    // Only paths the C2SP grammar allows reach the file system (no `..`, no other files).
    let parsed = tiles::parse_tile_path(&full_path)
        .map_err(|e| ApiError::NotFound(format!("not a tile path: {e}")))?;
    let full = match parsed {
        ParsedPath::Tile(t) => t.is_full(),
        ParsedPath::Bundle { width, .. } => width == 256,
    };
    let p = full_path.clone();
    let bytes = blocking(move || {
        state
            .log
            .file(&p)
            .map_err(ApiError::internal)?
            .ok_or_else(|| ApiError::NotFound(format!("{p} is not published")))
    })
    .await?;
    Ok(with(
        bytes,
        "application/octet-stream",
        if full { IMMUTABLE } else { MUTABLE },
    ))
}

async fn vkey(State(state): State<Arc<AppState>>) -> Response {
    with(
        format!("{}\n", state.log.vkey()),
        "text/plain; charset=utf-8",
        "public, max-age=3600",
    )
}

/// A proof or entry outside the published tree does not exist (yet): 404, as for any resource
/// that is not there, with the reader's reason ("no such proof: index … is not below the tree
/// size …"). Malformed parameters are 400 before this.
fn out_of_range(e: toolmark_log::reader::ReadError) -> ApiError {
    match e {
        toolmark_log::reader::ReadError::OutOfRange(m) => ApiError::NotFound(m),
        other => ApiError::internal(other),
    }
}

async fn inclusion(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = Params::new(query)?;
    let index = q.required_unsigned("index")?;
    let size = q.unsigned("size")?;
    let at = state.checkpoint().map_err(ApiError::internal)?;
    let size = size.unwrap_or(at.checkpoint.size);
    let body = blocking(move || {
        let proof = state
            .log
            .inclusion_proof(index, size, &at)
            .map_err(out_of_range)?;
        Ok(json!({
            "index": index,
            "size": size,
            "proof": proof.iter().map(|h| h.to_base64()).collect::<Vec<_>>(),
            "checkpoint": String::from_utf8_lossy(&at.note),
        }))
    })
    .await?;
    Ok(with(axum::Json(body), "application/json", MUTABLE))
}

async fn consistency(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = Params::new(query)?;
    let old = q.required_unsigned("old")?;
    let new = q.unsigned("new")?;
    let at = state.checkpoint().map_err(ApiError::internal)?;
    let new = new.unwrap_or(at.checkpoint.size);
    let body = blocking(move || {
        let proof = state
            .log
            .consistency_proof(old, new, &at)
            .map_err(out_of_range)?;
        Ok(json!({
            "old": old,
            "new": new,
            "proof": proof.iter().map(|h| h.to_base64()).collect::<Vec<_>>(),
            "checkpoint": String::from_utf8_lossy(&at.note),
        }))
    })
    .await?;
    Ok(with(axum::Json(body), "application/json", MUTABLE))
}

/// Whether `id` is a target id (16 lowercase hex digits, [`toolmark_log::entry::TargetId`]).
pub fn valid_id(id: &str) -> bool {
    id.parse::<toolmark_log::entry::TargetId>().is_ok()
}

async fn lookup(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    if !valid_id(&id) {
        return Err(ApiError::BadRequest(
            "a target id is 16 lowercase hex digits".into(),
        ));
    }
    let bundle = blocking(move || {
        let target = state
            .index
            .get()
            .target(&id)?
            .ok_or_else(|| ApiError::NotFound(format!("no target {id}")))?;
        let last = target
            .last_entry
            .ok_or_else(|| ApiError::NotFound(format!("target {id} has no log entry yet")))?;
        let at = state.checkpoint().map_err(ApiError::internal)?;
        state.log.tlog_proof(last, &at).map_err(out_of_range)
    })
    .await?;
    Ok(with(bundle, "text/plain; charset=utf-8", MUTABLE))
}
