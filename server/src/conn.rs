//! Per-connection bookkeeping: who holds how many connections ([`Admission`]), and a socket
//! wrapper ([`Watched`]) that records when bytes last moved and fails a write that makes no
//! progress for the write timeout.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
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
#[derive(Debug)]
pub struct Admission {
    per_client: Mutex<HashMap<IpAddr, usize>>,
    total: AtomicUsize,
    max_total: usize,
    max_per_client: usize,
}

/// A connection's place in [`Admission`]; dropping it frees the place.
#[derive(Debug)]
pub struct Admitted {
    admission: Arc<Admission>,
    client: IpAddr,
}

impl Admission {
    /// Caps of `max_total` connections, `max_per_client` per client key.
    pub fn new(max_total: usize, max_per_client: usize) -> Arc<Admission> {
        Arc::new(Admission {
            per_client: Mutex::new(HashMap::new()),
            total: AtomicUsize::new(0),
            max_total: max_total.max(1),
            max_per_client: max_per_client.max(1),
        })
    }

    /// Take a place for a connection from `client` (already a [`crate::client_key`]).
    pub fn admit(self: &Arc<Self>, client: IpAddr) -> Result<Admitted, Refusal> {
        let mut per_client = self
            .per_client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let held = per_client.get(&client).copied().unwrap_or(0);
        if held >= self.max_per_client {
            return Err(Refusal::PerClient);
        }
        if self.total.load(Ordering::Relaxed) >= self.max_total {
            return Err(Refusal::Total);
        }
        self.total.fetch_add(1, Ordering::Relaxed);
        per_client.insert(client, held + 1);
        Ok(Admitted {
            admission: self.clone(),
            client,
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
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
    }
}

/// When a connection's bytes last moved, shared between its socket and its watchdog.
#[derive(Debug)]
pub struct Activity {
    start: Instant,
    /// Milliseconds after `start` at which bytes last moved.
    last_ms: AtomicU64,
    /// Requests whose headers arrived on this connection.
    requests: AtomicU64,
}

impl Activity {
    /// A connection accepted now.
    pub fn new() -> Arc<Activity> {
        Arc::new(Activity {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        })
    }

    fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// When bytes last moved (the accept time if none did).
    pub fn last(&self) -> Instant {
        self.start + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }

    /// When the connection was accepted.
    pub fn accepted(&self) -> Instant {
        self.start
    }

    /// Count a request whose headers arrived.
    pub fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Requests whose headers arrived so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

/// A socket that records activity and fails a write pending without progress for
/// `write_timeout` with [`io::ErrorKind::TimedOut`] (which ends the connection, freeing the
/// response it was writing).
pub struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
    write_timeout: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> Watched<S> {
    /// Wrap `inner`.
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
                self.stalled = None;
                if r.is_ok() {
                    self.activity.touch();
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
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
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.touch();
        }
        r
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

    #[test]
    fn a_client_over_its_share_is_refused_and_freed_places_are_reused() {
        let a = Admission::new(10, 2);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let first = a.admit(ip).unwrap();
        let _second = a.admit(ip).unwrap();
        assert_eq!(a.admit(ip).unwrap_err(), Refusal::PerClient);
        assert!(a.admit("192.0.2.2".parse().unwrap()).is_ok());
        drop(first);
        assert!(a.admit(ip).is_ok());
    }

    #[test]
    fn the_total_cap_refuses_every_client() {
        let a = Admission::new(2, 5);
        let _x = a.admit("192.0.2.1".parse().unwrap()).unwrap();
        let _y = a.admit("192.0.2.2".parse().unwrap()).unwrap();
        assert_eq!(
            a.admit("192.0.2.3".parse().unwrap()).unwrap_err(),
            Refusal::Total
        );
        assert_eq!(a.open(), 2);
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
