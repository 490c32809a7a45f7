//! Operations: `/health`, `/metrics` (Prometheus text), `/api/openapi.json`, CORS for public
//! reads, and the per-client rate limits on `/check` and `/sensitive`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::{ApiError, AppState};

/// `/check` requests a client may make per minute, sustained. HISTOR allows 30; answers here
/// are cheap (no scanner runs), so twice that. A scanner checks each configured server once per
/// scan, so this is the rate of repeated scans, not of one ([`CHECK_BURST`] holds one).
pub const CHECKS_PER_MINUTE: f64 = 60.0;

/// `/check` requests a client may make at once (the bucket): one WARDEN scan. WARDEN checks
/// every server of a configuration once, 4 at a time with no retry, so a 429 inside a scan is a
/// server left unchecked; configurations run up to about 500 servers. At
/// [`CHECKS_PER_MINUTE`] an empty bucket is full again after 8⅓ minutes, so back-to-back
/// scans run at the sustained rate.
pub const CHECK_BURST: f64 = 500.0;

/// `POST /api/v1/sensitive` requests a client may make per minute, sustained. Each may cost up
/// to [`crate::servers::MAX_MATCH_WORK`] glob steps (about a tenth of a second of one core), so
/// half of `/check`'s rate: one client can take at most a twentieth of a core, while a policy
/// tool asks once per server it configures.
pub const SENSITIVE_PER_MINUTE: f64 = 30.0;

/// `/sensitive` requests a client may burst above the sustained rate (a policy checked against
/// a whole configuration at once); a burst costs at most about a second of one core.
pub const SENSITIVE_BURST: f64 = 10.0;

/// Clients tracked by the rate limiter at most; past this, idle (full) buckets are dropped, and
/// if none is idle the new client shares one overflow bucket. Bounds the limiter's memory
/// (about 64 bytes per client, whatever the bucket's size: ~6 MiB) against a flood of spoofed
/// sources.
pub const MAX_TRACKED_CLIENTS: usize = 100_000;

/// Least time between two sweeps for idle buckets once [`MAX_TRACKED_CLIENTS`] are tracked: a
/// sweep walks every bucket, and a large bucket takes minutes to fill again, so without a pause
/// a flood of new sources would pay a walk of the whole table per request.
pub const SWEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// The OpenAPI 3.1 description of every route, kept in sync with the router by a test.
pub const OPENAPI: &str = include_str!("openapi.json");

/// A token bucket per client: per IPv4 address, per IPv6 /64 (`toolmark_server::client_key`).
pub struct RateLimiter {
    buckets: Mutex<Buckets>,
    per_second: f64,
    burst: f64,
    unlimited: bool,
}

/// The buckets (tokens, last refill) by client, and when idle ones were last swept out.
#[derive(Default)]
struct Buckets {
    by_client: HashMap<IpAddr, (f64, Instant)>,
    swept: Option<Instant>,
}

impl Default for RateLimiter {
    /// `/check`'s default limiter: [`CHECKS_PER_MINUTE`], a bucket of [`CHECK_BURST`].
    fn default() -> Self {
        RateLimiter::checks(CHECKS_PER_MINUTE)
    }
}

impl RateLimiter {
    /// A limiter refilling `per_second` tokens up to `burst`.
    pub fn new(per_second: f64, burst: f64) -> RateLimiter {
        RateLimiter {
            buckets: Mutex::new(Buckets::default()),
            per_second,
            burst,
            unlimited: false,
        }
    }

    /// `/check`'s limiter at `per_minute` a minute: its bucket holds as many minutes of the
    /// rate as the default's ([`CHECK_BURST`] at [`CHECKS_PER_MINUTE`]: 8⅓), at least one
    /// request. At the default rate the bucket holds one scan.
    pub fn checks(per_minute: f64) -> RateLimiter {
        RateLimiter::new(
            per_minute / 60.0,
            (per_minute * CHECK_BURST / CHECKS_PER_MINUTE)
                .round()
                .max(1.0),
        )
    }

    /// `/sensitive`'s default limiter: [`SENSITIVE_PER_MINUTE`], bursts of [`SENSITIVE_BURST`].
    pub fn sensitive() -> RateLimiter {
        RateLimiter::new(SENSITIVE_PER_MINUTE / 60.0, SENSITIVE_BURST)
    }

    /// A limiter that never refuses (an operator limiting in a reverse proxy, benchmarks).
    pub fn unlimited() -> RateLimiter {
        RateLimiter {
            unlimited: true,
            ..RateLimiter::default()
        }
    }

    /// The sustained rate, in requests a minute (as configured).
    pub fn per_minute(&self) -> f64 {
        // Rounded to hundredths so `n / 60 * 60` reads back as `n`.
        (self.per_second * 6000.0).round() / 100.0
    }

    /// The burst allowed above the sustained rate.
    pub fn burst(&self) -> f64 {
        self.burst
    }

    /// Whether this limiter never refuses.
    pub fn is_unlimited(&self) -> bool {
        self.unlimited
    }

    /// Take a token for the client at `peer` (keyed by `toolmark_server::client_key`: one
    /// bucket per IPv4 address or IPv6 /64); `Err(seconds until one is available)` when it has
    /// none.
    pub fn take(&self, peer: IpAddr) -> Result<(), f64> {
        self.take_at(peer, Instant::now())
    }

    /// [`RateLimiter::take`] at the instant `now` (not before any earlier call's).
    fn take_at(&self, peer: IpAddr, now: Instant) -> Result<(), f64> {
        if self.unlimited {
            return Ok(());
        }
        let client = toolmark_server::client_key(peer);
        let mut guard = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Buckets { by_client, swept } = &mut *guard;
        let full = by_client.len() >= MAX_TRACKED_CLIENTS && !by_client.contains_key(&client);
        if full && swept.is_none_or(|t| now.saturating_duration_since(t) >= SWEEP_INTERVAL) {
            let (rate, burst) = (self.per_second, self.burst);
            by_client.retain(|_, (tokens, at)| {
                *tokens + now.saturating_duration_since(*at).as_secs_f64() * rate < burst
            });
            *swept = Some(now);
        }
        let key = if by_client.len() >= MAX_TRACKED_CLIENTS && !by_client.contains_key(&client) {
            IpAddr::from([0u8, 0, 0, 0])
        } else {
            client
        };
        let (tokens, at) = by_client.entry(key).or_insert((self.burst, now));
        *tokens = (*tokens + now.saturating_duration_since(*at).as_secs_f64() * self.per_second)
            .min(self.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err((1.0 - *tokens) / self.per_second)
        }
    }
}

/// Counters `/metrics` reports.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<HashMap<(String, u16), u64>>,
    checks_limited: AtomicU64,
    sensitive_limited: AtomicU64,
    /// Uncached `/check` answers computed on the async worker that read the request (a small
    /// question, `check::Budget::Small`), and on a blocking thread.
    checks_answered: [AtomicU64; 2],
}

/// Where an uncached `/check` answer was computed (`toolmark_checks_answered_total`'s `on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnsweredOn {
    /// On the async worker that read the request.
    AsyncWorker = 0,
    /// On a blocking thread.
    BlockingThread = 1,
}

impl Metrics {
    /// Count an uncached `/check` answer computed `on`.
    pub(crate) fn answered(&self, on: AnsweredOn) {
        self.checks_answered[on as usize].fetch_add(1, Ordering::Relaxed);
    }

    fn count(&self, route: &str, status: u16) {
        let mut m = self
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *m.entry((route.to_owned(), status)).or_default() += 1;
    }
}

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/api/openapi.json", get(openapi))
}

async fn openapi() -> Response {
    let mut r = OPENAPI.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Seconds since the published checkpoint was written (its file's modification time: the
/// checkpoint text carries no time of its own).
fn checkpoint_age(state: &AppState) -> Option<u64> {
    let modified = state.log.checkpoint_written()?;
    SystemTime::now()
        .duration_since(modified)
        .ok()
        .map(|d| d.as_secs())
}

/// The schedules' latest runs, as the role serving this API knows them ([`AppState::jobs`]);
/// none when it runs no scheduler and knows of none.
fn jobs(state: &AppState) -> Result<Vec<toolmark_schedules::JobState>, String> {
    state.jobs.as_ref().map_or(Ok(Vec::new()), |read| read())
}

/// Longest job detail `/health` shows: enough for a failure's reason; the full text is in the
/// service's logs and `schedules.sqlite`.
const MAX_JOB_DETAIL: usize = 300;

/// `text` cut to at most `max` characters (with an ellipsis when cut).
fn cap(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

async fn health(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let body = tokio::task::spawn_blocking(move || {
        // The jobs first: they may wait on another database, which must not hold an index
        // connection `/check` needs meanwhile.
        let jobs = jobs(&state);
        let cp = state.checkpoint();
        let index = state.index.get();
        let last = index.last_run().ok().flatten();
        let indexed = index.log_size_indexed().ok();
        let ok = cp.is_ok();
        let job_states: serde_json::Map<String, serde_json::Value> = jobs
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|j| {
                (
                    j.job.clone(),
                    json!({
                        "lastStatus": j.last.status.as_str(),
                        "lastStartedAt": rfc3339(j.last.started_at),
                        "lastFinishedAt": j.last.finished_at.map(rfc3339),
                        "lastDetail": j.last.detail.as_deref().map(|d| cap(d, MAX_JOB_DETAIL)),
                        "lastSuccessAt": j.last_success.map(rfc3339),
                    }),
                )
            })
            .collect();
        json!({
            "ok": ok,
            "service": "toolmark",
            "version": env!("CARGO_PKG_VERSION"),
            "treeSize": cp.as_ref().ok().map(|c| c.checkpoint.size),
            "origin": cp.as_ref().ok().map(|c| c.checkpoint.origin.clone()),
            "checkpointAgeSeconds": checkpoint_age(&state),
            "indexedEntries": indexed,
            "lastCrawl": last.map(|r| json!({
                "id": r.id, "startedAt": r.started_at, "finishedAt": r.finished_at,
                "status": r.status,
            })),
            "jobs": job_states,
            "jobsError": jobs.err(),
            "witnessing": crate::witnesses::health(&state, cp.as_deref().ok()),
            "error": cp.err().map(|e| e.to_string()),
        })
    })
    .await
    .map_err(ApiError::internal)?;
    let status = if body["ok"] == true {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::SERVICE_UNAVAILABLE
    };
    Ok((status, axum::Json(body)).into_response())
}

/// A Prometheus label value, escaped.
pub(crate) fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

async fn metrics(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let text = tokio::task::spawn_blocking(move || -> Result<String, ApiError> {
        use std::fmt::Write;
        let mut out = String::new();
        let at = state.checkpoint().ok();
        let size = at.as_ref().map(|c| c.checkpoint.size);
        let _ = writeln!(out, "# HELP toolmark_log_tree_size Entries in the published log.");
        let _ = writeln!(out, "# TYPE toolmark_log_tree_size gauge");
        let _ = writeln!(out, "toolmark_log_tree_size {}", size.unwrap_or(0));
        let _ = writeln!(out, "# HELP toolmark_checkpoint_age_seconds Seconds since the checkpoint was published.");
        let _ = writeln!(out, "# TYPE toolmark_checkpoint_age_seconds gauge");
        let _ = writeln!(out, "toolmark_checkpoint_age_seconds {}", checkpoint_age(&state).unwrap_or(0));
        crate::witnesses::metrics(&state, at.as_deref(), &mut out);
        let (by_status, by_class) = {
            let index = state.index.get();
            (index.target_status_counts()?, index.change_class_counts()?)
        };
        let _ = writeln!(out, "# HELP toolmark_targets Targets by their last observation's status.");
        let _ = writeln!(out, "# TYPE toolmark_targets gauge");
        for (status, n) in by_status {
            let _ = writeln!(out, "toolmark_targets{{status=\"{}\"}} {n}", escape_label(&status));
        }
        let _ = writeln!(out, "# HELP toolmark_changes_total Recorded tool-set changes by class.");
        let _ = writeln!(out, "# TYPE toolmark_changes_total counter");
        for (class, n) in by_class {
            let _ = writeln!(out, "toolmark_changes_total{{class=\"{}\"}} {n}", escape_label(&class));
        }
        let jobs = jobs(&state).unwrap_or_default();
        let _ = writeln!(out, "# HELP toolmark_job_last_success_timestamp_seconds When each job's latest successful run started (Unix seconds).");
        let _ = writeln!(out, "# TYPE toolmark_job_last_success_timestamp_seconds gauge");
        for j in &jobs {
            if let Some(t) = j.last_success {
                let _ = writeln!(out, "toolmark_job_last_success_timestamp_seconds{{job=\"{}\"}} {}", escape_label(&j.job), t.timestamp());
            }
        }
        let _ = writeln!(out, "# HELP toolmark_job_last_run_ok 1 when each job's latest finished run succeeded, 0 when it failed, was interrupted or stopped.");
        let _ = writeln!(out, "# TYPE toolmark_job_last_run_ok gauge");
        for j in &jobs {
            if let Some(last) = &j.last_finished {
                let ok = u8::from(last.status == toolmark_schedules::RunStatus::Ok);
                let _ = writeln!(out, "toolmark_job_last_run_ok{{job=\"{}\"}} {ok}", escape_label(&j.job));
            }
        }
        let _ = writeln!(out, "# HELP toolmark_job_running 1 while a run of the job is in progress.");
        let _ = writeln!(out, "# TYPE toolmark_job_running gauge");
        for j in &jobs {
            let running = u8::from(j.last.status == toolmark_schedules::RunStatus::Running);
            let _ = writeln!(out, "toolmark_job_running{{job=\"{}\"}} {running}", escape_label(&j.job));
        }
        let _ = writeln!(out, "# HELP toolmark_http_requests_total Requests served, by route and status.");
        let _ = writeln!(out, "# TYPE toolmark_http_requests_total counter");
        let counts = state
            .metrics
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let mut counts: Vec<_> = counts.into_iter().collect();
        counts.sort();
        for ((route, status), n) in counts {
            let _ = writeln!(
                out,
                "toolmark_http_requests_total{{route=\"{}\",status=\"{status}\"}} {n}",
                escape_label(&route)
            );
        }
        let _ = writeln!(out, "# HELP toolmark_checks_rate_limited_total /check requests refused by the rate limit.");
        let _ = writeln!(out, "# TYPE toolmark_checks_rate_limited_total counter");
        let _ = writeln!(
            out,
            "toolmark_checks_rate_limited_total {}",
            state.metrics.checks_limited.load(Ordering::Relaxed)
        );
        let _ = writeln!(out, "# HELP toolmark_checks_answered_total Uncached /check answers, by where they were computed (a small question on the async worker that read it, the others on a blocking thread).");
        let _ = writeln!(out, "# TYPE toolmark_checks_answered_total counter");
        for (on, label) in [
            (AnsweredOn::AsyncWorker, "async-worker"),
            (AnsweredOn::BlockingThread, "blocking-thread"),
        ] {
            let _ = writeln!(
                out,
                "toolmark_checks_answered_total{{on=\"{label}\"}} {}",
                state.metrics.checks_answered[on as usize].load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(out, "# HELP toolmark_sensitive_rate_limited_total /sensitive requests refused by the rate limit.");
        let _ = writeln!(out, "# TYPE toolmark_sensitive_rate_limited_total counter");
        let _ = writeln!(
            out,
            "toolmark_sensitive_rate_limited_total {}",
            state.metrics.sensitive_limited.load(Ordering::Relaxed)
        );
        if let Some(more) = &state.extra_metrics {
            out.push_str(&more());
        }
        Ok(out)
    })
    .await
    .map_err(ApiError::internal)??;
    let mut r = text.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    Ok(r)
}

/// Count every response by its route pattern (never the raw path: ids would make the label set
/// unbounded) and status.
pub async fn count_requests(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let response = next.run(request).await;
    state.metrics.count(&route, response.status().as_u16());
    response
}

/// The rate limits on `POST /api/v1/check` ([`AppState::limiter`]) and on `POST
/// /api/v1/sensitive` and `GET /api/v1/servers/{id}/sensitive` ([`AppState::sensitive_limiter`]), keyed by the connection's peer address
/// as `toolmark_server::client_key` groups it (behind a reverse proxy every client shares the
/// proxy's bucket: put the limit in the proxy then). The 429 says the configured rate.
pub async fn limit_checks(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    let post = request.method() == Method::POST;
    // `GET /api/v1/servers/{id}/sensitive` matches globs over a stored set: the same work as
    // `POST /api/v1/sensitive`, so the same limiter.
    let sensitive_get = (request.method() == Method::GET || request.method() == Method::HEAD)
        && path.starts_with("/api/v1/servers/")
        && path.ends_with("/sensitive");
    let limited = match path {
        "/api/v1/check" if post => Some((&state.limiter, &state.metrics.checks_limited, "checks")),
        "/api/v1/sensitive" if post => Some((
            &state.sensitive_limiter,
            &state.metrics.sensitive_limited,
            "sensitive-tool requests",
        )),
        _ if sensitive_get => Some((
            &state.sensitive_limiter,
            &state.metrics.sensitive_limited,
            "sensitive-tool requests",
        )),
        _ => None,
    };
    if let Some((limiter, counter, what)) = limited {
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
            .unwrap_or(IpAddr::from([127u8, 0, 0, 1]));
        if let Err(wait) = limiter.take(peer) {
            counter.fetch_add(1, Ordering::Relaxed);
            let retry = wait.ceil().max(1.0) as u64;
            let mut r = ApiError::TooManyRequests(format!(
                "at most {} {what} a minute per client (bursts of {}); retry in {retry} s",
                limiter.per_minute(),
                limiter.burst()
            ))
            .into_response();
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry));
            return r;
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_check_bucket_lets_one_scan_of_500_through_then_refuses() {
        let l = RateLimiter::default();
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let t0 = Instant::now();
        for i in 0..500 {
            assert_eq!(l.take_at(a, t0), Ok(()), "check {}", i + 1);
        }
        // The 501st waits one second (60 a minute) for the next token.
        let wait = l.take_at(a, t0).unwrap_err();
        assert!((wait - 1.0).abs() < 1e-9, "{wait}");
        assert!(
            l.take_at(b, t0).is_ok(),
            "another client has its own bucket"
        );
        // A second later one more check goes through, and only one.
        let t1 = t0 + std::time::Duration::from_secs(1);
        assert!(l.take_at(a, t1).is_ok());
        assert!(l.take_at(a, t1).is_err());
        // 8⅓ minutes refill the whole bucket, and no more.
        let t2 = t1 + std::time::Duration::from_secs(600);
        for _ in 0..500 {
            assert!(l.take_at(a, t2).is_ok());
        }
        assert!(l.take_at(a, t2).is_err());
    }

    #[test]
    fn the_limiter_tracks_a_bounded_number_of_clients_and_sweeps_at_most_once_a_second() {
        let l = RateLimiter::default();
        let t0 = Instant::now();
        let client = |i: usize| IpAddr::from((0x0a00_0000u32 + i as u32).to_be_bytes());
        for i in 0..MAX_TRACKED_CLIENTS {
            l.take_at(client(i), t0).unwrap();
        }
        // No bucket is full again yet: the next new client shares the overflow bucket, and
        // the table does not grow.
        let n = |l: &RateLimiter| l.buckets.lock().unwrap().by_client.len();
        l.take_at(client(MAX_TRACKED_CLIENTS), t0).unwrap();
        assert_eq!(n(&l), MAX_TRACKED_CLIENTS + 1);
        let overflow = IpAddr::from([0u8, 0, 0, 0]);
        assert!(l.buckets.lock().unwrap().by_client.contains_key(&overflow));
        // Once the buckets are full again (9 minutes on), a sweep drops them — but not within
        // a second of the last sweep.
        let later = t0 + std::time::Duration::from_millis(500);
        l.take_at(client(MAX_TRACKED_CLIENTS + 1), later).unwrap();
        assert_eq!(
            n(&l),
            MAX_TRACKED_CLIENTS + 1,
            "no second sweep within a second"
        );
        let much_later = t0 + std::time::Duration::from_secs(540);
        l.take_at(client(MAX_TRACKED_CLIENTS + 2), much_later)
            .unwrap();
        assert_eq!(n(&l), 1, "idle buckets swept, the new client tracked");
    }
}
