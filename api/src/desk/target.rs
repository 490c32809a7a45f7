//! `GET /s/{id}`: one target — summary, current tools, the rule-set scan and data-flow legs
//! ([`super::scan`]), changes, what clients reported being served (when any report passed the
//! minimum), timeline of observations.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{Markup, html};
use toolmark_index::contributions::MINIMUM_REPORTS;
use toolmark_index::index::{ObservationRow, TargetRow};

use super::layout::{
    Nav, Page, class_badge, count, counts, digest, entry_link, entry_or_dash, fact, listing,
    render, status_badge, time,
};
use super::{Html, TIMELINE_ROWS, blocking, data, int_param, not_found};
use crate::AppState;
use crate::changes::ChangeView;
use crate::documents::{CurrentTools, document_path};
use crate::logroutes::valid_id;

pub(super) async fn page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Html {
    if !valid_id(&id) {
        return Err(not_found(
            "No such target: a target id is 16 lowercase hex digits.",
        ));
    }
    let before = match params.get("before").map(String::as_str) {
        None | Some("") => None,
        Some(_) => Some(int_param(&params, "before", 0, 1, u64::MAX >> 1)?),
    };
    let id2 = id.clone();
    let st = state.clone();
    let data = blocking(move || data::load_target(&st, &id2, before)).await?;
    let Some(d) = data else {
        return Err(not_found(&format!("No target {id} is known.")));
    };
    let changes = d
        .changes
        .into_iter()
        .map(ChangeView::parse)
        .collect::<Result<Vec<_>, _>>()?;
    let t = &d.target;
    // The current tools, read and verified once per document (`documents::ToolSetCache`).
    let tools = state.tool_sets.current(&state, t).await.map_err(|e| {
        eprintln!("toolmark desk: current tools of {}: {e}", t.id);
        e.to_string()
    });
    let body = html! {
        h1 { span class="visually-hidden" { "Target: " } (t.server) }
        p class="endpoint lead" { (t.target) }
        @if let Some(s) = &d.server {
            @if let Some(title) = &s.title { p { strong { (title) } } }
            @if let Some(desc) = &s.description { p class="description" { (desc) } }
        }
        (summary(t, d.server.as_ref(), d.scan.as_ref()))
        @if !d.packages.is_empty() {
            (package_versions(&d.packages))
        }
        section aria-labelledby="tools-h" {
            h2 id="tools-h" { "Current tools" }
            @match &tools {
                Ok(None) => p { "No tool set has been read from this target." },
                Err(e) => p class="error" { "The stored tool set could not be read: " (e) },
                Ok(Some(c)) => (current_tools(t, c)),
            }
        }
        (surface_section(d.surface.as_ref()))
        (super::scan::section(d.scan.as_ref(), tools.as_ref().ok().and_then(|c| c.as_deref())))
        section aria-labelledby="changes-h" {
            h2 id="changes-h" { "Changes" }
            @if changes.is_empty() {
                p { "No change of the tool set has been recorded." }
            } @else {
                (listing("target-changes", "Changes of this target", &["Change", "Observed", "Class", "Tools", "Entries"], &[], html! {
                    @for c in &changes {
                        tr {
                            th scope="row" { a href={ "/changes/" (c.row.id) } { "Change " (c.row.id) } }
                            td { (time(Some(&c.row.observed_at))) }
                            td { (class_badge(c.class)) }
                            td { (counts(c)) }
                            td { (entry_link(c.row.old_entry)) " → " (entry_link(c.row.new_entry)) }
                        }
                    }
                }))
            }
        }
        @if !d.client_reports.is_empty() {
            (client_reports(&d.client_reports))
        }
        (badge_section(&state.base_url, &t.id))
        (timeline(t, &d.observations, before.is_some()))
    };
    Ok(render(
        StatusCode::OK,
        Page {
            title: t.server.clone(),
            nav: Nav::Servers,
            scripts: &[],
            body,
        },
    ))
}

/// A package's versions as the sandbox observed them: status, completeness and findings per
/// version, then the newest version's behaviour per phase.
fn package_versions(seen: &[toolmark_index::packages::PackageObservation]) -> Markup {
    let phase = |name: &str, p: &toolmark_index::packages::PhaseBehaviour| {
        let list = |items: &[String]| {
            html! {
                @if items.is_empty() { "—" }
                @for (i, a) in items.iter().enumerate() { @if i > 0 { ", " } code { (a) } }
            }
        };
        html! {
            tr {
                th scope="row" { (name) }
                td { @if p.complete { "complete" } @else { strong { "incomplete" } " (" (p.incomplete.join(", ")) ")" } }
                td { (list(&p.exec)) }
                td { (list(&p.network)) }
                td { (list(&p.lookups)) }
                td { (list(&p.decoys)) }
                td { (list(&p.writes)) }
            }
        }
    };
    let newest = seen.last();
    html! {
        section aria-labelledby="versions-h" {
            h2 id="versions-h" { "Package versions (observed in gVisor)" }
            (listing("package-versions", "Versions observed", &["Version", "Observed", "Status", "Seen", "Findings", "Registry flags", "Entry"], &[], html! {
                @for o in seen.iter().rev() {
                    tr {
                        th scope="row" { code { (o.version) } }
                        td { (time(Some(&o.observed_at))) }
                        td { (status_badge(Some(&o.status), false)) }
                        td { @if o.complete { "completely" } @else { strong { "not completely" } } }
                        td {
                            @if o.behaviour.findings.is_empty() {
                                @if o.complete { "none" } @else { "none seen (incomplete: not a clean bill)" }
                            }
                            @for (i, f) in o.behaviour.findings.iter().enumerate() {
                                @if i > 0 { ", " }
                                span class={ "finding severity-" (f.severity) } title=(f.evidence.join(", ")) {
                                    (f.code) " (" (f.phase) ")"
                                }
                            }
                        }
                        td { (registry_flags(o)) }
                        td { (entry_link(o.entry)) }
                    }
                }
            }))
            @if let Some(o) = newest {
                h3 { "Behaviour of " code { (o.version) } }
                (listing("package-behaviour", "Behaviour per phase", &["Phase", "Seen", "Programs", "Connections", "Lookups", "Decoys read", "Writes"], &[], html! {
                    (phase("install", &o.behaviour.install_scripts))
                    (phase("startup", &o.behaviour.startup))
                    (phase("calls", &o.behaviour.calls))
                }))
            }
            @if let Some((o, facts)) = seen.iter().rev().find_map(|o| Some((o, o.registry.as_ref()?))) {
                (registry_signals(o, facts))
            }
        }
    }
}

/// A version's registry flags against the previous observed version (`—` when its registry
/// metadata was not read).
fn registry_flags(o: &toolmark_index::packages::PackageObservation) -> Markup {
    match (&o.registry, &o.registry_comparison) {
        (Some(_), Some(c)) if c.flags.is_empty() => html! { "none" },
        (Some(_), Some(c)) => html! {
            @for (i, f) in c.flags.iter().enumerate() {
                @if i > 0 { ", " }
                @if toolmark_observation::registry_facts::DANGEROUS_FLAGS.contains(&f.as_str()) {
                    strong { (f) }
                } @else { (f) }
            }
        },
        _ => html! { "—" },
    }
}

/// What the registry says of one version (the newest observed with registry metadata), each
/// field known or "unknown" (not served by the registry or the mirror in front of it).
fn registry_signals(
    o: &toolmark_index::packages::PackageObservation,
    f: &toolmark_index::packages::RegistryFacts,
) -> Markup {
    let unknown = || html! { em { "unknown (not served)" } };
    let names = |items: &[String]| {
        html! {
            @if items.is_empty() { "none" }
            @for (i, a) in items.iter().enumerate() { @if i > 0 { ", " } code { (a) } }
        }
    };
    let map = |m: &Option<std::collections::BTreeMap<String, String>>| match m {
        None => unknown(),
        Some(m) => html! {
            @if m.is_empty() { "none" }
            @for (i, (k, v)) in m.iter().enumerate() { @if i > 0 { ", " } code { (k) } " " (v) }
        },
    };
    let comparison = o.registry_comparison.clone().unwrap_or_default();
    html! {
        h3 { "Registry signals of " code { (o.version) } }
        dl class="facts" {
            (fact("Provenance", match &f.provenance {
                None => unknown(),
                Some(p) if p.present => html! { "present" @if let Some(k) = &p.kind { " (" code { (k) } ")" } " — presence, not verification" },
                Some(_) => html! { strong { "none" } },
            }))
            (fact("Publisher", match &f.publisher {
                None => unknown(),
                Some(None) => html! { "none named" },
                Some(Some(p)) => html! { (p.label()) },
            }))
            @if let Some(prev) = &comparison.previous_publisher {
                (fact("Previous publisher", html! { (prev) }))
            }
            (fact("Install scripts", map(&f.install_scripts)))
            (fact("Dependencies", map(&f.dependencies)))
            (fact("Maintainers", match &f.maintainers { None => unknown(), Some(m) => names(m) }))
            (fact("Repository", match &f.repository {
                None => unknown(),
                Some(None) => html! { "none" },
                Some(Some(r)) => html! { code { (r) } },
            }))
            (fact("Bin entries", map(&f.bins)))
            @if let Some(Some(d)) = &f.deprecated { (fact("Deprecated", html! { (d) })) }
            @if let Some(y) = f.yanked { (fact("Yanked", html! { @if y { strong { "yes" } } @else { "no" } })) }
            (fact("Flags", names(&comparison.flags)))
            @if !comparison.new_dependencies.is_empty() {
                (fact("New dependencies", names(&comparison.new_dependencies)))
            }
            @if !comparison.dependency_specs_changed.is_empty() {
                (fact("Dependency specs changed", names(&comparison.dependency_specs_changed)))
            }
        }
    }
}

/// The summary section: what the index and the registry say about the target.
fn summary(
    t: &TargetRow,
    server: Option<&toolmark_index::index::ServerRow>,
    scan: Option<&toolmark_index::TargetScan>,
) -> Markup {
    html! {
        section aria-labelledby="summary-h" {
            h2 id="summary-h" { "Summary" }
            dl class="facts" {
                (fact("Target id", html! { code { (t.id) } }))
                (fact("Kind", html! { (t.kind) }))
                @if let Some(tr) = &t.declared_transport { (fact("Declared transport", html! { (tr) })) }
                @if let Some(v) = &t.package_version { (fact("Package version", html! { (v) })) }
                (fact("Last status", status_badge(t.last_status.as_deref(), t.skip_reason.is_some())))
                @if let Some(detail) = t.last_detail.as_deref().filter(|d| !d.is_empty()) {
                    (fact("Last detail", html! { (detail) }))
                }
                @if !t.withheld_headers.is_empty() {
                    (fact("Dialled without", html! {
                        "the declared header(s) "
                        @for (i, h) in t.withheld_headers.iter().enumerate() {
                            @if i > 0 { ", " }
                            code { (h) }
                        }
                        " (secrets and values only a user can supply are never sent): a client that sends them may be served more or other tools"
                    }))
                }
                @if let Some(reason) = &t.skip_reason {
                    (fact("Not dialled", html! {
                        (reason)
                        @if let Some(d) = &t.skip_detail { " (" (d) ")" }
                    }))
                }
                (fact("Last observed", time(t.last_observed_at.as_deref())))
                (fact("Tools", count(t.current_tools)))
                (fact("Rule-set scan", super::scan::summary(scan)))
                (fact("Current full digest", digest(t.current_full.as_deref())))
                (fact("Current MTL/1 digest", digest(t.current_mtl1.as_deref())))
                (fact("First listed", time(t.first_listed.as_deref())))
                @if let Some(at) = &t.delisted_at { (fact("Delisted", time(Some(at)))) }
                @if let Some(s) = server {
                    (fact("Registry", html! { "version " (s.version) " · " (s.status) }))
                    @if let Some(u) = &s.repository_url { (fact("Repository", html! { (u) })) }
                }
            }
            @if t.last_entry.is_some() {
                p {
                    a href={ "/log?target=" (t.id) } { "Verify its latest log entry in your browser" }
                    " · "
                    a href={ "/api/v1/lookup/" (t.id) } { "proof bundle (text)" }
                }
            }
        }
    }
}

/// The tool sets clients reported this week that toolmark never observed here (opt-in `/check`
/// reports, at least [`MINIMUM_REPORTS`] clients a day; `crate::contribute`).
fn client_reports(reports: &[toolmark_index::ClientReport]) -> Markup {
    let n = reports.len();
    html! {
        section aria-labelledby="client-reports-h" id="client-reports" {
            h2 id="client-reports-h" { "What clients were served" }
            p {
                "Clients were served " strong { (n) } " other tool set" @if n != 1 { "s" }
                " this week: digests toolmark never observed at this target, each reported by at least "
                (MINIMUM_REPORTS) " clients on a day (opt-in reports from " code { "/check" } ")."
            }
            ul {
                @for r in reports {
                    li {
                        (r.kind.as_str()) " " code { (r.digest) } ": " (r.reports) " reports, "
                        (r.first_day.date())
                        @if r.last_day != r.first_day { " to " (r.last_day.date()) }
                    }
                }
            }
        }
    }
}

/// The current tool set: the tools that fit inline, the count of the rest, the document.
fn current_tools(t: &TargetRow, c: &CurrentTools) -> Markup {
    let href = document_path(&c.document);
    html! {
        @if c.count == 0 {
            p { "The tool set is empty." }
        } @else {
            p { (c.count) " tools, from the observation recorded in entry " (entry_or_dash(t.last_ok_entry)) "." }
        }
        @if !c.inline.is_empty() {
            dl class="tools" id="tools" {
                @for tool in &c.inline {
                    div {
                        dt {
                            @match tool.name.as_deref() {
                                Some(name) => a href=(crate::tools::history_path("/s", &t.id, name)) title="this tool's history" { code { (name) } },
                                None => code { "(no name)" },
                            }
                            @if let Some(title) = &tool.title { " " span class="muted" { "— " (title) } }
                        }
                        dd {
                            @match &tool.description {
                                Some(s) => span class="description" { (s) },
                                None => span class="muted" { "(no description)" },
                            }
                        }
                    }
                }
            }
        }
        @if c.omitted() > 0 {
            p id="tools-omitted" {
                (c.omitted()) " more tools (" (c.tool_bytes) " bytes of tool definitions in all) are not shown here: "
                a href=(href) { "the whole observation document" } "."
            }
        }
        p {
            a href=(href) id="document-link" { "Observation document" }
            " (" (c.document_bytes) " bytes, " code class="digest" { (c.document.to_string()) }
            "): every byte the server sent, whose SHA-256 is the log entry's " code { "raw" } "."
        }
    }
}

/// The surface beyond `tools/list` now: each kind's entries and digest, or why it was not read,
/// from the entry that read it (a remote's is read one crawl in `crawl.surface_days`).
fn surface_section(surface: Option<&(u64, toolmark_index::queries::EntrySurfaceRow)>) -> Markup {
    html! {
        section aria-labelledby="surface-h" {
            h2 id="surface-h" { "Prompts, resources, app pages and card" }
            @match surface {
                Some((entry, row)) if !row.kinds.is_empty() => {
                    p { "As read by the observation recorded in entry " (entry_link(*entry)) "." }
                    @if let (Some(scope), _) = &row.tools_cache {
                        p id="tools-cache" { "Its latest " code { "tools/list" } " said " code { "cacheScope: " (scope) } @if scope == "private" { strong { " — the server may list other tools to other callers" } } "." }
                    }
                    (listing("surface", "The surface beyond the tools", &["Kind", "Entries", "Digest", "Cache scope"], &[], html! {
                        @for k in &row.kinds {
                            tr {
                                th scope="row" { (k.kind) }
                                td { @match k.count { Some(n) => (n), None => "—" } }
                                td {
                                    @match (&k.digest, &k.status) {
                                        (Some(d), _) => (digest(Some(d))),
                                        (None, Some(s)) => span class="muted" { "not read: " (s) },
                                        (None, None) => "—",
                                    }
                                }
                                td {
                                    @match k.cache_scope.as_deref() {
                                        Some("private") => strong { "private" },
                                        Some(scope) => (scope),
                                        None => "—",
                                    }
                                }
                            }
                        }
                    }))
                }
                Some(_) => p { "No prompts, resources, app pages or card have been read from this target." },
                None => p { "No successful observation of this target yet." },
            }
        }
    }
}

/// The timeline section: a page of observations, newest first, with its paging links.
fn timeline(t: &TargetRow, observations: &[ObservationRow], paged: bool) -> Markup {
    html! {
        section aria-labelledby="timeline-h" {
            h2 id="timeline-h" { "Timeline of observations" }
            @if observations.is_empty() {
                p { "No observation has been logged." }
            } @else {
                (listing("timeline", "Observations, newest first", &["Entry", "Observed", "Status", "Detail", "Tools", "Digests"], &["Tools"], html! {
                    @for o in observations {
                        tr {
                            th scope="row" { (entry_link(o.entry)) }
                            td { (time(Some(&o.observed_at))) }
                            td { (status_badge(Some(o.status.as_str()), t.skip_reason.as_deref() == Some(o.status.as_str()))) }
                            td {
                                (o.detail.as_deref().unwrap_or(""))
                                @if let Some(tr) = &o.transport { " " span class="muted" { (tr) } }
                            }
                            td class="num" { (count(o.tools)) }
                            td {
                                @if let Some(f) = &o.full {
                                    span class="muted" { "full" } " " code class="digest" { (f) }
                                }
                                @if let Some(m) = &o.mtl1 {
                                    br; span class="muted" { "MTL/1" } " " code class="digest" { (m) }
                                } @else if let Some(e) = &o.mtl1_error {
                                    br; span class="muted" { "MTL/1 error" } " " (e)
                                }
                            }
                        }
                    }
                }))
                nav class="pager" aria-label="Timeline pages" {
                    @if paged {
                        a href={ "/s/" (t.id) } { "Newest observations" }
                    }
                    @if observations.len() == TIMELINE_ROWS as usize {
                        @if let Some(last) = observations.last() {
                            a rel="next" href={ "/s/" (t.id) "?before=" (last.entry) } { "Older observations →" }
                        }
                    }
                }
            }
        }
    }
}

/// The target's badge (`/badge/{id}.svg`, see [`crate::stats::badge`]) and the Markdown and
/// HTML that embed it with a link to this page.
fn badge_section(base: &str, id: &str) -> Markup {
    let svg = format!("{base}/badge/{id}.svg");
    let page = format!("{base}/s/{id}");
    html! {
        section aria-labelledby="badge-h" {
            h2 id="badge-h" { "Badge" }
            p { img id="target-badge" src={ "/badge/" (id) ".svg" } alt="This target's toolmark badge" height="20"; }
            p class="help" {
                "Says whether the tool set is pinned, unchanged or recently changed, or that the target is not observed or not listed; cached for an hour. As a shields.io endpoint: "
                code { (base) "/api/v1/badges/" (id) }
            }
            h3 { "Markdown" }
            pre { code id="badge-markdown" { "[![toolmark](" (svg) ")](" (page) ")" } }
            h3 { "HTML" }
            pre { code id="badge-html" { "<a href=\"" (page) "\"><img src=\"" (svg) "\" alt=\"toolmark badge\"></a>" } }
        }
    }
}
