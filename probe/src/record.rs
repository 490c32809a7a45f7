//! The records the probe writes to `OUT/traps.jsonl`, one JSON object a line (read by the
//! observer, `toolmark_sandbox::traps`):
//!
//! - `{"t": µs, "kind": "dns", "name": "exfil.example", "qtype": 1, "answer": "127.128.0.1"}`
//!   (`answer` null when none was given); `{"t": µs, "kind": "dns-unreadable", "bytes": n}` for
//!   a datagram that is not a query the sink reads (unanswered);
//! - `{"t": µs, "kind": "http"|"https"|"smtp"|"smtps"|"tcp", "local": "127.128.0.1:443", "sni": "…"|null,
//!   "recipients": ["…"], "bytes": n, "payload": "<base64 of the first MAX_TRAP_PAYLOAD bytes>",
//!   "complete": bool}` — `complete` false when the connection was cut (by the trap's time or
//!   size limit) before its request ended;
//! - `{"t": µs, "kind": "open", "id": n, "local": "127.128.0.1:443"}`: a trap took connection
//!   `n`; its `http`/`https`/`smtp` record (same `id`) follows when it ends — an `open` without
//!   one is a connection the run ended (what it carried is unknown, but for a raw one's
//!   `progress`);
//! - `{"t": µs, "kind": "progress", "id": n, "trap": "tcp", "local": "…", "sni": "…"|null,
//!   "bytes": n, "chunk": "<base64>"}`: what raw trap connection `n` has sent so far, written
//!   after each [`crate::raw::SILENCE`] and at least every [`crate::raw::PROGRESS_EVERY`] while
//!   it sends (`bytes` in all, `chunk` the kept payload bytes since the last `progress`): a
//!   connection the run ends has its payload all the same (its chunks, joined);
//! - `{"t": µs, "kind": "refused", "local": "…"}`: a connection over `MAX_TRAP_CONNECTIONS`,
//!   closed unread;
//! - `{"t": µs, "kind": "launch", "pid": n}`: the package's program was started as pid `n`;
//! - `{"t": µs, "kind": "launch-failed", "error": "…"}`: it could not be started (the probe
//!   exits 127);
//! - `{"t": µs, "kind": "exit", "code": n}`: it exited with status `n` (128 + the signal that
//!   killed it); the probe exits with the same status. A sandbox that ends without this record
//!   was killed whole (the host's memory cgroup, or the observer);
//! - `{"t": µs, "kind": "cut"}`: [`crate::MAX_RECORDS`] were written; nothing more will be.
//!
//! `t` is microseconds since the Unix epoch when the record was made.

use base64::Engine;
use serde_json::{Value, json};

/// Microseconds since the Unix epoch, now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// A DNS question and what it was answered.
pub fn dns(name: &str, qtype: u16, answer: Option<std::net::Ipv4Addr>) -> Value {
    json!({"t": now(), "kind": "dns", "name": name, "qtype": qtype,
           "answer": answer.map(|a| a.to_string())})
}

/// A datagram to the DNS sink that is not a query it reads (no answer was sent).
pub fn dns_unreadable(bytes: usize) -> Value {
    json!({"t": now(), "kind": "dns-unreadable", "bytes": bytes})
}

/// A trap took connection `id`.
pub fn open(id: u64, local: std::net::SocketAddr) -> Value {
    json!({"t": now(), "kind": "open", "id": id, "local": local.to_string()})
}

/// A connection closed unread: too many were open.
pub fn refused(local: std::net::SocketAddr) -> Value {
    json!({"t": now(), "kind": "refused", "local": local.to_string()})
}

/// The program could not be started.
pub fn launch_failed(error: &str) -> Value {
    json!({"t": now(), "kind": "launch-failed", "error": error})
}

/// One trap connection (`id` as its `open` record said).
#[allow(
    clippy::too_many_arguments,
    reason = "one record's members, named at the one caller"
)]
pub fn connection(
    id: u64,
    kind: &str,
    local: std::net::SocketAddr,
    sni: Option<&str>,
    recipients: &[String],
    bytes: usize,
    payload: &[u8],
    complete: bool,
) -> Value {
    json!({"t": now(), "id": id, "kind": kind, "local": local.to_string(), "sni": sni,
           "recipients": recipients, "bytes": bytes,
           "payload": base64::engine::general_purpose::STANDARD.encode(payload),
           "complete": complete})
}

/// What raw trap connection `id` has sent since its last progress record: `chunk` (kept
/// payload bytes), `bytes` in all.
pub fn progress(
    id: u64,
    trap: &str,
    local: std::net::SocketAddr,
    sni: Option<&str>,
    bytes: usize,
    chunk: &[u8],
) -> Value {
    json!({"t": now(), "kind": "progress", "id": id, "trap": trap, "local": local.to_string(),
           "sni": sni, "bytes": bytes,
           "chunk": base64::engine::general_purpose::STANDARD.encode(chunk)})
}

/// The package's program started as `pid`.
pub fn launch(pid: u32) -> Value {
    json!({"t": now(), "kind": "launch", "pid": pid})
}

/// The package's program exited with `code`.
pub fn exit(code: i32) -> Value {
    json!({"t": now(), "kind": "exit", "code": code})
}

/// No more records will be written.
pub fn cut() -> Value {
    json!({"t": now(), "kind": "cut"})
}
