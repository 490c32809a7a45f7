//! `toolmark serve`: the API, feeds and desk over a data directory that `toolmark crawl` fills.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use toolmark_server::HttpFlags;

#[derive(Args)]
pub struct ServeArgs {
    /// Data directory (as written by `toolmark crawl`).
    #[arg(long)]
    pub data: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The public base URL (links in answers and feeds); default http://<listen>.
    #[arg(long)]
    pub base_url: Option<String>,
    /// The API's rate limits, cache and witnesses.
    #[command(flatten)]
    pub api: toolmark_config::ApiFlags,
    /// What one client may cost (defaults: docs/operations.md, "Limits").
    #[command(flatten)]
    pub http: HttpFlags,
    /// Where the log and the documents are stored (`[storage]`).
    #[command(flatten)]
    pub storage: toolmark_config::StorageFlags,
}

pub fn run(args: ServeArgs) -> Result<()> {
    let limits = args.http.limits()?;
    let api = args.api.options()?;
    let dir = toolmark_index::DataDir::with_storage(&args.data, args.storage.spec()?);
    let runtime = toolmark_roles::api::runtime()?;
    let stop = stop_on_signal(&runtime);
    let serve =
        toolmark_roles::api::serve_dir(&dir, args.listen, args.base_url, &api, limits, stop);
    Ok(runtime.block_on(serve)?)
}

/// A stop signal that fires at the first SIGTERM or SIGINT (Ctrl-C).
pub fn stop_on_signal(runtime: &tokio::runtime::Runtime) -> toolmark_roles::Stop {
    let stop = toolmark_roles::Stop::new();
    let on_signal = stop.clone();
    runtime.spawn(async move {
        terminated().await;
        on_signal.cancel();
    });
    stop
}

/// Resolves at the first SIGTERM or SIGINT (Ctrl-C).
pub async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
