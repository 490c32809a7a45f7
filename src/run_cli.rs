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

pub fn run(args: RunFlags) -> Result<bool> {
    let config = match Config::load(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toolmark run: bad configuration: {e:#}");
            std::process::exit(2);
        }
    };
    if args.print_config {
        print!("{}", config.to_toml()?);
        return Ok(true);
    }
    let runtime = toolmark_roles::api::runtime()?;
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
    runtime.block_on(toolmark_roles::service::run(config, stop))?;
    Ok(true)
}
