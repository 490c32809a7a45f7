//! The desk: the web UI served by the same process as the API.
//!
//! Server-rendered HTML from [`maud`] templates, which escape every value they are given
//! unless it is wrapped in `PreEscaped` (used only for constant text this crate writes, each
//! with its reason), one shared layout with a nav ([`layout`]), one stylesheet and two scripts
//! embedded in the binary (`src/desk/*.{css,js,svg}`, [`assets`]), no build step. One module
//! per page; every page works without JavaScript except the two verification features:
//!
//! - `GET /` ([`home`]) — servers: search (`q`), state filter (`state`), paging (`limit`,
//!   `offset`).
//! - `GET /s/{id}` ([`target`]) — one target: summary, timeline of observations, current
//!   tools, the rule-set scan with each match's text in context and the data-flow legs
//!   ([`scan`]), changes.
//! - `GET /s/{id}/tools/{name}` ([`tool`]) — one tool's versions at the target, followed
//!   through renames, each with what changed from the one before (`crate::tools`).
//! - `GET /changes` ([`changes`]) — changes newest first, class filter (`class`), paging
//!   (`before`, `limit`).
//! - `GET /changes/{id}` ([`change`]) — one change: class, every signal, the diff, digests,
//!   entries, from its [`crate::changes::ChangeView`].
//! - `GET /log` ([`log`]) — the current checkpoint and verifier key; `verify.js` checks the
//!   checkpoint's signature and an inclusion proof in the browser (WebCrypto Ed25519 and
//!   SHA-256).
//! - `GET /check` ([`check`]) — paste a `tools/list` result; `check.js` posts it to
//!   `/api/v1/check` and verifies the answer's signature (RFC 8785 bytes) and its proof bundle
//!   in the browser.
//! - `GET /stats` ([`stats`]) — the numbers of `/api/v1/stats` and two charts of activity per
//!   day, drawn as SVG on the server.
//! - `GET /desk/{asset}` ([`assets`]) — the embedded assets; `?v=<content hash>` URLs (the
//!   ones the pages link) are cached as immutable, bare ones revalidate with the hash as
//!   `ETag`.
//!
//! Every desk response carries a strict `Content-Security-Policy` (`default-src 'self'`, no
//! inline script or style anywhere). What the pages read from the index (read-only
//! connections from the pool) and the log reader (the checkpoint) is read in [`data`] and
//! nowhere else; a target's current tools come through the shared cache
//! ([`crate::documents::ToolSetCache`]). `docs/desk.md` describes the pages and the exact
//! bytes the browser checks.

mod assets;
mod change;
mod changes;
mod check;
mod data;
mod home;
pub(crate) mod layout;
mod log;
mod scan;
mod stats;
mod target;
mod tool;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::AppState;
use crate::changes::ChangeError;

pub use assets::asset_url;
pub(crate) use layout::error_page;

/// The `Content-Security-Policy` of every desk response: only this origin's files, no inline
/// script or style, no plugins, no framing, forms post only here.
pub const CSP: &str = "default-src 'self'; base-uri 'none'; form-action 'self'; \
                       frame-ancestors 'none'; object-src 'none'";

/// Rows per page when `limit` is not given.
pub const DEFAULT_LIMIT: u32 = 50;

/// Most rows per page (`limit` above it is refused with 400).
pub const MAX_LIMIT: u32 = 200;

/// Observations shown per page of a target's timeline.
pub const TIMELINE_ROWS: u32 = 100;

/// Changes of one target listed on its page (newest first).
pub const TARGET_CHANGES: u32 = 200;

/// The state filters of the servers page, with their labels.
pub const STATES: [(&str, &str); 7] = [
    ("all", "All"),
    ("observed", "Observed (last observation ok)"),
    ("changed", "Changed (at least one change)"),
    ("failing", "Failing (last observation not ok)"),
    ("skipped", "Skipped (not dialled)"),
    ("delisted", "Delisted"),
    ("flagged", "Flagged (a rule-set match)"),
];

/// The change classes, mildest first.
pub const CLASSES: [&str; 3] = ["benign", "unsure", "dangerous"];

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(home::page))
        .route("/s/{id}", get(target::page))
        .route("/s/{id}/tools/{name}", get(tool::page))
        .route("/changes", get(changes::page))
        .route("/changes/{id}", get(change::page))
        .route("/log", get(log::page))
        .route("/check", get(check::page))
        .route("/stats", get(stats::page))
        .route("/desk/{name}", get(assets::asset))
}

/// The headers every desk response carries (pages, error pages, assets).
fn security_headers(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
}

/// Why a desk page cannot be shown; rendered as an HTML error page.
#[derive(Debug)]
enum Fail {
    NotFound(String),
    BadRequest(String),
    Internal(String),
}

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        match self {
            Fail::NotFound(m) => error_page(StatusCode::NOT_FOUND, &m),
            Fail::BadRequest(m) => error_page(StatusCode::BAD_REQUEST, &m),
            Fail::Internal(m) => {
                eprintln!("toolmark desk: internal error: {m}");
                error_page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong on our side (logged).",
                )
            }
        }
    }
}

/// A stored change that does not parse is our side's fault: a logged 500, never a page with
/// empty fields.
impl From<ChangeError> for Fail {
    fn from(e: ChangeError) -> Self {
        internal(e)
    }
}

fn not_found(message: &str) -> Fail {
    Fail::NotFound(message.to_owned())
}

fn bad_request(message: &str) -> Fail {
    Fail::BadRequest(message.to_owned())
}

fn internal(e: impl std::fmt::Display) -> Fail {
    Fail::Internal(e.to_string())
}

type Html = Result<Response, Fail>;

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Fail> + Send + 'static,
) -> Result<T, Fail> {
    tokio::task::spawn_blocking(f).await.map_err(internal)?
}

/// A non-negative integer parameter within `min..=max`, `default` when absent or empty.
fn int_param(
    q: &HashMap<String, String>,
    name: &str,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, Fail> {
    match q.get(name).map(String::as_str) {
        None | Some("") => Ok(default),
        Some(s) => s
            .parse::<u64>()
            .ok()
            .filter(|n| (min..=max).contains(n) && (s == "0" || !s.starts_with('0')))
            .ok_or_else(|| bad_request(&format!("{name} must be an integer from {min} to {max}"))),
    }
}

fn limit_param(q: &HashMap<String, String>) -> Result<u32, Fail> {
    int_param(q, "limit", DEFAULT_LIMIT.into(), 1, MAX_LIMIT.into()).map(|n| n as u32)
}
