//! `GET /changes`: changes newest first, with a class filter and paging by change id.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use maud::html;

use super::layout::{Nav, Page, class_badge, counts, listing, render, time};
use super::{CLASSES, DEFAULT_LIMIT, Html, bad_request, blocking, data, int_param, limit_param};
use crate::AppState;
use crate::changes::ChangeView;

pub(super) async fn page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Html {
    let class = match params.get("class").map(String::as_str) {
        None | Some("") | Some("all") => None,
        Some(c) if CLASSES.contains(&c) => Some(c.to_owned()),
        Some(_) => {
            return Err(bad_request(
                "class must be one of: all, benign, unsure, dangerous",
            ));
        }
    };
    let before = match params.get("before").map(String::as_str) {
        None | Some("") => None,
        Some(_) => Some(int_param(&params, "before", 0, 1, i64::MAX as u64)? as i64),
    };
    let limit = limit_param(&params)?;
    let c2 = class.clone();
    let rows = blocking(move || data::latest_changes(&state, before, limit, c2.as_deref())).await?;
    let rows = rows
        .into_iter()
        .map(ChangeView::parse)
        .collect::<Result<Vec<_>, _>>()?;

    // The paging links keep the filter and the limit.
    let mut base = String::from("/changes?");
    if let Some(c) = &class {
        base.push_str(&format!("class={c}&"));
    }
    if limit != DEFAULT_LIMIT {
        base.push_str(&format!("limit={limit}&"));
    }
    let selected = class.as_deref().unwrap_or("all");
    let body = html! {
        h1 { "Changes" }
        form class="filters" method="get" action="/changes" {
            div class="field" {
                label for="class" { "Class" }
                select id="class" name="class" {
                    @for c in ["all", "benign", "unsure", "dangerous"] {
                        option value=(c) selected[selected == c] { (c) }
                    }
                }
            }
            @if limit != DEFAULT_LIMIT {
                input type="hidden" name="limit" value=(limit);
            }
            div class="field" { button type="submit" { "Show" } }
        }
        @if rows.is_empty() {
            p id="result-count" { "No changes." }
        } @else {
            (listing("changes", "Changes, newest first", &["Change", "Observed", "Server", "Endpoint", "Class", "Tools"], &[], html! {
                @for c in &rows {
                    tr {
                        th scope="row" { a href={ "/changes/" (c.row.id) } { "Change " (c.row.id) } }
                        td { (time(Some(&c.row.observed_at))) }
                        td { a href={ "/s/" (c.row.target_id) } { (c.row.server) } }
                        td class="endpoint" { (c.row.endpoint) }
                        td { (class_badge(c.class)) }
                        td { (counts(c)) }
                    }
                }
            }))
        }
        nav class="pager" aria-label="Pages" {
            @if before.is_some() {
                a href=(base.trim_end_matches(['&', '?'])) { "Newest changes" }
            }
            @if rows.len() == limit as usize {
                @if let Some(last) = rows.last() {
                    a rel="next" href={ (base) "before=" (last.row.id) } { "Older changes →" }
                }
            }
        }
    };
    Ok(render(
        StatusCode::OK,
        Page {
            title: "Changes".into(),
            nav: Nav::Changes,
            scripts: &[],
            body,
        },
    ))
}
