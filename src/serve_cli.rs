//! `toolmark serve`: the API, feeds and desk over a data directory that `toolmark crawl` fills.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use toolmark_api::ApiOptions;
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
    /// `/check` requests per minute per client address (0: no limit, e.g. when a reverse proxy
    /// limits); a client's bucket holds 8⅓ minutes of it (500 at the default: one scan).
    #[arg(long, default_value_t = ApiOptions::default().check_rate)]
    pub check_rate: u32,
    /// `/sensitive` requests per minute per client address (0: no limit); bursts of a third
    /// as many.
    #[arg(long, default_value_t = ApiOptions::default().sensitive_rate)]
    pub sensitive_rate: u32,
    /// MiB the cache of current tool sets (what server pages show) may hold.
    #[arg(long, default_value_t = ApiOptions::default().tool_set_cache_mib)]
    pub tool_set_cache_mib: usize,
    /// A witness whose cosignatures the API reports, `VKEY@URL` (repeat; as `run --witness`).
    #[arg(long = "witness")]
    pub witnesses: Vec<String>,
    /// How many of the witnesses the policy needs (default 1).
    #[arg(long)]
    pub witness_quorum: Option<usize>,
    /// A C2SP tlog-policy file instead of --witness and --witness-quorum.
    #[arg(long)]
    pub witness_policy: Option<std::path::PathBuf>,
    /// What one client may cost (defaults: docs/operations.md, "Limits").
    #[command(flatten)]
    pub http: HttpFlags,
    /// Where the log and the documents are stored (`[storage]`).
    #[command(flatten)]
    pub storage: toolmark_config::StorageFlags,
}

pub fn run(args: ServeArgs) -> Result<()> {
    let limits = args.http.limits()?;
    let api = ApiOptions {
        check_rate: args.check_rate,
        sensitive_rate: args.sensitive_rate,
        tool_set_cache_mib: args.tool_set_cache_mib,
        witnesses: toolmark_cosign::WitnessOptions {
            witnesses: args.witnesses,
            quorum: args.witness_quorum,
            policy_file: args.witness_policy,
            ..toolmark_cosign::WitnessOptions::default()
        }
        .policy()
        .map_err(anyhow::Error::msg)?
        .map(std::sync::Arc::new),
    };
    let dir = toolmark_index::DataDir::with_storage(&args.data, args.storage.spec()?);
    let runtime = runtime()?;
    let stop = stop_on_signal(&runtime);
    let serve =
        toolmark_roles::api::serve_dir(&dir, args.listen, args.base_url, &api, limits, stop);
    Ok(runtime.block_on(serve)?)
}

/// The async runtime every serving command uses.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(toolmark_roles::api::runtime()?)
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
