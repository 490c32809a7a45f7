//! The API role: the runtime it runs on, its state over a data directory, and serving it
//! (`toolmark serve`, and the API half of `toolmark run`).

use std::sync::Arc;

use toolmark_api::{ApiOptions, AppState, JobStates};
use toolmark_index::DataDir;
use toolmark_schedules::LeaseStore;

use crate::RoleError;

/// The async runtime every serving role uses (`toolmark_api::runtime`: blocking pool capped).
pub fn runtime() -> Result<tokio::runtime::Runtime, RoleError> {
    toolmark_api::runtime().map_err(RoleError::doing("starting the async runtime"))
}

/// The API's state over `dir` (which must hold a log), with its rate limits and cache, and the
/// jobs of a `toolmark run` that keeps its schedules in `dir` ([`schedules_in`]). An index of an
/// older schema is migrated first (the readers query the current one's tables); an index that
/// does not exist yet is left for the first crawl to create.
pub fn open_state(dir: &DataDir, base: &str, options: &ApiOptions) -> Result<AppState, RoleError> {
    let index = dir.index_path();
    if index.exists() {
        toolmark_index::Index::open(&index).map_err(RoleError::doing(format!(
            "opening {} to migrate it",
            index.display()
        )))?;
    }
    let mut state =
        AppState::open_dir_with(dir, base, options).map_err(RoleError::doing(format!(
            "opening {} (log in {})",
            dir.root().display(),
            dir.storage().describe()
        )))?;
    state.jobs = Some(schedules_in(dir));
    Ok(state)
}

/// The latest runs in `dir`'s schedules database, read at each call (another process's
/// `toolmark run` writes it); none while there is none.
pub fn schedules_in(dir: &DataDir) -> JobStates {
    let path = dir.schedules_path();
    Arc::new(move || {
        if !path.exists() {
            return Ok(Vec::new());
        }
        LeaseStore::open(&path)
            .and_then(|s| s.jobs())
            .map_err(|e| e.to_string())
    })
}

/// The latest runs of the scheduler holding `store`.
pub fn schedules_of(store: Arc<LeaseStore>) -> JobStates {
    Arc::new(move || store.jobs().map_err(|e| e.to_string()))
}

/// `toolmark serve`: the API over `dir` (which `toolmark crawl` fills) on `listen` until `stop`
/// fires; the public base is `base_url`, else the bound address (`127.0.0.1:0` gets a real
/// port).
pub async fn serve_dir(
    dir: &DataDir,
    listen: std::net::SocketAddr,
    base_url: Option<String>,
    options: &ApiOptions,
    limits: toolmark_server::Limits,
    stop: crate::Stop,
) -> Result<(), RoleError> {
    let (listener, bound) = bind(listen).await?;
    let base = base_url.unwrap_or_else(|| format!("http://{bound}"));
    let state = open_state(dir, &base, options)?;
    tracing::info!(
        "toolmark serving {} on http://{bound} (public base {base})",
        dir.root().display(),
    );
    toolmark_api::serve(listener, state, limits, stop.cancelled_owned())
        .await
        .map_err(RoleError::doing("serving"))
}

/// The API's listener on `config.listen`, the address it bound and the public base URL
/// (`base_url`, else the bound address: `127.0.0.1:0` gets a real port).
pub async fn listen(
    config: &toolmark_config::Config,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr, String), RoleError> {
    let (listener, bound) = bind(config.listen).await?;
    let base = config.public_base(bound);
    Ok((listener, bound, base))
}

/// A listener on `listen` (`toolmark_server::bind`) and the address it bound.
pub async fn bind(
    listen: std::net::SocketAddr,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr), RoleError> {
    let listener = toolmark_server::bind(listen)
        .await
        .map_err(RoleError::doing(format!("listening on {listen}")))?;
    let bound = listener
        .local_addr()
        .map_err(RoleError::doing("the bound address"))?;
    Ok((listener, bound))
}
