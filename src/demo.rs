//! `toolmark demo`: the whole service on one machine with no internet, in under a minute. The
//! world and its orchestration are `toolmark_demo`'s; this is its flags, its stop signal and
//! what it prints.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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
    /// Do not sweep the real packages in gVisor even when runsc is there and the demo runs as
    /// root: they stay unobserved, as on a machine without runsc.
    #[arg(long, env = toolmark_demo::packages::NO_SANDBOX_ENV)]
    pub no_sandbox: bool,
}

pub fn run(args: DemoArgs) -> Result<()> {
    let data = DemoData::prepare(args.data.as_deref())?;
    let options = DemoOptions {
        listen: args.listen,
        mcp_servers: args.mcp_servers,
        origin: toolmark_config::DEFAULT_ORIGIN.to_owned(),
        probe: toolmark_sandbox::observe::probe_beside(),
        no_sandbox: args.no_sandbox,
    };
    let runtime = crate::serve_cli::runtime()?;
    // Signals are handled from the start: a stop during startup ends the demo cleanly.
    let stop = Stop::new();
    let on_signal = stop.clone();
    runtime.spawn(async move {
        crate::serve_cli::terminated().await;
        on_signal.cancel();
    });
    let print = |event: Event<'_>| print(&event);
    runtime.block_on(toolmark_demo::run(&options, data.path(), stop, &print))?;
    Ok(())
}

fn print(event: &Event<'_>) {
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
        Event::Crawled(summary) => toolmark_roles::jobs::log_totals(summary),
        Event::Day {
            number,
            date,
            summary,
            took,
            base,
        } => println!(
            "{}",
            day_line(
                *number,
                date,
                *took,
                (summary.lines.len(), summary.appended, summary.changes()),
                base
            )
        ),
        Event::Swept {
            summary,
            took,
            probe,
            base,
        } => {
            let r = &summary.report;
            let totals: Vec<String> = r.totals.iter().map(|(s, n)| format!("{s} {n}")).collect();
            println!(
                "  packages swept in gVisor in {:.1} s: {} versions ({}), {} log entries: {base}/?q=gVisor",
                took.as_secs_f64(),
                summary.lines.len(),
                totals.join(", "),
                summary.appended
            );
            for line in &summary.lines {
                println!("    {}  {}", line.endpoint, line.status);
            }
            if !probe {
                println!(
                    "    (no toolmark-probe beside this binary: the sandboxes ran without the DNS sink and traps; `cargo build -p toolmark-probe` builds it)"
                );
            }
        }
        Event::PackagesUnobserved { why, listed } => println!("{}", unobserved_line(why, *listed)),
        Event::Ready { base } => {
            println!("  ready: check a tool set at {base}/check, verify the log at {base}/log");
        }
        Event::StoppedEarly(e) => println!("  stopped before the crawls ended ({e})"),
    }
}

/// The summary line of a day: `took` is that day's crawl alone (the event's own measure).
/// `counts` are (targets, log entries, changes); day one's line leaves the changes out
/// (there is nothing to change from yet).
fn day_line(
    number: usize,
    date: &str,
    took: Duration,
    (targets, entries, changes): (usize, u64, usize),
    base: &str,
) -> String {
    let head = format!(
        "  day {number} ({date}) crawled in {:.1} s: {targets} targets, {entries} log entries",
        took.as_secs_f64()
    );
    if number == 1 {
        head
    } else {
        format!("{head}, {changes} changes (tool sets and authorization servers): {base}/changes")
    }
}

/// The one line saying why the demo's packages stay unobserved, and how to see them swept.
fn unobserved_line(why: &toolmark_demo::packages::Unobserved, listed: usize) -> String {
    let count = match listed {
        0 => toolmark_demo::packages::MAX_SWEPT,
        n => n,
    };
    format!(
        "  packages: not observed — {}; {} to see {count} real npm/PyPI servers swept in gVisor",
        why.why(),
        why.how()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_days_line_reports_that_days_crawl_time() {
        let cases = [
            (
                (1, "2025-12-17", 4_240, (346, 612, 0)),
                "  day 1 (2025-12-17) crawled in 4.2 s: 346 targets, 612 log entries",
            ),
            (
                (2, "2025-12-18", 1_960, (348, 612, 43)),
                "  day 2 (2025-12-18) crawled in 2.0 s: 348 targets, 612 log entries, 43 changes (tool sets and authorization servers): http://x/changes",
            ),
        ];
        for ((number, date, ms, counts), want) in cases {
            let line = day_line(number, date, Duration::from_millis(ms), counts, "http://x");
            assert_eq!(line, want);
        }
    }
}
