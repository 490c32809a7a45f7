//! The API role: the runtime it runs on, its state over a data directory, and serving it
//! (`toolmark serve`, and the API half of `toolmark run`).

use toolmark_api::{ApiOptions, AppState};
use toolmark_index::DataDir;

use crate::RoleError;

/// The async runtime every serving role uses (`toolmark_api::runtime`: blocking pool capped).
pub fn runtime() -> Result<tokio::runtime::Runtime, RoleError> {
    toolmark_api::runtime().map_err(RoleError::doing("starting the async runtime"))
}

/// The API's state over `dir` (which must hold a log), with its rate limits and cache. An index
/// of an older schema is migrated first (the readers query the current one's tables); an index
/// that does not exist yet is left for the first crawl to create.
pub fn open_state(dir: &DataDir, base: &str, options: &ApiOptions) -> Result<AppState, RoleError> {
    let index = dir.index_path();
    if index.exists() {
        toolmark_index::Index::open(&index).map_err(RoleError::doing(format!(
            "opening {} to migrate it",
            index.display()
        )))?;
    }
    AppState::open_dir_with(dir, base, options).map_err(RoleError::doing(format!(
        "opening {} (log in {})",
        dir.root().display(),
        dir.storage().describe()
    )))
}
