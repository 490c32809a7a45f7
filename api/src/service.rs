//! Serving the router as a process does: the state opened with the operator's rate limits and
//! cache ([`ApiOptions`], [`AppState::open_with`]), the async runtime with its blocking pool
//! capped ([`runtime`]), and [`serve`], which hands the router to the connection layer
//! (`toolmark_server::serve_process`) with the layer's counters on `/metrics`. `toolmark serve`,
//! `toolmark run` and `toolmark demo` all serve through these.

use std::path::Path;
use std::sync::Arc;

use tokio::net::TcpListener;
use toolmark_server::{Limits, ServeError};

use crate::documents::{DEFAULT_INLINE_TOOL_BYTES, DEFAULT_TOOL_SET_CACHE_BYTES, ToolSetCache};
use crate::ops::{CHECKS_PER_MINUTE, RateLimiter, SENSITIVE_PER_MINUTE};
use crate::state::{AppState, StateError};

/// Threads for blocking work (SQLite reads, tile and bundle reads, proofs). Every such request
/// needs one of the index pool's connections (twice the cores), so more threads than a few
/// times that only queue on those connections while costing memory and context switches; the
/// benchmark saw tokio's default (512) grow to 200+ threads and 300 MB under load.
pub const MAX_BLOCKING_THREADS: usize = 32;

/// The async runtime every serving command uses (blocking pool capped at
/// [`MAX_BLOCKING_THREADS`]).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
}

/// What the API's state is opened with (each 0 rate: unlimited).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiOptions {
    /// `/check` requests per minute per client; the bucket holds 8⅓ minutes of it
    /// ([`RateLimiter::checks`]: [`crate::ops::CHECK_BURST`] at the default rate, one scan).
    pub check_rate: u32,
    /// `/sensitive` requests per minute per client; bursts of a third as many.
    pub sensitive_rate: u32,
    /// MiB the tool-set cache may hold.
    pub tool_set_cache_mib: usize,
    /// The witness policy the log's published checkpoint is cosigned under (`None`: no
    /// witness configured; [`AppState::witnesses`]).
    pub witnesses: Option<Arc<toolmark_log::policy::WitnessPolicy>>,
}

impl Default for ApiOptions {
    /// The named defaults: [`CHECKS_PER_MINUTE`], [`SENSITIVE_PER_MINUTE`],
    /// [`DEFAULT_TOOL_SET_CACHE_BYTES`], no witness.
    fn default() -> Self {
        ApiOptions {
            check_rate: CHECKS_PER_MINUTE as u32,
            sensitive_rate: SENSITIVE_PER_MINUTE as u32,
            tool_set_cache_mib: DEFAULT_TOOL_SET_CACHE_BYTES / (1024 * 1024),
            witnesses: None,
        }
    }
}

impl ApiOptions {
    /// No rate limits (the demo: one local user), the default cache.
    pub fn unlimited() -> ApiOptions {
        ApiOptions {
            check_rate: 0,
            sensitive_rate: 0,
            ..ApiOptions::default()
        }
    }
}

/// `/check`'s per-minute rate as a limiter (0: unlimited).
fn check_limiter(per_minute: u32) -> RateLimiter {
    match per_minute {
        0 => RateLimiter::unlimited(),
        n => RateLimiter::checks(f64::from(n)),
    }
}

/// `/sensitive`'s per-minute rate as a limiter (0: unlimited), bursts of a third of it.
fn sensitive_limiter(per_minute: u32) -> RateLimiter {
    match per_minute {
        0 => RateLimiter::unlimited(),
        n => RateLimiter::new(f64::from(n) / 60.0, (f64::from(n) / 3.0).max(1.0)),
    }
}

impl AppState {
    /// [`AppState::open`] with `options`' rate limits and cache.
    pub fn open_with(
        data: &Path,
        base_url: &str,
        options: &ApiOptions,
    ) -> Result<AppState, StateError> {
        Self::open_dir_with(&toolmark_index::DataDir::new(data), base_url, options)
    }

    /// [`AppState::open_with`] of a data directory whose log may live in other stores.
    pub fn open_dir_with(
        dir: &toolmark_index::DataDir,
        base_url: &str,
        options: &ApiOptions,
    ) -> Result<AppState, StateError> {
        let mut state = AppState::open_dir(dir, base_url)?;
        state.limiter = check_limiter(options.check_rate);
        state.sensitive_limiter = sensitive_limiter(options.sensitive_rate);
        state.tool_sets = ToolSetCache::new(
            options.tool_set_cache_mib * 1024 * 1024,
            DEFAULT_INLINE_TOOL_BYTES,
        );
        state.witnesses = options.witnesses.clone();
        Ok(state)
    }
}

/// Serve the router over `state` until `shutdown` completes, then let the requests in flight
/// finish for at most the shutdown deadline (`toolmark_server::serve_process`: it raises the
/// open-file limit first and logs the connection caps). The connection layer's counters are
/// appended to `/metrics`, after whatever `state.extra_metrics` already gives.
pub async fn serve(
    listener: TcpListener,
    mut state: AppState,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    toolmark_server::serve_process(listener, limits, shutdown, move |stats| {
        // The role's own metrics (a follower's lag) first, then the connection layer's.
        let role = state.extra_metrics.take();
        state.extra_metrics = Some(Arc::new(move || {
            let mut text = role.as_ref().map(|f| f()).unwrap_or_default();
            text.push_str(&stats.prometheus());
            text
        }));
        crate::router(Arc::new(state))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_options_are_the_named_limits() {
        let o = ApiOptions::default();
        assert_eq!(
            (o.check_rate, o.sensitive_rate, o.tool_set_cache_mib),
            (60, 30, 64)
        );
        let u = ApiOptions::unlimited();
        assert_eq!((u.check_rate, u.sensitive_rate), (0, 0));
        assert_eq!(u.tool_set_cache_mib, o.tool_set_cache_mib);
    }

    #[test]
    fn a_zero_rate_is_unlimited_and_bursts_are_a_share_of_the_rate() {
        assert!(check_limiter(0).is_unlimited());
        assert!(sensitive_limiter(0).is_unlimited());
        let s = sensitive_limiter(30);
        assert_eq!((s.per_minute(), s.burst()), (30.0, 10.0));
        assert_eq!(sensitive_limiter(1).burst(), 1.0);
    }

    #[test]
    fn the_default_check_bucket_holds_one_scan_of_500() {
        let l = check_limiter(ApiOptions::default().check_rate);
        assert_eq!((l.per_minute(), l.burst()), (60.0, 500.0));
        // Other rates keep the same minutes of refill in the bucket, at least one request.
        let l = check_limiter(6);
        assert_eq!((l.per_minute(), l.burst()), (6.0, 50.0));
        assert_eq!(check_limiter(120).burst(), 1000.0);
        assert_eq!(check_limiter(1).burst(), 8.0);
    }
}
