//! The public face of toolmark: an axum router, built by [`router`], over a data directory that
//! `toolmark crawl` (or `toolmark run`) fills.
//!
//! Routes (documented in `docs/api.md` and `/api/openapi.json`):
//! - [`check`]: `POST /api/v1/check` — is this tool set what toolmark observed? Signed answers
//!   that carry the backing log entry, its inclusion proof and the checkpoint.
//! - [`logroutes`]: the log as C2SP tiles (`/checkpoint`, `/tile/…`), proofs, lookups, the key.
//! - [`servers`]: servers, targets, timelines, changes, sensitive-tool globs.
//! - [`tools`]: one tool's history at a target (`/api/v1/servers/{id}/tools/{name}`), its
//!   versions followed through renames.
//! - [`feeds`]: change feeds in Atom (`/feed.xml`), RSS 2.0 (`/feed.rss`) and JSON Feed
//!   (`/feed.json`), global or per server (`watch=`).
//! - [`events`]: signed security events (`/api/v1/security-events`, a lossless cursor) and the
//!   security feeds (`/security-feed.xml`, `.rss`, `.json`).
//! - [`documents`]: stored observation documents by content address
//!   (`/api/v1/documents/{sri}`), and the bounded cache of what pages show of tool sets.
//! - [`desk`]: the web desk (maud templates that escape by default, in-browser verification of
//!   checkpoints and proofs).
//! - [`stats`]: `/api/v1/stats` (targets by state, changes, activity per day, the last runs,
//!   the log), the hosts with the most endpoints, and badges (`/badge/{id}.svg`, shields.io
//!   endpoint answers at `/api/v1/badges/…`).
//! - [`witnesses`]: `GET /api/v1/witnesses` (the witness policy and who cosigned the published
//!   checkpoint when), and the witnessing parts of `/health`, `/metrics` and `/check` answers.
//! - [`changes`]: the one typed view of a stored change that the desk, the change endpoints
//!   and the feeds render.
//!
//! [`service`] serves the router as a process does: the state with the operator's rate limits
//! and cache ([`ApiOptions`]), the runtime, and [`serve`] through `toolmark-server`'s connection
//! layer (what `toolmark serve`, `run` and `demo` share).
//!
//! It only reads: the log through [`toolmark_log::reader::Reader`] (never the writer's lock),
//! the index through read-only SQLite connections, the blob store. It never dials out and never
//! writes the log or the index.

#![deny(missing_docs)]

pub mod changes;
pub mod check;
pub mod contribute;
pub mod desk;
pub mod documents;
pub mod error;
pub mod events;
pub mod feeds;
pub mod logroutes;
pub mod lookalike;
pub mod ops;
pub mod rules;
pub mod servers;
pub mod service;
pub mod state;
pub mod stats;
pub mod tools;
pub mod witnesses;

use std::sync::Arc;

use axum::Router;

pub use error::ApiError;
pub use service::{ApiOptions, runtime, serve};
pub use state::{AppState, JobStates};

/// How long browsers may cache a CORS preflight answer.
const PREFLIGHT_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(86_400);

/// The whole service as one router (testable with `tower::ServiceExt::oneshot`).
///
/// Every route is public and read-only except `POST /api/v1/check`, which changes nothing
/// either, so CORS allows any origin, without credentials.
pub fn router(state: Arc<AppState>) -> Router {
    use axum::http::{Method, header};
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::Any)
        .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
        .allow_headers([header::CONTENT_TYPE, header::ACCEPT])
        .max_age(PREFLIGHT_MAX_AGE);
    let routes = Router::new()
        .merge(check::routes())
        .merge(logroutes::routes())
        .merge(servers::routes())
        .merge(tools::routes())
        .merge(feeds::routes())
        .merge(events::routes())
        .merge(desk::routes())
        .merge(ops::routes())
        .merge(documents::routes())
        .merge(stats::routes())
        .merge(witnesses::routes())
        .merge(rules::routes())
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            ops::count_requests,
        ))
        .with_state(state.clone());
    // The layers every request passes wrap the router as one service (a fallback), not each
    // route: a middleware clones what it wraps per request, and a router is one `Arc` where a
    // route is its whole chain of layers (measured: 20% of `/check`'s throughput).
    let outer = tower::ServiceBuilder::new()
        .layer(cors)
        .layer(axum::middleware::from_fn(error::uniform_errors))
        .layer(axum::middleware::from_fn_with_state(
            state,
            ops::limit_checks,
        ))
        .service(routes);
    Router::new().fallback_service(outer)
}
