//! One package observed in gVisor ([`Observer::observe`] of an [`Artifact`]: an npm tarball or
//! a PyPI wheel): its tree made on the host without running its code ([`prepare`]: npm with
//! scripts disabled, pip with wheels only), its install-time code run traced in a sandbox of its
//! own (the install phase: `npm rebuild` of the install scripts, or a Python adding the tree's
//! `.pth` files and `sitecustomize`), then the server started traced in a fresh sandbox (`bin` with node, or the
//! console script `uvx` would run, by a shim), its tools listed (the startup phase) and each
//! called once with canary arguments (the calls phase); what each phase did, read from its
//! trace, and the findings. npm and PyPI share everything but the tree and the command lines.
//!
//! Every run gets a fresh decoy HOME and two canaries: the decoy canary in every decoy file and
//! token (seen again in a tool result or leaving through a socket: a leak), and the argument
//! canary in the tool calls' arguments (a tool that echoes its arguments leaks nothing).
//!
//! Phases are split by time: the trace's timestamps (the sentry's UTC wall clock) against the
//! moment the tool listing was read. Events of the harness itself (npm running the scripts in
//! the install phase; the probe starting a program) are not the package's.
//!
//! Limits ([`Limits::default`]): [`INSTALL_TIMEOUT`], [`STARTUP_TIMEOUT`], [`CALL_TIMEOUT`],
//! [`CALLS_TIMEOUT`], [`MAX_CALLS`], [`MEMORY_BYTES`], [`HOST_PIDS`], [`OPEN_FILES`],
//! [`RUN_DISK_BYTES`] (each run's directory is a tmpfs of that size: the tree, the decoy HOME
//! and the traces cannot fill the host's disk), [`MAX_STDERR_BYTES`] (the rest is read and
//! dropped). A time, memory or size overrun ends the run with a named [`Status`]; a call
//! overrun is that call's outcome, and the calls phase is then not complete.
//!
//! With the probe (`Observer::probe`) each sandbox's pid 1 is `toolmark-probe`: the DNS sink
//! and the traps, their records read by [`crate::traps`]. [`MAX_PROCESSES`] is the guest-side
//! process limit (a fork bomb: `too-many-processes`).
//!
//! `no-wheel` and `not-found` are the fetch's statuses ([`Report::unfetched`]): nothing runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, BufReader};
use toolmark_mcp::session::{
    Answer, CallResult, Failure, Handshake, Identity, Limits as SessionLimits, Listing, Session,
};

use toolmark_observation::observe::{Observation, Sandboxed, Status as ObsStatus, Via};
use toolmark_observation::sandbox::{self as facts, PackageReport, ReportDigests, SandboxFacts};

use crate::arguments::{self, Arguments};
use crate::behaviour::{self, Behaviour, Layout};
use crate::canary::{Match, Search};
use crate::decoys::{self, Canary};
use crate::findings::{self, Finding, Phase, PhaseFacts};
use crate::home;
use crate::prepare::{self, NpmOptions, NpmTree, PipOptions, PrepareError, PypiTree};
use crate::runsc::{Bundle, BundleSpec, Mount, Sandbox, Trace as TraceSpec};
use crate::stdio::{Stdio, StdioError};
use crate::trace;
use crate::traps::Traps;
use toolmark_observation::registry::{Ecosystem, pep503};

/// Longest the install phase (`npm rebuild` of the tree's install scripts, or a wheel tree's
/// `.pth` code and `sitecustomize`) may run.
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest from start until the tools are listed.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(45);
/// Longest the surface beyond the tools (prompts, resources, templates, `ui://` pages) may
/// take after the listing, before the calls: a server answers these as it answered
/// `tools/list`; what is not read by then is recorded as unfinished (`timeout`) and the calls
/// go on. The same as the crawler's `SURFACE_DEADLINE` less the card, which a package has not.
pub const SURFACE_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest one tool call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(8);
/// Longest all tool calls together may take.
pub const CALLS_TIMEOUT: Duration = Duration::from_secs(150);
/// Most tools called (HISTOR: 15).
pub const MAX_CALLS: usize = 15;
/// The memory limit of one sandbox (host memory cgroup; an overrun is `out-of-memory`).
pub const MEMORY_BYTES: u64 = 512 * 1024 * 1024;
/// The host pids cgroup's limit of one sandbox (a backstop: see `runsc`).
pub const HOST_PIDS: u64 = 4096;
/// `RLIMIT_NOFILE` inside.
pub const OPEN_FILES: u64 = 1024;
/// `RLIMIT_NPROC` inside: processes the package's uid may have at once (HISTOR: 256 PIDs). A
/// fork past it fails; a run that did not list its tools and was refused a process is
/// `too-many-processes`.
pub const MAX_PROCESSES: u64 = 256;
/// Most bytes of a phase's stderr kept (the rest is read and dropped).
pub const MAX_STDERR_BYTES: usize = 64 * 1024;
/// How long a server that did not list its tools is given to exit after its stdin is closed,
/// before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(1);
/// How long the server is kept running after its last answer (stdin closed, as a client
/// would) before it is killed: what it does then — a timer, a thread outliving stdin's close —
/// is recorded and is the calls phase's. A server that exits sooner ends it sooner.
pub const CALLS_GRACE: Duration = Duration::from_secs(3);
/// How long the output of a killed sandbox may take to end.
const DRAIN_GRACE: Duration = Duration::from_secs(5);
/// The size of each run's directory (a tmpfs): the tree and the decoy HOME.
pub const RUN_DISK_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// The size of the tmpfs holding a run's records (traces, the probe's records), mounted apart
/// so that a package filling its own trees cannot cut what is recorded of it.
pub const RECORDS_DISK_BYTES: u64 = 1024 * 1024 * 1024;
/// Where in a run's directory the records' tmpfs is.
const RECORDS: &str = "records";

/// The uid the package runs as inside (and owns its decoy HOME on the host).
pub const SANDBOX_UID: u32 = 1000;
/// HOME inside.
pub const HOME: &str = "/home/decoy";
/// The package tree inside.
pub const PKG: &str = "/pkg";
/// The variables that point the runtimes (node, Python's ssl and requests, curl) at the trap
/// CA the probe makes for the run.
pub const TRAP_CA_VARIABLES: [&str; 4] = [
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];
/// The trap CA's certificate inside the sandbox (the probe writes it at its start): what the
/// runtimes' variables ([`TRAP_CA_VARIABLES`]), the system store
/// ([`crate::runsc::SYSTEM_CA_FILES`]) and a wheel tree's own bundles
/// ([`prepare::trust_trap_ca`]) name.
pub const TRAP_CA: &str = "/out/ca.pem";
/// The decoy note a path argument names.
pub const NOTE: &str = "/home/decoy/notes/canary.txt";

/// The limits one observation runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// See [`INSTALL_TIMEOUT`].
    pub install: Duration,
    /// See [`STARTUP_TIMEOUT`].
    pub startup: Duration,
    /// See [`SURFACE_TIMEOUT`].
    pub surface: Duration,
    /// See [`CALL_TIMEOUT`].
    pub call: Duration,
    /// See [`CALLS_TIMEOUT`].
    pub calls: Duration,
    /// See [`MAX_CALLS`].
    pub max_calls: usize,
    /// See [`MEMORY_BYTES`].
    pub memory_bytes: u64,
    /// See [`CALLS_GRACE`].
    pub calls_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            install: INSTALL_TIMEOUT,
            startup: STARTUP_TIMEOUT,
            surface: SURFACE_TIMEOUT,
            call: CALL_TIMEOUT,
            calls: CALLS_TIMEOUT,
            max_calls: MAX_CALLS,
            memory_bytes: MEMORY_BYTES,
            calls_grace: CALLS_GRACE,
        }
    }
}

/// How an observation ended (HISTOR's names where they fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// The tools were listed.
    Ok,
    /// npm or pip could not install the package, or its install scripts failed.
    InstallFailed,
    /// Nothing to run (no `bin` npx would run, no console script uvx would run).
    NoEntryPoint,
    /// The server broke MCP.
    Protocol,
    /// A phase overran its time.
    Timeout,
    /// The server exited before its tools were listed.
    Exited,
    /// A size limit: the tree, a line, stdout, the tool set.
    TooLarge,
    /// The sandbox was killed at its memory limit.
    OutOfMemory,
    /// It did not list its tools, and the process limit refused it new processes.
    TooManyProcesses,
    /// No gVisor here: nothing was run.
    SandboxUnavailable,
    /// The PyPI release has no wheel to install without building (from the fetch: nothing was
    /// run).
    NoWheel,
    /// The registry has no such package or version (from the fetch: nothing was run).
    NotFound,
    /// Our side failed (never the package's behaviour).
    SandboxError,
}

impl Status {
    /// The name written to reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::InstallFailed => "install-failed",
            Status::NoEntryPoint => "no-entry-point",
            Status::Protocol => "protocol",
            Status::Timeout => "timeout",
            Status::Exited => "exited",
            Status::TooLarge => "too-large",
            Status::OutOfMemory => "out-of-memory",
            Status::TooManyProcesses => "too-many-processes",
            Status::SandboxUnavailable => "sandbox-unavailable",
            Status::NoWheel => "no-wheel",
            Status::NotFound => "not-found",
            Status::SandboxError => "sandbox-error",
        }
    }
}

/// How the server is started, from the registry's `packages[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// Arguments after the entry point (`packageArguments`).
    pub arguments: Vec<String>,
    /// Environment variables the entry declares: a value, or `None` for the argument canary (a
    /// value the user configures, such as the server's own API key: the server sending it to
    /// its service is no leak).
    pub env: Vec<(String, Option<String>)>,
}

/// One tool call's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// The tool.
    pub tool: String,
    /// `ok`, `error` (a JSON-RPC error, `isError`, or a result this client does not read),
    /// `input-required` (a 2026-07-28 result asking the client for input: never answered),
    /// `timeout`, `skipped` (schema), `not-called` (over the count or time budget, or the server
    /// went away), `gone` (the server went away during it).
    pub outcome: &'static str,
    /// Why, for anything but `ok`.
    pub detail: String,
}

/// One phase as observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseReport {
    /// Which.
    pub phase: Phase,
    /// What its trace showed.
    pub facts: PhaseFacts,
    /// Everything in it was seen.
    pub complete: bool,
    /// Why not, when not.
    pub incomplete: Vec<String>,
}

/// Everything one observation produced.
#[derive(Debug, Clone)]
pub struct Report {
    /// How it ended.
    pub status: Status,
    /// Why, for anything but `ok`.
    pub detail: String,
    /// npm or PyPI.
    pub ecosystem: Ecosystem,
    /// The package's name and version as installed.
    pub name: String,
    /// See `name`.
    pub version: String,
    /// The raw `initialize` result.
    pub initialize: Option<String>,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// The raw `tools/list` results.
    pub pages: Vec<String>,
    /// The surface beyond the tools, read after the listing and before the calls.
    pub surface: Option<toolmark_toolset::surface::RawSurface>,
    /// Install-time code found in the tree: npm's scripts (package directory, script, text);
    /// a wheel tree's `.pth` lines (file, `pth`, line), `sitecustomize` and console scripts (`.dist-info`,
    /// `console_scripts`, `name = module:attr`).
    pub scripts: Vec<(String, String, String)>,
    /// Each tool's call.
    pub calls: Vec<CallOutcome>,
    /// The phases run, in order.
    pub phases: Vec<PhaseReport>,
    /// What the phases show.
    pub findings: Vec<Finding>,
    /// `runsc --version`'s first line.
    pub runsc_version: String,
    /// The last [`MAX_STDERR_BYTES`] of the server's stderr.
    pub stderr: String,
    /// When it started.
    pub started: SystemTime,
    /// How long it took.
    pub elapsed: Duration,
    /// How long each step took, in order: `tree` (the host-side install), `install`,
    /// `startup` (start until listed), `calls`, `grace` (after the last answer until the
    /// server exited or was killed at [`CALLS_GRACE`]), `teardown` (the traces read).
    pub timings: Vec<(&'static str, Duration)>,
    /// The grace the server was given after its last answer ([`CALLS_GRACE`]; `None` when no
    /// calls phase ran).
    pub calls_grace: Option<Duration>,
}

impl Report {
    fn new(status: Status, detail: String) -> Report {
        Report {
            status,
            detail,
            ecosystem: Ecosystem::Npm,
            name: String::new(),
            version: String::new(),
            initialize: None,
            protocol_version: None,
            pages: Vec::new(),
            surface: None,
            scripts: Vec::new(),
            calls: Vec::new(),
            phases: Vec::new(),
            findings: Vec::new(),
            runsc_version: String::new(),
            stderr: String::new(),
            started: SystemTime::now(),
            elapsed: Duration::ZERO,
            timings: Vec::new(),
            calls_grace: None,
        }
    }

    /// A report for a version that was never fetched ([`Status::NoWheel`], [`Status::NotFound`]
    /// or another status the caller names): nothing ran.
    pub fn unfetched(status: Status, detail: impl Into<String>) -> Report {
        Report::new(status, detail.into())
    }

    /// Every phase run was completely seen and the tools were listed: the only state in which
    /// an absence of findings means something.
    pub fn complete(&self) -> bool {
        self.status == Status::Ok && self.phases.iter().all(|p| p.complete)
    }
}

/// A verified package file on disk (checked against its registry's digest, or given by hand).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Artifact {
    /// An npm tarball (`.tgz`).
    Npm(PathBuf),
    /// A wheel (`.whl`, under its published file name: pip reads the name).
    Wheel(PathBuf),
}

impl Artifact {
    fn ecosystem(&self) -> Ecosystem {
        match self {
            Artifact::Npm(_) => Ecosystem::Npm,
            Artifact::Wheel(_) => Ecosystem::Pypi,
        }
    }
}

/// The `toolmark-probe` binary built beside the running one, when there is one (a release
/// installs both in one directory; `cargo build -p toolmark-probe` puts it beside `toolmark`).
pub fn probe_beside() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()?
        .with_file_name("toolmark-probe");
    beside.is_file().then_some(beside)
}

/// The observer: where gVisor, npm and pip are, where runs live, and under which limits.
#[derive(Debug, Clone)]
pub struct Observer {
    /// The `runsc` binary (`None`: [`Status::SandboxUnavailable`], nothing runs).
    pub runsc: Option<PathBuf>,
    /// How an npm tree is installed.
    pub npm: NpmOptions,
    /// How a wheel's tree is installed.
    pub pip: PipOptions,
    /// A directory for runs (each gets its own, removed afterwards).
    pub work: PathBuf,
    /// The limits.
    pub limits: Limits,
    /// Keep each run's directory (trees, decoy HOME, traces) for inspection.
    pub keep: bool,
    /// The `toolmark-probe` binary: the DNS sink and traps inside each sandbox (`None`: no
    /// traps; a lookup's name is then unknown and the phase says so).
    pub probe: Option<PathBuf>,
}

impl Observer {
    /// The observer of this host: gVisor where Debian's `runsc` is installed
    /// ([`runsc_path`](crate::runsc::runsc_path)), the default [`Limits`], runs removed after
    /// use, and the probe `probe` names, else the one beside the running binary
    /// ([`probe_beside`]). What the package sweep, `toolmark package observe` and the demo run.
    pub fn new(npm: NpmOptions, pip: PipOptions, work: PathBuf, probe: Option<PathBuf>) -> Self {
        Observer {
            runsc: crate::runsc::runsc_path(),
            npm,
            pip,
            work,
            limits: Limits::default(),
            keep: false,
            probe: probe.or_else(probe_beside),
        }
    }

    /// Observe the npm package in `tarball` (already verified against its registry's
    /// integrity), started as `launch` says: [`Observer::observe`] of [`Artifact::Npm`].
    pub async fn observe_npm(&self, tarball: &Path, launch: &Launch) -> Report {
        self.observe(&Artifact::Npm(tarball.to_owned()), launch)
            .await
    }

    /// Observe the package in `artifact` (already verified), started as `launch` says.
    pub async fn observe(&self, artifact: &Artifact, launch: &Launch) -> Report {
        let started = Instant::now();
        let started_at = SystemTime::now();
        let mut report = match self.runsc.as_deref() {
            None => Report::new(
                Status::SandboxUnavailable,
                "runsc (gVisor) is not installed: no package code runs without it".into(),
            ),
            Some(runsc) => match Run::new(self, runsc) {
                Ok(run) => run.observe(artifact, launch).await,
                Err(e) => Report::new(Status::SandboxError, format!("setting up the run: {e}")),
            },
        };
        report.ecosystem = artifact.ecosystem();
        report.started = started_at;
        report.elapsed = started.elapsed();
        report
    }
}

/// The observer's version in the facts it reports: a version observed under an older one is
/// observed again. `/2` (issue #25): encoded canaries, the raw TCP and SMTPS traps, HTTPS the
/// runtime trusts, the calls' grace, persistence by rename, link or directory and the decoy
/// HOME as a witness, writes to sockets only as leaks, `input-required` calls — a version `/1`
/// judged clean may not be.
pub const OBSERVER: &str = "toolmark-sandbox/3";

impl Report {
    /// `npm:<name>@<version>` or `pypi:<pep503-name>@<version>` as installed (empty before
    /// the tree was made).
    pub fn package_id(&self) -> String {
        match &self.ecosystem {
            _ if self.name.is_empty() => String::new(),
            Ecosystem::Pypi => format!("pypi:{}@{}", pep503(&self.name), self.version),
            _ => format!("npm:{}@{}", self.name, self.version),
        }
    }

    /// `toolmark package observe`'s report: the observation the log would hold for `spec`
    /// (named by the installed package when there is one) with the artifact's digest and the
    /// sandbox's facts.
    pub fn package_report(&self, spec: &str, artifact: &str) -> PackageReport {
        let package = match self.package_id() {
            id if id.is_empty() => spec.to_owned(),
            id => id,
        };
        let obs = self.observation(&package, None);
        let set = (obs.status == ObsStatus::Ok)
            .then(|| obs.tool_set())
            .flatten();
        let digests = obs
            .digests()
            .filter(|_| set.is_some())
            .map(|d| ReportDigests {
                mtl1: d.mtl1.ok().map(|s| s.to_string()),
                full: d.full.to_string(),
            });
        PackageReport {
            package,
            status: obs.status.name(),
            detail: obs.detail,
            artifact: artifact.to_owned(),
            elapsed_ms: u64::try_from(obs.elapsed.as_millis()).unwrap_or(u64::MAX),
            protocol_version: obs.protocol_version,
            tools: set
                .map(|s| {
                    s.tools
                        .iter()
                        .map(|t| t.name().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            digests,
            initialize: obs
                .initialize
                .as_deref()
                .and_then(|t| serde_json::from_str(t).ok()),
            facts: self.facts(),
            registry: None,
        }
    }

    /// What the sandbox saw (the document's `package.sandbox`, and the CLI's report): the
    /// observer and runtime, completeness, the steps' times, the install scripts, each call's
    /// outcome, each phase's behaviour, and the findings.
    pub fn facts(&self) -> SandboxFacts {
        let acts = |v: &[behaviour::Act]| -> Vec<facts::Act> {
            v.iter()
                .map(|a| facts::Act {
                    what: a.what.clone(),
                    pid: a.pid,
                    comm: a.comm.clone(),
                })
                .collect()
        };
        let ms = |d: &Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        SandboxFacts {
            observer: Some(OBSERVER.to_owned()),
            runsc: self.runsc_version.clone(),
            complete: self.complete(),
            timings_ms: self
                .timings
                .iter()
                .map(|(k, d)| ((*k).to_owned(), ms(d)))
                .collect(),
            calls_grace_ms: self.calls_grace.as_ref().map(ms),
            install_scripts: self
                .scripts
                .iter()
                .map(|(p, s, t)| facts::InstallScript {
                    package: p.clone(),
                    script: s.clone(),
                    command: t.clone(),
                })
                .collect(),
            calls: self
                .calls
                .iter()
                .map(|c| facts::CallFacts {
                    tool: c.tool.clone(),
                    outcome: c.outcome.to_owned(),
                    detail: (c.outcome != "ok").then(|| c.detail.clone()),
                })
                .collect(),
            behaviour: self
                .phases
                .iter()
                .map(|p| facts::PhaseFacts {
                    phase: p.phase,
                    complete: p.complete,
                    incomplete: p.incomplete.clone(),
                    exec: acts(&p.facts.behaviour.exec),
                    network: acts(&p.facts.behaviour.network),
                    lookups: p.facts.lookups.clone(),
                    requests: p.facts.requests.clone(),
                    decoys: acts(&p.facts.behaviour.decoys),
                    writes: acts(&p.facts.behaviour.writes),
                    home: p.facts.home.clone(),
                    late: p.facts.late.clone(),
                    exfiltrated: p.facts.exfiltrated.clone(),
                    leaked_by: p.facts.leaked_by.clone(),
                })
                .collect(),
            findings: self
                .findings
                .iter()
                .map(|f| facts::FindingFacts {
                    code: f.code.to_owned(),
                    severity: f.severity,
                    phase: f.phase,
                    evidence: f.evidence.clone(),
                })
                .collect(),
        }
    }

    /// The observation this report is, for the log: the core every observer fills (status,
    /// raw `initialize` result and pages) and `via: Package` with the artifact's digest and
    /// [`Report::facts`]. `package` names the version run ([`Report::package_id`], the log
    /// subject's `package`).
    pub fn observation(
        &self,
        package: &str,
        artifact: Option<toolmark_toolset::Sri>,
    ) -> Observation {
        let status = match self.status {
            Status::Ok => ObsStatus::Ok,
            Status::Timeout => ObsStatus::Timeout,
            Status::Protocol => ObsStatus::Protocol,
            Status::TooLarge => ObsStatus::TooLarge,
            other => ObsStatus::Package(other.as_str()),
        };
        let mut obs = Observation::start(Via::Package(Sandboxed {
            package: package.to_owned(),
            artifact,
            sandbox: Some(self.facts().to_value()),
            registry: None,
        }));
        obs.started = self.started;
        obs.elapsed = self.elapsed;
        obs.status = status;
        obs.detail = self.detail.clone();
        obs.protocol_version = self.protocol_version.clone();
        obs.initialize = self.initialize.clone();
        obs.pages = self.pages.clone();
        obs.surface = self.surface.clone();
        obs
    }
}

/// The first line of `runsc --version`.
pub fn runsc_version(runsc: &Path) -> String {
    std::process::Command::new(runsc)
        .env_clear()
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_owned))
        .unwrap_or_default()
}

/// One run: its directory (a tmpfs of [`RUN_DISK_BYTES`], unmounted and removed when the run
/// is dropped, unless the observer keeps runs), its id and its two canaries.
struct Run<'a> {
    observer: &'a Observer,
    runsc: &'a Path,
    dir: PathBuf,
    id: String,
    canary: Canary,
    /// The search for the decoy canary in what left (as written or encoded), with the run's
    /// budget.
    search: Search,
    argument: Canary,
}

impl Drop for Run<'_> {
    fn drop(&mut self) {
        if !self.observer.keep {
            let detach = rustix::mount::UnmountFlags::DETACH;
            let _ = rustix::mount::unmount(self.dir.join(RECORDS), detach);
            let _ = rustix::mount::unmount(&self.dir, detach);
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A tree made on the host, as the phases need it: what is mounted at [`PKG`], what runs there,
/// and the install phase's program when one runs. npm and wheels differ only here.
struct Prepared {
    /// The tree (mounted at [`PKG`]).
    dir: PathBuf,
    name: String,
    version: String,
    scripts: Vec<(String, String, String)>,
    /// The install phase, when the tree has install-time code.
    install: Option<Installer>,
    /// The server's command line inside, before `Launch::arguments`.
    run: Vec<String>,
}

impl Prepared {
    fn npm(tree: NpmTree) -> Prepared {
        let mut run: Vec<String> = tree.interpreter.iter().cloned().collect();
        run.push(format!("{PKG}/node_modules/{}/{}", tree.name, tree.bin));
        let install = (!tree.scripts.is_empty() || !tree.unreadable.is_empty())
            .then_some(Installer::NpmRebuild);
        Prepared {
            dir: tree.dir,
            name: tree.name,
            version: tree.version,
            scripts: tree.scripts,
            install,
            run,
        }
    }

    fn wheel(tree: PypiTree) -> Prepared {
        let start = prepare::site_start(PKG, tree.sitecustomize);
        let run = python(tree.entry.shim(&start));
        Prepared {
            dir: tree.dir,
            name: tree.name,
            version: tree.version,
            scripts: tree.scripts,
            install: tree.start_code.then_some(Installer::PythonSite(start)),
            run,
        }
    }
}

/// [`prepare::PYTHON`] running `code`: isolated (`-I`: no `PYTHON*` variable, no user site)
/// and without the host's site packages (`-S`) — the code adds the tree as a site directory,
/// as a virtual environment holding only the tree would.
fn python(code: String) -> Vec<String> {
    [prepare::PYTHON, "-I", "-S", "-c"]
        .map(String::from)
        .into_iter()
        .chain([code])
        .collect()
}

/// The install phase's program.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Installer {
    /// `npm rebuild`: npm runs every install script of the tree, each in a shell.
    NpmRebuild,
    /// A Python started with the tree as a site directory (this code: [`prepare::site_start`]):
    /// the `.pth` files' code and a `sitecustomize` run, as at every Python's start with the
    /// tree installed.
    PythonSite(String),
}

impl Installer {
    fn what(&self) -> &'static str {
        match self {
            Installer::NpmRebuild => "npm rebuild",
            Installer::PythonSite(_) => "python3 starting with the tree",
        }
    }

    fn args(&self) -> Vec<String> {
        match self {
            Installer::NpmRebuild => [
                "/usr/bin/npm",
                "rebuild",
                "--foreground-scripts",
                "--offline",
                "--no-audit",
                "--no-fund",
            ]
            .map(String::from)
            .to_vec(),
            Installer::PythonSite(start) => python(start.clone()),
        }
    }

    fn env(&self) -> &'static [&'static str] {
        match self {
            Installer::NpmRebuild => &[
                "npm_config_cache=/tmp/.npm",
                "npm_config_update_notifier=false",
            ],
            Installer::PythonSite(_) => &[],
        }
    }

    /// Whose acts are the harness's: npm and the shells it runs scripts in; the Python's own
    /// start (the probe starting it), whose `.pth` code and `sitecustomize` are the package's.
    fn harness(&self, probe: Option<Option<u32>>) -> Harness {
        match self {
            Installer::NpmRebuild => Harness::npm(probe),
            Installer::PythonSite(_) => Harness::server(probe),
        }
    }
}

/// How a sandbox ended.
struct Ended {
    /// Its own exit (`None`: it was killed, by us, when its time was up).
    exit: Option<std::process::ExitStatus>,
    /// Its stdout and stderr (the last [`MAX_STDERR_BYTES`] of each).
    stdout: String,
    stderr: String,
}

impl<'a> Run<'a> {
    fn new(observer: &'a Observer, runsc: &'a Path) -> std::io::Result<Run<'a>> {
        let canary = Canary::new()?;
        let argument = Canary::new()?;
        let id = format!(
            "toolmark-{}",
            &canary.as_str()[decoys::CANARY_PREFIX.len()..]
        );
        let dir = observer.work.join(&id);
        std::fs::create_dir_all(&dir)?;
        let run = Run {
            observer,
            runsc,
            dir,
            id,
            search: Search::new(canary.as_str()),
            canary,
            argument,
        };
        // The package's writable trees and the records of what it did live on tmpfs mounts of
        // their own: filling the one cannot cut the other.
        let tmpfs = |dir: &Path, size: u64| {
            let options = std::ffi::CString::new(format!("size={size},mode=0755"))
                .map_err(std::io::Error::other)?;
            rustix::mount::mount(
                "tmpfs",
                dir,
                "tmpfs",
                rustix::mount::MountFlags::NOSUID | rustix::mount::MountFlags::NODEV,
                Some(options.as_c_str()),
            )
            .map_err(std::io::Error::from)
        };
        tmpfs(&run.dir, RUN_DISK_BYTES)?;
        let records = run.dir.join(RECORDS);
        std::fs::create_dir(&records)?;
        tmpfs(&records, RECORDS_DISK_BYTES)?;
        Ok(run)
    }

    async fn observe(&self, artifact: &Artifact, launch: &Launch) -> Report {
        let step = Instant::now();
        let dir = self.dir.join("tree");
        let tree = match artifact {
            Artifact::Npm(tarball) => prepare::npm_tree(&self.observer.npm, tarball, &dir)
                .await
                .map(Prepared::npm),
            Artifact::Wheel(wheel) => prepare::pypi_tree(&self.observer.pip, wheel, &dir)
                .await
                .map(Prepared::wheel),
        };
        let tree = match tree {
            Ok(t) => t,
            Err(e) => {
                let status = match &e {
                    PrepareError::InstallFailed(_) => Status::InstallFailed,
                    PrepareError::Timeout => Status::Timeout,
                    PrepareError::TooLarge => Status::TooLarge,
                    PrepareError::NoEntryPoint(_) => Status::NoEntryPoint,
                    PrepareError::Io(_) => Status::SandboxError,
                };
                return Report::new(status, e.to_string());
            }
        };
        let mut report = Report::new(Status::Ok, String::new());
        report.timings.push(("tree", step.elapsed()));
        report.name = tree.name.clone();
        report.version = tree.version.clone();
        report.scripts = tree.scripts.clone();
        report.runsc_version = runsc_version(self.runsc);
        let home = self.dir.join("home");
        // The note a path argument names holds the argument canary: a tool that reads the file
        // it is asked to read leaks nothing.
        let note = format!("{}\n", self.argument.as_str());
        if self.observer.probe.is_some()
            && let Err(e) = prepare::trust_trap_ca(&tree.dir, TRAP_CA)
        {
            return Report::new(Status::SandboxError, format!("the tree's CA bundles: {e}"));
        }
        if let Err(e) = decoys::plant(&home, None, &self.canary, SANDBOX_UID)
            .and_then(|()| std::fs::create_dir_all(home.join("notes")))
            .and_then(|()| std::fs::write(home.join("notes/canary.txt"), note))
            .and_then(|()| decoys::chown_tree(&home, SANDBOX_UID))
            .and_then(|()| decoys::chown_tree(&tree.dir, SANDBOX_UID))
        {
            return Report::new(Status::SandboxError, format!("planting the decoys: {e}"));
        }
        // The HOME's persistence paths before each sandbox and after it: the second witness.
        let mut before = Snapshot::take(&home);
        let mut witnessed = Vec::new();
        if let Some(installer) = &tree.install {
            let step = Instant::now();
            let (phase, failed) = self.install(installer, &tree, &home).await;
            report.timings.push(("install", step.elapsed()));
            report.phases.push(phase);
            let after = Snapshot::take(&home);
            witnessed.push((Phase::Install, before, after.clone()));
            before = after;
            if let Some((status, detail)) = failed {
                report.status = status;
                report.detail = detail;
                witness(&mut report.phases, witnessed);
                report.findings = findings_of(&report.phases);
                return report;
            }
        }
        witnessed.extend(self.serve(&tree, &home, launch, &mut report, before).await);
        witness(&mut report.phases, witnessed);
        report.findings = findings_of(&report.phases);
        report
    }

    fn env(&self, extra: &[(String, Option<String>)]) -> Vec<String> {
        let mut env = vec![
            "PATH=/usr/bin:/bin".to_owned(),
            format!("HOME={HOME}"),
            "USER=decoy".to_owned(),
            "LANG=C.UTF-8".to_owned(),
        ];
        env.extend(decoys::environment(&self.canary));
        // The run's own variables (the paths, the decoy tokens, the trap CA the probe adds)
        // stay as the sandbox sets them: a registry entry declaring one with a value of its
        // choosing would otherwise replace a decoy or blind a trap.
        let own: Vec<String> = env
            .iter()
            .filter_map(|e| e.split_once('=').map(|(n, _)| n.to_owned()))
            .chain(TRAP_CA_VARIABLES.iter().map(|v| (*v).to_owned()))
            .collect();
        for (name, value) in extra {
            if own.contains(name) || name.is_empty() || name.contains(['=', '\0']) {
                continue;
            }
            // A value the user would configure (an API key the server is meant to send to its
            // service) carries the argument canary: sending it where the server sends it is
            // what it is for, not a leak of a credential it had no business reading.
            let value = value
                .clone()
                .unwrap_or_else(|| self.argument.as_str().to_owned());
            env.push(format!("{name}={value}"));
        }
        env
    }

    /// Start sandbox `phase` running `args`, traced.
    fn start(
        &self,
        phase: &str,
        args: Vec<String>,
        env: Vec<String>,
        cwd: &str,
        mounts: Vec<Mount>,
    ) -> Result<(Sandbox, TraceSpec, Option<PathBuf>), String> {
        let (mut args, mut env, mut mounts) = (args, env, mounts);
        let out = match &self.observer.probe {
            None => None,
            Some(probe) => {
                let dir = self.dir.join("probe");
                let out = self.dir.join(RECORDS).join(format!("out-{phase}"));
                let copied = std::fs::create_dir_all(&dir)
                    .and_then(|()| std::fs::copy(probe, dir.join("toolmark-probe")).map(|_| ()))
                    .and_then(|()| std::fs::create_dir_all(&out))
                    .and_then(|()| {
                        use std::os::unix::fs::PermissionsExt;
                        // Root's inside: the package reads the CA there and writes nothing.
                        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755))
                    });
                copied.map_err(|e| format!("the probe: {e}"))?;
                mounts.push(mount("/probe", &dir, false));
                mounts.push(mount("/out", &out, true));
                let mut wrapped = vec![
                    "/probe/toolmark-probe".to_owned(),
                    "/out".to_owned(),
                    SANDBOX_UID.to_string(),
                    "--".to_owned(),
                ];
                wrapped.append(&mut args);
                args = wrapped;
                for var in TRAP_CA_VARIABLES {
                    env.push(format!("{var}={TRAP_CA}"));
                }
                Some(out)
            }
        };
        let bundle = Bundle::create(
            &self.dir.join(format!("bundle-{phase}")),
            &BundleSpec {
                args,
                env,
                cwd: cwd.into(),
                uid: SANDBOX_UID,
                mounts,
                memory_bytes: self.observer.limits.memory_bytes,
                host_pids: HOST_PIDS,
                open_files: OPEN_FILES,
                processes: MAX_PROCESSES,
                root_harness: out.is_some(),
                ca_bundle: out.is_some().then(|| TRAP_CA.to_owned()),
            },
        )
        .map_err(|e| format!("the {phase} bundle: {e}"))?;
        let spec = TraceSpec {
            log_dir: self.dir.join(RECORDS).join(format!("logs-{phase}")),
            syscalls: trace::TRACED_SYSCALLS
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        let sandbox = Sandbox::spawn(
            self.runsc,
            bundle,
            &format!("{}-{phase}", self.id),
            Some(&spec),
        )
        .map_err(|e| format!("starting runsc: {e}"))?;
        Ok((sandbox, spec, out))
    }

    /// What the probe recorded in `out`, and why the probe itself failed, if it did.
    fn seen(out: &Option<PathBuf>) -> (Option<Traps>, Option<String>) {
        let Some(out) = out else {
            return (None, None);
        };
        let failed = std::fs::read_to_string(out.join("probe.log"))
            .ok()
            .map(|log| format!("the probe failed: {}", prepare::tail(&log, 1024)));
        (Traps::read(&out.join("traps.jsonl")), failed)
    }

    /// Wait up to `grace` for the sandbox to end by itself, then kill and delete it; its
    /// output, drained by `stdout` and `stderr`.
    async fn end(
        mut sandbox: Sandbox,
        grace: Duration,
        stdout: tokio::task::JoinHandle<String>,
        stderr: tokio::task::JoinHandle<String>,
    ) -> Ended {
        let exit = match tokio::time::timeout(grace, sandbox.child.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => None,
        };
        sandbox.stop().await;
        let text = |h: tokio::task::JoinHandle<String>| async move {
            tokio::time::timeout(DRAIN_GRACE, h)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default()
        };
        Ended {
            exit,
            stdout: text(stdout).await,
            stderr: text(stderr).await,
        }
    }

    /// Whether the host's memory cgroup killed the sandbox: runsc's own exit was 137 (a
    /// SIGKILL of the whole sandbox) and — when the probe ran — the probe saw no exit of the
    /// program (a program exiting 137 by itself is the probe's record, not a kill). Without
    /// the probe a program exiting 137 reads the same as a kill.
    fn oom(ended: &Ended, probed: bool, traps: Option<&Traps>) -> bool {
        ended.exit.and_then(|s| s.code()) == Some(137)
            && !(probed && traps.is_some_and(|t| t.exit.is_some()))
    }

    fn oom_detail(&self, what: &str) -> String {
        format!(
            "{what} was killed at its memory limit ({} bytes)",
            self.observer.limits.memory_bytes
        )
    }

    /// The install phase: `installer` (`npm rebuild`, or a Python starting with the tree) with
    /// the tree read-write in a sandbox; the phase, and how the run ends when it fails.
    async fn install(
        &self,
        installer: &Installer,
        tree: &Prepared,
        home: &Path,
    ) -> (PhaseReport, Option<(Status, String)>) {
        let mut env = self.env(&[]);
        env.extend(installer.env().iter().map(|v| v.to_string()));
        let args = installer.args();
        let mounts = vec![mount(PKG, &tree.dir, true), mount(HOME, home, true)];
        let (mut sandbox, spec, out) = match self.start("install", args, env, PKG, mounts) {
            Ok(s) => s,
            Err(e) => {
                let phase = PhaseReport::unseen(Phase::Install, "sandbox-error");
                return (phase, Some((Status::SandboxError, e)));
            }
        };
        drop(sandbox.child.stdin.take());
        let stdout = drain(sandbox.child.stdout.take());
        let stderr = drain(sandbox.child.stderr.take());
        let ended = Self::end(sandbox, self.observer.limits.install, stdout, stderr).await;
        let trace = self.read(&spec);
        let (traps, probe_failed) = Self::seen(&out);
        let harness =
            installer.harness(out.as_ref().map(|_| traps.as_ref().and_then(|t| t.launch)));
        let never_started = out.is_some()
            && traps
                .as_ref()
                .is_none_or(|t| t.launch.is_none() && t.launch_failed.is_none());
        let mut phase = self.phase(
            Phase::Install,
            &trace,
            traps.as_ref(),
            out.is_some(),
            &Window::All,
            &harness,
        );
        let failed = match ended.exit {
            _ if probe_failed.is_some() => {
                Some((Status::SandboxError, probe_failed.unwrap_or_default()))
            }
            Some(status) if never_started && !status.success() => Some((
                Status::SandboxError,
                format!(
                    "the sandbox never started {}: {}",
                    installer.what(),
                    prepare::tail(&ended.stderr, 1024)
                ),
            )),
            _ if Self::oom(&ended, out.is_some(), traps.as_ref()) => {
                Some((Status::OutOfMemory, self.oom_detail("the install phase")))
            }
            None => {
                phase.cut();
                Some((
                    Status::Timeout,
                    format!(
                        "install scripts ran longer than {:?}",
                        self.observer.limits.install
                    ),
                ))
            }
            Some(status) if !status.success() => Some((
                Status::InstallFailed,
                format!(
                    "{} exited with {status}: {}",
                    installer.what(),
                    prepare::tail(&format!("{}{}", ended.stderr, ended.stdout), 2048)
                ),
            )),
            Some(_) => None,
        };
        let refused = phase.facts.behaviour.refused_spawns;
        let failed = match failed {
            Some((Status::Timeout | Status::InstallFailed, detail)) if refused > 0 => Some((
                Status::TooManyProcesses,
                format!(
                    "the process limit ({MAX_PROCESSES}) refused {refused} new processes; {detail}"
                ),
            )),
            other => other,
        };
        (phase, failed)
    }

    /// The startup and calls phases: the server in a sandbox, over stdio; the HOME's manifests
    /// around each phase run (the first, `before`, taken before the sandbox started).
    async fn serve(
        &self,
        tree: &Prepared,
        home: &Path,
        launch: &Launch,
        report: &mut Report,
        before: Snapshot,
    ) -> Vec<(Phase, Snapshot, Snapshot)> {
        let mut args = tree.run.clone();
        args.extend(launch.arguments.iter().cloned());
        let mounts = vec![mount(PKG, &tree.dir, false), mount(HOME, home, true)];
        let (mut sandbox, spec, out) =
            match self.start("run", args, self.env(&launch.env), HOME, mounts) {
                Ok(s) => s,
                Err(e) => {
                    report.status = Status::SandboxError;
                    report.detail = e;
                    return Vec::new();
                }
            };
        let stderr = drain(sandbox.child.stderr.take());
        let (Some(stdout), Some(stdin)) = (sandbox.child.stdout.take(), sandbox.child.stdin.take())
        else {
            report.status = Status::SandboxError;
            report.detail = "runsc's pipes were not there".into();
            return Vec::new();
        };
        let mut stdio = Stdio::new(BufReader::new(stdout), stdin);
        let mut listing = Listing::default();
        let identity = Identity {
            client_info: toolmark_client_info(),
            capabilities: serde_json::json!({}),
        };
        let limits = &self.observer.limits;
        let mut session = Session::new(SessionLimits::default(), identity, &mut listing);
        let step = Instant::now();
        let listed = tokio::time::timeout(
            limits.startup,
            session.list_tools(&mut stdio, Handshake::Initialize("2025-06-18")),
        )
        .await;
        let listed_at = SystemTime::now();
        let at_listing = Snapshot::take(home);
        report.timings.push(("startup", step.elapsed()));
        let step = Instant::now();
        let mut cut = false;
        let mut called = Called::default();
        match listed {
            Err(_) => {
                report.status = Status::Timeout;
                report.detail = format!("the tools were not listed within {:?}", limits.startup);
                cut = true;
            }
            Ok(Err(e)) => {
                (report.status, report.detail) = match &e.failure {
                    Failure::Transport(StdioError::Closed(_) | StdioError::Write(..)) => {
                        (Status::Exited, e.to_string())
                    }
                    Failure::Transport(StdioError::TooMuchOutput | StdioError::LineTooLong)
                    | Failure::TooLarge(_) => (Status::TooLarge, e.to_string()),
                    _ => (Status::Protocol, e.to_string()),
                };
            }
            Ok(Ok(())) => {
                let uris = toolmark_observation::observe::assemble(&session.listing().pages)
                    .map(|set| toolmark_toolset::surface::app::ui_uris(&set))
                    .unwrap_or_default();
                let named = |e: &StdioError| {
                    let status = match e {
                        StdioError::Closed(_) | StdioError::Write(..) => Status::Exited,
                        StdioError::TooMuchOutput | StdioError::LineTooLong => Status::TooLarge,
                        _ => Status::Protocol,
                    };
                    (status.as_str().to_owned(), e.to_string())
                };
                let _ = tokio::time::timeout(
                    limits.surface,
                    session.list_surface(&mut stdio, &uris, named),
                )
                .await;
                called = self.calls(&mut session, &mut stdio).await;
                report.calls = std::mem::take(&mut called.outcomes);
            }
        }
        drop(session);
        report.timings.push(("calls", step.elapsed()));
        let mut step = Instant::now();
        report.initialize = listing.initialize.clone();
        report.protocol_version = listing.protocol_version.clone();
        report.pages = listing.pages.clone();
        report.surface = listing.surface.clone();
        let cuts = self.search.cuts();
        let leaked_by = leaks(&stdio.lines, &called.answers, &self.search);
        let leak_search_cut = self.search.cuts() > cuts;
        // Close stdin, as a client would. A server that listed its tools is kept for the calls'
        // grace; what it does until it exits or is killed is the calls phase's when a call was
        // made (after its last answer), startup's when none was (after the listing, as
        // before). One that did not list its tools is given a moment. Then it is killed.
        let listed = report.status == Status::Ok;
        let last_answer = called.windows.last().map(|(_, to)| *to);
        drop(stdio);
        let grace = if listed {
            limits.calls_grace
        } else {
            EXIT_GRACE
        };
        let ended = Self::end(sandbox, grace, empty(), stderr).await;
        let mut times = CallTimes {
            calls: called.windows,
            grace: None,
            unanswered: called.unanswered,
        };
        if listed {
            times.grace = last_answer.map(|from| (from, SystemTime::now()));
            report.calls_grace = Some(limits.calls_grace);
            report.timings.push(("grace", step.elapsed()));
            step = Instant::now();
        }
        report.stderr = ended.stderr.clone();
        let trace = self.read(&spec);
        let (traps, probe_failed) = Self::seen(&out);
        // Killed at its memory limit: before the listing that is the run's status; after it,
        // the tools were observed and the calls phase is what the kill cut short.
        let oom = Self::oom(&ended, out.is_some(), traps.as_ref());
        if oom && report.status != Status::Ok {
            report.status = Status::OutOfMemory;
            report.detail = self.oom_detail("the sandbox");
        }
        if let Some(why) = traps.as_ref().and_then(|t| t.launch_failed.clone()) {
            // The package's program would not start: the package's outcome.
            report.status = Status::Exited;
            report.detail = why;
        } else if let Some(why) = probe_failed {
            report.status = Status::SandboxError;
            report.detail = why;
        } else if out.is_some()
            && report.status != Status::Ok
            && traps.as_ref().is_none_or(|t| t.launch.is_none())
        {
            // The probe never started the program: the sandbox itself did not come up.
            report.status = Status::SandboxError;
            report.detail = format!(
                "the sandbox never started the program: {}",
                prepare::tail(&report.stderr, 1024)
            );
        }
        let harness = Harness::server(out.as_ref().map(|_| traps.as_ref().and_then(|t| t.launch)));
        let probed = out.is_some();
        let mut startup = self.phase(
            Phase::Startup,
            &trace,
            traps.as_ref(),
            probed,
            &Window::Startup(listed_at, times.clone()),
            &harness,
        );
        report.timings.push(("teardown", step.elapsed()));
        if cut {
            startup.cut();
        }
        // Refused processes name the cause even when the memory limit then killed the sandbox:
        // a fork bomb's processes meet both limits, the process limit first, and which one
        // ends the run is a race.
        if report.status != Status::Ok && startup.facts.behaviour.refused_spawns > 0 {
            report.status = Status::TooManyProcesses;
            report.detail = format!(
                "the process limit ({MAX_PROCESSES}) refused {} new processes; {}",
                startup.facts.behaviour.refused_spawns, report.detail
            );
        }
        report.phases.push(startup);
        let at_end = Snapshot::take(home);
        if report.status == Status::Ok {
            let mut calls = self.phase(
                Phase::Calls,
                &trace,
                traps.as_ref(),
                probed,
                &Window::Calls(times),
                &harness,
            );
            calls.facts.leaked_by = leaked_by;
            if leak_search_cut {
                calls.incomplete.push("canary-search-cut".into());
                calls.complete = false;
            }
            let unanswered = report
                .calls
                .iter()
                .filter(|c| !matches!(c.outcome, "ok" | "error" | "input-required"))
                .count();
            if oom {
                calls.incomplete.push("out-of-memory".into());
                calls.complete = false;
            }
            if unanswered > 0 {
                // A tool that was not called, or did not answer, did what it does unseen.
                calls.incomplete.push("calls-not-made".into());
                calls.complete = false;
            }
            report.phases.push(calls);
            vec![
                (Phase::Startup, before, at_listing.clone()),
                (Phase::Calls, at_listing, at_end),
            ]
        } else {
            vec![(Phase::Startup, before, at_end)]
        }
    }

    /// Each listed tool called once (up to the limits) with canary arguments: the outcomes,
    /// each call's time window (from its request to its answer) and where each answer is.
    async fn calls<R, W>(&self, session: &mut Session<'_>, stdio: &mut Stdio<R, W>) -> Called
    where
        R: tokio::io::AsyncBufRead + Unpin + Send,
        W: tokio::io::AsyncWrite + Unpin + Send,
    {
        let limits = &self.observer.limits;
        let tools = tools_of(&session.listing().pages);
        let budget = Instant::now() + limits.calls;
        let mut out = Vec::new();
        let mut windows = Vec::new();
        let mut answers = Vec::new();
        let mut unanswered = None;
        let mut gone = false;
        for (i, (name, schema)) in tools.into_iter().enumerate() {
            let outcome = |outcome, detail: String| CallOutcome {
                tool: name.clone(),
                outcome,
                detail,
            };
            if gone || i >= limits.max_calls || Instant::now() >= budget {
                let why = if gone {
                    "the server went away"
                } else {
                    "over the calls budget"
                };
                out.push(outcome("not-called", why.into()));
                continue;
            }
            let args = match arguments::for_schema(schema.as_ref(), self.argument.as_str(), NOTE) {
                Arguments::Call(a) => a,
                Arguments::Skipped(why) => {
                    out.push(outcome("skipped", why));
                    continue;
                }
            };
            let left = budget
                .saturating_duration_since(Instant::now())
                .min(limits.call);
            let from = SystemTime::now();
            let answer = tokio::time::timeout(left, session.call_tool(stdio, &name, args)).await;
            windows.push((from, SystemTime::now()));
            if let (Ok(Ok(_)), Some(id)) = (&answer, stdio.last_request_id()) {
                // The session read the answer from the last line it read.
                answers.push(Answered {
                    line: stdio.lines.len().saturating_sub(1),
                    id,
                    tool: name.clone(),
                });
            }
            match answer {
                Err(_) => {
                    unanswered.get_or_insert(from);
                    out.push(outcome("timeout", format!("no answer within {left:?}")));
                }
                // A result asking for input is the tool's outcome: never answered, nothing more
                // waited for, the next tool called.
                Ok(Ok(Answer::Result(r))) => match CallResult::of(&r) {
                    Ok(CallResult::Complete { is_error: false }) => out.push(outcome("ok", r)),
                    Ok(CallResult::Complete { is_error: true }) => out.push(outcome("error", r)),
                    Ok(CallResult::InputRequired(_)) => out.push(outcome("input-required", r)),
                    Err(e) => out.push(outcome("error", format!("{e}: {r}"))),
                },
                Ok(Ok(Answer::Error { code, message })) => out.push(outcome(
                    "error",
                    format!("JSON-RPC error {code}: {message}"),
                )),
                Ok(Err(e)) => {
                    gone = true;
                    out.push(outcome("gone", e.to_string()));
                }
            }
        }
        Called {
            outcomes: out,
            windows,
            answers,
            unanswered,
        }
    }

    /// The trace of `spec`'s run, read once (`None`: there is none).
    fn read(&self, spec: &TraceSpec) -> Option<trace::Trace> {
        read_trace(&spec.log_dir)
    }

    /// The phase's facts from `trace` and the probe's `traps` (`probed`: the probe ran), the
    /// part of them `window` selects, without what `harness` did.
    fn phase(
        &self,
        phase: Phase,
        trace: &Option<trace::Trace>,
        traps: Option<&Traps>,
        probed: bool,
        window: &Window,
        harness: &Harness,
    ) -> PhaseReport {
        let layout = Layout {
            home: HOME.into(),
            cwd: HOME.into(),
            // The install phase has the tree read-write.
            writable: if phase == Phase::Install {
                vec![PKG.into()]
            } else {
                vec![]
            },
        };
        let mut incomplete = Vec::new();
        let Some(whole) = trace else {
            return PhaseReport::unseen(phase, "trace-missing");
        };
        let part = trace::Trace {
            events: whole
                .events
                .iter()
                .filter(|e| window.holds(&e.time))
                .cloned()
                .collect(),
            unparsed: whole.unparsed,
            truncated: whole.truncated,
            // Where a socket leads is known from its connection, wherever that was.
            outbound: whole.outbound.clone(),
        };
        let mut b = behaviour::of(&part, &layout);
        if !whole.events.is_empty() {
            // A quiet part of a trace that has events is not an empty trace.
            b.incomplete.remove("trace-empty");
            b.complete = b.incomplete.is_empty();
        }
        drop_harness(&mut b, harness);
        if self.disk_full() {
            incomplete.push("run-disk-full".to_owned());
        }
        if b.refused_spawns > 0 {
            // What the refused processes would have done was not done, so not seen.
            incomplete.push("process-limit".to_owned());
        }
        let cuts = self.search.cuts();
        let mut exfiltrated = socket_leaks(&part, &self.search);
        let mut lookups = Vec::new();
        let mut requests = Vec::new();
        // Lookups after the last answer with no call in flight (`dns:<name>`).
        let mut late_lookups = Vec::new();
        match traps {
            Some(t) => {
                let names = t.names();
                for act in &mut b.network {
                    let addr = act.what.rsplit_once(':').map_or("", |(a, _)| a).to_owned();
                    if let Some(name) = names.get(&addr) {
                        let port = act.what[addr.len() + 1..].to_owned();
                        act.what = format!("{name}:{port} ({addr})");
                    }
                }
                lookups.extend(
                    t.lookups
                        .iter()
                        .filter(|l| window.holds_at(l.at))
                        .map(|l| l.name.clone()),
                );
                late_lookups.extend(
                    t.lookups
                        .iter()
                        .filter(|l| window.late(&trace_time(l.at)))
                        .map(|l| format!("dns:{}", l.name)),
                );
                for l in t.lookups.iter().filter(|l| window.holds_at(l.at)) {
                    if let Some(m) = self.search.find(l.name.as_bytes()) {
                        exfiltrated.push(m.evidence(&format!("dns:{}", l.name)));
                    }
                }
                for c in t.connections.iter().filter(|c| window.holds_at(c.at)) {
                    let what = c.describe(&names);
                    // The payload as sent, its HTTP body de-chunked (a canary split by a chunk
                    // boundary), the recipients and the TLS name.
                    let found = self
                        .search
                        .find(&c.payload)
                        .or_else(|| {
                            // A body that is not the payload's own tail was de-chunked.
                            let body = toolmark_probe::http::body(&c.payload);
                            (!c.payload.ends_with(&body))
                                .then(|| self.search.find(&body))
                                .flatten()
                        })
                        .or_else(|| {
                            c.recipients
                                .iter()
                                .find_map(|r| self.search.find(r.as_bytes()))
                        })
                        .or_else(|| c.sni.as_ref().and_then(|s| self.search.find(s.as_bytes())));
                    if let Some(m) = found {
                        exfiltrated.push(m.evidence(&what));
                    }
                    if !c.complete {
                        incomplete.push("trap-request-cut".to_owned());
                    }
                    if c.bytes > c.payload.len() as u64 {
                        // What came after the kept bytes was not searched.
                        incomplete.push("trap-payload-cut".to_owned());
                    }
                    requests.push(what);
                }
                if t.unclosed.iter().any(|(at, _)| window.holds_at(*at)) {
                    incomplete.push("trap-request-cut".to_owned());
                }
                if t.refused.iter().any(|(at, _)| window.holds_at(*at)) {
                    incomplete.push("trap-refused".to_owned());
                }
                if crate::traps::trap_port_taken(&part) {
                    // A listener of the package's own failed on a trap's port: what it would
                    // have served was not seen.
                    incomplete.push("trap-port-taken".to_owned());
                }
                let unread = t
                    .unreadable_lookups
                    .iter()
                    .filter(|at| window.holds_at(**at))
                    .count();
                if unread > 0 {
                    // A lookup whose name the sink could not read: one happened, name unknown.
                    lookups.extend(std::iter::repeat_n("?".to_owned(), unread));
                    incomplete.push("lookup-unreadable".to_owned());
                }
                late_lookups.extend(
                    t.unreadable_lookups
                        .iter()
                        .filter(|at| window.late(&trace_time(**at)))
                        .map(|_| "dns:?".to_owned()),
                );
                if t.cut {
                    incomplete.push("traps-cut".to_owned());
                }
                if t.unreadable > 0 {
                    incomplete.push("traps-unreadable".to_owned());
                }
            }
            None if probed => incomplete.push("traps-missing".to_owned()),
            None => {
                lookups.extend(b.dns.iter().map(|_| "?".to_owned()));
                if !lookups.is_empty() {
                    incomplete.push("lookup-name-unknown".to_owned());
                }
                late_lookups.extend(
                    b.dns
                        .iter()
                        .filter(|a| window.late(&a.at))
                        .map(|_| "dns:?".to_owned()),
                );
            }
        }
        let late: Vec<String> = b
            .network
            .iter()
            .filter(|a| window.late(&a.at))
            .map(|a| a.what.clone())
            .chain(late_lookups)
            .collect();
        if self.search.cuts() > cuts {
            // A payload past the search's limits: what it held past them is unknown.
            incomplete.push("canary-search-cut".to_owned());
        }
        incomplete.extend(b.incomplete.iter().map(|s| s.to_string()));
        incomplete.sort();
        incomplete.dedup();
        PhaseReport {
            phase,
            complete: incomplete.is_empty(),
            incomplete,
            facts: PhaseFacts {
                behaviour: b,
                lookups,
                requests,
                exfiltrated,
                leaked_by: Vec::new(),
                home: Vec::new(),
                late,
            },
        }
    }

    /// Whether the run's tmpfs is (nearly) full: a trace written into it may have been cut.
    fn disk_full(&self) -> bool {
        let full = |dir: &Path| {
            rustix::fs::statvfs(dir)
                .map(|v| v.f_bavail.saturating_mul(v.f_frsize) < 1024 * 1024)
                .unwrap_or(true)
        };
        full(&self.dir) || full(&self.dir.join(RECORDS))
    }
}

impl PhaseReport {
    /// A phase nothing of which was seen.
    fn unseen(phase: Phase, why: &str) -> PhaseReport {
        PhaseReport {
            phase,
            facts: PhaseFacts::default(),
            complete: false,
            incomplete: vec![why.to_owned()],
        }
    }

    /// The phase was cut short by its time limit.
    fn cut(&mut self) {
        self.complete = false;
        self.incomplete.push("phase-cut".into());
    }
}

/// When the calls were: each call's window (request to answer, or to its timeout), the grace
/// after the last answer (`None` when no call was made, or the tools were not listed), and
/// when the first call that timed out was made (the server may still be working on it: in
/// flight until the end).
#[derive(Debug, Clone, Default)]
struct CallTimes {
    calls: Vec<(SystemTime, SystemTime)>,
    grace: Option<(SystemTime, SystemTime)>,
    unanswered: Option<SystemTime>,
}

/// Whether trace time `time` lies in `span` (its ends included).
fn in_span(span: &(SystemTime, SystemTime), time: &str) -> bool {
    !before(time, &trace_time(span.0)) && !before(&trace_time(span.1), time)
}

impl CallTimes {
    /// Within a call's window.
    fn in_call(&self, time: &str) -> bool {
        self.calls.iter().any(|w| in_span(w, time))
    }

    /// Within the grace after the last answer.
    fn in_grace(&self, time: &str) -> bool {
        self.grace.as_ref().is_some_and(|g| in_span(g, time))
    }

    /// Within the grace, outside every call's window, and not after a call that was never
    /// answered: no call in flight.
    fn late(&self, time: &str) -> bool {
        let unanswered = self
            .unanswered
            .is_some_and(|from| !before(time, &trace_time(from)));
        self.in_grace(time) && !self.in_call(time) && !unanswered
    }

    /// Within a call or the grace: the calls phase's.
    fn holds(&self, time: &str) -> bool {
        self.in_call(time) || self.in_grace(time)
    }
}

/// Which part of a run's trace a phase is.
enum Window {
    /// All of it.
    All,
    /// Until the listing was read, and whatever happened after it outside every call and the
    /// grace.
    Startup(SystemTime, CallTimes),
    /// Within the calls (request to answer) and the grace after the last answer.
    Calls(CallTimes),
}

impl Window {
    /// Whether the window holds the moment `t` (a probe record's time).
    fn holds_at(&self, t: SystemTime) -> bool {
        self.holds(&trace_time(t))
    }

    /// Whether the window holds trace time `time`.
    fn holds(&self, time: &str) -> bool {
        match self {
            Window::All => true,
            Window::Startup(listed, calls) => {
                !before(&trace_time(*listed), time) || !calls.holds(time)
            }
            Window::Calls(calls) => calls.holds(time),
        }
    }

    /// Whether trace time `time` is in the calls' grace with no call in flight (the calls
    /// phase only: `LATE_NETWORK`).
    fn late(&self, time: &str) -> bool {
        match self {
            Window::Calls(calls) => calls.late(time),
            _ => false,
        }
    }
}

/// Whether trace time `a` is earlier than `b` (`MMDD HH:MM:SS.micros`, no year): months more
/// than six apart are a year's turn (December before January).
fn before(a: &str, b: &str) -> bool {
    let month = |t: &str| t.get(..2).and_then(|m| m.parse::<i32>().ok()).unwrap_or(0);
    let (ma, mb) = (month(a), month(b));
    if (ma - mb).abs() > 6 {
        return ma > mb;
    }
    a < b
}

/// Whose acts in a trace are the harness's, not the package's.
#[derive(Debug, Clone, Default)]
struct Harness {
    /// Processes that are wholly the harness's (the probe, npm).
    whole: std::collections::BTreeSet<u32>,
    /// A process whose first program is the harness starting the package's.
    first_exec: Option<u32>,
    /// A process (npm) each of whose children runs a script in a shell of the harness's.
    script_parent: Option<u32>,
}

impl Harness {
    /// The install phase: npm runs the scripts — pid 1, or the probe's child when the probe
    /// (pid 1) ran (`Some(launch)`; an unrecorded launch is taken to be pid 2).
    fn npm(probe: Option<Option<u32>>) -> Harness {
        let npm = match probe {
            None => 1,
            Some(launch) => launch.unwrap_or(2),
        };
        Harness {
            whole: [1, npm].into_iter().collect(),
            first_exec: None,
            script_parent: Some(npm),
        }
    }

    /// A program the probe starts — the server, or the Python of a wheel tree's install phase
    /// — is the package (pid 1 without the probe; the probe's child, whose start is the
    /// probe's, with it).
    fn server(probe: Option<Option<u32>>) -> Harness {
        match probe {
            None => Harness::default(),
            Some(launch) => Harness {
                whole: [1].into_iter().collect(),
                first_exec: Some(launch.unwrap_or(2)),
                script_parent: None,
            },
        }
    }
}

/// A manifest of the decoy HOME and when it was begun: consecutive snapshots bound the span a
/// phase's witness compares.
#[derive(Debug, Clone)]
struct Snapshot {
    at: SystemTime,
    manifest: home::Manifest,
}

impl Snapshot {
    fn take(home: &Path) -> Snapshot {
        Snapshot {
            at: SystemTime::now(),
            manifest: home::Manifest::take(home),
        }
    }
}

/// Whether the traced act `what` (a [`Behaviour::writes`] item) wrote `path`: opened it for
/// writing, renamed or linked a file onto it, or made it. A link *to* it did not.
fn wrote(what: &str, path: &str) -> bool {
    what == path
        || ["rename onto ", "link onto ", "mkdir "]
            .iter()
            .any(|act| what.strip_prefix(act) == Some(path))
}

/// The HOME's second witness (`witnessed`: each phase's snapshots before and after) added to
/// the phases: a persistence path that appeared or changed between a phase's two snapshots,
/// and that no traced act made between them wrote, is the phase's `home` fact; a manifest cut
/// short makes the phase incomplete (`home-witness-cut`). Acts are matched by their time, not
/// their phase's name: what the trace gives startup after the listing (outside every call)
/// falls between the calls phase's snapshots.
fn witness(phases: &mut [PhaseReport], witnessed: Vec<(Phase, Snapshot, Snapshot)>) {
    for (phase, before, after) in witnessed {
        let span = (before.at, after.at);
        let changes = before.manifest.changes(&after.manifest);
        let unseen: Vec<String> = changes
            .into_iter()
            .filter_map(|(rel, what)| {
                let path = format!("{HOME}/{rel}");
                let seen = phases
                    .iter()
                    .flat_map(|p| &p.facts.behaviour.writes)
                    .any(|a| in_span(&span, &a.at) && wrote(&a.what, &path));
                (!seen).then(|| format!("{what} {path}"))
            })
            .collect();
        let Some(report) = phases.iter_mut().find(|p| p.phase == phase) else {
            continue;
        };
        report.facts.home.extend(unseen);
        if before.manifest.cut || after.manifest.cut {
            report.complete = false;
            report.incomplete.push("home-witness-cut".into());
        }
    }
}

fn findings_of(phases: &[PhaseReport]) -> Vec<Finding> {
    let list: Vec<(Phase, &PhaseFacts)> = phases.iter().map(|p| (p.phase, &p.facts)).collect();
    findings::of(&list)
}

/// Remove what `harness` did itself from `b`.
fn drop_harness(b: &mut Behaviour, harness: &Harness) {
    let parents = b.parents.clone();
    let mut first = std::collections::BTreeSet::new();
    b.exec.retain(|a| {
        if harness.whole.contains(&a.pid) {
            return false;
        }
        let launch = harness.first_exec == Some(a.pid);
        let script = harness.script_parent.is_some()
            && parents.get(&a.pid) == harness.script_parent.as_ref()
            && matches!(a.what.as_str(), "/bin/sh" | "/usr/bin/sh");
        // Only the first program of such a process is the harness's.
        !((launch || script) && first.insert(a.pid))
    });
    for acts in [&mut b.network, &mut b.dns, &mut b.decoys, &mut b.writes] {
        acts.retain(|a| !harness.whole.contains(&a.pid));
    }
}

/// What the calls phase's session did: each call's outcome and window, and where each
/// answer was read.
#[derive(Debug, Default)]
struct Called {
    outcomes: Vec<CallOutcome>,
    windows: Vec<(SystemTime, SystemTime)>,
    answers: Vec<Answered>,
    /// When the first call that timed out was made.
    unanswered: Option<SystemTime>,
}

/// A `tools/call` the server answered: the stdout line the session read the answer from, the
/// request's JSON-RPC id, the tool.
#[derive(Debug, Clone)]
struct Answered {
    line: usize,
    id: u64,
    tool: String,
}

/// Where the decoy canary (as written or encoded) reached the client over stdout: each tool
/// whose answer — the response to its `tools/call`, found by the request's id on the line the
/// session read it from, all of it (`error.data` and any other member too) — carried it, and
/// `(another message to the client)` when any other message or line did (a notification, a
/// request, a listing, a second response to an id already answered, a log line).
fn leaks(lines: &[String], answers: &[Answered], search: &Search) -> Vec<String> {
    let mut leaked = Vec::new();
    let mut other = false;
    for (i, line) in lines.iter().enumerate() {
        let answer = answers.iter().find(|a| a.line == i);
        for (text, tool) in messages(line, answer) {
            if let Some(m) = search.find(text.as_bytes()) {
                match tool {
                    Some(tool) => leaked.push(m.evidence(tool)),
                    None => other = true,
                }
            }
        }
    }
    if other {
        leaked.push("(another message to the client)".into());
    }
    leaked
}

/// The messages of one stdout line, each with the tool whose answer it is: the line whole
/// (`None`) when it holds no answer; else each message of it (a batch's elements by their
/// source text), the first response to `answer`'s id being the tool's.
fn messages<'l>(line: &'l str, answer: Option<&'l Answered>) -> Vec<(&'l str, Option<&'l str>)> {
    let Some(answer) = answer else {
        return vec![(line, None)];
    };
    let tool = Some(answer.tool.as_str());
    let elements: Vec<&str> = if line.trim_start().starts_with('[') {
        match toolmark_toolset::json::parse_array_with_raw(line) {
            Ok(elements) => elements.into_iter().map(|(_, raw)| raw).collect(),
            // The session read the answer from it, so it parses; if not, it is the tool's.
            Err(_) => return vec![(line, tool)],
        }
    } else {
        vec![line]
    };
    let mut found = false;
    elements
        .into_iter()
        .map(|raw| {
            let is_answer = !found
                && toolmark_mcp::jsonrpc::parse(raw.as_bytes())
                    .ok()
                    .and_then(|m| toolmark_mcp::jsonrpc::find_answer(&m, answer.id).map(|_| ()))
                    .is_some();
            found |= is_answer;
            (raw, if is_answer { tool } else { None })
        })
        .collect()
}

/// Writes into sockets that carry the canary out (as written or encoded: `search`;
/// [`trace::Trace::leaves`]: connected to an IP address, or sent to one), as far as the trace
/// shows them: the entry lines of `write`, `sendto` and `sendmsg` carry the first
/// `--strace-log-size` bytes (1 KiB) of the buffer; `writev`, `sendmmsg` and anything past
/// the first KiB are not seen.
fn socket_leaks(t: &trace::Trace, search: &Search) -> Vec<String> {
    t.events
        .iter()
        .filter(|e| !e.exit && matches!(e.syscall.as_str(), "write" | "sendto" | "sendmsg"))
        .filter(|e| t.leaves(e))
        .filter_map(|e| {
            // The trace quotes every buffer (Go's `%q`): its escapes are not the package's.
            let m = Match {
                escaped: false,
                ..search.find(e.args.as_bytes())?
            };
            Some(m.evidence(&format!("{} by {} (pid {})", e.syscall, e.comm, e.pid)))
        })
        .collect()
}

/// `MMDD HH:MM:SS.micros` of `t` in UTC, as the trace writes its times.
fn trace_time(t: SystemTime) -> String {
    let s = humantime::format_rfc3339_micros(t).to_string();
    // 2026-12-02T01:45:00.123456Z
    format!("{}{} {}", &s[5..7], &s[8..10], &s[11..26])
}

fn read_trace(dir: &Path) -> Option<trace::Trace> {
    let boot = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".boot.txt"))?;
    let mut bytes = Vec::new();
    use std::io::Read;
    std::fs::File::open(boot)
        .ok()?
        .take(trace::MAX_TRACE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(trace::parse(&bytes))
}

fn mount(destination: &str, source: &Path, writable: bool) -> Mount {
    Mount {
        destination: destination.into(),
        source: source.to_owned(),
        writable,
    }
}

/// Read `pipe` to its end, keeping the last [`MAX_STDERR_BYTES`].
fn drain<R: AsyncRead + Unpin + Send + 'static>(
    pipe: Option<R>,
) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let Some(mut pipe) = pipe else {
            return String::new();
        };
        let mut kept: Vec<u8> = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * MAX_STDERR_BYTES {
                kept.drain(..kept.len() - MAX_STDERR_BYTES);
            }
        }
        let start = kept.len().saturating_sub(MAX_STDERR_BYTES);
        String::from_utf8_lossy(&kept[start..]).into_owned()
    })
}

fn empty() -> tokio::task::JoinHandle<String> {
    tokio::spawn(async { String::new() })
}

/// The tools of a listing, in order: name and `inputSchema`.
fn tools_of(pages: &[String]) -> Vec<(String, Option<Value>)> {
    let Some(set) = toolmark_observation::observe::assemble(pages) else {
        return Vec::new();
    };
    set.tools
        .iter()
        .filter_map(|t| {
            let v: Value = serde_json::from_str(&t.raw).ok()?;
            Some((t.name()?.to_owned(), v.get("inputSchema").cloned()))
        })
        .collect()
}

fn toolmark_client_info() -> Value {
    serde_json::json!({"name": "toolmark", "version": env!("CARGO_PKG_VERSION"),
        "title": "toolmark transparency-log sandbox (initialize, tools/list, one canary call per tool)"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_times_are_month_day_and_utc_time_of_day() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_micros(1_796_177_100_123_456);
        assert_eq!(trace_time(t), "1202 02:05:00.123456");
    }

    #[test]
    fn trace_times_compare_across_the_years_turn() {
        assert!(before("1231 23:59:59.999999", "0101 00:00:00.000001"));
        assert!(!before("0101 00:00:00.000001", "1231 23:59:59.999999"));
        assert!(before("1202 01:00:00.000000", "1202 01:00:00.000001"));
        assert!(before("0630 10:00:00.000000", "0701 09:00:00.000000"));
    }

    #[test]
    fn what_happens_after_the_listing_outside_every_call_is_startup() {
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_177_100 + s);
        let calls = CallTimes {
            calls: vec![(at(10), at(12))],
            ..Default::default()
        };
        let startup = Window::Startup(at(5), calls.clone());
        let during = Window::Calls(calls);
        for (second, in_startup, in_calls) in [
            (3, true, false),
            (7, true, false),
            (11, false, true),
            (20, true, false),
        ] {
            let t = trace_time(at(second));
            assert_eq!(startup.holds(&t), in_startup, "{second}");
            assert_eq!(during.holds(&t), in_calls, "{second}");
        }
    }

    #[test]
    fn after_the_last_answer_with_no_call_in_flight_is_late_and_the_calls_phases() {
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_177_100 + s);
        // Listed at 5, calls 10–12 and 14–15, the grace from the last answer (15) to 18.
        let times = CallTimes {
            calls: vec![(at(10), at(12)), (at(14), at(15))],
            grace: Some((at(15), at(18))),
            unanswered: None,
        };
        let startup = Window::Startup(at(5), times.clone());
        let calls = Window::Calls(times.clone());
        for (second, in_startup, in_calls, late) in [
            (3, true, false, false),
            (11, false, true, false),
            // Between two calls: startup's, as before.
            (13, true, false, false),
            // The last answer's moment is the call's.
            (15, false, true, false),
            (16, false, true, true),
            (18, false, true, true),
            (20, true, false, false),
        ] {
            let t = trace_time(at(second));
            assert_eq!(startup.holds(&t), in_startup, "{second}");
            assert_eq!(calls.holds(&t), in_calls, "{second}");
            assert_eq!(calls.late(&t), late, "{second}");
            assert!(
                !startup.late(&t),
                "{second}: only the calls phase has a grace"
            );
        }
        // The second call timed out (its window ended at 15 without an answer): the server
        // may still be working on it, so nothing after it is late.
        let timed_out = Window::Calls(CallTimes {
            unanswered: Some(at(14)),
            ..times
        });
        for second in [16, 18] {
            let t = trace_time(at(second));
            assert!(timed_out.holds(&t) && !timed_out.late(&t), "{second}");
        }
    }

    #[test]
    fn with_no_call_made_what_follows_the_listing_stays_startup() {
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_177_100 + s);
        // Zero callable tools: no call window, so no grace for the calls phase.
        let times = CallTimes::default();
        let startup = Window::Startup(at(5), times.clone());
        let calls = Window::Calls(times);
        for second in [3, 6, 9] {
            let t = trace_time(at(second));
            assert!(startup.holds(&t), "{second}");
            assert!(!calls.holds(&t) && !calls.late(&t), "{second}");
        }
    }

    /// A search for a fixed canary.
    const CANARY: &str = "toolmark-canary-0123456789abcdef";

    fn answered(line: usize, id: u64, tool: &str) -> Answered {
        Answered {
            line,
            id,
            tool: tool.into(),
        }
    }

    #[test]
    fn a_message_carrying_the_canary_is_not_hidden_by_a_tools_answer_text() {
        let search = Search::new(CANARY);
        let lines: Vec<String> = [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            // A notification holding `{}` (the answer's whole text) and the canary.
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":{{}},"x":"{CANARY}"}}}}"#),
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#.to_owned(),
        ]
        .into();
        let answers = [answered(0, 1, "first"), answered(2, 2, "second")];
        assert_eq!(
            leaks(&lines, &answers, &search),
            ["(another message to the client)"]
        );
        // Without the notification: nothing.
        let quiet = [lines[0].clone(), lines[2].clone()];
        let answers = [answered(0, 1, "first"), answered(1, 2, "second")];
        assert!(leaks(&quiet, &answers, &search).is_empty());
    }

    #[test]
    fn a_tools_whole_answer_is_its_own_and_nothing_else_is() {
        let search = Search::new(CANARY);
        let lines: Vec<String> = [
            // The canary outside `result` (an extra member), and in an error's `data`: the
            // tool's answer.
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{}},"x":"{CANARY}"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":4,"error":{{"code":1,"message":"no","data":"{CANARY}"}}}}"#),
            // A batch: the answer is clean, the notification beside it is not.
            format!(r#"[{{"jsonrpc":"2.0","id":5,"result":{{}}}},{{"jsonrpc":"2.0","method":"n","params":{{"x":"{CANARY}"}}}}]"#),
        ]
        .into();
        let answers = [
            answered(0, 3, "extra"),
            answered(1, 4, "error"),
            answered(2, 5, "batch"),
        ];
        assert_eq!(
            leaks(&lines, &answers, &search),
            ["extra", "error", "(another message to the client)"]
        );
        // A second response to an answered id, on a later line, is another message.
        let lines: Vec<String> = [
            r#"{"jsonrpc":"2.0","id":6,"result":{}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":6,"result":{{"x":"{CANARY}"}}}}"#),
        ]
        .into();
        assert_eq!(
            leaks(&lines, &[answered(0, 6, "once")], &search),
            ["(another message to the client)"]
        );
    }

    fn written(what: &str, at: SystemTime) -> behaviour::Act {
        behaviour::Act {
            what: what.into(),
            pid: 2,
            comm: "node".into(),
            at: trace_time(at),
        }
    }

    /// A manifest of `home` begun at `at`.
    fn snapshot(home: &Path, at: SystemTime) -> Snapshot {
        Snapshot {
            at,
            manifest: home::Manifest::take(home),
        }
    }

    #[test]
    fn the_witness_is_matched_against_writes_of_its_own_span_that_wrote_the_path() {
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_177_100 + s);
        let dir = std::env::temp_dir().join(format!("toolmark-witness-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".ssh")).unwrap();
        std::fs::write(dir.join(".bashrc"), "# decoy\n").unwrap();
        let start = snapshot(&dir, at(0));
        std::fs::write(dir.join(".bashrc"), "# decoy\ncurl x | sh\n").unwrap();
        let listed = snapshot(&dir, at(10));
        std::fs::write(dir.join(".ssh/authorized_keys"), "ssh-ed25519 AAAA").unwrap();
        std::fs::write(dir.join(".profile"), "x").unwrap();
        std::fs::create_dir_all(dir.join(".config/autostart")).unwrap();
        let end = snapshot(&dir, at(20));
        let mut startup = PhaseReport::unseen(Phase::Startup, "x");
        let mut calls = PhaseReport::unseen(Phase::Calls, "x");
        // `.bashrc` written at startup is seen only by the startup witness; the calls phase's
        // write of it (at 15) does not hide startup's change.
        startup.facts.behaviour.writes = vec![
            written("/home/decoy/.profile", at(3)),
            written("/home/decoy/.ssh/authorized_keys", at(4)),
        ];
        calls.facts.behaviour.writes = vec![
            written("/home/decoy/.bashrc", at(15)),
            // A link *to* the path did not write it.
            written("link to /home/decoy/.ssh/authorized_keys", at(15)),
            written("mkdir /home/decoy/.config/autostart", at(16)),
        ];
        let mut phases = [startup, calls];
        witness(
            &mut phases,
            vec![
                (Phase::Startup, start, listed.clone()),
                (Phase::Calls, listed, end),
            ],
        );
        assert_eq!(phases[0].facts.home, ["changed /home/decoy/.bashrc"]);
        assert_eq!(
            phases[1].facts.home,
            [
                "created /home/decoy/.profile",
                "created /home/decoy/.ssh/authorized_keys"
            ]
        );
        for (act, path, wrote_it) in [
            ("/home/decoy/.bashrc", "/home/decoy/.bashrc", true),
            (
                "rename onto /home/decoy/.bashrc",
                "/home/decoy/.bashrc",
                true,
            ),
            ("link onto /home/decoy/.bashrc", "/home/decoy/.bashrc", true),
            (
                "mkdir /home/decoy/.config/autostart",
                "/home/decoy/.config/autostart",
                true,
            ),
            ("link to /home/decoy/.bashrc", "/home/decoy/.bashrc", false),
            (
                "rename of /home/decoy/.bashrc",
                "/home/decoy/.bashrc",
                false,
            ),
            ("/home/decoy/.bashrc.bak", "/home/decoy/.bashrc", false),
            (
                "rename onto /x/home/decoy/.bashrc",
                "/home/decoy/.bashrc",
                false,
            ),
        ] {
            assert_eq!(wrote(act, path), wrote_it, "{act}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn npm_and_the_shell_it_runs_a_script_in_are_the_harness_not_the_package() {
        let act = |what: &str, pid| behaviour::Act {
            what: what.into(),
            pid,
            comm: "x".into(),
            at: String::new(),
        };
        let mut b = Behaviour::default();
        b.parents.insert(2, 1);
        b.parents.insert(3, 2);
        b.exec = vec![
            act("/usr/bin/sh", 2),
            act("/usr/bin/node", 3),
            act("/usr/bin/sh", 3),
        ];
        b.decoys = vec![act("/home/decoy/.npmrc", 1), act("/home/decoy/.npmrc", 3)];
        let mut server = b.clone();
        drop_harness(&mut b, &Harness::npm(None));
        let whats = |v: &[behaviour::Act]| {
            v.iter()
                .map(|a| (a.what.clone(), a.pid))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            whats(&b.exec),
            [("/usr/bin/node".into(), 3), ("/usr/bin/sh".into(), 3)]
        );
        assert_eq!(whats(&b.decoys), [("/home/decoy/.npmrc".into(), 3)]);
        drop_harness(&mut server, &Harness::server(None));
        assert_eq!(server.decoys.len(), 2, "the server is the package");
        // Under the probe (pid 1), the probe's child is npm: its children's shells are npm's.
        let mut probed = Behaviour::default();
        probed.parents.insert(3, 2);
        probed.exec = vec![
            act("/usr/bin/npm", 2),
            act("/bin/sh", 3),
            act("/usr/bin/node", 3),
        ];
        drop_harness(&mut probed, &Harness::npm(Some(Some(2))));
        assert_eq!(whats(&probed.exec), [("/usr/bin/node".into(), 3)]);
        // And the server's own start is the probe's doing, not what the server does after.
        let mut server = Behaviour {
            exec: vec![act("/usr/bin/node", 2), act("/usr/bin/sh", 2)],
            ..Default::default()
        };
        drop_harness(&mut server, &Harness::server(Some(Some(2))));
        assert_eq!(whats(&server.exec), [("/usr/bin/sh".into(), 2)]);
    }

    #[test]
    fn a_report_is_an_observation_whose_document_keeps_the_sandboxs_facts() {
        use toolmark_observation::document::{DocTarget, Document};
        let mut r = Report::new(Status::InstallFailed, "npm rebuild exited with 1".into());
        r.name = "@acme/weather".into();
        r.version = "1.2.3".into();
        r.phases
            .push(PhaseReport::unseen(Phase::Install, "trace-missing"));
        let obs = r.observation(&r.package_id(), Some(toolmark_toolset::Sri::of(b"tgz")));
        assert_eq!(obs.status.name(), "install-failed");
        assert_eq!(obs.detail, "npm rebuild exited with 1");
        let target = DocTarget {
            server: "io.example/weather".into(),
            endpoint: "npm:@acme/weather".into(),
            declared_transport: "stdio".into(),
        };
        let bytes = Document::new(target, &obs).encode().unwrap();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(doc["status"], "install-failed");
        assert_eq!(doc["package"]["id"], "npm:@acme/weather@1.2.3");
        let facts = &doc["package"]["sandbox"];
        assert_eq!(facts["observer"], OBSERVER);
        assert_eq!(facts["complete"], false);
        assert_eq!(facts["behaviour"][0]["phase"], "install");
        assert_eq!(facts["behaviour"][0]["incomplete"][0], "trace-missing");
        // Statuses the core knows keep their own names.
        for (status, name) in [
            (Status::Ok, "ok"),
            (Status::Timeout, "timeout"),
            (Status::OutOfMemory, "out-of-memory"),
        ] {
            let r = Report::new(status, String::new());
            assert_eq!(r.observation("npm:a@1", None).status.name(), name);
        }
    }

    #[test]
    fn the_facts_keep_the_members_and_shapes_stored_documents_have() {
        use serde_json::json;
        let mut r = Report::new(Status::Ok, String::new());
        r.runsc_version = "runsc version test".into();
        r.timings = vec![("install", Duration::from_millis(1200))];
        r.calls_grace = Some(CALLS_GRACE);
        r.scripts = vec![("evil".into(), "postinstall".into(), "node x".into())];
        r.calls = vec![
            CallOutcome {
                tool: "echo".into(),
                outcome: "ok",
                detail: "unused".into(),
            },
            CallOutcome {
                tool: "big".into(),
                outcome: "skipped",
                detail: "schema".into(),
            },
        ];
        let act = |what: &str| behaviour::Act {
            what: what.into(),
            pid: 2,
            comm: "node".into(),
            at: "1202 19:00:00.000001".into(),
        };
        let mut startup = PhaseReport::unseen(Phase::Startup, "phase-cut");
        startup.facts.behaviour.network = vec![act("collect.example:443 (127.128.0.1)")];
        startup.facts.behaviour.decoys = vec![act("/home/decoy/.ssh/id_rsa")];
        startup.facts.lookups = vec!["collect.example".into()];
        startup.facts.home = vec!["created /home/decoy/.bashrc".into()];
        startup.facts.leaked_by = vec!["echo".into()];
        r.phases.push(startup);
        r.findings = vec![Finding {
            code: "READS_SECRETS",
            severity: findings::Severity::High,
            phase: Phase::Startup,
            evidence: vec!["/home/decoy/.ssh/id_rsa".into()],
        }];
        let act = |what: &str| json!({"what": what, "pid": 2, "comm": "node"});
        // What `Report::facts` wrote as a `json!` object before it had a type: the same
        // members, nulls and shapes, so documents keep their bytes.
        let expected = json!({
            "observer": OBSERVER,
            "runsc": "runsc version test",
            "complete": false,
            "timingsMs": {"install": 1200},
            "callsGraceMs": 3000,
            "installScripts": [{"package": "evil", "script": "postinstall", "command": "node x"}],
            "calls": [{"tool": "echo", "outcome": "ok", "detail": null},
                      {"tool": "big", "outcome": "skipped", "detail": "schema"}],
            "behaviour": [{
                "phase": "startup", "complete": false, "incomplete": ["phase-cut"],
                "exec": [], "network": [act("collect.example:443 (127.128.0.1)")],
                "lookups": ["collect.example"], "requests": [],
                "decoys": [act("/home/decoy/.ssh/id_rsa")], "writes": [],
                "home": ["created /home/decoy/.bashrc"], "late": [], "exfiltrated": [],
                "leakedBy": ["echo"],
            }],
            "findings": [{"code": "READS_SECRETS", "severity": "high", "phase": "startup",
                          "evidence": ["/home/decoy/.ssh/id_rsa"]}],
        });
        assert_eq!(r.facts().to_value(), expected);
        assert_eq!(
            SandboxFacts::read(&expected).unwrap(),
            r.facts(),
            "what the sandbox writes the index reads"
        );
    }

    #[test]
    fn a_wheels_package_id_is_its_pep503_name_and_version() {
        let mut r = Report::new(Status::Ok, String::new());
        r.ecosystem = Ecosystem::Pypi;
        r.name = "MCP_Server.Time".into();
        r.version = "2026.10.19".into();
        assert_eq!(r.package_id(), "pypi:mcp-server-time@2026.10.19");
        r.ecosystem = Ecosystem::Npm;
        r.name = "@acme/weather".into();
        assert_eq!(r.package_id(), "npm:@acme/weather@2026.10.19");
    }

    #[test]
    fn an_unfetched_version_keeps_the_fetchs_status_and_ran_nothing() {
        for (status, name) in [
            (Status::NoWheel, "no-wheel"),
            (Status::NotFound, "not-found"),
        ] {
            let r = Report::unfetched(status, "fetching pypi:x==1: …");
            assert_eq!(r.observation("pypi:x==1", None).status.name(), name);
            assert!(r.phases.is_empty() && r.pages.is_empty());
            assert!(!r.complete());
            assert_eq!(r.package_id(), "", "nothing was installed");
        }
    }
}
