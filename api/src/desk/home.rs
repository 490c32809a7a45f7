//! `GET /`: the servers — search, state filter (`flagged` among them), starter-policy census
//! filter (`sensitive=`, as on `/api/v1/servers`) and a page of targets with their rule-set
//! scan.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use maud::{Markup, html};

use super::layout::{Nav, Page, count, listing, render, status_badge, time};
use super::{DEFAULT_LIMIT, Html, STATES, bad_request, blocking, data, int_param, limit_param};
use toolmark_index::{ScanSummary, SensitiveFilter};
use toolmark_toolset::policy::STARTER;

use crate::AppState;
use crate::servers::encode_query_value;

/// A page of the servers list with the same search and filters.
fn servers_href(q: &str, filter: &str, sensitive: &str, limit: u32, offset: u64) -> String {
    let mut href = format!(
        "/?q={}&state={}",
        encode_query_value(q),
        encode_query_value(filter)
    );
    if !sensitive.is_empty() {
        href.push_str(&format!("&sensitive={}", encode_query_value(sensitive)));
    }
    if limit != DEFAULT_LIMIT {
        href.push_str(&format!("&limit={limit}"));
    }
    href.push_str(&format!("&offset={offset}"));
    href
}

/// A target's scan in the servers table: `flagged` with its classes and counts (and a toxic
/// flow), `no match`, or a dash before its first `ok` observation.
fn scan_cell(scan: Option<&ScanSummary>) -> Markup {
    html! {
        @match scan {
            None => "—",
            Some(s) if s.block + s.advise > 0 => {
                span class="badge bad flagged" { "flagged" } " "
                @for (i, c) in s.classes.iter().enumerate() { @if i > 0 { ", " } code { (c) } }
                " " span class="muted" { "(" (s.block) " block, " (s.advise) " advise)" }
            }
            Some(_) => span class="muted" { "no match" },
        }
        @if let Some(t) = scan.and_then(|s| s.toxic_flow.as_deref()) {
            " " strong class="toxic" { "toxic flow (" (t) ")" }
        }
    }
}

pub(super) async fn page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Html {
    let q = params.get("q").cloned().unwrap_or_default();
    if q.chars().count() > 200 {
        return Err(bad_request("q must be at most 200 characters"));
    }
    let filter = match params.get("state").map(String::as_str) {
        None | Some("") => "all".to_owned(),
        Some(s) if STATES.iter().any(|(k, _)| *k == s) => s.to_owned(),
        Some(_) => {
            let names: Vec<&str> = STATES.iter().map(|(k, _)| *k).collect();
            return Err(bad_request(&format!(
                "state must be one of: {}",
                names.join(", ")
            )));
        }
    };
    let sensitive = params.get("sensitive").cloned().unwrap_or_default();
    let census = match sensitive.as_str() {
        "" => None,
        s => Some(SensitiveFilter::parse(s).ok_or_else(|| {
            bad_request("sensitive must be any or a category of the starter policy")
        })?),
    };
    let limit = limit_param(&params)?;
    let offset = int_param(&params, "offset", 0, 0, 10_000_000)?;
    let (q2, f2) = (q.clone(), filter.clone());
    let (total, rows) =
        blocking(move || data::list_targets(&state, q2.trim(), &f2, census, limit, offset)).await?;

    let first = if rows.is_empty() { 0 } else { offset + 1 };
    let last = offset + rows.len() as u64;
    let body = html! {
        h1 { "Servers" }
        form class="filters" method="get" action="/" role="search" {
            div class="field" {
                label for="q" { "Search names, endpoints and descriptions" }
                input id="q" name="q" type="search" value=(q) maxlength="200";
            }
            div class="field" {
                label for="state" { "State" }
                select id="state" name="state" {
                    @for (k, label) in STATES {
                        option value=(k) selected[k == filter] { (label) }
                    }
                }
            }
            div class="field" {
                label for="sensitive" { "Sensitive tools (starter policy)" }
                select id="sensitive" name="sensitive" {
                    option value="" selected[sensitive.is_empty()] { "Any or none" }
                    option value="any" selected[sensitive == "any"] { "In any category" }
                    @for c in STARTER.categories {
                        option value=(c.id) selected[sensitive == c.id] { (c.id) }
                    }
                }
            }
            @if limit != DEFAULT_LIMIT {
                input type="hidden" name="limit" value=(limit);
            }
            div class="field" { button type="submit" { "Show" } }
        }
        p class="summary" id="result-count" { (first) "–" (last) " of " (total) " targets" }
        @if rows.is_empty() {
            p { "No targets match." }
        } @else {
            (listing("servers", "Targets", &["Server", "Endpoint", "Last status", "Tools", "Last observed", "Changes", "Rule-set scan"], &["Tools", "Changes"], html! {
                @for r in &rows {
                    tr {
                        th scope="row" {
                            a href={ "/s/" (r.id) } { (r.server) }
                            @if r.delisted {
                                " " span class="badge neutral" { "delisted" }
                            }
                        }
                        td class="endpoint" { (r.target) }
                        td { (status_badge(r.last_status.as_deref(), r.skip_reason.is_some())) }
                        td class="num" { (count(r.tools)) }
                        td { (time(r.last_observed_at.as_deref())) }
                        td class="num" { (r.changes) }
                        td { (scan_cell(r.scan.as_ref())) }
                    }
                }
            }))
        }
        nav class="pager" aria-label="Pages" {
            @if offset > 0 {
                a rel="prev" href=(servers_href(&q, &filter, &sensitive, limit, offset.saturating_sub(limit.into()))) { "← Previous" }
            }
            @if last < total {
                a rel="next" href=(servers_href(&q, &filter, &sensitive, limit, last)) { "Next →" }
            }
        }
    };
    Ok(render(
        StatusCode::OK,
        Page {
            title: "Servers".into(),
            nav: Nav::Servers,
            scripts: &[],
            body,
        },
    ))
}
