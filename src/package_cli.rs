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
use toolmark_ingest::package::{PackageRequest, observe_package};

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
    /// The sweep's knobs.
    #[command(flatten)]
    options: toolmark_ingest::SweepOptions,
    /// The `toolmark-probe` binary; default: the one beside this binary.
    #[arg(long)]
    probe: Option<PathBuf>,
    /// Print the run's report as JSON.
    #[arg(long)]
    json: bool,
}

fn sweep(args: SweepArgs) -> Result<bool> {
    let options = toolmark_ingest::SweepOptions {
        probe: args.probe.unwrap_or_default(),
        ..args.options
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
    /// What to observe and how.
    #[command(flatten)]
    request: PackageRequest,
    /// Print the whole report as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(command: PackageCommand) -> Result<bool> {
    match command {
        PackageCommand::Observe(args) => {
            let runtime = tokio::runtime::Runtime::new()?;
            let report = runtime.block_on(observe_package(&args.request))?;
            if args.json {
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
