//! Security events, signed on the way out: the lossless cursor API and the security feeds.
//!
//! - `GET /api/v1/security-events?after=<seq>&limit=<1..MAX_EVENTS_PAGE>&watch=<ids>`:
//!   `{events: [{cursor, event}], nextCursor}`, oldest first above `after` (default 0).
//!   `nextCursor` is the last cursor returned, or `after` when none was: a client that stores
//!   it after processing a page and asks again from it never misses or repeats an event
//!   (events are appended in `seq` order in the transaction that records their changes, so a
//!   page never skips one that commits later with a lower cursor).
//! - `GET /api/v1/security-events/{id}`: one event by its id (`sha256-…`, percent-encoded in
//!   the path like a document's address).
//! - `/security-feed.xml` (Atom), `/security-feed.rss` (RSS 2.0), `/security-feed.json` (JSON
//!   Feed 1.1): the newest [`FEED_EVENTS`] events (`watch=` as the change feeds, `before=<seq>`
//!   for older pages). An item's id is `urn:sha256:<hex of the event id's digest>`; its summary
//!   is the event's evidence, its JSON Feed item carries the signed event under `_toolmark`.
//!
//! Every event is signed here with the answer key ([`toolmark_client::signed_event`]): the stored
//! body plus `issuer` (`{base}/api/v1/issuer`), signed over RFC 8785 of the rest. Ed25519 is
//! deterministic, so an event is the same document every time it is served.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use toolmark_client::SecurityEvent;
use toolmark_index::{EventQuery, SecurityEventRow};
use toolmark_toolset::{Sri, hex};

use crate::feeds::{ATOM_TYPE, RSS_TYPE, respond, rfc822, watch_ids, xml_text};
use crate::servers::{Params, blocking};
use crate::{ApiError, AppState};

/// Most events one page of `/api/v1/security-events` returns.
pub const MAX_EVENTS_PAGE: u32 = 200;

/// Events per page of `/api/v1/security-events` when `limit` is absent.
pub const DEFAULT_EVENTS_PAGE: u32 = 100;

/// Events per page of a security feed.
pub const FEED_EVENTS: u32 = 50;

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/security-events", get(list))
        .route("/api/v1/security-events/{id}", get(one))
        .route("/security-feed.xml", get(atom))
        .route("/security-feed.rss", get(rss))
        .route("/security-feed.json", get(json_feed))
}

/// The signed event of a stored one.
pub fn signed(state: &AppState, row: &SecurityEventRow) -> Result<SecurityEvent, ApiError> {
    let issuer = format!("{}/api/v1/issuer", state.base_url);
    toolmark_client::signed_event(&row.body, &issuer, &state.answer_key).map_err(ApiError::internal)
}

fn cursor(p: &Params, name: &str) -> Result<Option<u64>, ApiError> {
    Ok(p.integer(name)?.map(|n| n as u64))
}

async fn list(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let p = Params::new(query)?;
    let after = cursor(&p, "after")?.unwrap_or(0);
    let limit = match p.integer("limit")? {
        None => DEFAULT_EVENTS_PAGE,
        Some(n) if (1..=i64::from(MAX_EVENTS_PAGE)).contains(&n) => n as u32,
        Some(_) => {
            return Err(ApiError::BadRequest(format!(
                "limit must be 1–{MAX_EVENTS_PAGE}"
            )));
        }
    };
    let watch = watch_ids(&p)?;
    let body = blocking(move || {
        let rows = state.index.get().security_events(&EventQuery {
            after: Some(after),
            targets: watch.as_deref(),
            limit,
            ..EventQuery::default()
        })?;
        let next = rows.last().map_or(after, |r| r.seq);
        let events = rows
            .iter()
            .map(|r| Ok(json!({"cursor": r.seq, "event": signed(&state, r)?})))
            .collect::<Result<Vec<_>, ApiError>>()?;
        Ok(json!({"events": events, "nextCursor": next}))
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

async fn one(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let sri: Sri = id.parse().map_err(|_| {
        ApiError::BadRequest("an event id is sha256-<43 base64 characters>=".into())
    })?;
    let body = blocking(move || {
        let id = sri.to_string();
        let row = state
            .index
            .get()
            .security_event(&id)?
            .ok_or_else(|| ApiError::NotFound(format!("no security event {id}")))?;
        // As a `Value`: members in the order every other route writes them.
        serde_json::to_value(signed(&state, &row)?).map_err(ApiError::internal)
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

/// One page of a security feed.
struct FeedPage {
    self_url: String,
    feed_url: String,
    next_url: Option<String>,
    updated: String,
    base: String,
    /// (row, signed event), newest first.
    items: Vec<(SecurityEventRow, SecurityEvent)>,
}

fn feed_url(base: &str, path: &str, watch: &Option<Vec<String>>, before: Option<u64>) -> String {
    let mut q = Vec::new();
    if let Some(w) = watch {
        q.push(format!("watch={}", w.join(",")));
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

async fn load(
    state: Arc<AppState>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    path: &'static str,
) -> Result<FeedPage, ApiError> {
    let p = Params::new(query)?;
    let watch = watch_ids(&p)?;
    let before = cursor(&p, "before")?;
    blocking(move || {
        let rows = state.index.get().security_events(&EventQuery {
            before,
            targets: watch.as_deref(),
            limit: FEED_EVENTS + 1,
            ..EventQuery::default()
        })?;
        let more = rows.len() > FEED_EVENTS as usize;
        let items = rows
            .into_iter()
            .take(FEED_EVENTS as usize)
            .map(|r| {
                let doc = signed(&state, &r)?;
                Ok((r, doc))
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        let base = state.base_url.clone();
        let next_url = match items.last() {
            Some((last, _)) if more => Some(feed_url(&base, path, &watch, Some(last.seq))),
            _ => None,
        };
        Ok(FeedPage {
            self_url: feed_url(&base, path, &watch, before),
            feed_url: feed_url(&base, path, &watch, None),
            next_url,
            updated: items
                .first()
                .map(|(r, _)| r.observed_at.clone())
                .unwrap_or_else(|| "1970-01-01T00:00:00Z".into()),
            items,
            base,
        })
    })
    .await
}

/// `urn:sha256:<hex>` of an event id (`sha256-<base64>`).
fn urn(id: &str) -> String {
    match id.parse::<Sri>() {
        Ok(s) => format!("urn:sha256:{}", hex::encode(&s.0)),
        Err(_) => format!("urn:toolmark:event:{id}"),
    }
}

/// `{kind}: {server} ({endpoint})`.
fn title(event: &SecurityEvent) -> String {
    let b = &event.body;
    format!("{}: {} ({})", b.kind, b.target.name, b.target.endpoint)
}

const FEED_TITLE: &str = "toolmark: security events";

async fn atom(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let page = load(state, query, "/security-feed.xml").await?;
    let x = xml_text;
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n",
    );
    out.push_str(&format!(
        "<id>{}</id>\n<title>{}</title>\n<updated>{}</updated>\n\
         <author><name>toolmark</name><uri>{}/</uri></author>\n<generator>toolmark</generator>\n\
         <link rel=\"self\" type=\"application/atom+xml\" href=\"{}\"/>\n",
        x(&page.feed_url),
        x(FEED_TITLE),
        x(&page.updated),
        x(&page.base),
        x(&page.self_url),
    ));
    if let Some(next) = &page.next_url {
        out.push_str(&format!(
            "<link rel=\"next\" type=\"application/atom+xml\" href=\"{}\"/>\n",
            x(next)
        ));
    }
    for (row, doc) in &page.items {
        let link = format!("{}/s/{}", page.base, row.target_id);
        out.push_str(&format!(
            "<entry>\n<id>{}</id>\n<title type=\"text\">{}</title>\n<updated>{}</updated>\n\
             <published>{}</published>\n<link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n\
             <category term=\"{}\"/>\n<summary type=\"text\">{}</summary>\n</entry>\n",
            x(&urn(&row.id)),
            x(&title(doc)),
            x(&row.observed_at),
            x(&row.observed_at),
            x(&link),
            x(&row.kind),
            x(&doc.body.evidence.to_string()),
        ));
    }
    out.push_str("</feed>\n");
    Ok(respond(out, ATOM_TYPE))
}

async fn rss(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let page = load(state, query, "/security-feed.rss").await?;
    let x = xml_text;
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n",
    );
    out.push_str(&format!(
        "<title>{}</title>\n<link>{}/</link>\n\
         <description>Signed security events observed by toolmark</description>\n\
         <lastBuildDate>{}</lastBuildDate>\n<generator>toolmark</generator>\n\
         <atom:link rel=\"self\" type=\"application/rss+xml\" href=\"{}\"/>\n",
        x(FEED_TITLE),
        x(&page.base),
        x(&rfc822(&page.updated)),
        x(&page.self_url),
    ));
    if let Some(next) = &page.next_url {
        out.push_str(&format!(
            "<atom:link rel=\"next\" type=\"application/rss+xml\" href=\"{}\"/>\n",
            x(next)
        ));
    }
    for (row, doc) in &page.items {
        out.push_str(&format!(
            "<item>\n<title>{}</title>\n<link>{}/s/{}</link>\n<guid isPermaLink=\"false\">{}</guid>\n\
             <pubDate>{}</pubDate>\n<category>{}</category>\n<description>{}</description>\n\
             </item>\n",
            x(&title(doc)),
            x(&page.base),
            x(&row.target_id),
            x(&urn(&row.id)),
            x(&rfc822(&row.observed_at)),
            x(&row.kind),
            x(&doc.body.evidence.to_string()),
        ));
    }
    out.push_str("</channel>\n</rss>\n");
    Ok(respond(out, RSS_TYPE))
}

async fn json_feed(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let page = load(state, query, "/security-feed.json").await?;
    let items: Vec<Value> = page
        .items
        .iter()
        .map(|(row, doc)| {
            json!({
                "id": urn(&row.id),
                "url": format!("{}/s/{}", page.base, row.target_id),
                "title": title(doc),
                "content_text": doc.body.evidence.to_string(),
                "date_published": row.observed_at,
                "tags": [row.kind],
                "_toolmark": {"cursor": row.seq, "event": doc},
            })
        })
        .collect();
    let home = format!("{}/", page.base);
    crate::feeds::json_feed_response(
        crate::feeds::JsonFeedHead {
            title: FEED_TITLE,
            home: &home,
            feed_url: &page.feed_url,
            description: "Signed security events observed by toolmark",
            base: &page.base,
            updated: &page.updated,
            self_url: &page.self_url,
            next_url: page.next_url.as_deref(),
        },
        items,
    )
}
