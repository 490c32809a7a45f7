//! Change feeds: Atom 1.0 at `/feed.xml` (HISTOR's path), RSS 2.0 at `/feed.rss`, JSON Feed 1.1
//! at `/feed.json`.
//!
//! Query (the same for all three):
//! - `watch=<id>,<id>,…`: only changes of these targets (1–[`MAX_WATCH`] ids of 16 lowercase
//!   hex digits, else 400), as HISTOR and WARDEN's `historWatch` links use it; the ids are
//!   sorted and de-duplicated in the feed's own URL;
//! - `class=benign|unsure|dangerous`: only changes of that class;
//! - `before=<change id>`: the page of changes older than that one. Every page but the last
//!   links the next one (Atom `rel="next"`, RSS `atom:link rel="next"`, JSON Feed `next_url`).
//!
//! A page holds the newest [`FEED_PAGE`] changes (below `before`). An item's id is the change's
//! page, `{base}/changes/{id}` (Atom `id`, RSS `guid isPermaLink="true"`, JSON Feed `id`), which
//! never changes: change ids are assigned in log order and survive an index rebuild. Its time is
//! the change's `observedAt`; the feed's `updated` is its newest item's time, or the last crawl's
//! when the page is empty. Items are rendered from each change's
//! [`ChangeView`](crate::changes::ChangeView); a stored change that does not parse fails the
//! request (500, logged) rather than giving an item with empty fields. Every string from a
//! server is escaped (the HTML of an item is a [`maud`] template, escaped again as XML text),
//! and characters XML 1.0 does not allow are dropped ([`xml_text`]).
//!
//! A watched feed's first page (`watch` without `before` or `class`) also carries one item per
//! tool set clients reported for a watched target that toolmark never observed there
//! ([`ReportItem`], "clients reported a tool set toolmark never observed"): at most
//! [`FEED_PAGE`] of them, for the digests that first reached the minimum of client reports
//! (`toolmark_index::contributions::MINIMUM_REPORTS` clients on one day) within the window of
//! the last `WINDOW_DAYS` days. These items are **derived at read time** from the client-report
//! counts (`crate::contribute`), not from a change row of the log: their id
//! (`{base}/s/{target}#client-report-{day}-{kind}-{digest hex}`) is made of the target, the
//! digest and the first day it reached the minimum, so it does not move, and they are dated by
//! that day. An item leaves the feed when that day leaves the window, or at once when toolmark
//! observes the digest itself.
//!
//! A change of a server's `instructions` reads "server instructions changed: <signals>" with
//! its signals and its word diff (`[-removed-]{+added+}`, cut at [`ITEM_DIFF_CHARS`]); a target
//! newly flagged by the rule set reads "flagged by the rule set: N block, M advise
//! (<classes>)" with its first [`ITEM_SIGNALS`] matches ([`change_summary`]).

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::html;
use serde_json::{Value, json};

use crate::changes::{BehaviourChangeView, ChangeView, RegistryChangeView, SignalView};
use crate::desk::layout::to_html;
use crate::servers::{ChangeQuery, Params, blocking, change_json, query_changes, valid_id};
use crate::{ApiError, AppState};
use toolmark_index::contributions::{MINIMUM_REPORTS, WINDOW_DAYS};

/// Items per feed page: HISTOR's 50, enough for weeks of changes of a watched set; older ones
/// through `before`.
pub const FEED_PAGE: u32 = 50;

/// Most ids in `watch`: HISTOR's limit, which WARDEN's `historWatch` links respect.
pub const MAX_WATCH: usize = 100;

/// Names shown per list (added, removed, modified) in an item; the rest are counted as
/// "+N more".
pub const ITEM_NAMES: usize = 10;

/// Signals (and rule-set matches) shown per item, the rest counted.
pub const ITEM_SIGNALS: usize = 10;

/// Characters of an instructions change's word diff shown in an item's text.
pub const ITEM_DIFF_CHARS: usize = 2_000;

/// Atom's media type.
pub const ATOM_TYPE: &str = "application/atom+xml; charset=utf-8";

/// RSS 2.0's media type.
pub const RSS_TYPE: &str = "application/rss+xml; charset=utf-8";

/// JSON Feed's media type.
pub const JSON_FEED_TYPE: &str = "application/feed+json";

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/feed.xml", get(atom))
        .route("/feed.rss", get(rss))
        .route("/feed.json", get(json_feed))
}

/// `s` with the characters XML 1.0 does not allow (C0 controls other than tab, newline and
/// carriage return; U+FFFE and U+FFFF) dropped, and `&`, `<`, `>`, `"`, `'` escaped: safe as
/// element text and as an attribute value.
pub fn xml_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// What the query asked for.
struct FeedQuery {
    watch: Option<Vec<String>>,
    class: Option<&'static str>,
    before: Option<i64>,
}

/// `watch=<id>,<id>,…`: 1–[`MAX_WATCH`] target ids, sorted and de-duplicated (the change
/// feeds' and the security events' filter).
pub(crate) fn watch_ids(p: &Params) -> Result<Option<Vec<String>>, ApiError> {
    let Some(w) = p.one("watch")? else {
        return Ok(None);
    };
    let ids: Vec<&str> = w.split(',').collect();
    if ids.len() > MAX_WATCH {
        return Err(ApiError::BadRequest(format!(
            "watch holds more than {MAX_WATCH} ids"
        )));
    }
    if let Some(bad) = ids.iter().find(|id| !valid_id(id)) {
        return Err(ApiError::BadRequest(format!(
            "watch: {:?} is not a target id (16 lowercase hex digits)",
            bad.chars().take(40).collect::<String>()
        )));
    }
    let mut ids: Vec<String> = ids.into_iter().map(str::to_owned).collect();
    ids.sort();
    ids.dedup();
    Ok(Some(ids))
}

fn parse_query(
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<FeedQuery, ApiError> {
    let p = Params::new(query)?;
    let watch = watch_ids(&p)?;
    Ok(FeedQuery {
        watch,
        class: p.class()?,
        before: p.integer("before")?,
    })
}

/// One page of a feed, independent of the format.
struct Page {
    title: String,
    /// The feed's URL without `before` (its identity across pages) for `path`.
    feed_url: String,
    /// This page's URL.
    self_url: String,
    next_url: Option<String>,
    /// The desk page the feed mirrors: the server's page when one is watched, else the
    /// changes page (with the class filter).
    home: String,
    updated: String,
    items: Vec<FeedItem>,
    base: String,
}

/// One item of a change feed: a change, or a tool set clients reported.
enum FeedItem {
    /// A change of the log's (a change row, [`ChangeView`]).
    Change(Box<ChangeView>),
    /// A tool set clients reported that toolmark never observed (derived at read time).
    Report(ReportItem),
}

/// "clients reported a tool set toolmark never observed": a digest toolmark never observed at
/// a watched target that reached the minimum of client reports in the window (module
/// documentation). Derived at read time from the counts, never stored as a change.
struct ReportItem {
    target_id: String,
    server: String,
    endpoint: String,
    report: toolmark_index::ClientReport,
    /// The day's first second, the item's time.
    date: String,
}

impl ReportItem {
    /// `{base}/s/{target}#client-report-{day}-{kind}-{digest hex}`: the target, the digest and
    /// the first day it reached the minimum, so the id never moves.
    fn id(&self, base: &str) -> String {
        format!(
            "{base}/s/{}#client-report-{}-{}-{}",
            self.target_id,
            self.report.first_reached.date(),
            self.report.kind.as_str(),
            self.report.digest.hex()
        )
    }

    fn text(&self) -> String {
        format!(
            "Endpoint: {}\nOn {}, at least {} clients reported being served the {} digest {}, \
             which toolmark never observed at this target (opt-in /check reports): the cloaking \
             signal, as a second look that lists other tools is.\n",
            self.endpoint,
            self.report.first_reached.date(),
            MINIMUM_REPORTS,
            self.report.kind.as_str(),
            self.report.digest
        )
    }

    fn html(&self, base: &str) -> String {
        let r = &self.report;
        to_html(html! {
            p { "Endpoint: " code { (self.endpoint) } }
            p {
                "On " (r.first_reached.date()) ", at least " (MINIMUM_REPORTS)
                " clients reported being served the " (r.kind.as_str()) " digest " code { (r.digest) }
                ", which toolmark never observed at this target (opt-in " code { "/check" } " reports): the cloaking signal, as a second look that lists other tools is."
            }
            p { a href={ (base) "/s/" (self.target_id) "#client-reports" } { "The server" } }
        })
    }
}

/// The category (Atom `category`, RSS `category`, JSON Feed `tags`) of a report item.
pub const REPORT_CATEGORY: &str = "client-report";

impl FeedItem {
    fn id(&self, base: &str) -> String {
        match self {
            FeedItem::Change(c) => c.page(base),
            FeedItem::Report(r) => r.id(base),
        }
    }

    fn link(&self, base: &str) -> String {
        match self {
            FeedItem::Change(c) => c.page(base),
            FeedItem::Report(r) => format!("{base}/s/{}#client-reports", r.target_id),
        }
    }

    fn title(&self) -> String {
        match self {
            FeedItem::Change(c) => item_title(c),
            FeedItem::Report(r) => format!(
                "{}: clients reported a tool set toolmark never observed",
                r.server
            ),
        }
    }

    fn date(&self) -> &str {
        match self {
            FeedItem::Change(c) => &c.row.observed_at,
            FeedItem::Report(r) => &r.date,
        }
    }

    fn target_id(&self) -> &str {
        match self {
            FeedItem::Change(c) => &c.row.target_id,
            FeedItem::Report(r) => &r.target_id,
        }
    }

    fn endpoint(&self) -> &str {
        match self {
            FeedItem::Change(c) => &c.row.endpoint,
            FeedItem::Report(r) => &r.endpoint,
        }
    }

    fn category(&self) -> &'static str {
        match self {
            FeedItem::Change(c) => c.class.as_str(),
            FeedItem::Report(_) => REPORT_CATEGORY,
        }
    }

    fn text(&self) -> String {
        match self {
            FeedItem::Change(c) => item_text(c),
            FeedItem::Report(r) => r.text(),
        }
    }

    fn html(&self, base: &str) -> String {
        match self {
            FeedItem::Change(c) => item_html(c, base),
            FeedItem::Report(r) => r.html(base),
        }
    }

    /// The JSON Feed item's `_toolmark`.
    fn json(&self, base: &str) -> Result<Value, ApiError> {
        match self {
            FeedItem::Change(c) => change_json(c, base, false),
            FeedItem::Report(r) => Ok(json!({
                "kind": REPORT_CATEGORY,
                "signal": "cloaking",
                "targetId": r.target_id,
                "server": r.server,
                "endpoint": r.endpoint,
                "digestKind": r.report.kind.as_str(),
                "digest": r.report.digest.to_string(),
                "firstReached": r.report.first_reached.date(),
                "minimumReports": MINIMUM_REPORTS,
            })),
        }
    }
}

/// The report items of the watched targets `watch` (newest first, at most [`FEED_PAGE`]): the
/// digests toolmark never observed there that first reached the minimum of client reports
/// within the window ending today.
fn report_items(
    state: &AppState,
    index: &toolmark_index::Index,
    watch: &[String],
) -> Result<Vec<ReportItem>, ApiError> {
    let today = toolmark_index::Day::of((state.clock)());
    let since = today.minus(WINDOW_DAYS - 1);
    let mut items = Vec::new();
    for id in watch {
        let reports = state.client_reports.other_reports(index, id, today)?;
        if reports.is_empty() {
            continue;
        }
        let Some(target) = index.target(id)? else {
            continue;
        };
        for report in reports.into_iter().filter(|r| r.first_reached >= since) {
            items.push(ReportItem {
                target_id: id.clone(),
                server: target.server.clone(),
                endpoint: target.target.clone(),
                date: report.first_reached.start(),
                report,
            });
        }
    }
    items.sort_by(|a, b| {
        b.date
            .cmp(&a.date)
            .then_with(|| a.target_id.cmp(&b.target_id))
    });
    items.truncate(FEED_PAGE as usize);
    Ok(items)
}

/// `changes` (newest first) with `reports` (newest first) merged in by date, the changes'
/// order kept.
fn merge(changes: Vec<ChangeView>, reports: Vec<ReportItem>) -> Vec<FeedItem> {
    let mut out = Vec::with_capacity(changes.len() + reports.len());
    let mut reports = reports.into_iter().peekable();
    for c in changes {
        while let Some(r) = reports.next_if(|r| r.date >= c.row.observed_at) {
            out.push(FeedItem::Report(r));
        }
        out.push(FeedItem::Change(Box::new(c)));
    }
    out.extend(reports.map(FeedItem::Report));
    out
}

impl FeedQuery {
    fn url(&self, base: &str, path: &str, before: Option<i64>) -> String {
        let mut q = Vec::new();
        if let Some(w) = &self.watch {
            q.push(format!("watch={}", w.join(",")));
        }
        if let Some(c) = self.class {
            q.push(format!("class={c}"));
        }
        if let Some(b) = before {
            q.push(format!("before={b}"));
        }
        if q.is_empty() {
            format!("{base}{path}")
        } else {
            format!("{base}{path}?{}", q.join("&"))
        }
    }
}

fn load(state: &AppState, q: &FeedQuery, path: &str) -> Result<Page, ApiError> {
    let base = state.base_url.clone();
    let (rows, last_crawl, reports) = {
        let index = state.index.get();
        let rows = query_changes(
            &index,
            &ChangeQuery {
                targets: q.watch.as_deref(),
                class: q.class,
                before: q.before,
                limit: FEED_PAGE + 1,
                ..ChangeQuery::default()
            },
        )?;
        let last_crawl = index
            .last_run()?
            .map(|r| r.finished_at.unwrap_or(r.started_at));
        // Report items: a watched feed's first page only (they have no class and no change id
        // to page by).
        let reports = match (&q.watch, q.class, q.before) {
            (Some(watch), None, None) => report_items(state, &index, watch)?,
            _ => Vec::new(),
        };
        (rows, last_crawl, reports)
    };
    let more = rows.len() > FEED_PAGE as usize;
    let items = rows
        .into_iter()
        .take(FEED_PAGE as usize)
        .map(ChangeView::parse)
        .collect::<Result<Vec<_>, _>>()?;
    let next_url = match items.last() {
        Some(last) if more => Some(q.url(&base, path, Some(last.row.id))),
        _ => None,
    };
    let items = merge(items, reports);
    let updated = items
        .first()
        .map(|c| c.date().to_owned())
        .or(last_crawl)
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into());
    let mut title = String::from("toolmark: MCP tool-definition changes");
    if q.watch.is_some() {
        title.push_str(" (watched)");
    }
    if let Some(c) = q.class {
        title.push_str(&format!(" ({c})"));
    }
    let home = match (&q.watch, q.class) {
        (Some(w), _) if w.len() == 1 => format!("{base}/s/{}", w[0]),
        (_, Some(c)) => format!("{base}/changes?class={c}"),
        _ => format!("{base}/changes"),
    };
    Ok(Page {
        title,
        home,
        feed_url: q.url(&base, path, None),
        self_url: q.url(&base, path, q.before),
        next_url,
        updated,
        items,
        base,
    })
}

/// The item title: `{server}: tool definitions changed ({class})`, or `authorization server
/// changed`…; for an instructions or scan change its one-line summary ([`change_summary`]).
fn item_title(c: &ChangeView) -> String {
    format!(
        "{}: {} ({})",
        c.row.server,
        change_summary(c),
        c.class.as_str()
    )
}

/// `a, b` (or `none`).
fn server_list(servers: &[String]) -> String {
    if servers.is_empty() {
        "none".to_owned()
    } else {
        servers.join(", ")
    }
}

/// At most [`ITEM_NAMES`] names, then "+N more" against the exact total.
fn name_list<'a>(names: impl Iterator<Item = &'a str>, total: u64) -> (Vec<&'a str>, u64) {
    let shown: Vec<&str> = names.take(ITEM_NAMES).collect();
    let more = total.saturating_sub(shown.len() as u64);
    (shown, more)
}

/// `rule (tool): meaning`, and for `newly-sensitive` the categories (`… [money, admin]`).
fn signal_line(s: &SignalView) -> String {
    let mut line = s.signal.rule.to_owned();
    if let Some(t) = &s.signal.tool {
        line.push_str(&format!(" ({t})"));
    }
    line.push_str(&format!(": {}", s.message));
    if s.signal.rule == toolmark_toolset::classify::NEWLY_SENSITIVE {
        if let Some(categories) = &s.signal.new {
            line.push_str(&format!(" [{categories}]"));
        }
    }
    line
}

/// The signals an item shows, and how many more there are.
fn shown_signals(c: &ChangeView) -> (Vec<String>, usize) {
    let shown: Vec<String> = c
        .signals()
        .iter()
        .take(ITEM_SIGNALS)
        .map(|s| signal_line(&SignalView::new(s)))
        .collect();
    let more = c.signals_total().saturating_sub(shown.len());
    (shown, more)
}

/// A tool-set change's lists: added, removed and modified, and the renames (`old → new`) when
/// there are any (a renamed tool is neither added nor removed).
fn lists(c: &ChangeView) -> Vec<(&'static str, Vec<String>, u64, u64)> {
    let r = &c.row;
    let owned = |(names, more): (Vec<&str>, u64)| {
        (
            names.into_iter().map(str::to_owned).collect::<Vec<_>>(),
            more,
        )
    };
    let (a, am) = owned(name_list(c.added().iter().map(String::as_str), r.added));
    let (d, dm) = owned(name_list(c.removed().iter().map(String::as_str), r.removed));
    let (m, mm) = owned(name_list(c.modified(), r.modified));
    let mut out = vec![
        ("Added", a, am, r.added),
        ("Removed", d, dm, r.removed),
        ("Modified", m, mm, r.modified),
    ];
    if let Some(diff) = c.diff().filter(|d| d.renames_total > 0) {
        let shown: Vec<String> = diff
            .renames
            .iter()
            .take(ITEM_NAMES)
            .map(|x| format!("{} → {}", x.from, x.to))
            .collect();
        let total = diff.renames_total as u64;
        let more = total.saturating_sub(shown.len() as u64);
        out.push(("Renamed", shown, more, total));
    }
    out
}

/// A surface change's text: [`toolmark_toolset::surface::diff::render`] cut at
/// [`ITEM_DIFF_CHARS`] characters, or why there is none.
fn surface_text(s: &crate::changes::SurfaceChangeView) -> String {
    match s.render() {
        Some(text) => match text.char_indices().nth(ITEM_DIFF_CHARS) {
            Some((i, _)) => format!("{}…", &text[..i]),
            None => text,
        },
        None => "(no diff: a document of the change is not stored)\n".to_owned(),
    }
}

/// A card mismatch's lists as lines (`Only on the card (1): delete_everything`).
fn card_mismatch_lines(m: &crate::changes::CardMismatchView) -> Vec<String> {
    m.lists()
        .into_iter()
        .filter(|(_, _, total)| *total > 0)
        .map(|(label, items, total)| {
            let shown: Vec<&str> = items.iter().take(ITEM_NAMES).map(String::as_str).collect();
            let more = total.saturating_sub(shown.len());
            let mut line = format!("{label} ({total}): {}", shown.join(", "));
            if more > 0 {
                line.push_str(&format!(" +{more} more"));
            }
            line
        })
        .collect()
}

/// What an instructions or scan change says in one line (`server instructions changed:
/// <signal rules>`, `flagged by the rule set: N block, M advise (<classes>)`); the headline
/// for other kinds.
pub(crate) fn change_summary(c: &ChangeView) -> String {
    if let Some(i) = &c.instructions {
        // Each rule once, in the order it first fired.
        let mut rules: Vec<&str> = Vec::new();
        for s in &i.signals {
            if !rules.contains(&s.rule) {
                rules.push(s.rule);
            }
        }
        let signals = if rules.is_empty() {
            "no signal".to_owned()
        } else {
            rules.join(", ")
        };
        return format!("{}: {signals}", c.headline());
    }
    if let Some(x) = &c.scan {
        let classes: Vec<&str> = x.classes.iter().map(|k| k.as_str()).collect();
        return format!(
            "{}: {} block, {} advise ({})",
            c.headline(),
            x.block,
            x.advise,
            classes.join(", ")
        );
    }
    c.headline().to_owned()
}

/// An instructions change's word diff as text, `[-removed-]{+added+}`, cut at
/// [`ITEM_DIFF_CHARS`] characters.
fn word_diff_text(ops: &[toolmark_toolset::text::WordEdit]) -> String {
    use toolmark_toolset::text::{EditOp, WordEdit};
    let mut out = String::new();
    for WordEdit(op, text) in ops {
        match op {
            EditOp::Equal => out.push_str(text),
            EditOp::Delete => out.push_str(&format!("[-{text}-]")),
            EditOp::Insert => out.push_str(&format!("{{+{text}+}}")),
        }
    }
    match out.char_indices().nth(ITEM_DIFF_CHARS) {
        Some((i, _)) => format!("{}…", &out[..i]),
        None => out,
    }
}

/// A scan change's first [`ITEM_SIGNALS`] matches as lines (`block CODE (class) in tool at
/// field [start, end)`), and how many more there are.
fn match_lines(x: &toolmark_index::BecameFlagged) -> (Vec<String>, u64) {
    let lines: Vec<String> = x
        .matches
        .iter()
        .take(ITEM_SIGNALS)
        .map(|m| {
            let tier = match m.tier {
                toolmark_toolset::rules::Tier::Block => "block",
                toolmark_toolset::rules::Tier::Advise => "advise",
            };
            let place = match &m.tool {
                Some(t) => format!("in {t} at"),
                None => "at".to_owned(),
            };
            format!(
                "{tier} {} ({}) {place} {} [{}, {})",
                m.code,
                m.class.as_str(),
                m.field,
                m.span[0],
                m.span[1]
            )
        })
        .collect();
    let more = (x.block + x.advise).saturating_sub(lines.len() as u64);
    (lines, more)
}

/// The item as plain text.
fn item_text(c: &ChangeView) -> String {
    let r = &c.row;
    let mut out = format!("Endpoint: {}\nClass: {}\n", r.endpoint, c.class.as_str());
    if c.instructions.is_some() || c.scan.is_some() {
        out.push_str(&change_summary(c));
        out.push('\n');
        if let Some(i) = &c.instructions {
            let (signals, more_signals) = shown_signals(c);
            for line in &signals {
                out.push_str(&format!("  - {line}\n"));
            }
            if more_signals > 0 {
                out.push_str(&format!("  +{more_signals} more signals\n"));
            }
            out.push_str(&format!("Instructions: {}\n", word_diff_text(&i.diff)));
        }
        if let Some(x) = &c.scan {
            let (lines, more) = match_lines(x);
            for line in &lines {
                out.push_str(&format!("  - {line}\n"));
            }
            if more > 0 {
                out.push_str(&format!("  +{more} more matches\n"));
            }
            out.push_str(&format!("Rule set: {} {}\n", x.rules, x.rules_digest));
        }
        out.push_str(&format!(
            "Log entry: {} (previous: {})\n",
            r.new_entry, r.old_entry
        ));
        return out;
    }
    if let Some(a) = &c.authorization {
        out.push_str(&format!(
            "Authorization servers: {} -> {}\nLog entry: {} (previous: {})\n",
            server_list(&a.old),
            server_list(&a.new),
            r.new_entry,
            r.old_entry
        ));
        return out;
    }
    if let Some(g) = &c.registry {
        out.push_str(&format!(
            "Versions: {} -> {}\n{}\n",
            g.old_version,
            g.new_version,
            g.summary()
        ));
        for (label, items) in registry_lists(g) {
            if !items.is_empty() {
                out.push_str(&format!("{label}: {}\n", items.join(", ")));
            }
        }
        out.push_str(&format!(
            "Log entry: {} (previous: {})\n",
            r.new_entry, r.old_entry
        ));
        return out;
    }
    if let Some(sc) = &c.surface {
        out.push_str(&format!("{}\n", c.headline()));
        out.push_str(&surface_text(sc));
        out.push_str(&format!(
            "Digest of the {}: {} -> {}\nLog entry: {} (previous: {})\n",
            sc.kind.as_str(),
            r.old_full,
            r.new_full,
            r.new_entry,
            r.old_entry
        ));
        return out;
    }
    if let Some(m) = &c.card_mismatch {
        out.push_str(&format!("{}\n", c.headline()));
        for line in card_mismatch_lines(m) {
            out.push_str(&format!("{line}\n"));
        }
        out.push_str(&format!(
            "Card digest: {}\nFull digest: {}\nLog entry: {}\n",
            r.old_full, r.new_full, r.new_entry
        ));
        return out;
    }
    if let Some(b) = &c.behaviour {
        out.push_str(&format!(
            "Versions: {} -> {}\n",
            b.old_version, b.new_version
        ));
        for (label, items) in behaviour_lists(b) {
            if !items.is_empty() {
                out.push_str(&format!("{label}: {}\n", items.join(", ")));
            }
        }
        out.push_str(&format!(
            "Log entry: {} (previous: {})\n",
            r.new_entry, r.old_entry
        ));
        return out;
    }
    let (signals, more_signals) = shown_signals(c);
    for line in &signals {
        out.push_str(&format!("  - {line}\n"));
    }
    if more_signals > 0 {
        out.push_str(&format!("  +{more_signals} more signals\n"));
    }
    for (label, names, more, total) in lists(c) {
        out.push_str(&format!("{label} ({total})"));
        if !names.is_empty() {
            out.push_str(": ");
            out.push_str(&names.join(", "));
        }
        if more > 0 {
            out.push_str(&format!(" +{more} more"));
        }
        out.push('\n');
    }
    if c.analysis.is_none() {
        out.push_str("(no diff: a document of the change is not stored)\n");
    }
    if r.kind == "cloaking" {
        // The two listings of one observation: toolmark's, then the second identity's.
        out.push_str(&format!(
            "{}\nFull digest, first listing -> second identity's: {} -> {}\nLog entry: {}\n",
            c.headline(),
            r.old_full,
            r.new_full,
            r.new_entry
        ));
        return out;
    }
    out.push_str(&format!(
        "Full digest: {} -> {}\nLog entry: {} (previous: {})\n",
        r.old_full, r.new_full, r.new_entry, r.old_entry
    ));
    out
}

/// A registry change's lists, labelled, at most [`ITEM_NAMES`] items each.
pub(crate) fn registry_lists(g: &RegistryChangeView) -> [(&'static str, Vec<String>); 5] {
    let cut = |v: &[String]| {
        let mut shown: Vec<String> = v.iter().take(ITEM_NAMES).cloned().collect();
        if v.len() > ITEM_NAMES {
            shown.push(format!("+{} more", v.len() - ITEM_NAMES));
        }
        shown
    };
    [
        (
            "Previous publisher",
            g.previous_publisher.iter().cloned().collect(),
        ),
        ("Install scripts added", cut(&g.install_scripts_added)),
        ("New dependencies", cut(&g.new_dependencies)),
        ("Dependency specs changed", cut(&g.dependency_specs_changed)),
        ("New bin entries", cut(&g.new_bins)),
    ]
}

/// A behaviour change's lists, labelled, at most [`ITEM_NAMES`] items each.
fn behaviour_lists(b: &BehaviourChangeView) -> [(&'static str, Vec<String>); 4] {
    let cut = |v: &[String]| {
        let mut shown: Vec<String> = v.iter().take(ITEM_NAMES).cloned().collect();
        if v.len() > ITEM_NAMES {
            shown.push(format!("+{} more", v.len() - ITEM_NAMES));
        }
        shown
    };
    [
        ("New findings", cut(&b.findings_added)),
        ("Findings gone", cut(&b.findings_removed)),
        ("New acts", cut(&b.acts_added)),
        ("Acts gone", cut(&b.acts_removed)),
    ]
}

/// The item as HTML (escaped again by the XML writer for Atom and RSS).
fn item_html(c: &ChangeView, base: &str) -> String {
    let r = &c.row;
    let (signals, more_signals) = shown_signals(c);
    let links = html! {
        p {
            "Log entry " (r.new_entry) " (previous: " (r.old_entry) "). "
            a href=(c.page(base)) { "The change" } " · "
            a href={ (base) "/s/" (r.target_id) } { "the server" }
        }
    };
    if let Some(a) = &c.authorization {
        return to_html(html! {
            p { "Endpoint: " code { (r.endpoint) } }
            p { "Class: " strong { (c.class.as_str()) } }
            p {
                "Authorization servers: " code { (server_list(&a.old)) } " → " code { (server_list(&a.new)) }
            }
            (links)
        });
    }
    if let Some(g) = &c.registry {
        return to_html(html! {
            p { "Package: " code { (r.endpoint) } }
            p { "Class: " strong { (c.class.as_str()) } }
            p { "Versions: " code { (g.old_version) } " → " code { (g.new_version) } }
            p { (g.summary()) }
            @for (label, items) in registry_lists(g) {
                @if !items.is_empty() {
                    p { (label) ": " (items.join(", ")) }
                }
            }
            (links)
        });
    }
    if let Some(i) = &c.instructions {
        return to_html(html! {
            p { "Endpoint: " code { (r.endpoint) } }
            p { "Class: " strong { (c.class.as_str()) } }
            p { (change_summary(c)) }
            @if !signals.is_empty() {
                ul {
                    @for line in &signals { li { (line) } }
                    @if more_signals > 0 { li { "+" (more_signals) " more signals" } }
                }
            }
            p { "Instructions: " (word_diff_text(&i.diff)) }
            (links)
        });
    }
    if let Some(x) = &c.scan {
        let (lines, more) = match_lines(x);
        return to_html(html! {
            p { "Endpoint: " code { (r.endpoint) } }
            p { "Class: " strong { (c.class.as_str()) } }
            p { (change_summary(c)) }
            ul {
                @for line in &lines { li { (line) } }
                @if more > 0 { li { "+" (more) " more matches" } }
            }
            p { "Rule set: " code { (x.rules) } " " code { (x.rules_digest) } }
            (links)
        });
    }
    if let Some(sc) = &c.surface {
        return to_html(html! {
            p { "Endpoint: " code { (r.endpoint) } }
            p { "Class: " strong { (c.class.as_str()) } }
            p { (c.headline()) }
            pre { (surface_text(sc)) }
            p { "Digest of the " (sc.kind.as_str()) ": " code { (r.old_full) } " → " code { (r.new_full) } }
            (links)
        });
    }
    if let Some(m) = &c.card_mismatch {
        return to_html(html! {
            p { "Endpoint: " code { (r.endpoint) } }
            p { "Class: " strong { (c.class.as_str()) } }
            p { (c.headline()) }
            ul {
                @for line in card_mismatch_lines(m) { li { (line) } }
            }
            p { "Card digest: " code { (r.old_full) } ", full digest: " code { (r.new_full) } }
            (links)
        });
    }
    if let Some(b) = &c.behaviour {
        return to_html(html! {
            p { "Package: " code { (r.endpoint) } }
            p { "Class: " strong { (c.class.as_str()) } }
            p { "Versions: " code { (b.old_version) } " → " code { (b.new_version) } }
            @for (label, items) in behaviour_lists(b) {
                @if !items.is_empty() {
                    p { (label) ": " (items.join(", ")) }
                }
            }
            (links)
        });
    }
    to_html(html! {
        p { "Endpoint: " code { (r.endpoint) } }
        p { "Class: " strong { (c.class.as_str()) } }
        @if !signals.is_empty() {
            ul {
                @for line in &signals { li { (line) } }
                @if more_signals > 0 { li { "+" (more_signals) " more signals" } }
            }
        }
        @for (label, names, more, total) in lists(c) {
            p {
                (label) " (" (total) ")"
                @if !names.is_empty() {
                    ": "
                    @for (i, n) in names.iter().enumerate() {
                        @if i > 0 { ", " }
                        code { (n) }
                    }
                }
                @if more > 0 { " +" (more) " more" }
            }
        }
        @if r.kind == "cloaking" {
            p { (c.headline()) }
            p {
                "Full digest, first listing → second identity's: "
                code { (r.old_full) } " → " code { (r.new_full) }
            }
        } @else {
            p { "Full digest: " code { (r.old_full) } " → " code { (r.new_full) } }
        }
        (links)
    })
}

pub(crate) fn respond(body: String, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// RFC 822 date (as RSS wants) of a `YYYY-MM-DDTHH:MM:SSZ` time.
pub(crate) fn rfc822(t: &str) -> String {
    humantime::parse_rfc3339(t)
        .map(httpdate::fmt_http_date)
        .unwrap_or_else(|_| "Thu, 01 Jan 1970 00:00:00 GMT".into())
}

async fn atom(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = parse_query(query)?;
    let page = blocking(move || load(&state, &q, "/feed.xml")).await?;
    let x = xml_text;
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n",
    );
    out.push_str(&format!(
        "<id>{}</id>\n<title>{}</title>\n<updated>{}</updated>\n\
         <author><name>toolmark</name><uri>{}/</uri></author>\n<generator>toolmark</generator>\n\
         <link rel=\"self\" type=\"application/atom+xml\" href=\"{}\"/>\n\
         <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n",
        x(&page.feed_url),
        x(&page.title),
        x(&page.updated),
        x(&page.base),
        x(&page.self_url),
        x(&page.home),
    ));
    if let Some(next) = &page.next_url {
        out.push_str(&format!(
            "<link rel=\"next\" type=\"application/atom+xml\" href=\"{}\"/>\n",
            x(next)
        ));
    }
    for c in &page.items {
        let link = c.link(&page.base);
        out.push_str(&format!(
            "<entry>\n<id>{}</id>\n<title type=\"text\">{}</title>\n<updated>{}</updated>\n\
             <published>{}</published>\n\
             <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n\
             <link rel=\"related\" type=\"text/html\" href=\"{}/s/{}\"/>\n\
             <category term=\"{}\"/>\n<summary type=\"text\">{}</summary>\n\
             <content type=\"html\">{}</content>\n</entry>\n",
            x(&c.id(&page.base)),
            x(&c.title()),
            x(c.date()),
            x(c.date()),
            x(&link),
            x(&page.base),
            x(c.target_id()),
            x(c.category()),
            x(&c.text()),
            x(&c.html(&page.base)),
        ));
    }
    out.push_str("</feed>\n");
    Ok(respond(out, ATOM_TYPE))
}

async fn rss(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = parse_query(query)?;
    let page = blocking(move || load(&state, &q, "/feed.rss")).await?;
    let x = xml_text;
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n",
    );
    out.push_str(&format!(
        "<title>{}</title>\n<link>{}</link>\n\
         <description>Changes of MCP tool definitions observed by toolmark</description>\n\
         <lastBuildDate>{}</lastBuildDate>\n<generator>toolmark</generator>\n\
         <atom:link rel=\"self\" type=\"application/rss+xml\" href=\"{}\"/>\n",
        x(&page.title),
        x(&page.home),
        x(&rfc822(&page.updated)),
        x(&page.self_url),
    ));
    if let Some(next) = &page.next_url {
        out.push_str(&format!(
            "<atom:link rel=\"next\" type=\"application/rss+xml\" href=\"{}\"/>\n",
            x(next)
        ));
    }
    for c in &page.items {
        let link = c.link(&page.base);
        out.push_str(&format!(
            "<item>\n<title>{}</title>\n<link>{}</link>\n<guid isPermaLink=\"true\">{}</guid>\n\
             <pubDate>{}</pubDate>\n<category>{}</category>\n<description>{}</description>\n\
             </item>\n",
            x(&c.title()),
            x(&link),
            x(&c.id(&page.base)),
            x(&rfc822(c.date())),
            x(c.category()),
            x(&c.html(&page.base)),
        ));
    }
    out.push_str("</channel>\n</rss>\n");
    Ok(respond(out, RSS_TYPE))
}

async fn json_feed(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = parse_query(query)?;
    let page = blocking(move || load(&state, &q, "/feed.json")).await?;
    let items: Vec<Value> = page
        .items
        .iter()
        .map(|c| {
            let title = c.title();
            Ok(json!({
                "id": c.id(&page.base),
                "url": c.link(&page.base),
                "summary": format!("{title} at {}", c.endpoint()),
                "title": title,
                "content_text": c.text(),
                "content_html": c.html(&page.base),
                "date_published": c.date(),
                "date_modified": c.date(),
                "tags": [c.category()],
                "_toolmark": c.json(&page.base)?,
            }))
        })
        .collect::<Result<_, ApiError>>()?;
    json_feed_response(
        JsonFeedHead {
            title: &page.title,
            home: &page.home,
            feed_url: &page.feed_url,
            description: "Changes of MCP tool definitions observed by toolmark",
            base: &page.base,
            updated: &page.updated,
            self_url: &page.self_url,
            next_url: page.next_url.as_deref(),
        },
        items,
    )
}

/// What a JSON Feed 1.1 document says of itself (the change feeds' and the security feeds').
pub(crate) struct JsonFeedHead<'a> {
    pub(crate) title: &'a str,
    pub(crate) home: &'a str,
    pub(crate) feed_url: &'a str,
    pub(crate) description: &'a str,
    pub(crate) base: &'a str,
    pub(crate) updated: &'a str,
    pub(crate) self_url: &'a str,
    pub(crate) next_url: Option<&'a str>,
}

/// A JSON Feed 1.1 document of `items` under `head`, as a response.
pub(crate) fn json_feed_response(
    head: JsonFeedHead<'_>,
    items: Vec<Value>,
) -> Result<Response, ApiError> {
    let mut feed = json!({
        "version": "https://jsonfeed.org/version/1.1",
        "title": head.title,
        "home_page_url": head.home,
        "feed_url": head.feed_url,
        "description": head.description,
        "authors": [{"name": "toolmark", "url": format!("{}/", head.base)}],
        "language": "en",
        "_toolmark": {"updated": head.updated, "page": head.self_url},
        "items": items,
    });
    if let (Some(next), Value::Object(m)) = (head.next_url, &mut feed) {
        m.insert("next_url".into(), json!(next));
    }
    let text = serde_json::to_string(&feed).map_err(ApiError::internal)?;
    Ok(respond(text, JSON_FEED_TYPE))
}

#[cfg(test)]
mod tests {
    use super::xml_text;

    #[test]
    fn xml_text_escapes_and_drops_what_xml_forbids() {
        assert_eq!(
            xml_text("a<b>&\"c\"'d']]>"),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;]]&gt;"
        );
        assert_eq!(
            xml_text("\u{0}\u{1}x\u{8}\u{b}\u{c}\u{1f}y\u{fffe}\u{ffff}z"),
            "xyz"
        );
        // Allowed: tab, line feed, carriage return, DEL and C1 (allowed, if discouraged),
        // astral characters, U+FFFD.
        let kept = "\t\n\r\u{7f}\u{85}\u{1f600}\u{fffd}é";
        assert_eq!(xml_text(kept), kept);
    }
}
