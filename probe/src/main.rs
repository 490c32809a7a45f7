//! `toolmark-probe OUT UID -- PROGRAM [ARG…]`: the sandbox's pid 1 (see the library's docs).
//! It never writes to stdout or stderr: they are the package's (its MCP channel); its own
//! failures go to `OUT/probe.log`, and a probe that cannot set up exits 125.
#![allow(
    clippy::disallowed_methods,
    reason = "the probe starts the package's program: it is the sandbox's pid 1"
)]

use std::collections::HashMap;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use toolmark_probe::raw::{Dialogue, PROGRESS_EVERY, SILENCE};
use toolmark_probe::smtp::{self, Reply};
use toolmark_probe::{
    LINGER, MAX_NAMES, MAX_RECIPIENTS, MAX_RECORDS, MAX_TRAP_CONNECTIONS, MAX_TRAP_PAYLOAD,
    MAX_TRAP_READ, RAW_TRAP_PORTS, SERVICE_TRAPS, TRAP_TIMEOUT, dns, http, record,
};
use toolmark_standins::tls::StandInCa;

/// The exit status of a probe that could not set up (not the package's).
const SETUP_FAILED: u8 = 125;

/// The exit status when the package's program could not be started.
const LAUNCH_FAILED: u8 = 127;

/// Writes records, at most [`MAX_RECORDS`].
struct Recorder {
    file: Mutex<std::fs::File>,
    written: AtomicUsize,
}

impl Recorder {
    /// Write `v` whatever the count (the records that must be there: the launch's outcome).
    fn force(&self, v: Value) {
        if let Ok(mut f) = self.file.lock() {
            let _ = writeln!(f, "{v}");
        }
    }

    fn write(&self, v: Value) {
        let n = self.written.fetch_add(1, Ordering::SeqCst);
        let v = match n {
            _ if n < MAX_RECORDS => v,
            _ if n == MAX_RECORDS => record::cut(),
            _ => return,
        };
        self.force(v);
    }
}

/// What every trap shares.
struct Traps {
    records: Recorder,
    ca: StandInCa,
    /// Names the DNS sink has answered, in order.
    names: Mutex<HashMap<String, Ipv4Addr>>,
    /// TLS configurations made, by name.
    tls: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
    /// Connections taken so far (the next one's id).
    taken: AtomicU64,
    /// Connections open now.
    open: AtomicUsize,
}

fn main() {
    // `exit`: pid 1's end ends the sandbox and every orphan still in it.
    std::process::exit(i32::from(start()))
}

fn start() -> u8 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (out, uid, program) = match args.as_slice() {
        [out, uid, dashes, program @ ..] if dashes == "--" && !program.is_empty() => {
            match uid.parse::<u32>() {
                Ok(uid) if uid != 0 => (PathBuf::from(out), uid, program.to_vec()),
                _ => return SETUP_FAILED,
            }
        }
        _ => return SETUP_FAILED,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return failed(&out, &format!("runtime: {e}")),
    };
    let code = runtime.block_on(run(&out, uid, &program));
    // Not a drop: dropping a runtime waits for its blocking tasks, and the reaper of the
    // orphans left after LINGER waits as long as any lives.
    runtime.shutdown_background();
    code
}

fn failed(out: &Path, why: &str) -> u8 {
    let _ = std::fs::write(out.join("probe.log"), format!("{why}\n"));
    SETUP_FAILED
}

/// The run: its exit status. Every record is written (unbuffered) when it returns.
async fn run(out: &Path, uid: u32, program: &[String]) -> u8 {
    let setup = async {
        let ca = StandInCa::new("toolmark trap CA").map_err(|e| format!("trap CA: {e}"))?;
        write_public(&out.join("ca.pem"), ca.certificate_pem().as_bytes())
            .map_err(|e| format!("ca.pem: {e}"))?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o644)
            .open(out.join("traps.jsonl"))
            .map_err(|e| format!("traps.jsonl: {e}"))?;
        let traps = Arc::new(Traps {
            records: Recorder {
                file: Mutex::new(file),
                written: AtomicUsize::new(0),
            },
            ca,
            names: Mutex::new(HashMap::new()),
            tls: Mutex::new(HashMap::new()),
            taken: AtomicU64::new(0),
            open: AtomicUsize::new(0),
        });
        let udp = UdpSocket::bind("127.0.0.1:53")
            .await
            .map_err(|e| format!("DNS sink: {e}"))?;
        let mut listeners = Vec::new();
        let raw = RAW_TRAP_PORTS.iter().map(|p| (*p, "tcp"));
        for (port, kind) in SERVICE_TRAPS.into_iter().chain(raw) {
            let l = TcpListener::bind(("0.0.0.0", port))
                .await
                .map_err(|e| format!("trap on {port}: {e}"))?;
            listeners.push((l, kind));
        }
        Ok::<_, String>((traps, udp, listeners))
    };
    let (traps, udp, listeners) = match setup.await {
        Ok(s) => s,
        Err(why) => return failed(out, &why),
    };
    tokio::spawn(sink(udp, traps.clone()));
    for (listener, kind) in listeners {
        tokio::spawn(accept(listener, kind, traps.clone()));
    }
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(&program[0]);
    command.args(&program[1..]).uid(uid).gid(uid);
    let child = match command.spawn() {
        Ok(c) => c.id(),
        Err(e) => {
            // The package's program would not start (a `#!` naming nothing, an entry an
            // install script removed): its outcome, not the probe's.
            let why = format!("starting {}: {e}", program[0]);
            traps.records.force(record::launch_failed(&why));
            return LAUNCH_FAILED;
        }
    };
    traps.records.force(record::launch(child));
    // As pid 1 the probe reaps every process that ends (orphans are re-parented to it, and a
    // zombie would count against the process limit); the program's own status ends the run.
    let reaped = tokio::task::spawn_blocking(move || {
        loop {
            match rustix::process::wait(rustix::process::WaitOptions::empty()) {
                Ok(Some((pid, status))) if pid.as_raw_nonzero().get().unsigned_abs() == child => {
                    return Ok(status);
                }
                Ok(_) => continue,
                Err(e) => return Err(e),
            }
        }
    })
    .await;
    let code = match reaped {
        Ok(Ok(s)) => match (s.exit_status(), s.terminating_signal()) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            _ => 1,
        },
        Ok(Err(e)) => return failed(out, &format!("waiting for the program: {e}")),
        Err(e) => return failed(out, &format!("waiting for the program: {e}")),
    };
    traps.records.force(record::exit(code));
    // Orphans the program left (re-parented to pid 1) run on for at most LINGER, reaped as
    // they end: a detached child that acts a moment after its parent exited is seen. `wait`
    // fails (ECHILD) once no process is left. Past LINGER the blocking `wait` is abandoned (the
    // caller exits the process; pid 1's exit ends the sandbox and every orphan in it).
    let _ = tokio::time::timeout(
        LINGER,
        tokio::task::spawn_blocking(|| {
            while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::empty()) {}
        }),
    )
    .await;
    code as u8
}

/// A file anyone inside may read and only the probe write.
fn write_public(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o644)
        .open(path)?;
    f.write_all(bytes)
}

/// The DNS sink: every question recorded, `A` answered with the name's own address.
async fn sink(udp: UdpSocket, traps: Arc<Traps>) {
    let mut buf = vec![0u8; 4096];
    loop {
        let Ok((n, from)) = udp.recv_from(&mut buf).await else {
            continue;
        };
        let Some(q) = dns::parse(&buf[..n]) else {
            traps.records.write(record::dns_unreadable(n));
            continue;
        };
        let addr = {
            let Ok(mut names) = traps.names.lock() else {
                continue;
            };
            let next = names.len();
            match names.get(&q.name) {
                Some(a) => Some(*a),
                None if next < MAX_NAMES => {
                    let a = dns::address(next);
                    names.insert(q.name.clone(), a);
                    Some(a)
                }
                None => None,
            }
        };
        traps.records.write(record::dns(&q.name, q.qtype, addr));
        let _ = udp.send_to(&dns::answer(&q, addr), from).await;
    }
}

async fn accept(listener: TcpListener, kind: &'static str, traps: Arc<Traps>) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let local = tcp
            .local_addr()
            .unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
        if traps.open.fetch_add(1, Ordering::SeqCst) >= MAX_TRAP_CONNECTIONS {
            traps.open.fetch_sub(1, Ordering::SeqCst);
            traps.records.write(record::refused(local));
            continue;
        }
        let id = traps.taken.fetch_add(1, Ordering::SeqCst);
        traps.records.write(record::open(id, local));
        let traps = traps.clone();
        tokio::spawn(async move {
            let mut seen = Seen {
                id,
                local,
                ..Seen::default()
            };
            // At its time limit the connection is cut; what it sent so far is kept.
            let _ = tokio::time::timeout(TRAP_TIMEOUT, serve(tcp, kind, &traps, &mut seen)).await;
            traps.open.fetch_sub(1, Ordering::SeqCst);
            traps.records.write(record::connection(
                id,
                kind,
                local,
                seen.sni.as_deref(),
                &seen.recipients,
                seen.bytes,
                &seen.payload,
                seen.complete,
            ));
        });
    }
}

/// What a trap saw of one connection.
struct Seen {
    /// The connection's id (its `open` record's).
    id: u64,
    /// The address it was made to.
    local: SocketAddr,
    sni: Option<String>,
    recipients: Vec<String>,
    bytes: usize,
    payload: Vec<u8>,
    complete: bool,
    /// `bytes` and kept payload bytes as of the last `progress` record.
    recorded: (usize, usize),
}

impl Default for Seen {
    fn default() -> Self {
        Seen {
            id: 0,
            local: SocketAddr::from(([0, 0, 0, 0], 0)),
            sni: None,
            recipients: Vec::new(),
            bytes: 0,
            payload: Vec::new(),
            complete: false,
            recorded: (0, 0),
        }
    }
}

impl Seen {
    fn keep(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len();
        let room = MAX_TRAP_PAYLOAD.saturating_sub(self.payload.len());
        self.payload
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// A `progress` record of what came since the last one (none when nothing came).
    fn progress(&mut self, kind: &str, traps: &Traps) {
        if self.bytes == self.recorded.0 {
            return;
        }
        traps.records.write(record::progress(
            self.id,
            kind,
            self.local,
            self.sni.as_deref(),
            self.bytes,
            &self.payload[self.recorded.1..],
        ));
        self.recorded = (self.bytes, self.payload.len());
    }
}

async fn serve(tcp: TcpStream, kind: &str, traps: &Traps, seen: &mut Seen) {
    match kind {
        "http" => http_request(tcp, seen).await,
        "https" => {
            if let Some(stream) = tls(tcp, traps, seen).await {
                http_request(stream, seen).await
            }
        }
        "smtps" => {
            if let Some(stream) = tls(tcp, traps, seen).await {
                mail(stream, seen).await
            }
        }
        "tcp" => {
            // A client that starts with a TLS handshake (its first byte a handshake record's)
            // gets TLS with the run's CA: what it sends inside is the payload. One that says
            // nothing for SILENCE waits for a greeting: plain.
            let mut first = [0u8; 1];
            let peeked = tokio::time::timeout(SILENCE, tcp.peek(&mut first)).await;
            let dialogue = Dialogue::of(seen.local.port());
            if matches!(peeked, Ok(Ok(1))) && first[0] == 0x16 {
                if let Some(stream) = tls(tcp, traps, seen).await {
                    raw(stream, dialogue, traps, seen).await
                }
            } else {
                raw(tcp, dialogue, traps, seen).await
            }
        }
        _ => mail(tcp, seen).await,
    }
}

/// TLS accepted on `tcp` with a certificate from the run's CA for the name the client asks
/// (recorded), `localhost` when it asks none.
async fn tls(
    tcp: TcpStream,
    traps: &Traps,
    seen: &mut Seen,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    let acceptor = tokio_rustls::LazyConfigAcceptor::new(rustls::server::Acceptor::default(), tcp);
    let start = acceptor.await.ok()?;
    seen.sni = start.client_hello().server_name().map(str::to_owned);
    let config = tls_for(traps, seen.sni.as_deref().unwrap_or("localhost"))?;
    start.into_stream(config).await.ok()
}

fn tls_for(traps: &Traps, name: &str) -> Option<Arc<rustls::ServerConfig>> {
    let mut made = traps.tls.lock().ok()?;
    if let Some(c) = made.get(name) {
        return Some(c.clone());
    }
    if made.len() >= MAX_NAMES {
        return None;
    }
    let config = traps.ca.server_config(name).ok()?;
    made.insert(name.to_owned(), config.clone());
    Some(config)
}

/// An HTTP/1.1 request read whole ([`http::request_ended`]), answered `200 {}`; whatever the
/// client sends after the answer is read too (within the limits).
async fn http_request<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, seen: &mut Seen) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut all: Vec<u8> = Vec::new();
    loop {
        let Ok(n) = s.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        seen.keep(&buf[..n]);
        all.extend_from_slice(&buf[..n]);
        if seen.bytes > MAX_TRAP_READ {
            return;
        }
        match http::request_ended(&all) {
            Some(true) => break,
            Some(false) => {}
            // Not a request this trap reads to its end: read what comes, unanswered.
            None => {}
        }
    }
    seen.complete = true;
    let _ = s.write_all(ANSWER).await;
    let _ = s.flush().await;
    // Anything more (a second request, a body sent after all) is still the package's.
    while seen.bytes <= MAX_TRAP_READ {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                seen.keep(&buf[..n]);
                if n > 0 {
                    seen.complete = false;
                }
            }
        }
    }
    let _ = s.shutdown().await;
}

/// What the HTTP trap answers every request.
const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";

/// Raw TCP: whatever the client sends, to its end (it closes) within the trap's limits. An HTTP
/// request is answered as the HTTP trap answers it: a client waiting for the answer would
/// otherwise wait out the trap's time. A port with a [`Dialogue`] greets a client silent for
/// [`SILENCE`] and answers its command lines. What came so far is recorded (`progress`) after
/// each silence and at least every [`PROGRESS_EVERY`]: a connection held open until the run
/// ends keeps its payload.
async fn raw<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    dialogue: Option<Dialogue>,
    traps: &Traps,
    seen: &mut Seen,
) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut answered = false;
    let mut greeted = false;
    // Command lines are read from the kept payload: how far they were read.
    let mut lines_read = 0;
    let mut recorded_at = tokio::time::Instant::now();
    loop {
        let n = match tokio::time::timeout(SILENCE, s.read(&mut buf)).await {
            Err(_) => {
                if !greeted && seen.bytes == 0 {
                    if let Some(d) = dialogue {
                        let _ = s.write_all(d.greeting()).await;
                        let _ = s.flush().await;
                    }
                }
                greeted = true;
                seen.progress("tcp", traps);
                recorded_at = tokio::time::Instant::now();
                continue;
            }
            Ok(Ok(0)) => {
                seen.complete = true;
                break;
            }
            Ok(Err(_)) => break,
            Ok(Ok(n)) => n,
        };
        seen.keep(&buf[..n]);
        if seen.bytes > MAX_TRAP_READ {
            break;
        }
        if recorded_at.elapsed() >= PROGRESS_EVERY {
            seen.progress("tcp", traps);
            recorded_at = tokio::time::Instant::now();
        }
        if http::is_request(&seen.payload) {
            if !answered && http::request_ended(&seen.payload) == Some(true) {
                answered = true;
                let _ = s.write_all(ANSWER).await;
                let _ = s.flush().await;
            }
            continue;
        }
        let Some(d) = dialogue else {
            continue;
        };
        while let Some(end) = seen.payload[lines_read..].iter().position(|b| *b == b'\n') {
            let line = &seen.payload[lines_read..lines_read + end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let answer = d.reply(line);
            lines_read += end + 1;
            if let Some(answer) = answer {
                let _ = s.write_all(&answer).await;
                let _ = s.flush().await;
            }
        }
    }
    let _ = s.shutdown().await;
}

/// An SMTP conversation to its end: recipients and the message kept.
async fn mail<S: AsyncRead + AsyncWrite + Unpin>(stream: S, seen: &mut Seen) {
    let (read, mut write) = tokio::io::split(stream);
    let mut lines = BufReader::new(read.take(MAX_TRAP_READ as u64));
    if write.write_all(smtp::GREETING.as_bytes()).await.is_err() {
        return;
    }
    let mut line = Vec::new();
    let mut data = false;
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        seen.keep(&line);
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if data {
            if text == "." {
                data = false;
                // A message taken: a client that closes now has said what it had to.
                seen.complete = true;
                let _ = write.write_all(b"250 OK: queued\r\n").await;
            }
            continue;
        }
        let answer = match smtp::reply(text) {
            Reply::Line(l) => l,
            Reply::Recipient(r) => {
                if seen.recipients.len() < MAX_RECIPIENTS {
                    seen.recipients.push(r.chars().take(256).collect());
                }
                "250 OK\r\n"
            }
            Reply::Data => {
                data = true;
                seen.complete = false;
                "354 End data with <CR><LF>.<CR><LF>\r\n"
            }
            Reply::Quit => {
                seen.complete = true;
                let _ = write.write_all(b"221 Bye\r\n").await;
                return;
            }
        };
        if write.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}
