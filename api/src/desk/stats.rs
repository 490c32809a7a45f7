//! `GET /stats`: the numbers of `/api/v1/stats` ([`crate::stats::Stats`], the same cached
//! computation) as a page: targets by state, changes by window, two charts of activity per
//! day drawn here as SVG (no script), the newest crawl and package sweep, the log, the
//! hosts serving the most endpoints, the starter-policy census of sensitive tools, and the
//! rule-set scan (totals and flagged targets by class).
//!
//! The page is a list of sections, each a function of the stats; a new section is one more
//! function and one more line in [`page`].

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use maud::{Markup, html};
use toolmark_index::DayCount;

use super::layout::{Nav, Page, fact, listing, render, time};
use super::{Html, blocking, data};
use crate::AppState;
use crate::stats::{ACTIVITY_DAYS, DEFAULT_HOSTS, RunStats, STATS_CACHE_SECONDS, Stats, human_age};

pub(super) async fn page(State(state): State<Arc<AppState>>) -> Html {
    let stats = blocking(move || data::stats(&state)).await?;
    let s = &*stats;
    let body = html! {
        h1 { "Stats" }
        p class="summary" {
            "Computed at " (time(Some(&s.generated_at))) ", reused for " (STATS_CACHE_SECONDS) " seconds. "
            "The same numbers as JSON: " a href="/api/v1/stats" { code { "/api/v1/stats" } } "."
        }
        (targets(s))
        (changes(s))
        (activity(&s.daily))
        (runs(s))
        (log(s))
        (hosts(s))
        (sensitive(s))
        (scans(s))
    };
    Ok(render(
        StatusCode::OK,
        Page {
            title: "Stats".into(),
            nav: Nav::Stats,
            scripts: &[],
            body,
        },
    ))
}

fn targets(s: &Stats) -> Markup {
    let t = &s.targets;
    html! {
        section aria-labelledby="targets-h" {
            h2 id="targets-h" { "Targets" }
            p class="help" { "A target is one remote (URL) or one package of a registry server. Every count but the last two is of listed targets: neither the target nor its server has left the registry." }
            dl class="facts" id="target-counts" {
                (fact("Listed", html! { (t.listed) " (" (t.remotes) " remotes, " (t.packages) " packages)" }))
                (fact("Observed", html! { (t.observed) " — the newest observation is ok" }))
                (fact("Pinned", html! { (t.pinned) " — a complete tool set was observed at least once" }))
                (fact("Never changed", html! { (t.never_changed) " — pinned, and no change recorded" }))
                (fact("Changed", html! { (t.changed) " — at least one change recorded" }))
                (fact("Not observed", html! { (t.unobserved) " — no tool set pinned yet (skipped ones included)" }))
                (fact("Failing", html! { (t.failing) " — dialled, and the newest observation is not ok" }))
                (fact("Skipped", html! {
                    @if t.skipped.is_empty() { "0" }
                    @for (i, (reason, n)) in t.skipped.iter().enumerate() {
                        @if i > 0 { ", " }
                        code { (reason) } " " (n)
                    }
                }))
                (fact("Delisted", html! { (t.delisted) }))
                (fact("Known in all", html! { (t.total) }))
            }
        }
    }
}

fn changes(s: &Stats) -> Markup {
    let c = &s.changes;
    let windows = [
        ("last24h", "Last 24 hours"),
        ("last7d", "Last 7 days"),
        ("last30d", "Last 30 days"),
    ];
    html! {
        section aria-labelledby="changes-h" {
            h2 id="changes-h" { "Changes" }
            p class="help" { "Changes of any kind (tool set, authorization servers, a package's behaviour) observed in the window; " (c.total) " recorded in all. " a href="/changes" { "The changes, newest first" } "." }
            (listing("change-windows", "Changes by window", &["Window", "Changes", "Dangerous", "Unsure", "Benign"], &["Changes", "Dangerous", "Unsure", "Benign"], html! {
                @for (key, label) in windows {
                    @let w = c.windows.get(key);
                    @let class = |name: &str| w.and_then(|w| w.by_class.get(name).copied()).unwrap_or(0);
                    tr {
                        th scope="row" { (label) }
                        td class="num" { (w.map_or(0, |w| w.total)) }
                        td class="num" { (class("dangerous")) }
                        td class="num" { (class("unsure")) }
                        td class="num" { (class("benign")) }
                    }
                }
            }))
        }
    }
}

fn activity(days: &[DayCount]) -> Markup {
    let observations: Vec<(&str, u64)> = days
        .iter()
        .map(|d| (d.day.as_str(), d.observations))
        .collect();
    let changes: Vec<(&str, u64)> = days.iter().map(|d| (d.day.as_str(), d.changes)).collect();
    html! {
        section aria-labelledby="activity-h" {
            h2 id="activity-h" { "Activity per day" }
            p class="help" { "The last " (ACTIVITY_DAYS) " UTC days, today included: log entries (observations of any status) and changes, by the day they were observed." }
            (bar_chart("chart-observations", "Observations per day", "observations", &observations))
            (bar_chart("chart-changes", "Changes per day", "changes", &changes))
            details {
                summary { "The numbers" }
                (listing("activity", "Observations and changes per day", &["Day", "Observations", "Changes"], &["Observations", "Changes"], html! {
                    @for d in days.iter().rev() {
                        tr {
                            th scope="row" { (d.day) }
                            td class="num" { (d.observations) }
                            td class="num" { (d.changes) }
                        }
                    }
                }))
            }
        }
    }
}

/// The chart's size in its own units (it scales to the page's width).
const CHART_W: u32 = 720;
const CHART_H: u32 = 180;
/// Room for the value labels on the left and the day labels below.
const LEFT: u32 = 56;
const BOTTOM: u32 = 24;
const TOP: u32 = 10;

/// The smallest of 1, 2, 5 × 10ⁿ at least `n` (at least 1): the top of a chart's scale.
fn nice_max(n: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1, 2, 5] {
            if step.saturating_mul(m) >= n {
                return step.saturating_mul(m);
            }
        }
        step = step.saturating_mul(10);
    }
}

/// A bar chart of one count per day: a scale of 0, half and the top, a bar per day (its
/// `<title>` gives the day and the count), a day label every seven days from the newest.
fn bar_chart(id: &str, title: &str, what: &str, days: &[(&str, u64)]) -> Markup {
    let max = nice_max(days.iter().map(|d| d.1).max().unwrap_or(0));
    let plot_w = CHART_W - LEFT - 8;
    let plot_h = CHART_H - TOP - BOTTOM;
    let n = days.len().max(1) as u32;
    // Tenths of a unit, so bars line up without floats.
    let slot10 = plot_w * 10 / n;
    let bar10 = slot10 * 7 / 10;
    let x = |i: u32| {
        format!(
            "{:.1}",
            f64::from(LEFT * 10 + i * slot10 + (slot10 - bar10) / 2) / 10.0
        )
    };
    let height = |v: u64| (v as f64 * f64::from(plot_h) / max as f64 * 10.0).round() / 10.0;
    let total: u64 = days.iter().map(|d| d.1).sum();
    let busiest = days.iter().max_by_key(|d| d.1);
    let desc = match (days.first(), days.last(), busiest) {
        (Some(first), Some(last), Some(b)) => format!(
            "{total} {what} from {} to {}; the most on {}: {}.",
            first.0, last.0, b.0, b.1
        ),
        _ => format!("No {what}."),
    };
    let ticks: BTreeMap<u64, u32> = [0, max / 2, max]
        .into_iter()
        .map(|v| (v, TOP + plot_h - height(v) as u32))
        .collect();
    html! {
        figure class="chart" {
            svg id=(id) class="chart" viewBox={ "0 0 " (CHART_W) " " (CHART_H) } role="img" aria-labelledby={ (id) "-title " (id) "-desc" } xmlns="http://www.w3.org/2000/svg" {
                title id={ (id) "-title" } { (title) }
                desc id={ (id) "-desc" } { (desc) }
                @for (v, y) in &ticks {
                    line class="grid" x1=(LEFT) x2=(CHART_W - 8) y1=(y) y2=(y) {}
                    text class="axis" x=(LEFT - 6) y=(y + 4) text-anchor="end" { (v) }
                }
                @for (i, (day, v)) in days.iter().enumerate() {
                    @let h = height(*v);
                    rect class={ "bar bar-" (what) } x=(x(i as u32)) y=(format!("{:.1}", f64::from(TOP + plot_h) - h)) width=(format!("{:.1}", f64::from(bar10) / 10.0)) height=(format!("{h:.1}")) {
                        title { (day) ": " (v) " " (what) }
                    }
                }
                @for (i, (day, _)) in days.iter().enumerate().rev().step_by(7) {
                    text class="axis" x=(format!("{:.1}", f64::from(LEFT * 10 + i as u32 * slot10 + slot10 / 2) / 10.0)) y=(CHART_H - 6) text-anchor="middle" { (day.get(5..).unwrap_or_default()) }
                }
            }
            figcaption { (title) " (UTC days; the scale's top is " (max) ")" }
        }
    }
}

fn run(title: &str, r: Option<&RunStats>) -> Markup {
    html! {
        @match r {
            None => tr { th scope="row" { (title) } td colspan="5" { "none yet" } },
            Some(r) => tr {
                th scope="row" { (title) " " (r.id) }
                td { (r.status) }
                td { (time(Some(&r.started_at))) }
                td { (time(r.finished_at.as_deref())) }
                td class="num" { (r.observed) }
                td {
                    @if r.statuses.is_empty() { "—" }
                    @for (i, (status, n)) in r.statuses.iter().enumerate() {
                        @if i > 0 { ", " }
                        code { (status) } " " (n)
                    }
                }
            },
        }
    }
}

fn runs(s: &Stats) -> Markup {
    html! {
        section aria-labelledby="runs-h" {
            h2 id="runs-h" { "Last runs" }
            p class="help" { "The newest crawl of the registry's remotes and the newest package sweep (packages observed in gVisor), with what their observations found." }
            (listing("runs", "The newest run of each job", &["Run", "Status", "Started", "Finished", "Observed", "By status"], &["Observed"], html! {
                (run("Crawl", s.last_run.as_ref()))
                (run("Package sweep", s.last_sweep.as_ref()))
            }))
        }
    }
}

fn log(s: &Stats) -> Markup {
    let l = &s.log;
    html! {
        section aria-labelledby="log-h" {
            h2 id="log-h" { "Log" }
            dl class="facts" id="log-stats" {
                (fact("Entries", html! { (l.tree_size) }))
                (fact("Root hash", html! { code class="digest" { (l.root_hash) } }))
                (fact("Checkpoint written", time(l.checkpoint_written_at.as_deref())))
                (fact("Checkpoint age", html! {
                    @match l.checkpoint_age_seconds { Some(a) => (human_age(a)), None => "—" }
                }))
                (fact("Entries indexed", html! { (l.indexed_entries) }))
            }
            p { a href="/log" { "Verify the checkpoint" } }
        }
    }
}

fn hosts(s: &Stats) -> Markup {
    let h = &s.hosts;
    html! {
        section aria-labelledby="hosts-h" {
            h2 id="hosts-h" { "Hosts with the most endpoints" }
            p class="help" { "Distinct endpoints of listed remotes per host; " (h.distinct_hosts) " hosts in all. " a href="/api/v1/stats/hosts?limit=50" { "Up to 50 as JSON" } "." }
            @if h.hosts.is_empty() {
                p { "No remote is listed." }
            } @else {
                (listing("hosts", "Hosts by endpoints", &["Host", "Endpoints"], &["Endpoints"], html! {
                    @for host in h.hosts.iter().take(DEFAULT_HOSTS as usize) {
                        tr { th scope="row" { code { (host.host) } } td class="num" { (host.endpoints) } }
                    }
                }))
            }
        }
    }
}

/// The starter-policy census: per category, the targets and servers exposing such tools.
fn sensitive(s: &Stats) -> Markup {
    let c = &s.sensitive;
    html! {
        section aria-labelledby="sensitive-h" {
            h2 id="sensitive-h" { "Sensitive tools" }
            p class="help" {
                "Targets whose current tool set has a tool the starter policy ("
                code { (c.policy.as_deref().unwrap_or("not derived yet")) }
                ") calls sensitive, by name: " (c.any.targets) " of " (c.observed_targets)
                " targets with a tool set, on " (c.any.servers) " servers. "
                a href="/api/v1/census" { "As JSON" } "."
            }
            (listing("sensitive", "Targets by starter-policy category", &["Category", "Targets", "Servers"], &["Targets", "Servers"], html! {
                @for k in &c.categories {
                    tr {
                        th scope="row" { a href={ "/?sensitive=" (k.category) } { (k.category) } }
                        td class="num" { (k.targets) }
                        td class="num" { (k.servers) }
                    }
                }
            }))
        }
    }
}

fn scans(s: &Stats) -> Markup {
    let x = &s.scans;
    let t = &x.totals;
    html! {
        section aria-labelledby="scans-h" {
            h2 id="scans-h" { "Rule-set scan" }
            p class="help" {
                "Every target's current tool set and server instructions, scanned with the rule set "
                a href="/api/v1/rules" { code { (x.rules) } } " (" code class="digest" { (x.rules_digest) } "). "
                a href="/?state=flagged" { "The flagged targets" } "."
            }
            dl class="facts" id="scan-totals" {
                (fact("Scanned", html! { (t.scanned) " — targets with a tool set" }))
                (fact("Flagged", html! { (t.flagged) " — at least one match" }))
                (fact("Blocked", html! { (t.blocked) " — at least one block-tier match" }))
                (fact("Toxic flow", html! { (t.toxic_flow) " — the tools together read private data, take in untrusted input and send data out" }))
                (fact("On the current rule set", html! {
                    (t.current_rules) " of " (t.scanned)
                    @if t.current_rules < t.scanned { " (the rest are re-scanned a pass at a time)" }
                }))
            }
            (listing("scan-classes", "Flagged targets by rule class", &["Class", "Targets", "Servers"], &["Targets", "Servers"], html! {
                @for k in &x.by_class {
                    tr {
                        th scope="row" { code { (k.class) } }
                        td class="num" { (k.targets) }
                        td class="num" { (k.servers) }
                    }
                }
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nice_max;

    #[test]
    fn the_scale_tops_are_one_two_five_times_a_power_of_ten() {
        let tops: Vec<u64> = [0, 1, 2, 3, 6, 11, 250, 999].map(nice_max).to_vec();
        assert_eq!(tops, [1, 1, 2, 5, 10, 20, 500, 1000]);
    }
}
