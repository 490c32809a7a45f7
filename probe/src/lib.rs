//! The probe: pid 1 of a package's sandbox. It runs as root inside gVisor's sandbox with only
//! `CAP_SETUID` and `CAP_SETGID`, binds the DNS sink and the traps on the sandbox's own
//! loopback, starts the package's program as the unprivileged uid with no capability, and
//! records what reaches the sink and the traps in `OUT/traps.jsonl` (one JSON object a line),
//! which the package cannot write (root's, mode 0644).
//!
//! - **DNS sink** (UDP `127.0.0.1:53`): every question is recorded; an `A` question gets a
//!   loopback address of its own (`127.128.x.y`, the same for the same name), anything else an
//!   empty answer. Nothing is forwarded: the sandbox has no route out.
//! - **Traps** (TCP on every loopback address): HTTP on 80, HTTPS on 443 (a certificate for the
//!   name the client asks for, from a CA made for the run, `OUT/ca.pem`, which the runtime is
//!   told to trust), SMTP on 25 and 587, SMTP over TLS on 465, and raw TCP on
//!   [`RAW_TRAP_PORTS`] (whatever the client sends, read to its end; TLS, when the client
//!   starts it, ended with the run's CA; an HTTP request answered as the HTTP trap answers
//!   it; FTP, POP3, IMAP and SSH clients greeted and answered, [`raw`]; what a connection
//!   held open has sent recorded as it comes, `progress`). Each answers as a server that took the request (`200 {}`, `250`), records the first
//!   [`MAX_TRAP_PAYLOAD`] bytes, and never forwards.
//!
//! What it never does: read the package's files, write anything but `OUT`, or talk to
//! anything outside the sandbox.

pub mod dns;
pub mod http;
pub mod raw;
pub mod record;
pub mod smtp;

/// Most payload bytes a trap keeps of one connection (the rest is read and counted).
pub const MAX_TRAP_PAYLOAD: usize = 64 * 1024;

/// Most bytes a trap reads from one connection before it closes it.
pub const MAX_TRAP_READ: usize = 1024 * 1024;

/// Longest a trap connection stays open.
pub const TRAP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Most records written in one run; then one `cut` record and no more.
pub const MAX_RECORDS: usize = 2_000;

/// Most names the DNS sink hands addresses to; later names get an empty answer.
pub const MAX_NAMES: usize = 4_096;

/// Most trap connections open at once; one more is closed at once and recorded `refused`.
pub const MAX_TRAP_CONNECTIONS: usize = 256;

/// Most SMTP recipients kept of one connection (each at most 256 bytes).
pub const MAX_RECIPIENTS: usize = 64;

/// Longest the probe stays after its program exited while processes the program left behind
/// (a daemon, an install script's detached child) run on, as they would on a real machine:
/// what they do is seen. It exits as soon as none is left.
pub const LINGER: std::time::Duration = std::time::Duration::from_secs(3);

/// The ports of the traps that speak a protocol of their own: HTTP, HTTPS, SMTP (25 and 587)
/// and SMTP over TLS.
pub const SERVICE_TRAPS: [(u16, &str); 5] = [
    (80, "http"),
    (443, "https"),
    (25, "smtp"),
    (587, "smtp"),
    (465, "smtps"),
];

/// The ports of the raw TCP trap: ports a package's own exfiltration is known to use (FTP,
/// SSH, Telnet, DNS over TCP, POP3, IMAP and their TLS ports, SOCKS, IRC, and the "leet" and
/// reverse-shell ports), and not ones a server commonly listens on itself (3000, 5000, 8000,
/// 8080, and 1337, 5555, 9001 — Sails', adb's and many dev servers' defaults: a package
/// listening on a trap's port fails to bind it, `trap-port-taken`). A connection to any other
/// port reaches nothing (seen in the trace only).
pub const RAW_TRAP_PORTS: [u16; 12] = [21, 22, 23, 53, 110, 143, 993, 995, 1080, 4444, 6667, 31337];

/// Whether the probe listens on `port` (TCP, every IPv4 address): a package binding it gets
/// `EADDRINUSE`.
pub fn is_trap_port(port: u16) -> bool {
    SERVICE_TRAPS.iter().any(|(p, _)| *p == port) || RAW_TRAP_PORTS.contains(&port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_servers_commonly_listen_on_are_no_trap_ports() {
        for port in [1337, 3000, 5000, 5555, 8000, 8080, 9001] {
            assert!(!is_trap_port(port), "{port}");
        }
        for port in [21, 25, 80, 443, 465, 587, 4444] {
            assert!(is_trap_port(port), "{port}");
        }
    }
}
