//! The service under hostile load, end to end: a real `toolmark serve` process over a data
//! directory that a real `toolmark crawl` filled (one endpoint serving two 7.7 MiB pages, one
//! serving a small set), attacked on loopback as issue #11's probes did. Memory is the server
//! process's own (`/proc/<pid>/status`); the figures are printed (`figure:` lines) and recorded
//! in docs/benchmarks.md ("service under hostile load").
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{Stream, Watched};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use toolmark_standins::fleet::{Fleet, FleetSpec};
use toolmark_standins::registry::RegistryStandIn;

/// Bound on every wait (each normally takes seconds).
const PATIENCE: Duration = Duration::from_secs(120);

/// The small tool set (endpoint 1), sent back in `/check`.
const SMALL_SET: &str = r#"{"tools":[{"name":"echo","description":"Echo the input.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}"#;

/// Tools per big page and the description length that make a page about 7.7 MiB.
const BIG_PAGE_TOOLS: usize = 2_000;
const BIG_DESCRIPTION: usize = 4_000;

fn toolmark() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    for (var, _) in std::env::vars() {
        if var.starts_with("TOOLMARK_") {
            c.env_remove(var);
        }
    }
    c
}

/// One page of the big set: tools `page*N..` with long descriptions, naming the next page.
fn big_page(page: usize, last: bool) -> String {
    let description =
        "Reads the file at the given path and returns its contents. ".repeat(BIG_DESCRIPTION / 60);
    let tools: Vec<String> = (0..BIG_PAGE_TOOLS)
        .map(|i| {
            format!(
                r#"{{"name":"tool_{page}_{i}","description":"{description}","inputSchema":{{"type":"object","properties":{{"path":{{"type":"string"}}}}}}}}"#
            )
        })
        .collect();
    let next = if last {
        String::new()
    } else {
        format!(r#","nextCursor":"p{}""#, page + 1)
    };
    format!(r#"{{"tools":[{}]{next}}}"#, tools.join(","))
}

/// The tests of this file run one at a time: each measures one server process (its p99, its
/// shutdown time) and must not share the two cores with another test's flood.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The data directory every test serves: crawled once per test binary.
struct World {
    data: PathBuf,
    /// The big set's endpoint and the small one's.
    big: String,
    small: String,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("toolmark-hostile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("data");
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (fleet, registry) = runtime.block_on(async {
            let fleet = Fleet::start(FleetSpec {
                hosts: 1,
                endpoints_per_host: 2,
                latency: (Duration::ZERO, Duration::ZERO),
                seed: 1,
                tool_sets: vec![SMALL_SET.into()],
            })
            .await
            .unwrap();
            fleet.set_pages(0, vec![big_page(0, false), big_page(1, true)]);
            let registry = RegistryStandIn::start(fleet.registry_items(1))
                .await
                .unwrap();
            (fleet, registry)
        });
        let urls = fleet.urls();
        let o = toolmark()
            .args(["crawl", "--allow-private", "--no-dns", "--registry"])
            .arg(registry.url())
            .arg("--data")
            .arg(&data)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "crawl: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        runtime.block_on(async {
            fleet.shutdown(Duration::from_secs(1)).await;
            registry.shutdown().await;
        });
        World {
            data,
            big: urls[0].clone(),
            small: urls[1].clone(),
        }
    })
}

/// A running `toolmark serve` (under `nofile` as both open-file limits when given).
struct Server {
    watched: Watched,
    addr: SocketAddr,
}

impl Server {
    fn start(data: &Path, nofile: Option<u64>, extra: &[&str]) -> Server {
        let mut command = match nofile {
            Some(n) => {
                let mut c = Command::new("prlimit");
                c.arg(format!("--nofile={n}:{n}"))
                    .arg(env!("CARGO_BIN_EXE_toolmark"));
                c
            }
            None => toolmark(),
        };
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--data"])
            .arg(data)
            .args(extra);
        let mut watched = Watched::spawn(command, Stream::Stderr, "toolmark serve");
        let line = watched.wait_for("toolmark serving", Instant::now() + PATIENCE);
        let url = Watched::url_in(&line);
        let addr = url.trim_start_matches("http://").parse().unwrap();
        watched.wait_for("connections: at most", Instant::now() + PATIENCE);
        Server { watched, addr }
    }

    /// A server under both open-file limits at 1,024, so its connection cap is 512 (512
    /// descriptors reserved) and 64 per client; this test process's own limit is raised, as
    /// it holds more sockets than that.
    fn under_1024_files(data: &Path) -> Server {
        let _ = toolmark_server::raise_file_limit();
        let server = Server::start(data, Some(1024), &[]);
        assert!(
            server
                .watched
                .seen
                .iter()
                .any(|l| l.contains("connections: at most 512 (64 per client")),
            "{:#?}",
            server.watched.seen
        );
        server
    }

    fn pid(&self) -> u32 {
        self.watched.child.id()
    }

    /// (VmRSS, VmHWM) in MiB.
    fn memory(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let kib = |key: &str| -> f64 {
            status
                .lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap()
        };
        (kib("VmRSS:") / 1024.0, kib("VmHWM:") / 1024.0)
    }
}

async fn connect_from(from: [u8; 4], addr: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((from, 0)))?;
    socket.connect(addr).await
}

/// One HTTP/1.1 exchange on a new connection (`Connection: close`): status line and body.
async fn exchange(from: [u8; 4], addr: SocketAddr, request: &[u8]) -> (String, String) {
    let mut s = connect_from(from, addr).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(PATIENCE, s.read_to_end(&mut out))
        .await
        .expect("an answer in time")
        .unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or("").to_owned(),
        body.to_owned(),
    )
}

fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").into_bytes()
}

fn post(path: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    let i = ((sorted_ms.len() as f64 - 1.0) * p).round() as usize;
    sorted_ms[i]
}

/// 2,000 idle or half-open connections from one address, with both open-file limits at 1,024:
/// the server keeps 512 descriptors free and admits 64 per client, so `/health` from another
/// address answers throughout with a small p99; then a flood from 16 addresses past the total
/// cap: refused at accept, never out of descriptors, and the service answers once it ends.
#[test]
fn an_idle_flood_from_one_address_leaves_health_answering() {
    let _alone = one_at_a_time();
    let w = world();
    let mut server = Server::under_1024_files(&w.data);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let addr = server.addr;
    let (latencies, held) = runtime.block_on(async move {
        let mut flood = Vec::new();
        for i in 0..2_000 {
            let Ok(mut s) = connect_from([127, 0, 0, 1], addr).await else {
                continue;
            };
            if i % 2 == 1 {
                let _ = s.write_all(b"GET / HTTP/1.1\r\n").await;
            }
            flood.push(s);
        }
        let mut latencies = Vec::new();
        for _ in 0..200 {
            let started = Instant::now();
            let (status, body) = exchange([127, 0, 0, 2], addr, &get("/health")).await;
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            assert!(status.contains(" 200 "), "{status} {body}");
        }
        // The refusals show in /metrics.
        let (_, metrics) = exchange([127, 0, 0, 2], addr, &get("/metrics")).await;
        let refused = metric(
            &metrics,
            "toolmark_http_connections_refused_total{reason=\"per_client\"}",
        );
        assert!(refused >= 1_900, "{refused} refused");
        (latencies, flood.len())
    });
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    let (p50, p99) = (percentile(&sorted, 0.5), percentile(&sorted, 0.99));
    let (rss, hwm) = server.memory();
    println!(
        "figure: idle flood: {held} connections from 127.0.0.1, /health from 127.0.0.2: p50 {p50:.1} ms, p99 {p99:.1} ms, max {:.1} ms; server RSS {rss:.0} MiB (peak {hwm:.0})",
        sorted[sorted.len() - 1]
    );
    assert!(p99 <= 50.0, "p99 {p99:.1} ms");
    // Then 16 addresses × 64 connections: past the cap of 512, which stays below the file
    // limit: new connections are refused (closed at once) while the flood holds, accept never
    // runs out of descriptors, and `/health` answers again once the flood ends.
    let recovered = runtime.block_on(async move {
        let mut flood = Vec::new();
        for i in 0..1024u32 {
            let from = [127, 0, 10, 1 + (i / 64) as u8];
            if let Ok(s) = connect_from(from, addr).await {
                flood.push(s);
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        drop(flood);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut s = connect_from([127, 0, 0, 2], addr).await.unwrap();
            let _ = s.write_all(&get("/health")).await;
            let mut out = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
            if out.starts_with(b"HTTP/1.1 200") {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    assert!(recovered, "/health did not answer after the flood");
    server.watched.signal("-TERM");
    assert!(server.watched.exit(Instant::now() + PATIENCE).success());
    assert!(
        !server
            .watched
            .seen
            .iter()
            .any(|l| l.contains("Too many open files")),
        "{:#?}",
        server.watched.seen
    );
}

/// 200 connections each declaring a 2 MiB `/sensitive` body and stalling 40 bytes short, plus
/// one h2c connection opening 100 such streams: the body budget (64 MiB, an eighth kept for
/// small bodies) and the stream cap (32) keep the server's memory bounded, the uploads over
/// budget get 503 with `Retry-After`, and `/check` answers `same` meanwhile.
#[test]
fn stalled_uploads_and_h2_streams_keep_the_server_small() {
    let _alone = one_at_a_time();
    let w = world();
    let _ = toolmark_server::raise_file_limit();
    let server = Server::start(&w.data, None, &[]);
    let (rss0, _) = server.memory();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let addr = server.addr;
    let small = w.small.clone();
    let (refused, check) = runtime.block_on(async move {
        let head = "POST /api/v1/sensitive HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n";
        let chunk = vec![b' '; 2 * 1024 * 1024 - 40];
        let mut stalled = Vec::new();
        for i in 0..200u8 {
            let mut s = connect_from([127, 0, 1, 1 + i % 8], addr).await.unwrap();
            s.write_all(head.as_bytes()).await.unwrap();
            // A refused upload is answered (and closed) before all of it is sent.
            let _ = s.write_all(&chunk).await;
            stalled.push(s);
        }
        // One HTTP/2 connection, 100 streams, each the same stalled upload.
        let tcp = connect_from([127, 0, 2, 1], addr).await.unwrap();
        let (client, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(connection);
        let mut streams = Vec::new();
        let mut client = client;
        for _ in 0..100 {
            client = match tokio::time::timeout(Duration::from_secs(2), client.ready()).await {
                Ok(Ok(c)) => c,
                _ => break,
            };
            let request = axum::http::Request::post(format!("http://{addr}/api/v1/sensitive"))
                .header("content-type", "application/json")
                .header("content-length", "2097152")
                .body(())
                .unwrap();
            let Ok((response, mut send)) = client.send_request(request, false) else {
                break;
            };
            let _ = send.send_data(chunk.clone().into(), false);
            streams.push((response, send));
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        // What the stalled h1 uploads were told: 503s arrive at once; the rest wait.
        let mut refused = 0;
        for s in &mut stalled {
            let mut buf = [0u8; 512];
            if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(20), s.read(&mut buf)).await {
                let text = String::from_utf8_lossy(&buf[..n]);
                if text.starts_with("HTTP/1.1 503") {
                    assert!(text.to_ascii_lowercase().contains("retry-after:"), "{text}");
                    refused += 1;
                }
            }
        }
        let body = format!(r#"{{"endpoint":"{small}","tools":{}}}"#, &SMALL_SET[9..SMALL_SET.len() - 1]);
        let check = exchange([127, 0, 3, 1], addr, &post("/api/v1/check", &body)).await;
        (refused, (check, stalled, streams))
    });
    let ((status, body), _stalled, _streams) = check;
    let (rss, hwm) = server.memory();
    println!(
        "figure: stalled uploads: 200 h1 × 2 MiB − 40 B and 100 h2 streams: {refused} h1 uploads refused 503; server RSS {rss0:.0} → {rss:.0} MiB (peak {hwm:.0})"
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    assert!(body.contains(r#""match":"same""#), "{body}");
    assert!(refused >= 150, "only {refused} uploads refused");
    assert!(hwm <= 256.0, "peak RSS {hwm:.0} MiB");
}

/// `toolmark run` mid-crawl, with clients holding connections (idle keep-alive, and one upload
/// that stalls under long request timeouts so only the shutdown deadline ends it), gets
/// SIGTERM: the API drops what is left at its deadline (3 s here), the crawl commits what it
/// observed, the process exits 0, and the log verifies with one entry per observation.
#[test]
fn sigterm_mid_crawl_with_clients_connected_exits_within_the_deadline() {
    let _alone = one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (fleet, registry) = runtime.block_on(async {
        let latency = Duration::from_millis(400);
        let fleet = Fleet::start(FleetSpec {
            hosts: 1,
            endpoints_per_host: 12,
            latency: (latency, latency),
            seed: 1,
            tool_sets: vec![SMALL_SET.into()],
        })
        .await
        .unwrap();
        let registry = RegistryStandIn::start(fleet.registry_items(1))
            .await
            .unwrap();
        (fleet, registry)
    });
    let dir = std::env::temp_dir().join(format!("toolmark-hostile-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data");
    let config = dir.join("toolmark.toml");
    // The second look off: one `tools/list` per entry (compared below).
    std::fs::write(
        &config,
        format!(
            "data = \"{}\"\nlisten = \"127.0.0.1:0\"\nregistry = \"{}\"\n\
             [schedules]\ncrawl = \"0 3 29 2 *\"\nlease_seconds = 3\n\
             [crawl]\nallow_private = true\nno_dns = true\nregistry_rate = 50.0\nsecond_look = false\n\
             [http]\nshutdown_deadline_seconds = 3\nbody_idle_timeout_seconds = 120\nrequest_timeout_seconds = 120\n",
            data.display(),
            registry.url()
        ),
    )
    .unwrap();
    let mut command = toolmark();
    command.arg("run").arg("--config").arg(&config);
    let mut service = Watched::spawn(command, Stream::Stderr, "toolmark run");
    let line = service.wait_for("serving http://", Instant::now() + PATIENCE);
    let addr: SocketAddr = Watched::url_in(&line)
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    while fleet.requests().tools_list < 2 {
        assert!(Instant::now() < deadline, "the crawl did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _held = runtime.block_on(async move {
        let mut held = Vec::new();
        for i in 0..20u8 {
            let mut s = connect_from([127, 0, 4, 1 + i], addr).await.unwrap();
            s.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                .await
                .unwrap();
            held.push(s);
        }
        let mut upload = connect_from([127, 0, 4, 100], addr).await.unwrap();
        upload
            .write_all(
                b"POST /api/v1/check HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n{\"tools\":",
            )
            .await
            .unwrap();
        held.push(upload);
        tokio::time::sleep(Duration::from_millis(300)).await;
        held
    });
    let started = Instant::now();
    service.signal("-TERM");
    let status = service.exit(Instant::now() + PATIENCE);
    let took = started.elapsed();
    println!(
        "figure: SIGTERM mid-crawl with 21 clients connected: exit after {:.2} s (HTTP deadline 3 s)",
        took.as_secs_f64()
    );
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert!(
        service
            .seen
            .iter()
            .any(|l| l.contains("connections dropped")),
        "{:#?}",
        service.seen
    );
    let o = toolmark()
        .args(["log", "verify"])
        .arg(data.join("log"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let checkpoint = std::fs::read_to_string(data.join("log/public/checkpoint")).unwrap();
    let size: u64 = checkpoint.lines().nth(1).unwrap().parse().unwrap();
    assert_eq!(
        size,
        fleet.requests().tools_list,
        "one entry per observation answered"
    );
    runtime.block_on(async {
        fleet.shutdown(Duration::from_secs(1)).await;
        registry.shutdown().await;
    });
}

/// The target id of `endpoint`, from `/api/v1/servers`.
async fn target_id(addr: SocketAddr, endpoint: &str) -> String {
    let (status, body) = exchange([127, 0, 5, 1], addr, &get("/api/v1/servers?limit=200")).await;
    assert!(status.contains(" 200 "), "{status} {body}");
    let list: serde_json::Value = serde_json::from_str(&body).unwrap();
    list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["endpoint"] == endpoint)
        .and_then(|s| s["id"].as_str())
        .unwrap_or_else(|| panic!("no {endpoint} in {body}"))
        .to_owned()
}

/// What one wave against the huge set saw: the largest body of each kind read (detail,
/// desk page, document) and the clients that sent a request and never read.
struct Wave {
    sizes: [usize; 3],
    non_readers: Vec<TcpStream>,
}

/// One wave: 32 concurrent readers each of `/api/v1/servers/{id}`, `/s/{id}` and the whole
/// document, and 64 clients that ask for the document or the detail and never read.
async fn huge_set_wave(addr: SocketAddr, id: &str, detail_path: &str, document: &str) -> Wave {
    let mut readers = tokio::task::JoinSet::new();
    for i in 0..96u8 {
        let path = match i % 3 {
            0 => detail_path.to_owned(),
            1 => format!("/s/{id}"),
            _ => document.to_owned(),
        };
        readers.spawn(async move {
            let (status, body) = exchange([127, 0, 6, 1 + i % 32], addr, &get(&path)).await;
            assert!(status.contains(" 200 "), "{path}: {status}");
            (i % 3, body.len())
        });
    }
    let mut non_readers = Vec::new();
    for i in 0..64u8 {
        let path = if i % 2 == 0 { document } else { detail_path };
        let mut s = connect_from([127, 0, 7, 1 + i % 16], addr).await.unwrap();
        s.write_all(&get(path)).await.unwrap();
        non_readers.push(s);
    }
    let mut sizes = [0usize; 3];
    while let Some(done) = readers.join_next().await {
        let (kind, len) = done.unwrap();
        sizes[kind as usize] = sizes[kind as usize].max(len);
    }
    Wave { sizes, non_readers }
}

/// How many of a wave's non-readers the server has cut off: what the kernel buffered is
/// drained, and a cut-off connection then ends (or resets) within 5 s.
async fn cut_off(non_readers: Vec<TcpStream>) -> usize {
    let mut cut = 0;
    for mut s in non_readers {
        let mut sink = vec![0u8; 1 << 20];
        let ended = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match s.read(&mut sink).await {
                    Ok(0) | Err(_) => return true,
                    Ok(_) => {}
                }
            }
        })
        .await
        .unwrap_or(false);
        cut += usize::from(ended);
    }
    cut
}

/// A target whose current set is two 7.7 MiB pages (4,000 tools, 16 MB), read by two waves of
/// [`huge_set_wave`]. The set is parsed once (bounded cache), the detail answers stay small (a
/// count and a link), the document is streamed, and the non-reading clients are cut off at
/// the write timeout (3 s here). Memory stays bounded: the peak under the wave, what is left
/// after the cut-off (the allocator keeps some freed pages in its idle threads' caches, so it
/// is bounded, not back to the start), and a second wave rises no more than the first did and
/// settles where it did, within the allocator's noise: what the first wave's clients held was
/// freed.
#[test]
fn readers_of_a_huge_tool_set_keep_the_server_small() {
    let _alone = one_at_a_time();
    let w = world();
    let _ = toolmark_server::raise_file_limit();
    let server = Server::start(&w.data, None, &["--write-timeout", "3"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let addr = server.addr;
    let big = w.big.clone();
    let id = runtime.block_on(target_id(addr, &big));
    let (rss_start, _) = server.memory();
    // The first reader parses the set (once: the cache keeps what pages need); the baseline is
    // the server with its cache warm.
    let detail_path = format!("/api/v1/servers/{id}");
    let (status, first) = runtime.block_on(exchange([127, 0, 5, 1], addr, &get(&detail_path)));
    assert!(status.contains(" 200 "), "{status}");
    let (rss0, hwm0) = server.memory();
    let parsed: serde_json::Value = serde_json::from_str(&first).unwrap();
    let document = parsed["document"]["url"].as_str().unwrap().to_owned();
    let document = document[document.find("/api/").unwrap()..].to_owned();
    // A wave, then its aftermath once the write timeout has cut the non-readers off (5 s after
    // the wave began, plus 2 s).
    let wave = |runtime: &tokio::runtime::Runtime| {
        let started = Instant::now();
        let wave = runtime.block_on(huge_set_wave(addr, &id, &detail_path, &document));
        let (rss_loaded, hwm) = server.memory();
        std::thread::sleep(
            Duration::from_secs(5).saturating_sub(started.elapsed()) + Duration::from_secs(2),
        );
        let rss_after = server.memory().0;
        let cut = runtime.block_on(cut_off(wave.non_readers));
        (wave.sizes, rss_loaded, hwm, rss_after, cut)
    };
    let (detail, rss_loaded, hwm, rss_after, cut) = wave(&runtime);
    // The second wave's own peak: the kernel's high-water mark is reset to the RSS now.
    std::fs::write(format!("/proc/{}/clear_refs", server.pid()), "5").unwrap();
    let (detail2, rss_loaded2, hwm2, rss_after2, cut2) = wave(&runtime);
    println!(
        "figure: huge tool set (16 MB, 4,000 tools): detail {} B, desk page {} B, document {} B; server RSS {rss_start:.0} MiB, {rss0:.0} MiB after the one parse (peak {hwm0:.0}); 96 readers + 64 non-readers: {rss_loaded:.0} MiB (peak {hwm:.0}), {rss_after:.0} MiB after the write timeout, {cut}/64 non-readers cut off; a second wave: {rss_loaded2:.0} MiB (peak {hwm2:.0}), {rss_after2:.0} MiB after, {cut2}/64 cut off",
        detail[0], detail[1], detail[2]
    );
    assert!(first.len() < 1024 * 1024, "detail of {} bytes", first.len());
    assert_eq!(detail, detail2);
    assert!(
        detail[0] < 1024 * 1024 && detail[1] < 1024 * 1024,
        "{detail:?}"
    );
    assert!(detail[2] > 16_000_000, "{detail:?}");
    assert!(hwm <= 300.0, "peak RSS {hwm:.0} MiB");
    // What the allocator keeps of a wave in its threads' caches: 56–87 MiB seen; the pages
    // carry the target's rule-set scan too (issue #28: its matches and legs parsed per request),
    // so the bound is 100 MiB. A leak of the stalled documents would be hundreds.
    assert!(
        rss_after <= rss0 + 100.0,
        "RSS {rss_after:.0} MiB after, {rss0:.0} before"
    );
    // The second wave costs what the first did: its rise above the RSS it started from is no
    // more than the first's, and what it leaves is within the allocator's run-to-run noise (up
    // to 27 MiB seen here) of what the first left. Its peak is neither bounded as the first's
    // is nor compared with it: it starts from the first's leftovers (250 MiB, not 172), and
    // where freed pages sit in the threads' arenas put it 14–64 MiB above the first's peak run
    // to run (up to 312 MiB), while its rise stayed below the first's. What this sees is a
    // leak of a good share of what a wave holds (64 document streams' buffers, 64 pages, the
    // 160 connections' buffers); a leak of a few KiB per connection is below that noise.
    assert!(
        hwm2 - rss_after <= hwm - rss0 + 24.0 && rss_after2 <= rss_after + 32.0,
        "a second wave rose from {rss_after:.0} MiB to a peak of {hwm2:.0} and left {rss_after2:.0}; the first rose from {rss0:.0} to {hwm:.0} and left {rss_after:.0}"
    );
    // The document readers' connections were written past the kernel's buffers and stalled.
    assert!(cut >= 32, "only {cut} non-readers were cut off");
    assert!(
        cut2 >= 32,
        "only {cut2} non-readers were cut off in a second wave"
    );
}

/// The request-level rows over a real socket: an oversized `/check` body is a JSON 413,
/// loose proof query strings are 400, repeated member names are 400, and the 429 states the
/// rate the server was started with.
#[test]
fn hostile_requests_get_json_errors_over_the_wire() {
    let _alone = one_at_a_time();
    let w = world();
    let server = Server::start(&w.data, None, &["--check-rate", "6"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let addr = server.addr;
    runtime.block_on(async move {
        let huge = format!(r#"{{"tools":"{}"}}"#, "a".repeat(2 * 1024 * 1024));
        let (status, body) = exchange([127, 0, 8, 1], addr, &post("/api/v1/check", &huge)).await;
        assert!(status.contains(" 413 "), "{status}");
        assert!(body.contains(r#""error":"payload-too-large""#), "{body}");
        for query in ["index=%2B7", "index=0&index=1", "index=0001"] {
            let (status, body) = exchange(
                [127, 0, 8, 2],
                addr,
                &get(&format!("/api/v1/proof/inclusion?{query}")),
            )
            .await;
            assert!(status.contains(" 400 "), "{query}: {status} {body}");
            assert!(body.contains(r#""error":"bad-request""#), "{query}: {body}");
        }
        let twice =
            r#"{"tools":[{"name":"delete_all","name":"read_file"}],"patterns":["delete_*"]}"#;
        let (status, body) =
            exchange([127, 0, 8, 3], addr, &post("/api/v1/sensitive", twice)).await;
        assert!(status.contains(" 400 "), "{status} {body}");
        // A bucket of 50 for 6 a minute (8⅓ minutes of the rate); the 51st is refused, naming
        // the configured rate.
        let check = format!(r#"{{"endpoint":"{}","tools":[]}}"#, "https://x.example/mcp");
        let mut last = (String::new(), String::new());
        for _ in 0..51 {
            last = exchange([127, 0, 8, 4], addr, &post("/api/v1/check", &check)).await;
        }
        assert!(last.0.contains(" 429 "), "{last:?}");
        assert!(last.1.contains('6') && !last.1.contains("60 "), "{last:?}");
    });
}

/// The value of a counter line of `/metrics` (`name{labels} value`).
fn metric(metrics: &str, line_start: &str) -> u64 {
    metrics
        .lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {line_start} in {metrics}"))
}

/// What each connection of a [`flood`] sends before it waits.
#[derive(Clone, Copy, Debug)]
enum Flood {
    /// Only `GET / HTTP/1.1\r\n`: half a request head.
    HalfHead,
    /// One whole `GET /health` over HTTP/1.1 (keep-alive), its answer read; then nothing.
    OneRequestHttp1,
    /// One whole `GET /health` over HTTP/2 (prior knowledge), its answer read; then nothing.
    OneRequestHttp2,
}

/// A connection of a [`flood`] kept open by the test (a socket, or an HTTP/2 client with its
/// connection task): only held, never read again.
type Held = Box<dyn std::any::Any + Send>;

/// What a [`flood`] measured: `/health` probe latencies (ms), connections opened, how long
/// opening them took, and the server's `evicted` and `total` refusal counters after it.
struct Flooded {
    latencies: Vec<f64>,
    connections: usize,
    took: Duration,
    evicted: u64,
    refused: u64,
}

/// One flood connection from `from`: it sends what `kind` says (reading the answer of a
/// whole request) and is held open.
async fn flood_connection(kind: Flood, from: [u8; 4], addr: SocketAddr) -> Held {
    let mut s = connect_from(from, addr).await.unwrap();
    match kind {
        Flood::HalfHead => {
            s.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
            Box::new(s)
        }
        Flood::OneRequestHttp1 => {
            s.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                .await
                .unwrap();
            // The answer: its head, then `Content-Length` bytes of body.
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = tokio::time::timeout(PATIENCE, s.read(&mut buf))
                    .await
                    .expect("an answer in time")
                    .unwrap();
                assert!(n > 0, "closed before answering");
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got);
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse().ok())?
                        })
                        .expect("a Content-Length");
                    if body.len() >= length {
                        break;
                    }
                }
            }
            Box::new(s)
        }
        Flood::OneRequestHttp2 => {
            let (client, connection) = h2::client::handshake(s).await.unwrap();
            let task = tokio::spawn(async move {
                let _ = connection.await;
            });
            let mut client = client.ready().await.unwrap();
            let request = axum::http::Request::get(format!("http://{addr}/health"))
                .body(())
                .unwrap();
            let (response, _) = client.send_request(request, true).unwrap();
            let response = tokio::time::timeout(PATIENCE, response)
                .await
                .expect("an answer in time")
                .unwrap();
            assert_eq!(response.status(), 200);
            let mut body = response.into_body();
            while let Some(piece) = body.data().await {
                let piece = piece.unwrap();
                let _ = body.flow_control().release_capacity(piece.len());
            }
            Box::new((client, task))
        }
    }
}

/// 1,100 connections from 1,100 loopback addresses (127.3.x.y), each sending what `kind` says
/// and then holding the connection, spread over about 3 s; meanwhile, and ten times after,
/// `/health` from 127.0.0.2 every 50 ms, each answered 200 within 2 s (the issue's bound).
fn flood(server: &Server, kind: Flood) -> Flooded {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let addr = server.addr;
    runtime.block_on(async move {
        let flooding = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let probe = {
            let flooding = flooding.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                // Throughout the flood, and a little after it.
                let mut after = 0;
                while after < 10 {
                    if !flooding.load(std::sync::atomic::Ordering::Relaxed) {
                        after += 1;
                    }
                    let started = Instant::now();
                    let answer = tokio::time::timeout(
                        Duration::from_secs(2),
                        exchange([127, 0, 0, 2], addr, &get("/health")),
                    )
                    .await;
                    let took = started.elapsed();
                    let (status, body) = answer.unwrap_or_else(|_| {
                        panic!(
                            "/health unanswered within 2 s after {} probes",
                            latencies.len()
                        )
                    });
                    assert!(
                        status.contains(" 200 "),
                        "probe {}: {status:?} {body}",
                        latencies.len()
                    );
                    latencies.push(took.as_secs_f64() * 1000.0);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                latencies
            })
        };
        let started = Instant::now();
        let mut held = Vec::new();
        for i in 0..1_100u32 {
            let from = [127, 3, (i / 250) as u8, (i % 250 + 1) as u8];
            held.push(flood_connection(kind, from, addr).await);
            // Spread over about 3 s, so the probes run while the cap is being reached and
            // passed.
            if i % 10 == 9 {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        let took = started.elapsed();
        flooding.store(false, std::sync::atomic::Ordering::Relaxed);
        let latencies = probe.await.unwrap();
        let (_, metrics) = exchange([127, 0, 0, 2], addr, &get("/metrics")).await;
        let evicted = metric(
            &metrics,
            "toolmark_http_connections_closed_total{reason=\"evicted\"}",
        );
        let refused = metric(
            &metrics,
            "toolmark_http_connections_refused_total{reason=\"total\"}",
        );
        Flooded {
            latencies,
            connections: held.len(),
            took,
            evicted,
            refused,
        }
    })
}

/// Prints a [`flood`]'s figure, and asserts what every flood of 1,100 over a cap of 512 must
/// show: every connection past the cap made room by evicting one (the probes' own
/// connections may have evicted some too), none was refused; then stops the server.
fn flood_figure_and_bounds(mut server: Server, kind: Flood, f: &Flooded) {
    let mut sorted = f.latencies.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "figure: {kind:?} flood: {} connections from {} addresses in {:.1} s, cap 512: {} evicted, {} refused; /health from 127.0.0.2 ({} probes): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        f.connections,
        f.connections,
        f.took.as_secs_f64(),
        f.evicted,
        f.refused,
        sorted.len(),
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.99),
        sorted[sorted.len() - 1]
    );
    assert!(f.evicted >= 1_100 - 512, "{} evicted", f.evicted);
    assert_eq!(f.refused, 0);
    server.watched.signal("-TERM");
    assert!(server.watched.exit(Instant::now() + PATIENCE).success());
}

/// Issue #25: under both open-file limits at 1,024 (a cap of 512 connections), 1,100
/// connections from 1,100 loopback addresses that each send only `GET / HTTP/1.1\r\n` do not
/// lock other clients out until the header timeout: at the cap the connection idle longest
/// that is not being served (here the oldest half-sent head) is closed to admit the new one
/// (counted as `evicted`), and `/health` from another address is answered within 2 s
/// throughout (the issue's bound).
#[test]
fn half_requests_from_1100_addresses_do_not_lock_other_clients_out() {
    let _alone = one_at_a_time();
    let server = Server::under_1024_files(&world().data);
    let flooded = flood(&server, Flood::HalfHead);
    flood_figure_and_bounds(server, Flood::HalfHead, &flooded);
}

/// Issue #25's review: 1,100 connections from 1,100 addresses that each send one whole
/// request over HTTP/1.1, read its answer and then idle on keep-alive (10 s) cannot fill the
/// cap of 512 either: an idle connection is evictable like a half-sent head (before, a
/// connection that had sent one request was never evicted, so the cap filled and other
/// clients were refused until keep-alive ended).
#[test]
fn one_request_then_idle_from_1100_addresses_does_not_lock_other_clients_out() {
    let _alone = one_at_a_time();
    let server = Server::under_1024_files(&world().data);
    let flooded = flood(&server, Flood::OneRequestHttp1);
    flood_figure_and_bounds(server, Flood::OneRequestHttp1, &flooded);
}

/// The same over HTTP/2, whose idle connections are kept for the idle timeout (60 s): 1,100
/// connections, one `/health` stream each, then idle.
#[test]
fn one_h2_request_then_idle_from_1100_addresses_does_not_lock_other_clients_out() {
    let _alone = one_at_a_time();
    let server = Server::under_1024_files(&world().data);
    let flooded = flood(&server, Flood::OneRequestHttp2);
    flood_figure_and_bounds(server, Flood::OneRequestHttp2, &flooded);
}

/// Issue #25: a `/check` head declaring a 1,000-byte body, 100 bytes of it, then silence, is
/// answered 408 and its connection closed within the body idle timeout (10 s, the default;
/// before, the connection stayed open past 40 s).
#[test]
fn a_stalled_partial_body_is_answered_408_and_closed_within_the_body_idle_timeout() {
    let _alone = one_at_a_time();
    let w = world();
    let server = Server::start(&w.data, None, &[]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let addr = server.addr;
    let (took, answer) = runtime.block_on(async move {
        let mut s = connect_from([127, 0, 9, 1], addr).await.unwrap();
        let head = "POST /api/v1/check HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
        s.write_all(head.as_bytes()).await.unwrap();
        s.write_all(&[b' '; 100]).await.unwrap();
        let started = Instant::now();
        let mut out = Vec::new();
        tokio::time::timeout(PATIENCE, s.read_to_end(&mut out))
            .await
            .expect("the connection is closed")
            .unwrap();
        (started.elapsed(), String::from_utf8_lossy(&out).into_owned())
    });
    println!(
        "figure: stalled partial body: answered {:?} and closed after {:.2} s (body idle timeout 10 s)",
        answer.lines().next().unwrap_or(""),
        took.as_secs_f64()
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains(r#""error":"request-timeout""#), "{answer}");
    // The issue's bound: within the body idle timeout (plus the scheduler's slack).
    assert!(took < Duration::from_millis(10_500), "{took:?}");
}
