//! Not built yet.

use std::sync::Arc;

use axum::Router;

use crate::AppState;

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
}
