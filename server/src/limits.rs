//! Every limit the connection layer puts on what one client can cost, with the reason for its
//! value. docs/operations.md ("Limits") lists them; `toolmark run` makes each configurable.

use std::time::Duration;

/// Time a client has to send a request's headers, counted from the moment the connection is
/// ready for a request: from accepting it (its first request) and, on HTTP/1.1, from the end of
/// the previous response — so this is also HTTP/1.1's keep-alive idle timeout. Real clients send
/// their headers in one packet; 10 s tolerates a slow mobile link and closes a slowloris.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest a request may take from its headers to its response's headers: reading the body
/// (the deadline on uploads) and the handler's work. `/check` and `/sensitive` bodies are at
/// most 2 MiB, which a 1 Mbit/s client sends in 17 s; answers take milliseconds. Past it: 408
/// with a JSON error.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest gap between two pieces of a request body, counted from the request's head. A client
/// that starts an upload and stops holds its share of the body budget and a connection; after
/// this much silence the request is answered 408, the budget is released and (HTTP/1.1) the
/// connection is closed, well before [`REQUEST_TIMEOUT`]. 10 s tolerates a slow mobile link's
/// pauses.
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest a response may make no progress: its socket write is blocked (the client stopped
/// reading) or, on HTTP/2, hyper takes no more of its body (the client grants no flow-control
/// window). The connection is then closed and what it held (the response, its buffers) freed.
/// 30 s outlasts a real client's pauses (a phone switching networks) while bounding how long a
/// non-reading client pins memory.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest a connection may go without a new request while no response is being sent, before
/// it is closed: an HTTP/2 connection with no streams, whatever PINGs or window updates the
/// client sends. Longer than [`REQUEST_TIMEOUT`], so a request being worked on is never idle.
/// Browsers keep idle HTTP/2 connections for minutes, but reopening one costs a round trip; a
/// held socket costs a file descriptor.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Connections open at once from one client ([`crate::client_key`]: an IPv4 address or an
/// IPv6 /64). A browser opens at most 6 per origin over HTTP/1.1 (1 over HTTP/2) and WARDEN's
/// scanner 4; 64 leaves room for a NAT'd office while no single client can take a sizeable
/// share of [`MAX_CONNECTIONS`]. Over it, a new connection is closed at once.
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 64;

/// Connections open at once overall, at most; the actual cap is also kept
/// [`RESERVED_FILES`] below the process's open-file limit ([`connection_cap`]). Over it, a new
/// connection is closed at once (so the listener keeps draining its backlog).
pub const MAX_CONNECTIONS: usize = 16_384;

/// Evicted connections that may be still closing at once. At the cap a new connection makes
/// the one not being served that was idle longest close (`conn::Admission`); that one's socket
/// is closed as soon as its task runs, so until then both are open. With this many closing,
/// the accept loop waits for one to close before accepting again (new connections wait in the
/// listen backlog): descriptors stay at most this far over the cap, far inside
/// [`RESERVED_FILES`].
pub const EVICTION_HEADROOM: usize = 64;

/// File descriptors kept free for everything but client connections: the crawl's sockets
/// (up to 256 observations in flight, `toolmark_crawler::limits::MAX_CONCURRENT_OBSERVATIONS`;
/// an HTTP+SSE observation holds two while it runs), streamed documents (64,
/// `toolmark_api::documents::MAX_DOCUMENT_STREAMS`), SQLite connections and their WAL files,
/// the log's files, blob reads, standard streams. Under a hard limit as low as 1,024 the
/// operator should lower the crawl's concurrency too.
pub const RESERVED_FILES: u64 = 512;

/// HTTP/2 streams one connection may have open at once. A browser loading the desk needs a
/// handful, a scanner 4 (hyper's default is 200, which let one connection hold 100 stalled
/// uploads).
pub const MAX_CONCURRENT_STREAMS: u32 = 32;

/// Largest HTTP/2 header list accepted (HTTP/1.1 is bounded by hyper's read buffer, 400 KiB):
/// real requests carry under 2 KiB of headers.
pub const MAX_HEADER_LIST_BYTES: u32 = 16 * 1024;

/// Request-body bytes all requests together may hold at once. Each request reserves its
/// `Content-Length` (or [`MAX_REQUEST_BODY`] when it has none) before its body is read; when
/// the budget cannot cover it, the request gets 503 with `Retry-After` at once. 64 MiB is 32
/// full-size `/check` bodies in flight — far more than real traffic — and bounds what stalled
/// uploads can pin, however many connections send them.
pub const REQUEST_BODY_BUDGET: usize = 64 * 1024 * 1024;

/// Bodies up to this size (a typical `/check` body: one server's tools, 1–100 KiB) draw first
/// from a pool of their own, [`SMALL_BODY_POOL`] of the budget, so stalled large uploads cannot
/// keep ordinary checks out.
pub const SMALL_BODY: usize = 128 * 1024;

/// The part of [`REQUEST_BODY_BUDGET`] only bodies of at most [`SMALL_BODY`] may use (an
/// eighth: 8 MiB, 64 small bodies at once even when large uploads hold the rest).
pub const SMALL_BODY_POOL_SHARE: usize = 8;

/// The share of each pool one client ([`crate::client_key`]) may hold at once: an eighth, so
/// one address cannot spend the budget for everyone (7 MiB of large bodies, three full-size
/// ones, and 1 MiB of small ones, eight at once, by default).
pub const PER_CLIENT_BODY_SHARE: usize = 8;

/// The largest request body any route accepts (`/check` and `/sensitive`: 2 MiB), and what a
/// request without a `Content-Length` (chunked) reserves of the budget. A request whose
/// `Content-Length` is larger is refused with 413 before its body is read.
pub const MAX_REQUEST_BODY: usize = 2 * 1024 * 1024;

/// `Retry-After` seconds on a 503 for a full body budget: uploads in flight finish or hit
/// [`BODY_IDLE_TIMEOUT`] within seconds.
pub const BUSY_RETRY_AFTER_SECONDS: u64 = 5;

/// Time graceful shutdown waits for connections to finish their requests before dropping them.
/// systemd's default stop timeout is 90 s and the crawl needs part of it to commit; answers take
/// milliseconds, so 10 s only cuts off clients that would have kept the process alive forever.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(10);

/// The connection layer's limits (every field defaults to the constant of the same name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// [`REQUEST_TIMEOUT`].
    pub request_timeout: Duration,
    /// [`BODY_IDLE_TIMEOUT`].
    pub body_idle_timeout: Duration,
    /// [`WRITE_TIMEOUT`].
    pub write_timeout: Duration,
    /// [`IDLE_TIMEOUT`].
    pub idle_timeout: Duration,
    /// [`MAX_CONNECTIONS`] (further capped by [`connection_cap`]).
    pub max_connections: usize,
    /// [`MAX_CONNECTIONS_PER_CLIENT`].
    pub max_connections_per_client: usize,
    /// [`MAX_CONCURRENT_STREAMS`].
    pub max_concurrent_streams: u32,
    /// [`REQUEST_BODY_BUDGET`].
    pub request_body_budget: usize,
    /// [`MAX_REQUEST_BODY`].
    pub max_request_body: usize,
    /// [`SHUTDOWN_DEADLINE`].
    pub shutdown_deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: HEADER_READ_TIMEOUT,
            request_timeout: REQUEST_TIMEOUT,
            body_idle_timeout: BODY_IDLE_TIMEOUT,
            write_timeout: WRITE_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            max_connections_per_client: MAX_CONNECTIONS_PER_CLIENT,
            max_concurrent_streams: MAX_CONCURRENT_STREAMS,
            request_body_budget: REQUEST_BODY_BUDGET,
            max_request_body: MAX_REQUEST_BODY,
            shutdown_deadline: SHUTDOWN_DEADLINE,
        }
    }
}

/// The process's open-file limit: what it was at start and what it is after [`raise_file_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimit {
    /// The soft limit found at start (`None`: unlimited).
    pub was: Option<u64>,
    /// The soft limit now.
    pub soft: Option<u64>,
    /// The hard limit (the most the soft limit can be raised to without privileges).
    pub hard: Option<u64>,
}

/// Raise the soft open-file limit to the hard limit (a process may always do so), so the
/// connection cap is not set by a distribution's conservative default of 1,024. Returns what
/// the limits are; a refusal leaves the soft limit as it was.
pub fn raise_file_limit() -> FileLimit {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let before = getrlimit(Resource::Nofile);
    let mut now = before;
    if before.current != before.maximum {
        let raised = Rlimit {
            current: before.maximum,
            maximum: before.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            now = getrlimit(Resource::Nofile);
        }
    }
    FileLimit {
        was: before.current,
        soft: now.current,
        hard: now.maximum,
    }
}

/// The connection cap for `limits` under the open-file limit `soft`: `limits.max_connections`,
/// but at most `soft - RESERVED_FILES` (at least 1), so client connections can never take the
/// descriptors SQLite, the log and the crawl need.
pub fn connection_cap(limits: &Limits, soft: Option<u64>) -> usize {
    let room = soft.map_or(u64::MAX, |s| s.saturating_sub(RESERVED_FILES).max(1));
    limits
        .max_connections
        .min(usize::try_from(room).unwrap_or(usize::MAX))
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_reserved_files_below_the_soft_limit() {
        let limits = Limits::default();
        assert_eq!(connection_cap(&limits, Some(1024)), 1024 - 512);
        assert_eq!(connection_cap(&limits, Some(1_048_576)), MAX_CONNECTIONS);
        assert_eq!(connection_cap(&limits, None), MAX_CONNECTIONS);
        assert_eq!(connection_cap(&limits, Some(100)), 1);
    }
}
