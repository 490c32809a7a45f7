//! The connection layer against misbehaving clients on loopback: each test starts
//! `toolmark_server::serve` with small limits over a tiny router and plays one hostile client.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::routing::{get, post};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use toolmark_server::{Limits, Stats};

struct Running {
    addr: SocketAddr,
    stats: Arc<Stats>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    async fn stop(mut self) -> Duration {
        let started = Instant::now();
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("serve returns")
            .unwrap();
        started.elapsed()
    }
}

/// Responses of `/big` (HTTP/1.1 test) and `/big2` (HTTP/2 test) alive: dropped once their
/// connection is closed.
static LIVE_BODIES: AtomicUsize = AtomicUsize::new(0);
static LIVE_H2_BODIES: AtomicUsize = AtomicUsize::new(0);

struct Counted(Option<Bytes>, &'static AtomicUsize);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_sub(1, Ordering::SeqCst);
    }
}

/// 64 MiB, streamed in 1 MiB chunks; counted in `live` while alive.
fn big_body(live: &'static AtomicUsize) -> Body {
    live.fetch_add(1, Ordering::SeqCst);
    let chunk = Bytes::from(vec![b'x'; 1024 * 1024]);
    let counted = Counted(Some(chunk), live);
    let stream = futures_util::stream::unfold((counted, 0), |(c, n)| async move {
        if n == 64 {
            return None;
        }
        let chunk = c.0.clone().unwrap();
        Some((Ok::<_, std::io::Error>(chunk), (c, n + 1)))
    });
    Body::from_stream(stream)
}

fn router() -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                "late"
            }),
        )
        .route(
            "/two-seconds",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                "done"
            }),
        )
        .route("/big", get(|| async { big_body(&LIVE_BODIES) }))
        .route("/big2", get(|| async { big_body(&LIVE_H2_BODIES) }))
        .route(
            "/upload",
            post(|body: Bytes| async move { format!("{}", body.len()) }),
        )
}

fn small_limits() -> Limits {
    Limits {
        header_read_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(2),
        body_idle_timeout: Duration::from_secs(1),
        write_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(3),
        max_connections: 100,
        max_connections_per_client: 8,
        max_concurrent_streams: 4,
        request_body_budget: 4 * 1024 * 1024,
        max_request_body: 2 * 1024 * 1024,
        shutdown_deadline: Duration::from_secs(2),
    }
}

async fn start(limits: Limits) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stats = Arc::new(Stats::default());
    let (tx, rx) = tokio::sync::oneshot::channel();
    let s = stats.clone();
    let task = tokio::spawn(async move {
        toolmark_server::serve(listener, router(), limits, s, async {
            let _ = rx.await;
        })
        .await
        .unwrap();
    });
    Running {
        addr,
        stats,
        stop: Some(tx),
        task,
    }
}

/// A connection to `addr` from the loopback address `from` (127.0.0.0/8 is all local).
async fn connect_from(from: [u8; 4], addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((from, 0))).unwrap();
    socket.connect(addr).await.unwrap()
}

/// Send a whole HTTP/1.1 request and read the response head and body (Connection: close).
async fn request(from: [u8; 4], addr: SocketAddr, text: &str) -> String {
    let mut s = connect_from(from, addr).await;
    s.write_all(text.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("an answer")
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

const HEALTH: &str = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/// Reads until the peer closes (Ok(bytes)) or `within` passes (Err).
async fn closed_within(s: &mut TcpStream, within: Duration) -> Result<usize, ()> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut n = 0;
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return n,
                Ok(k) => n += k,
            }
        }
    })
    .await
    .map_err(|_| ())
}

#[tokio::test]
async fn a_client_over_its_connection_share_is_refused_and_others_are_served() {
    let server = start(small_limits()).await;
    let mut held = Vec::new();
    for _ in 0..8 {
        let mut s = connect_from([127, 0, 0, 1], server.addr).await;
        s.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        held.push(s);
    }
    // The ninth from the same address is closed at once, without an answer.
    let mut ninth = connect_from([127, 0, 0, 1], server.addr).await;
    let _ = ninth.write_all(HEALTH.as_bytes()).await;
    assert_eq!(
        closed_within(&mut ninth, Duration::from_secs(5)).await,
        Ok(0)
    );
    assert!(server.stats.refused_per_client.load(Ordering::Relaxed) >= 1);
    // Another address is served meanwhile.
    let answer = request([127, 0, 0, 2], server.addr, HEALTH).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(held);
    server.stop().await;
}

#[tokio::test]
async fn half_sent_headers_are_cut_at_the_header_timeout() {
    let server = start(small_limits()).await;
    let mut s = connect_from([127, 0, 0, 1], server.addr).await;
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let started = Instant::now();
    closed_within(&mut s, Duration::from_secs(10))
        .await
        .expect("closed");
    assert!(started.elapsed() >= Duration::from_millis(900));
    server.stop().await;
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_at_the_header_timeout() {
    let server = start(small_limits()).await;
    let mut s = connect_from([127, 0, 0, 1], server.addr).await;
    closed_within(&mut s, Duration::from_secs(10))
        .await
        .expect("closed");
    assert_eq!(server.stats.idle_closed.load(Ordering::Relaxed), 1);
    server.stop().await;
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let server = start(small_limits()).await;
    let mut s = connect_from([127, 0, 0, 1], server.addr).await;
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let n = closed_within(&mut s, Duration::from_secs(10))
        .await
        .expect("closed");
    assert!(n > 0, "the answer came first");
    assert!(started.elapsed() >= Duration::from_millis(900));
    server.stop().await;
}

/// An upload of 2 MiB − 40 bytes that stalls spends the large-body part of the 4 MiB budget
/// (3.5 MiB; an eighth is kept for small bodies): a second large body gets 503 with
/// Retry-After at once, while a small body and a body-less request are still served; the
/// stalled body fails at the body idle timeout and gives the budget back.
#[tokio::test]
async fn stalled_uploads_spend_the_budget_then_get_503_until_they_time_out() {
    let mut limits = small_limits();
    limits.body_idle_timeout = Duration::from_secs(3);
    let server = start(limits).await;
    let head = "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n";
    let mut stalled = connect_from([127, 0, 0, 3], server.addr).await;
    stalled.write_all(head.as_bytes()).await.unwrap();
    stalled
        .write_all(&vec![b'a'; 2 * 1024 * 1024 - 40])
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = request([127, 0, 0, 4], server.addr, &format!("{head}aaaa")).await;
    assert!(second.starts_with("HTTP/1.1 503"), "{second}");
    assert!(
        second.to_ascii_lowercase().contains("retry-after: 5"),
        "{second}"
    );
    assert!(
        second.contains("\"error\":\"service-unavailable\""),
        "{second}"
    );
    let small =
        "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc";
    let answer = request([127, 0, 0, 4], server.addr, small).await;
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("\r\n\r\n3"),
        "{answer}"
    );
    assert!(
        request([127, 0, 0, 4], server.addr, HEALTH)
            .await
            .starts_with("HTTP/1.1 200")
    );
    // The stalled body fails at the body idle timeout (3 s here) and releases the budget.
    closed_within(&mut stalled, Duration::from_secs(10))
        .await
        .expect("closed");
    let whole = format!(
        "{}{}",
        head.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"),
        "a".repeat(2 * 1024 * 1024)
    );
    let answer = request([127, 0, 0, 4], server.addr, &whole).await;
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("2097152"),
        "{answer}"
    );
    assert_eq!(server.stats.body_budget_refused.load(Ordering::Relaxed), 1);
    server.stop().await;
}

/// A body declared larger than any route accepts is refused with a JSON 413 before it is read
/// (it would otherwise be read up to the route's limit without a reservation).
#[tokio::test]
async fn a_body_declared_over_the_largest_accepted_is_413_at_once() {
    let server = start(small_limits()).await;
    let head =
        "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2097153\r\nConnection: close\r\n\r\n";
    let answer = request([127, 0, 0, 9], server.addr, head).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("\"error\":\"payload-too-large\""),
        "{answer}"
    );
    server.stop().await;
}

/// One client may hold an eighth of the large-body pool (at least one full body): its second
/// stalled upload gets 503 while another client's upload still goes through.
#[tokio::test]
async fn one_client_cannot_spend_the_whole_body_budget() {
    let mut limits = small_limits();
    limits.request_body_budget = 32 * 1024 * 1024;
    limits.body_idle_timeout = Duration::from_secs(30);
    limits.request_timeout = Duration::from_secs(30);
    let server = start(limits).await;
    let head = "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n";
    let mut first = connect_from([127, 0, 0, 10], server.addr).await;
    first.write_all(head.as_bytes()).await.unwrap();
    first.write_all(&[b'a'; 1000]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = request([127, 0, 0, 10], server.addr, &format!("{head}aaaa")).await;
    assert!(second.starts_with("HTTP/1.1 503"), "{second}");
    let other = format!(
        "{}{}",
        head.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"),
        "a".repeat(2 * 1024 * 1024)
    );
    let answer = request([127, 0, 0, 11], server.addr, &other).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(first);
    server.stop().await;
}

/// A request a handler works on longer than the idle timeout is not idle: it is answered.
#[tokio::test]
async fn a_slow_handler_is_not_cut_by_the_idle_rule() {
    let mut limits = small_limits();
    limits.idle_timeout = Duration::from_millis(500);
    limits.request_timeout = Duration::from_secs(10);
    let server = start(limits).await;
    let answer = request(
        [127, 0, 0, 13],
        server.addr,
        "GET /two-seconds HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("done"),
        "{answer}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_request_past_its_deadline_gets_a_json_408() {
    let server = start(small_limits()).await;
    let answer = request(
        [127, 0, 0, 1],
        server.addr,
        "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"error\":\"request-timeout\""), "{answer}");
    server.stop().await;
}

/// A client that asks for a large response and never reads is cut off after the write timeout,
/// and the response it was being sent is dropped (its memory freed).
#[tokio::test]
async fn a_client_that_does_not_read_is_cut_off_and_its_response_freed() {
    let server = start(small_limits()).await;
    let before = LIVE_BODIES.load(Ordering::SeqCst);
    let mut s = connect_from([127, 0, 0, 5], server.addr).await;
    s.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    // Never read; the socket buffers fill, the server's writes stall.
    let deadline = Instant::now() + Duration::from_secs(15);
    while LIVE_BODIES.load(Ordering::SeqCst) == before {
        assert!(Instant::now() < deadline, "the response never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    while LIVE_BODIES.load(Ordering::SeqCst) > before {
        assert!(Instant::now() < deadline, "the response is still held");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(s);
    server.stop().await;
}

/// HTTP/2 (prior knowledge, h2c): the server announces its stream cap, and a client that
/// opens more streams than it has waits for the server instead of getting them.
#[tokio::test]
async fn http2_connections_get_the_configured_stream_cap() {
    let server = start(small_limits()).await;
    let tcp = connect_from([127, 0, 0, 6], server.addr).await;
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let mut uploads = Vec::new();
    for _ in 0..4 {
        let request = axum::http::Request::post("http://x/upload")
            .header("content-length", "100")
            .body(())
            .unwrap();
        let (response, send) = client.send_request(request, false).unwrap();
        uploads.push((response, send));
        client = client.ready().await.unwrap();
    }
    // A fifth stream is not served while four are open: it waits (the client saw the
    // server's SETTINGS) or is refused (it went out before them).
    let request = axum::http::Request::get("http://x/health")
        .body(())
        .unwrap();
    let (fifth, _) = client.send_request(request, true).unwrap();
    let mut fifth = Box::pin(fifth);
    match tokio::time::timeout(Duration::from_millis(500), &mut fifth).await {
        Err(_) => {
            // It was waiting for a stream: once one upload ends, it is served.
            let (response, mut send) = uploads.remove(0);
            send.send_data(Bytes::from(vec![b'a'; 100]), true).unwrap();
            assert_eq!(response.await.unwrap().status(), 200);
            let served = tokio::time::timeout(Duration::from_secs(10), fifth).await;
            assert_eq!(
                served
                    .expect("served once a stream is free")
                    .unwrap()
                    .status(),
                200
            );
        }
        Ok(Err(e)) => assert_eq!(e.reason(), Some(h2::Reason::REFUSED_STREAM), "{e}"),
        Ok(Ok(response)) => panic!("a fifth concurrent stream was served: {response:?}"),
    }
    server.stop().await;
}

/// An HTTP/2 client that grants a 1 KiB window, never reads, and keeps the connection lively
/// with PINGs: its responses make no progress, so the connection is closed after the write
/// timeout and the responses are freed (the socket itself never blocks, so only response
/// progress can tell).
#[tokio::test]
async fn an_http2_client_that_grants_no_window_is_cut_off() {
    let server = start(small_limits()).await;
    let tcp = connect_from([127, 0, 0, 12], server.addr).await;
    let (client, mut connection) = h2::client::Builder::new()
        .initial_window_size(1024)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    let mut pings = connection.ping_pong().unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let mut responses = Vec::new();
    for _ in 0..3 {
        let request = axum::http::Request::get("http://x/big2").body(()).unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        responses.push(response);
        client = client.ready().await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while LIVE_H2_BODIES.load(Ordering::SeqCst) < 3 {
        assert!(Instant::now() < deadline, "the responses never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // PING every 200 ms: client bytes, but no request and no progress.
    let pinger = tokio::spawn(async move {
        while pings.ping(h2::Ping::opaque()).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    while LIVE_H2_BODIES.load(Ordering::SeqCst) > 0 {
        assert!(
            Instant::now() < deadline,
            "the stalled responses are still held"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server.stats.stalled_closed.load(Ordering::Relaxed), 1);
    pinger.abort();
    drop(responses);
    server.stop().await;
}

/// Shutdown waits for a request in flight at most the deadline, then drops it and returns;
/// idle keep-alive connections do not hold it up at all.
#[tokio::test]
async fn shutdown_drops_what_is_left_at_its_deadline() {
    let mut limits = small_limits();
    limits.request_timeout = Duration::from_secs(120);
    let server = start(limits).await;
    let mut idle = connect_from([127, 0, 0, 7], server.addr).await;
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut busy = connect_from([127, 0, 0, 8], server.addr).await;
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stats = server.stats.clone();
    let took = server.stop().await;
    assert!(took < Duration::from_secs(5), "shutdown took {took:?}");
    assert!(
        took >= Duration::from_millis(1900),
        "shutdown took {took:?}"
    );
    assert_eq!(stats.dropped_at_shutdown.load(Ordering::Relaxed), 1);
    assert!(
        closed_within(&mut busy, Duration::from_secs(5))
            .await
            .is_ok()
    );
    assert!(
        closed_within(&mut idle, Duration::from_secs(5))
            .await
            .is_ok()
    );
}

/// At the total cap (5 here), connections that wait on their client do not lock a new client
/// out: each new one closes the connection idle longest that is not being served (counted as
/// an eviction) — first a keep-alive client idle since its answer, which came before any
/// half-sent head arrived, then the oldest half-sent head — while a connection whose request
/// is being worked on is never chosen.
#[tokio::test]
async fn at_the_total_cap_the_connection_idle_longest_is_closed_to_admit_a_new_client() {
    let mut limits = small_limits();
    limits.max_connections = 5;
    limits.header_read_timeout = Duration::from_secs(30);
    limits.request_timeout = Duration::from_secs(30);
    limits.idle_timeout = Duration::from_secs(60);
    let server = start(limits).await;
    // Being served: its handler works for 60 s.
    let mut busy = connect_from([127, 0, 4, 1], server.addr).await;
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    // A keep-alive client that completed a request, idle since its answer.
    let mut kept = connect_from([127, 0, 4, 2], server.addr).await;
    kept.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 256];
    let n = kept.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    let mut halves = Vec::new();
    for i in 0..3u8 {
        // Acceptance order is the eviction order among half-sent heads, all after the answer.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut s = connect_from([127, 0, 4, 10 + i], server.addr).await;
        s.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        halves.push(s);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A sixth connection, held: the idle keep-alive client makes room.
    let mut held = connect_from([127, 0, 4, 98], server.addr).await;
    held.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
    assert_eq!(
        closed_within(&mut kept, Duration::from_secs(5)).await,
        Ok(0),
        "the connection idle longest is closed, though it had sent a request"
    );
    // Another: the oldest half-sent head makes room, and the new client is answered.
    let answer = request([127, 0, 4, 99], server.addr, HEALTH).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(
        closed_within(&mut halves[0], Duration::from_secs(5)).await,
        Ok(0),
        "then the oldest half-request"
    );
    assert_eq!(server.stats.evicted.load(Ordering::Relaxed), 2);
    assert_eq!(server.stats.refused_total.load(Ordering::Relaxed), 0);
    // The connection being served was never chosen: still open, its answer not out yet.
    assert!(
        closed_within(&mut busy, Duration::from_millis(300))
            .await
            .is_err()
    );
    let metrics = server.stats.prometheus();
    assert!(
        metrics.contains("toolmark_http_connections_closed_total{reason=\"evicted\"} 2"),
        "{metrics}"
    );
    drop((halves, held, busy));
    server.stop().await;
}

/// At the total cap (2 here), an upload whose body stalled waits on its client, so it is
/// closed to admit a new client (before, a request whose head had arrived was never evicted and
/// its trickle held the place up to the request deadline); a connection being served is not.
#[tokio::test]
async fn at_the_total_cap_a_stalled_upload_is_closed_to_admit_a_new_client() {
    let mut limits = small_limits();
    limits.max_connections = 2;
    limits.body_idle_timeout = Duration::from_secs(30);
    limits.request_timeout = Duration::from_secs(30);
    limits.idle_timeout = Duration::from_secs(60);
    let server = start(limits).await;
    let mut busy = connect_from([127, 0, 6, 1], server.addr).await;
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut upload = connect_from([127, 0, 6, 2], server.addr).await;
    upload
        .write_all(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let answer = request([127, 0, 6, 99], server.addr, HEALTH).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        closed_within(&mut upload, Duration::from_secs(5))
            .await
            .is_ok(),
        "the stalled upload is closed"
    );
    assert_eq!(server.stats.evicted.load(Ordering::Relaxed), 1);
    assert!(
        closed_within(&mut busy, Duration::from_millis(300))
            .await
            .is_err()
    );
    drop(busy);
    server.stop().await;
}

/// A request head declaring a 100-byte body, 10 bytes of it, then silence: answered 408 and
/// the connection closed within the body idle timeout (2 s here; before, the connection stayed
/// open until the idle timeout).
#[tokio::test]
async fn a_stalled_partial_body_is_answered_408_and_closed_within_the_body_idle_timeout() {
    let mut limits = small_limits();
    limits.body_idle_timeout = Duration::from_secs(2);
    limits.request_timeout = Duration::from_secs(30);
    limits.idle_timeout = Duration::from_secs(60);
    let server = start(limits).await;
    let mut s = connect_from([127, 0, 5, 1], server.addr).await;
    s.write_all(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        .await
        .unwrap();
    let started = Instant::now();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut out))
        .await
        .expect("closed")
        .unwrap();
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out);
    println!("figure: stalled partial body: 408 and closed after {took:?} (body idle timeout 2 s)");
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("\"error\":\"request-timeout\""), "{text}");
    // The bound: closed within the body idle timeout (plus the scheduler's slack).
    assert!(took < Duration::from_millis(2_500), "{took:?}");
    assert_eq!(server.stats.body_stalled.load(Ordering::Relaxed), 1);
    server.stop().await;
}

/// A request whose body the handler read to its end leaves its HTTP/1.1 connection open for
/// the next request (only an unread or stalled body closes it).
#[tokio::test]
async fn a_request_whose_body_was_read_keeps_its_connection() {
    let server = start(small_limits()).await;
    let mut s = connect_from([127, 0, 5, 2], server.addr).await;
    let upload = b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc";
    s.write_all(upload).await.unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).await.unwrap();
    let first = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(
        !first.to_ascii_lowercase().contains("connection: close"),
        "{first}"
    );
    s.write_all(HEALTH.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out))
        .await
        .expect("answered")
        .unwrap();
    assert!(out.starts_with(b"HTTP/1.1 200"), "{out:?}");
    server.stop().await;
}

/// A request whose body the server answers without reading it (a route that takes no body)
/// closes its HTTP/1.1 connection: the server never waits for the rest of a body nobody reads.
#[tokio::test]
async fn an_answer_to_an_unread_body_closes_the_connection() {
    let server = start(small_limits()).await;
    let mut s = connect_from([127, 0, 5, 3], server.addr).await;
    // `/health` takes no body; half of the declared one is sent, then nothing.
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        .await
        .unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out))
        .await
        .expect("closed")
        .unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
    server.stop().await;
}
