//! `toolmark demo`: the whole service on one machine with no internet, in under a minute. The
//! world and its orchestration are `toolmark_demo`'s; this is its flags, its stop signal and
//! what it prints.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use toolmark_demo::{DEFAULT_LISTEN, DemoData, DemoOptions, Event};
use toolmark_ingest::Stop;

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
}

pub fn run(args: DemoArgs) -> Result<()> {
    let clock = Instant::now();
    let data = DemoData::prepare(args.data.as_deref())?;
    let options = DemoOptions {
        listen: args.listen,
        mcp_servers: args.mcp_servers,
        origin: toolmark_config::DEFAULT_ORIGIN.to_owned(),
    };
    let runtime = crate::serve_cli::runtime()?;
    // Signals are handled from the start: a stop during startup ends the demo cleanly.
    let stop = Stop::new();
    let on_signal = stop.clone();
    runtime.spawn(async move {
        crate::serve_cli::terminated().await;
        on_signal.cancel();
    });
    let print = |event: Event<'_>| print(&event, clock);
    runtime.block_on(toolmark_demo::run(&options, data.path(), stop, &print))?;
    Ok(())
}

fn print(event: &Event<'_>, clock: Instant) {
    match event {
        Event::Serving {
            base,
            data,
            registry,
            stand_ins,
            everything,
        } => {
            println!("toolmark demo: the desk is at {base}/ (crawls follow; Ctrl-C stops)");
            println!(
                "  data {}  registry replica {registry}  {stand_ins} stand-in MCP servers{}",
                data.display(),
                if *everything {
                    " + the real server-everything"
                } else {
                    ""
                }
            );
        }
        Event::StoppedDuringStartup => println!("toolmark demo: stopped during startup"),
        Event::Crawled(summary) => crate::crawl_cli::log_totals(summary),
        Event::Day {
            number: 1,
            date,
            summary,
            ..
        } => println!(
            "  day 1 ({date}) crawled in {:.1} s: {} targets, {} log entries",
            clock.elapsed().as_secs_f64(),
            summary.lines.len(),
            summary.appended
        ),
        Event::Day {
            number,
            date,
            summary,
            base,
        } => println!(
            "  day {number} ({date}) crawled in {:.1} s: {} targets, {} log entries, {} tool-set changes: {base}/changes",
            clock.elapsed().as_secs_f64(),
            summary.lines.len(),
            summary.appended,
            summary.changes()
        ),
        Event::Ready { base } => {
            println!("  ready: check a tool set at {base}/check, verify the log at {base}/log");
        }
        Event::StoppedEarly(e) => println!("  stopped before the crawls ended ({e})"),
    }
}
