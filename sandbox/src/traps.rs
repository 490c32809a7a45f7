//! What the probe recorded (`OUT/traps.jsonl`, written by `toolmark-probe` inside the sandbox,
//! format in its `record` module), read into types. The file is the probe's, which the package
//! cannot write; it is still read under [`MAX_TRAPS_BYTES`] and a line that does not parse is
//! counted ([`Traps::unreadable`]), never guessed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use base64::Engine;
use serde_json::Value;

use crate::trace::{self, Address, Call, Trace};

/// Most bytes of the probe's records read.
pub const MAX_TRAPS_BYTES: u64 = 64 * 1024 * 1024;

/// One name looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// When.
    pub at: SystemTime,
    /// The name.
    pub name: String,
    /// The address the sink answered with.
    pub answer: Option<String>,
}

/// One connection a trap took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// When it was taken (its `open` record), else when it ended.
    pub at: SystemTime,
    /// Its id.
    pub id: u64,
    /// `http`, `https`, `smtp`, `smtps` (SMTP over TLS) or `tcp` (the raw trap).
    pub kind: String,
    /// The address and port it was made to (the name's own loopback address).
    pub local: String,
    /// The TLS server name asked for.
    pub sni: Option<String>,
    /// SMTP recipients.
    pub recipients: Vec<String>,
    /// Bytes the client sent.
    pub bytes: u64,
    /// The first bytes of it.
    pub payload: Vec<u8>,
    /// The request ended before a trap's limit cut it.
    pub complete: bool,
}

/// Everything the probe recorded in one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traps {
    /// Names looked up, in order.
    pub lookups: Vec<Lookup>,
    /// Connections the traps took, in order.
    pub connections: Vec<Connection>,
    /// Connections taken and never ended while the probe recorded: when, and where to.
    pub unclosed: Vec<(SystemTime, String)>,
    /// Connections refused (over the probe's connection limit): when, and where to.
    pub refused: Vec<(SystemTime, String)>,
    /// Why the package's program could not be started.
    pub launch_failed: Option<String>,
    /// The pid the package's program was started as.
    pub launch: Option<u32>,
    /// Datagrams to the DNS sink that were not a query it reads: when.
    pub unreadable_lookups: Vec<SystemTime>,
    /// The status it exited with, as the probe saw it (`None`: the sandbox was killed whole).
    pub exit: Option<i32>,
    /// The probe stopped recording (its record limit).
    pub cut: bool,
    /// Lines that did not parse.
    pub unreadable: usize,
}

impl Traps {
    /// The records in `path` (`None`: the probe wrote none).
    pub fn read(path: &Path) -> Option<Traps> {
        use std::io::Read;
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .ok()?
            .take(MAX_TRAPS_BYTES)
            .read_to_end(&mut bytes)
            .ok()?;
        let mut traps = Traps::parse(&bytes);
        if bytes.len() as u64 >= MAX_TRAPS_BYTES {
            traps.cut = true;
        }
        Some(traps)
    }

    /// Records from their bytes. A connection the run ended after `progress` records is a
    /// connection all the same, its payload their chunks joined, not `complete`.
    pub fn parse(bytes: &[u8]) -> Traps {
        let mut t = Traps::default();
        let mut opened: BTreeMap<u64, (SystemTime, String)> = BTreeMap::new();
        let mut partial: BTreeMap<u64, Connection> = BTreeMap::new();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            if t.take(line, &mut opened, &mut partial).is_none() {
                t.unreadable += 1;
            }
        }
        for c in &t.connections {
            // Its own record says it all.
            partial.remove(&c.id);
        }
        t.connections
            .extend(partial.into_values().filter(|c| opened.contains_key(&c.id)));
        for c in &mut t.connections {
            if let Some((at, _)) = opened.remove(&c.id) {
                c.at = at;
            }
        }
        t.unclosed = opened.into_values().collect();
        t
    }

    fn take(
        &mut self,
        line: &[u8],
        opened: &mut BTreeMap<u64, (SystemTime, String)>,
        partial: &mut BTreeMap<u64, Connection>,
    ) -> Option<()> {
        let v: Value = serde_json::from_slice(line).ok()?;
        let at = SystemTime::UNIX_EPOCH + Duration::from_micros(v.get("t")?.as_u64()?);
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        match v.get("kind")?.as_str()? {
            "dns" => self.lookups.push(Lookup {
                at,
                name: text("name")?,
                answer: text("answer"),
            }),
            kind @ ("http" | "https" | "smtp" | "smtps" | "tcp") => {
                self.connections.push(Connection {
                    at,
                    id: v.get("id")?.as_u64()?,
                    kind: kind.to_owned(),
                    local: text("local")?,
                    sni: text("sni"),
                    recipients: v
                        .get("recipients")?
                        .as_array()?
                        .iter()
                        .map(|r| r.as_str().map(str::to_owned))
                        .collect::<Option<_>>()?,
                    bytes: v.get("bytes")?.as_u64()?,
                    payload: base64::engine::general_purpose::STANDARD
                        .decode(v.get("payload")?.as_str()?)
                        .ok()?,
                    complete: v.get("complete")?.as_bool()?,
                })
            }
            "progress" => {
                let id = v.get("id")?.as_u64()?;
                let chunk = base64::engine::general_purpose::STANDARD
                    .decode(v.get("chunk")?.as_str()?)
                    .ok()?;
                let bytes = v.get("bytes")?.as_u64()?;
                let c = partial.entry(id).or_insert_with(|| Connection {
                    at,
                    id,
                    kind: String::new(),
                    local: String::new(),
                    sni: None,
                    recipients: Vec::new(),
                    bytes: 0,
                    payload: Vec::new(),
                    complete: false,
                });
                c.kind = text("trap")?;
                c.local = text("local")?;
                c.sni = text("sni");
                c.bytes = c.bytes.max(bytes);
                // The probe keeps at most MAX_TRAP_PAYLOAD of a connection: so do its chunks.
                let room = toolmark_probe::MAX_TRAP_PAYLOAD.saturating_sub(c.payload.len());
                c.payload.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            "open" => {
                opened.insert(v.get("id")?.as_u64()?, (at, text("local")?));
            }
            "refused" => self.refused.push((at, text("local")?)),
            "dns-unreadable" => self.unreadable_lookups.push(at),
            "launch-failed" => self.launch_failed = Some(text("error")?),
            "launch" => self.launch = Some(u32::try_from(v.get("pid")?.as_u64()?).ok()?),
            "exit" => self.exit = Some(i32::try_from(v.get("code")?.as_i64()?).ok()?),
            "cut" => self.cut = true,
            _ => return None,
        }
        Some(())
    }

    /// The name each answered address stands for.
    pub fn names(&self) -> BTreeMap<String, String> {
        self.lookups
            .iter()
            .filter_map(|l| Some((l.answer.clone()?, l.name.clone())))
            .collect()
    }
}

/// Linux's `EADDRINUSE`: the address is bound already.
const EADDRINUSE: u32 = 98;

/// Whether a process in `trace` failed to bind a TCP port the probe's traps hold
/// ([`toolmark_probe::is_trap_port`]) because it was taken: a server of the package's own that
/// could not listen, `trap-port-taken` (the run's status alone would not say why).
pub fn trap_port_taken(trace: &Trace) -> bool {
    trace.events.iter().any(|e| {
        e.exit
            && e.syscall == "bind"
            && e.errno == Some(EADDRINUSE)
            && matches!(
                trace::decode(e),
                Some(Call::Bind(Address::Inet { port, .. })) if toolmark_probe::is_trap_port(port)
            )
    })
}

impl Connection {
    /// Where the package meant it to go: `kind://name` (the TLS name, else the looked-up name
    /// of the address, else the address; with the port for the raw trap, `tcp://name:4444`),
    /// and the recipients of a mail.
    pub fn describe(&self, names: &BTreeMap<String, String>) -> String {
        let (addr, port) = self
            .local
            .rsplit_once(':')
            .unwrap_or((self.local.as_str(), ""));
        let mut name = self
            .sni
            .clone()
            .or_else(|| names.get(addr).cloned())
            .unwrap_or_else(|| addr.to_owned());
        if self.kind == "tcp" || name == addr {
            name = format!("{name}:{port}");
        }
        if self.recipients.is_empty() {
            format!("{}://{name}", self.kind)
        } else {
            format!("{}://{name} to {}", self.kind, self.recipients.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probes_records_are_read_into_lookups_connections_and_the_launch() {
        let t = Traps::parse(
            br#"{"t":1796177100000000,"kind":"launch","pid":2}
{"t":1796177100000001,"kind":"dns","name":"exfil.example","qtype":1,"answer":"127.128.0.1"}
{"t":1796177100000002,"kind":"open","id":0,"local":"127.128.0.1:443"}
{"t":1796177100000005,"id":0,"kind":"https","local":"127.128.0.1:443","sni":"exfil.example","recipients":[],"bytes":5,"payload":"aGVsbG8=","complete":true}
{"t":1796177100000003,"id":1,"kind":"smtp","local":"127.128.0.2:25","sni":null,"recipients":["x@outside.example"],"bytes":0,"payload":"","complete":false}
{"t":1796177100000004,"kind":"open","id":2,"local":"127.128.0.1:80"}
{"t":1796177100000006,"id":3,"kind":"tcp","local":"127.128.0.1:4444","sni":null,"recipients":[],"bytes":2,"payload":"aGk=","complete":true}
{"t":1796177100000004,"kind":"refused","local":"127.128.0.1:80"}
not json
{"t":1,"kind":"what"}
{"t":2,"kind":"cut"}
{"t":3,"kind":"exit","code":137}
"#,
        );
        assert_eq!(t.launch, Some(2));
        assert_eq!(t.exit, Some(137), "the program's own exit");
        assert_eq!(t.lookups[0].name, "exfil.example");
        assert_eq!(t.connections[0].payload, b"hello");
        assert_eq!(
            t.connections[0].at,
            SystemTime::UNIX_EPOCH + Duration::from_micros(1796177100000002),
            "a connection is timed when it was taken"
        );
        assert_eq!(t.unclosed.len(), 1, "taken and never ended");
        assert_eq!(t.refused.len(), 1);
        assert!(t.cut);
        assert_eq!(t.unreadable, 2);
        let names = t.names();
        assert_eq!(t.connections[0].describe(&names), "https://exfil.example");
        assert_eq!(
            t.connections[1].describe(&names),
            "smtp://127.128.0.2:25 to x@outside.example"
        );
        assert_eq!(
            t.connections[2].describe(&names),
            "tcp://exfil.example:4444",
            "the raw trap's port is part of where it went"
        );
    }

    #[test]
    fn a_bind_refused_on_a_trap_port_is_a_taken_trap_port() {
        let line = |port: u16, result: &str| {
            format!(
                "I1202 01:40:46.952751   32737 strace.go:605] [   2:   2] node X bind(0x15 socket:[9], 0x7f00 {{Family: AF_INET, Addr: 0.0.0.0, Port: {port}}}, 0x10) {result} (22.222µs)"
            )
        };
        let taken = "= 0 (0x0) errno=98 (address already in use)";
        let log = |lines: &[String]| trace::parse(lines.join("\n").as_bytes());
        assert!(trap_port_taken(&log(&[line(4444, taken)])));
        assert!(
            !trap_port_taken(&log(&[line(4444, "= 0 (0x0)")])),
            "bound: the probe's own"
        );
        assert!(
            !trap_port_taken(&log(&[line(9001, taken)])),
            "not a trap's port: the package's own clash"
        );
        assert!(
            !trap_port_taken(&log(&[line(21, "= 0 (0x0) errno=13 (permission denied)")])),
            "another failure"
        );
    }

    #[test]
    fn a_connection_the_run_ended_has_its_progress_chunks_joined_and_is_not_complete() {
        let t = Traps::parse(
            br#"{"t":1796177100000001,"kind":"open","id":4,"local":"127.128.0.1:4444"}
{"t":1796177100000002,"kind":"progress","id":4,"trap":"tcp","local":"127.128.0.1:4444","sni":null,"bytes":3,"chunk":"Z2hw"}
{"t":1796177100000003,"kind":"progress","id":4,"trap":"tcp","local":"127.128.0.1:4444","sni":null,"bytes":5,"chunk":"X3g="}
{"t":1796177100000004,"kind":"open","id":5,"local":"127.128.0.1:21"}
{"t":1796177100000005,"kind":"progress","id":5,"trap":"tcp","local":"127.128.0.1:21","sni":null,"bytes":2,"chunk":"aGk="}
{"t":1796177100000006,"id":5,"kind":"tcp","local":"127.128.0.1:21","sni":null,"recipients":[],"bytes":4,"payload":"aGkhIQ==","complete":true}
"#,
        );
        assert_eq!(t.unreadable, 0);
        assert_eq!(t.connections.len(), 2, "{t:#?}");
        let ended = &t.connections[0];
        assert_eq!(
            (ended.id, ended.payload.as_slice()),
            (5, &b"hi!!"[..]),
            "its own record wins"
        );
        assert!(ended.complete);
        let cut = &t.connections[1];
        assert_eq!(cut.payload, b"ghp_x");
        assert_eq!(cut.bytes, 5);
        assert_eq!(cut.kind, "tcp");
        assert!(!cut.complete, "the run ended it: trap-request-cut");
        assert_eq!(
            cut.at,
            SystemTime::UNIX_EPOCH + Duration::from_micros(1796177100000001)
        );
        assert!(t.unclosed.is_empty(), "its payload is known");
    }
}
