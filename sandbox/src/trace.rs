//! Reading gVisor's syscall trace (`runsc --strace`, the `*.boot.txt` debug log) into typed
//! events, under named limits. The log is written by the sentry about untrusted code, so
//! every byte of the arguments is the package's to choose: nothing here panics, nothing grows
//! past [`MAX_TRACE_BYTES`] and [`MAX_TRACE_EVENTS`], and a line that cannot be read exactly
//! is counted ([`Trace::unparsed`]), never guessed at.
//!
//! A line looks like (runsc 0.0~20221219, `strace.go`):
//!
//! ```text
//! I1201 23:22:48.468820   14870 strace.go:608] [   2:   2] cat X openat(AT_FDCWD /home/decoy, 0x7f21fb0dff77 /home/decoy/.ssh/id_rsa, O_RDONLY|0x0, 0o0) = 3 (0x3) (326.832µs)
//! ```
//!
//! — pid and tid inside the sandbox, the task's command name, `E`nter or e`X`it, the syscall
//! and its decoded arguments, and on exit lines its return value and `errno=N (text)` (a
//! failed call prints `= 0 (0x0)` with the errno beside it).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

/// The syscalls a run is traced for (`--strace-syscalls`): what [`decode`] reads (opens,
/// programs, connections, the process tree, links, renames, new directories and the working
/// directory relative paths are read against) and the writes the leak search reads.
pub const TRACED_SYSCALLS: [&str; 27] = [
    "open",
    "openat",
    "creat",
    "execve",
    "execveat",
    "connect",
    "bind",
    "socket",
    "sendto",
    "sendmsg",
    "write",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "clone",
    "fork",
    "vfork",
    "symlinkat",
    "linkat",
    "symlink",
    "link",
    "chdir",
    "fchdir",
];

/// Most trace bytes read; the rest is cut and the trace marked [`Trace::truncated`].
pub const MAX_TRACE_BYTES: usize = 256 * 1024 * 1024;

/// Most events kept; the rest is cut and the trace marked [`Trace::truncated`].
pub const MAX_TRACE_EVENTS: usize = 1_000_000;

/// Longest trace line read as an event (a `write` buffer is logged up to
/// `--strace-log-size`, 1 KiB by default; an `execve` with a large environment is longer).
pub const MAX_TRACE_LINE: usize = 256 * 1024;

/// Longest command name the sentry logs (the kernel's `TASK_COMM_LEN` less its NUL).
const MAX_COMM: usize = 15;

/// The line up to the command name, which the task chooses (spaces and all).
static HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ strace\.go:\d+\] \[\s*(\d+):\s*(\d+)\] (.*)$")
        .expect("the trace head pattern compiles")
});

/// Where the command name may end: ` E name(` or ` X name(`.
static MARK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r" ([EX]) ([a-z0-9_]+)\(").expect("the trace mark pattern compiles")
});

/// The call after its name's `(`: arguments, then the exit's return value and errno.
static TAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.*?)\)(?: = (-?\d+) \(0x[0-9a-f]+\)(?: errno=(\d+) \([^)]*\))? \([^)]*\))?$")
        .expect("the trace tail pattern compiles")
});

/// One traced syscall, entry or exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `MMDD HH:MM:SS.micros` as logged (wall clock of the sandbox's host).
    pub time: String,
    /// Thread group id inside the sandbox.
    pub pid: u32,
    /// Thread id inside the sandbox.
    pub tid: u32,
    /// The task's command name (as the task set it: untrusted).
    pub comm: String,
    /// An exit line (else an entry line).
    pub exit: bool,
    /// The syscall's name.
    pub syscall: String,
    /// Its arguments as the sentry decoded them.
    pub args: String,
    /// The return value (exit lines).
    pub ret: Option<i64>,
    /// The errno of a failed call (exit lines).
    pub errno: Option<u32>,
}

impl Event {
    /// An exit line of a call that succeeded.
    pub fn succeeded(&self) -> bool {
        self.exit && self.errno.is_none() && self.ret.is_some_and(|r| r >= 0)
    }
}

/// A whole trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// The events, in log order.
    pub events: Vec<Event>,
    /// `strace.go` lines that did not match the line format (or were too long): what they did
    /// is unknown, so a trace with any is incomplete.
    pub unparsed: usize,
    /// The log was cut at [`MAX_TRACE_BYTES`] or [`MAX_TRACE_EVENTS`].
    pub truncated: bool,
    /// Sockets (their inode, `socket:[N]`) a `connect` named an IPv4 or IPv6 address for,
    /// anywhere in the log: what is written into them may leave the sandbox
    /// ([`Trace::leaves`]).
    pub outbound: BTreeSet<u64>,
}

impl Trace {
    /// Whether the `write`, `sendto` or `sendmsg` entry `e` puts its buffer where it may leave
    /// the sandbox: into a socket connected to an IP address ([`Trace::outbound`]), by a
    /// `sendto` naming one, or by a `sendmsg` naming any address (the trace does not decode
    /// it). A file, a pipe, a socket pair (node's pipes to its children) or a Unix socket
    /// between the package's own processes carries nothing out.
    pub fn leaves(&self, e: &Event) -> bool {
        let Some(args) = split_args(&e.args) else {
            return false;
        };
        let socket = args.first().and_then(|fd| socket_inode(fd));
        if socket.is_some_and(|s| self.outbound.contains(&s)) {
            return true;
        }
        match (e.syscall.as_str(), args.as_slice()) {
            ("sendto", [_, _, _, _, to, _]) => {
                socket.is_some() && matches!(address(to), Some(Address::Inet { .. }))
            }
            ("sendmsg", [_, header, _]) => {
                socket.is_some()
                    && header
                        .split_once("{name=")
                        .and_then(|(_, rest)| rest.split_once(','))
                        .is_some_and(|(name, _)| name != "0x0")
            }
            _ => false,
        }
    }
}

/// The inode of the socket an fd argument names as logged (`0x5 socket:[12]`).
fn socket_inode(fd: &str) -> Option<u64> {
    after_space(fd)?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The sockets `connect` exit lines name an IP address for (whether it succeeded or not: a
/// non-blocking connection is still in progress when the call returns).
fn outbound(events: &[Event]) -> BTreeSet<u64> {
    events
        .iter()
        .filter(|e| e.exit && e.syscall == "connect")
        .filter_map(|e| {
            let args = split_args(&e.args)?;
            let [fd, to, _] = args.as_slice() else {
                return None;
            };
            matches!(address(to)?, Address::Inet { .. })
                .then(|| socket_inode(fd))
                .flatten()
        })
        .collect()
}

/// One line as an event; `None` for a line that is not a syscall trace line, or one whose
/// reading is not certain: the command name is the task's own choice, so a name that could end
/// in more than one place (`a X getpid(` followed by the real ` X connect(`), or a call this
/// module does not trace, is refused rather than guessed (the caller counts it as unparsed).
pub fn parse_line(line: &str) -> Option<Event> {
    let head = HEAD.captures(line)?;
    let rest = head.get(4)?.as_str();
    let mut marks = MARK.captures_iter(rest).filter(|c| {
        c.get(0)
            .is_some_and(|m| (1..=MAX_COMM + 1).contains(&m.start()))
    });
    let mark = marks.next()?;
    if marks.next().is_some() {
        return None;
    }
    let whole = mark.get(0)?;
    let syscall = &mark[2];
    if !TRACED_SYSCALLS.contains(&syscall) {
        return None;
    }
    let tail = TAIL.captures(&rest[whole.end()..])?;
    Some(Event {
        time: head[1].to_owned(),
        pid: head[2].parse().ok()?,
        tid: head[3].parse().ok()?,
        comm: rest[..whole.start()].to_owned(),
        exit: &mark[1] == "X",
        syscall: syscall.to_owned(),
        args: tail[1].to_owned(),
        ret: tail.get(2).and_then(|m| m.as_str().parse().ok()),
        errno: tail.get(3).and_then(|m| m.as_str().parse().ok()),
    })
}

/// Every syscall line of a debug log.
pub fn parse(log: &[u8]) -> Trace {
    let mut trace = Trace::default();
    let log = if log.len() > MAX_TRACE_BYTES {
        trace.truncated = true;
        &log[..MAX_TRACE_BYTES]
    } else {
        log
    };
    // Whether the last line that began a log record was the sentry's strace.
    let mut in_strace = false;
    for raw in log.split(|b| *b == b'\n') {
        if !starts_record(raw) {
            // A line that continues the record before it. After a strace record that is a
            // line broken in two by a newline in what the task controls (its command name):
            // what the call was is unknown.
            if in_strace && !raw.is_empty() {
                trace.unparsed += 1;
            }
            continue;
        }
        in_strace = contains(raw, b" strace.go:");
        if !in_strace {
            continue;
        }
        if trace.events.len() >= MAX_TRACE_EVENTS {
            trace.truncated = true;
            break;
        }
        let event = (raw.len() <= MAX_TRACE_LINE)
            .then(|| std::str::from_utf8(raw).ok())
            .flatten()
            .and_then(parse_line);
        match event {
            Some(e) => trace.events.push(e),
            // The sentry also logs non-syscall strace lines (signals, exits) in this file;
            // only a line that names a syscall (`] [` then E/X) and does not parse counts.
            None if looks_like_syscall(raw) => trace.unparsed += 1,
            None => {}
        }
    }
    trace.outbound = outbound(&trace.events);
    trace
}

/// Whether `raw` begins a log record (`I1202 01:40:15.124080 `, glog's header).
fn starts_record(raw: &[u8]) -> bool {
    raw.len() > 5
        && matches!(raw[0], b'I' | b'W' | b'E' | b'F' | b'D')
        && raw[1..5].iter().all(u8::is_ascii_digit)
        && raw[5] == b' '
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn looks_like_syscall(raw: &[u8]) -> bool {
    contains(raw, b" E ") || contains(raw, b" X ")
}

/// The arguments of a call split at top-level `", "` (outside quotes, brackets and braces);
/// `None` when the quoting does not balance.
pub fn split_args(args: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0usize);
    let bytes = args.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if quoted {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => quoted = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => quoted = true,
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth -= 1;
                    if depth < 0 {
                        return None;
                    }
                }
                b',' if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                    out.push(&args[start..i]);
                    start = i + 2;
                    i += 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if quoted || depth != 0 {
        return None;
    }
    out.push(&args[start..]);
    Some(out)
}

/// A file opened (`open`, `openat`, `creat`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    /// The absolute path the sentry resolved.
    pub path: String,
    /// Opened for writing (`O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC`, `O_APPEND`; `creat`).
    pub write: bool,
}

/// A connection attempt (`connect`) or a bound address (`bind`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// An IPv4 or IPv6 address and port.
    Inet {
        /// The address as logged.
        addr: String,
        /// The port.
        port: u16,
    },
    /// A Unix socket path (or abstract name).
    Unix(String),
    /// A netlink socket: a conversation with the (sandbox's) kernel about interfaces and
    /// routes, never the network.
    Netlink,
}

/// A program started (`execve`, `execveat`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exec {
    /// The program's path.
    pub path: String,
    /// Its arguments.
    pub argv: Vec<String>,
    /// Its environment.
    pub envp: Vec<String>,
}

/// What an exit line says, decoded for the syscalls the behaviour is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// A file opened.
    Open(Open),
    /// A connection attempt.
    Connect(Address),
    /// An address bound.
    Bind(Address),
    /// A program started.
    Exec(Exec),
    /// A new process (not a thread): `fork`, `vfork`, `clone` without `CLONE_THREAD`; its pid.
    Spawn(u32),
    /// A link (`link`, `linkat`, `symlink`, `symlinkat`): the name made (`name`) for the file
    /// `target`.
    Link {
        /// The file linked to (a symbolic link's target read against the link's directory).
        target: String,
        /// The new name.
        name: String,
    },
    /// A file or directory renamed (`rename`, `renameat`, `renameat2`).
    Rename {
        /// Its old name.
        from: String,
        /// Its new name (a file there before is replaced).
        to: String,
    },
    /// A directory made (`mkdir`, `mkdirat`).
    Mkdir(String),
    /// The working directory changed (`chdir`, `fchdir`) to this one.
    Chdir(String),
    /// Any other syscall, or a call whose arguments could not be read exactly.
    Other,
}

/// The path after a logged pointer (`0x7f… /the/path`), or after a directory fd (`AT_FDCWD
/// /cwd`, `0x3 /dir`).
fn after_space(arg: &str) -> Option<&str> {
    arg.split_once(' ').map(|(_, rest)| rest)
}

/// `path` as an absolute, lexically clean path: relative to the directory `dir` names (an
/// `openat` dirfd as logged: `AT_FDCWD /cwd`, `0x3 /dir`); `None` when it is relative and no
/// directory is known (what it named cannot be told).
fn resolve(dir: Option<&&str>, path: &str) -> Option<String> {
    if path.starts_with('/') {
        return Some(clean(path));
    }
    let base = after_space(dir?)?;
    resolve_in(base, path)
}

/// A path argument of a call without a directory fd (`rename`, `mkdir`, `link`, `open`, …):
/// relative to the process's working directory `cwd` when it is known.
fn resolve_cwd(cwd: Option<&str>, arg: &str) -> Option<String> {
    let path = after_space(arg)?;
    if path.starts_with('/') {
        return Some(clean(path));
    }
    resolve_in(cwd?, path)
}

fn resolve_in(base: &str, path: &str) -> Option<String> {
    if path.starts_with('/') {
        return Some(clean(path));
    }
    base.starts_with('/')
        .then(|| clean(&format!("{base}/{path}")))
}

/// The working directory a line shows for its process: the sentry writes it after every
/// `AT_FDCWD` argument (`openat(AT_FDCWD /home/decoy, …)`). `None` when the line has none, or
/// its arguments cannot be split exactly.
pub fn shown_cwd(e: &Event) -> Option<String> {
    split_args(&e.args)?
        .into_iter()
        .find_map(|a| a.strip_prefix("AT_FDCWD "))
        .filter(|d| d.starts_with('/'))
        .map(clean)
}

/// The directory a symbolic link named `link` is in: its relative target is read from there.
fn parent(link: &str) -> &str {
    link.rsplit_once('/')
        .map_or("/", |(p, _)| if p.is_empty() { "/" } else { p })
}

/// `.`, `..` and repeated `/` taken out, as the kernel walks them (symbolic links are not
/// followed: a link is read where it is made, `Call::Link`).
fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

fn write_flags(flags: &str) -> bool {
    flags.split('|').any(|f| {
        matches!(
            f,
            "O_WRONLY" | "O_RDWR" | "O_CREAT" | "O_TRUNC" | "O_APPEND"
        )
    })
}

/// Decode an exit line's call; `None` when it is a call this module reads but its arguments
/// are not in the shape it knows, or a relative path of a call without a directory fd whose
/// process's working directory is not known (the caller counts it as unparsed).
pub fn decode(e: &Event) -> Option<Call> {
    decode_in(e, None)
}

/// [`decode`], reading the relative paths of calls without a directory fd (`open`, `creat`,
/// `rename`, `mkdir`, `link`, `symlink`, `chdir`) against `cwd`, the process's working
/// directory when the caller knows it ([`shown_cwd`], [`Call::Chdir`]).
pub fn decode_in(e: &Event, cwd: Option<&str>) -> Option<Call> {
    if !e.exit {
        return Some(Call::Other);
    }
    let args = || split_args(&e.args);
    Some(match e.syscall.as_str() {
        "openat" => {
            let a = args()?;
            let [dir, path, flags, _] = a.as_slice() else {
                return None;
            };
            Call::Open(Open {
                path: resolve(Some(dir), after_space(path)?)?,
                write: write_flags(flags),
            })
        }
        "open" => {
            let a = args()?;
            let [path, flags, _] = a.as_slice() else {
                return None;
            };
            Call::Open(Open {
                path: resolve_cwd(cwd, path)?,
                write: write_flags(flags),
            })
        }
        "creat" => {
            let a = args()?;
            let [path, _] = a.as_slice() else {
                return None;
            };
            Call::Open(Open {
                path: resolve_cwd(cwd, path)?,
                write: true,
            })
        }
        // A link makes a second name for a file: to the trace, opening the link is not
        // opening the file it names, so the link's target is what counts — and the new name,
        // where it lands.
        "symlinkat" => {
            let a = args()?;
            let [target, dir, link] = a.as_slice() else {
                return None;
            };
            let name = resolve(Some(dir), after_space(link)?)?;
            let target = resolve_in(parent(&name), after_space(target)?)?;
            Call::Link { target, name }
        }
        "symlink" => {
            let a = args()?;
            let [target, link] = a.as_slice() else {
                return None;
            };
            let name = resolve_cwd(cwd, link)?;
            let target = resolve_in(parent(&name), after_space(target)?)?;
            Call::Link { target, name }
        }
        "linkat" => {
            let a = args()?;
            let [old_dir, old, new_dir, new, _flags] = a.as_slice() else {
                return None;
            };
            Call::Link {
                target: resolve(Some(old_dir), after_space(old)?)?,
                name: resolve(Some(new_dir), after_space(new)?)?,
            }
        }
        "link" => {
            let a = args()?;
            let [old, new] = a.as_slice() else {
                return None;
            };
            Call::Link {
                target: resolve_cwd(cwd, old)?,
                name: resolve_cwd(cwd, new)?,
            }
        }
        "rename" => {
            let a = args()?;
            let [old, new] = a.as_slice() else {
                return None;
            };
            Call::Rename {
                from: resolve_cwd(cwd, old)?,
                to: resolve_cwd(cwd, new)?,
            }
        }
        "renameat" | "renameat2" => {
            let a = args()?;
            let (old_dir, old, new_dir, new) = match a.as_slice() {
                [od, o, nd, n] if e.syscall == "renameat" => (od, o, nd, n),
                [od, o, nd, n, _flags] if e.syscall == "renameat2" => (od, o, nd, n),
                _ => return None,
            };
            Call::Rename {
                from: resolve(Some(old_dir), after_space(old)?)?,
                to: resolve(Some(new_dir), after_space(new)?)?,
            }
        }
        "mkdir" => {
            let a = args()?;
            let [path, _mode] = a.as_slice() else {
                return None;
            };
            Call::Mkdir(resolve_cwd(cwd, path)?)
        }
        "mkdirat" => {
            let a = args()?;
            let [dir, path, _mode] = a.as_slice() else {
                return None;
            };
            Call::Mkdir(resolve(Some(dir), after_space(path)?)?)
        }
        "chdir" => {
            let a = args()?;
            let [path] = a.as_slice() else {
                return None;
            };
            Call::Chdir(resolve_cwd(cwd, path)?)
        }
        // The fd as logged names its directory: `0x3 /home/decoy`.
        "fchdir" => {
            let a = args()?;
            let [dir] = a.as_slice() else {
                return None;
            };
            let dir = after_space(dir)?;
            if !dir.starts_with('/') {
                return None;
            }
            Call::Chdir(clean(dir))
        }
        "connect" | "bind" => {
            let a = args()?;
            let address = address(a.get(1)?)?;
            if e.syscall == "connect" {
                Call::Connect(address)
            } else {
                Call::Bind(address)
            }
        }
        "execve" | "execveat" => {
            let a = args()?;
            let skip = usize::from(e.syscall == "execveat");
            let path = after_space(a.get(skip)?)?.to_owned();
            let argv = strings(after_space(a.get(skip + 1)?)?)?;
            let envp = strings(after_space(a.get(skip + 2)?)?)?;
            Call::Exec(Exec { path, argv, envp })
        }
        "fork" | "vfork" => Call::Spawn(u32::try_from(e.ret?).ok()?),
        "clone" => {
            if e.args.split([',', '|', ' ']).any(|f| f == "CLONE_THREAD") {
                Call::Other
            } else {
                Call::Spawn(u32::try_from(e.ret?).ok()?)
            }
        }
        _ => Call::Other,
    })
}

/// `{Family: AF_INET, Addr: 192.0.2.1, Port: 443}` or a Unix socket's `{Family: AF_UNIX,
/// Addr: "/path"}` (after its pointer).
fn address(arg: &str) -> Option<Address> {
    let body = after_space(arg)?.strip_prefix('{')?.strip_suffix('}')?;
    let mut family = None;
    let mut addr = None;
    let mut port = None;
    for field in body.split(", ") {
        let (k, v) = field.split_once(": ")?;
        match k {
            "Family" => family = Some(v),
            "Addr" => addr = Some(v),
            "Port" => port = v.parse::<u16>().ok(),
            _ => {}
        }
    }
    match family? {
        "AF_INET" | "AF_INET6" => Some(Address::Inet {
            addr: addr?.to_owned(),
            port: port?,
        }),
        "AF_UNIX" => Some(Address::Unix(addr?.trim_matches('"').to_owned())),
        "AF_NETLINK" => Some(Address::Netlink),
        _ => None,
    }
}

/// A logged string array (`["a", "b\n"]`, Go-quoted) as its strings.
fn strings(arg: &str) -> Option<Vec<String>> {
    let inner = arg.strip_prefix('[')?.strip_suffix(']')?;
    if inner.is_empty() {
        return Some(Vec::new());
    }
    split_args(inner)?.into_iter().map(unquote).collect()
}

/// A Go-quoted string (`%q`): `\\`, `\"`, `\n`, `\t`, `\r`, `\xHH`, `\uHHHH`, `\UHHHHHHHH`;
/// bytes that are not UTF-8 are replaced.
fn unquote(quoted: &str) -> Option<String> {
    let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let hex = |chars: &mut std::str::Chars<'_>, n: usize| -> Option<u32> {
            let digits: String = chars.by_ref().take(n).collect();
            (digits.len() == n).then(|| u32::from_str_radix(&digits, 16).ok())?
        };
        match chars.next()? {
            '\\' => out.push(b'\\'),
            '"' => out.push(b'"'),
            'n' => out.push(b'\n'),
            't' => out.push(b'\t'),
            'r' => out.push(b'\r'),
            'a' => out.push(7),
            'b' => out.push(8),
            'f' => out.push(12),
            'v' => out.push(11),
            'x' => out.push(u8::try_from(hex(&mut chars, 2)?).ok()?),
            'u' => push_char(&mut out, hex(&mut chars, 4)?)?,
            'U' => push_char(&mut out, hex(&mut chars, 8)?)?,
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

fn push_char(out: &mut Vec<u8>, code: u32) -> Option<()> {
    let c = char::from_u32(code)?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMORY: &[u8] = include_bytes!("../tests/fixtures/traces/server-memory.boot.txt");
    const CANARY: &[u8] = include_bytes!("../tests/fixtures/traces/canary.boot.txt");

    fn calls(log: &[u8]) -> Vec<(Event, Call)> {
        parse(log)
            .events
            .into_iter()
            .filter(|e| e.exit)
            .map(|e| {
                let c = decode(&e).unwrap_or_else(|| panic!("undecodable: {e:?}"));
                (e, c)
            })
            .collect()
    }

    #[test]
    fn a_recorded_server_trace_parses_completely() {
        let t = parse(MEMORY);
        assert_eq!(t.unparsed, 0);
        assert!(!t.truncated);
        assert_eq!(t.events.len(), 750);
        let opened = calls(MEMORY)
            .into_iter()
            .filter(|(e, c)| {
                e.succeeded()
                    && matches!(c, Call::Open(o) if o.path.ends_with("server-memory/dist/index.js"))
            })
            .count();
        assert!(opened >= 1);
    }

    #[test]
    fn failed_opens_carry_their_errno() {
        let e = parse(MEMORY)
            .events
            .into_iter()
            .find(|e| e.exit && e.syscall == "openat")
            .unwrap();
        assert_eq!(
            e.errno,
            Some(2),
            "the first open is the missing ld.so.cache: {e:?}"
        );
        assert!(!e.succeeded());
    }

    #[test]
    fn a_command_name_that_imitates_a_call_makes_the_line_unreadable_not_hidden() {
        // A task named "a X getpid(" (node: process.title) connecting somewhere.
        let spoof = "I1202 01:40:46.952751   32737 strace.go:605] [   7:   7] a X getpid( X connect(0x3 socket:[6], 0x7f {Family: AF_INET, Addr: 192.0.2.1, Port: 443}, 0x10) = 0 (0x0) (1µs)";
        assert_eq!(parse_line(spoof), None);
        let t = parse(format!("{spoof}\n").as_bytes());
        assert_eq!(t.unparsed, 1, "counted: the trace is incomplete");
        // A call that is never traced cannot be the one a line names.
        let untraced = "I1202 01:40:46.952751   32737 strace.go:605] [   7:   7] node X getpid() = 7 (0x7) (1µs)";
        assert_eq!(parse_line(untraced), None);
    }

    #[test]
    fn a_newline_in_a_command_name_makes_the_broken_line_unparsed() {
        // process.title = "a\n": the sentry's line is broken in two.
        let broken = "I1202 01:40:46.952751   32737 strace.go:605] [   7:   7] a\n X connect(0x3 socket:[6], 0x7f {Family: AF_INET, Addr: 192.0.2.1, Port: 443}, 0x10) = 0 (0x0) (1µs)\n";
        let t = parse(broken.as_bytes());
        assert!(t.events.is_empty());
        assert_eq!(t.unparsed, 1);
        // A record other than strace may span lines (the container's own EXEC line).
        let exec = "I1201 23:22:48.451964   14870 kernel.go:791] EXEC: [/bin/sh -c a\nb]\n";
        assert_eq!(parse(exec.as_bytes()).unparsed, 0);
    }

    #[test]
    fn relative_and_unclean_paths_are_read_as_the_file_they_name() {
        let open = |dir: &str, path: &str| {
            let line = format!(
                "I1202 01:40:15.124174   31483 strace.go:608] [   5:   5] node X openat({dir}, 0x7f {path}, O_RDONLY|O_CLOEXEC, 0o0) = 18 (0x12) (5µs)"
            );
            match decode(&parse_line(&line).expect("parsed")) {
                Some(Call::Open(o)) => Some(o.path),
                _ => None,
            }
        };
        let key = Some("/home/decoy/.ssh/id_rsa".to_owned());
        assert_eq!(open("AT_FDCWD /home/decoy", ".ssh/id_rsa"), key);
        assert_eq!(open("AT_FDCWD /", "/home/decoy//.ssh/./id_rsa"), key);
        assert_eq!(open("AT_FDCWD /", "/tmp/../home/decoy/.ssh/id_rsa"), key);
        assert_eq!(open("0x5 /home/decoy/.ssh", "id_rsa"), key);
        assert_eq!(
            open("0x5", "id_rsa"),
            None,
            "relative to nothing known: not read"
        );
        let link = "I1202 01:40:15.124174   31483 strace.go:608] [   5:   5] node X symlinkat(0x7f .ssh/id_rsa, AT_FDCWD /home/decoy, 0x7f /home/decoy/notes/x) = 0 (0x0) (5µs)";
        assert_eq!(
            decode(&parse_line(link).unwrap()),
            Some(Call::Link {
                target: "/home/decoy/notes/.ssh/id_rsa".into(),
                name: "/home/decoy/notes/x".into()
            }),
            "a relative target is relative to the link's directory"
        );
    }

    #[test]
    fn a_netlink_bind_is_read_as_netlink() {
        // node binds a netlink socket to list interfaces (recorded in an install phase).
        let line = "I1202 01:40:46.952751   32737 strace.go:605] [   1:   1] npm X bind(0x11 socket:[1], 0x7fd4ba82b6dc {Family: AF_NETLINK, PortID: 0, Groups: 0}, 0xc) = 0 (0x0) (22.222µs)";
        let e = parse_line(line).expect("parsed");
        assert_eq!(decode(&e), Some(Call::Bind(Address::Netlink)));
    }

    #[test]
    fn a_command_name_with_a_space_is_read_whole() {
        // npm sets its process title to "npm rebuild" (recorded in an install phase).
        let line = "I1202 01:40:15.124174   31483 strace.go:608] [   1:   1] npm rebuild X openat(AT_FDCWD /pkg, 0x7f38df1f6488 /tmp/.npm/_logs/x.log, O_WRONLY|O_APPEND|O_CLOEXEC|O_CREAT, 0o666) = 18 (0x12) (59.792µs)";
        let e = parse_line(line).expect("parsed");
        assert_eq!(
            (e.comm.as_str(), e.syscall.as_str(), e.ret),
            ("npm rebuild", "openat", Some(18))
        );
        let Some(Call::Open(open)) = decode(&e) else {
            panic!("not an open: {e:?}");
        };
        assert_eq!(open.path, "/tmp/.npm/_logs/x.log");
        assert!(open.write);
    }

    #[test]
    fn the_canary_trace_shows_the_read_the_write_the_programs_and_the_connections() {
        let calls = calls(CANARY);
        let find = |f: &dyn Fn(&Event, &Call) -> bool| calls.iter().find(|(e, c)| f(e, c)).cloned();
        let (read, _) = find(&|e, c| {
            e.succeeded()
                && matches!(c, Call::Open(o) if o.path == "/home/decoy/.ssh/id_rsa" && !o.write)
        })
        .expect("the key read");
        assert_eq!(read.comm, "cat");
        find(&|e, c| {
            e.succeeded()
                && matches!(c, Call::Open(o) if o.path == "/home/decoy/.bashrc" && o.write)
        })
        .expect("the rc write");
        let (_, exec) = find(&|_, c| matches!(c, Call::Exec(x) if x.path == "/usr/bin/python3"))
            .expect("python started");
        let Call::Exec(exec) = exec else {
            unreachable!()
        };
        assert_eq!(exec.argv[0], "/usr/bin/python3");
        assert!(
            exec.argv[2].contains("s.connect(('192.0.2.1',443))"),
            "{:?}",
            exec.argv
        );
        assert!(
            exec.envp
                .contains(&"GITHUB_TOKEN=ghp_canary_1234".to_owned())
        );
        let (e, _) = find(&|_, c| {
            *c == Call::Connect(Address::Inet {
                addr: "192.0.2.1".into(),
                port: 443,
            })
        })
        .expect("connect");
        assert_eq!(e.errno, Some(113));
        find(&|_, c| {
            *c == Call::Connect(Address::Inet {
                addr: "2001:db8::1".into(),
                port: 80,
            })
        })
        .expect("connect6");
        let spawned = calls
            .iter()
            .filter(|(_, c)| matches!(c, Call::Spawn(_)))
            .count();
        assert_eq!(spawned, 3, "three vforks of the shell");
    }

    #[test]
    fn threads_are_not_processes() {
        let threads = calls(MEMORY)
            .into_iter()
            .filter(|(e, _)| e.syscall == "clone")
            .all(|(_, c)| c == Call::Other);
        assert!(threads, "node's clones are threads");
    }

    #[test]
    fn a_line_that_names_a_syscall_but_breaks_the_format_is_counted() {
        let log = b"I1201 23:22:48.468820   14870 strace.go:608] [   2:   2] cat X openat(broken\n\
                    I1201 23:22:48.468820   14870 strace.go:608] [   2:   2] cat X openat(AT_FDCWD /, 0x1 /x, O_RDONLY, 0o0) = 3 (0x3) (1us)\n";
        let t = parse(log);
        assert_eq!((t.events.len(), t.unparsed), (1, 1));
    }

    #[test]
    fn hostile_argument_quoting_is_refused_not_guessed() {
        assert_eq!(split_args(r#"0x1 ["a", "b"#), None);
        assert_eq!(split_args("0x1 ]"), None);
        assert_eq!(
            split_args(r#"a, "b, c", [d, e]"#).unwrap(),
            vec!["a", r#""b, c""#, "[d, e]"]
        );
        assert_eq!(unquote(r#""a\x41\u00e9\n\"""#).unwrap(), "aAé\n\"");
        assert_eq!(unquote(r#""\q""#), None);
        assert_eq!(unquote(r#""\x4""#), None);
    }

    #[test]
    fn a_path_holding_a_comma_and_space_does_not_shift_the_flags() {
        let e = parse_line(r#"I1201 23:22:48.468820   14870 strace.go:608] [   2:   2] sh X openat(AT_FDCWD /home/decoy, 0x7f /tmp/a, O_RDONLY, 0o0) = 3 (0x3) (1µs)"#).unwrap();
        // The path `/tmp/a, O_RDONLY` would give five arguments: refused.
        let hostile = Event {
            args: "AT_FDCWD /home/decoy, 0x7f /tmp/a, O_WRONLY, O_RDONLY, 0o0".into(),
            ..e.clone()
        };
        assert_eq!(decode(&hostile), None);
        assert!(matches!(
            decode(&e),
            Some(Call::Open(Open { write: false, .. }))
        ));
    }

    /// An exit line of `call(args) = ret` by `sh` (pid 5) as runsc writes it.
    fn exit_line(call: &str, args: &str) -> Event {
        parse_line(&format!(
            "I1202 01:40:15.124174   31483 strace.go:608] [   5:   5] sh X {call}({args}) = 0 (0x0) (5µs)"
        ))
        .expect("parsed")
    }

    #[test]
    fn renames_links_and_new_directories_are_read_with_both_names() {
        let cwd = Some("/home/decoy");
        let call = |c: &str, a: &str| decode_in(&exit_line(c, a), cwd);
        let rename = |from: &str, to: &str| {
            Some(Call::Rename {
                from: from.into(),
                to: to.into(),
            })
        };
        assert_eq!(
            call("rename", "0x7f .cache/x, 0x7f .bashrc"),
            rename("/home/decoy/.cache/x", "/home/decoy/.bashrc")
        );
        assert_eq!(
            call(
                "renameat",
                "AT_FDCWD /tmp, 0x7f x, 0x3 /home/decoy/.ssh, 0x7f authorized_keys"
            ),
            rename("/tmp/x", "/home/decoy/.ssh/authorized_keys")
        );
        assert_eq!(
            call(
                "renameat2",
                "AT_FDCWD /tmp, 0x7f /tmp/x, AT_FDCWD /tmp, 0x7f /home/decoy/.profile, 0x0"
            ),
            rename("/tmp/x", "/home/decoy/.profile")
        );
        assert_eq!(
            call("link", "0x7f /tmp/k, 0x7f .ssh/authorized_keys"),
            Some(Call::Link {
                target: "/tmp/k".into(),
                name: "/home/decoy/.ssh/authorized_keys".into()
            })
        );
        assert_eq!(
            call(
                "linkat",
                "AT_FDCWD /tmp, 0x7f k, AT_FDCWD /home/decoy, 0x7f .ssh/authorized_keys, 0x400"
            ),
            Some(Call::Link {
                target: "/tmp/k".into(),
                name: "/home/decoy/.ssh/authorized_keys".into()
            })
        );
        assert_eq!(
            call("symlink", "0x7f ../../tmp/rc, 0x7f .bashrc"),
            Some(Call::Link {
                target: "/tmp/rc".into(),
                name: "/home/decoy/.bashrc".into()
            })
        );
        assert_eq!(
            call("mkdir", "0x7f .config/autostart, 0o755"),
            Some(Call::Mkdir("/home/decoy/.config/autostart".into()))
        );
        assert_eq!(
            call(
                "mkdirat",
                "0x4 /home/decoy/.config, 0x7f systemd/user, 0o700"
            ),
            Some(Call::Mkdir("/home/decoy/.config/systemd/user".into()))
        );
        assert_eq!(
            call("chdir", "0x7f .ssh"),
            Some(Call::Chdir("/home/decoy/.ssh".into()))
        );
        assert_eq!(
            call("fchdir", "0x3 /home/decoy/.config"),
            Some(Call::Chdir("/home/decoy/.config".into()))
        );
    }

    #[test]
    fn a_relative_path_with_no_known_working_directory_is_refused() {
        for (c, a) in [
            ("rename", "0x7f x, 0x7f .bashrc"),
            ("mkdir", "0x7f .config/autostart, 0o755"),
            ("link", "0x7f /tmp/k, 0x7f authorized_keys"),
            ("open", "0x7f .bashrc, O_WRONLY|O_APPEND, 0o0"),
        ] {
            assert_eq!(decode(&exit_line(c, a)), None, "{c}");
        }
        // An argument too many or too few is refused, not shifted.
        assert_eq!(
            decode_in(&exit_line("rename", "0x7f /a, 0x7f /b, 0x7f /c"), Some("/")),
            None
        );
        assert_eq!(
            decode_in(&exit_line("mkdirat", "0x7f /a, 0o7"), Some("/")),
            None
        );
        assert_eq!(decode(&exit_line("fchdir", "0x3 (bad FD)")), None);
    }

    #[test]
    fn a_line_shows_its_processs_working_directory_after_at_fdcwd() {
        let open = exit_line("openat", "AT_FDCWD /home/decoy/./x, 0x7f a, O_RDONLY, 0o0");
        assert_eq!(shown_cwd(&open).as_deref(), Some("/home/decoy/x"));
        let other = exit_line("openat", "0x3 /tmp, 0x7f a, O_RDONLY, 0o0");
        assert_eq!(shown_cwd(&other), None);
    }

    #[test]
    fn only_a_socket_connected_to_an_ip_address_carries_a_write_out() {
        let line = |call: &str, args: &str| {
            format!("I1202 01:40:15.124174   31483 strace.go:608] [   5:   5] node {call}({args})")
        };
        let log = [
            line("X connect", "0x3 socket:[7], 0x7f {Family: AF_INET, Addr: 192.0.2.1, Port: 443}, 0x10) = 0 (0x0) errno=115 (operation now in progress) (5µs"),
            line("X connect", "0x4 socket:[8], 0x7f {Family: AF_UNIX, Addr: \"/tmp/s\"}, 0x6e) = 0 (0x0) (5µs"),
            line("E write", "0x3 socket:[7], 0x7f \"key\", 0x3"),
            line("E write", "0x4 socket:[8], 0x7f \"key\", 0x3"),
            // A socket pair (node's pipe to a child) and a file.
            line("E write", "0x9 socket:[9], 0x7f \"key\", 0x3"),
            line("E write", "0x5 /home/decoy/socket:[7], 0x7f \"key\", 0x3"),
            line("E sendto", "0x6 socket:[10], 0x7f \"key\", 0x3, 0x0, 0x7f {Family: AF_INET6, Addr: 2001:db8::1, Port: 53}, 0x1c"),
            line("E sendto", "0x9 socket:[9], 0x7f \"key\", 0x3, 0x0, 0x0, 0x0"),
            line("E sendmsg", "0x6 socket:[11], 0x7f {name=0x7f00, namelen=16, iovecs=[{base=0x1, len=3}]}, 0x0"),
            line("E sendmsg", "0x9 socket:[9], 0x7f {name=0x0, namelen=0, iovecs=[{base=0x1, len=3}]}, 0x0"),
        ]
        .join("\n");
        let t = parse(log.as_bytes());
        assert_eq!(t.unparsed, 0);
        assert_eq!(t.outbound, [7].into_iter().collect());
        let leaving: Vec<bool> = t
            .events
            .iter()
            .filter(|e| !e.exit)
            .map(|e| t.leaves(e))
            .collect();
        assert_eq!(
            leaving,
            [true, false, false, false, true, false, true, false]
        );
    }
}
