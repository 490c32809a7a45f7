//! `toolmark`: the command-line face of the transparency log. Glue only: it parses flags,
//! installs signal handlers and prints what the library crates compute and run.

mod crawl_cli;
mod demo;
mod log_cli;
mod names_cli;
mod package_cli;
mod run_cli;
mod scan_cli;
mod serve_cli;
mod webhooks_cli;
mod witness_cli;

use anyhow::{Context, Result};

/// toolmark builds and drops many small JSON trees (every string of every tool is its own
/// allocation); mimalloc handles that pattern markedly faster than glibc's allocator (30% on the
/// okta set, 12% on a 5,000-tool set: docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use toolmark_mcp::Continuation;
use toolmark_toolset::render::{self, DigestReport};
use toolmark_toolset::{ToolSet, classify, diff, policy, sensitive};

#[derive(Parser)]
#[command(
    name = "toolmark",
    version,
    about = "A public transparency log of MCP tool definitions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the MTL/1 tool-set digest (or its MTL error code) and the toolmark/1 full digest of
    /// each file (a tools/list result, a bare array of tools, or a snapshot wrapper).
    Digest {
        /// One JSON object per file and line: {"file","tools","mtl1","mtl1Error","full"}.
        #[arg(long)]
        json: bool,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Scan each file with the rule set (toolmark-rules/4) for poisoning: every text a model sees
    /// in each tool, and the server's instructions. Reads what `digest` reads, a bare tool object
    /// or an initialize result ({"instructions": …}). Offline; a flagged file is not an error.
    Scan {
        /// One JSON object per file and line:
        /// {"file","rules","flagged","block","advise","truncated","matches","legs"}.
        #[arg(long)]
        json: bool,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Describe the change from OLD to NEW: tools added, removed and modified, field by field, and
    /// classify it (benign, unsure, dangerous) with every signal that fired.
    Diff {
        /// Print {"diff": …, "classification": …} as JSON.
        #[arg(long)]
        json: bool,
        old: PathBuf,
        new: PathBuf,
    },
    /// The verifiable log: init, append, verify, proof, key.
    Log {
        #[command(subcommand)]
        command: log_cli::LogCommand,
    },
    /// One crawl run: harvest the registry, observe every remote, append one log entry per
    /// remote, index it and write a JSON report.
    Crawl(crawl_cli::CrawlArgs),
    /// Serve the API (/check with proofs, lookups, tiles), the feeds and the desk over a data
    /// directory that `crawl` fills.
    Serve(serve_cli::ServeArgs),
    /// A C2SP tlog-witness for other logs: cosigns the checkpoints of the trusted origins that
    /// only grow (`POST <prefix>/add-checkpoint`, `GET <prefix>/<sha256 origin>/checkpoint`).
    Witness(witness_cli::WitnessArgs),
    /// The whole service in one process: the API, feeds and desk, and the schedules (the daily
    /// registry crawl, the hourly checkpoint heartbeat). Configured by a TOML file, environment
    /// variables and flags (docs/operations.md).
    Run(Box<toolmark_config::RunFlags>),
    /// An API replica: serves the API, feeds and desk from its own index, which follows the
    /// log's published files in the configured stores (`[storage]`; a bucket in a cluster),
    /// verifying every entry. Writes nothing but that index. Same configuration as `run`.
    Api(Box<run_cli::ApiArgs>),
    /// The cluster's scheduler: harvests the registry on the crawl schedule and enqueues one
    /// job per remote in PostgreSQL (`[storage] head`); with --enqueue-now, one run now, then
    /// exits.
    Scheduler(Box<run_cli::SchedulerArgs>),
    /// A cluster worker: claims jobs from the queue, observes each remote (a per-host limit
    /// held across every worker), stores its document and hands its entry to the sequencer.
    Worker(Box<toolmark_config::RunFlags>),
    /// The cluster's sequencer: appends the workers' entries to the log, publishes, runs the
    /// witnesses' rounds; one active at a time (a lease), fenced by the head store.
    Sequencer(Box<toolmark_config::RunFlags>),
    /// See it work offline in a minute: a registry replica of two real days and stand-in MCP
    /// servers on loopback, two crawls, and the desk.
    Demo(demo::DemoArgs),
    /// Packages: observe one version in gVisor (`package observe SPEC`), sweep, look-alike
    /// names (`package lookalike NAME`) and the popularity snapshot (`package popularity`).
    Package {
        #[command(subcommand)]
        command: package_cli::PackageCommand,
    },
    /// Deliver signed security events to the configured webhooks.
    Webhooks {
        #[command(subcommand)]
        command: webhooks_cli::WebhooksCommand,
    },
    /// Split the tools of FILE into sensitive and safe by name globs (`*` is the only wildcard,
    /// case-insensitive, whole-name match) and, with --policy starter, the starter policy's
    /// categories; print {"sensitive": […], "safe": […], "serverNames": […]} (plus "policy" and
    /// "categories" with a policy). No pattern and no policy: every tool is safe. A malformed
    /// pattern (`mcp://payments` without a tool) is an error.
    Sensitive {
        file: PathBuf,
        /// A glob; repeat for several. Forms: `tool`, `server/tool` (a glob over
        /// `<server>/<tool>`), `mcp://<server>/<tool>` (server glob up to the first `/`, tool
        /// glob after it). Server forms apply to the names given by --server.
        #[arg(long = "pattern", short = 'p')]
        patterns: Vec<String>,
        /// A name the server answers to (its registry name, which also answers by its last
        /// segment; its title; an alias); repeat for several.
        #[arg(long)]
        server: Vec<String>,
        /// A named policy to apply besides the patterns: `starter` (or `starter/1`), the
        /// categories money, email-and-messaging, destructive-database, external-writes,
        /// files-and-storage and admin.
        #[arg(long)]
        policy: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(matches!(
        cli.command,
        Command::Run(_)
            | Command::Api(_)
            | Command::Scheduler(_)
            | Command::Worker(_)
            | Command::Sequencer(_)
    ));
    let outcome = match cli.command {
        Command::Digest { json, files } => digest(&files, json),
        Command::Diff { json, old, new } => diff_files(&old, &new, json),
        Command::Scan { json, files } => scan_cli::run(&files, json),
        Command::Log { command } => log_cli::run(command),
        Command::Crawl(args) => crawl_cli::run(args).map(|()| true),
        Command::Serve(args) => serve_cli::run(args).map(|()| true),
        Command::Witness(args) => witness_cli::run(args).map(|()| true),
        Command::Run(args) => run_cli::run(*args),
        Command::Api(args) => run_cli::api(*args),
        Command::Scheduler(args) => run_cli::scheduler(*args),
        Command::Worker(args) => run_cli::role(*args, "worker"),
        Command::Sequencer(args) => run_cli::role(*args, "sequencer"),
        Command::Demo(args) => demo::run(args).map(|()| true),
        Command::Package { command } => package_cli::run(command),
        Command::Webhooks { command } => webhooks_cli::run(command),
        Command::Sensitive {
            file,
            patterns,
            server,
            policy,
        } => sensitive_file(&file, &patterns, &server, policy.as_deref()),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("toolmark: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr; `RUST_LOG` filters them (default `info`). The service (`run`) writes
/// timestamped lines with their source; the one-shot commands write plain messages.
fn init_logging(service: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if service {
        builder.init();
    } else {
        builder
            .without_time()
            .with_target(false)
            .with_level(false)
            .init();
    }
}

/// Read and parse one tool-set file; the error names the file and says what is wrong.
fn load(path: &Path) -> Result<ToolSet> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    ToolSet::parse(&bytes).with_context(|| format!("{}", path.display()))
}

/// Digest every file; a bad file is reported on stderr and makes the exit status non-zero, but the
/// other files are still digested. Returns whether every file was digested.
fn digest(files: &[PathBuf], as_json: bool) -> Result<bool> {
    let mut all_ok = true;
    for path in files {
        let set = match load(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("toolmark: {e:#}");
                all_ok = false;
                continue;
            }
        };
        // One definition of a complete listing: a null or empty nextCursor is the last page.
        let complete = matches!(Continuation::of(&set), Ok(Continuation::Last));
        let report = DigestReport::of(&path.display().to_string(), &set, complete);
        if as_json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            print!("{}", report.text());
        }
    }
    Ok(all_ok)
}

fn diff_files(old: &Path, new: &Path, as_json: bool) -> Result<bool> {
    let (old, new) = (load(old)?, load(new)?);
    let d = diff::diff(&old, &new);
    let c = classify::classify(&old, &new);
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"diff": d, "classification": c}))?
        );
    } else {
        print!("{}", render::text(&d, &c));
    }
    Ok(true)
}

fn sensitive_file(
    path: &Path,
    patterns: &[String],
    servers: &[String],
    policy: Option<&str>,
) -> Result<bool> {
    let patterns = sensitive::parse_patterns(patterns)?;
    let policy = policy.map(policy::named).transpose()?;
    let set = load(path)?;
    let names = sensitive::ServerNames::new(servers);
    let compiled = policy.map(policy::Policy::compile);
    let split = sensitive::classify_sensitive(&set, &patterns, compiled.as_ref(), &names);
    let mut out = serde_json::to_value(&split)?;
    out["serverNames"] = json!(names.names());
    println!("{}", serde_json::to_string(&out)?);
    Ok(true)
}

#[cfg(test)]
mod tests {
    /// clap's own consistency checks of every subcommand (a positional after an optional one,
    /// clashing names, …), which otherwise only fire when that subcommand is run.
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
