//! `toolmark webhooks deliver`: one webhook delivery pass over the subscriptions the
//! configuration lists (what `toolmark run`'s `webhooks` job does on its schedule).

use anyhow::Result;
use clap::Subcommand;
use toolmark_config::{Config, RunFlags};

#[derive(Subcommand)]
pub enum WebhooksCommand {
    /// One delivery pass: every subscription that is due gets the events after its cursor, in
    /// order, until one is not acknowledged. Reads the same configuration as `toolmark run`.
    Deliver(Box<RunFlags>),
}

pub fn run(command: WebhooksCommand) -> Result<bool> {
    let WebhooksCommand::Deliver(flags) = command;
    let config = Config::load(&flags)?;
    // The base `toolmark run` serves under with this configuration (`base_url`; without it,
    // the configured listen address).
    let base = config.public_base(config.listen);
    let Some(deliverer) = toolmark_roles::jobs::deliverer(&config, &base)? else {
        eprintln!("toolmark webhooks deliver: the configuration lists no [[webhooks]]");
        return Ok(true);
    };
    let runtime = toolmark_roles::api::runtime()?;
    let stop = crate::serve_cli::stop_on_signal(&runtime);
    let report = runtime.block_on(deliverer.pass(&stop))?;
    print!("{}", toolmark_roles::jobs::pass_summary(&report));
    Ok(report.subscriptions.iter().all(|s| s.failure.is_none()))
}
