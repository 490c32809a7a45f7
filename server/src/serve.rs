//! The accept loop and the request layers: connections admitted under their caps, served by
//! hyper (HTTP/1.1 and HTTP/2, detected per connection) with the timeouts of [`Limits`], every
//! request under a deadline and a shared budget for body bytes, and graceful shutdown with a
//! deadline.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::Body as _;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tower::ServiceExt;

use crate::conn::{Activity, Admission, BodyState, IdleBody, Refusal, Tracked, Watched};
use crate::json_error;
use crate::limits::Limits;

/// Pause after an accept error that is about the process, not the peer (out of file
/// descriptors or memory): retrying at once would spin a core while nothing can change.
pub const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// Counts of what the connection layer refused or cut, since it started.
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections closed at accept: their client held its share.
    pub refused_per_client: AtomicU64,
    /// Connections closed at accept: the server held its cap.
    pub refused_total: AtomicU64,
    /// Connections closed for sending no request within the header timeout, or asking for
    /// nothing and being sent nothing for the idle timeout.
    pub idle_closed: AtomicU64,
    /// Connections closed because a response made no progress for the write timeout.
    pub stalled_closed: AtomicU64,
    /// Connections closed to admit a new one at the total cap: the open connection not being
    /// served that had been idle longest (`conn::Admission`).
    pub evicted: AtomicU64,
    /// Requests answered 408 because their body sent nothing for the body idle timeout.
    pub body_stalled: AtomicU64,
    /// Requests refused with 503 because the body budget was spent.
    pub body_budget_refused: AtomicU64,
    /// Requests answered 408 at the request deadline.
    pub request_timeouts: AtomicU64,
    /// Connections still open when the shutdown deadline passed (dropped).
    pub dropped_at_shutdown: AtomicU64,
    /// Connections open now.
    pub open: AtomicU64,
}

/// One Prometheus metric: name (after `toolmark_http_`), type, help, (labels, value) samples.
type Metric<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, u64)>);

impl Stats {
    /// The counters as Prometheus text (for `/metrics`).
    pub fn prometheus(&self) -> String {
        use std::fmt::Write;
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let metrics: [Metric; 6] = [
            (
                "connections_open",
                "gauge",
                "Client connections open now.",
                vec![("", load(&self.open))],
            ),
            (
                "connections_refused_total",
                "counter",
                "Connections closed at accept: their client held its share (per_client) or the server its cap (total).",
                vec![
                    ("reason=\"per_client\"", load(&self.refused_per_client)),
                    ("reason=\"total\"", load(&self.refused_total)),
                ],
            ),
            (
                "connections_closed_total",
                "counter",
                "Connections closed by a timeout: idle (no request) or stalled (a response made no progress); or evicted: closed at the total cap to admit a new connection (the one not being served that was idle longest).",
                vec![
                    ("reason=\"idle\"", load(&self.idle_closed)),
                    ("reason=\"stalled\"", load(&self.stalled_closed)),
                    ("reason=\"evicted\"", load(&self.evicted)),
                ],
            ),
            (
                "body_budget_refused_total",
                "counter",
                "Requests answered 503 because the request-body budget was spent.",
                vec![("", load(&self.body_budget_refused))],
            ),
            (
                "request_timeouts_total",
                "counter",
                "Requests answered 408 at the request deadline.",
                vec![("", load(&self.request_timeouts))],
            ),
            (
                "request_body_stalled_total",
                "counter",
                "Requests answered 408 because their body sent nothing for the body idle timeout (HTTP/1.1: the connection closed).",
                vec![("", load(&self.body_stalled))],
            ),
        ];
        let mut out = String::new();
        for (name, kind, help, values) in metrics {
            let _ = writeln!(out, "# HELP toolmark_http_{name} {help}");
            let _ = writeln!(out, "# TYPE toolmark_http_{name} {kind}");
            for (labels, value) in values {
                if labels.is_empty() {
                    let _ = writeln!(out, "toolmark_http_{name} {value}");
                } else {
                    let _ = writeln!(out, "toolmark_http_{name}{{{labels}}} {value}");
                }
            }
        }
        out
    }
}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The listener failed in a way that is not about one connection.
    #[error("accepting connections: {0}")]
    Accept(std::io::Error),
    /// The listening socket could not be bound (the address is taken, or not this host's).
    #[error("listening on {addr}: {reason}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        reason: std::io::Error,
    },
}

/// Bind the listening socket (the error names the address).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|reason| ServeError::Bind { addr, reason })
}

struct Budget {
    /// For any body.
    shared: Semaphore,
    /// Only for bodies of at most [`crate::limits::SMALL_BODY`] (tried first by them).
    small: Semaphore,
    /// What each client holds of each pool: (small, shared).
    held: std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, (usize, usize)>>,
    /// The most one client may hold of each pool: (small, shared).
    per_client: (usize, usize),
    max_body: usize,
}

/// What a request reserves of the body budget: nothing for an empty body, its declared length
/// otherwise, and the largest accepted body when the length is unknown (chunked). `Err` for a
/// declared length over the largest accepted body.
fn reservation(request: &Request, max_body: usize) -> Result<usize, u64> {
    let body = request.body();
    if body.is_end_stream() {
        return Ok(0);
    }
    match body.size_hint().exact() {
        Some(n) if n > max_body as u64 => Err(n),
        Some(n) => Ok(n as usize),
        None => Ok(max_body),
    }
}

/// A client's place in the body budget; dropping it gives the bytes back.
struct Reserved<'a> {
    budget: &'a Budget,
    client: std::net::IpAddr,
    small: bool,
    bytes: usize,
    permit: Option<tokio::sync::SemaphorePermit<'a>>,
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        // The bytes go back to the pool before the client's count drops, so a concurrent
        // reservation never sees the count free and the pool still taken.
        drop(self.permit.take());
        let mut held = self
            .budget
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(h) = held.get_mut(&self.client) {
            let pool = if self.small { &mut h.0 } else { &mut h.1 };
            *pool -= self.bytes;
            if *h == (0, 0) {
                held.remove(&self.client);
            }
        }
    }
}

impl Budget {
    /// Reserve `bytes` for `client`: small bodies from the small pool first, then the shared
    /// one; each within the client's share.
    fn reserve(&self, client: std::net::IpAddr, bytes: usize) -> Option<Reserved<'_>> {
        let permits = u32::try_from(bytes).ok()?;
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let h = held.entry(client).or_default();
        let small_first = bytes <= crate::limits::SMALL_BODY;
        for small in [true, false] {
            if small && !small_first {
                continue;
            }
            let (pool, mine, share) = if small {
                (&self.small, &mut h.0, self.per_client.0)
            } else {
                (&self.shared, &mut h.1, self.per_client.1)
            };
            if *mine + bytes > share {
                continue;
            }
            if let Ok(permit) = pool.try_acquire_many(permits) {
                *mine += bytes;
                return Some(Reserved {
                    budget: self,
                    client,
                    small,
                    bytes,
                    permit: Some(permit),
                });
            }
        }
        if *h == (0, 0) {
            held.remove(&client);
        }
        None
    }
}

/// The guard's own refusals are readable by any origin, like the API's answers (public, no
/// credentials): a browser must see the JSON error and `Retry-After`.
fn refusal(status: StatusCode, detail: &str) -> Response {
    let mut r = json_error(status, detail);
    r.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    r
}

/// What every request passes before its route: the body budget, the body idle timeout and the
/// request deadline.
struct Guard {
    budget: Budget,
    request_timeout: Duration,
    body_idle_timeout: Duration,
    stats: Arc<Stats>,
}

/// Take the request's share of the body budget (or refuse it: 413 for a declared body over
/// the largest accepted, 503 when the budget is spent), then run it under the request
/// deadline (408 past it) with its body under the body idle timeout (408 once it stalls). An
/// HTTP/1.1 response to a request whose body was not read to its end closes the connection
/// (`Connection: close`): the server never waits for the rest of a body nobody reads, which
/// a client that stopped sending would make it do until the idle timeout. One middleware for
/// all of it: each layer costs a clone and a boxed future per request.
async fn guard(State(g): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let budget = &g.budget;
    let need = match reservation(&request, budget.max_body) {
        Ok(n) => n,
        Err(declared) => {
            return refusal(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "the body is declared as {declared} bytes; the most any route accepts is {}",
                    budget.max_body
                ),
            );
        }
    };
    let held = if need == 0 {
        None
    } else {
        let client = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(std::net::IpAddr::from([0u8, 0, 0, 0]), |c| {
                crate::client_key(c.0.ip())
            });
        let Some(held) = budget.reserve(client, need) else {
            g.stats.body_budget_refused.fetch_add(1, Ordering::Relaxed);
            let mut r = refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many request bodies are in flight; retry shortly",
            );
            r.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(crate::limits::BUSY_RETRY_AFTER_SECONDS),
            );
            return r;
        };
        Some(held)
    };
    let has_body = !request.body().is_end_stream();
    let h1 = request.version() <= axum::http::Version::HTTP_11;
    let body = Arc::new(BodyState::default());
    let request = if has_body {
        let (idle, state) = (g.body_idle_timeout, body.clone());
        let activity = request.extensions().get::<Arc<Activity>>().cloned();
        request.map(|b| axum::body::Body::new(IdleBody::new(b, idle, state, activity)))
    } else {
        request
    };
    // The reservation is held until the handler is done with the body (it is buffered
    // inside the handler).
    let mut response = match tokio::time::timeout(g.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            g.stats.request_timeouts.fetch_add(1, Ordering::Relaxed);
            refusal(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the request was not complete within {} s",
                    g.request_timeout.as_secs_f64()
                ),
            )
        }
    };
    drop(held);
    if body.stalled() {
        // Whatever the handler made of the failed body, the client is told why.
        g.stats.body_stalled.fetch_add(1, Ordering::Relaxed);
        response = refusal(
            StatusCode::REQUEST_TIMEOUT,
            &format!(
                "the request body sent nothing for {} s",
                g.body_idle_timeout.as_secs_f64()
            ),
        );
    }
    if has_body && h1 && !body.ended() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// `router` under the request layers (the body budget, the body idle timeout, the deadline),
/// as one service around the whole router rather than around each route: a middleware clones
/// what it wraps per request, and a router is one `Arc` where a route is its chain of layers.
pub fn layered(
    router: Router,
    limits: &Limits,
    stats: Arc<Stats>,
) -> impl tower::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = Response,
    Error = Infallible,
    Future: Send,
> + Clone
+ Send
+ 'static {
    let total = limits.request_body_budget.min(Semaphore::MAX_PERMITS);
    let small = total / crate::limits::SMALL_BODY_POOL_SHARE;
    let share = crate::limits::PER_CLIENT_BODY_SHARE;
    let guard_state = Arc::new(Guard {
        budget: Budget {
            shared: Semaphore::new(total - small),
            small: Semaphore::new(small),
            held: std::sync::Mutex::default(),
            // Each at least one body of the largest size it takes, or no body could pass.
            per_client: (
                (small / share).max(crate::limits::SMALL_BODY),
                ((total - small) / share).max(limits.max_request_body),
            ),
            max_body: limits.max_request_body,
        },
        request_timeout: limits.request_timeout,
        body_idle_timeout: limits.body_idle_timeout,
        stats,
    });
    tower::ServiceBuilder::new()
        .map_request(|r: hyper::Request<hyper::body::Incoming>| r.map(axum::body::Body::new))
        .layer(axum::middleware::from_fn_with_state(guard_state, guard))
        .service(router)
}

/// Why a connection's watchdog closed it.
enum Closed {
    /// No request within the header timeout of its acceptance, or nothing asked and nothing
    /// sent for the idle timeout.
    Idle,
    /// A response made no progress for the write timeout (the client stopped reading, or an
    /// HTTP/2 client stopped granting window).
    Stalled,
}

/// Longest the watchdog sleeps between looks (new responses can move its next due time
/// earlier).
const WATCHDOG_TICK: Duration = Duration::from_secs(1);

/// Resolves when the connection should be closed (see [`Closed`]).
async fn watchdog(activity: Arc<Activity>, limits: Limits) -> Closed {
    loop {
        let now = Instant::now();
        let mut due = now + WATCHDOG_TICK;
        if activity.requests() == 0 {
            let first = activity.accepted() + limits.header_read_timeout;
            if now >= first {
                return Closed::Idle;
            }
            due = due.min(first);
        }
        match activity.oldest_response_progress() {
            Some(progress) => {
                let stalled = progress + limits.write_timeout;
                if now >= stalled {
                    return Closed::Stalled;
                }
                due = due.min(stalled);
            }
            None if activity.busy() => {}
            None => {
                let idle = activity.last() + limits.idle_timeout;
                if now >= idle {
                    return Closed::Idle;
                }
                due = due.min(idle);
            }
        }
        tokio::time::sleep_until(due).await;
    }
}

fn builder(limits: &Limits) -> auto::Builder<TokioExecutor> {
    let mut b = auto::Builder::new(TokioExecutor::new());
    b.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    b.http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.max_concurrent_streams)
        .max_header_list_size(crate::limits::MAX_HEADER_LIST_BYTES);
    b
}

/// Counts a connection in [`Stats::open`] until dropped (however its task ends).
struct Open<'a>(&'a AtomicU64);

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Is this accept error about the process (descriptors, memory) rather than one peer?
fn process_starved(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(code) if code == rustix::io::Errno::MFILE.raw_os_error()
            || code == rustix::io::Errno::NFILE.raw_os_error()
            || code == rustix::io::Errno::NOBUFS.raw_os_error()
            || code == rustix::io::Errno::NOMEM.raw_os_error()
    )
}

/// Serve `router` on `listener` until `shutdown` resolves; then stop accepting, let open
/// connections finish their requests (HTTP/2 gets GOAWAY, idle HTTP/1.1 is closed) for at most
/// `limits.shutdown_deadline`, and drop what is left. Requests see the peer as
/// `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stats: Arc<Stats>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    let app = layered(router, &limits, stats.clone());
    let admission = Admission::new(limits.max_connections, limits.max_connections_per_client);
    let builder = builder(&limits);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut connections = JoinSet::new();
    let mut starved_logged: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        // Evicted connections closing past the headroom: let them close before accepting more
        // (new connections wait in the listen backlog).
        tokio::select! {
            () = &mut shutdown => break,
            () = admission.room() => {}
        }
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) if process_starved(&e) => {
                if starved_logged.is_none_or(|t| t.elapsed() > Duration::from_secs(10)) {
                    tracing::warn!("accept: {e} ({} connections open)", admission.open());
                    starved_logged = Some(Instant::now());
                }
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
            // Errors about one connection (reset before accept, …).
            Err(e) if e.kind() != std::io::ErrorKind::InvalidInput => continue,
            Err(e) => return Err(ServeError::Accept(e)),
        };
        let activity = Activity::new();
        let admitted = match admission.admit(crate::client_key(peer.ip()), &activity) {
            Ok(a) => {
                if a.evicted_another {
                    stats.evicted.fetch_add(1, Ordering::Relaxed);
                }
                a
            }
            Err(refusal) => {
                let counter = match refusal {
                    Refusal::PerClient => &stats.refused_per_client,
                    Refusal::Total => &stats.refused_total,
                };
                counter.fetch_add(1, Ordering::Relaxed);
                drop(stream);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = {
            let app = app.clone();
            let activity = activity.clone();
            hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                activity.request();
                request
                    .extensions_mut()
                    .insert(ConnectInfo::<SocketAddr>(peer));
                // The guard tells it while the request's body is still arriving.
                request.extensions_mut().insert(activity.clone());
                let app = app.clone();
                let activity = activity.clone();
                async move {
                    let response = app.oneshot(request).await.unwrap_or_else(|e| match e {});
                    activity.answered();
                    // Small answers of known size go out in one write; larger or streamed ones
                    // are tracked so a stalled one is seen (`conn::Tracked`).
                    let small = http_body::Body::size_hint(response.body())
                        .exact()
                        .is_some_and(|n| n <= crate::conn::RESPONSE_PIECE as u64);
                    Ok::<_, Infallible>(if small {
                        response
                    } else {
                        response.map(|body| axum::body::Body::new(Tracked::new(body, activity)))
                    })
                }
            })
        };
        let io = TokioIo::new(Watched::new(stream, activity.clone(), limits.write_timeout));
        let conn = builder.serve_connection(io, service).into_owned();
        let conn = graceful.watch(conn);
        let watch = watchdog(activity, limits.clone());
        let stats = stats.clone();
        stats.open.fetch_add(1, Ordering::Relaxed);
        connections.spawn(async move {
            let _open = Open(&stats.open);
            tokio::select! {
                _ = conn => {}
                // Counted when it was chosen (at the new connection's admission).
                () = admitted.evicted() => {}
                closed = watch => {
                    let counter = match closed {
                        Closed::Idle => &stats.idle_closed,
                        Closed::Stalled => &stats.stalled_closed,
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    drop(listener);
    let open = connections.len();
    if open > 0 {
        tracing::info!(
            "shutting down: {open} connections finishing (at most {} s)",
            limits.shutdown_deadline.as_secs_f64()
        );
    }
    let drained = async {
        graceful.shutdown().await;
        while connections.join_next().await.is_some() {}
    };
    if tokio::time::timeout(limits.shutdown_deadline, drained)
        .await
        .is_err()
    {
        while connections.try_join_next().is_some() {}
        let left = connections.len();
        connections.abort_all();
        while connections.join_next().await.is_some() {}
        stats
            .dropped_at_shutdown
            .fetch_add(left as u64, Ordering::Relaxed);
        tracing::warn!(
            "shutdown deadline of {} s passed: {left} connections dropped",
            limits.shutdown_deadline.as_secs_f64()
        );
    }
    Ok(())
}

/// [`serve`] as the process's one server: raises the open-file limit first
/// ([`crate::raise_file_limit`]), caps the connections below it ([`crate::connection_cap`]),
/// logs the caps, and serves the router `app` builds over the counters it is handed (so the
/// router's `/metrics` can show them).
pub async fn serve_process(
    listener: TcpListener,
    mut limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
    app: impl FnOnce(Arc<Stats>) -> Router,
) -> Result<(), ServeError> {
    let files = crate::raise_file_limit();
    limits.max_connections = crate::connection_cap(&limits, files.soft);
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
    let stats = Arc::new(Stats::default());
    let router = app(stats.clone());
    serve(listener, router, limits, stats, shutdown).await
}
