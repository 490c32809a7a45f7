//! `toolmark package observe SPEC`: one npm package or PyPI wheel observed in gVisor, printed.
//!
//! SPEC is `npm:<name>@<version>` (fetched from the registry and checked against its
//! `dist.integrity` first), `pypi:<name>==<version>` (its wheel fetched and checked against the
//! index's SHA-256; a release without a wheel is `no-wheel`, a missing one `not-found`, printed
//! as statuses), or a local `.tgz` or `.whl` observed as if published (for tests, and for a
//! publisher checking a release before publishing it).

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use toolmark_crawler::packages::PackageError;
use toolmark_ingest::sweep::{FetchError, fetch_artifact};
use toolmark_observation::sandbox::PackageReport;
use toolmark_sandbox::observe::{self, Artifact, Launch, Observer, Report, Status};
use toolmark_sandbox::prepare::{NpmOptions, PipOptions};

#[derive(Subcommand)]
pub enum PackageCommand {
    /// Observe one package version in gVisor: status, tools, digests, each tool called once with
    /// canary arguments, behaviour per phase (install, startup, calls) and findings.
    Observe(ObserveArgs),
    /// One package sweep: the npm and PyPI servers the stored registry records list (a crawl
    /// stored them), each version observed once in gVisor and logged (docs/sandbox.md).
    Sweep(SweepArgs),
    /// Does NAME imitate a popular package (npm:…, pypi:…) or a known server name? Prints the
    /// JSON answer; exits 1 when it does (docs/api.md, "Look-alike names").
    Lookalike(crate::names_cli::LookalikeArgs),
    /// The popularity snapshot the look-alike rules use; with --refresh, fetch weekly counts
    /// (npm's downloads API, pypistats) into a new dated snapshot in the data directory.
    Popularity(crate::names_cli::PopularityArgs),
}

#[derive(Args)]
pub struct SweepArgs {
    /// Data directory (log, blobs, index) a crawl has filled.
    #[arg(long)]
    data: PathBuf,
    /// The MCP registry whose stored records list the packages (the crawl's --registry).
    #[arg(long, default_value = toolmark_config::OFFICIAL_REGISTRY)]
    registry: String,
    /// Checkpoint origin for a log created by this run.
    #[arg(long, default_value = toolmark_config::DEFAULT_ORIGIN)]
    origin: String,
    /// Versions observed at most.
    #[arg(long, default_value_t = toolmark_ingest::sweep::DEFAULT_CAP)]
    cap: usize,
    /// Sandboxes at once.
    #[arg(long, default_value_t = toolmark_ingest::sweep::DEFAULT_CONCURRENCY)]
    concurrency: usize,
    /// The npm registry.
    #[arg(long, default_value = toolmark_crawler::packages::NPM_REGISTRY)]
    npm_registry: String,
    /// The Python package index.
    #[arg(long, default_value = toolmark_crawler::packages::PYPI_INDEX)]
    pypi_index: String,
    /// Where runs live.
    #[arg(long, default_value = "/var/tmp/toolmark-sandbox")]
    work: PathBuf,
    /// npm's and pip's caches.
    #[arg(long, default_value = "/var/cache/toolmark")]
    cache: PathBuf,
    /// Fetch packages from loopback or private addresses (tests, a local mirror).
    #[arg(long)]
    allow_private: bool,
    /// The `toolmark-probe` binary; default: the one beside this binary.
    #[arg(long)]
    probe: Option<PathBuf>,
    /// Print the run's report as JSON.
    #[arg(long)]
    json: bool,
}

fn sweep(args: SweepArgs) -> Result<bool> {
    let options = toolmark_ingest::SweepOptions {
        cap: args.cap,
        concurrency: args.concurrency,
        npm_registry: args.npm_registry,
        pypi_index: args.pypi_index,
        work: args.work,
        cache: args.cache,
        allow_private: args.allow_private,
        probe: args.probe.unwrap_or_default(),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let stop = toolmark_ingest::Stop::new();
    let ctrl_c = stop.clone();
    runtime.spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        ctrl_c.cancel();
    });
    let data = toolmark_index::DataDir::new(&args.data);
    let summary = toolmark_roles::jobs::sweep_once(
        runtime.handle(),
        &data,
        &args.origin,
        &args.registry,
        &options,
        &stop,
    )?;
    if args.json {
        println!("{}", serde_json::to_string(&summary.report)?);
    } else {
        let r = &summary.report;
        println!(
            "sweep run {}: {} packages listed, {} versions chosen, {} entries appended, log size {}",
            r.run,
            r.packages,
            r.chosen.values().sum::<u64>(),
            summary.appended,
            r.log_size
        );
        for line in &summary.lines {
            println!(
                "  {}  {}  {}",
                line.endpoint,
                line.status,
                line.entry_index.map_or("-".to_owned(), |i| i.to_string())
            );
        }
    }
    Ok(summary.report.abandoned == 0)
}

#[derive(Args)]
pub struct ObserveArgs {
    /// `npm:<name>@<version>`, `pypi:<name>==<version>`, or a local npm tarball (`.tgz`) or
    /// wheel (`.whl`, under its published file name).
    spec: String,
    /// Print the whole report as one JSON object.
    #[arg(long)]
    json: bool,
    /// The npm registry the package and its dependencies come from.
    #[arg(long, default_value = toolmark_crawler::packages::NPM_REGISTRY)]
    registry: String,
    /// npm's cache (content-addressed, integrity-checked).
    #[arg(long, default_value = "/var/cache/toolmark/npm")]
    npm_cache: PathBuf,
    /// Install npm dependencies from the cache only.
    #[arg(long)]
    offline: bool,
    /// The Python package index a wheel comes from (its JSON API, `/pypi/<name>/json`) and pip
    /// installs its dependencies from (its simple API, `/simple`).
    #[arg(long, default_value = toolmark_crawler::packages::PYPI_INDEX)]
    pypi_index: String,
    /// pip's cache (shared between runs).
    #[arg(long, default_value = "/var/cache/toolmark/pip")]
    pip_cache: PathBuf,
    /// Install a wheel's dependencies from the wheels in this directory only (`pip --no-index
    /// --find-links`): no index is asked.
    #[arg(long)]
    find_links: Option<PathBuf>,
    /// Where runs live (each gets a directory of its own).
    #[arg(long, default_value = "/var/tmp/toolmark-sandbox")]
    work: PathBuf,
    /// Keep the run's directory (tree, decoy HOME, traces) for inspection (it stays mounted:
    /// a tmpfs).
    #[arg(long)]
    keep: bool,
    /// The `toolmark-probe` binary (the DNS sink and traps inside the sandbox); default: the
    /// one beside this binary. Without one the traps are off and lookups' names unknown.
    #[arg(long)]
    probe: Option<PathBuf>,
    /// An argument after the entry point (the registry's `packageArguments`); repeatable.
    #[arg(long = "arg")]
    arguments: Vec<String>,
    /// NAME or NAME=VALUE for the server's environment (a bare NAME gets a canary value);
    /// repeatable.
    #[arg(long = "env")]
    env: Vec<String>,
}

pub fn run(command: PackageCommand) -> Result<bool> {
    match command {
        PackageCommand::Observe(args) => {
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(observe_one(args))
        }
        PackageCommand::Sweep(args) => sweep(args),
        PackageCommand::Lookalike(args) => crate::names_cli::lookalike(args),
        PackageCommand::Popularity(args) => crate::names_cli::popularity_command(args),
    }
}

async fn observe_one(args: ObserveArgs) -> Result<bool> {
    std::fs::create_dir_all(&args.work)
        .with_context(|| format!("{}: cannot create", args.work.display()))?;
    std::fs::create_dir_all(&args.npm_cache)
        .with_context(|| format!("{}: cannot create", args.npm_cache.display()))?;
    std::fs::create_dir_all(&args.pip_cache)
        .with_context(|| format!("{}: cannot create", args.pip_cache.display()))?;
    let local = |ext: &str| args.spec.ends_with(ext);
    let (artifact, digest, fetched) = if local(".tgz") || local(".whl") {
        let path = PathBuf::from(&args.spec);
        let bytes =
            std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?;
        let digest = toolmark_toolset::Sri::of(&bytes).to_string();
        let artifact = if local(".whl") {
            Artifact::Wheel(path)
        } else {
            Artifact::Npm(path)
        };
        (artifact, digest, None)
    } else if args.spec.starts_with("npm:") || args.spec.starts_with("pypi:") {
        let spec = toolmark_crawler::packages::Spec::parse(&args.spec)?;
        let registries = toolmark_crawler::packages::Registries {
            npm: args.registry.clone(),
            pypi: args.pypi_index.clone(),
        };
        let config = toolmark_crawler::mcp::ClientConfig::default();
        let dir = args.work.join(format!("fetched-{}", std::process::id()));
        let fetched = match fetch_artifact(&config, &registries, &spec, dir).await {
            Ok(f) => f,
            Err(e) => match unfetched(&e) {
                Some(status) => {
                    let report = Report::unfetched(status, format!("fetching {spec}: {e}"));
                    print(&report, &args, "", None)?;
                    return Ok(false);
                }
                None => return Err(e).with_context(|| format!("fetching {spec}")),
            },
        };
        (
            fetched.artifact.clone(),
            fetched.sha256_sri.clone(),
            Some(fetched),
        )
    } else {
        bail!(
            "{:?}: not npm:<name>@<version>, pypi:<name>==<version>, or a .tgz or .whl file",
            args.spec
        );
    };
    let mut pip = PipOptions::new(
        format!("{}/simple", args.pypi_index.trim_end_matches('/')),
        args.pip_cache.clone(),
    );
    pip.find_links = args.find_links.clone();
    let mut observer = Observer::new(
        NpmOptions::new(args.registry.clone(), args.npm_cache.clone(), args.offline),
        pip,
        args.work.clone(),
        args.probe.clone(),
    );
    observer.keep = args.keep;
    let launch = Launch {
        arguments: args.arguments.clone(),
        env: args
            .env
            .iter()
            .map(|e| match e.split_once('=') {
                Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
                None => (e.clone(), None),
            })
            .collect(),
    };
    let report = observer.observe(&artifact, &launch).await;
    let registry = fetched.as_ref().map(|f| &f.registry);
    print(&report, &args, &digest, registry)?;
    Ok(report.status == observe::Status::Ok)
}

/// The status of a version the registry says cannot be observed (`no-wheel`, `not-found`): the
/// registry's answer about the package, not a failure of ours. `None` for every other error.
fn unfetched(e: &FetchError) -> Option<Status> {
    match e {
        FetchError::Package(PackageError::NoWheel(_)) => Some(Status::NoWheel),
        FetchError::Package(PackageError::NotFound(_)) => Some(Status::NotFound),
        _ => None,
    }
}

/// Print `report` as `args` ask (JSON or for people), with a fetched version's registry
/// signals as the sweep's document holds them (`package.registry`).
fn print(
    report: &Report,
    args: &ObserveArgs,
    digest: &str,
    registry: Option<&toolmark_observation::registry_facts::RegistryFacts>,
) -> Result<()> {
    let mut out = report.package_report(&args.spec, digest);
    out.registry = registry.cloned();
    if args.json {
        println!("{}", serde_json::to_string(&out)?);
    } else {
        print_human(&out);
    }
    Ok(())
}

fn print_human(out: &PackageReport) {
    println!("{}  {}", out.package, out.status);
    if !out.detail.is_empty() {
        println!("  {}", out.detail);
    }
    println!("  artifact {}", out.artifact);
    if let Some(d) = &out.digests {
        println!("  mtl1 {}", d.mtl1.as_deref().unwrap_or("-"));
        println!("  full {}", d.full);
    }
    let tools: Vec<&str> = out
        .tools
        .iter()
        .map(|t| t.as_deref().unwrap_or(""))
        .collect();
    println!("  tools ({}): {}", tools.len(), tools.join(", "));
    for p in &out.facts.behaviour {
        println!(
            "  {:8} {}  exec {} network {} lookups {} decoys {} writes {}",
            p.phase.as_str(),
            if p.complete { "complete" } else { "INCOMPLETE" },
            p.exec.len(),
            p.network.len(),
            p.lookups.len(),
            p.decoys.len(),
            p.writes.len()
        );
    }
    if out.facts.findings.is_empty() {
        println!(
            "  findings: none{}",
            if out.facts.complete {
                ""
            } else {
                " (but the observation is incomplete)"
            }
        );
    }
    for f in &out.facts.findings {
        println!(
            "  {} {} [{}] {}",
            f.severity.as_str(),
            f.code,
            f.phase.as_str(),
            f.evidence.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_wheel_and_not_found_are_printed_statuses_and_other_fetch_errors_are_not() {
        let package = |e: PackageError| FetchError::Package(e);
        assert_eq!(
            unfetched(&package(PackageError::NoWheel(1))),
            Some(Status::NoWheel)
        );
        assert_eq!(
            unfetched(&package(PackageError::NotFound("version 9".into()))),
            Some(Status::NotFound)
        );
        assert_eq!(
            unfetched(&package(PackageError::IntegrityMissing("SHA-256"))),
            None
        );
        assert_eq!(unfetched(&FetchError::FileName("../x.whl".into())), None);
        let report = Report::unfetched(Status::NoWheel, "fetching pypi:x==1: no wheel");
        let out = serde_json::to_value(report.package_report("pypi:x==1", "")).unwrap();
        assert_eq!(out["package"], "pypi:x==1");
        assert_eq!(out["status"], "no-wheel");
        assert_eq!(out["detail"], "fetching pypi:x==1: no wheel");
        assert_eq!(out["complete"], false);
        assert_eq!(out["tools"], serde_json::json!([]));
    }
}
