//! `toolmark run`: the whole service in one process — the API, feeds and desk, and the
//! schedules (the registry crawl, the package sweep, the checkpoint heartbeat, webhook delivery)
//! — over one data directory.
//!
//! Shutdown (SIGTERM or SIGINT): the scheduler signals the running jobs; a crawl stops taking
//! targets, lets the observations in flight finish and records them (its last batch is signed
//! and committed like any other), the heartbeat finishes its signature; the API finishes the
//! requests in flight; then the process exits 0. A second signal exits at once (130): what was
//! committed is safe, the batch in progress is not acknowledged and the next run closes it.

use anyhow::Result;
use toolmark_config::{Config, RunFlags};

/// `toolmark api`'s flags: `run`'s, and how often the replica looks for a newer checkpoint.
#[derive(clap::Args)]
pub struct ApiArgs {
    #[command(flatten)]
    run: RunFlags,
    /// Seconds between two looks at the published checkpoint.
    #[arg(long, default_value_t = toolmark_roles::follower::DEFAULT_FOLLOW_INTERVAL.as_secs())]
    follow_seconds: u64,
    /// With no index, derive it from the whole log instead of joining from the bucket's newest
    /// index snapshot.
    #[arg(long)]
    no_snapshot: bool,
    /// Publish index snapshots to the bucket (one replica per cluster is enough).
    #[arg(long)]
    publish_snapshots: bool,
    /// With --publish-snapshots: publish once the index grew by this many entries since the
    /// newest snapshot (or by any after an hour).
    #[arg(long, default_value_t = toolmark_roles::follower::SNAPSHOT_EVERY_ENTRIES)]
    snapshot_every_entries: u64,
}

/// `toolmark scheduler`'s flags: `run`'s, and whether to enqueue one run now and exit.
#[derive(clap::Args)]
pub struct SchedulerArgs {
    #[command(flatten)]
    run: RunFlags,
    /// Enqueue one run now (unless another scheduler is enqueueing), print what was enqueued,
    /// and exit: `crawl` (alone: the default) harvests the registry and enqueues its remotes,
    /// `sweep` the package versions the sweep chooses.
    #[arg(long, num_args = 0..=1, default_missing_value = "crawl", value_parser = ["crawl", "sweep"])]
    enqueue_now: Option<String>,
}

/// `config` as `args` say, or exit 2 naming what is wrong; `None` when only printed.
fn config(args: &RunFlags, command: &str) -> Result<Option<Config>> {
    let config = match Config::load(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toolmark {command}: bad configuration: {e:#}");
            std::process::exit(2);
        }
    };
    if args.print_config {
        print!("{}", config.to_toml()?);
        return Ok(None);
    }
    Ok(Some(config))
}

pub fn run(args: RunFlags) -> Result<bool> {
    let Some(config) = config(&args, "run")? else {
        return Ok(true);
    };
    let runtime = toolmark_roles::api::runtime()?;
    let stop = signalled(&runtime);
    runtime.block_on(toolmark_roles::service::run(config, stop))?;
    Ok(true)
}

pub fn api(args: ApiArgs) -> Result<bool> {
    let Some(config) = config(&args.run, "api")? else {
        return Ok(true);
    };
    anyhow::ensure!(
        args.follow_seconds > 0,
        "--follow-seconds must be at least 1"
    );
    let runtime = toolmark_roles::api::runtime()?;
    let stop = signalled(&runtime);
    let interval = std::time::Duration::from_secs(args.follow_seconds);
    let snapshots = toolmark_roles::replica::Snapshots {
        join: !args.no_snapshot,
        publish: args
            .publish_snapshots
            .then(|| toolmark_roles::follower::SnapshotPolicy {
                every_entries: args.snapshot_every_entries.max(1),
                ..Default::default()
            }),
    };
    runtime.block_on(toolmark_roles::replica::run(
        config, interval, snapshots, stop,
    ))?;
    Ok(true)
}

pub fn scheduler(args: SchedulerArgs) -> Result<bool> {
    let Some(config) = config(&args.run, "scheduler")? else {
        return Ok(true);
    };
    let runtime = toolmark_roles::api::runtime()?;
    let stop = signalled(&runtime);
    if let Some(what) = args.enqueue_now {
        let what = toolmark_roles::cluster::Run::named(&what);
        let enqueued = runtime.block_on(toolmark_roles::cluster::enqueue(config, what, stop))?;
        match enqueued {
            Some(e) => println!("enqueued {}", e.text()),
            None => println!("another scheduler is enqueueing: nothing enqueued"),
        }
        return Ok(true);
    }
    runtime.block_on(toolmark_roles::cluster::run_scheduler(config, stop))?;
    Ok(true)
}

/// `toolmark worker` and `toolmark sequencer`.
pub fn role(args: RunFlags, role: &str) -> Result<bool> {
    let Some(config) = config(&args, role)? else {
        return Ok(true);
    };
    let runtime = toolmark_roles::api::runtime()?;
    let stop = signalled(&runtime);
    let run = async move {
        match role {
            "worker" => toolmark_roles::cluster::run_worker(config, stop).await,
            _ => toolmark_roles::cluster::run_sequencer(config, stop).await,
        }
    };
    runtime.block_on(run)?;
    Ok(true)
}

/// The stop signal of a role: the first SIGTERM or SIGINT; a second exits at once (130).
fn signalled(runtime: &tokio::runtime::Runtime) -> toolmark_roles::Stop {
    let stop = toolmark_roles::Stop::new();
    let signalled = stop.clone();
    runtime.spawn(async move {
        crate::serve_cli::terminated().await;
        tracing::info!(
            "shutting down: jobs finish and commit what they did; a second signal exits at once"
        );
        signalled.cancel();
        crate::serve_cli::terminated().await;
        tracing::warn!("second signal: exiting now");
        std::process::exit(130);
    });
    stop
}
