//! Per-connection bookkeeping: who holds how many connections ([`Admission`], which also
//! chooses the connection to close when the total cap is reached), and a socket wrapper
//! ([`Watched`]) that records when bytes last moved and fails a write that makes no progress for
//! the write timeout.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

/// Why a connection was refused at accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The client already holds its share of connections.
    PerClient,
    /// The server holds its cap of connections.
    Total,
}

/// Open connections, overall and per client, against their caps.
///
/// At the total cap a new connection is not simply refused: one open connection that is not
/// being served is told to close ([`Admitted::evicted`]) and the new one takes its place. A
/// connection is being served while a request whose head and body have arrived is in flight
/// (a handler works on it) or a response is being written ([`Activity::serving`]); any other
/// connection waits on its client — no complete request head yet, idle between requests
/// (HTTP/1.1 keep-alive, HTTP/2 without streams), or a request body still arriving or stalled.
/// The victim is the waiting connection whose last activity ([`Activity::last`]: accept, a
/// request head, a piece of request body, response progress) is oldest — the one idle
/// longest, the earliest accepted on a tie. So connections that send half a request, or one
/// whole request, and then wait (one per address, from many addresses) cannot lock everyone
/// else out, and a client mid-request outlives every connection idle since before it last
/// sent something. A connection being served is never evicted; only when every open
/// connection is being served is a new one refused ([`Refusal::Total`]). Choosing looks at
/// every open connection (at most the cap; atomic loads only). Evicted connections count as
/// open until their task has closed them; the accept loop waits ([`Admission::room`]) while
/// [`crate::limits::EVICTION_HEADROOM`] of them are closing, so descriptors stay bounded.
#[derive(Debug)]
pub struct Admission {
    per_client: Mutex<HashMap<IpAddr, usize>>,
    /// Open connections not chosen for eviction yet, by acceptance order: the candidates for
    /// eviction. A closed connection removes its own; a chosen one is taken out.
    candidates: Mutex<BTreeMap<u64, Candidate>>,
    next_id: AtomicU64,
    total: AtomicUsize,
    /// Evicted connections not closed yet.
    closing: AtomicUsize,
    /// Told each time an evicted connection closes.
    closed: Notify,
    max_total: usize,
    max_per_client: usize,
}

/// A connection that may be evicted: what it has delivered, and how to tell it to close.
#[derive(Debug)]
struct Candidate {
    activity: Arc<Activity>,
    close: Arc<Eviction>,
}

/// How the admission tells a connection to close, and remembers it did.
#[derive(Debug, Default)]
struct Eviction {
    told: Notify,
    chosen: std::sync::atomic::AtomicBool,
}

/// A connection's place in [`Admission`]; dropping it frees the place.
#[derive(Debug)]
pub struct Admitted {
    admission: Arc<Admission>,
    client: IpAddr,
    id: u64,
    close: Arc<Eviction>,
    /// Whether admitting it closed another connection (an eviction).
    pub evicted_another: bool,
}

impl Admission {
    /// Caps of `max_total` connections, `max_per_client` per client key.
    pub fn new(max_total: usize, max_per_client: usize) -> Arc<Admission> {
        Arc::new(Admission {
            per_client: Mutex::new(HashMap::new()),
            candidates: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(0),
            total: AtomicUsize::new(0),
            closing: AtomicUsize::new(0),
            closed: Notify::new(),
            max_total: max_total.max(1),
            max_per_client: max_per_client.max(1),
        })
    }

    /// Take a place for a connection from `client` (already a [`crate::client_key`]) whose
    /// activity is `activity`. At the total cap, the open connection not being served that has
    /// been idle longest is told to close and the new one is admitted in its place (unless
    /// [`crate::limits::EVICTION_HEADROOM`] evicted connections are still closing: then it is
    /// refused; [`Admission::room`] waits that out).
    pub fn admit(
        self: &Arc<Self>,
        client: IpAddr,
        activity: &Arc<Activity>,
    ) -> Result<Admitted, Refusal> {
        let mut per_client = self
            .per_client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let held = per_client.get(&client).copied().unwrap_or(0);
        if held >= self.max_per_client {
            return Err(Refusal::PerClient);
        }
        let mut candidates = self
            .candidates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut evicted_another = false;
        let open = self.total.load(Ordering::Relaxed);
        if open >= self.max_total {
            if self.closing.load(Ordering::Relaxed) >= crate::limits::EVICTION_HEADROOM {
                return Err(Refusal::Total);
            }
            let Some(victim) = Self::least_delivered(&mut candidates) else {
                return Err(Refusal::Total);
            };
            victim.close.chosen.store(true, Ordering::Relaxed);
            self.closing.fetch_add(1, Ordering::Relaxed);
            victim.close.told.notify_one();
            evicted_another = true;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let close = Arc::new(Eviction::default());
        candidates.insert(
            id,
            Candidate {
                activity: activity.clone(),
                close: close.clone(),
            },
        );
        self.total.fetch_add(1, Ordering::Relaxed);
        per_client.insert(client, held + 1);
        Ok(Admitted {
            admission: self.clone(),
            client,
            id,
            close,
            evicted_another,
        })
    }

    /// Take the eviction victim out of `candidates`: among the connections not being served,
    /// the one whose last activity is oldest (the earliest accepted on a tie); `None` when every
    /// one is being served.
    fn least_delivered(candidates: &mut BTreeMap<u64, Candidate>) -> Option<Candidate> {
        let id = candidates
            .iter()
            .filter(|(_, c)| !c.activity.serving())
            .min_by_key(|(id, c)| (c.activity.last(), **id))
            .map(|(id, _)| *id)?;
        candidates.remove(&id)
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    /// Resolves at once unless [`crate::limits::EVICTION_HEADROOM`] evicted connections are
    /// still closing; then when one has closed. The accept loop waits on it before accepting,
    /// so a burst of new connections waits in the listen backlog instead of being refused.
    pub async fn room(&self) {
        loop {
            let closed = self.closed.notified();
            let mut closed = std::pin::pin!(closed);
            closed.as_mut().enable();
            if self.closing.load(Ordering::Relaxed) < crate::limits::EVICTION_HEADROOM {
                return;
            }
            closed.await;
        }
    }
}

impl Admitted {
    /// Resolves when the connection was chosen to make room for a new one (see
    /// [`Admission`]): the caller closes it.
    pub async fn evicted(&self) {
        self.close.told.notified().await;
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.admission
            .candidates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.id);
        let mut per_client = self
            .admission
            .per_client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = per_client.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                per_client.remove(&self.client);
            }
        }
        self.admission.total.fetch_sub(1, Ordering::Relaxed);
        if self.close.chosen.load(Ordering::Relaxed) {
            self.admission.closing.fetch_sub(1, Ordering::Relaxed);
            self.admission.closed.notify_waiters();
        }
    }
}

/// What a connection's watchdog and the eviction choice ([`Admission`]) look at: when it was
/// accepted, when its last request arrived, a piece of request body arrived or a response made
/// progress, which requests are in flight and which of them still wait for their body, and the
/// responses still being sent with their last progress. Client bytes alone (an HTTP/2 PING, a
/// window update, an unfinished request head) are not activity: a client that keeps a
/// connection busy without asking for anything is idle.
#[derive(Debug)]
pub struct Activity {
    start: Instant,
    /// Milliseconds after `start` of the last request or response progress.
    last_ms: AtomicU64,
    /// Requests whose headers arrived on this connection.
    requests: AtomicU64,
    /// Requests whose response headers are not out yet (a handler is working on them).
    in_flight: AtomicU64,
    /// Requests in flight whose body is still arriving (or stalled): they wait on the client.
    receiving: AtomicU64,
    /// Responses being sent (the entries of `responses`), readable without its lock.
    sending: AtomicU64,
    /// Whether the socket has a write pending (hyper is flushing what a response left).
    writing: std::sync::atomic::AtomicBool,
    /// Responses being sent: id → milliseconds after `start` of their last progress.
    responses: Mutex<HashMap<u64, u64>>,
    next_response: AtomicU64,
}

impl Activity {
    /// A connection accepted now.
    pub fn new() -> Arc<Activity> {
        Arc::new(Activity {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            receiving: AtomicU64::new(0),
            sending: AtomicU64::new(0),
            writing: std::sync::atomic::AtomicBool::new(false),
            responses: Mutex::new(HashMap::new()),
            next_response: AtomicU64::new(0),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    fn touch(&self) -> u64 {
        let ms = self.now_ms();
        self.last_ms.fetch_max(ms, Ordering::Relaxed);
        ms
    }

    fn responses(&self) -> std::sync::MutexGuard<'_, HashMap<u64, u64>> {
        self.responses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The last request, piece of request body or response progress (the accept time if
    /// none).
    pub fn last(&self) -> Instant {
        self.at(self.last_ms.load(Ordering::Relaxed))
    }

    /// When the connection was accepted.
    pub fn accepted(&self) -> Instant {
        self.start
    }

    /// Count a request whose headers arrived (in flight until [`Activity::answered`]).
    pub fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.touch();
    }

    /// A request's response headers are out.
    pub fn answered(&self) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.touch();
    }

    /// Whether something is going on that the idle rule must not cut: a request a handler is
    /// working on (the request deadline bounds it), or a socket write hyper is still
    /// flushing (the write timeout bounds it).
    pub fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) > 0 || self.writing.load(Ordering::Relaxed)
    }

    /// Whether the connection is being served, so it is never evicted ([`Admission`]): a
    /// request whose head and body have arrived is in flight (a handler works on it, or its
    /// response headers are not written yet), or a response is being sent or written. A
    /// connection that is not being served waits on its client: for a request head (the first
    /// or the next), or for the rest of a request body.
    pub fn serving(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) > self.receiving.load(Ordering::Relaxed)
            || self.sending.load(Ordering::Relaxed) > 0
            || self.writing.load(Ordering::Relaxed)
    }

    /// A request's body began to arrive (its head came with more to follow): the request waits
    /// on the client until [`Activity::received`].
    pub fn receiving(&self) {
        self.receiving.fetch_add(1, Ordering::Relaxed);
    }

    /// A piece of a request body arrived.
    pub fn body_progress(&self) {
        self.touch();
    }

    /// A request body that began to arrive ([`Activity::receiving`]) ended, or its reader let
    /// it go: the request no longer waits on the client.
    pub fn received(&self) {
        self.receiving.fetch_sub(1, Ordering::Relaxed);
    }

    /// Requests whose headers arrived so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The least recent progress of the responses still being sent, if any.
    pub fn oldest_response_progress(&self) -> Option<Instant> {
        self.responses().values().min().map(|ms| self.at(*ms))
    }

    fn open_response(&self) -> u64 {
        let id = self.next_response.fetch_add(1, Ordering::Relaxed);
        let ms = self.touch();
        self.responses().insert(id, ms);
        self.sending.fetch_add(1, Ordering::Relaxed);
        id
    }

    fn response_progress(&self, id: u64) {
        let ms = self.touch();
        if let Some(at) = self.responses().get_mut(&id) {
            *at = ms;
        }
    }

    fn close_response(&self, id: u64) {
        self.touch();
        if self.responses().remove(&id).is_some() {
            self.sending.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Largest piece of a response body handed to hyper at once. Smaller pieces make a stalled
/// response visible: HTTP/2 flow control can leave a stream unable to send without the socket
/// ever blocking, and hyper then stops taking pieces from the body ([`Tracked`] sees that).
/// Responses of known size up to this are not tracked: they go out in one write, and one
/// stalled costs at most this much.
pub const RESPONSE_PIECE: usize = 16 * 1024;

/// A response body that reports its progress to the connection's [`Activity`] and hands its
/// data to hyper in pieces of at most [`RESPONSE_PIECE`] bytes (zero-copy splits).
pub struct Tracked {
    inner: axum::body::Body,
    rest: Option<axum::body::Bytes>,
    activity: Arc<Activity>,
    id: u64,
}

impl Tracked {
    /// Track `inner` on `activity`'s connection.
    pub fn new(inner: axum::body::Body, activity: Arc<Activity>) -> Tracked {
        let id = activity.open_response();
        Tracked {
            inner,
            rest: None,
            activity,
            id,
        }
    }

    fn piece(&mut self, mut data: axum::body::Bytes) -> axum::body::Bytes {
        if data.len() > RESPONSE_PIECE {
            let first = data.split_to(RESPONSE_PIECE);
            self.rest = Some(data);
            first
        } else {
            data
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.activity.close_response(self.id);
    }
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if let Some(rest) = this.rest.take() {
            let piece = this.piece(rest);
            this.activity.response_progress(this.id);
            return Poll::Ready(Some(Ok(http_body::Frame::data(piece))));
        }
        match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                this.activity.response_progress(this.id);
                match frame.into_data() {
                    Ok(data) => Poll::Ready(Some(Ok(http_body::Frame::data(this.piece(data))))),
                    Err(frame) => Poll::Ready(Some(Ok(frame))),
                }
            }
            other => Poll::Ready(other),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        let inner = self.inner.size_hint();
        let Some(rest) = &self.rest else {
            return inner;
        };
        // The upper bound first: a lower bound may never exceed it.
        let extra = rest.len() as u64;
        let mut hint = http_body::SizeHint::new();
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + extra);
        }
        hint.set_lower(inner.lower() + extra);
        hint
    }
}

/// What a request body told the request guard: whether it was read to its end, and whether it
/// stalled (no byte for the body idle timeout).
#[derive(Debug, Default)]
pub struct BodyState {
    ended: std::sync::atomic::AtomicBool,
    stalled: std::sync::atomic::AtomicBool,
}

impl BodyState {
    /// The body was read to its end.
    pub fn ended(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }

    /// The body failed for sending nothing for the body idle timeout.
    pub fn stalled(&self) -> bool {
        self.stalled.load(Ordering::Relaxed)
    }
}

/// A request body that fails once no byte of it has arrived for `idle` (counted from the
/// request's head, then from each piece), and reports to a [`BodyState`] whether it ended or
/// stalled. The timer runs from the head whether or not the handler reads yet, so a handler
/// that starts reading late sees the stall at once. It also tells its connection's
/// [`Activity`], when it has one, that the request waits on the client until the body ends or
/// is let go, and when a piece arrives (for the eviction choice, [`Admission`]).
pub struct IdleBody {
    inner: axum::body::Body,
    idle: Duration,
    timer: Pin<Box<Sleep>>,
    state: Arc<BodyState>,
    /// The connection's activity, until the body has ended (then told once).
    activity: Option<Arc<Activity>>,
}

impl IdleBody {
    /// Watch `inner`, whose head arrived now, on the connection whose activity is `activity`
    /// (when known).
    pub fn new(
        inner: axum::body::Body,
        idle: Duration,
        state: Arc<BodyState>,
        activity: Option<Arc<Activity>>,
    ) -> IdleBody {
        if let Some(a) = &activity {
            a.receiving();
        }
        IdleBody {
            inner,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            state,
            activity,
        }
    }

    /// The body ended: remember it, and tell the connection the request no longer waits.
    fn end(&mut self) {
        self.state.ended.store(true, Ordering::Relaxed);
        if let Some(a) = self.activity.take() {
            a.received();
        }
    }

    fn stall_error(&self) -> axum::Error {
        axum::Error::new(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no byte of the request body for {} s",
                self.idle.as_secs_f64()
            ),
        ))
    }
}

impl Drop for IdleBody {
    fn drop(&mut self) {
        // Let go before its end: the handler works on without it.
        if let Some(a) = self.activity.take() {
            a.received();
        }
    }
}

impl http_body::Body for IdleBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if this.state.stalled() {
            return Poll::Ready(Some(Err(this.stall_error())));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(None) => {
                this.end();
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(a) = &this.activity {
                    a.body_progress();
                }
                if this.inner.is_end_stream() {
                    this.end();
                }
                let next = Instant::now() + this.idle;
                this.timer.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Pending => {
                ready!(this.timer.as_mut().poll(cx));
                this.state.stalled.store(true, Ordering::Relaxed);
                Poll::Ready(Some(Err(this.stall_error())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A socket that fails a write pending without progress for `write_timeout` with
/// [`io::ErrorKind::TimedOut`] (which ends the connection, freeing the response it was
/// writing).
pub struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
    write_timeout: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> Watched<S> {
    /// Wrap `inner`; `activity` learns whether a write is pending.
    pub fn new(inner: S, activity: Arc<Activity>, write_timeout: Duration) -> Watched<S> {
        Watched {
            inner,
            activity,
            write_timeout,
            stalled: None,
        }
    }

    /// After a write attempt: progress clears the stall timer; `Pending` starts it (or
    /// checks it) and turns into an error once it fires.
    fn after_write<T>(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match result {
            Poll::Ready(r) => {
                if self.stalled.take().is_some() {
                    self.activity.writing.store(false, Ordering::Relaxed);
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
                self.activity.writing.store(true, Ordering::Relaxed);
                let timeout = self.write_timeout;
                let timer = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                ready!(timer.as_mut().poll(cx));
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client read nothing for the write timeout",
                )))
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.after_write(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.after_write(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_flush(cx);
        this.after_write(cx, r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.after_write(cx, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admit(a: &Arc<Admission>, ip: &str) -> Result<Admitted, Refusal> {
        a.admit(ip.parse().unwrap(), &Activity::new())
    }

    #[test]
    fn a_client_over_its_share_is_refused_and_freed_places_are_reused() {
        let a = Admission::new(10, 2);
        let first = admit(&a, "192.0.2.1").unwrap();
        let _second = admit(&a, "192.0.2.1").unwrap();
        assert_eq!(admit(&a, "192.0.2.1").unwrap_err(), Refusal::PerClient);
        assert!(admit(&a, "192.0.2.2").is_ok());
        drop(first);
        assert!(admit(&a, "192.0.2.1").is_ok());
    }

    /// When every open connection is being served (here: a handler works on its request),
    /// the total cap refuses every client.
    #[test]
    fn the_total_cap_refuses_every_client_when_all_are_being_served() {
        let a = Admission::new(2, 5);
        let (x, y) = (Activity::new(), Activity::new());
        let _x = a.admit("192.0.2.1".parse().unwrap(), &x).unwrap();
        let _y = a.admit("192.0.2.2".parse().unwrap(), &y).unwrap();
        x.request();
        y.request();
        assert_eq!(admit(&a, "192.0.2.3").unwrap_err(), Refusal::Total);
        assert_eq!(a.open(), 2);
    }

    /// Whether `place` has not been told to close.
    fn not_told(place: &Admitted) -> bool {
        let mut f = std::pin::pin!(place.evicted());
        let waker = std::task::Waker::noop();
        f.as_mut()
            .poll(&mut Context::from_waker(waker))
            .is_pending()
    }

    /// At the cap, the victim is the connection not being served whose last activity is
    /// oldest, whatever it has delivered: an idle keep-alive connection that was answered
    /// before a half-sent head arrived goes first, then the half-sent head, then a stalled
    /// upload (by its last body piece), then a newer half-sent head. A connection whose
    /// request a handler works on, one whose response is being sent, and one whose socket
    /// write is pending are never chosen.
    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_connection_idle_longest_that_is_not_being_served_is_evicted() {
        let tick = Duration::from_secs(1);
        let a = Admission::new(7, 5);
        let place = |activity: &Arc<Activity>, ip: &str| a.admit(ip.parse().unwrap(), activity);
        // t = 0: three connections being served, and one that will idle after its answer.
        let (working, sending, writing, kept_alive) = (
            Activity::new(),
            Activity::new(),
            Activity::new(),
            Activity::new(),
        );
        let working_place = place(&working, "192.0.2.1").unwrap();
        let sending_place = place(&sending, "192.0.2.2").unwrap();
        let writing_place = place(&writing, "192.0.2.3").unwrap();
        let kept_alive_place = place(&kept_alive, "192.0.2.4").unwrap();
        working.request();
        sending.request();
        sending.answered();
        let _response = Tracked::new(axum::body::Body::from("x"), sending.clone());
        writing.request();
        writing.answered();
        writing.writing.store(true, Ordering::Relaxed);
        kept_alive.request();
        tokio::time::advance(tick).await;
        // t = 1: answered; idle on keep-alive from now.
        kept_alive.answered();
        tokio::time::advance(tick).await;
        // t = 2: a half-sent head, and an upload whose head arrived.
        let (half, upload) = (Activity::new(), Activity::new());
        let half_place = place(&half, "192.0.2.5").unwrap();
        let upload_place = place(&upload, "192.0.2.6").unwrap();
        upload.request();
        upload.receiving();
        tokio::time::advance(tick).await;
        // t = 3: a piece of its body, then nothing; another half-sent head.
        upload.body_progress();
        let later = Activity::new();
        let later_place = place(&later, "192.0.2.7").unwrap();
        tokio::time::advance(tick).await;
        let mut evicted = Vec::new();
        for (i, expected) in [&kept_alive_place, &half_place, &upload_place, &later_place]
            .into_iter()
            .enumerate()
        {
            assert!(not_told(expected));
            let new = place(&Activity::new(), &format!("192.0.3.{i}"));
            assert!(new.as_ref().is_ok_and(|n| n.evicted_another), "{i}");
            assert!(!not_told(expected), "victim {i}");
            evicted.push(new);
            tokio::time::advance(tick).await;
        }
        assert!(not_told(&working_place) && not_told(&sending_place) && not_told(&writing_place));
        // Until they close the places are still counted (within the eviction headroom).
        assert_eq!(a.open(), 7 + 4);
        drop((kept_alive_place, half_place, upload_place, later_place));
        assert_eq!(a.open(), 7);
    }

    /// A stalled upload stops waiting on the client once its body ends (or is let go): it is
    /// then being served, until its response is out.
    #[test]
    fn a_request_whose_body_has_arrived_is_being_served() {
        let upload = Activity::new();
        assert!(!upload.serving());
        upload.request();
        upload.receiving();
        assert!(!upload.serving());
        upload.received();
        assert!(upload.serving());
        upload.answered();
        assert!(!upload.serving());
    }

    /// With `EVICTION_HEADROOM` evicted connections still closing, a new one is refused and
    /// the accept loop's wait for room blocks; one closing frees it.
    #[test]
    fn the_wait_for_room_blocks_while_the_eviction_headroom_is_closing() {
        let a = Admission::new(1, 10_000);
        let mut places = vec![admit(&a, "192.0.2.1").unwrap()];
        for i in 0..crate::limits::EVICTION_HEADROOM {
            let ip = format!("192.0.3.{}", i % 250);
            places.push(a.admit(ip.parse().unwrap(), &Activity::new()).unwrap());
        }
        assert_eq!(admit(&a, "192.0.2.9").unwrap_err(), Refusal::Total);
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut room = std::pin::pin!(a.room());
        assert!(room.as_mut().poll(&mut cx).is_pending());
        // The first (evicted) closes.
        drop(places.remove(0));
        assert!(room.as_mut().poll(&mut cx).is_ready());
    }

    /// A body split into pieces reports a consistent size at every step (a lower bound never
    /// above the upper one).
    #[test]
    fn a_split_body_reports_its_remaining_size() {
        use http_body::Body as _;
        let data = axum::body::Bytes::from(vec![b'x'; RESPONSE_PIECE * 2 + 10]);
        let mut body = Tracked::new(axum::body::Body::from(data), Activity::new());
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut left = (RESPONSE_PIECE * 2 + 10) as u64;
        assert_eq!(body.size_hint().exact(), Some(left));
        while let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut body).poll_frame(&mut cx) {
            left -= frame.into_data().unwrap().len() as u64;
            let hint = body.size_hint();
            assert!(hint.lower() <= hint.upper().unwrap_or(u64::MAX));
            assert_eq!(hint.exact(), Some(left));
        }
        assert_eq!(left, 0);
    }

    /// A write the peer never reads fails once the write timeout passes without progress.
    #[tokio::test(start_paused = true)]
    async fn a_stalled_write_fails_after_the_write_timeout() {
        use tokio::io::AsyncWriteExt;
        let (client, _server_side_kept_unread) = tokio::io::duplex(1024);
        let mut w = Watched::new(client, Activity::new(), Duration::from_secs(30));
        let started = Instant::now();
        let err = w.write_all(&vec![0u8; 64 * 1024]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_secs(30));
    }
}
