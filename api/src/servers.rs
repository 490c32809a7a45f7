//! Servers, targets and changes as JSON, and the sensitive-tool globs.
//!
//! - `GET /api/v1/servers?q=&state=&sensitive=&limit=&offset=`: targets (one per remote or
//!   package of a registry server), searched and filtered (`sensitive=any|<category>`: by the
//!   starter-policy census), `{total, offset, limit, servers: [summary]}`.
//! - `GET /api/v1/servers/{id}`: one target by its 16-hex id (HISTOR's
//!   `sha256(name + "\n" + endpoint)[:16]`): its summary, registry record, timeline of
//!   observations, recent changes, the tool sets clients reported that toolmark never observed
//!   there (`clientReports`, `crate::contribute`) and current tool set (the tool entries exactly
//!   as the server sent them, spliced in).
//! - `GET /api/v1/servers/{id}/sensitive?pattern=…&server=…&policy=starter`: the sensitive-tool
//!   globs (and, when asked for, the starter policy) applied to the target's current tool set;
//!   the server answers to its registry name, that name's last segment, its title and the
//!   `server` aliases given.
//! - `GET /api/v1/census`: the starter-policy census, per category the targets (and servers)
//!   whose current tool set has a tool in it.
//! - `GET /api/v1/changes?after=&before=&limit=&server=&target=&class=`: changes with lossless
//!   cursor paging: `after` reads forwards (oldest first) and always returns a cursor to resume
//!   from; without it, pages run backwards from the newest (`before`).
//! - `GET /api/v1/changes/{id}`: one change with its full diff and classification.
//! - `POST /api/v1/sensitive`: `{"tools": […], "patterns": […], "server": … | […],
//!   "policy": "starter"}` → `{"sensitive": […], "safe": […]}` (and `policy`, `categories`
//!   when a policy was asked for) (`toolmark_toolset::sensitive`, as `toolmark sensitive`). A
//!   malformed pattern (e.g. `mcp://payments` without a tool part) is a 400.
//!
//! Every shape is documented in `docs/api.md`. Everything here only reads the index and the
//! blobs; bad input is a 400 (or 413 for an oversized body) with a JSON error, never a panic.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use toolmark_index::index::{ChangeRow, Index, TargetRow, TargetSummary};
use toolmark_index::{SensitiveFilter, TargetFilter, TargetState};
use toolmark_toolset::json::{self as tjson, Json};
use toolmark_toolset::policy::{self, Policy};
use toolmark_toolset::sensitive::{self, Pattern, ServerNames};
use toolmark_toolset::{Shape, Tool, ToolSet};

use crate::changes::{ChangeView, SignalView};
use crate::{ApiError, AppState};

/// Items per page of `/api/v1/servers` and `/api/v1/changes` when no `limit` is given
/// (HISTOR's default).
pub const DEFAULT_LIMIT: u32 = 50;

/// Largest `limit` (HISTOR's): a page of 200 changes, each with at most
/// [`MAX_LISTED_NAMES`] names per list and [`MAX_LISTED_SIGNALS`] signals, stays a few
/// megabytes at worst and far less in practice.
pub const MAX_LIMIT: u32 = 200;

/// Longest search text `q` (HISTOR's limit; registry names are at most 200 bytes, so nothing
/// longer can match a name).
pub const MAX_Q_CHARS: usize = 200;

/// Longest server name accepted as a filter or as the `server` of a sensitive request: the
/// registry's own limit on names (200 bytes, the crawler's `MAX_NAME_LEN`).
pub const MAX_SERVER_NAME_CHARS: usize = 200;

/// Observations in a server's timeline, newest first (HISTOR's 100: three months of daily
/// crawls; older ones are in the log).
pub const TIMELINE_LEN: u32 = 100;

/// Changes listed with a server, newest first (HISTOR's 20; the rest through
/// `/api/v1/changes?target=`).
pub const SERVER_CHANGES: u32 = 20;

/// Names per list (added, removed, modified) in a change of a list or feed; the counts are
/// exact and `/api/v1/changes/{id}` lists every name the diff keeps. Bounds a page of
/// changes from a server that rewrote thousands of tools.
pub const MAX_LISTED_NAMES: usize = 100;

/// Signals per change in a list; `signalsTotal` counts them all and `/api/v1/changes/{id}`
/// lists every one the classification keeps. A real rug pull fires a handful.
pub const MAX_LISTED_SIGNALS: usize = 50;

/// Largest `POST /api/v1/sensitive` body: `/check`'s (and HISTOR's) 2 MiB, since a client sends
/// the same `tools` array to both.
pub const MAX_SENSITIVE_BODY_BYTES: usize = 2 * 1024 * 1024;

/// Deepest JSON nesting accepted in a sensitive request: the tool-set reader's limit
/// (`toolmark_toolset::json::MAX_DEPTH`, HISTOR's 128), which refuses no real tool set.
pub const MAX_BODY_DEPTH: usize = tjson::MAX_DEPTH;

/// Most tools in a sensitive request: the crawler's and `/check`'s cap on a tool set.
pub const MAX_SENSITIVE_TOOLS: usize = 5_000;

/// Most patterns in one request: a policy names tens of globs (WARDEN's defaults are a dozen).
pub const MAX_PATTERNS: usize = 100;

/// Longest pattern, in characters: a qualified `server/tool` glob with a long registry name
/// still fits, and a pattern costs at most this many steps per name character.
pub const MAX_PATTERN_CHARS: usize = 200;

/// Most server names a sensitive request may give (`server` repeated on the `GET`, an array in
/// the `POST`): aliases of one server, a handful at most. Each also counts by its last
/// segment, so at most twice this many names are matched (plus a target's registry name, its
/// last segment and its title), and [`MAX_MATCH_WORK`] counts each.
pub const MAX_SERVER_ALIASES: usize = 8;

/// Most glob steps one request may cost: (characters of every distinct tool name, qualified
/// by each server name for `server/tool` patterns) × (characters of every pattern and, when
/// asked for, of every starter-policy glob), both counted *after* case folding (what the
/// matcher compares: U+0130 folds to two characters) and with each run of `*` as one `*` (the
/// matcher reads it so: a 200-star pattern costs what `*` does), the worst case of the linear glob
/// matcher (`toolmark_toolset::sensitive::match_work`). Measured at about 1 ns a step (release build, this project's 2-core machine:
/// 2 × 10⁸ steps took 0.20 s), so about a tenth of a second of one core; a real policy (a dozen
/// globs) against a 5,000-tool set costs a fifth of it, while the other limits alone would
/// allow seconds.
pub const MAX_MATCH_WORK: u64 = 100_000_000;

/// The change classes, as stored and as accepted by `class=`.
pub const CLASSES: [&str; 3] = ["benign", "unsure", "dangerous"];

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/servers", get(list_servers))
        .route("/api/v1/servers/{id}", get(server_detail))
        .route("/api/v1/servers/{id}/sensitive", get(server_sensitive))
        .route("/api/v1/census", get(census))
        .route("/api/v1/changes", get(list_changes))
        .route("/api/v1/changes/{id}", get(change_detail))
        .route(
            "/api/v1/sensitive",
            post(post_sensitive).layer(DefaultBodyLimit::max(MAX_SENSITIVE_BODY_BYTES)),
        )
}

pub(crate) fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::BadRequest(msg.into())
}

/// Run blocking work (SQLite, blob reads) off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(ApiError::internal)?
}

pub(crate) use crate::logroutes::valid_id;

fn check_id(id: &str) -> Result<(), ApiError> {
    if valid_id(id) {
        Ok(())
    } else {
        Err(bad("a server id is 16 lowercase hex digits"))
    }
}

/// The query string's pairs, in order (a name may repeat, as `pattern` does).
pub(crate) struct Params(Vec<(String, String)>);

impl Params {
    /// The pairs, or a JSON 400 when the query string does not decode.
    pub(crate) fn new(
        query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    ) -> Result<Params, ApiError> {
        query
            .map(|Query(pairs)| Params(pairs))
            .map_err(|e| bad(format!("the query string: {e}")))
    }

    /// The value of a parameter given at most once.
    pub(crate) fn one(&self, name: &str) -> Result<Option<&str>, ApiError> {
        let mut it = self.0.iter().filter(|(k, _)| k == name);
        let first = it.next().map(|(_, v)| v.as_str());
        if it.next().is_some() {
            return Err(bad(format!("{name} is given more than once")));
        }
        Ok(first)
    }

    /// Every value of a repeatable parameter.
    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A non-negative integer: decimal digits only (no sign), no leading zero, at most
    /// `i64::MAX`.
    pub(crate) fn integer(&self, name: &str) -> Result<Option<i64>, ApiError> {
        self.digits(name, i64::MAX)
    }

    /// A log index or size: as [`Params::integer`], up to `u64::MAX` (every index or size a
    /// log could have, so an out-of-range one is "not in the tree", not malformed).
    pub(crate) fn unsigned(&self, name: &str) -> Result<Option<u64>, ApiError> {
        self.digits(name, u64::MAX)
    }

    /// A parameter given at most once, as decimal digits (no sign, no leading zero) of a
    /// number of type `T` up to `max`.
    fn digits<T: std::str::FromStr + std::fmt::Display>(
        &self,
        name: &str,
        max: T,
    ) -> Result<Option<T>, ApiError> {
        let Some(v) = self.one(name)? else {
            return Ok(None);
        };
        let ok = !v.is_empty()
            && v.bytes().all(|b| b.is_ascii_digit())
            && (v == "0" || !v.starts_with('0'));
        match v.parse::<T>() {
            Ok(n) if ok => Ok(Some(n)),
            _ => Err(bad(format!(
                "{name} must be a non-negative integer up to {max} (decimal digits, no sign, no leading zero)"
            ))),
        }
    }

    /// A parameter that must be given, as [`Params::unsigned`].
    pub(crate) fn required_unsigned(&self, name: &str) -> Result<u64, ApiError> {
        self.unsigned(name)?
            .ok_or_else(|| bad(format!("missing {name}")))
    }

    /// `limit`: [`DEFAULT_LIMIT`] when absent, else 1–[`MAX_LIMIT`].
    pub(crate) fn limit(&self) -> Result<u32, ApiError> {
        match self.integer("limit") {
            Ok(None) => Ok(DEFAULT_LIMIT),
            Ok(Some(n)) if (1..=i64::from(MAX_LIMIT)).contains(&n) => Ok(n as u32),
            _ => Err(bad(format!(
                "limit must be an integer from 1 to {MAX_LIMIT}"
            ))),
        }
    }

    /// `class`: one of [`CLASSES`].
    pub(crate) fn class(&self) -> Result<Option<&'static str>, ApiError> {
        match self.one("class")? {
            None => Ok(None),
            Some(c) => CLASSES
                .iter()
                .find(|k| **k == c)
                .map(|k| Some(*k))
                .ok_or_else(|| bad("class must be benign, unsure or dangerous")),
        }
    }
}

/// Percent-encode a query value (RFC 3986 unreserved characters kept).
pub(crate) fn encode_query_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn json_response(text: String) -> Response {
    let mut r = text.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

// ---------------------------------------------------------------------------------------------
// Targets

/// One target's summary, as listed and as the `server` of its detail.
fn summary_json(base: &str, s: &TargetSummary) -> Value {
    let t = &s.target;
    json!({
        "id": t.id,
        "name": t.server,
        "title": s.title,
        "endpoint": t.target,
        "kind": t.kind,
        "transport": t.declared_transport,
        "packageVersion": t.package_version,
        "skipReason": t.skip_reason,
        "skipDetail": t.skip_detail,
        "firstListed": t.first_listed,
        "lastListed": t.last_listed,
        "delisted": s.delisted_at.is_some(),
        "delistedAt": s.delisted_at,
        "lastStatus": t.last_status,
        "lastDetail": t.last_detail,
        "lastEntry": t.last_entry,
        "lastObserved": t.last_observed_at,
        "currentEntry": t.last_ok_entry,
        "mtl1": t.current_mtl1,
        "full": t.current_full,
        "toolCount": t.current_tools,
        "changes": s.changes,
        "sensitive": s.sensitive,
        "flagged": s.scan.as_ref().is_some_and(|x| x.block + x.advise > 0),
        "blockMatches": s.scan.as_ref().map(|x| x.block),
        "adviseMatches": s.scan.as_ref().map(|x| x.advise),
        "flaggedClasses": s.scan.as_ref().map(|x| &x.classes),
        "toxicFlow": s.scan.as_ref().and_then(|x| x.toxic_flow.as_ref()),
        "page": format!("{base}/s/{}", t.id),
    })
}

async fn list_servers(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let p = Params::new(query)?;
    let q = p.one("q")?.map(str::to_owned);
    if q.as_ref().is_some_and(|q| q.chars().count() > MAX_Q_CHARS) {
        return Err(bad(format!("q is longer than {MAX_Q_CHARS} characters")));
    }
    let target_state = match p.one("state")? {
        None => TargetState::All,
        Some(s) => TargetState::parse(s).ok_or_else(|| {
            bad("state must be all, observed, changed, failing, skipped, delisted or flagged")
        })?,
    };
    let sensitive = match p.one("sensitive")? {
        None => None,
        Some(s) => Some(SensitiveFilter::parse(s).ok_or_else(|| {
            bad(format!(
                "sensitive must be any or a category of {}: {}",
                policy::STARTER.name,
                category_ids().join(", ")
            ))
        })?),
    };
    let limit = p.limit()?;
    let offset = p.integer("offset")?.unwrap_or(0);
    let filter = TargetFilter {
        q: q.unwrap_or_default(),
        state: target_state,
        sensitive,
    };
    let body = blocking(move || {
        let page = state.index.get().search_targets(
            &filter,
            limit,
            u64::try_from(offset).unwrap_or_default(),
        )?;
        let servers: Vec<Value> = page
            .targets
            .iter()
            .map(|t| summary_json(&state.base_url, t))
            .collect();
        Ok(json!({"total": page.total, "offset": offset, "limit": limit, "servers": servers}))
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

/// Tools with a leg a server's detail lists (`legsTruncated` counts the rest; `toxicFlow` is over
/// all): with the matches' cap, a huge set's scan adds a bounded part to the page.
pub const MAX_DETAIL_LEG_TOOLS: usize = 100;

/// A target's stored scan ([`toolmark_index::scans`]) as `/api/v1/servers/{id}` shows it:
/// the rule set it was made with, the matches with their spans (`patternMatches`, HISTOR's
/// name), the legs of every tool that has one and the toxic flow; `null` before the target's
/// first `ok` observation.
fn scan_json(scan: Option<toolmark_index::TargetScan>) -> Value {
    let Some(s) = scan else {
        return Value::Null;
    };
    let (block, advise, truncated, matches) = match &s.scan {
        Some(x) => (
            json!(x.block),
            json!(x.advise),
            json!(x.truncated),
            json!(x.matches),
        ),
        None => (Value::Null, Value::Null, Value::Null, Value::Null),
    };
    let legs = &s.legs[..s.legs.len().min(MAX_DETAIL_LEG_TOOLS)];
    let legs_truncated = s.legs_total.saturating_sub(legs.len() as u64);
    json!({
        "status": if s.scan.is_some() { "scanned" } else { "not-scanned" },
        "entry": s.entry,
        "full": s.full,
        "rules": s.rules,
        "rulesDigest": s.rules_digest,
        "current": s.rules_digest == crate::rules::digest(),
        "flagged": s.flagged(),
        "block": block,
        "advise": advise,
        "patternMatches": matches,
        "truncated": truncated,
        "legs": legs,
        "legsTruncated": legs_truncated,
        "toxicFlow": s.toxic_flow,
    })
}

fn target_or_404(index: &Index, id: &str) -> Result<TargetRow, ApiError> {
    index
        .target(id)?
        .ok_or_else(|| ApiError::NotFound(format!("no server {id}")))
}

async fn server_detail(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    let st = state.clone();
    let (target, mut body) = blocking(move || {
        let state = st;
        let base = &state.base_url;
        let (target, out) = {
            let index = state.index.get();
            let target = target_or_404(&index, &id)?;
            let summary = index
                .target_summary(&id)?
                .map(|t| summary_json(base, &t))
                .ok_or_else(|| ApiError::NotFound(format!("no server {id}")))?;
            let registry = index.server(&target.server)?;
            let siblings: Vec<Value> = index
                .targets_of(&target.server)?
                .iter()
                .map(|t| {
                    json!({"id": t.id, "endpoint": t.target, "kind": t.kind,
                           "page": format!("{base}/s/{}", t.id)})
                })
                .collect();
            let observations = index.observations_of(&id, TIMELINE_LEN, None)?;
            let changed_at =
                index.change_ids_since(&id, observations.last().map_or(0, |o| o.entry))?;
            let timeline: Vec<Value> = observations
                .iter()
                .map(|o| {
                    json!({
                        "entry": o.entry,
                        "observedAt": o.observed_at,
                        "status": o.status,
                        "detail": o.detail,
                        "mtl1": o.mtl1,
                        "mtl1Error": o.mtl1_error,
                        "full": o.full,
                        "toolCount": o.tools,
                        "transport": o.transport,
                        "protocolVersion": o.protocol_version,
                        "elapsedMs": o.elapsed_ms,
                        "change": changed_at.iter().find(|(e, _)| *e == o.entry).map(|(_, c)| c),
                    })
                })
                .collect();
            let targets = [id.clone()];
            let changes = query_changes(
                &index,
                &ChangeQuery {
                    targets: Some(&targets),
                    limit: SERVER_CHANGES,
                    ..ChangeQuery::default()
                },
            )?
            .into_iter()
            .map(|row| change_json(&ChangeView::parse(row)?, base, false))
            .collect::<Result<Vec<_>, _>>()?;
            let mut out = Map::new();
            out.insert("server".into(), summary);
            out.insert(
                "registry".into(),
                serde_json::to_value(registry).map_err(ApiError::internal)?,
            );
            out.insert("targets".into(), Value::Array(siblings));
            out.insert("timeline".into(), Value::Array(timeline));
            out.insert("changes".into(), Value::Array(changes));
            if target.kind == "package" {
                // As in `/check` answers (docs/api.md "Look-alike names"); null: none.
                let lookalike = state.names.package(&target.target);
                out.insert(
                    "packageLookalike".into(),
                    serde_json::to_value(lookalike).map_err(ApiError::internal)?,
                );
            }
            let today = toolmark_index::Day::of((state.clock)());
            let reports = state.client_reports.other_reports(&index, &id, today)?;
            out.insert(
                "clientReports".into(),
                crate::contribute::reports_json(&reports, today),
            );
            let census = index.target_census(&id)?;
            out.insert(
                "census".into(),
                json!({"policy": policy::STARTER.name, "categories": census}),
            );
            out.insert("scan".into(), scan_json(index.target_scan(&id)?));
            // The surface beyond the tools of the latest successful observation that read it
            // (issue #29: a remote's is read one crawl in `crawl.surface_days`).
            let surface = match index.surface_now(&target)? {
                Some((kinds_entry, row)) => json!({
                    "entry": target.last_ok_entry,
                    "toolIndex": row.tool_index,
                    "toolsCache": {"cacheScope": row.tools_cache.0, "ttlMs": row.tools_cache.1},
                    "kindsEntry": kinds_entry,
                    "kinds": row.kinds,
                }),
                None => Value::Null,
            };
            // The cloaking signal: a second look in force that listed other tools, joined by
            // the tool sets clients reported being served that toolmark never observed here.
            let cloaking = index.cloaking_now(&id)?;
            out.insert(
                "cloaking".into(),
                json!({
                    "signal": cloaking.is_some() || !reports.is_empty(),
                    "secondLook": cloaking.map(|(change, entry, at)| {
                        json!({"change": change, "entry": entry, "observedAt": at})
                    }),
                    "clientReports": reports.len(),
                }),
            );
            out.insert("surface".into(), surface);
            (target, out)
        };
        Ok((target, out))
    })
    .await?;
    let current = state.tool_sets.current(&state, &target).await?;
    let base = &state.base_url;
    body.insert(
        "toolsEntry".into(),
        json!(current.as_ref().and(target.last_ok_entry)),
    );
    body.insert("toolCount".into(), json!(current.as_ref().map(|c| c.count)));
    body.insert(
        "toolsShown".into(),
        json!(current.as_ref().map(|c| c.inline.len())),
    );
    body.insert(
        "toolsOmitted".into(),
        json!(current.as_ref().map(|c| c.omitted())),
    );
    body.insert(
        "toolsBytes".into(),
        json!(current.as_ref().map(|c| c.tool_bytes)),
    );
    body.insert(
        "document".into(),
        current.as_ref().map_or(Value::Null, |c| {
            json!({
                "sri": c.document.to_string(),
                "bytes": c.document_bytes,
                "url": format!("{base}{}", crate::documents::document_path(&c.document)),
            })
        }),
    );
    // The tool entries go in as the server sent them (every byte kept, numbers as written),
    // which serde_json's values cannot hold: splice their raw texts into the object.
    let mut text = serde_json::to_string(&Value::Object(body)).map_err(ApiError::internal)?;
    text.pop(); // the closing brace of a non-empty object
    text.push_str(",\"tools\":");
    match &current {
        None => text.push_str("null"),
        Some(c) => {
            text.push('[');
            for (i, t) in c.inline.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(&t.raw);
            }
            text.push(']');
        }
    }
    text.push('}');
    Ok(json_response(text))
}

// ---------------------------------------------------------------------------------------------
// Changes

/// What changes to read (the index's query).
pub(crate) use toolmark_index::ChangeQuery;

/// Changes by `q`: ids ascending after `q.after`, else descending below `q.before`.
pub(crate) fn query_changes(index: &Index, q: &ChangeQuery) -> Result<Vec<ChangeRow>, ApiError> {
    Ok(index.query_changes(q)?)
}

/// A change as the JSON endpoints (and the JSON Feed's `_toolmark`) give it: capped lists
/// when `whole` is false, else every name and signal and the diff and classification.
/// `docs/api.md` documents the shape.
pub(crate) fn change_json(c: &ChangeView, base: &str, whole: bool) -> Result<Value, ApiError> {
    let r = &c.row;
    let names_cap = if whole { usize::MAX } else { MAX_LISTED_NAMES };
    let signals_cap = if whole {
        usize::MAX
    } else {
        MAX_LISTED_SIGNALS
    };
    let added: Vec<&str> = c.added().iter().map(String::as_str).collect();
    let removed: Vec<&str> = c.removed().iter().map(String::as_str).collect();
    let modified: Vec<&str> = c.modified().collect();
    let cap = |v: &[&str]| json!(v[..v.len().min(names_cap)]);
    let names_truncated = [
        (added.len(), r.added),
        (removed.len(), r.removed),
        (modified.len(), r.modified),
    ]
    .iter()
    .any(|(listed, total)| (*listed).min(names_cap) as u64 != *total);
    let signals: Vec<SignalView> = c
        .signals()
        .iter()
        .take(signals_cap)
        .map(SignalView::new)
        .collect();
    let mut out = json!({
        "id": r.id,
        "targetId": r.target_id,
        "server": r.server,
        "endpoint": r.endpoint,
        "observedAt": r.observed_at,
        "oldEntry": r.old_entry,
        "newEntry": r.new_entry,
        "oldFull": r.old_full,
        "newFull": r.new_full,
        "oldMtl1": r.old_mtl1,
        "newMtl1": r.new_mtl1,
        "class": c.class,
        "kind": r.kind,
        "analysed": c.analysis.is_some(),
        "added": r.added,
        "removed": r.removed,
        "modified": r.modified,
        "names": {
            "added": cap(&added),
            "removed": cap(&removed),
            "modified": cap(&modified),
        },
        "namesTruncated": names_truncated,
        "signals": serde_json::to_value(&signals).map_err(ApiError::internal)?,
        "signalsTotal": c.signals_total(),
        "links": {
            "change": c.page(base),
            "server": format!("{base}/s/{}", r.target_id),
            "api": format!("{base}/api/v1/changes/{}", r.id),
        },
    });
    if let Some(a) = &c.authorization {
        out["authorizationServers"] = serde_json::to_value(a).map_err(ApiError::internal)?;
    }
    if let Some(b) = &c.behaviour {
        out["behaviour"] = serde_json::to_value(b).map_err(ApiError::internal)?;
    }
    if let Some(g) = &c.registry {
        out["registry"] = serde_json::to_value(g).map_err(ApiError::internal)?;
    }
    // An instructions change's word diff and a scan's matches are as large as the server made
    // them: in full behind the change's own URL, like a tool-set change's diff; a list carries
    // the class, the signals and the counts.
    if let Some(i) = &c.instructions {
        out["instructions"] = if whole {
            serde_json::to_value(i).map_err(ApiError::internal)?
        } else {
            json!({"class": i.class})
        };
    }
    if let Some(x) = &c.scan {
        out["scan"] = if whole {
            serde_json::to_value(x).map_err(ApiError::internal)?
        } else {
            json!({"rules": x.rules, "rulesDigest": x.rules_digest, "block": x.block,
                   "advise": x.advise, "classes": x.classes})
        };
    }
    if whole {
        let (diff, classification) = match &c.analysis {
            None => (Value::Null, Value::Null),
            Some(a) => (
                serde_json::to_value(&a.diff).map_err(ApiError::internal)?,
                serde_json::to_value(&a.classification).map_err(ApiError::internal)?,
            ),
        };
        if let Value::Object(m) = &mut out {
            m.insert("diff".into(), diff);
            m.insert("classification".into(), classification);
        }
    }
    crate::changes::extend_json(c, whole, (names_cap, signals_cap), &mut out)?;
    Ok(out)
}

async fn list_changes(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let p = Params::new(query)?;
    let after = p.integer("after")?;
    let before = p.integer("before")?;
    let limit = p.limit()?;
    let limit_given = p.one("limit")?.is_some();
    let class = p.class()?;
    let server = p.one("server")?.map(str::to_owned);
    if let Some(s) = &server {
        if s.is_empty() || s.chars().count() > MAX_SERVER_NAME_CHARS {
            return Err(bad(format!(
                "server must be a registry name of 1–{MAX_SERVER_NAME_CHARS} characters"
            )));
        }
    }
    let target = p.one("target")?.map(str::to_owned);
    if let Some(t) = &target {
        check_id(t).map_err(|_| bad("target must be 16 lowercase hex digits"))?;
    }
    let body = blocking(move || {
        let targets = target.clone().map(|t| vec![t]);
        let rows = query_changes(
            &state.index.get(),
            &ChangeQuery {
                targets: targets.as_deref(),
                server: server.as_deref(),
                class,
                after,
                before,
                limit: limit + 1,
            },
        )?;
        let has_more = rows.len() > limit as usize;
        let changes = rows
            .into_iter()
            .take(limit as usize)
            .map(|row| change_json(&ChangeView::parse(row)?, &state.base_url, false))
            .collect::<Result<Vec<_>, _>>()?;
        let last = changes.last().and_then(|c| c["id"].as_i64());
        // Forwards, the cursor is where to resume (unchanged when nothing new came); backwards,
        // there is a next page only when this one was not the last.
        let next_cursor = match after {
            Some(a) => Some(last.unwrap_or(a)),
            None if has_more => last,
            None => None,
        };
        let next = next_cursor.map(|c| {
            let mut q = Vec::new();
            if let Some(s) = &server {
                q.push(format!("server={}", encode_query_value(s)));
            }
            if let Some(t) = &target {
                q.push(format!("target={t}"));
            }
            if let Some(c) = class {
                q.push(format!("class={c}"));
            }
            if after.is_some() {
                q.push(format!("after={c}"));
                if let Some(b) = before {
                    q.push(format!("before={b}"));
                }
            } else {
                q.push(format!("before={c}"));
            }
            if limit_given {
                q.push(format!("limit={limit}"));
            }
            format!("{}/api/v1/changes?{}", state.base_url, q.join("&"))
        });
        Ok(json!({
            "changes": changes,
            "nextCursor": next_cursor,
            "hasMore": has_more,
            "next": next,
        }))
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

async fn change_detail(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let valid = !id.is_empty() && id.len() <= 19 && id.bytes().all(|b| b.is_ascii_digit());
    let id: i64 = match id.parse() {
        Ok(n) if valid => n,
        _ => return Err(bad("a change id is a non-negative integer")),
    };
    let body = blocking(move || {
        let row = state
            .index
            .get()
            .change(id)?
            .ok_or_else(|| ApiError::NotFound(format!("no change {id}")))?;
        change_json(&ChangeView::parse(row)?, &state.base_url, true)
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

// ---------------------------------------------------------------------------------------------
// Sensitive-tool globs

/// A sensitive request, read and checked.
struct SensitiveRequest {
    set: ToolSet,
    patterns: Vec<Pattern>,
    servers: Vec<String>,
    policy: Option<&'static Policy>,
}

/// The starter policy's category ids, in order.
fn category_ids() -> Vec<&'static str> {
    policy::STARTER.categories.iter().map(|c| c.id).collect()
}

/// Check the pattern limits, then parse every pattern (a malformed one is a 400 naming it).
fn check_patterns(patterns: &[String]) -> Result<Vec<Pattern>, ApiError> {
    if patterns.len() > MAX_PATTERNS {
        return Err(bad(format!("at most {MAX_PATTERNS} patterns")));
    }
    if let Some(p) = patterns
        .iter()
        .find(|p| p.chars().count() > MAX_PATTERN_CHARS)
    {
        return Err(bad(format!(
            "pattern {:?}… is longer than {MAX_PATTERN_CHARS} characters",
            p.chars().take(20).collect::<String>()
        )));
    }
    sensitive::parse_patterns(patterns).map_err(|e| bad(e.to_string()))
}

/// Check the server names a request gives: at most [`MAX_SERVER_ALIASES`], each 1–
/// [`MAX_SERVER_NAME_CHARS`] characters.
fn check_servers(servers: &[String], what: &str) -> Result<(), ApiError> {
    if servers.len() > MAX_SERVER_ALIASES {
        return Err(bad(format!("at most {MAX_SERVER_ALIASES} {what} names")));
    }
    if servers
        .iter()
        .any(|s| s.is_empty() || s.chars().count() > MAX_SERVER_NAME_CHARS)
    {
        return Err(bad(format!(
            "{what} must be 1–{MAX_SERVER_NAME_CHARS} characters"
        )));
    }
    Ok(())
}

/// The named policy (`starter`, `starter/1`), or a 400 listing the known ones.
fn named_policy(name: &str) -> Result<&'static Policy, ApiError> {
    policy::policy(name).ok_or_else(|| {
        bad(format!(
            "unknown policy {:?}: the policies are starter (the newest), {}",
            name.chars().take(40).collect::<String>(),
            policy::POLICIES
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// Refuse a request whose worst-case matching cost (`sensitive::match_work`) exceeds
/// [`MAX_MATCH_WORK`].
fn check_work(
    set: &ToolSet,
    patterns: &[Pattern],
    policy: Option<&Policy>,
    servers: &ServerNames,
) -> Result<(), ApiError> {
    let work = sensitive::match_work(set, patterns, policy, servers);
    if work > MAX_MATCH_WORK {
        return Err(bad(format!(
            "too much matching: tool-name characters × pattern characters (after case folding) \
             is {work}, above {MAX_MATCH_WORK}; send fewer or shorter patterns, names or servers"
        )));
    }
    Ok(())
}

/// The answer of both sensitive routes: the split, and with a policy its name and categories.
fn split_json(split: &sensitive::Split, servers: &ServerNames) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("sensitive".into(), json!(split.sensitive));
    out.insert("safe".into(), json!(split.safe));
    out.insert("serverNames".into(), json!(servers.names()));
    if let (Some(p), Some(c)) = (split.policy, &split.categories) {
        out.insert("policy".into(), json!(p));
        out.insert("categories".into(), json!(c));
    }
    out
}

/// Member names in a JSON text (already checked to be JSON): the strings followed by `:`.
/// Only strings are skipped over; the grammar was checked by the strict reader.
fn member_names(text: &str) -> usize {
    let s = text.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < s.len() {
        if s[i] != b'"' {
            i += 1;
            continue;
        }
        i += 1;
        while i < s.len() && s[i] != b'"' {
            i += if s[i] == b'\\' { 2 } else { 1 };
        }
        i += 1;
        while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        if s.get(i) == Some(&b':') {
            n += 1;
        }
    }
    n
}

/// Members of every object in `v`, as the strict reader kept them (a repeated name once).
fn kept_members(v: &Json) -> usize {
    match v {
        Json::Object(m) => m.len() + m.iter().map(|(_, v)| kept_members(v)).sum::<usize>(),
        Json::Array(a) => a.iter().map(kept_members).sum(),
        _ => 0,
    }
}

/// Refuse a body in which any object, at any depth, repeats a member name (the crawler's
/// rule: first-wins and last-wins readers would see different tools). `members` are the
/// body's, as `parse_members` read them (every top-level member, repeats included); below the
/// top level the strict reader keeps one value of a repeated name, so the body repeats one
/// there exactly when its text has more member names than the parsed objects kept.
pub(crate) fn refuse_duplicate_members(
    text: &str,
    members: &[tjson::Member<'_>],
) -> Result<(), ApiError> {
    let mut top = std::collections::HashSet::new();
    if let Some(m) = members.iter().find(|m| !top.insert(&m.name)) {
        return Err(bad(format!(
            "the body repeats the member name \"{}\"",
            m.name
        )));
    }
    // Below the top level the reader kept one value per name.
    let kept = members.len()
        + members
            .iter()
            .map(|m| kept_members(&m.value))
            .sum::<usize>();
    if member_names(text) == kept {
        return Ok(());
    }
    for m in members {
        if let Json::Array(values) = &m.value {
            for (i, (value, raw)) in values.iter().zip(&m.raw_elements).enumerate() {
                if member_names(raw) != kept_members(value) {
                    return Err(bad(format!(
                        "\"{}\"[{i}] repeats a member name in an object; such a definition \
                         reads differently in first-wins and last-wins clients",
                        m.name
                    )));
                }
            }
        }
    }
    Err(bad(
        "the body repeats a member name in an object; first-wins and last-wins readers \
         would disagree",
    ))
}

/// The request body, or the JSON error for one over `limit` bytes (413) or unreadable (400).
pub(crate) fn body_or_error(
    body: Result<Bytes, BytesRejection>,
    limit: usize,
) -> Result<Bytes, ApiError> {
    body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge(format!("the body is larger than {limit} bytes"))
        } else {
            bad(format!("the body: {e}"))
        }
    })
}

/// A JSON string member's text, or a 400 for an unpaired surrogate.
fn json_text<'a>(v: &'a Json, what: &str) -> Result<&'a str, ApiError> {
    v.as_str()
        .ok_or_else(|| bad(format!("{what} holds an unpaired surrogate")))
}

fn parse_sensitive(body: &[u8]) -> Result<SensitiveRequest, ApiError> {
    let text = std::str::from_utf8(body).map_err(|_| bad("the body is not UTF-8"))?;
    let members = tjson::parse_members(text, "tools").map_err(|e| bad(format!("the body: {e}")))?;
    refuse_duplicate_members(text, &members)?;
    let mut tools = None;
    let mut patterns = None;
    let mut servers = Vec::new();
    let mut policy = None;
    let mut seen = std::collections::HashSet::new();
    for m in members {
        let Some(name) = m.name.as_str().map(str::to_owned) else {
            continue;
        };
        if matches!(name.as_str(), "tools" | "patterns" | "server" | "policy")
            && !seen.insert(name.clone())
        {
            return Err(bad(format!("\"{name}\" is given more than once")));
        }
        match name.as_str() {
            "tools" => {
                let Json::Array(values) = m.value else {
                    return Err(bad("\"tools\" must be an array"));
                };
                if values.len() > MAX_SENSITIVE_TOOLS {
                    return Err(bad(format!(
                        "\"tools\" holds more than {MAX_SENSITIVE_TOOLS} entries"
                    )));
                }
                tools = Some(
                    values
                        .into_iter()
                        .zip(m.raw_elements)
                        .map(|(value, raw)| Tool {
                            value,
                            raw: raw.into(),
                        })
                        .collect::<Vec<_>>(),
                );
            }
            "patterns" => {
                let Json::Array(values) = &m.value else {
                    return Err(bad("\"patterns\" must be an array of strings"));
                };
                if values.len() > MAX_PATTERNS {
                    return Err(bad(format!("at most {MAX_PATTERNS} patterns")));
                }
                let list = values
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("\"patterns\" must be an array of strings"))?;
                patterns = Some(list);
            }
            "server" => match &m.value {
                Json::Null => {}
                Json::String(_) => servers.push(json_text(&m.value, "\"server\"")?.to_owned()),
                Json::Array(values) => {
                    if values.len() > MAX_SERVER_ALIASES {
                        return Err(bad(format!(
                            "at most {MAX_SERVER_ALIASES} \"server\" names"
                        )));
                    }
                    for v in values {
                        if !matches!(v, Json::String(_)) {
                            return Err(bad("\"server\" must be a string or an array of strings"));
                        }
                        servers.push(json_text(v, "\"server\"")?.to_owned());
                    }
                }
                _ => return Err(bad("\"server\" must be a string or an array of strings")),
            },
            "policy" => match &m.value {
                Json::Null => {}
                Json::String(_) => policy = Some(named_policy(json_text(&m.value, "\"policy\"")?)?),
                _ => return Err(bad("\"policy\" must be a string (\"starter\") or null")),
            },
            _ => {}
        }
    }
    check_servers(&servers, "\"server\"")?;
    let tools = tools.ok_or_else(|| bad("send \"tools\": an array of tool definitions"))?;
    let patterns = match (patterns, policy) {
        (Some(p), _) => p,
        (None, Some(_)) => Vec::new(),
        (None, None) => {
            return Err(bad(
                "send \"patterns\": an array of name globs (may be empty), or \"policy\": \"starter\"",
            ));
        }
    };
    let patterns = check_patterns(&patterns)?;
    Ok(SensitiveRequest {
        set: ToolSet {
            tools,
            shape: Shape::Object,
            next_cursor: None,
        },
        patterns,
        servers,
        policy,
    })
}

async fn post_sensitive(body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let body = body_or_error(body, MAX_SENSITIVE_BODY_BYTES)?;
    let out = blocking(move || {
        let req = parse_sensitive(&body)?;
        let names = ServerNames::new(&req.servers);
        check_work(&req.set, &req.patterns, req.policy, &names)?;
        let compiled = req.policy.map(Policy::compile);
        let split =
            sensitive::classify_sensitive(&req.set, &req.patterns, compiled.as_ref(), &names);
        Ok(split_json(&split, &names))
    })
    .await?;
    Ok(axum::Json(Value::Object(out)).into_response())
}

async fn server_sensitive(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    let p = Params::new(query)?;
    let patterns: Vec<String> = p.all("pattern").into_iter().map(str::to_owned).collect();
    let patterns = check_patterns(&patterns)?;
    let aliases: Vec<String> = p.all("server").into_iter().map(str::to_owned).collect();
    check_servers(&aliases, "server")?;
    let policy = p.one("policy")?.map(named_policy).transpose()?;
    let st = state.clone();
    let (target, title) = blocking(move || {
        let index = st.index.get();
        let target = target_or_404(&index, &id)?;
        let title = index.server(&target.server)?.and_then(|s| s.title);
        Ok((target, title))
    })
    .await?;
    let current = state
        .tool_sets
        .current(&state, &target)
        .await?
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "toolmark has observed no tool set of server {}",
                target.id
            ))
        })?;
    let body = blocking(move || {
        let set = &current.names;
        let names = ServerNames::of_target(&target.server, title.as_deref(), &aliases);
        check_work(set, &patterns, policy, &names)?;
        let compiled = policy.map(Policy::compile);
        let split = sensitive::classify_sensitive(set, &patterns, compiled.as_ref(), &names);
        let mut out = Map::new();
        out.insert("id".into(), json!(target.id));
        out.insert("name".into(), json!(target.server));
        out.insert("endpoint".into(), json!(target.target));
        out.insert("entry".into(), json!(target.last_ok_entry));
        out.insert("full".into(), json!(target.current_full));
        out.extend(split_json(&split, &names));
        Ok(Value::Object(out))
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

async fn census(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let body = blocking(move || {
        let c = state.index.get().census_summary()?;
        let base = &state.base_url;
        let category = |k: &toolmark_index::CategoryCount| {
            let summary = policy::STARTER.category(&k.category).map(|c| c.summary);
            json!({
                "category": k.category,
                "summary": summary,
                "targets": k.targets,
                "servers": k.servers,
                "list": format!("{base}/api/v1/servers?sensitive={}", k.category),
            })
        };
        Ok(json!({
            "policy": c.policy,
            "observedTargets": c.observed_targets,
            "any": category(&c.any),
            "categories": c.categories.iter().map(category).collect::<Vec<_>>(),
        }))
    })
    .await?;
    Ok(axum::Json(body).into_response())
}
