//! `toolmark serve`: the API, feeds and desk over a data directory that `toolmark crawl` fills.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;

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
}

pub fn run(args: ServeArgs) -> Result<()> {
    let base = args
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{}", args.listen));
    let state = toolmark_api::AppState::open(&args.data, &base)
        .with_context(|| format!("opening {}", args.data.display()))?;
    let app = toolmark_api::router(Arc::new(state));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listening on {}", args.listen))?;
        eprintln!(
            "toolmark serving {} on http://{} (public base {base})",
            args.data.display(),
            listener.local_addr()?
        );
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving")
    })
}
