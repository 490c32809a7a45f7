//! The hostile fleet: every misbehaviour ends in its named status, one bad server never
//! disturbs another (they all run at once), and memory stays bounded while they run.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod support;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::hostile::{Behaviour, Hostile};
use toolmark_crawler::guard::{Lookup, Resolve, StaticResolver};
use toolmark_crawler::mcp::{self, ClientConfig, Limits};
use toolmark_crawler::observe::{Status, Transport};

/// Short timeouts keep the slow cases quick (but long enough that 8 MiB streamed by a debug
/// build on a loaded 2-core machine reaches the size cap first); every size limit stays at its
/// real value.
fn config() -> ClientConfig {
    let mut c = ClientConfig::default();
    c.policy.allow_private = true;
    c.limits = Limits {
        request_timeout: Duration::from_secs(8),
        deadline: Duration::from_secs(25),
        ..Limits::default()
    };
    c
}

/// Peak resident memory of this process, in MiB (Linux `VmHWM`).
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_fleet_ends_in_named_statuses() {
    use Behaviour::*;
    let cases: Vec<(Behaviour, Status, &str)> = vec![
        (Good, Status::Ok, ""),
        (GzipBomb, Status::TooLarge, ""),
        (EndlessBody, Status::TooLarge, "larger than"),
        (EndlessPages, Status::Partial, "pages"),
        (RepeatingCursor, Status::Partial, "repeated"),
        (Slowloris, Status::Timeout, ""),
        (DeepJson, Status::Protocol, "deep"),
        (DuplicateKeys, Status::Protocol, "description"),
        (InvalidUtf8, Status::Protocol, "UTF-8"),
        (ManyTools, Status::TooLarge, "tools"),
        (HugeDescription, Status::TooLarge, ""),
        (RedirectLoopback, Status::Redirect, "127.0.0.1"),
        (RedirectMetadata, Status::Redirect, "169.254.169.254"),
        (SseNeverEnds, Status::Timeout, ""),
        (SseFlood, Status::Protocol, "events"),
        (HugeSessionId, Status::Protocol, ""),
        (LongSessionId, Status::Protocol, "Mcp-Session-Id"),
        (Unauthorized, Status::AuthRequired, "resource metadata"),
        (HtmlError, Status::Http(500), "500"),
        (WrongContentType, Status::Protocol, "content type"),
        (StringIdAfterPing, Status::Ok, ""),
        (ThreePages, Status::Ok, ""),
        (Stateless, Status::Ok, ""),
        (AcceptedNoAnswer, Status::Protocol, "202"),
        (CloseImmediately, Status::Connect, ""),
    ];
    let before = peak_rss_mib();
    let mut servers = Vec::new();
    for (b, _, _) in &cases {
        servers.push(Hostile::start(*b).await);
    }
    let config = Arc::new(config());
    let mut tasks = tokio::task::JoinSet::new();
    for (i, server) in servers.iter().enumerate() {
        let url = server.url();
        let config = config.clone();
        tasks.spawn(async move { (i, mcp::observe(&config, &url, "streamable-http").await) });
    }
    let mut results = HashMap::new();
    while let Some(done) = tasks.join_next().await {
        let (i, obs) = done.expect("no observation task panics");
        results.insert(i, obs);
    }
    let mut failures = Vec::new();
    for (i, (behaviour, want, needle)) in cases.iter().enumerate() {
        let obs = &results[&i];
        eprintln!(
            "{behaviour:?}: {} — {} ({:?})",
            obs.status, obs.detail, obs.elapsed
        );
        if &obs.status != want || !obs.detail.contains(needle) {
            failures.push(format!(
                "{behaviour:?}: got {} ({}), want {want} containing {needle:?}; attempts {:?}",
                obs.status,
                obs.detail,
                obs.dialled().unwrap().attempts
            ));
        }
        assert!(
            obs.elapsed < Duration::from_secs(30),
            "{behaviour:?} took {:?}",
            obs.elapsed
        );
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));

    // What the good cases recorded.
    let good = &results[&0];
    assert_eq!(good.digests().unwrap().tools, 2);
    let pages = &results[&cases.iter().position(|c| c.0 == ThreePages).unwrap()];
    assert_eq!(pages.pages.len(), 3);
    assert_eq!(pages.digests().unwrap().tools, 6);
    let modern = &results[&cases.iter().position(|c| c.0 == Stateless).unwrap()];
    assert_eq!(modern.transport(), Some(Transport::Stateless));
    assert_eq!(modern.protocol_version.as_deref(), Some("2026-07-28"));
    assert!(!modern.dialled().unwrap().session);
    let auth = &results[&cases.iter().position(|c| c.0 == Unauthorized).unwrap()];
    let challenge = auth
        .dialled()
        .unwrap()
        .auth
        .as_ref()
        .expect("challenge recorded");
    assert_eq!(challenge.http_status, 401);
    assert_eq!(challenge.scheme.as_deref(), Some("Bearer"));
    assert_eq!(challenge.scope.as_deref(), Some("tools:read"));
    assert!(
        challenge
            .resource_metadata
            .as_deref()
            .unwrap()
            .ends_with("/mcp")
    );
    let bomb = &results[&cases.iter().position(|c| c.0 == GzipBomb).unwrap()];
    assert!(
        bomb.pages.is_empty(),
        "nothing of a too-large answer is kept"
    );
    let endless = &results[&cases.iter().position(|c| c.0 == EndlessPages).unwrap()];
    assert_eq!(endless.pages.len(), toolmark_crawler::limits::MAX_PAGES);

    // Twenty-five hostile servers at once, several sending 50–64 MB: the crawler's side never
    // holds more than its caps. (The stand-ins generate their bodies while writing them.)
    let grown = peak_rss_mib().saturating_sub(before);
    assert!(grown < 200, "peak RSS grew by {grown} MiB");
}

/// A resolver that answers loopback the first time and an unroutable private address after:
/// a DNS-rebinding attacker. The guard resolves once and pins, so the second answer is never
/// asked for and the observation reaches the checked address.
struct Rebinding(AtomicUsize);

impl Resolve for Rebinding {
    fn lookup<'a>(&'a self, _host: &'a str) -> Lookup<'a> {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let ip: IpAddr = if n == 0 { "127.0.0.1" } else { "10.255.255.1" }
                .parse()
                .unwrap();
            Ok(vec![SocketAddr::new(ip, 0)])
        })
    }
}

#[tokio::test]
async fn dns_is_resolved_once_and_pinned() {
    let server = Hostile::start(Behaviour::Good).await;
    let resolver = Arc::new(Rebinding(AtomicUsize::new(0)));
    let mut c = config();
    c.resolver = resolver.clone();
    let url = format!("http://rebind.test:{}/mcp", server.port);
    let obs = mcp::observe(&c, &url, "streamable-http").await;
    assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
    assert!(
        obs.dialled().unwrap().requests >= 3,
        "several requests, one lookup"
    );
    assert_eq!(resolver.0.load(Ordering::SeqCst), 1);
    assert_eq!(
        obs.dialled().unwrap().address.unwrap().ip().to_string(),
        "127.0.0.1"
    );
}

#[tokio::test]
async fn names_resolving_to_private_addresses_are_blocked() {
    let server = Hostile::start(Behaviour::Good).await;
    let table = |ip: &str| {
        let mut m = HashMap::new();
        m.insert(
            "internal.test".to_owned(),
            vec![SocketAddr::new(ip.parse().unwrap(), 0)],
        );
        Arc::new(StaticResolver(m))
    };
    let mut strict = ClientConfig::default();
    for ip in ["10.0.0.5", "127.0.0.1", "169.254.169.254", "::1", "fd00::1"] {
        strict.resolver = table(ip);
        let obs = mcp::observe(&strict, "https://internal.test/mcp", "streamable-http").await;
        assert_eq!(obs.status, Status::BlockedAddress, "{ip}: {}", obs.detail);
        assert_eq!(obs.dialled().unwrap().requests, 0);
    }
    // Even with private targets allowed, the metadata service's range stays blocked.
    let mut lax = config();
    lax.resolver = table("169.254.169.254");
    let obs = mcp::observe(
        &lax,
        &format!("http://internal.test:{}/mcp", server.port),
        "streamable-http",
    )
    .await;
    assert_eq!(obs.status, Status::BlockedAddress);
    assert_eq!(server.requests.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn userinfo_and_bad_urls_are_refused() {
    let c = config();
    for url in [
        "http://user:pw@127.0.0.1:9/mcp",
        "ftp://127.0.0.1/",
        "not a url",
        "http://:80/",
    ] {
        let obs = mcp::observe(&c, url, "streamable-http").await;
        assert_eq!(obs.status, Status::BadUrl, "{url}: {}", obs.detail);
    }
}

#[tokio::test]
async fn refused_connection_is_connect() {
    let port = support::free_port();
    let obs = mcp::observe(
        &config(),
        &format!("http://127.0.0.1:{port}/mcp"),
        "streamable-http",
    )
    .await;
    assert_eq!(obs.status, Status::Connect, "{}", obs.detail);
}

/// An https server with a self-signed certificate (made by the `openssl` CLI, served by Python's
/// `ssl` module): the handshake must fail certificate verification and end as `tls`, so the
/// client's TLS stack is really wired and really checks certificates.
#[tokio::test]
async fn self_signed_certificate_is_tls() {
    let dir = std::env::temp_dir().join(format!("toolmark-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
        ])
        .args(["-addext", "subjectAltName=DNS:localhost"])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .output();
    let Ok(made) = made else {
        assert!(std::env::var_os("CI").is_none(), "openssl is needed");
        eprintln!("skipped: no openssl CLI");
        return;
    };
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let port = support::free_port();
    let script = format!(
        "import http.server, ssl\n\
         s = http.server.HTTPServer(('127.0.0.1', {port}), http.server.BaseHTTPRequestHandler)\n\
         c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain('{0}', '{1}')\n\
         s.socket = c.wrap_socket(s.socket, server_side=True)\n\
         s.serve_forever()\n",
        dir.join("cert.pem").display(),
        dir.join("key.pem").display(),
    );
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-c", &script]);
    let _server = support::Server::start(cmd, port);
    let mut c = config();
    c.resolver = Arc::new(StaticResolver(HashMap::from([(
        "localhost".to_owned(),
        vec!["127.0.0.1:0".parse().unwrap()],
    )])));
    let obs = mcp::observe(
        &c,
        &format!("https://localhost:{port}/mcp"),
        "streamable-http",
    )
    .await;
    assert_eq!(obs.status, Status::Tls, "{}", obs.detail);
    assert!(
        obs.detail.to_lowercase().contains("certificate"),
        "{}",
        obs.detail
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hint from the previous crawl skips the `server/discover` probe; a wrong hint costs one
/// attempt and the usual order follows. (Request counts include the `DELETE` that ends the
/// session, the Server Card's two `GET`s (neither location has one), and the second look's four
/// requests.)
#[tokio::test]
async fn transport_hints_are_tried_first() {
    let server = Hostile::start(Behaviour::Good).await;
    let c = config();
    let plain = mcp::observe(&c, &server.url(), "streamable-http").await;
    assert_eq!(plain.dialled().unwrap().attempts.len(), 2);
    assert_eq!(plain.dialled().unwrap().requests, 5 + 2 + 4);
    let hinted = mcp::observe_with_hint(
        &c,
        &server.url(),
        "streamable-http",
        Some(Transport::StreamableHttp),
    )
    .await;
    assert_eq!(hinted.status, Status::Ok);
    assert_eq!(hinted.dialled().unwrap().attempts.len(), 1);
    assert_eq!(hinted.dialled().unwrap().requests, 4 + 2 + 4);
    assert_eq!(hinted.digests(), plain.digests());
    // A stale hint (the server no longer speaks HTTP+SSE): tried once, then the usual order.
    let stale =
        mcp::observe_with_hint(&c, &server.url(), "streamable-http", Some(Transport::Sse)).await;
    assert_eq!(stale.status, Status::Ok, "{}", stale.detail);
    let tried: Vec<Transport> = stale
        .dialled()
        .unwrap()
        .attempts
        .iter()
        .map(|a| a.transport)
        .collect();
    assert_eq!(
        tried,
        [
            Transport::Sse,
            Transport::Stateless,
            Transport::StreamableHttp
        ]
    );
}

/// A JSON-RPC batch of 20,000 `ping` requests in one SSE event: the crawler answers at most
/// `MAX_REPLIES` of them in a session (counted at the server: the listing's session and the
/// second look's), ignores the rest, and still reads the answer that follows — the observation
/// and its second look complete `ok`.
#[tokio::test]
async fn a_ping_batch_gets_at_most_max_replies_answers() {
    let server = Hostile::start(Behaviour::PingBatch).await;
    let obs = mcp::observe(&config(), &server.url(), "streamable-http").await;
    assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
    assert_eq!(obs.digests().unwrap().tools, 2);
    assert_eq!(obs.second.as_ref().unwrap().status, Status::Ok);
    let replies = server.replies.load(Ordering::SeqCst);
    assert_eq!(replies, 2 * toolmark_crawler::limits::MAX_REPLIES);
    assert!(replies < support::hostile::PINGS);
}

/// An HTTP+SSE `endpoint` event naming the same origin with `user:pw@`: refused as `protocol`
/// before anything is POSTed there, and no request ever carries an `Authorization` header.
#[tokio::test]
async fn an_endpoint_with_userinfo_is_refused_and_no_credentials_are_sent() {
    let server = Hostile::start(Behaviour::UserinfoEndpoint).await;
    let obs = mcp::observe(&config(), &server.url(), "sse").await;
    assert_eq!(obs.status, Status::Protocol, "{}", obs.detail);
    assert!(obs.detail.contains("userinfo"), "{}", obs.detail);
    assert_eq!(
        obs.dialled().unwrap().attempts.len(),
        1,
        "the refusal is final: {:?}",
        obs.dialled().unwrap().attempts
    );
    assert_eq!(server.authorized.load(Ordering::SeqCst), 0);
    assert_eq!(server.requests.load(Ordering::SeqCst), 1, "only the GET");
}

/// `name.example.` (a fully qualified name) is the host `name.example`: with a resolver
/// override for `name.example` both spellings are observed `ok` with the same tool set.
#[tokio::test]
async fn a_trailing_dot_host_is_observed_like_the_host() {
    let server = Hostile::start(Behaviour::Good).await;
    let mut c = config();
    c.resolver = Arc::new(StaticResolver(HashMap::from([(
        "name.example".to_owned(),
        vec!["127.0.0.1:0".parse().unwrap()],
    )])));
    let dotted = mcp::observe(
        &c,
        &format!("http://name.example.:{}/mcp", server.port),
        "streamable-http",
    )
    .await;
    assert_eq!(dotted.status, Status::Ok, "{}", dotted.detail);
    let plain = mcp::observe(
        &c,
        &format!("http://name.example:{}/mcp", server.port),
        "streamable-http",
    )
    .await;
    assert_eq!(plain.status, Status::Ok, "{}", plain.detail);
    assert_eq!(dotted.digests(), plain.digests());
    assert_eq!(
        dotted.dialled().unwrap().address,
        plain.dialled().unwrap().address
    );
}
