//! What `toolmark demo` prints for each [`Event`](crate::Event).

use std::fmt::Write as _;
use std::time::Duration;

use crate::Event;
use crate::packages::{MAX_SWEPT, Unobserved};

impl Event<'_> {
    /// What the demo prints for this event (its lines, without the last newline); `None` for a
    /// crawl's totals ([`Event::Crawled`]), which go to the log.
    pub fn text(&self) -> Option<String> {
        Some(match self {
            Event::Serving {
                base,
                data,
                registry,
                stand_ins,
                everything,
            } => format!(
                "toolmark demo: the desk is at {base}/ (crawls follow; Ctrl-C stops)\n  data {}  \
                 registry replica {registry}  {stand_ins} stand-in MCP servers{}",
                data.display(),
                if *everything {
                    " + the real server-everything"
                } else {
                    ""
                }
            ),
            Event::StoppedDuringStartup => "toolmark demo: stopped during startup".to_owned(),
            Event::Crawled(_) => return None,
            Event::Day {
                number,
                date,
                summary,
                took,
                base,
            } => day_line(
                *number,
                date,
                *took,
                (summary.lines.len(), summary.appended, summary.changes()),
                base,
            ),
            Event::Swept {
                summary,
                took,
                probe,
                base,
            } => {
                let r = &summary.report;
                let totals: Vec<String> =
                    r.totals.iter().map(|(s, n)| format!("{s} {n}")).collect();
                let mut out = format!(
                    "  packages swept in gVisor in {:.1} s: {} versions ({}), {} log entries: {base}/?q=gVisor",
                    took.as_secs_f64(),
                    summary.lines.len(),
                    totals.join(", "),
                    summary.appended
                );
                for line in &summary.lines {
                    let _ = write!(out, "\n    {}  {}", line.endpoint, line.status);
                }
                if !probe {
                    out.push_str(
                        "\n    (no toolmark-probe beside this binary: the sandboxes ran without the DNS sink and traps; `cargo build -p toolmark-probe` builds it)",
                    );
                }
                out
            }
            Event::PackagesUnobserved { why, listed } => unobserved_line(why, *listed),
            Event::Ready { base } => {
                format!("  ready: check a tool set at {base}/check, verify the log at {base}/log")
            }
            Event::StoppedEarly(e) => format!("  stopped before the crawls ended ({e})"),
        })
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
fn unobserved_line(why: &Unobserved, listed: usize) -> String {
    let count = match listed {
        0 => MAX_SWEPT,
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
