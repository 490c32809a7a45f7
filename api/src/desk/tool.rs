//! `GET /s/{id}/tools/{name}`: one tool's history at a target ([`crate::tools::history`]):
//! every version, newest first, with when it was seen and what changed from the one before.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::{Markup, html};

use super::change::tool_diff;
use super::layout::{Nav, Page, digest, entry_link, render, time};
use super::{Html, internal, not_found};
use crate::AppState;
use crate::check::MAX_TOOL_SET_BYTES;
use crate::logroutes::valid_id;
use crate::tools::{History, MAX_HISTORY_TOOL_SETS, Reached, Version};

pub(super) async fn page(
    State(state): State<Arc<AppState>>,
    Path((id, name)): Path<(String, String)>,
) -> Html {
    if !valid_id(&id) {
        return Err(not_found(
            "No such target: a target id is 16 lowercase hex digits.",
        ));
    }
    let h = crate::tools::history_held(&state, id.clone(), name.clone())
        .await
        .map_err(internal)?;
    let Some(h) = h else {
        return Err(not_found(&format!(
            "Target {id} has no tool named {name} in the tool sets toolmark read."
        )));
    };
    Ok(render(
        StatusCode::OK,
        Page {
            title: format!("{} — {}", h.name, h.target.server),
            nav: Nav::Servers,
            scripts: &[],
            body: body(&h),
        },
    ))
}

fn body(h: &History) -> Markup {
    let t = &h.target;
    html! {
        h1 { "Tool " code { (h.name) } }
        p {
            "At " a href={ "/s/" (t.id) } { (t.server) } " (" code { (t.target) } "). "
            (h.versions.len()) " version" @if h.versions.len() != 1 { "s" }
            ", from " (h.sets_read) " distinct tool set" @if h.sets_read != 1 { "s" } " read."
            @if h.cut { " Only the newest tool sets were read (at most " (MAX_HISTORY_TOOL_SETS) " and " (MAX_TOOL_SET_BYTES / 1024 / 1024) " MiB of documents): older versions are not shown." }
        }
        @for v in &h.versions { (version(v)) }
    }
}

fn version(v: &Version) -> Markup {
    html! {
        section class="tool-version" {
            h2 {
                code { (v.name) }
                @if v.current { " " span class="badge good" { "current" } }
            }
            dl class="facts" {
                div { dt { "Digest" } dd { (digest(Some(&v.digest.to_string()))) } }
                div { dt { "First seen" } dd { (time(Some(&v.first_seen))) " in entry " (entry_link(v.first_entry)) } }
                div { dt { "Last seen" } dd { (time(Some(&v.last_seen))) " in entry " (entry_link(v.last_entry)) } }
                div { dt { "Observations" } dd { (v.observations) } }
            }
            @match &v.description {
                Some(d) => p class="description" { (d) },
                None => p class="muted" { "(no description)" },
            }
            @match &v.reached {
                Reached::FirstSeen => p class="muted" { "In the oldest tool set read." },
                Reached::Added => p { "Added." },
                Reached::Readded { changes } => {
                    p { "Added again after tool sets without it." }
                    @if let Some(c) = changes { (tool_diff(c, None)) }
                }
                Reached::Modified(d) => {
                    p { "Changed from the previous version:" }
                    (tool_diff(d, None))
                }
                Reached::Renamed(r) => {
                    p {
                        "Renamed from " code { (r.from) } " (tool-renamed; descriptions "
                        (r.similarity) "% similar)"
                        @if r.identical { ", nothing else changed" } "."
                    }
                    @if let Some(c) = &r.changes { (tool_diff(c, None)) }
                }
            }
        }
    }
}
