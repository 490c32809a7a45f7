//! `toolmark serve`: the API, feeds and desk over a data directory that `toolmark crawl` fills.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;

/// Threads for blocking work (SQLite reads, tile and bundle reads, proofs). Every such request
/// needs one of the index pool's connections (twice the cores), so more threads than a few
/// times that only queue on those connections while costing memory and context switches; the
/// benchmark saw tokio's default (512) grow to 200+ threads and 300 MB under load.
const MAX_BLOCKING_THREADS: usize = 32;

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
    /// limits); bursts of half as many.
    #[arg(long, default_value_t = toolmark_api::ops::CHECKS_PER_MINUTE as u32)]
    pub check_rate: u32,
    /// `/sensitive` requests per minute per client address (0: no limit); bursts of a third
    /// as many.
    #[arg(long, default_value_t = toolmark_api::ops::SENSITIVE_PER_MINUTE as u32)]
    pub sensitive_rate: u32,
    /// MiB the cache of current tool sets (what server pages show) may hold.
    #[arg(long, default_value_t = toolmark_api::documents::DEFAULT_TOOL_SET_CACHE_BYTES / (1024 * 1024))]
    pub tool_set_cache_mib: usize,
    /// What one client may cost (defaults: docs/operations.md, "Limits").
    #[command(flatten)]
    pub http: crate::config::HttpArgs,
}

pub fn run(args: ServeArgs) -> Result<()> {
    let mut http = crate::config::Http::default();
    http.apply(&args.http);
    http.validate()?;
    let runtime = runtime()?;
    runtime.block_on(async move {
        let listener = bind(args.listen).await?;
        let bound = listener.local_addr()?;
        // The bound address, not the asked one: `--listen 127.0.0.1:0` gets a real port.
        let base = args
            .base_url
            .clone()
            .unwrap_or_else(|| format!("http://{bound}"));
        let api = ApiOptions {
            check_rate: args.check_rate,
            sensitive_rate: args.sensitive_rate,
            tool_set_cache_mib: args.tool_set_cache_mib,
        };
        let state = open_state(&args.data, &base, &api)?;
        tracing::info!(
            "toolmark serving {} on http://{bound} (public base {base})",
            args.data.display(),
        );
        serve(listener, state, http.limits(), terminated()).await
    })
}

/// The async runtime every serving command uses (blocking pool capped).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
        .context("starting the async runtime")
}

/// What the API's state is opened with (each 0 rate: unlimited).
#[derive(Debug, Clone, Copy)]
pub struct ApiOptions {
    /// `/check` requests per minute per client; bursts of half as many.
    pub check_rate: u32,
    /// `/sensitive` requests per minute per client; bursts of a third as many.
    pub sensitive_rate: u32,
    /// MiB the tool-set cache may hold.
    pub tool_set_cache_mib: usize,
}

impl ApiOptions {
    /// No rate limits (the demo: one local user), the default cache.
    pub fn unlimited() -> ApiOptions {
        ApiOptions {
            check_rate: 0,
            sensitive_rate: 0,
            tool_set_cache_mib: toolmark_api::documents::DEFAULT_TOOL_SET_CACHE_BYTES
                / (1024 * 1024),
        }
    }
}

/// A per-minute rate as a limiter (0: unlimited), bursts of `1 / burst_divisor` of it.
fn limiter(per_minute: u32, burst_divisor: f64) -> toolmark_api::ops::RateLimiter {
    match per_minute {
        0 => toolmark_api::ops::RateLimiter::unlimited(),
        n => toolmark_api::ops::RateLimiter::new(
            f64::from(n) / 60.0,
            (f64::from(n) / burst_divisor).max(1.0),
        ),
    }
}

/// The API's state over `data` (which must hold a log), with its rate limits and cache.
pub fn open_state(data: &Path, base: &str, api: &ApiOptions) -> Result<toolmark_api::AppState> {
    let mut state = toolmark_api::AppState::open(data, base)
        .with_context(|| format!("opening {}", data.display()))?;
    state.limiter = limiter(api.check_rate, 2.0);
    state.sensitive_limiter = limiter(api.sensitive_rate, 3.0);
    state.tool_sets = toolmark_api::documents::ToolSetCache::new(
        api.tool_set_cache_mib * 1024 * 1024,
        toolmark_api::documents::DEFAULT_INLINE_TOOL_BYTES,
    );
    Ok(state)
}

/// Bind the listening socket (a clear error when the address is taken).
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on {addr}"))
}

/// Serve the router until `shutdown` completes, then let the requests in flight finish for at
/// most the shutdown deadline. Raises the open-file limit first and logs the connection caps.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: toolmark_api::AppState,
    mut limits: toolmark_server::Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let files = toolmark_server::raise_file_limit();
    limits.max_connections = toolmark_server::connection_cap(&limits, files.soft);
    let shown = |n: Option<u64>| n.map_or_else(|| "unlimited".to_owned(), |n| n.to_string());
    tracing::info!(
        "connections: at most {} ({} per client address, IPv6 per /64; {} HTTP/2 streams each); open-file limit {} (was {}, hard {})",
        limits.max_connections,
        limits.max_connections_per_client,
        limits.max_concurrent_streams,
        shown(files.soft),
        shown(files.was),
        shown(files.hard),
    );
    let stats = Arc::new(toolmark_server::Stats::default());
    let mut state = state;
    let counters = stats.clone();
    state.extra_metrics = Some(Arc::new(move || counters.prometheus()));
    let app = toolmark_api::router(Arc::new(state));
    toolmark_server::serve(listener, app, limits, stats, shutdown)
        .await
        .context("serving")
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
