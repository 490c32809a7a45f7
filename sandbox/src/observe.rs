//! One npm package observed in gVisor: its tree made on the host with scripts disabled
//! ([`prepare`]), its install scripts run traced in a sandbox of their own (the install
//! phase), then the server started traced in a fresh sandbox, its tools listed (the startup
//! phase) and each called once with canary arguments (the calls phase); what each phase did,
//! read from its trace, and the findings.
//!
//! Every run gets a fresh decoy HOME and two canaries: the decoy canary in every decoy file and
//! token (seen again in a tool result or leaving through a socket: a leak), and the argument
//! canary in the tool calls' arguments (a tool that echoes its arguments leaks nothing).
//!
//! Phases are split by time: the trace's timestamps (the sentry's UTC wall clock) against the
//! moment the tool listing was read. Events of the harness itself (npm running the scripts in
//! the install phase) are not the package's.
//!
//! Limits ([`Limits::default`]): [`INSTALL_TIMEOUT`], [`STARTUP_TIMEOUT`], [`CALL_TIMEOUT`],
//! [`CALLS_TIMEOUT`], [`MAX_CALLS`], [`MEMORY_BYTES`], [`HOST_PIDS`], [`OPEN_FILES`],
//! [`MAX_STDERR_BYTES`]; each overrun ends the run with a named [`Status`].
//!
//! What it does not do yet (issue #14): PyPI wheels, the DNS sink and the HTTP/HTTPS/SMTP
//! traps (so a lookup's name is unknown and the phase says so), a guest-side process limit
//! (a fork bomb meets the host pids cgroup: `sandbox-error`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, BufReader};
use toolmark_mcp::session::{
    Answer, Failure, Handshake, Identity, Limits as SessionLimits, Listing, Session,
};

use crate::arguments::{self, Arguments};
use crate::behaviour::{self, Behaviour, Layout};
use crate::decoys::{self, Canary};
use crate::findings::{self, Finding, Phase, PhaseFacts};
use crate::prepare::{self, NpmOptions, NpmTree, PrepareError};
use crate::runsc::{Bundle, BundleSpec, Mount, Sandbox, Trace as TraceSpec};
use crate::stdio::{Stdio, StdioError};
use crate::trace;

/// Longest the install phase (`npm rebuild` of the tree's install scripts) may run.
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest from start until the tools are listed.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(45);
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
/// Most bytes of a phase's stderr kept (the rest is read and dropped).
pub const MAX_STDERR_BYTES: usize = 64 * 1024;
/// How long a server is given to exit after its stdin is closed, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// The uid the package runs as inside (and owns its decoy HOME on the host).
pub const SANDBOX_UID: u32 = 1000;
/// HOME inside.
pub const HOME: &str = "/home/decoy";
/// The package tree inside.
pub const PKG: &str = "/pkg";
/// The decoy note a path argument names.
pub const NOTE: &str = "/home/decoy/notes/canary.txt";

/// The limits one observation runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// See [`INSTALL_TIMEOUT`].
    pub install: Duration,
    /// See [`STARTUP_TIMEOUT`].
    pub startup: Duration,
    /// See [`CALL_TIMEOUT`].
    pub call: Duration,
    /// See [`CALLS_TIMEOUT`].
    pub calls: Duration,
    /// See [`MAX_CALLS`].
    pub max_calls: usize,
    /// See [`MEMORY_BYTES`].
    pub memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            install: INSTALL_TIMEOUT,
            startup: STARTUP_TIMEOUT,
            call: CALL_TIMEOUT,
            calls: CALLS_TIMEOUT,
            max_calls: MAX_CALLS,
            memory_bytes: MEMORY_BYTES,
        }
    }
}

/// How an observation ended (HISTOR's names where they fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// The tools were listed.
    Ok,
    /// npm could not install the package, or its install scripts failed.
    InstallFailed,
    /// Nothing to run (no `bin` npx would run).
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
    /// No gVisor here: nothing was run.
    SandboxUnavailable,
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
            Status::SandboxUnavailable => "sandbox-unavailable",
            Status::SandboxError => "sandbox-error",
        }
    }
}

/// How the server is started, from the registry's `packages[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// Arguments after the entry point (`packageArguments`).
    pub arguments: Vec<String>,
    /// Environment variables the entry declares: a value, or `None` for a canary value.
    pub env: Vec<(String, Option<String>)>,
}

/// One tool call's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// The tool.
    pub tool: String,
    /// `ok`, `error` (a JSON-RPC error or `isError`), `timeout`, `skipped` (schema), `not-called`
    /// (over the count or time budget, or the server went away).
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
    /// Install-time scripts found in the tree (package directory, script, text).
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
    /// How long it took.
    pub elapsed: Duration,
}

impl Report {
    fn new(status: Status, detail: String) -> Report {
        Report {
            status,
            detail,
            name: String::new(),
            version: String::new(),
            initialize: None,
            protocol_version: None,
            pages: Vec::new(),
            scripts: Vec::new(),
            calls: Vec::new(),
            phases: Vec::new(),
            findings: Vec::new(),
            runsc_version: String::new(),
            stderr: String::new(),
            elapsed: Duration::ZERO,
        }
    }

    /// Every phase run was completely seen and the tools were listed: the only state in which
    /// an absence of findings means something.
    pub fn complete(&self) -> bool {
        self.status == Status::Ok && self.phases.iter().all(|p| p.complete)
    }
}

/// The observer: where gVisor and npm are, where runs live, and under which limits.
#[derive(Debug, Clone)]
pub struct Observer {
    /// The `runsc` binary (`None`: [`Status::SandboxUnavailable`], nothing runs).
    pub runsc: Option<PathBuf>,
    /// How the tree is installed.
    pub npm: NpmOptions,
    /// A directory for runs (each gets its own, removed afterwards).
    pub work: PathBuf,
    /// The limits.
    pub limits: Limits,
    /// Keep each run's directory (trees, decoy HOME, traces) for inspection.
    pub keep: bool,
}

impl Observer {
    /// Observe the npm package in `tarball` (already verified against its registry's
    /// integrity), started as `launch` says.
    pub async fn observe_npm(&self, tarball: &Path, launch: &Launch) -> Report {
        let started = Instant::now();
        let mut report = match self.runsc.as_deref() {
            None => Report::new(
                Status::SandboxUnavailable,
                "runsc (gVisor) is not installed: no package code runs without it".into(),
            ),
            Some(runsc) => match Run::new(self, runsc) {
                Ok(run) => {
                    let report = run.npm(tarball, launch).await;
                    if !self.keep {
                        let _ = std::fs::remove_dir_all(&run.dir);
                    }
                    report
                }
                Err(e) => Report::new(Status::SandboxError, format!("setting up the run: {e}")),
            },
        };
        report.elapsed = started.elapsed();
        report
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

struct Run<'a> {
    observer: &'a Observer,
    runsc: &'a Path,
    dir: PathBuf,
    id: String,
    canary: Canary,
    argument: Canary,
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
        Ok(Run {
            observer,
            runsc,
            dir,
            id,
            canary,
            argument,
        })
    }

    async fn npm(&self, tarball: &Path, launch: &Launch) -> Report {
        let tree =
            match prepare::npm_tree(&self.observer.npm, tarball, &self.dir.join("tree")).await {
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
        report.name = tree.name.clone();
        report.version = tree.version.clone();
        report.scripts = tree.scripts.clone();
        report.runsc_version = runsc_version(self.runsc);
        let home = self.dir.join("home");
        if let Err(e) = decoys::plant(&home, None, &self.canary, SANDBOX_UID)
            .and_then(|()| std::fs::create_dir_all(home.join("notes")))
            .and_then(|()| {
                std::fs::write(
                    home.join("notes/canary.txt"),
                    format!("{}\n", self.canary.as_str()),
                )
            })
            .and_then(|()| {
                std::os::unix::fs::chown(
                    home.join("notes/canary.txt"),
                    Some(SANDBOX_UID),
                    Some(SANDBOX_UID),
                )
            })
            .and_then(|()| chown_tree(&tree.dir, SANDBOX_UID))
        {
            return Report::new(Status::SandboxError, format!("planting the decoys: {e}"));
        }
        if !tree.scripts.is_empty() {
            match self.install(&tree, &home).await {
                Ok(phase) => report.phases.push(phase),
                Err((status, detail, phase)) => {
                    report.status = status;
                    report.detail = detail;
                    report.phases.extend(phase);
                    report.findings = findings_of(&report.phases);
                    return report;
                }
            }
        }
        self.serve(&tree, &home, launch, &mut report).await;
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
        for (name, value) in extra {
            let value = value
                .clone()
                .unwrap_or_else(|| self.canary.as_str().to_owned());
            env.push(format!("{name}={value}"));
        }
        env
    }

    fn bundle(
        &self,
        name: &str,
        args: Vec<String>,
        env: Vec<String>,
        cwd: &str,
        mounts: Vec<Mount>,
    ) -> std::io::Result<Bundle> {
        Bundle::create(
            &self.dir.join(name),
            &BundleSpec {
                args,
                env,
                cwd: cwd.into(),
                uid: SANDBOX_UID,
                mounts,
                memory_bytes: self.observer.limits.memory_bytes,
                host_pids: HOST_PIDS,
                open_files: OPEN_FILES,
            },
        )
    }

    fn trace_spec(&self, phase: &str) -> TraceSpec {
        TraceSpec {
            log_dir: self.dir.join(format!("logs-{phase}")),
            syscalls: trace::TRACED_SYSCALLS
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }

    /// The install phase: `npm rebuild` of the tree (read-write) in a sandbox.
    async fn install(
        &self,
        tree: &NpmTree,
        home: &Path,
    ) -> Result<PhaseReport, (Status, String, Option<PhaseReport>)> {
        let mut env = self.env(&[]);
        env.push("npm_config_cache=/tmp/.npm".into());
        env.push("npm_config_update_notifier=false".into());
        let args = [
            "/usr/bin/npm",
            "rebuild",
            "--foreground-scripts",
            "--offline",
            "--no-audit",
            "--no-fund",
        ]
        .map(String::from)
        .to_vec();
        let mounts = vec![mount(PKG, &tree.dir, true), mount(HOME, home, true)];
        let bundle = self
            .bundle("bundle-install", args, env, PKG, mounts)
            .map_err(|e| {
                (
                    Status::SandboxError,
                    format!("the install bundle: {e}"),
                    None,
                )
            })?;
        let spec = self.trace_spec("install");
        let mut sandbox = Sandbox::spawn(
            self.runsc,
            bundle,
            &format!("{}-install", self.id),
            Some(&spec),
        )
        .map_err(|e| (Status::SandboxError, format!("starting runsc: {e}"), None))?;
        drop(sandbox.child.stdin.take());
        let stdout = drain(sandbox.child.stdout.take());
        let stderr = drain(sandbox.child.stderr.take());
        let waited = tokio::time::timeout(self.observer.limits.install, sandbox.child.wait()).await;
        let exit = sandbox.stop().await;
        let output = format!(
            "{}{}",
            stderr.await.unwrap_or_default(),
            stdout.await.unwrap_or_default()
        );
        let mut phase = self.phase(Phase::Install, &spec, None, true);
        let result = match waited {
            Err(_) => Err((
                Status::Timeout,
                format!(
                    "install scripts ran longer than {:?}",
                    self.observer.limits.install
                ),
            )),
            Ok(Err(e)) => Err((Status::SandboxError, format!("waiting for runsc: {e}"))),
            Ok(Ok(status)) if status.code() == Some(137) => Err((
                Status::OutOfMemory,
                format!(
                    "the install phase was killed at its memory limit ({} bytes)",
                    self.observer.limits.memory_bytes
                ),
            )),
            Ok(Ok(status)) if !status.success() => Err((
                Status::InstallFailed,
                format!(
                    "npm rebuild exited with {status}: {}",
                    prepare::tail(&output, 2048)
                ),
            )),
            Ok(Ok(_)) => Ok(()),
        };
        let _ = exit;
        match result {
            Ok(()) => Ok(phase),
            Err((status, detail)) => {
                if status == Status::Timeout {
                    phase.complete = false;
                    phase.incomplete.push("phase-cut".into());
                }
                Err((status, detail, Some(phase)))
            }
        }
    }

    /// The startup and calls phases: the server in a sandbox, over stdio.
    async fn serve(&self, tree: &NpmTree, home: &Path, launch: &Launch, report: &mut Report) {
        let entry = format!("{PKG}/node_modules/{}/{}", tree.name, tree.bin);
        let host_entry = tree
            .dir
            .join("node_modules")
            .join(&tree.name)
            .join(&tree.bin);
        let mut args = match interpreter(&host_entry) {
            Some(i) => vec![i, entry],
            None => vec![entry],
        };
        args.extend(launch.arguments.iter().cloned());
        let mounts = vec![mount(PKG, &tree.dir, false), mount(HOME, home, true)];
        let bundle = match self.bundle("bundle-run", args, self.env(&launch.env), HOME, mounts) {
            Ok(b) => b,
            Err(e) => {
                report.status = Status::SandboxError;
                report.detail = format!("the run bundle: {e}");
                return;
            }
        };
        let spec = self.trace_spec("run");
        let mut sandbox =
            match Sandbox::spawn(self.runsc, bundle, &format!("{}-run", self.id), Some(&spec)) {
                Ok(s) => s,
                Err(e) => {
                    report.status = Status::SandboxError;
                    report.detail = format!("starting runsc: {e}");
                    return;
                }
            };
        let stderr = drain(sandbox.child.stderr.take());
        let (Some(stdout), Some(stdin)) = (sandbox.child.stdout.take(), sandbox.child.stdin.take())
        else {
            report.status = Status::SandboxError;
            report.detail = "runsc's pipes were not there".into();
            return;
        };
        let mut stdio = Stdio::new(BufReader::new(stdout), stdin);
        let mut listing = Listing::default();
        let identity = Identity {
            client_info: toolmark_client_info(),
            capabilities: serde_json::json!({}),
        };
        let limits = &self.observer.limits;
        let mut session = Session::new(SessionLimits::default(), identity, &mut listing);
        let listed = tokio::time::timeout(
            limits.startup,
            session.list_tools(&mut stdio, Handshake::Initialize("2025-06-18")),
        )
        .await;
        let listed_at = SystemTime::now();
        let mut cut = false;
        match listed {
            Err(_) => {
                report.status = Status::Timeout;
                report.detail = format!("the tools were not listed within {:?}", limits.startup);
                cut = true;
            }
            Ok(Err(e)) => {
                (report.status, report.detail) = match &e.failure {
                    Failure::Transport(StdioError::Closed(_)) => (Status::Exited, e.to_string()),
                    Failure::Transport(StdioError::TooMuchOutput | StdioError::LineTooLong)
                    | Failure::TooLarge(_) => (Status::TooLarge, e.to_string()),
                    _ => (Status::Protocol, e.to_string()),
                };
            }
            Ok(Ok(())) => {
                report.calls = self.calls(&mut session, &mut stdio).await;
            }
        }
        drop(session);
        report.initialize = listing.initialize.clone();
        report.protocol_version = listing.protocol_version.clone();
        report.pages = listing.pages.clone();
        let leaked_by: Vec<String> = report
            .calls
            .iter()
            .filter(|c| c.outcome != "skipped" && c.outcome != "not-called")
            .filter(|c| self.canary.found_in(c.detail.as_bytes()))
            .map(|c| c.tool.clone())
            .collect();
        // Close stdin, give the server a moment, then kill it.
        drop(stdio);
        // Only an exit of its own says how it ended: ours (runsc kill) is a SIGKILL too.
        let own_exit = match tokio::time::timeout(EXIT_GRACE, sandbox.child.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => None,
        };
        sandbox.stop().await;
        if own_exit.and_then(|s| s.code()) == Some(137) && report.status != Status::Ok {
            report.status = Status::OutOfMemory;
            report.detail = format!(
                "the sandbox was killed at its memory limit ({} bytes)",
                limits.memory_bytes
            );
        }
        report.stderr = stderr.await.unwrap_or_default();
        let ok = report.status == Status::Ok;
        let mut startup = self.phase(Phase::Startup, &spec, Some((listed_at, true)), false);
        if cut {
            startup.complete = false;
            startup.incomplete.push("phase-cut".into());
        }
        report.phases.push(startup);
        if ok {
            let mut calls = self.phase(Phase::Calls, &spec, Some((listed_at, false)), false);
            calls.facts.leaked_by = leaked_by;
            report.phases.push(calls);
        }
    }

    /// Each listed tool called once (up to the limits) with canary arguments.
    async fn calls<R, W>(
        &self,
        session: &mut Session<'_>,
        stdio: &mut Stdio<R, W>,
    ) -> Vec<CallOutcome>
    where
        R: tokio::io::AsyncBufRead + Unpin + Send,
        W: tokio::io::AsyncWrite + Unpin + Send,
    {
        let limits = &self.observer.limits;
        let tools = tools_of(&session.listing().pages);
        let budget = Instant::now() + limits.calls;
        let mut out = Vec::new();
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
            match tokio::time::timeout(left, session.call_tool(stdio, &name, args)).await {
                Err(_) => out.push(outcome("timeout", format!("no answer within {left:?}"))),
                Ok(Ok(Answer::Result(r))) => {
                    let is_error = serde_json::from_str::<Value>(&r)
                        .ok()
                        .and_then(|v| v.get("isError").and_then(Value::as_bool))
                        .unwrap_or(false);
                    out.push(outcome(if is_error { "error" } else { "ok" }, r));
                }
                Ok(Ok(Answer::Error { code, message })) => out.push(outcome(
                    "error",
                    format!("JSON-RPC error {code}: {message}"),
                )),
                Ok(Err(e)) => {
                    gone = true;
                    out.push(outcome("error", format!("{e:?}")));
                }
            }
        }
        out
    }

    /// The phase's facts from the trace in `spec`'s log directory: all of it, or the part
    /// before (`true`) or after (`false`) a moment.
    fn phase(
        &self,
        phase: Phase,
        spec: &TraceSpec,
        split: Option<(SystemTime, bool)>,
        harness: bool,
    ) -> PhaseReport {
        let layout = Layout {
            home: HOME.into(),
            cwd: HOME.into(),
            writable: if harness { vec![PKG.into()] } else { vec![] },
        };
        let mut incomplete = Vec::new();
        let mut parsed = read_trace(&spec.log_dir).unwrap_or_else(|| {
            incomplete.push("trace-missing".to_owned());
            trace::Trace::default()
        });
        let whole_empty = parsed.events.is_empty();
        if let Some((at, before)) = split {
            let mark = trace_time(at);
            parsed
                .events
                .retain(|e| (e.time.as_str() <= mark.as_str()) == before);
        }
        let mut b = behaviour::of(&parsed, &layout);
        if !whole_empty {
            // A quiet part of a trace that has events is not an empty trace.
            b.incomplete.remove("trace-empty");
            b.complete = b.incomplete.is_empty();
        }
        if harness {
            drop_harness(&mut b);
        }
        let exfiltrated = socket_leaks(&parsed, &self.canary);
        let lookups: Vec<String> = b.dns.iter().map(|_| "?".to_owned()).collect();
        if !lookups.is_empty() {
            incomplete.push("lookup-name-unknown".to_owned());
        }
        incomplete.extend(b.incomplete.iter().map(|s| s.to_string()));
        let complete = incomplete.is_empty();
        PhaseReport {
            phase,
            facts: PhaseFacts {
                behaviour: b,
                lookups,
                exfiltrated,
                leaked_by: Vec::new(),
                harness_programs: 0,
            },
            complete,
            incomplete,
        }
    }
}

fn findings_of(phases: &[PhaseReport]) -> Vec<Finding> {
    let list: Vec<(Phase, &PhaseFacts)> = phases.iter().map(|p| (p.phase, &p.facts)).collect();
    findings::of(&list)
}

/// Remove what the install harness (npm, pid 1) did itself: its own acts, and the shell each
/// of its direct children runs a script in.
fn drop_harness(b: &mut Behaviour) {
    let parents = b.parents.clone();
    let mut shells = std::collections::BTreeSet::new();
    b.exec.retain(|a| {
        let npm_child = parents.get(&a.pid) == Some(&1);
        let shell = a.what.ends_with("/sh") && npm_child && shells.insert(a.pid);
        a.pid != 1 && !shell
    });
    for acts in [&mut b.network, &mut b.dns, &mut b.decoys, &mut b.writes] {
        acts.retain(|a| a.pid != 1);
    }
}

/// Writes into sockets (the trace's entry lines carry the buffer) that carry `canary`.
fn socket_leaks(t: &trace::Trace, canary: &Canary) -> Vec<String> {
    t.events
        .iter()
        .filter(|e| !e.exit && matches!(e.syscall.as_str(), "write" | "sendto" | "sendmsg"))
        .filter(|e| e.args.contains("socket:[") && canary.found_in(e.args.as_bytes()))
        .map(|e| format!("{} by {} (pid {})", e.syscall, e.comm, e.pid))
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

/// `node` for a JavaScript entry point; `None` for a file with a shebang of its own.
fn interpreter(entry: &Path) -> Option<String> {
    let mut head = [0u8; 128];
    let n = std::fs::File::open(entry)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let head = &head[..n];
    let own = head.starts_with(b"#!")
        && !head
            .split(|b| *b == b'\n')
            .next()
            .is_some_and(|l| l.windows(4).any(|w| w == b"node"));
    (!own).then(|| "/usr/bin/node".to_owned())
}

fn mount(destination: &str, source: &Path, writable: bool) -> Mount {
    Mount {
        destination: destination.into(),
        source: source.to_owned(),
        writable,
    }
}

fn chown_tree(dir: &Path, uid: u32) -> std::io::Result<()> {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid))?;
    if dir.is_dir() && !dir.is_symlink() {
        for entry in std::fs::read_dir(dir)? {
            chown_tree(&entry?.path(), uid)?;
        }
    }
    Ok(())
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

/// The tools of a listing: name and `inputSchema`, in order.
fn tools_of(pages: &[String]) -> Vec<(String, Option<Value>)> {
    pages
        .iter()
        .filter_map(|p| serde_json::from_str::<Value>(p).ok())
        .flat_map(|v| {
            v.get("tools")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|t| {
            Some((
                t.get("name")?.as_str()?.to_owned(),
                t.get("inputSchema").cloned(),
            ))
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
    fn npm_and_the_shell_it_runs_a_script_in_are_the_harness_not_the_package() {
        let act = |what: &str, pid| behaviour::Act {
            what: what.into(),
            pid,
            comm: "x".into(),
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
        drop_harness(&mut b);
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
    }
}
