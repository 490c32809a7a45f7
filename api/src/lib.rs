//! The public face of toolmark: an axum router, built by [`router`], over a data directory that
//! `toolmark crawl` (or `toolmark run`) fills.
//!
//! Routes (documented in `docs/api.md` and `/api/openapi.json`):
//! - [`check`]: `POST /api/v1/check` — is this tool set what toolmark observed? Signed answers
//!   that carry the backing log entry, its inclusion proof and the checkpoint.
//! - [`logroutes`]: the log as C2SP tiles (`/checkpoint`, `/tile/…`), proofs, lookups, the key.
//! - [`servers`]: servers, targets, timelines, changes, sensitive-tool globs.
//! - [`feeds`]: change feeds in Atom (`/feed.xml`), RSS 2.0 (`/feed.rss`) and JSON Feed
//!   (`/feed.json`), global or per server (`watch=`).
//! - [`desk`]: the web desk (plain HTML, in-browser verification of checkpoints and proofs).
//!
//! It only reads: the log through [`toolmark_log::reader::Reader`] (never the writer's lock),
//! the index through read-only SQLite connections, the blob store. It never dials out and never
//! writes the log or the index.

#![deny(missing_docs)]

pub mod check;
pub mod desk;
pub mod error;
pub mod feeds;
pub mod logroutes;
pub mod servers;
pub mod state;

use std::sync::Arc;

use axum::Router;

pub use error::ApiError;
pub use state::AppState;

/// The whole service as one router (testable with `tower::ServiceExt::oneshot`).
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .merge(check::routes())
        .merge(logroutes::routes())
        .merge(servers::routes())
        .merge(feeds::routes())
        .merge(desk::routes())
        .with_state(state)
}
