//! `toolmark package observe SPEC`: one npm package or PyPI wheel observed in gVisor, printed.
//!
//! SPEC is `npm:<name>@<version>` (fetched from the registry and checked against its
//! `dist.integrity` first), `pypi:<name>==<version>` (its wheel fetched and checked against the
//! index's SHA-256; a release without a wheel is `no-wheel`, a missing one `not-found`, printed
//! as statuses), or a local `.tgz` or `.whl` observed as if published (for tests, and for a
//! publisher checking a release before publishing it).

use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use toolmark_ingest::package::{PackageRequest, env_setting, observe_package};
use toolmark_sandbox::observe::Launch;

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
        print!("{}", summary.text());
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

impl ObserveArgs {
    /// What to observe, as the library takes it.
    fn request(self) -> PackageRequest {
        PackageRequest {
            spec: self.spec,
            npm_registry: self.registry,
            npm_cache: self.npm_cache,
            offline: self.offline,
            pypi_index: self.pypi_index,
            pip_cache: self.pip_cache,
            find_links: self.find_links,
            work: self.work,
            keep: self.keep,
            probe: self.probe,
            launch: Launch {
                arguments: self.arguments,
                env: self.env.iter().map(|e| env_setting(e)).collect(),
            },
        }
    }
}

pub fn run(command: PackageCommand) -> Result<bool> {
    match command {
        PackageCommand::Observe(args) => {
            let json = args.json;
            let runtime = tokio::runtime::Runtime::new()?;
            let report = runtime.block_on(observe_package(&args.request()))?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                print!("{}", report.text());
            }
            Ok(report.status == "ok")
        }
        PackageCommand::Sweep(args) => sweep(args),
        PackageCommand::Lookalike(args) => crate::names_cli::lookalike(args),
        PackageCommand::Popularity(args) => crate::names_cli::popularity_command(args),
    }
}
