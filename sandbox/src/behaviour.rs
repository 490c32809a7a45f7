//! What a traced run did, read from its [`trace::Trace`]: programs started, connections
//! attempted, decoys opened and files written where a server has no business writing — each
//! with the process that did it — and whether the trace let all of that be known.
//!
//! The rules (the same as HISTOR's where they exist, `../shared/reference/histor-peer.md` §6):
//! a failed open or exec does not count as done (the attempt is still in the trace); a decoy is
//! any of [`DECOY_PATHS`] under the sandbox's HOME, or `.env` in its working directory; a write
//! is flagged when it is to a [`PERSISTENCE_PATHS`] entry under HOME, or anywhere outside HOME,
//! `/tmp`, `/dev` and `/proc` (and the trees the caller allows). Names are not resolved (the
//! trace shows them as the program gave them), so a second name counts where it is made: a
//! link or rename landing on a persistence path or on a directory on the way to one
//! ([`persistence_parent`]) is a write, and a decoy or a directory holding one
//! ([`decoy_parent`]) renamed or linked to is a decoy read. Connections to the sandbox's
//! own resolver (`127.0.0.1:53`) are lookups ([`Behaviour::dns`]), not the package's network.
//!
//! **Honesty**: [`Behaviour::complete`] is false, with its reasons, whenever any traced line
//! could not be read, the trace was cut, or a call could not be decoded — an incomplete trace
//! is never presented as a clean one.

use std::collections::{BTreeMap, BTreeSet};

use crate::trace::{self, Address, Call, Trace};

/// Credentials and wallets planted under HOME, relative to it.
pub const DECOY_PATHS: [&str; 14] = [
    ".ssh/id_rsa",
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".kube/config",
    ".config/gcloud/application_default_credentials.json",
    ".config/solana/id.json",
    ".bash_history",
    ".zsh_history",
];

/// Paths under HOME whose modification makes code run later (shell start-up, SSH access,
/// autostart, package-manager configuration).
pub const PERSISTENCE_PATHS: [&str; 11] = [
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".ssh/authorized_keys",
    ".config/autostart/",
    ".config/systemd/user/",
    ".npmrc",
    ".pypirc",
    ".gitconfig",
];

/// glibc's name-service cache daemon socket (absent in the sandbox; every libc program tries it).
pub const NSCD_SOCKET: &str = "/var/run/nscd/socket";

/// Where the sandboxed run lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// HOME inside the sandbox (`/home/decoy`).
    pub home: String,
    /// The working directory inside (its `.env` is a decoy).
    pub cwd: String,
    /// Trees a write to is expected (besides HOME, `/tmp`, `/dev`, `/proc`).
    pub writable: Vec<String>,
}

/// One thing done, by whom, when.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Act {
    /// What: a path, a program, an address.
    pub what: String,
    /// The process (pid inside the sandbox) and its command name.
    pub pid: u32,
    /// The command name the process had.
    pub comm: String,
    /// When, as the trace writes it (`MMDD HH:MM:SS.micros`, UTC): which part of a phase it
    /// falls in (the calls' grace, the span the decoy HOME's witness compared).
    pub at: String,
}

/// What a trace shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Behaviour {
    /// Programs started (`execve` that succeeded).
    pub exec: Vec<Act>,
    /// Connections attempted (`host:port`; `unix:<path>`), whether they succeeded or not.
    pub network: Vec<Act>,
    /// Name lookups: connections to the sandbox's resolver (`127.0.0.1:53`). Which name was
    /// asked is the DNS sink's to tell.
    pub dns: Vec<Act>,
    /// Decoys opened (successfully).
    pub decoys: Vec<Act>,
    /// Writes to persistence paths or outside the expected trees.
    pub writes: Vec<Act>,
    /// Processes the run started, by pid: their parent.
    pub parents: BTreeMap<u32, u32>,
    /// New processes the process limit refused (`fork`/`vfork`/`clone` failing with EAGAIN).
    pub refused_spawns: usize,
    /// Everything could be read and decoded.
    pub complete: bool,
    /// Why not, when not.
    pub incomplete: BTreeSet<&'static str>,
}

/// Whether `rel`, a path relative to HOME, is a [`PERSISTENCE_PATHS`] entry: the file, or the
/// directory itself or anything in it.
pub fn persistence_rel(rel: &str) -> bool {
    PERSISTENCE_PATHS.iter().any(|p| match p.strip_suffix('/') {
        Some(dir) => rel == dir || rel.starts_with(p),
        None => rel == *p,
    })
}

/// Whether `rel`, a path relative to HOME, is a directory on the way to a
/// [`PERSISTENCE_PATHS`] entry (`.ssh`, `.config`, `.config/systemd`): a link or a directory
/// renamed there puts what it holds at the persistence path.
pub fn persistence_parent(rel: &str) -> bool {
    ancestor(&PERSISTENCE_PATHS, rel)
}

/// Whether `rel`, a path relative to HOME, is a directory on the way to a [`DECOY_PATHS`]
/// entry (`.ssh`, `.aws`, `.config`, `.config/gh`, …): renamed (or linked to), the decoys in
/// it are read under a name that is not theirs.
pub fn decoy_parent(rel: &str) -> bool {
    ancestor(&DECOY_PATHS, rel)
}

/// Whether `rel` is a directory strictly above one of `paths` (HOME itself is not).
fn ancestor(paths: &[&str], rel: &str) -> bool {
    !rel.is_empty()
        && paths.iter().any(|p| {
            p.trim_end_matches('/')
                .strip_prefix(rel)
                .is_some_and(|rest| rest.starts_with('/'))
        })
}

fn under(path: &str, tree: &str) -> bool {
    let tree = tree.trim_end_matches('/');
    path == tree
        || path
            .strip_prefix(tree)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl Layout {
    /// `path` relative to HOME, when it is under HOME.
    fn in_home<'p>(&self, path: &'p str) -> Option<&'p str> {
        path.strip_prefix(self.home.trim_end_matches('/'))
            .and_then(|r| r.strip_prefix('/'))
    }

    fn decoy(&self, path: &str) -> bool {
        self.in_home(path)
            .is_some_and(|rel| DECOY_PATHS.contains(&rel))
            || path == format!("{}/.env", self.cwd.trim_end_matches('/'))
    }

    /// A decoy, or a directory under HOME on the way to one ([`decoy_parent`]).
    fn decoy_or_parent(&self, path: &str) -> bool {
        self.decoy(path) || self.in_home(path).is_some_and(decoy_parent)
    }

    /// A [`PERSISTENCE_PATHS`] entry under HOME: a file, or a directory (`…/`) itself or
    /// anything in it.
    pub fn persistence(&self, path: &str) -> bool {
        self.in_home(path).is_some_and(persistence_rel)
    }

    /// A persistence path, or a directory under HOME on the way to one
    /// ([`persistence_parent`]).
    fn persistence_or_parent(&self, path: &str) -> bool {
        self.persistence(path) || self.in_home(path).is_some_and(persistence_parent)
    }

    fn suspicious_write(&self, path: &str) -> bool {
        let in_home = path
            .strip_prefix(self.home.trim_end_matches('/'))
            .is_some_and(|r| r.starts_with('/'));
        if in_home {
            return self.persistence(path);
        }
        let expected = ["/tmp", "/dev", "/proc"]
            .iter()
            .map(|s| s.to_string())
            .chain(self.writable.iter().cloned());
        !expected.into_iter().any(|t| under(path, &t))
    }
}

/// The behaviour `trace` shows for a run laid out as `layout`.
///
/// Relative paths of calls without a directory fd (`rename`, `mkdir`, `link`, …) are read
/// against the process's working directory: the one its lines show after `AT_FDCWD`, changed
/// by `chdir`/`fchdir`, inherited by a new process from its parent; unknown, the call is
/// `unparsed-syscall`.
pub fn of(trace: &Trace, layout: &Layout) -> Behaviour {
    let mut b = Behaviour::default();
    if trace.unparsed > 0 {
        b.incomplete.insert("unparsed-trace-line");
    }
    if trace.truncated {
        b.incomplete.insert("trace-truncated");
    }
    if trace.events.is_empty() {
        b.incomplete.insert("trace-empty");
    }
    let mut cwd: BTreeMap<u32, String> = BTreeMap::new();
    for e in trace.events.iter().filter(|e| e.exit) {
        if let Some(dir) = trace::shown_cwd(e) {
            cwd.insert(e.pid, dir);
        }
        let Some(call) = trace::decode_in(e, cwd.get(&e.pid).map(String::as_str)) else {
            b.incomplete.insert("unparsed-syscall");
            continue;
        };
        let act = |what: String| Act {
            what,
            pid: e.pid,
            comm: e.comm.clone(),
            at: e.time.clone(),
        };
        match call {
            Call::Open(open) if e.succeeded() => {
                if layout.decoy(&open.path) {
                    b.decoys.push(act(open.path.clone()));
                }
                if open.write && layout.suspicious_write(&open.path) {
                    b.writes.push(act(open.path));
                }
            }
            Call::Exec(exec) if e.succeeded() => b.exec.push(act(exec.path)),
            // A second name for a decoy or a persistence path, or for a directory on the way
            // to one: reading or writing through it is not seen as such, so making it counts;
            // so does a new name landing on a persistence path or a directory on the way to
            // one (a hard link onto `authorized_keys`, a symbolic `.bashrc`, `~/.ssh` made a
            // link to a staged directory holding an `authorized_keys`).
            Call::Link { target, name } if e.succeeded() => {
                if layout.decoy_or_parent(&target) {
                    b.decoys.push(act(format!("link to {target}")));
                }
                if layout.persistence_or_parent(&target) {
                    b.writes.push(act(format!("link to {target}")));
                }
                if layout.suspicious_write(&name) || layout.persistence_or_parent(&name) {
                    b.writes.push(act(format!("link onto {name}")));
                }
            }
            // A file (or a directory) written elsewhere and renamed onto a persistence path,
            // or onto a directory on the way to one, is written there; a decoy, or a directory
            // holding one, renamed away is read under its new name, unseen: the rename counts.
            Call::Rename { from, to } if e.succeeded() => {
                if layout.decoy_or_parent(&from) {
                    b.decoys.push(act(format!("rename of {from}")));
                }
                if layout.suspicious_write(&to) || layout.persistence_or_parent(&to) {
                    b.writes.push(act(format!("rename onto {to}")));
                }
            }
            // A persistence directory made (`~/.config/autostart`, a crontab spool) is
            // persistence before anything is written in it.
            Call::Mkdir(path) if e.succeeded() && layout.suspicious_write(&path) => {
                b.writes.push(act(format!("mkdir {path}")));
            }
            Call::Chdir(dir) if e.succeeded() => {
                cwd.insert(e.pid, dir);
            }
            Call::Connect(Address::Inet { addr, port }) if addr == "127.0.0.1" && port == 53 => {
                b.dns.push(act(format!("{addr}:{port}")));
            }
            Call::Connect(Address::Inet { addr, port }) => {
                let host = if addr.contains(':') {
                    format!("[{addr}]:{port}")
                } else {
                    format!("{addr}:{port}")
                };
                b.network.push(act(host));
            }
            // glibc asks nscd for user and host names before its own files: the C library's
            // doing, whatever the program.
            Call::Connect(Address::Unix(path)) if path == NSCD_SOCKET => {}
            Call::Connect(Address::Unix(path)) => b.network.push(act(format!("unix:{path}"))),
            Call::Spawn(child) if e.succeeded() => {
                b.parents.insert(child, e.pid);
                // A new process starts where its parent is.
                if let Some(dir) = cwd.get(&e.pid).cloned() {
                    cwd.entry(child).or_insert(dir);
                }
            }
            // EAGAIN: the process limit (`RLIMIT_NPROC`) refused a new process.
            Call::Spawn(_) if e.errno == Some(11) => b.refused_spawns += 1,
            _ => {}
        }
    }
    b.complete = b.incomplete.is_empty();
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &[u8] = include_bytes!("../tests/fixtures/traces/canary.boot.txt");
    const MEMORY: &[u8] = include_bytes!("../tests/fixtures/traces/server-memory.boot.txt");

    fn layout() -> Layout {
        Layout {
            home: "/home/decoy".into(),
            cwd: "/home/decoy".into(),
            writable: vec![],
        }
    }

    fn whats(acts: &[Act]) -> Vec<&str> {
        acts.iter().map(|a| a.what.as_str()).collect()
    }

    #[test]
    fn the_canary_script_reads_a_key_persists_starts_programs_and_connects() {
        let b = of(&trace::parse(CANARY), &layout());
        assert!(b.complete, "{:?}", b.incomplete);
        assert_eq!(whats(&b.decoys), ["/home/decoy/.ssh/id_rsa"]);
        assert_eq!(
            b.decoys[0].comm, "cat",
            "attributed to the process that read it"
        );
        assert_eq!(whats(&b.writes), ["/home/decoy/.bashrc"]);
        assert_eq!(b.writes[0].comm, "sh");
        assert_eq!(
            whats(&b.exec),
            ["/usr/bin/cat", "/usr/bin/cat", "/usr/bin/python3"]
        );
        assert_eq!(whats(&b.network), ["192.0.2.1:443", "[2001:db8::1]:80"]);
        // The shell's three children.
        assert_eq!(b.parents.values().filter(|p| **p == 1).count(), 3);
    }

    #[test]
    fn a_real_server_that_only_lists_its_tools_does_nothing_flagged() {
        let b = of(&trace::parse(MEMORY), &layout());
        assert!(b.complete, "{:?}", b.incomplete);
        assert!(b.exec.is_empty() && b.network.is_empty(), "{b:?}");
        assert!(b.decoys.is_empty() && b.writes.is_empty(), "{b:?}");
    }

    #[test]
    fn an_unreadable_trace_is_incomplete_not_clean() {
        let b = of(&trace::parse(b""), &layout());
        assert!(!b.complete);
        assert!(b.incomplete.contains("trace-empty"));
        let broken = b"I1201 23:22:48.468820   1 strace.go:608] [   2:   2] cat X openat(broken\n";
        let b = of(&trace::parse(broken), &layout());
        assert!(b.incomplete.contains("unparsed-trace-line"), "{b:?}");
    }

    #[test]
    fn writes_are_judged_by_where_they_go() {
        let l = Layout {
            writable: vec!["/pkg/site".into()],
            ..layout()
        };
        for (path, flagged) in [
            ("/home/decoy/.bashrc", true),
            ("/home/decoy/.ssh/authorized_keys", true),
            ("/home/decoy/.config/autostart/x.desktop", true),
            ("/home/decoy/.config/autostart", true),
            ("/home/decoy/.config/systemd/user", true),
            ("/home/decoy/.config/systemd", false),
            ("/var/spool/cron/crontabs", true),
            ("/var/spool/cron/crontabs/decoy", true),
            ("/home/decoy/notes.txt", false),
            ("/tmp/cache", false),
            ("/pkg/site/x.pyc", false),
            ("/pkg/sitecustomize.py", true),
            ("/usr/lib/python3/dist-packages/evil.pth", true),
            ("/dev/null", false),
        ] {
            assert_eq!(l.suspicious_write(path), flagged, "{path}");
        }
        assert!(layout().decoy("/home/decoy/.env"));
        assert!(!layout().decoy("/home/decoy/.ssh/known_hosts"));
    }

    /// A trace of `lines` (`call(args) = ret`) by `node`, pid 5, in order.
    fn trace_of(lines: &[&str]) -> Trace {
        let log: String = lines
            .iter()
            .map(|l| {
                format!(
                    "I1202 01:40:15.124174   31483 strace.go:608] [   5:   5] node X {l} (5µs)\n"
                )
            })
            .collect();
        trace::parse(log.as_bytes())
    }

    #[test]
    fn a_rename_a_link_or_a_new_directory_onto_a_persistence_path_is_a_write() {
        let b = of(
            &trace_of(&[
                "openat(AT_FDCWD /home/decoy, 0x7f .cache/rc, O_WRONLY|O_CREAT, 0o644) = 3 (0x3)",
                "rename(0x7f .cache/rc, 0x7f .bashrc) = 0 (0x0)",
                "link(0x7f /home/decoy/.cache/k, 0x7f /home/decoy/.ssh/authorized_keys) = 0 (0x0)",
                "mkdirat(AT_FDCWD /home/decoy, 0x7f .config/autostart, 0o755) = 0 (0x0)",
                "mkdir(0x7f /home/decoy/.cache/other, 0o755) = 0 (0x0)",
                // Failed: not done.
                "rename(0x7f /tmp/x, 0x7f /home/decoy/.profile) = 0 (0x0) errno=18 (invalid cross-device link)",
                "rename(0x7f /home/decoy/.ssh/id_rsa, 0x7f /tmp/k) = 0 (0x0)",
            ]),
            &layout(),
        );
        assert!(b.complete, "{:?}", b.incomplete);
        assert_eq!(
            whats(&b.writes),
            [
                "rename onto /home/decoy/.bashrc",
                "link onto /home/decoy/.ssh/authorized_keys",
                "mkdir /home/decoy/.config/autostart",
            ]
        );
        assert_eq!(whats(&b.decoys), ["rename of /home/decoy/.ssh/id_rsa"]);
    }

    #[test]
    fn a_directory_on_the_way_to_a_persistence_path_or_a_decoy_renamed_or_linked_counts() {
        // `~/.ssh` moved away (its key read as `~/.cache/old/id_rsa`, unseen), an
        // `authorized_keys` staged elsewhere and `~/.ssh` made a link to it: sshd follows it.
        let b = of(
            &trace_of(&[
                "rename(0x7f /home/decoy/.ssh, 0x7f /home/decoy/.cache/old) = 0 (0x0)",
                "openat(AT_FDCWD /home/decoy, 0x7f .cache/old/id_rsa, O_RDONLY, 0o0) = 3 (0x3)",
                "openat(AT_FDCWD /home/decoy, 0x7f .cache/s/authorized_keys, O_WRONLY|O_CREAT, 0o600) = 3 (0x3)",
                "symlink(0x7f /home/decoy/.cache/s, 0x7f /home/decoy/.ssh) = 0 (0x0)",
                // `.config` a link to a staged tree (its `autostart`), or to another place.
                "symlinkat(0x7f /home/decoy/.cache/c, AT_FDCWD /home/decoy, 0x7f .config) = 0 (0x0)",
                "rename(0x7f /home/decoy/.cache/sd, 0x7f /home/decoy/.config/systemd) = 0 (0x0)",
                // A second name for a directory holding decoys, or a persistence directory.
                "symlink(0x7f /home/decoy/.aws, 0x7f /home/decoy/.x) = 0 (0x0)",
                "renameat(AT_FDCWD /home/decoy, 0x7f .config/gh, AT_FDCWD /home/decoy, 0x7f .y) = 0 (0x0)",
                // Not on the way to either: nothing.
                "rename(0x7f /home/decoy/.cache/a, 0x7f /home/decoy/.cache/b) = 0 (0x0)",
                "symlink(0x7f /home/decoy/notes, 0x7f /home/decoy/.n) = 0 (0x0)",
                "mkdir(0x7f /home/decoy/.ssh, 0o700) = 0 (0x0)",
                // HOME itself is not a directory on the way (it is every path's).
                "rename(0x7f /home/decoy, 0x7f /tmp/h) = 0 (0x0)",
            ]),
            &layout(),
        );
        assert!(b.complete, "{:?}", b.incomplete);
        assert_eq!(
            whats(&b.writes),
            [
                "link onto /home/decoy/.ssh",
                "link onto /home/decoy/.config",
                "rename onto /home/decoy/.config/systemd",
            ]
        );
        assert_eq!(
            whats(&b.decoys),
            [
                "rename of /home/decoy/.ssh",
                "link to /home/decoy/.aws",
                "rename of /home/decoy/.config/gh",
            ]
        );
        assert_eq!(
            b.writes[0].at, "1202 01:40:15.124174",
            "each act has its time"
        );
        for (rel, persistence, decoy) in [
            (".ssh", true, true),
            (".config", true, true),
            (".config/systemd", true, false),
            (".config/gh", false, true),
            (".aws", false, true),
            (".ssh/authorized_keys", false, false),
            (".config/systemd/user", false, false),
            (".sshx", false, false),
            ("", false, false),
        ] {
            assert_eq!(persistence_parent(rel), persistence, "{rel}");
            assert_eq!(decoy_parent(rel), decoy, "{rel}");
        }
    }

    #[test]
    fn relative_paths_follow_the_working_directory_a_process_changed_to() {
        let b = of(
            &trace_of(&[
                "openat(AT_FDCWD /pkg, 0x7f x, O_RDONLY, 0o0) = 3 (0x3)",
                "chdir(0x7f /home/decoy/.ssh) = 0 (0x0)",
                "link(0x7f /tmp/k, 0x7f authorized_keys) = 0 (0x0)",
                "fchdir(0x4 /home/decoy) = 0 (0x0)",
                "rename(0x7f /tmp/rc, 0x7f .bashrc) = 0 (0x0)",
            ]),
            &layout(),
        );
        assert!(b.complete, "{:?}", b.incomplete);
        assert_eq!(
            whats(&b.writes),
            [
                "link onto /home/decoy/.ssh/authorized_keys",
                "rename onto /home/decoy/.bashrc"
            ]
        );
        // No directory known: what the call named is unknown, and the trace says so.
        let b = of(
            &trace_of(&["rename(0x7f rc, 0x7f .bashrc) = 0 (0x0)"]),
            &layout(),
        );
        assert!(b.incomplete.contains("unparsed-syscall"), "{b:?}");
    }
}
