//! `toolmark demo`: the whole service on one machine with no internet, in under a minute. The
//! world and its orchestration are `toolmark_demo`'s; this is its flags, its stop signal and
//! what it prints.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use toolmark_demo::{DEFAULT_LISTEN, DemoData, DemoOptions, Event};

#[derive(Args)]
pub struct DemoArgs {
    /// Address the desk and API listen on (if the default is taken, any free port).
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Keep the demo's data here (an empty directory, or one an earlier demo used; it is
    /// wiped). Default: a new temporary directory, removed at exit.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Where `scripts/mcp-servers` installed the real MCP servers (default:
    /// .venv/mcp-servers when present). Without them the demo uses stand-ins only.
    #[arg(long, env = "TOOLMARK_MCP_SERVERS")]
    pub mcp_servers: Option<PathBuf>,
    /// Do not sweep the real packages in gVisor even when runsc is there and the demo runs as
    /// root: they stay unobserved, as on a machine without runsc.
    #[arg(long, env = toolmark_demo::packages::NO_SANDBOX_ENV)]
    pub no_sandbox: bool,
    /// Start only the demo's registry replica and stand-ins (no service): their crawl settings
    /// go to DIR/stage.env; SIGUSR1 moves them to the registry's next day (`scripts/cluster`).
    #[arg(long, value_name = "DIR")]
    pub stage: Option<PathBuf>,
}

pub fn run(args: DemoArgs) -> Result<()> {
    if let Some(dir) = &args.stage {
        return stage(&args, dir);
    }
    let data = DemoData::prepare(args.data.as_deref())?;
    let options = DemoOptions {
        listen: args.listen,
        mcp_servers: args.mcp_servers,
        origin: toolmark_config::DEFAULT_ORIGIN.to_owned(),
        probe: toolmark_sandbox::observe::probe_beside(),
        no_sandbox: args.no_sandbox,
    };
    let runtime = toolmark_roles::api::runtime()?;
    // Signals are handled from the start: a stop during startup ends the demo cleanly.
    let stop = crate::serve_cli::stop_on_signal(&runtime);
    let print = |event: Event<'_>| print(&event);
    runtime.block_on(toolmark_demo::run(&options, data.path(), stop, &print))?;
    Ok(())
}

/// `--stage DIR`: prints `stage DATE ENV-FILE` when the stand-ins serve that day.
fn stage(args: &DemoArgs, dir: &std::path::Path) -> Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = toolmark_roles::api::runtime()?;
    let stop = crate::serve_cli::stop_on_signal(&runtime);
    runtime.block_on(async {
        let mut usr1 = signal(SignalKind::user_defined1())?;
        let next_day = async move {
            usr1.recv().await;
        };
        let ready = |env: &std::path::Path, date: &str| println!("stage {date} {}", env.display());
        toolmark_demo::stage::serve(args.mcp_servers.as_deref(), dir, next_day, stop, &ready)
            .await?;
        Ok(())
    })
}

/// An event as the demo prints it; a crawl's totals go to the log.
fn print(event: &Event<'_>) {
    match event {
        Event::Crawled(summary) => toolmark_roles::jobs::log_totals(summary),
        e => {
            if let Some(text) = e.text() {
                println!("{text}");
            }
        }
    }
}
