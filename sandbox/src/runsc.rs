//! One gVisor sandbox: an OCI bundle written for it and `runsc run` with the server's stdin and
//! stdout as pipes.
//!
//! The bundle ([`Bundle::create`]) has a read-only root holding only mount points (and the
//! `bin`, `lib`, `lib64`, `sbin` links into `/usr`), a minimal `/etc` (passwd, group, hosts,
//! resolv.conf naming the in-sandbox DNS sink, nsswitch.conf), the host's `/usr` read-only, and
//! the given mounts; a non-root uid with every capability set empty and `noNewPrivileges`;
//! fresh pid, network, ipc, uts and mount namespaces; [`BundleSpec::memory_bytes`] as the
//! host memory cgroup's limit (an overrun kills the whole sandbox: exit 137) and
//! [`BundleSpec::host_pids`] as the host pids cgroup's (a backstop: on the ptrace platform the
//! sentry itself needs host threads per guest process, and panics at the limit).
//!
//! `runsc` runs with `--network=none` (loopback only inside), its state under the bundle's
//! directory, and — when asked — its syscall trace (`--strace`) in a debug-log directory.
//! [`Sandbox`] kills and deletes the container when dropped, whatever happened.
//!
//! What it does not do: choose what runs (the observer does) or read the trace (see the trace
//! parser).

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::json;

/// Where Debian's `runsc` package installs it; the first that exists is used.
pub const RUNSC_PATHS: [&str; 2] = ["/usr/bin/runsc", "/usr/sbin/runsc"];

/// The `runsc` binary, if installed.
pub fn runsc_path() -> Option<PathBuf> {
    RUNSC_PATHS.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// A bind mount into the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Where it appears inside.
    pub destination: String,
    /// The host path.
    pub source: PathBuf,
    /// Read-write (else read-only).
    pub writable: bool,
}

/// What runs in a bundle, and under which limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleSpec {
    /// The program and its arguments (absolute path first).
    pub args: Vec<String>,
    /// The whole environment (`NAME=value`); nothing of the host's is passed.
    pub env: Vec<String>,
    /// The working directory inside.
    pub cwd: String,
    /// The uid and gid it runs as (not root).
    pub uid: u32,
    /// Bind mounts besides the read-only `/usr`.
    pub mounts: Vec<Mount>,
    /// The host memory cgroup's limit for the whole sandbox.
    pub memory_bytes: u64,
    /// The host pids cgroup's limit for the whole sandbox (a backstop, see the module docs).
    pub host_pids: u64,
    /// `RLIMIT_NOFILE` inside.
    pub open_files: u64,
    /// `RLIMIT_NPROC` inside: processes of the sandbox's uid (gVisor enforces it: a fork past
    /// it fails with EAGAIN, before the host pids cgroup is reached).
    pub processes: u64,
    /// `args[0]` is a harness (the probe) that runs as root inside with only `CAP_SETUID` and
    /// `CAP_SETGID`, and starts the program it is given as `uid` — which then has no
    /// capability at all. Otherwise `args` runs as `uid` from the start.
    pub root_harness: bool,
    /// The certificate file the system's trust store is inside (`None`: no store): every
    /// [`SYSTEM_CA_FILES`] path is a link to it, so OpenSSL's default paths (Debian's
    /// `/usr/lib/ssl/cert.pem` leads to the first), Go, curl and anything else reading the
    /// system store trust what it holds — the run's trap CA.
    pub ca_bundle: Option<String>,
}

/// Where the system's trust store is looked for (Debian's, then the Red Hat and BSD paths Go
/// also reads): links to [`BundleSpec::ca_bundle`] in the bundle's `/etc`.
pub const SYSTEM_CA_FILES: [&str; 3] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/cert.pem",
    "/etc/pki/tls/certs/ca-bundle.crt",
];

/// An OCI bundle on disk, removed when dropped.
#[derive(Debug)]
pub struct Bundle {
    dir: PathBuf,
}

impl Bundle {
    /// Write a bundle for `spec` into `dir` (created; must not exist).
    pub fn create(dir: &Path, spec: &BundleSpec) -> io::Result<Bundle> {
        if spec.uid == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a sandboxed server never runs as root",
            ));
        }
        std::fs::create_dir(dir)?;
        let bundle = Bundle {
            dir: dir.to_owned(),
        };
        let root = dir.join("rootfs");
        for d in ["usr", "etc", "tmp", "proc", "dev", "sys"] {
            std::fs::create_dir_all(root.join(d))?;
        }
        for m in &spec.mounts {
            std::fs::create_dir_all(root.join(m.destination.trim_start_matches('/')))?;
        }
        for (link, to) in [
            ("bin", "usr/bin"),
            ("lib", "usr/lib"),
            ("lib64", "usr/lib64"),
            ("sbin", "usr/sbin"),
        ] {
            std::os::unix::fs::symlink(to, root.join(link))?;
        }
        let uid = spec.uid;
        let etc = root.join("etc");
        std::fs::write(
            etc.join("passwd"),
            format!("root:x:0:0::/root:/bin/sh\ndecoy:x:{uid}:{uid}::/home/decoy:/bin/sh\n"),
        )?;
        std::fs::write(etc.join("group"), format!("root:x:0:\ndecoy:x:{uid}:\n"))?;
        std::fs::write(etc.join("hosts"), "127.0.0.1 localhost\n::1 localhost\n")?;
        std::fs::write(etc.join("resolv.conf"), "nameserver 127.0.0.1\n")?;
        std::fs::write(
            etc.join("nsswitch.conf"),
            "passwd: files\ngroup: files\nhosts: files dns\n",
        )?;
        if let Some(ca) = &spec.ca_bundle {
            for file in SYSTEM_CA_FILES {
                let link = root.join(file.trim_start_matches('/'));
                if let Some(parent) = link.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::os::unix::fs::symlink(ca, link)?;
            }
        }
        std::fs::write(
            dir.join("config.json"),
            serde_json::to_vec_pretty(&config(spec))?,
        )?;
        Ok(bundle)
    }

    /// The bundle's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Bundle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The capabilities of a root harness: enough to start a program as another uid, nothing else
/// (in gVisor an unprivileged task may bind low ports inside its own network stack, so the
/// harness's traps need no `CAP_NET_BIND_SERVICE`).
pub const HARNESS_CAPABILITIES: [&str; 2] = ["CAP_SETUID", "CAP_SETGID"];

/// The OCI runtime configuration of `spec`.
fn config(spec: &BundleSpec) -> serde_json::Value {
    let bind = |destination: &str, source: &Path, writable: bool| {
        json!({"destination": destination, "type": "bind", "source": source,
               "options": ["rbind", if writable { "rw" } else { "ro" }, "nosuid", "nodev"]})
    };
    let mut mounts = vec![
        json!({"destination": "/proc", "type": "proc", "source": "proc"}),
        json!({"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "noexec"]}),
        json!({"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]}),
        json!({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev"]}),
        bind("/usr", Path::new("/usr"), false),
    ];
    mounts.extend(
        spec.mounts
            .iter()
            .map(|m| bind(&m.destination, &m.source, m.writable)),
    );
    let none: [&str; 0] = [];
    let (user, caps): (u32, &[&str]) = if spec.root_harness {
        (0, &HARNESS_CAPABILITIES)
    } else {
        (spec.uid, &none)
    };
    json!({
        "ociVersion": "1.0.2",
        "process": {
            "terminal": false,
            "user": {"uid": user, "gid": user},
            "args": spec.args,
            "env": spec.env,
            "cwd": spec.cwd,
            "noNewPrivileges": true,
            "capabilities": {"bounding": caps, "effective": caps, "permitted": caps,
                             "inheritable": none, "ambient": none},
            "rlimits": [{"type": "RLIMIT_NOFILE", "hard": spec.open_files, "soft": spec.open_files},
                        {"type": "RLIMIT_NPROC", "hard": spec.processes, "soft": spec.processes}],
        },
        "root": {"path": "rootfs", "readonly": true},
        "hostname": "decoy-host",
        "mounts": mounts,
        "linux": {
            "namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"},
                           {"type": "uts"}, {"type": "mount"}],
            "resources": {"memory": {"limit": spec.memory_bytes},
                          "pids": {"limit": spec.host_pids}},
        },
    })
}

/// A running sandbox. Dropping it kills and deletes the container, then removes its bundle.
#[derive(Debug)]
pub struct Sandbox {
    /// Dropped after the container is deleted (its state lives in the bundle's directory).
    _bundle: Bundle,
    runsc: PathBuf,
    state: PathBuf,
    id: String,
    stopped: bool,
    /// The `runsc run` process; its stdin and stdout are the server's.
    pub child: tokio::process::Child,
}

/// How `runsc` is asked to trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Where the debug logs (the `*.boot.txt` trace among them) are written, outside the sandbox.
    pub log_dir: PathBuf,
    /// The syscalls traced.
    pub syscalls: Vec<String>,
}

impl Sandbox {
    /// `runsc run` `bundle` as container `id` (no network but loopback), with the server's
    /// stdin and stdout piped and its stderr piped too.
    pub fn spawn(
        runsc: &Path,
        bundle: Bundle,
        id: &str,
        trace: Option<&Trace>,
    ) -> io::Result<Sandbox> {
        let state = bundle.dir().join("state");
        std::fs::create_dir_all(&state)?;
        let mut cmd = tokio::process::Command::new(runsc);
        // The trace's timestamps are the sentry's wall clock in its time zone: UTC, always, so
        // that they compare with the observer's own (`observe` splits phases by time).
        cmd.env_clear()
            .env("TZ", "UTC")
            .arg(format!("--root={}", state.display()))
            .arg("--network=none");
        if let Some(t) = trace {
            std::fs::create_dir_all(&t.log_dir)?;
            cmd.arg("--strace")
                .arg(format!("--strace-syscalls={}", t.syscalls.join(",")))
                .arg(format!("--debug-log={}/", t.log_dir.display()));
        }
        cmd.arg("run")
            .arg(format!("--bundle={}", bundle.dir().display()))
            .arg(id)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = cmd.spawn()?;
        Ok(Sandbox {
            _bundle: bundle,
            runsc: runsc.to_owned(),
            state,
            id: id.to_owned(),
            stopped: false,
            child,
        })
    }

    /// Kill the container (SIGKILL to every process in it) and delete it; waits for `runsc`.
    pub async fn stop(mut self) -> Option<std::process::ExitStatus> {
        self.kill_and_delete();
        self.child.wait().await.ok()
    }

    fn kill_and_delete(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        let runsc = |args: &[&str]| {
            let _ = std::process::Command::new(&self.runsc)
                .env_clear()
                .arg(format!("--root={}", self.state.display()))
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        };
        runsc(&["kill", "--all", &self.id, "KILL"]);
        runsc(&["delete", "--force", &self.id]);
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.kill_and_delete();
    }
}
