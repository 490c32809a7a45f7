//! What every handler reads: the published log, the index, the stored documents, and the key
//! that signs answers.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use toolmark_index::DataDir;
use toolmark_index::blobs::Blobs;
use toolmark_index::index::Index;
use toolmark_log::reader::{Reader, Signed};

/// Read-only index connections shared by the handlers. SQLite connections are not `Sync`; a
/// handful behind mutexes, taken round-robin, lets requests on different threads read at once
/// (WAL mode: readers never block the crawler's writes).
pub struct IndexPool {
    slots: Vec<Mutex<Index>>,
    next: AtomicUsize,
}

/// Index connections per process: twice the cores, so a request never waits for a connection
/// while another is held across a short query.
pub fn pool_size() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get() * 2)
}

impl IndexPool {
    /// Open `size` read-only connections to the index at `path`.
    pub fn open(path: &Path, size: usize) -> Result<IndexPool, toolmark_index::IndexError> {
        let slots = (0..size.max(1))
            .map(|_| Index::open_read_only(path).map(Mutex::new))
            .collect::<Result<_, _>>()?;
        Ok(IndexPool {
            slots,
            next: AtomicUsize::new(0),
        })
    }

    /// A connection that is free now, `None` when every one is held (never waits: for a
    /// caller that must not block, the async worker answering a small `/check` question).
    pub fn try_get(&self) -> Option<MutexGuard<'_, Index>> {
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let n = self.slots.len();
        (0..n).find_map(|i| self.slots[(start + i) % n].try_lock().ok())
    }

    /// A connection (blocks briefly if all are busy).
    pub fn get(&self) -> MutexGuard<'_, Index> {
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let n = self.slots.len();
        for i in 0..n {
            if let Ok(guard) = self.slots[(start + i) % n].try_lock() {
                return guard;
            }
        }
        self.slots[start % n]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Reads the schedules' latest runs (see [`AppState::jobs`]); the error is shown as is.
pub type JobStates =
    Arc<dyn Fn() -> Result<Vec<toolmark_schedules::JobState>, String> + Send + Sync>;

/// Everything the router serves from.
pub struct AppState {
    /// The published log (`DATA/log/public`), read without the writer's lock.
    pub log: Reader,
    /// The index (`DATA/index.sqlite`).
    pub index: IndexPool,
    /// The stored observation documents (`blobs/` of the object store: `DATA/blobs` by
    /// default, `PREFIX/blobs/` of a bucket).
    pub blobs: Blobs,
    /// Signs `/check` answers (not the log key: a different key for a different statement).
    pub answer_key: ed25519_dalek::SigningKey,
    /// The public URL the service is reached at, without a trailing slash (links in answers
    /// and feeds).
    pub base_url: String,
    /// Where the data lives.
    pub data: PathBuf,
    /// The per-client limit on `/check` (default [`crate::ops::CHECKS_PER_MINUTE`], bursts of
    /// [`crate::ops::CHECK_BURST`]).
    pub limiter: crate::ops::RateLimiter,
    /// The per-client limit on `POST /api/v1/sensitive` (default
    /// [`crate::ops::SENSITIVE_PER_MINUTE`], bursts of [`crate::ops::SENSITIVE_BURST`]).
    pub sensitive_limiter: crate::ops::RateLimiter,
    /// What server pages show of current tool sets, read once per document (default budgets
    /// [`crate::documents::DEFAULT_TOOL_SET_CACHE_BYTES`] and
    /// [`crate::documents::DEFAULT_INLINE_TOOL_BYTES`]; replace with
    /// `ToolSetCache::new(cache_bytes, inline_bytes)`).
    pub tool_sets: crate::documents::ToolSetCache,
    /// Places for documents being streamed ([`crate::documents::MAX_DOCUMENT_STREAMS`]).
    pub document_streams: Arc<tokio::sync::Semaphore>,
    /// Request counters for `/metrics`.
    pub metrics: crate::ops::Metrics,
    /// More Prometheus text appended to `/metrics` (the connection layer's counters, which
    /// the process serving this router keeps).
    pub extra_metrics: Option<Arc<dyn Fn() -> String + Send + Sync>>,
    /// The schedules' latest runs `/health` and `/metrics` show, handed in by the role that
    /// knows them (`toolmark run`'s scheduler; `toolmark serve` reads the data directory's
    /// schedules when `toolmark run` keeps them there). The API opens no scheduler state
    /// itself. `None`: no jobs are shown.
    pub jobs: Option<JobStates>,
    /// Signed `/check` answers of the current second.
    pub answers: crate::check::AnswerCache,
    /// Places for uncached `/check` answers being read on blocking threads: one per index
    /// connection ([`pool_size`], twice the cores), the rest wait their turn in the order they
    /// came (docs/api.md, "Limits"). A small question answered on the async worker takes no
    /// place: it reads only through a connection free at once ([`IndexPool::try_get`]).
    pub answering: tokio::sync::Semaphore,
    /// The clock `/check` answers are dated by (`checkedAt`): [`std::time::SystemTime::now`]
    /// unless a test fixes it.
    pub clock: fn() -> std::time::SystemTime,
    /// Look-alike names: the popularity snapshot read once at open, and the listed server
    /// names indexed again only when one is added (`crate::lookalike`).
    pub names: Arc<crate::lookalike::Names>,
    /// The stats of the last minute (`/api/v1/stats`, the desk's stats page, the global
    /// badges).
    pub stats: crate::stats::StatsCache,
    /// The witness policy the published checkpoint is cosigned under (`toolmark run`'s
    /// witnesses and quorum), `None` when no witness is configured. Read by
    /// `/api/v1/witnesses`, `/health`, `/metrics`, the `/check` answer's `log` and the desk's
    /// log page.
    pub witnesses: Option<Arc<toolmark_log::policy::WitnessPolicy>>,
    /// The opt-in client reports of `/check` (`DATA/contributions.sqlite` and today's
    /// in-memory set of clients counted, `crate::contribute`).
    pub client_reports: crate::contribute::ClientReports,
    /// The last verified checkpoint and the file identity it was read from.
    checkpoint: Mutex<Option<(toolmark_log::objects::Stat, Arc<Signed>)>>,
    /// The policy witnesses' cosignatures on the last checkpoint note seen, verified once.
    witnessed: Mutex<Option<Arc<crate::witnesses::Cosigners>>>,
}

impl AppState {
    /// The current checkpoint, signature verified — re-read and re-verified only when the file
    /// changed (one `stat` per call otherwise), so every request does not pay an Ed25519
    /// verification.
    pub fn checkpoint(&self) -> Result<Arc<Signed>, toolmark_log::reader::ReadError> {
        let id = self.log.public().stat("checkpoint").ok().flatten();
        let mut cached = self
            .checkpoint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The store's ETag, length and modification time change whenever the checkpoint is
        // replaced (on a directory, a rename: a new inode in the ETag).
        if let (Some(id), Some((seen, signed))) = (&id, cached.as_ref()) {
            if seen == id {
                return Ok(signed.clone());
            }
        }
        let signed = Arc::new(self.log.checkpoint()?);
        if let Some(id) = id {
            *cached = Some((id, signed.clone()));
        }
        Ok(signed)
    }

    /// The policy witnesses' cosignatures on `at` (a checkpoint from
    /// [`AppState::checkpoint`]), verified only when the note differs from the last one seen;
    /// `None` when no witness policy is configured.
    pub fn witnessed(&self, at: &Signed) -> Option<Arc<crate::witnesses::Cosigners>> {
        let policy = self.witnesses.as_ref()?;
        let mut cached = self
            .witnessed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = cached.as_ref() {
            if c.is_of(at) {
                return Some(c.clone());
            }
        }
        let fresh = Arc::new(crate::witnesses::Cosigners::verify(policy, at));
        *cached = Some(fresh.clone());
        Some(fresh)
    }
}

/// Why the state could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A file could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The index could not be opened.
    #[error("index: {0}")]
    Index(#[from] toolmark_index::IndexError),
    /// The blob store could not be opened.
    #[error("blobs: {0}")]
    Blobs(#[from] toolmark_index::BlobError),
    /// The answer key could not be read or created.
    #[error("{0}")]
    Data(#[from] toolmark_index::DataError),
    /// The client-report store could not be opened.
    #[error("{0}")]
    Contributions(#[from] toolmark_index::ContributionsError),
    /// A refreshed popularity snapshot could not be read.
    #[error("popularity snapshot: {0}")]
    Names(#[from] crate::lookalike::NamesError),
}

impl AppState {
    /// Open what `toolmark crawl` (or `run`) keeps under `data`.
    pub fn open(data: &Path, base_url: &str) -> Result<AppState, StateError> {
        Self::open_dir(&DataDir::new(data), base_url)
    }

    /// [`AppState::open`] of a data directory whose log may live in other stores
    /// (`[storage]`).
    pub fn open_dir(dir: &DataDir, base_url: &str) -> Result<AppState, StateError> {
        let data = dir.root();
        let public = dir.log_public_objects().map_err(|e| StateError::Io {
            path: dir.log_public(),
            reason: e.to_string(),
        })?;
        let vkey = dir.vkey()?;
        Ok(AppState {
            log: Reader::new(public, &vkey),
            index: IndexPool::open(&dir.index_path(), pool_size())?,
            blobs: dir.blobs()?,
            answer_key: dir.answer_key()?,
            base_url: base_url.trim_end_matches('/').to_owned(),
            data: data.to_owned(),
            limiter: crate::ops::RateLimiter::default(),
            sensitive_limiter: crate::ops::RateLimiter::sensitive(),
            tool_sets: crate::documents::ToolSetCache::default(),
            document_streams: Arc::new(tokio::sync::Semaphore::new(
                crate::documents::MAX_DOCUMENT_STREAMS,
            )),
            metrics: crate::ops::Metrics::default(),
            extra_metrics: None,
            jobs: None,
            names: Arc::new(crate::lookalike::Names::load(data)?),
            checkpoint: Mutex::new(None),
            witnesses: None,
            witnessed: Mutex::new(None),
            stats: crate::stats::StatsCache::default(),
            answers: crate::check::AnswerCache::default(),
            answering: tokio::sync::Semaphore::new(pool_size()),
            client_reports: crate::contribute::ClientReports::new(
                toolmark_index::Contributions::open(&dir.contributions_path())?,
                crate::contribute::MAX_CLIENTS_PER_DAY,
            ),
            clock: std::time::SystemTime::now,
        })
    }
}
