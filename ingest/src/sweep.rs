//! The package sweep: every npm and PyPI server the registry lists, each version observed once
//! in the sandbox (gVisor) and logged like a remote's observation.
//!
//! One sweep run ([`run_sweep`]) reads the registry records the last crawl stored (it never
//! harvests: the crawl does), lists their packages, chooses which versions to observe
//! ([`choose`]), fetches each (verified against its registry's digest, through the crawler's
//! SSRF guard), observes it in the sandbox with the start values its registry entry declares,
//! and records the observations through the same batching recorder the crawl uses
//! ([`crate::record_stream`]): one log entry per observation, subject `npm:<name>` with
//! `package` `npm:<name>@<version>`, its document holding the raw responses and the sandbox's
//! facts.
//!
//! Which versions, in order, at most [`SweepOptions::cap`] per run:
//! 1. a new version of a package observed before (it changed; the answer for it is stale);
//! 2. a package never observed;
//! 3. a version observed, but not completely (a status but `ok`, or a phase not completely
//!    seen) or under an older observer ([`toolmark_sandbox::observe::OBSERVER`]) — oldest
//!    attempt first — and packages listed without a version.
//!
//! A version observed completely by the current observer, or that ended in one of
//! [`FINAL_STATUSES`], is never observed again. Without
//! gVisor the sweep does not start ([`IngestError::Options`]): no package code ever runs
//! outside it, and no `sandbox-unavailable` entry is logged for every package every day.
//!
//! What it never does: run package code itself (the sandbox does), harvest the registry, or
//! list or delist anything (the crawl's runs do).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use toolmark_crawler::mcp::ClientConfig;
use toolmark_crawler::packages::{self, PackageError, Registries, Spec};
use toolmark_index::DataDir;
use toolmark_index::record::{Recorded, Recorder, TargetOutcome, target_string};
use toolmark_observation::observe::{Observation, Sandboxed, Status as ObsStatus, Via};
use toolmark_observation::registry::{Ecosystem, Record, Target, TargetKind};
use toolmark_sandbox::observe::{Artifact, Launch, OBSERVER, Observer};
use toolmark_sandbox::prepare::{NpmOptions, PipOptions};

use crate::{IngestError, Stop, plan};

/// Versions observed per sweep run at most (HISTOR: 300 per crawl).
pub const DEFAULT_CAP: usize = 300;

/// Sandboxes run at once (HISTOR: 2 slots; this machine has 2 cores).
pub const DEFAULT_CONCURRENCY: usize = 2;

/// Observations of a package read to choose its next version (the newest ones).
const HISTORY: usize = 64;

/// The sweep's knobs: the `[packages]` section of the service's configuration, and `toolmark
/// package sweep`'s flags (flattened there; their defaults are [`SweepOptions::default`]'s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, default)]
pub struct SweepOptions {
    /// Versions observed per run at most (0: none).
    #[arg(long, default_value_t = DEFAULT_CAP)]
    pub cap: usize,
    /// Sandboxes at once (1–8).
    #[arg(long, default_value_t = DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
    /// The npm registry packages and their dependencies come from.
    #[arg(long, default_value = packages::NPM_REGISTRY)]
    pub npm_registry: String,
    /// The Python package index (its JSON API under `/pypi/`, its simple index under
    /// `/simple/`).
    #[arg(long, default_value = packages::PYPI_INDEX)]
    pub pypi_index: String,
    /// Where sandbox runs live (each a tmpfs of its own, removed afterwards).
    #[arg(long, default_value = "/var/tmp/toolmark-sandbox")]
    pub work: PathBuf,
    /// npm's and pip's caches (content-addressed, checked; shared between runs).
    #[arg(long, default_value = "/var/cache/toolmark")]
    pub cache: PathBuf,
    /// Fetch from loopback or private addresses (tests, a local mirror).
    #[arg(long)]
    pub allow_private: bool,
    /// The `toolmark-probe` binary (the sandbox's DNS sink and traps); empty: the one beside
    /// the running binary. (A flag of its own where flattened: an empty path is no value.)
    #[arg(skip)]
    pub probe: PathBuf,
}

impl SweepOptions {
    /// The observer a sweep runs with ([`Observer::new`]): npm from `npm_registry` and pip from
    /// `pypi_index`'s simple API, their caches under `cache`, runs under `work`, the probe
    /// `probe` names (empty: the one beside the running binary).
    pub fn observer(&self) -> Observer {
        Observer::new(
            NpmOptions::new(self.npm_registry.clone(), self.cache.join("npm"), false),
            simple_index_pip(&self.pypi_index, self.cache.join("pip")),
            self.work.clone(),
            (!self.probe.as_os_str().is_empty()).then(|| self.probe.clone()),
        )
    }
}

/// pip installing from `index`'s simple API (`<index>/simple`), cached in `cache`.
pub(crate) fn simple_index_pip(index: &str, cache: PathBuf) -> PipOptions {
    PipOptions::new(format!("{}/simple", index.trim_end_matches('/')), cache)
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            cap: DEFAULT_CAP,
            concurrency: DEFAULT_CONCURRENCY,
            npm_registry: packages::NPM_REGISTRY.to_owned(),
            pypi_index: packages::PYPI_INDEX.to_owned(),
            work: PathBuf::from("/var/tmp/toolmark-sandbox"),
            cache: PathBuf::from("/var/cache/toolmark"),
            allow_private: false,
            probe: PathBuf::new(),
        }
    }
}

impl SweepOptions {
    /// What makes these options unusable, if anything.
    pub fn problem(&self) -> Option<String> {
        if !(1..=8).contains(&self.concurrency) {
            return Some(format!(
                "packages.concurrency must be 1–8, not {}",
                self.concurrency
            ));
        }
        None
    }
}

/// What one sweep run reads and writes.
#[derive(Debug, Clone)]
pub struct SweepRun<'a> {
    /// The data directory written.
    pub data: &'a DataDir,
    /// The checkpoint origin of a log this run creates.
    pub origin: &'a str,
    /// The MCP registry whose stored records list the packages (the crawl's `registry`).
    pub registry: &'a str,
    /// The knobs.
    pub options: &'a SweepOptions,
    /// The observer (gVisor, the probe, npm's and pip's options, the limits).
    pub observer: &'a Observer,
    /// The packages this run may observe, as target strings (`npm:<name>`, `pypi:<name>` as
    /// the registry lists them); `None`: every package listed. The demo sweeps only the few
    /// whose files it has; the others stay awaiting the sandbox.
    pub only: Option<&'a [String]>,
}

/// One version chosen for a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The target (a package of a listed server).
    pub target: Target,
    /// The version the registry entry lists (`None`: the package registry's latest).
    pub version: Option<String>,
    /// How its server is started.
    pub launch: Launch,
    /// Why it was chosen: `new-version`, `never-observed` or `retry`.
    pub why: &'static str,
}

/// A package target with what the index knows of it, for [`choose`].
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The target, its version as listed, and its start.
    pub chosen: Chosen,
    /// Observations of its versions (version, status complete under `OBSERVER`, observedAt),
    /// oldest first.
    pub seen: Vec<Seen>,
}

/// Statuses that are the package's own final word on a version: observing it again would say
/// the same (the registry has no such version or no wheel; it does not install; it has nothing
/// to run). Every other status but a complete `ok` is observed again.
pub const FINAL_STATUSES: [&str; 4] = ["not-found", "no-wheel", "install-failed", "no-entry-point"];

/// One earlier observation of a package, as [`choose`] weighs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The version observed.
    pub version: String,
    /// Not to be observed again: complete (`ok`, every phase seen) under the current observer,
    /// or ended in one of [`FINAL_STATUSES`].
    pub done: bool,
    /// When.
    pub observed_at: String,
}

/// The versions to observe, in order, at most `cap` (module docs). A candidate listed without a
/// version (`None`) is chosen every run, among the retries: which version is its latest only the
/// package registry can say, and a version already observed is then recorded again.
pub fn choose(candidates: Vec<Candidate>, cap: usize) -> Vec<Chosen> {
    let mut new_versions = Vec::new();
    let mut never = Vec::new();
    let mut retries: Vec<(String, Chosen)> = Vec::new();
    for c in candidates {
        let Candidate { mut chosen, seen } = c;
        if seen.is_empty() {
            chosen.why = "never-observed";
            never.push(chosen);
            continue;
        }
        let Some(version) = chosen.version.clone() else {
            // Which version is latest is the package registry's to say: asked each run.
            let last = seen
                .last()
                .map(|s| s.observed_at.clone())
                .unwrap_or_default();
            chosen.why = "retry";
            retries.push((last, chosen));
            continue;
        };
        let of_version: Vec<&Seen> = seen.iter().filter(|s| s.version == version).collect();
        if of_version.is_empty() {
            chosen.why = "new-version";
            new_versions.push(chosen);
        } else if !of_version.iter().any(|s| s.done) {
            let last = of_version
                .last()
                .map(|s| s.observed_at.clone())
                .unwrap_or_default();
            chosen.why = "retry";
            retries.push((last, chosen));
        }
    }
    retries.sort_by(|a, b| a.0.cmp(&b.0));
    new_versions
        .into_iter()
        .chain(never)
        .chain(retries.into_iter().map(|(_, c)| c))
        .take(cap)
        .collect()
}

/// The package targets of `records` the sandbox can observe: npm and PyPI packages with the
/// stdio transport (or none declared), each with its listed version (`latest` or none: `None`)
/// and its start. Others are the crawl's to list with their skip reasons.
pub fn package_targets(records: &[Record]) -> Vec<Chosen> {
    let mut out = Vec::new();
    for record in records {
        for target in toolmark_observation::registry::targets(record) {
            let TargetKind::Package {
                ecosystem,
                name,
                version,
                transport,
            } = &target.kind
            else {
                continue;
            };
            if target.skip.is_some()
                || !matches!(ecosystem, Ecosystem::Npm | Ecosystem::Pypi)
                || !(transport.is_empty() || transport == "stdio")
            {
                continue;
            }
            let Some(package) = record.packages.iter().find(|p| {
                p.identifier == *name && Ecosystem::parse(&p.registry_type) == *ecosystem
            }) else {
                continue;
            };
            out.push(Chosen {
                version: version.clone().filter(|v| !v.is_empty() && v != "latest"),
                launch: Launch {
                    arguments: package.start.arguments.clone(),
                    env: package.start.env.clone(),
                },
                target,
                why: "",
            });
        }
    }
    out
}

/// What one sweep run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepReport {
    /// The run's id in the index.
    pub run: i64,
    /// `sweep`.
    pub kind: String,
    /// The registry whose records were read.
    pub registry: String,
    /// UTC start.
    pub started_at: String,
    /// UTC end.
    pub finished_at: String,
    /// Package targets the sandbox can observe (those of [`SweepRun::only`] when it is given).
    pub packages: usize,
    /// Versions chosen (at most the cap), by why.
    pub chosen: BTreeMap<String, u64>,
    /// Versions chosen but not observed because the run was stopped.
    pub abandoned: usize,
    /// How long observing took.
    pub observe_seconds: f64,
    /// The log's size after the run.
    pub log_size: u64,
    /// Observations per status.
    pub totals: BTreeMap<String, u64>,
}

/// What a finished sweep did.
#[derive(Debug)]
pub struct SweepSummary {
    /// The run's report (also stored with the run in the index).
    pub report: SweepReport,
    /// One line per observation, in the order recorded.
    pub lines: Vec<Recorded>,
    /// Log entries appended.
    pub appended: u64,
}

impl SweepSummary {
    /// The run for people (`toolmark package sweep` without `--json`): its totals, then one
    /// line per observation (endpoint, status, log index or `-`).
    pub fn text(&self) -> String {
        let r = &self.report;
        let mut out = format!(
            "sweep run {}: {} packages listed, {} versions chosen, {} entries appended, log size {}\n",
            r.run,
            r.packages,
            r.chosen.values().sum::<u64>(),
            self.appended,
            r.log_size
        );
        for line in &self.lines {
            let index = line.entry_index.map_or("-".to_owned(), |i| i.to_string());
            out.push_str(&format!("  {}  {}  {index}\n", line.endpoint, line.status));
        }
        out
    }
}

/// The package string of `target` at `version`: `<target string>@<version>` (the log's
/// `subject.package`).
fn package_id(target: &Target, version: &str) -> String {
    format!("{}@{}", target_string(&target.kind), version)
}

/// An observation of a version that could not be run, for the log: fetched or not, nothing of
/// the package ran. `status` is the package's (`not-found`, `no-wheel`) or ours
/// (`sandbox-error`).
fn unrun(package: String, status: &'static str, detail: String) -> Observation {
    let mut obs = Observation::start(Via::Package(Sandboxed {
        package,
        artifact: None,
        sandbox: None,
        registry: None,
    }));
    obs.status = ObsStatus::Package(status);
    obs.detail = detail;
    obs.elapsed = obs.started.elapsed().unwrap_or_default();
    obs
}

/// The fetch failure's status: the package's when the registry says it has no such version or
/// no wheel; ours (`sandbox-error`, never the package's behaviour) otherwise.
fn fetch_status(e: &PackageError) -> &'static str {
    match e {
        PackageError::NotFound(_) => "not-found",
        PackageError::NoWheel(_) => "no-wheel",
        _ => "sandbox-error",
    }
}

/// Why the installed package is not `name` at `version`, if it is not (names compared as
/// their registry compares them; nothing installed, nothing to compare).
fn installed_mismatch(
    ecosystem: &Ecosystem,
    name: &str,
    version: &str,
    report: &toolmark_sandbox::observe::Report,
) -> Option<String> {
    if report.name.is_empty() {
        return None;
    }
    let same_name = match ecosystem {
        Ecosystem::Pypi => packages::pep503(&report.name) == packages::pep503(name),
        _ => report.name == name,
    };
    (!same_name || report.version != version).then(|| {
        format!(
            "the artifact installed {}@{}, not {name}@{version}",
            report.name, report.version
        )
    })
}

/// A file name a registry may give: one path component of visible ASCII.
fn valid_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'/' && b != b'\\')
}

/// A version's artifact fetched, checked against its registry's digest and written under its
/// published name (pip reads a wheel's tags from it) in a directory of its own, which is removed
/// when this is dropped.
pub struct FetchedArtifact {
    /// The file, as the sandbox takes it.
    pub artifact: Artifact,
    /// The artifact's SHA-256 as an SRI string (the registry's digest, checked).
    pub sha256_sri: String,
    /// The registry's signals for the version (the document's `package.registry`).
    pub registry: toolmark_observation::registry_facts::RegistryFacts,
    dir: PathBuf,
}

impl Drop for FetchedArtifact {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Why a version's artifact could not be had.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The registry or the download failed, or said there is no such version or no wheel.
    #[error(transparent)]
    Package(#[from] PackageError),
    /// The index names the wheel with something that is not one file name.
    #[error("the wheel's file name {0:?} is not one")]
    FileName(String),
    /// The artifact could not be written.
    #[error("writing the artifact: {0}")]
    Write(#[source] std::io::Error),
}

impl FetchError {
    /// The status an observation of a version that could not be fetched carries: the
    /// package's (`not-found`, `no-wheel`) when the registry says so; ours (`sandbox-error`,
    /// never the package's behaviour) otherwise.
    pub fn status(&self) -> &'static str {
        match self {
            FetchError::Package(e) => fetch_status(e),
            FetchError::FileName(_) => "no-wheel",
            FetchError::Write(_) => "sandbox-error",
        }
    }
}

/// Fetches `spec` through `client`'s guard, checks it against the registry's digest and writes
/// it into `dir` (created; removed again on failure and when the result is dropped). What the
/// sweep and `toolmark package observe` share.
pub async fn fetch_artifact(
    client: &ClientConfig,
    registries: &Registries,
    spec: &Spec,
    dir: PathBuf,
) -> Result<FetchedArtifact, FetchError> {
    let fetched = packages::fetch(client, registries, spec).await?;
    let name = match &fetched.published {
        packages::Published::Pypi(wheel) if valid_file_name(&wheel.filename) => {
            wheel.filename.clone()
        }
        packages::Published::Pypi(wheel) => {
            return Err(FetchError::FileName(wheel.filename.clone()));
        }
        packages::Published::Npm(_) => "package.tgz".to_owned(),
    };
    let file = dir.join(name);
    if let Err(e) =
        std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&file, &fetched.bytes))
    {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(FetchError::Write(e));
    }
    let artifact = match spec.ecosystem {
        Ecosystem::Npm => Artifact::Npm(file),
        _ => Artifact::Wheel(file),
    };
    Ok(FetchedArtifact {
        artifact,
        sha256_sri: fetched.sha256_sri,
        registry: fetched.registry,
        dir,
    })
}

/// The package sweep's candidates in `index`'s view of the log: the package targets of
/// `records` ([`package_targets`]; only those `only` names, when given), each with its
/// observations, for [`choose`]; and how many targets were listed.
pub fn candidates(
    index: &toolmark_index::Index,
    records: &[Record],
    only: Option<&[String]>,
) -> Result<(usize, Vec<Candidate>), IngestError> {
    let mut targets = package_targets(records);
    if let Some(only) = only {
        targets.retain(|c| only.contains(&target_string(&c.target.kind)));
    }
    let listed = targets.len();
    let mut candidates = Vec::with_capacity(targets.len());
    for chosen in targets {
        let id = toolmark_index::record::target_id(&chosen.target);
        let seen = index
            .package_observations(&id, HISTORY)
            .map_err(|source| IngestError::Index {
                what: "reading package observations",
                source,
            })?
            .into_iter()
            .map(|o| Seen {
                done: (o.complete && o.observer.as_deref() == Some(OBSERVER))
                    || FINAL_STATUSES.contains(&o.status.as_str()),
                version: o.version,
                observed_at: o.observed_at,
            })
            .collect();
        candidates.push(Candidate { chosen, seen });
    }
    Ok((listed, candidates))
}

/// Where a sweep's packages come from: the npm registry and the Python index of
/// [`SweepOptions`], through the crawler's SSRF guard (`allow_private` for a local mirror).
#[derive(Clone)]
pub struct PackageSource {
    client: ClientConfig,
    registries: Registries,
}

impl PackageSource {
    /// The source `options` name.
    pub fn new(options: &SweepOptions) -> PackageSource {
        let mut client = ClientConfig::default();
        client.policy.allow_private = options.allow_private;
        PackageSource {
            client,
            registries: Registries {
                npm: options.npm_registry.clone(),
                pypi: options.pypi_index.clone(),
            },
        }
    }

    /// Fetches and observes one chosen version in `observer`'s sandbox; the observation to log
    /// (a failure is an observation with its status). `slot` names the artifact's directory:
    /// unique among the observations this process runs at once.
    pub async fn observe(&self, observer: &Observer, slot: usize, chosen: &Chosen) -> Observation {
        observe_one(&self.client, &self.registries, observer, (slot, chosen)).await
    }
}

/// Fetch and observe one chosen version; the observation to log.
async fn observe_one(
    client: &ClientConfig,
    registries: &Registries,
    observer: &Observer,
    (slot, chosen): (usize, &Chosen),
) -> Observation {
    let TargetKind::Package {
        ecosystem, name, ..
    } = &chosen.target.kind
    else {
        unreachable!("only packages are chosen");
    };
    let version = match &chosen.version {
        Some(v) => v.clone(),
        None => match packages::latest(client, registries, ecosystem, name).await {
            Ok(v) => v,
            Err(e) => {
                return unrun(
                    format!("{}@latest", target_string(&chosen.target.kind)),
                    fetch_status(&e),
                    format!("reading the latest version: {e}"),
                );
            }
        },
    };
    let package = package_id(&chosen.target, &version);
    let spec = Spec {
        ecosystem: ecosystem.clone(),
        name: name.clone(),
        version: version.clone(),
    };
    // Each artifact in a directory of its own, named by the process and the version's place in
    // the run, so two runs (two servers listing one package) never share a file.
    let dir = observer
        .work
        .join(format!("artifact-{}-{slot}", std::process::id()));
    let fetched = match fetch_artifact(client, registries, &spec, dir).await {
        Ok(f) => f,
        Err(e @ FetchError::Package(_)) => {
            return unrun(package, e.status(), format!("fetching {spec}: {e}"));
        }
        Err(e) => return unrun(package, e.status(), e.to_string()),
    };
    let report = observer.observe(&fetched.artifact, &chosen.launch).await;
    let sri = fetched.sha256_sri.parse().ok();
    let mut obs = report.observation(&package, sri);
    // The registry's signals for the version travel with its observation (the document's
    // `package.registry`), whatever the sandbox makes of it.
    if let Via::Package(p) = &mut obs.via {
        p.registry = Some(fetched.registry.clone());
    }
    drop(fetched);
    // What was installed must be what was asked for: a registry that serves another package's
    // artifact under this name (its digest is the registry's own word) is not this package.
    if let Some(why) = installed_mismatch(ecosystem, &spec.name, &version, &report) {
        obs.status = ObsStatus::Package("artifact-mismatch");
        obs.detail = why;
    }
    obs
}

/// One sweep run: choose, fetch, observe, record, report. Blocks the calling thread (which
/// must not be one of `runtime`'s workers). Each observation is recorded (appended, signed,
/// indexed) as soon as it is made. Cancelling `stop` takes no new version; those in flight
/// finish and are recorded, and the run is closed as failed with the rest counted in
/// [`SweepReport::abandoned`].
pub fn run_sweep(
    runtime: &tokio::runtime::Handle,
    run: &SweepRun<'_>,
    stop: &Stop,
) -> Result<SweepSummary, IngestError> {
    let opts = run.options;
    if let Some(problem) = opts.problem() {
        return Err(IngestError::Options(problem));
    }
    if run.observer.runsc.is_none() {
        return Err(IngestError::Options(
            "runsc (gVisor) is not installed: the package sweep runs no package code without it"
                .into(),
        ));
    }
    std::fs::create_dir_all(&run.observer.work)
        .map_err(|e| IngestError::Options(format!("{}: {e}", run.observer.work.display())))?;
    let mut writer = run.data.open_writer(run.origin)?;
    let started = SystemTime::now();
    let started_at = toolmark_observation::time::utc(started);
    let size_before = writer.log.head().size;
    let registry_key = run.registry.trim_end_matches('/');
    let stored = writer
        .index
        .registry_items(registry_key)
        .map_err(|source| IngestError::Index {
            what: "reading the stored registry records",
            source,
        })?;
    let records: Vec<Record> = plan::parse_stored(stored)
        .map_err(|e| IngestError::Options(format!("the stored registry records: {e}")))?
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    let (packages_listed, candidates) = candidates(&writer.index, &records, run.only)?;
    drop(records);
    let chosen = choose(candidates, opts.cap);
    let mut why: BTreeMap<String, u64> = BTreeMap::new();
    for c in &chosen {
        *why.entry(c.why.to_owned()).or_default() += 1;
    }
    tracing::info!(
        "package sweep: {packages_listed} packages listed, {} versions chosen {why:?}",
        chosen.len()
    );

    let source = PackageSource::new(opts);
    let mut recorder = Recorder::new(&mut writer.log, &writer.blobs, &mut writer.index);
    let run_id = recorder
        .begin_sweep(&started_at, registry_key)
        .map_err(|source| IngestError::Index {
            what: "starting the sweep in the index",
            source,
        })?;
    let clock = Instant::now();
    let total = chosen.len();
    // A held limit of 0: every observation is recorded as soon as it arrives.
    let (lines, taken, record_error) = crate::record_stream(&mut recorder, run_id, 0, |sink| {
        runtime.block_on(async {
            let taken = std::cell::Cell::new(0usize);
            // Recording failed: nothing more would be acknowledged, so nothing more is taken.
            let unrecorded = std::cell::Cell::new(false);
            let work = futures_util::stream::iter(chosen.iter().enumerate())
                .take_while(|_| std::future::ready(!stop.is_cancelled() && !unrecorded.get()))
                .map(|(slot, c)| {
                    taken.set(taken.get() + 1);
                    let source = &source;
                    async move {
                        let obs = source.observe(run.observer, slot, c).await;
                        (c, obs)
                    }
                })
                .buffer_unordered(opts.concurrency);
            futures_util::pin_mut!(work);
            while let Some((c, obs)) = work.next().await {
                tracing::info!(
                    "{} ({}): {}",
                    target_string(&c.target.kind),
                    c.why,
                    obs.status.name()
                );
                let item = TargetOutcome {
                    target: c.target.clone(),
                    observation: Some(obs),
                };
                if sink.send((item, None)).is_err() {
                    unrecorded.set(true);
                }
            }
            taken.get()
        })
    });
    let abandoned = total - taken;
    let report = SweepReport {
        run: run_id,
        kind: "sweep".into(),
        registry: registry_key.to_owned(),
        started_at,
        finished_at: toolmark_observation::time::now(),
        packages: packages_listed,
        chosen: why,
        abandoned,
        observe_seconds: clock.elapsed().as_secs_f64(),
        log_size: writer.log.head().size,
        totals: crate::pipeline::totals(&lines),
    };
    crate::pipeline::close_run(
        &mut writer,
        run_id,
        &report.finished_at,
        &report,
        record_error.is_none() && abandoned == 0,
    )?;
    if let Some(e) = record_error {
        return Err(IngestError::Record(e.to_string()));
    }
    Ok(SweepSummary {
        appended: report.log_size - size_before,
        report,
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(name: &str, listed: Option<&str>, seen: &[(&str, bool, &str)]) -> Candidate {
        Candidate {
            chosen: Chosen {
                target: Target {
                    server: format!("io.example/{name}"),
                    version: "1".into(),
                    kind: TargetKind::Package {
                        ecosystem: Ecosystem::Npm,
                        name: name.into(),
                        version: listed.map(str::to_owned),
                        transport: "stdio".into(),
                    },
                    skip: None,
                },
                version: listed.map(str::to_owned),
                launch: Launch::default(),
                why: "",
            },
            seen: seen
                .iter()
                .map(|(v, done, at)| Seen {
                    version: (*v).into(),
                    done: *done,
                    observed_at: (*at).into(),
                })
                .collect(),
        }
    }

    fn names(chosen: &[Chosen]) -> Vec<(String, &'static str)> {
        chosen
            .iter()
            .map(|c| (target_string(&c.target.kind), c.why))
            .collect()
    }

    #[test]
    fn new_versions_go_first_then_never_observed_then_retries_oldest_first() {
        let chosen = choose(
            vec![
                candidate("never", Some("1.0.0"), &[]),
                candidate(
                    "retry-late",
                    Some("1.0.0"),
                    &[("1.0.0", false, "2026-12-02T00:00:00Z")],
                ),
                candidate(
                    "done",
                    Some("1.0.0"),
                    &[("1.0.0", true, "2026-12-01T00:00:00Z")],
                ),
                candidate(
                    "newer",
                    Some("2.0.0"),
                    &[("1.0.0", true, "2026-12-01T00:00:00Z")],
                ),
                candidate(
                    "retry-early",
                    Some("1.0.0"),
                    &[("1.0.0", false, "2026-11-01T00:00:00Z")],
                ),
            ],
            10,
        );
        assert_eq!(
            names(&chosen),
            [
                ("npm:newer".to_owned(), "new-version"),
                ("npm:never".to_owned(), "never-observed"),
                ("npm:retry-early".to_owned(), "retry"),
                ("npm:retry-late".to_owned(), "retry"),
            ]
        );
    }

    #[test]
    fn a_version_observed_completely_is_not_observed_again_and_the_cap_holds() {
        let done = candidate(
            "done",
            Some("1.0.0"),
            &[("1.0.0", false, "a"), ("1.0.0", true, "b")],
        );
        assert!(choose(vec![done], 10).is_empty());
        let many: Vec<Candidate> = (0..5)
            .map(|i| candidate(&format!("p{i}"), Some("1.0.0"), &[]))
            .collect();
        assert_eq!(choose(many, 3).len(), 3);
    }

    #[test]
    fn a_version_the_package_itself_failed_for_good_is_not_observed_again() {
        let seen = |status: &str| {
            let mut c = candidate("p", Some("1.0.0"), &[]);
            c.seen = vec![Seen {
                version: "1.0.0".into(),
                done: FINAL_STATUSES.contains(&status),
                observed_at: "a".into(),
            }];
            c
        };
        assert!(choose(vec![seen("no-wheel")], 10).is_empty());
        assert!(choose(vec![seen("install-failed")], 10).is_empty());
        // Our own failure, or a run cut short, is observed again.
        assert_eq!(choose(vec![seen("sandbox-error")], 10).len(), 1);
        assert_eq!(choose(vec![seen("timeout")], 10).len(), 1);
    }

    #[test]
    fn a_package_listed_without_a_version_is_asked_about_each_run() {
        let chosen = choose(
            vec![candidate(
                "floating",
                None,
                &[("3.1.0", true, "2026-12-01T00:00:00Z")],
            )],
            10,
        );
        assert_eq!(names(&chosen), [("npm:floating".to_owned(), "retry")]);
    }

    #[test]
    fn only_stdio_npm_and_pypi_packages_are_swept_with_their_start_values() {
        let page = serde_json::json!([{
            "server": {"name": "io.example/mixed", "version": "1.0.0", "packages": [
                {"registryType": "npm", "identifier": "a", "version": "latest",
                 "transport": {"type": "stdio"},
                 "packageArguments": [{"type": "positional", "value": "--stdio"},
                                      {"type": "named", "name": "port", "default": "8089"}],
                 "environmentVariables": [{"name": "API_KEY", "isSecret": true, "isRequired": true},
                                          {"name": "MODE", "choices": ["fast"]}]},
                {"registryType": "pypi", "identifier": "b", "version": "2.0", "transport": {"type": "stdio"}},
                {"registryType": "npm", "identifier": "c", "version": "1.0", "transport": {"type": "sse", "url": "http://127.0.0.1:{port}/sse"}},
                {"registryType": "oci", "identifier": "d", "version": "1"}
            ]},
            "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}
        }]);
        let records = toolmark_observation::registry::parse_snapshot(page.to_string().as_bytes())
            .unwrap()
            .servers;
        let swept = package_targets(&records);
        let listed: Vec<(String, Option<String>)> = swept
            .iter()
            .map(|c| (target_string(&c.target.kind), c.version.clone()))
            .collect();
        assert_eq!(
            listed,
            [
                ("npm:a".to_owned(), None),
                ("pypi:b".to_owned(), Some("2.0".to_owned()))
            ]
        );
        assert_eq!(swept[0].launch.arguments, ["--stdio", "--port", "8089"]);
        assert_eq!(
            swept[0].launch.env,
            [
                ("API_KEY".to_owned(), None),
                ("MODE".to_owned(), Some("fast".to_owned()))
            ]
        );
    }
}
