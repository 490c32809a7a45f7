//! Stored observation documents: the bounded cache of what pages show of a target's current
//! tool set ([`ToolSetCache`]), and `GET /api/v1/documents/{sri}`, which streams a document
//! from the blob store by its content address.
//!
//! A tool set may be as large as the crawler's cap (16 MiB). Reading, verifying and parsing it
//! costs several times its size in memory and a good part of a second, so it is done once per
//! content address (the document's `raw` SRI, which the blob store verifies, with the tool
//! set's full digest checked against the index once), by one request however many ask at the
//! same time, and what is kept is only what pages show: the first tools up to
//! [`DEFAULT_INLINE_TOOL_BYTES`], every tool name (for the sensitive-tool globs), the count and
//! the sizes. The whole document is served by content address from whichever store holds the
//! blobs (a directory or a bucket), read in [`DOCUMENT_READ_BYTES`] ranges, streamed in
//! [`STREAM_CHUNK_BYTES`] chunks and verified as it goes, with immutable caching.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use toolmark_index::blobs::{Blobs, MAX_BLOB_BYTES};
use toolmark_index::index::TargetRow;
use toolmark_index::{IndexError, ToolSetRef};
use toolmark_toolset::json::Json;
use toolmark_toolset::{Shape, Sri, Tool, ToolSet};

use crate::{ApiError, AppState};

/// Bytes the tool-set cache may hold (its entries' estimated sizes): a few hundred ordinary
/// servers' pages, or four cap-sized sets' names and first tools, while staying a small part of
/// the service's memory. Past it the least recently used entries are dropped.
pub const DEFAULT_TOOL_SET_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Most entries the tool-set cache holds, whatever their size: bounds the scan that picks the
/// least recently used one.
pub const MAX_CACHED_TOOL_SETS: usize = 4_096;

/// Bytes of tool text (the tools as the server sent them) shown inline on a server's JSON and
/// desk page; the tools beyond are given as a count and a link to the document. Real servers'
/// whole sets fit (a hundred tools with schemas is about 200 KB); a cap-sized set would make a
/// 16 MB page.
pub const DEFAULT_INLINE_TOOL_BYTES: usize = 256 * 1024;

/// Tool sets read and parsed at once (distinct documents; one document is read once however
/// many ask). A cap-sized set costs ~100 MiB while it is parsed; the machine has two cores.
pub const MAX_CONCURRENT_LOADS: usize = 2;

/// Bytes of a streamed document per chunk handed to the connection; one chunk is held back
/// until the next is ready, and the last until the whole document's digest is checked.
pub const STREAM_CHUNK_BYTES: usize = 64 * 1024;

/// Bytes of a document read from the blob store per request (a range of the file, or a ranged
/// `GET` of the bucket's object): what one streamed document holds in memory on our side, at
/// most (with one chunk held back). A document up to this size is read and verified whole
/// before its response starts; a larger one costs one request per range, each complete before
/// it is sent, so no store request waits on a slow client. At 256 KiB, the 64 streams hold about
/// 20 MiB together.
pub const DOCUMENT_READ_BYTES: u64 = 256 * 1024;

/// Documents waiting to be read and parsed, at most (beyond the [`MAX_CONCURRENT_LOADS`] being
/// parsed). A load runs on even when the request that asked for it gives up, so without a
/// bound one client could queue thousands; past it, a page whose set is not cached gets 503
/// with `Retry-After` (cached sets are still served).
pub const MAX_QUEUED_LOADS: usize = 16;

/// Documents streamed at once (each holds at most [`DOCUMENT_READ_BYTES`] and one chunk in
/// memory, 68 MiB for all of them, and one file or bucket request while a range is read). 64
/// whole documents in flight is far beyond real use (a client fetches one when a page links
/// to it); the file descriptors stay within the connection layer's reserve
/// (`toolmark_server::limits::RESERVED_FILES`). Past it: 503 with `Retry-After`.
pub const MAX_DOCUMENT_STREAMS: usize = 64;

/// `Retry-After` seconds when [`MAX_DOCUMENT_STREAMS`] are in flight.
pub const DOCUMENT_RETRY_AFTER_SECONDS: u64 = 5;

/// Estimated bytes of bookkeeping per tool kept in an entry (the name's and the inline tool's
/// allocations and vectors).
const PER_TOOL_OVERHEAD: usize = 96;

/// A tool of the current set shown inline.
#[derive(Debug)]
pub struct InlineTool {
    /// The tool's JSON text exactly as the server sent it.
    pub raw: Box<str>,
    /// Its `name`, when a string.
    pub name: Option<Box<str>>,
    /// Its `title`, when a string.
    pub title: Option<Box<str>>,
    /// Its `description`, when a string.
    pub description: Option<Box<str>>,
}

/// What pages need of a target's current tool set, read and verified once.
#[derive(Debug)]
pub struct CurrentTools {
    /// The stored document's content address (the log entry's `raw`).
    pub document: Sri,
    /// The document's size in bytes.
    pub document_bytes: u64,
    /// The tool set's `toolmark/1` full digest, as checked against the index.
    pub full: String,
    /// Tools in the set.
    pub count: usize,
    /// Bytes of all the tools' texts.
    pub tool_bytes: u64,
    /// The first tools, within the inline budget.
    pub inline: Vec<InlineTool>,
    /// Every tool with a string name, as a set of `{"name"}` entries (what the sensitive-tool
    /// globs read).
    pub names: ToolSet,
    /// Estimated bytes this entry holds.
    pub cost: usize,
}

impl CurrentTools {
    /// Tools not shown inline.
    pub fn omitted(&self) -> usize {
        self.count - self.inline.len()
    }
}

type Loaded = Result<Arc<CurrentTools>, String>;
/// A load in progress or done: a task of its own (so a waiter that is cancelled — a reset
/// stream, a closed connection, the request deadline — neither cancels nor repeats it), shared
/// by every waiter.
type Slot = futures_util::future::Shared<futures_util::future::BoxFuture<'static, Loaded>>;

struct CacheEntry {
    slot: Slot,
    /// 0 while loading.
    cost: usize,
    used: u64,
}

#[derive(Default)]
struct CacheState {
    entries: HashMap<Sri, CacheEntry>,
    bytes: usize,
    tick: u64,
}

/// The bounded, single-flight cache of [`CurrentTools`] by document address.
pub struct ToolSetCache {
    budget: usize,
    inline_budget: usize,
    state: Mutex<CacheState>,
    loading: tokio::sync::Semaphore,
    loads: AtomicU64,
    /// Loads started and not finished (queued or being parsed).
    pending: std::sync::atomic::AtomicUsize,
}

impl Default for ToolSetCache {
    fn default() -> Self {
        ToolSetCache::new(DEFAULT_TOOL_SET_CACHE_BYTES, DEFAULT_INLINE_TOOL_BYTES)
    }
}

impl ToolSetCache {
    /// A cache holding at most `budget` bytes of entries, each showing tools up to
    /// `inline_budget` bytes of text.
    pub fn new(budget: usize, inline_budget: usize) -> ToolSetCache {
        ToolSetCache {
            budget,
            inline_budget,
            state: Mutex::new(CacheState::default()),
            loading: tokio::sync::Semaphore::new(MAX_CONCURRENT_LOADS),
            loads: AtomicU64::new(0),
            pending: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Documents read and parsed so far (each cache miss that did the work).
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }

    /// The byte budget.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The inline budget.
    pub fn inline_budget(&self) -> usize {
        self.inline_budget
    }

    /// Bytes the entries hold now (estimated).
    pub fn held_bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current tool set of `target` (`None` when toolmark never read one), loaded on a
    /// miss by one caller while the others wait for it.
    pub async fn current(
        &self,
        state: &Arc<AppState>,
        target: &TargetRow,
    ) -> Result<Option<Arc<CurrentTools>>, ApiError> {
        let Some(at) = target.current_tool_set()? else {
            return Ok(None);
        };
        let sri = at.document;
        let slot = {
            let mut c = self.lock();
            c.tick += 1;
            let tick = c.tick;
            let full =
                self.pending.load(Ordering::Relaxed) >= MAX_QUEUED_LOADS + MAX_CONCURRENT_LOADS;
            let entry = match c.entries.entry(sri) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(_) if full => {
                    return Err(ApiError::Unavailable(format!(
                        "{} tool sets are being read; retry shortly",
                        MAX_QUEUED_LOADS + MAX_CONCURRENT_LOADS
                    )));
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    self.pending.fetch_add(1, Ordering::Relaxed);
                    e.insert(CacheEntry {
                        slot: spawn_load(state.clone(), at.clone()),
                        cost: 0,
                        used: tick,
                    })
                }
            };
            entry.used = tick;
            entry.slot.clone()
        };
        let loaded = slot.await;
        let tools = loaded.map_err(ApiError::Internal)?;
        // The entry was verified against the digest of the target that first asked for the
        // document; another target naming the same document must record the same digest.
        if tools.full != at.full {
            return Err(IndexError::ToolSetDigest {
                entry: at.entry,
                sri: sri.to_string(),
                found: tools.full.clone(),
                indexed: at.full,
            }
            .into());
        }
        Ok(Some(tools))
    }

    /// Read and parse `at` once, at most [`MAX_CONCURRENT_LOADS`] documents at a time.
    async fn load_once(&self, state: &Arc<AppState>, at: ToolSetRef) -> Loaded {
        let sri = at.document;
        /// Counts the load in `pending` until it ends, however it ends.
        struct Pending<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Pending<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        let _pending = Pending(&self.pending);
        let r = async {
            let _permit = self
                .loading
                .acquire()
                .await
                .map_err(|e| format!("loading {sri}: {e}"))?;
            self.loads.fetch_add(1, Ordering::Relaxed);
            let blobs = state.blobs.clone();
            let inline = self.inline_budget;
            tokio::task::spawn_blocking(move || load(&blobs, &at, inline))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r)
                .map(Arc::new)
        }
        .await;
        self.settle(sri, &r);
        r
    }

    /// After a load: keep the entry within the budget (dropping the least recently used
    /// ones), or drop it when it failed or alone exceeds the budget.
    fn settle(&self, sri: Sri, loaded: &Loaded) {
        let mut c = self.lock();
        let cost = match loaded {
            Ok(t) if t.cost <= self.budget => t.cost,
            _ => {
                c.entries.remove(&sri);
                return;
            }
        };
        if let Some(e) = c.entries.get_mut(&sri) {
            e.cost = cost;
        }
        c.bytes += cost;
        while c.bytes > self.budget || c.entries.len() > MAX_CACHED_TOOL_SETS {
            let victim = c
                .entries
                .iter()
                .filter(|(k, e)| e.cost > 0 && **k != sri)
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| *k);
            let Some(victim) = victim else { break };
            if let Some(e) = c.entries.remove(&victim) {
                c.bytes -= e.cost;
            }
        }
    }
}

/// Start loading `at` in a task of its own; the returned future is its result, for every
/// waiter.
fn spawn_load(state: Arc<AppState>, at: ToolSetRef) -> Slot {
    use futures_util::FutureExt;
    let sri = at.document;
    let task = tokio::spawn(async move { state.tool_sets.load_once(&state, at).await });
    async move { task.await.map_err(|e| format!("loading {sri}: {e}"))? }
        .boxed()
        .shared()
}

/// Read the tool set `at` names, verified by the index's one check (the blob store verifies
/// the document's bytes, the tool set's full digest is checked against the indexed one), and
/// keep what pages show.
fn load(blobs: &Blobs, at: &ToolSetRef, inline_budget: usize) -> Result<CurrentTools, String> {
    let read = at.read(blobs).map_err(|e| e.to_string())?;
    let set = read.set;
    let mut inline = Vec::new();
    let mut shown = 0usize;
    let mut open = true;
    let mut tool_bytes = 0u64;
    let mut names = Vec::new();
    let mut cost = 0usize;
    let text = |t: &Tool, key: &str| t.get(key).and_then(Json::as_str).map(Box::<str>::from);
    for tool in &set.tools {
        tool_bytes += tool.raw.len() as u64;
        if let Some(n) = tool.name() {
            cost += n.len() + PER_TOOL_OVERHEAD;
            names.push(Tool {
                value: Json::Object(vec![("name".into(), Json::String(n.into()))]),
                raw: Box::from(""),
            });
        }
        if open && shown + tool.raw.len() <= inline_budget {
            shown += tool.raw.len();
            let t = InlineTool {
                raw: tool.raw.clone(),
                name: tool.name().map(Box::from),
                title: text(tool, "title"),
                description: tool.description().map(Box::from),
            };
            cost += t.raw.len()
                + t.name.as_ref().map_or(0, |s| s.len())
                + t.title.as_ref().map_or(0, |s| s.len())
                + t.description.as_ref().map_or(0, |s| s.len())
                + PER_TOOL_OVERHEAD;
            inline.push(t);
        } else {
            // Tools are shown in order: once one does not fit, none after it is shown.
            open = false;
        }
    }
    Ok(CurrentTools {
        document: at.document,
        document_bytes: read.document_bytes,
        full: at.full.clone(),
        count: set.tools.len(),
        tool_bytes,
        inline,
        names: ToolSet {
            tools: names,
            shape: Shape::Object,
            next_cursor: None,
        },
        cost: cost + std::mem::size_of::<CurrentTools>(),
    })
}

/// The path segment of a document's URL: its SRI with `+`, `/` and `=` percent-encoded.
pub fn document_path(sri: &Sri) -> String {
    let s = sri.to_string();
    let mut out = String::with_capacity(s.len() + 12);
    for c in s.chars() {
        match c {
            '+' => out.push_str("%2B"),
            '/' => out.push_str("%2F"),
            '=' => out.push_str("%3D"),
            c => out.push(c),
        }
    }
    format!("/api/v1/documents/{out}")
}

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/api/v1/documents/{sri}", get(document))
}

/// `GET /api/v1/documents/{sri}`: the stored observation document with that content address,
/// read from the blob store (a directory or a bucket) in ranges of [`DOCUMENT_READ_BYTES`] and
/// hashed as it is read. A document of at most one range is verified before the response
/// starts (a mismatch is a 500); a larger one is streamed, and the response is cut before its
/// last chunk when the whole does not hash to the address.
async fn document(
    State(state): State<Arc<AppState>>,
    Path(sri): Path<String>,
) -> Result<Response, ApiError> {
    let sri: Sri = sri.parse().map_err(|_| {
        ApiError::BadRequest(
            "a document address is sha256- and 43 base64 characters and = \
             (percent-encode + / = in the path)"
                .into(),
        )
    })?;
    let Ok(permit) = state.document_streams.clone().try_acquire_owned() else {
        let mut r = ApiError::Unavailable(format!(
            "{MAX_DOCUMENT_STREAMS} documents are being sent; retry shortly"
        ))
        .into_response();
        r.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(DOCUMENT_RETRY_AFTER_SECONDS),
        );
        return Ok(r);
    };
    let blobs = state.blobs.clone();
    let size = tokio::task::spawn_blocking(move || blobs.size(&sri))
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::NotFound(format!("no document {sri} is stored")))?;
    if size > MAX_BLOB_BYTES {
        return Err(ApiError::internal(format!(
            "{} is {size} bytes, more than any document ({MAX_BLOB_BYTES})",
            state.blobs.location(&sri)
        )));
    }
    let mut st = Streaming {
        blobs: state.blobs.clone(),
        _permit: permit,
        hasher: Some(Sri::hasher()),
        size,
        read: 0,
        pending: Bytes::new(),
        held: None,
        expected: sri,
    };
    // The first range before the headers: a store that fails is a 500, not a cut body, and a
    // document read whole here is verified before anything of it is sent.
    st.read_next().await.map_err(ApiError::Internal)?;
    if st.read == size {
        st.verify().map_err(ApiError::Internal)?;
    }
    let body = Body::from_stream(verified_stream(st));
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(crate::logroutes::IMMUTABLE),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("\"{sri}\"")) {
        h.insert(header::ETAG, v);
    }
    Ok(r)
}

/// A document being streamed: where it is read from, how far, the running digest, what was read
/// and not yet sent, and the chunk held back until the next one (or the end, where the digest
/// is checked) is ready.
struct Streaming {
    blobs: Blobs,
    /// A place among [`MAX_DOCUMENT_STREAMS`], held until the stream ends or is dropped.
    _permit: tokio::sync::OwnedSemaphorePermit,
    /// `None` once the whole document was verified.
    hasher: Option<toolmark_toolset::sri::SriHasher>,
    /// The stored object's size (the `Content-Length` sent).
    size: u64,
    /// Bytes read from the store so far.
    read: u64,
    /// Read and hashed, not yet sent.
    pending: Bytes,
    held: Option<Bytes>,
    expected: Sri,
}

impl Streaming {
    /// Read the next range from the store into `pending`, hashing it. The range must come back
    /// whole: an object that shrank or vanished since its size was read is an error.
    async fn read_next(&mut self) -> Result<(), String> {
        let range = self.read..self.size.min(self.read + DOCUMENT_READ_BYTES);
        let want = range.end - range.start;
        if want == 0 {
            return Ok(());
        }
        let blobs = self.blobs.clone();
        let sri = self.expected;
        let r = range.clone();
        let bytes = tokio::task::spawn_blocking(move || blobs.get_range_unverified(&sri, r))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{} vanished while read", self.blobs.location(&sri)))?;
        if bytes.len() as u64 != want {
            return Err(format!(
                "{} gave {} bytes for the range {range:?}",
                self.blobs.location(&sri),
                bytes.len()
            ));
        }
        if let Some(h) = self.hasher.as_mut() {
            h.update(&bytes);
        }
        self.read = range.end;
        self.pending = Bytes::from(bytes);
        Ok(())
    }

    /// Once everything is read: whether it hashed to the address.
    fn verify(&mut self) -> Result<(), String> {
        let Some(h) = self.hasher.take() else {
            return Ok(());
        };
        let found = h.finish();
        if found == self.expected {
            return Ok(());
        }
        Err(self.blobs.corrupt(&self.expected, found).to_string())
    }
}

/// The document's bytes in chunks of at most [`STREAM_CHUNK_BYTES`]; the last chunk is only sent
/// once the whole document hashed to its address, otherwise the stream ends in an error
/// (logged), so a client never receives a complete response that is not the document.
fn verified_stream(
    start: Streaming,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::unfold(Some(start), |st| async move {
        let mut st = st?;
        loop {
            if !st.pending.is_empty() {
                let n = STREAM_CHUNK_BYTES.min(st.pending.len());
                let chunk = st.pending.split_to(n);
                if let Some(previous) = st.held.replace(chunk) {
                    return Some((Ok(previous), Some(st)));
                }
                continue;
            }
            let step = if st.read < st.size {
                st.read_next().await
            } else {
                match st.verify() {
                    Ok(()) => return st.held.take().map(|b| (Ok(b), None)),
                    Err(e) => Err(e),
                }
            };
            if let Err(e) = step {
                eprintln!("toolmark api: a stored document: {e}; its response was cut");
                return Some((Err(std::io::Error::other(e)), None));
            }
        }
    })
}
