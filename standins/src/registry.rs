//! A loopback stand-in of the official MCP registry's server list.
//!
//! [`RegistryStandIn::start`] serves `GET /v0.1/servers` (and the development alias
//! `/v0/servers`) on `127.0.0.1:<ephemeral port>` from an in-memory array of `ServerResponse`
//! items (`{"server": {...}, "_meta": {...}}`), served verbatim: the stand-in reads an item's
//! `server.name`, `server.version` and official `_meta` block to filter and page, and never
//! re-shapes what it sends.
//!
//! The query parameters follow the real registry (its OpenAPI document and list handler):
//!
//! | param | behaviour |
//! | --- | --- |
//! | `limit` | default [`DEFAULT_LIMIT`], 1..=[`MAX_LIMIT`]; anything else is a 400 |
//! | `cursor` | `name:version` of the last item of the previous page (items are sorted by name, then version); a cursor naming no item is a 400 |
//! | `version` | `latest` keeps items whose official `isLatest` is true; any other value is an exact version |
//! | `updated_since` | RFC 3339; keeps items whose official `updatedAt` is later; forces `include_deleted` (and `include_deleted=false` with it is a 400); a bad timestamp is a 400 |
//! | `include_deleted` | `true`/`false`, default false: items whose official `status` is `deleted` are hidden |
//! | `search` | case-insensitive substring of the server name |
//!
//! Answers are `{"servers": [...], "metadata": {"nextCursor": "...", "count": N}}`, with no
//! `nextCursor` on the last page; errors are `{"title", "status", "detail"}` JSON objects. Unknown
//! parameters are ignored; when a parameter is repeated the first value counts.
//!
//! [`Faults`] make it misbehave on purpose, to test a client's politeness and limits. Every
//! request to any path is recorded ([`RegistryStandIn::requests`]).
//!
//! The data can be swapped ([`RegistryStandIn::set_items`], "the next day") or edited
//! ([`RegistryStandIn::set_status`], [`RegistryStandIn::publish`], [`RegistryStandIn::modify`])
//! while the stand-in runs.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// Page size when a request gives no `limit` (the real registry's default).
pub const DEFAULT_LIMIT: usize = 30;

/// Largest `limit` accepted (the real registry's maximum); larger values are a 400.
pub const MAX_LIMIT: usize = 100;

/// Requests kept by [`RegistryStandIn::requests`]; older ones are dropped first. A daily
/// harvest of today's registry is a few hundred requests; this bounds the memory of a
/// long-running demo or benchmark.
pub const MAX_RECORDED_REQUESTS: usize = 100_000;

/// How long [`RegistryStandIn::shutdown`] waits for open connections to finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The `_meta` key of the registry's own metadata block in each item.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// `nextCursor` sent on every page when [`Faults::repeat_cursor`] is set; as a request's cursor
/// it means "from the start".
pub const REPEAT_CURSOR: &str = "~repeat";

/// Prefix of the made-up cursors of [`Faults::endless`]; such a cursor yields an empty page.
pub const ENDLESS_CURSOR_PREFIX: &str = "~endless-";

/// Misbehaviour to inject. The default is a well-behaved registry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// `(sustained requests per second, burst)`: a token bucket over all list requests, like
    /// the registry's NGINX ingress (1 rps, burst 5). A request that finds the bucket empty is
    /// answered 429 with `Retry-After: 1` and does not use a token.
    pub rate_limit: Option<(u32, u32)>,
    /// `(n, status, retry_after_secs)`: every n-th list request (counting every request to the
    /// list endpoints since [`RegistryStandIn::set_faults`], 1-based) is answered with `status`
    /// (e.g. 429 or 503), with a `Retry-After` header when given. `n = 0` disables it.
    pub fail_every: Option<(u32, u16, Option<u64>)>,
    /// Every page carries the same `nextCursor` ([`REPEAT_CURSOR`]), which pages from the start
    /// again: a client must notice the repeat.
    pub repeat_cursor: bool,
    /// Delay added before every answer is sent (the answer itself is computed on arrival).
    pub latency: Duration,
    /// Every page has a fresh `nextCursor`, forever: after the real data, empty pages with made-up
    /// cursors ([`ENDLESS_CURSOR_PREFIX`]). A client must stop at its page cap.
    pub endless: bool,
    /// List requests are answered 200 with a body that is not JSON.
    pub garbage: bool,
}

/// One request the stand-in answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// When the request arrived (before any [`Faults::latency`]).
    pub at: Instant,
    /// The request's path and query exactly as received (still percent-encoded).
    pub path_and_query: String,
    /// The status it was answered with.
    pub status: u16,
}

/// Read a snapshot: a bare JSON array of `ServerResponse` items, optionally after a UTF-8 BOM
/// (the shape of the mcp-insights `servers.json` mirror). Anything else is `InvalidData`.
pub fn load_snapshot(path: impl AsRef<Path>) -> io::Result<Vec<Value>> {
    parse_snapshot(&std::fs::read(path)?)
}

/// [`load_snapshot`] on bytes already read (e.g. embedded in a binary).
pub fn parse_snapshot(bytes: &[u8]) -> io::Result<Vec<Value>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match serde_json::from_slice(bytes) {
        Ok(Value::Array(items)) => Ok(items),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "snapshot is not a JSON array",
        )),
        Err(e) => Err(io::Error::new(io::ErrorKind::InvalidData, e)),
    }
}

/// A running stand-in. Stops on [`shutdown`](RegistryStandIn::shutdown) or when dropped.
pub struct RegistryStandIn {
    addr: SocketAddr,
    shared: Arc<Shared>,
    serving: crate::serving::Serving,
}

impl std::fmt::Debug for RegistryStandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryStandIn")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RegistryStandIn {
    /// Bind `127.0.0.1:0` and serve `items` (in any order; they are sorted by name, then
    /// version). Each (name, version) should occur once, as in the registry: of two equal ones,
    /// the second is skipped when a page ends at the first. Must be called within a Tokio
    /// runtime, which runs the server.
    pub async fn start(items: Vec<Value>) -> io::Result<RegistryStandIn> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(ServerState {
                items: index(items),
                faults: Faults::default(),
                bucket: None,
                list_requests: 0,
                endless_serial: 0,
                requests: VecDeque::new(),
            }),
        });
        let app = Router::new()
            .route("/v0.1/servers", get(list))
            .route("/v0/servers", get(list))
            .fallback(not_found)
            .with_state(shared.clone());
        Ok(RegistryStandIn {
            addr,
            shared,
            serving: crate::serving::Serving::start(listener, app),
        })
    }

    /// The base URL, `http://127.0.0.1:<port>` (no trailing slash); clients append
    /// `/v0.1/servers`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replace the data (for example with the next day's snapshot). Takes effect for the next
    /// request; cursors of the old data that name no item of the new data become 400s.
    pub fn set_items(&self, items: Vec<Value>) {
        self.shared.lock().items = index(items);
    }

    /// The current items, sorted by name, then version.
    pub fn items(&self) -> Vec<Value> {
        self.shared
            .lock()
            .items
            .iter()
            .map(|e| e.value.clone())
            .collect()
    }

    /// Edit the items in place; they are re-sorted afterwards.
    pub fn modify(&self, edit: impl FnOnce(&mut Vec<Value>)) {
        let mut state = self.shared.lock();
        let mut items: Vec<Value> = std::mem::take(&mut state.items)
            .into_iter()
            .map(|e| e.value)
            .collect();
        edit(&mut items);
        state.items = index(items);
    }

    /// Set the official `status` (`active`, `deprecated`, `deleted`) of every version of
    /// `name`, and move their official `updatedAt` to now, as the registry does when a status
    /// changes (so an `updated_since` delta sees the change). Returns how many items changed.
    pub fn set_status(&self, name: &str, status: &str) -> usize {
        let now = format_rfc3339(SystemTime::now());
        let mut changed = 0;
        self.modify(|items| {
            for item in items.iter_mut() {
                if item.pointer("/server/name").and_then(Value::as_str) != Some(name) {
                    continue;
                }
                let Some(meta) = item.as_object_mut().map(|o| {
                    o.entry("_meta")
                        .or_insert_with(|| json!({}))
                        .as_object_mut()
                        .map(|m| m.entry(OFFICIAL_META).or_insert_with(|| json!({})))
                }) else {
                    continue;
                };
                if let Some(Value::Object(official)) = meta {
                    official.insert("status".into(), Value::String(status.into()));
                    official.insert("updatedAt".into(), Value::String(now.clone()));
                    changed += 1;
                }
            }
        });
        changed
    }

    /// Publish a version as the registry does: `item` (a `ServerResponse`) becomes the latest
    /// version of its `server.name`, with the official block set to `active`, `isLatest: true`
    /// and `publishedAt` = `updatedAt` = now; the version that was latest until then keeps its
    /// `status` but flips `isLatest` to false and its `updatedAt` moves to now (what the registry
    /// does when a new version is published, seen between the December 2025 snapshots), so an
    /// `updated_since` delta returns both. An item of the same name and version is replaced.
    pub fn publish(&self, mut item: Value) {
        let now = format_rfc3339(SystemTime::now());
        let text = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_owned);
        let name = text(&item, "/server/name");
        let version = text(&item, "/server/version");
        if let Some(object) = item.as_object_mut() {
            let meta = object.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(
                    OFFICIAL_META.into(),
                    json!({"status": "active", "publishedAt": now, "updatedAt": now, "isLatest": true}),
                );
            }
        }
        self.modify(|items| {
            items.retain(|i| {
                text(i, "/server/name") != name || text(i, "/server/version") != version
            });
            for old in items.iter_mut() {
                if text(old, "/server/name") != name {
                    continue;
                }
                let latest =
                    old.pointer("/_meta/io.modelcontextprotocol.registry~1official/isLatest");
                if latest != Some(&Value::Bool(true)) {
                    continue;
                }
                if let Some(Value::Object(official)) =
                    old.pointer_mut("/_meta/io.modelcontextprotocol.registry~1official")
                {
                    official.insert("isLatest".into(), Value::Bool(false));
                    official.insert("updatedAt".into(), Value::String(now.clone()));
                }
            }
            items.push(item);
        });
    }

    /// Set the faults to inject from the next request on. Resets the rate-limit bucket (to
    /// full) and the `fail_every` count.
    pub fn set_faults(&self, faults: Faults) {
        let mut state = self.shared.lock();
        state.bucket = faults
            .rate_limit
            .map(|(rate, burst)| Bucket::new(f64::from(rate), f64::from(burst.max(1))));
        state.list_requests = 0;
        state.faults = faults;
    }

    /// Every request answered so far (at most [`MAX_RECORDED_REQUESTS`], oldest dropped
    /// first), in the order their answers were decided.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.lock().requests.iter().cloned().collect()
    }

    /// Forget the recorded requests.
    pub fn clear_requests(&self) {
        self.shared.lock().requests.clear();
    }

    /// Stop accepting connections, let open ones finish (at most [`SHUTDOWN_GRACE`]), and
    /// return.
    pub async fn shutdown(mut self) {
        self.serving.shutdown(SHUTDOWN_GRACE).await;
    }
}

// ---- state ----

struct Shared {
    state: Mutex<ServerState>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ServerState> {
        // A panic while holding the lock leaves consistent data (every update is a whole
        // assignment), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

struct ServerState {
    /// Sorted by (name, version).
    items: Vec<Entry>,
    faults: Faults,
    bucket: Option<Bucket>,
    list_requests: u64,
    endless_serial: u64,
    requests: VecDeque<RequestRecord>,
}

impl ServerState {
    fn record(&mut self, at: Instant, uri: &Uri, status: StatusCode) {
        if self.requests.len() >= MAX_RECORDED_REQUESTS {
            self.requests.pop_front();
        }
        let path_and_query = uri
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_else(|| uri.path().to_owned());
        self.requests.push_back(RequestRecord {
            at,
            path_and_query,
            status: status.as_u16(),
        });
    }
}

/// An item and the fields the list filters on.
struct Entry {
    name: String,
    version: String,
    is_latest: bool,
    deleted: bool,
    /// Official `updatedAt` in nanoseconds since the Unix epoch; `None` when absent or invalid
    /// (such an item never matches `updated_since`).
    updated_at: Option<i128>,
    value: Value,
}

impl Entry {
    fn key(&self) -> (&str, &str) {
        (&self.name, &self.version)
    }
}

fn index(items: Vec<Value>) -> Vec<Entry> {
    let mut entries: Vec<Entry> = items
        .into_iter()
        .map(|value| {
            let text = |p: &str| value.pointer(p).and_then(Value::as_str).map(str::to_owned);
            let official = value.get("_meta").and_then(|m| m.get(OFFICIAL_META));
            let field = |k: &str| official.and_then(|o| o.get(k));
            Entry {
                name: text("/server/name").unwrap_or_default(),
                version: text("/server/version").unwrap_or_default(),
                is_latest: field("isLatest").and_then(Value::as_bool).unwrap_or(false),
                deleted: field("status").and_then(Value::as_str) == Some("deleted"),
                updated_at: field("updatedAt")
                    .and_then(Value::as_str)
                    .and_then(parse_rfc3339),
                value,
            }
        })
        .collect();
    entries.sort_by(|a, b| a.key().cmp(&b.key()));
    entries
}

/// A token bucket: `burst` tokens, refilled at `rate` per second.
struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn new(rate: f64, burst: f64) -> Bucket {
        Bucket {
            rate,
            burst,
            tokens: burst,
            last: Instant::now(),
        }
    }

    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

// ---- handlers ----

/// A decided answer: status, optional `Retry-After` seconds, JSON (or garbage) body.
struct Answer {
    status: StatusCode,
    retry_after: Option<u64>,
    body: String,
}

impl Answer {
    fn json(status: StatusCode, body: &Value) -> Answer {
        Answer {
            status,
            retry_after: None,
            body: body.to_string(),
        }
    }

    fn error(status: StatusCode, detail: &str) -> Answer {
        Answer::json(
            status,
            &json!({
                "title": status.canonical_reason().unwrap_or("Error"),
                "status": status.as_u16(),
                "detail": detail,
            }),
        )
    }

    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            self.body,
        )
            .into_response();
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                secs.to_string().parse().expect("digits"),
            );
        }
        response
    }
}

async fn list(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let at = Instant::now();
    let (answer, latency) = {
        let mut state = shared.lock();
        let answer = decide(&mut state, at, query.map(|Query(q)| q));
        state.record(at, &uri, answer.status);
        (answer, state.faults.latency)
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    answer.into_response()
}

async fn not_found(State(shared): State<Arc<Shared>>, uri: Uri) -> Response {
    let answer = Answer::error(StatusCode::NOT_FOUND, "no such endpoint in this stand-in");
    shared.lock().record(Instant::now(), &uri, answer.status);
    answer.into_response()
}

/// The parsed list query.
#[derive(Default)]
struct ListQuery {
    limit: Option<String>,
    cursor: Option<String>,
    version: Option<String>,
    updated_since: Option<String>,
    include_deleted: Option<String>,
    search: Option<String>,
}

impl ListQuery {
    fn parse(pairs: Vec<(String, String)>) -> ListQuery {
        let mut q = ListQuery::default();
        for (k, v) in pairs {
            let slot = match k.as_str() {
                "limit" => &mut q.limit,
                "cursor" => &mut q.cursor,
                "version" => &mut q.version,
                "updated_since" => &mut q.updated_since,
                "include_deleted" => &mut q.include_deleted,
                "search" => &mut q.search,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v);
            }
        }
        q
    }
}

fn decide(
    state: &mut ServerState,
    now: Instant,
    query: Result<Vec<(String, String)>, QueryRejection>,
) -> Answer {
    state.list_requests += 1;
    if let Some(bucket) = &mut state.bucket {
        if !bucket.take(now) {
            let mut answer = Answer::error(StatusCode::TOO_MANY_REQUESTS, "rate limit exceeded");
            answer.retry_after = Some(1);
            return answer;
        }
    }
    if let Some((n, status, retry_after)) = state.faults.fail_every {
        if n > 0 && state.list_requests % u64::from(n) == 0 {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut answer = Answer::error(status, "injected failure");
            answer.retry_after = retry_after;
            return answer;
        }
    }
    if state.faults.garbage {
        return Answer {
            status: StatusCode::OK,
            retry_after: None,
            body: "<html><body>this is not JSON</body></html>".into(),
        };
    }
    let query = match query {
        Ok(pairs) => ListQuery::parse(pairs),
        Err(e) => return Answer::error(StatusCode::BAD_REQUEST, &e.body_text()),
    };
    match page(state, &query) {
        Ok(body) => Answer::json(StatusCode::OK, &body),
        Err(detail) => Answer::error(StatusCode::BAD_REQUEST, &detail),
    }
}

/// The page `query` asks for, or the detail of a 400.
fn page(state: &mut ServerState, query: &ListQuery) -> Result<Value, String> {
    let limit = match &query.limit {
        None => DEFAULT_LIMIT,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => return Err(format!("limit must be an integer from 1 to {MAX_LIMIT}")),
        },
    };
    let include_deleted = match query.include_deleted.as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err("include_deleted must be true or false".into()),
    };
    let since = match &query.updated_since {
        None => None,
        Some(text) => match parse_rfc3339(text) {
            Some(t) => Some(t),
            None => return Err("updated_since must be an RFC 3339 timestamp".into()),
        },
    };
    let include_deleted = match (since, include_deleted) {
        (Some(_), Some(false)) => {
            return Err("include_deleted cannot be false with updated_since".into());
        }
        (Some(_), _) => true,
        (None, given) => given.unwrap_or(false),
    };
    let search = query.search.as_ref().map(|s| s.to_lowercase());

    let matches = |e: &Entry| {
        (include_deleted || !e.deleted)
            && match query.version.as_deref() {
                None => true,
                Some("latest") => e.is_latest,
                Some(v) => e.version == v,
            }
            && since.is_none_or(|s| e.updated_at.is_some_and(|u| u > s))
            && search
                .as_ref()
                .is_none_or(|s| e.name.to_lowercase().contains(s.as_str()))
    };
    let filtered: Vec<&Entry> = state.items.iter().filter(|e| matches(e)).collect();

    let start = match query.cursor.as_deref() {
        None | Some(REPEAT_CURSOR) => 0,
        Some(c) if c.starts_with(ENDLESS_CURSOR_PREFIX) => filtered.len(),
        Some(c) => {
            let Some((name, version)) = c.split_once(':') else {
                return Err("invalid cursor".into());
            };
            let known = state
                .items
                .binary_search_by(|e| e.key().cmp(&(name, version)))
                .is_ok();
            if !known {
                return Err("invalid cursor".into());
            }
            filtered.partition_point(|e| e.key() <= (name, version))
        }
    };
    let end = (start + limit).min(filtered.len());
    let servers: Vec<Value> = filtered[start..end]
        .iter()
        .map(|e| e.value.clone())
        .collect();
    let real_next = (end < filtered.len()).then(|| {
        let last = filtered[end - 1];
        format!("{}:{}", last.name, last.version)
    });
    let next = if state.faults.repeat_cursor {
        Some(REPEAT_CURSOR.to_owned())
    } else if state.faults.endless {
        real_next.or_else(|| {
            state.endless_serial += 1;
            Some(format!("{ENDLESS_CURSOR_PREFIX}{}", state.endless_serial))
        })
    } else {
        real_next
    };
    let mut metadata = serde_json::Map::new();
    if let Some(next) = next {
        metadata.insert("nextCursor".into(), Value::String(next));
    }
    metadata.insert("count".into(), json!(servers.len()));
    Ok(json!({ "servers": servers, "metadata": metadata }))
}

// ---- RFC 3339 ----

/// Parse `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` into nanoseconds since the Unix epoch
/// (`t` and `z` may be lower case). `None` for anything else.
pub fn parse_rfc3339(text: &str) -> Option<i128> {
    let upper = text.to_ascii_uppercase();
    // humantime reads `Z` times; an explicit offset is moved into the result here.
    let (utc, offset_secs) = match upper.len().checked_sub(6).map(|i| upper.split_at(i)) {
        Some((time, off))
            if matches!(off.as_bytes()[0], b'+' | b'-') && off.as_bytes()[3] == b':' =>
        {
            let h: i64 = off.get(1..3)?.parse().ok()?;
            let m: i64 = off.get(4..6)?.parse().ok()?;
            if h > 23
                || m > 59
                || !off[1..3]
                    .bytes()
                    .chain(off[4..6].bytes())
                    .all(|c| c.is_ascii_digit())
            {
                return None;
            }
            let secs = h * 3600 + m * 60;
            (
                format!("{time}Z"),
                if off.starts_with('+') { secs } else { -secs },
            )
        }
        _ => (upper, 0),
    };
    if utc.len() < 20 || utc.as_bytes()[10] != b'T' {
        return None;
    }
    let t = humantime::parse_rfc3339(&utc).ok()?;
    let nanos = t.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_nanos() as i128;
    Some(nanos - i128::from(offset_secs) * 1_000_000_000)
}

/// `time` as RFC 3339 UTC with microseconds, the registry's own format
/// (`2025-12-17T05:04:11.081794Z`).
pub fn format_rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_micros(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str, version: &str, latest: bool, updated: &str) -> Value {
        json!({
            "server": {"name": name, "version": version, "description": "d"},
            "_meta": {OFFICIAL_META: {
                "status": "active", "publishedAt": updated, "updatedAt": updated,
                "isLatest": latest,
            }},
        })
    }

    fn sample() -> Vec<Value> {
        vec![
            item("b.example/two", "1.0.0", false, "2025-12-01T00:00:00Z"),
            item("a.example/one", "1.0.0", true, "2025-12-01T00:00:00Z"),
            item("b.example/two", "2.0.0", true, "2025-12-02T00:00:00.5Z"),
            item(
                "c.example/Three",
                "0.1.0",
                true,
                "2025-12-03T00:00:00+01:00",
            ),
        ]
    }

    async fn get(s: &RegistryStandIn, path_and_query: &str) -> (u16, Value, Option<String>) {
        let r = reqwest::get(format!("{}{path_and_query}", s.url()))
            .await
            .unwrap();
        let status = r.status().as_u16();
        let retry = r
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let body = r.bytes().await.unwrap();
        let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        (status, value, retry)
    }

    fn names(page: &Value) -> Vec<String> {
        page["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                format!(
                    "{}:{}",
                    i["server"]["name"].as_str().unwrap(),
                    i["server"]["version"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn rfc3339_round_trip_and_rejects() {
        let t = parse_rfc3339("2025-12-17T05:04:11.081794Z").unwrap();
        assert_eq!(t, 1_765_947_851_081_794_000);
        assert_eq!(
            parse_rfc3339("2025-12-17T06:04:11.081794+01:00"),
            Some(t),
            "offsets are applied"
        );
        let time = SystemTime::UNIX_EPOCH + Duration::from_nanos(t as u64);
        assert_eq!(format_rfc3339(time), "2025-12-17T05:04:11.081794Z");
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2024-02-29t23:59:59.5z"),
            Some(1_709_251_199_500_000_000)
        );
        for bad in [
            "",
            "2025-12-17",
            "2025-12-17T05:04:11",
            "2025-12-17 05:04:11Z",
            "2025-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2025-12-17T24:00:00Z",
            "2025-12-17T05:04:11+0100",
            "2025-12-17T05:04:11Zjunk",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
    }

    #[tokio::test]
    async fn pages_filters_and_rejects_bad_queries() {
        let s = RegistryStandIn::start(sample()).await.unwrap();
        let (status, page, _) = get(&s, "/v0.1/servers?limit=2").await;
        assert_eq!(status, 200);
        assert_eq!(names(&page), ["a.example/one:1.0.0", "b.example/two:1.0.0"]);
        assert_eq!(page["metadata"]["count"], 2);
        let cursor = page["metadata"]["nextCursor"].as_str().unwrap().to_owned();
        assert_eq!(cursor, "b.example/two:1.0.0");
        let (_, page, _) = get(
            &s,
            &format!("/v0/servers?limit=2&cursor={}", cursor.replace('/', "%2F")),
        )
        .await;
        assert_eq!(
            names(&page),
            ["b.example/two:2.0.0", "c.example/Three:0.1.0"]
        );
        assert!(page["metadata"].get("nextCursor").is_none(), "last page");

        let (_, page, _) = get(&s, "/v0.1/servers?version=latest").await;
        assert_eq!(page["metadata"]["count"], 3);
        let (_, page, _) = get(&s, "/v0.1/servers?version=1.0.0").await;
        assert_eq!(page["metadata"]["count"], 2);
        let (_, page, _) = get(&s, "/v0.1/servers?search=THREE").await;
        assert_eq!(names(&page), ["c.example/Three:0.1.0"]);
        // 2025-12-03T00:00:00+01:00 is 2025-12-02T23:00:00Z.
        let (_, page, _) = get(&s, "/v0.1/servers?updated_since=2025-12-02T00:00:00.4Z").await;
        assert_eq!(
            names(&page),
            ["b.example/two:2.0.0", "c.example/Three:0.1.0"]
        );

        for bad in [
            "limit=0",
            "limit=101",
            "limit=x",
            "cursor=nope",
            "cursor=z.example%2Fx%3A1",
            "updated_since=yesterday",
            "updated_since=2025-12-02T00:00:00Z&include_deleted=false",
            "include_deleted=maybe",
        ] {
            let (status, body, _) = get(&s, &format!("/v0.1/servers?{bad}")).await;
            assert_eq!(status, 400, "{bad}");
            assert_eq!(body["status"], 400);
        }
        let (status, _, _) = get(&s, "/v0.1/elsewhere").await;
        assert_eq!(status, 404);
        let recorded = s.requests();
        assert_eq!(recorded.len(), 15);
        assert_eq!(recorded[0].path_and_query, "/v0.1/servers?limit=2");
        assert_eq!(recorded.last().unwrap().status, 404);
        s.shutdown().await;
    }

    #[tokio::test]
    async fn deleted_items_and_swaps() {
        let s = RegistryStandIn::start(sample()).await.unwrap();
        assert_eq!(s.set_status("b.example/two", "deleted"), 2);
        assert_eq!(s.set_status("nobody.example/x", "deleted"), 0);
        let (_, page, _) = get(&s, "/v0.1/servers").await;
        assert_eq!(
            names(&page),
            ["a.example/one:1.0.0", "c.example/Three:0.1.0"]
        );
        let (_, page, _) = get(&s, "/v0.1/servers?include_deleted=true").await;
        assert_eq!(page["metadata"]["count"], 4);
        // The status change moved updatedAt to now, so a delta sees it.
        let (_, page, _) = get(&s, "/v0.1/servers?updated_since=2025-12-30T00:00:00Z").await;
        assert_eq!(names(&page), ["b.example/two:1.0.0", "b.example/two:2.0.0"]);
        s.set_items(vec![item(
            "z.example/new",
            "1",
            true,
            "2025-12-05T00:00:00Z",
        )]);
        let (_, page, _) = get(&s, "/v0.1/servers").await;
        assert_eq!(names(&page), ["z.example/new:1"]);
        assert_eq!(s.items().len(), 1);
    }

    #[tokio::test]
    async fn publishing_flips_the_old_latest_and_both_show_in_a_delta() {
        let s = RegistryStandIn::start(sample()).await.unwrap();
        s.publish(item(
            "b.example/two",
            "3.0.0",
            false,
            "2020-01-01T00:00:00Z",
        ));
        let (_, page, _) = get(&s, "/v0.1/servers?version=latest").await;
        assert_eq!(
            names(&page),
            [
                "a.example/one:1.0.0",
                "b.example/two:3.0.0",
                "c.example/Three:0.1.0"
            ]
        );
        let (_, page, _) = get(&s, "/v0.1/servers?updated_since=2025-12-30T00:00:00Z").await;
        assert_eq!(names(&page), ["b.example/two:2.0.0", "b.example/two:3.0.0"]);
        let official = |i: usize| page["servers"][i]["_meta"][OFFICIAL_META].clone();
        assert_eq!(official(0)["isLatest"], false);
        assert_eq!(official(1)["isLatest"], true);
        assert_eq!(official(1)["publishedAt"], official(1)["updatedAt"]);
        // Publishing the same version again replaces it.
        s.publish(item("b.example/two", "3.0.0", true, "2020-01-01T00:00:00Z"));
        assert_eq!(s.items().len(), 5);
    }

    #[tokio::test]
    async fn faults() {
        let s = RegistryStandIn::start(sample()).await.unwrap();

        s.set_faults(Faults {
            rate_limit: Some((1, 2)),
            ..Faults::default()
        });
        let mut statuses = Vec::new();
        for _ in 0..3 {
            let (status, _, retry) = get(&s, "/v0.1/servers").await;
            statuses.push((status, retry));
        }
        assert_eq!(
            statuses,
            [(200, None), (200, None), (429, Some("1".to_owned()))]
        );

        s.set_faults(Faults {
            fail_every: Some((2, 503, Some(7))),
            ..Faults::default()
        });
        let mut statuses = Vec::new();
        for _ in 0..4 {
            let (status, _, retry) = get(&s, "/v0.1/servers").await;
            statuses.push((status, retry));
        }
        assert_eq!(
            statuses,
            [
                (200, None),
                (503, Some("7".into())),
                (200, None),
                (503, Some("7".into()))
            ]
        );

        s.set_faults(Faults {
            repeat_cursor: true,
            ..Faults::default()
        });
        let (_, page, _) = get(&s, "/v0.1/servers?limit=1").await;
        assert_eq!(page["metadata"]["nextCursor"], REPEAT_CURSOR);
        let (_, again, _) = get(&s, "/v0.1/servers?limit=1&cursor=~repeat").await;
        assert_eq!(again, page);

        s.set_faults(Faults {
            endless: true,
            ..Faults::default()
        });
        let (_, page, _) = get(&s, "/v0.1/servers?limit=100").await;
        assert_eq!(page["metadata"]["count"], 4);
        let c1 = page["metadata"]["nextCursor"].as_str().unwrap().to_owned();
        let (_, page, _) = get(&s, &format!("/v0.1/servers?cursor={c1}")).await;
        assert_eq!(page["metadata"]["count"], 0);
        let c2 = page["metadata"]["nextCursor"].as_str().unwrap().to_owned();
        assert!(c1 != c2 && c2.starts_with(ENDLESS_CURSOR_PREFIX));

        s.set_faults(Faults {
            garbage: true,
            latency: Duration::from_millis(200),
            ..Faults::default()
        });
        let started = Instant::now();
        let (status, body, _) = get(&s, "/v0.1/servers").await;
        assert_eq!((status, body), (200, Value::Null));
        assert!(started.elapsed() >= Duration::from_millis(200));
    }

    #[test]
    fn snapshot_loading() {
        let dir = std::env::temp_dir().join(format!("standins-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("snap.json");
        std::fs::write(&path, b"\xEF\xBB\xBF[{\"server\":{}}]").unwrap();
        assert_eq!(load_snapshot(&path).unwrap().len(), 1);
        std::fs::write(&path, b"{}").unwrap();
        assert_eq!(
            load_snapshot(&path).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        std::fs::remove_dir_all(&dir).unwrap();

        let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/corpus/registry/mcp-insights-servers-2025-12-18T0842Z.json");
        match load_snapshot(&corpus) {
            Ok(items) => assert_eq!(items.len(), 2_794),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                eprintln!("note: corpus not found at {}; skipped", corpus.display());
            }
            Err(e) => panic!("{e}"),
        }
    }
}
