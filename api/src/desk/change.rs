//! `GET /changes/{id}`: one change — its class, every signal, the diff, digests and entries,
//! all from its [`ChangeView`]; for a change of the server's instructions their word diff and
//! signals, for a target newly flagged by the rule set its matches; for a change of a kind of
//! the surface (prompts, resources, templates, app pages, the card) its signals and its diff as
//! `toolmark_toolset::surface::diff::render` writes it; for a card that disagrees with the
//! served tools the comparison; a tool-set diff's renames as renames.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::{Markup, html};
use toolmark_toolset::classify::{Class, Classification, Signal};
use toolmark_toolset::diff::{DescriptionDiff, Diff, MemberChange, SchemaDiff, ToolDiff};
use toolmark_toolset::surface::diff::KindSignal;
use toolmark_toolset::text::{EditOp, WordEdit};

use super::layout::{
    Nav, Page, class_badge, counts, digest, entry_link, fact, head, listing, render, time,
};
use super::{Fail, Html, blocking, data, internal, not_found};
use crate::AppState;
use crate::changes::{ChangeView, kind_rule_meaning, rule_meaning};

pub(super) async fn page(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Html {
    let Some(n_id) = id
        .parse::<i64>()
        .ok()
        .filter(|n| *n > 0 && !id.starts_with(['0', '+']))
    else {
        return Err(not_found(
            "No such change: a change id is a positive integer.",
        ));
    };
    let row = blocking(move || data::change(&state, n_id)).await?;
    let Some(row) = row else {
        return Err(not_found(&format!("No change {n_id} is known.")));
    };
    let c = ChangeView::parse(row)?;
    let r = &c.row;
    let cls = c.class.as_str();
    let diff = match &c.analysis {
        None => html! { p { "No diff was stored (one of the two documents is not stored)." } },
        Some(a) => diff_section(&a.diff, &c.tool_classes())?,
    };
    let servers = |s: &[String]| {
        html! {
            @if s.is_empty() { "none" }
            @for (i, a) in s.iter().enumerate() { @if i > 0 { ", " } code { (a) } }
        }
    };
    let entries = fact(
        "Entries",
        html! { (entry_link(r.old_entry)) " → " (entry_link(r.new_entry)) " (inclusion proofs)" },
    );
    let list = |items: &[String]| {
        html! {
            @if items.is_empty() { "none" }
            @for (i, a) in items.iter().enumerate() { @if i > 0 { ", " } code { (a) } }
        }
    };
    let what = match (&c.authorization, &c.behaviour) {
        (None, None) if c.surface.is_some() => {
            let sc = c.surface.as_ref().expect("checked");
            html! {
                dl class="facts" {
                    (fact("What changed", html! { (c.headline()) }))
                    (fact("Kind", html! { code { (sc.kind.as_str()) } }))
                    (fact("Entries", html! { span id="surface-counts" {
                        (r.added) " added, " (r.removed) " removed, " (r.modified) " changed"
                    } }))
                    (entries)
                    (fact("Digest of the kind", html! { (digest(Some(&r.old_full))) " → " (digest(Some(&r.new_full))) }))
                }
                section aria-labelledby="signals-h" {
                    h2 id="signals-h" { "Signals" }
                    @match &sc.analysis {
                        None => p {
                            "No classification was stored (one of the two documents is not stored); the change is recorded as "
                            strong { "unsure" } "."
                        },
                        Some((_, k)) => (kind_signal_list(&k.signals, k.signals_truncated)),
                    }
                }
                section aria-labelledby="diff-h" {
                    h2 id="diff-h" { "Diff" }
                    @match sc.render() {
                        None => p { "No diff was stored (one of the two documents is not stored)." },
                        Some(text) => pre class="json" id="surface-diff" { (text) },
                    }
                }
                p {
                    "What a server lists beside its tools (prompts, resources, resource templates, the "
                    code { "ui://" } " pages of its MCP Apps, its Server Card) reaches a model or its user "
                    "too. Entries are matched by their key (a prompt's name, a resource's URI) and every "
                    "new or changed text is read by the same rules as a tool's description."
                }
            }
        }
        (None, None) if c.card_mismatch.is_some() => {
            let m = c.card_mismatch.as_ref().expect("checked");
            html! {
                dl class="facts" {
                    (fact("What changed", html! { (c.headline()) }))
                    @for (label, items, total) in m.lists() {
                        (fact(label, html! {
                            (total) @if !items.is_empty() { ": " (list(&items)) }
                            @if total > items.len() { " (" (total - items.len()) " more not listed)" }
                        }))
                    }
                    (fact("Entry", html! { (entry_link(r.new_entry)) " (inclusion proof)" }))
                    (fact("Card digest", html! { (digest(Some(&r.old_full))) }))
                    (fact("Full digest", html! { (digest(Some(&r.new_full))) }))
                }
                p {
                    "The Server Card this endpoint's origin publishes lists tools, and they are not the "
                    "ones the same observation's " code { "tools/list" } " served. A tool the card "
                    "defines otherwise than it is served makes the change " strong { "dangerous" }
                    " (what a client reads before connecting is not what the model is given); tools "
                    "only on the card, or served but missing from it, " strong { "unsure" } " (often a "
                    "stale card). It is recorded once when it starts, not again while it persists."
                }
            }
        }
        (None, None) if c.instructions.is_some() => {
            let i = c.instructions.as_ref().expect("checked");
            html! {
                dl class="facts" {
                    (fact("What changed", html! { (c.headline()) }))
                    (entries)
                }
                section aria-labelledby="signals-h" {
                    h2 id="signals-h" { "Signals" }
                    (signal_list(&i.signals, 0))
                }
                section aria-labelledby="diff-h" {
                    h2 id="diff-h" { "Word diff of the instructions" }
                    div id="instructions-diff" { (word_diff(&i.diff)) }
                }
                p {
                    "The " code { "instructions" } " a server sends in its " code { "initialize" }
                    " result go to the model with every tool. They are compared word by word with the "
                    "previous observation's and read by the same rules as a tool's description."
                }
            }
        }
        (None, None) if c.scan.is_some() => {
            let x = c.scan.as_ref().expect("checked");
            html! {
                dl class="facts" {
                    (fact("What changed", html! { (c.headline()) }))
                    (fact("Rule set", html! {
                        a href="/api/v1/rules" { code { (x.rules) } } " " code class="digest" { (x.rules_digest) }
                    }))
                    (fact("Matches", html! { span id="scan-counts" { (x.block) " block, " (x.advise) " advise" } }))
                    (fact("Classes", html! {
                        @for (i, cl) in x.classes.iter().enumerate() { @if i > 0 { ", " } code { (cl.as_str()) } }
                    }))
                    (entries)
                    (fact("Full digest", html! { (digest(Some(&r.new_full))) }))
                }
                section aria-labelledby="matches-h" {
                    h2 id="matches-h" { "Matches" }
                    (super::scan::matches_table("change-matches", &x.matches, None))
                    @if x.truncated > 0 {
                        p class="muted" { (x.truncated) " more matches not listed." }
                    }
                    p {
                        "The target's tool set and instructions had no rule-set match before this observation "
                        "and have now. The change stores where each match is (field and span); "
                        a href={ "/s/" (r.target_id) "#scan" } { "the server's page" }
                        " shows the current matches with their text."
                    }
                }
            }
        }
        (None, None) if c.registry.is_some() => {
            let g = c.registry.as_ref().expect("checked");
            html! {
                dl class="facts" {
                    (fact("Versions", html! { code { (g.old_version) } " → " code { (g.new_version) } }))
                    (fact("Flags", list(&g.flags)))
                    @for (label, items) in crate::feeds::registry_lists(g) {
                        @if !items.is_empty() { (fact(label, list(&items))) }
                    }
                    (entries)
                }
                p {
                    "What the package's registry says of the newer version differs from what it said "
                    "of the previous observed version. Lost provenance, another publisher or new "
                    "install-time scripts make the change " strong { "dangerous" } "; other flags "
                    "(new or re-specified dependencies, another repository, other maintainers, new "
                    code { "bin" } " entries) " strong { "unsure" } ". A field the registry (or a "
                    "mirror in front of it) does not serve is unknown and never raises a flag."
                }
            }
        }
        (None, Some(b)) => html! {
            dl class="facts" {
                (fact("Versions", html! { code { (b.old_version) } " → " code { (b.new_version) } }))
                (fact("New findings", list(&b.findings_added)))
                (fact("Findings gone", list(&b.findings_removed)))
                (fact("New acts", list(&b.acts_added)))
                (fact("Acts gone", list(&b.acts_removed)))
                (entries)
            }
            p {
                "The newer version, observed in the sandbox (gVisor) with decoy credentials and traps, "
                "did other things than the older one. A new high-severity finding (a secret read, a "
                "persistence write, a decoy sent out, a decoy in a tool's result) makes the change "
                strong { "dangerous" } "; other new findings or acts, or a side not completely seen, "
                strong { "unsure" } "; only things that went away, " strong { "benign" } "."
            }
        },
        (Some(a), _) => html! {
            dl class="facts" {
                (fact("Authorization servers", html! { (servers(&a.old)) " → " (servers(&a.new)) }))
                (entries)
            }
            p {
                "The protected-resource metadata (RFC 9728) this remote serves to anonymous clients "
                "names other authorization servers than it did: whoever runs them decides who gets a "
                "token for this server. A change of authorization servers is always recorded as "
                strong { "dangerous" } "."
            }
        },
        (None, None) => html! {
            @if r.kind == "cloaking" {
                p id="cloaking" {
                    "In one observation the tools were listed twice: by toolmark, and from a second "
                    "client identity in a separate session. The second listing was not the first: a "
                    "server that answers another client with other tools hides what it serves. "
                    "Cloaking is always " strong { "dangerous" } "; the digests below are the first "
                    "listing's and the second's, the diff goes from the first to the second."
                }
            }
            dl class="facts" {
                (fact("Tools", counts(&c)))
                (entries)
                (fact("Full digest", html! { (digest(Some(&r.old_full))) " → " (digest(Some(&r.new_full))) }))
                (fact("MTL/1 digest", html! { (digest(r.old_mtl1.as_deref())) " → " (digest(r.new_mtl1.as_deref())) }))
            }
            section aria-labelledby="signals-h" {
                h2 id="signals-h" { "Classification" }
                @match &c.analysis {
                    None => p {
                        "No classification was stored (one of the two documents is not stored); the change is recorded as "
                        strong { "unsure" } "."
                    },
                    Some(a) => (signals(&a.classification)),
                }
            }
            section aria-labelledby="diff-h" {
                h2 id="diff-h" { "Diff" }
                (diff)
            }
        },
    };
    let body = html! {
        h1 {
            "Change " (r.id) " "
            span class={ "class-banner class-" (cls) } id="change-class" data-class=(cls) { (cls) }
        }
        p class="lead" {
            a href={ "/s/" (r.target_id) } { (r.server) } " "
            span class="endpoint" { (r.endpoint) } ", observed " (time(Some(&r.observed_at))) "."
        }
        (what)
    };
    Ok(render(
        StatusCode::OK,
        Page {
            title: format!("Change {} ({cls})", r.id),
            nav: Nav::Changes,
            scripts: &[],
            body,
        },
    ))
}

/// A surface change's signals with their rules' meanings, and how many more were not listed.
fn kind_signal_list(signals: &[KindSignal], truncated: usize) -> Markup {
    let rows = signals.iter().map(|sig| SignalRow {
        class: sig.class,
        rule: sig.rule,
        meaning: kind_rule_meaning(sig.rule),
        at: &sig.item,
        path: &sig.path,
        old: &sig.old,
        new: &sig.new,
        detail: &sig.detail,
    });
    signal_table("Entry", rows, truncated)
}

/// Every signal the classification lists, with its rule's meaning.
fn signals(cl: &Classification) -> Markup {
    signal_list(&cl.signals, cl.signals_truncated)
}

/// Signals with their rules' meanings, and how many more were not listed.
fn signal_list(signals: &[Signal], truncated: usize) -> Markup {
    let rows = signals.iter().map(|sig| SignalRow {
        class: sig.class,
        rule: sig.rule,
        meaning: rule_meaning(sig.rule),
        at: &sig.tool,
        path: &sig.path,
        old: &sig.old,
        new: &sig.new,
        detail: &sig.detail,
    });
    signal_table("Tool", rows, truncated)
}

/// One row of a signal table: a tool-set signal (`at` its tool) or a surface kind's (`at` its
/// entry).
struct SignalRow<'a> {
    class: Class,
    rule: &'static str,
    meaning: &'static str,
    at: &'a Option<String>,
    path: &'a Option<String>,
    old: &'a Option<String>,
    new: &'a Option<String>,
    detail: &'a Option<String>,
}

/// The signal table ("every rule that fired", `at` the heading of the column naming where),
/// and how many more were not listed.
fn signal_table<'a>(
    at: &str,
    rows: impl ExactSizeIterator<Item = SignalRow<'a>>,
    truncated: usize,
) -> Markup {
    let code = |v: &Option<String>| html! { @if let Some(v) = v { code { (v) } } };
    html! {
        @if rows.len() == 0 {
            p { "No rule fired." }
        } @else {
            (listing("signals", "Signals: every rule that fired", &["Class", "Rule", at, "Where", "Old", "New", "Detail"], &[], html! {
                @for sig in rows {
                    tr class={ "signal-" (sig.class.as_str()) } {
                        td { (class_badge(sig.class)) }
                        th scope="row" {
                            code { (sig.rule) } br;
                            span class="muted" { (sig.meaning) }
                        }
                        td { (code(sig.at)) }
                        td { (code(sig.path)) }
                        td { (code(sig.old)) }
                        td { (code(sig.new)) }
                        td { (sig.detail.as_deref().unwrap_or("")) }
                    }
                }
            }))
            @if truncated > 0 {
                p class="muted" { (truncated) " more signals not listed." }
            }
        }
    }
}

/// The diff: counts, added and removed names, each modified tool, new addresses, unmatched
/// entries.
fn diff_section(d: &Diff, classes: &HashMap<&str, Class>) -> Result<Markup, Fail> {
    let mut addresses = Vec::with_capacity(d.new_addresses.len());
    for a in &d.new_addresses {
        addresses.push((wire_name(a.kind)?, a.value.as_str()));
    }
    Ok(html! {
        p {
            (d.added_total) " added, " (d.removed_total) " removed, "
            (d.modified_total) " modified, " (d.unchanged) " unchanged."
        }
        (name_list("Added tools", &d.added, d.added_total))
        (name_list("Removed tools", &d.removed, d.removed_total))
        @if !d.renames.is_empty() {
            h3 { "Renamed tools (" (d.renames_total) ")" }
            ul class="names" id="renames" {
                @for x in &d.renames {
                    li {
                        code { (x.from) } " → " code { (x.to) }
                        @if x.identical { " " span class="muted" { "(otherwise identical)" } }
                    }
                }
            }
            @if d.renames_total > d.renames.len() {
                p class="muted" { (d.renames_total - d.renames.len()) " more not listed." }
            }
            @for x in &d.renames {
                @if let Some(t) = &x.changes { (tool_diff(t, classes.get(x.to.as_str()).copied())) }
            }
        }
        @if !d.modified.is_empty() {
            h3 { "Modified tools (" (d.modified_total) ")" }
            @for t in &d.modified { (tool_diff(t, classes.get(t.name.as_str()).copied())) }
        }
        @if !addresses.is_empty() {
            h3 { "New outside addresses (" (d.new_addresses_total) ")" }
            ul class="names" {
                @for (kind, value) in &addresses {
                    li { span class="muted" { (kind) } " " code { (value) } }
                }
            }
        }
        @if d.unmatched_old > 0 || d.unmatched_new > 0 {
            p {
                "Entries without a unique name: " (d.unmatched_old) " before, " (d.unmatched_new) " after"
                @if d.unmatched_changed { " (they differ)" }
                "."
            }
        }
        @if d.truncated {
            p class="muted" { "Some lists in this diff were cut at their caps." }
        }
    })
}

/// The name a value has in the stored JSON (an address kind's `url`, `host`…).
fn wire_name(v: impl serde::Serialize) -> Result<String, Fail> {
    match serde_json::to_value(v).map_err(internal)? {
        serde_json::Value::String(s) => Ok(s),
        other => Err(internal(format!("{other} is not a name"))),
    }
}

/// A list of tool names with its exact total.
fn name_list(heading: &str, names: &[String], total: usize) -> Markup {
    html! {
        @if !names.is_empty() {
            h3 { (heading) " (" (total) ")" }
            ul class="names" {
                @for name in names { li { code { (name) } } }
            }
            @if total > names.len() {
                p class="muted" { (total - names.len()) " more not listed." }
            }
        }
    }
}

/// A JSON text value (compact canonical JSON from the diff) shown readably: objects and
/// arrays pretty-printed, anything else as written.
fn json_value(v: Option<&str>) -> Markup {
    let pretty = v
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        .filter(|p| p.is_object() || p.is_array())
        .and_then(|p| serde_json::to_string_pretty(&p).ok());
    html! {
        @match (v, pretty) {
            (None, _) => span class="muted" { "(absent)" },
            (Some(_), Some(p)) => pre class="json" { (p) },
            (Some(text), None) => code { (text) },
        }
    }
}

/// A word diff, with hidden text saying what was removed and added.
fn word_diff(ops: &[WordEdit]) -> Markup {
    html! {
        p class="words" {
            @for WordEdit(op, text) in ops {
                @match op {
                    EditOp::Delete => del {
                        span class="visually-hidden" { "[removed: " } (text) span class="visually-hidden" { "]" }
                    },
                    EditOp::Insert => ins {
                        span class="visually-hidden" { "[added: " } (text) span class="visually-hidden" { "]" }
                    },
                    EditOp::Equal => (text),
                }
            }
        }
    }
}

/// Changed members (annotation members, or other top-level members of a tool).
fn member_changes(caption: &str, members: &[MemberChange]) -> Markup {
    html! {
        @if !members.is_empty() {
            table class="list" {
                caption { (caption) }
                (head(&["Member", "Old", "New"], &[]))
                tbody {
                    @for m in members {
                        tr {
                            th scope="row" { code { (m.member) } }
                            td { (json_value(m.old.as_deref())) }
                            td { (json_value(m.new.as_deref())) }
                        }
                    }
                }
            }
        }
    }
}

/// A schema's leaf changes.
fn schema_changes(caption: &str, schema: &SchemaDiff) -> Markup {
    html! {
        table class="list" {
            caption { (caption) }
            (head(&["Path", "Old", "New"], &[]))
            tbody {
                @for c in &schema.changes {
                    tr {
                        th scope="row" { code class="path" { (c.path) } }
                        td { (json_value(c.old.as_deref())) }
                        td { (json_value(c.new.as_deref())) }
                    }
                }
            }
        }
        @if schema.truncated > 0 {
            p class="muted" { (schema.truncated) " more path changes not listed." }
        }
    }
}

/// One modified tool: its class, description, schemas, hints, other members.
pub(super) fn tool_diff(t: &ToolDiff, class: Option<Class>) -> Markup {
    html! {
        article class="tool-diff" {
            h4 { code { (t.name) } @if let Some(c) = class { " " (class_badge(c)) } }
            @match &t.description {
                Some(DescriptionDiff::Words { ops }) => {
                    h5 { "Description" }
                    (word_diff(ops))
                }
                Some(DescriptionDiff::Snippets { old, new, old_chars, new_chars }) => {
                    h5 { "Description" }
                    p { "Too long for a word diff (" (old_chars) " → " (new_chars) " characters); the beginnings:" }
                    div class="sides" {
                        div { h6 { "Old" } p class="description" { (old) } }
                        div { h6 { "New" } p class="description" { (new) } }
                    }
                }
                None => {}
            }
            @if let Some(s) = &t.input_schema { (schema_changes("inputSchema changes", s)) }
            @if let Some(s) = &t.output_schema { (schema_changes("outputSchema changes", s)) }
            @if let Some(a) = &t.annotations {
                table class="list" {
                    caption { "Hints (effective values)" }
                    (head(&["Hint", "Old", "New"], &[]))
                    tbody {
                        @for h in &a.hints {
                            @let changed = h.old != h.new;
                            tr class=[changed.then_some("changed")] {
                                th scope="row" { code { (h.hint) } @if changed { " " strong { "changed" } } }
                                td { (h.old) @if !h.old_explicit { " " span class="muted" { "(default)" } } }
                                td { (h.new) @if !h.new_explicit { " " span class="muted" { "(default)" } } }
                            }
                        }
                    }
                }
                (member_changes("Other annotation changes", &a.members))
            }
            (member_changes("Other member changes", &t.members))
        }
    }
}
