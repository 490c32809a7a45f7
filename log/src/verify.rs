//! `fsck` and audit: check a published log from its public files alone.
//!
//! [`fsck`] reads the checkpoint and verifies its signature, then **streams** the log: entry
//! bundles in order, each with the tiles it completes. It hashes every entry into a
//! [`TileFrontier`] (the right edge of the tree, one incomplete tile per level) and compares
//! every tile byte for byte the moment all the hashes it covers are known; the root the edge
//! gives at the end must be the checkpoint's. [`DECODE_WORKERS`] other threads decode every
//! entry (canonical bytes); each `prev` link is then checked, in log order, against one record
//! per subject: its newest index so far.
//! [`audit`] adds what a monitor keeps between runs: the last checkpoint it verified. A shrink,
//! a different root at a remembered size (reproduced while streaming, when the edge is at that
//! size: what a consistency proof shows) or a different key is refused.
//!
//! Memory does not grow with the log: at most 256 hashes per tile level
//! ([`Report::peak_hashes`]; 2,048 for a 2^62-leaf tree), the bundles in flight (at most
//! [`PREFETCH_WORKERS`] fetched ahead, [`DECODE_QUEUE`] being decoded and the one being
//! hashed: each at most 256 × 65,537 bytes, about 100 KB for real entries), and 16 bytes per
//! subject (at most [`MAX_SUBJECTS`]).
//!
//! A [`Source`] that may be read from several threads says so ([`Source::concurrent`]): its
//! files are then fetched [`PREFETCH_WORKERS`] bundles ahead, in parallel, while the current
//! one is hashed (what a remote store's latency needs); otherwise they are read in order on the
//! calling thread.

use crate::entry::Entry;
use crate::merkle::{self, Hash, MAX_TREE_SIZE};
use crate::note::{self, Checkpoint};
use crate::tiles::{self, TILE_WIDTH, TileFrontier, TileId};
use std::collections::HashMap;
use std::sync::{Condvar, Mutex, mpsc};

/// Bundles (each with the tiles it completes) fetched ahead of the one being hashed, by as many
/// threads, when the source is [`Source::concurrent`]: enough parallel requests to hide a remote
/// store's latency, few enough that hostile 16.8 MB bundles cannot take much memory.
pub const PREFETCH_WORKERS: usize = 8;

/// Threads decoding entries (JSON parsing and the canonical re-encoding check are most of an
/// fsck's work) while the calling thread hashes and checks tiles and `prev` links.
pub const DECODE_WORKERS: usize = 2;

/// Bundles handed to the decoding threads whose `prev` links are not checked yet: how far the
/// hashing thread may run ahead of decoding.
pub const DECODE_QUEUE: usize = 4;

/// Most distinct subjects a verified log may have: the `prev` check keeps one 16-byte record
/// per subject (about 35 bytes with the map's slack, ~72 MB at this bound). The registry has
/// tens of thousands of servers; a log claiming more subjects than this is refused rather than
/// allowed to grow the verifier without bound.
pub const MAX_SUBJECTS: usize = 1 << 21;

/// Where public files come from.
pub trait Source {
    /// The file at `path` (`checkpoint`, `tile/0/000`, …), `None` if it does not exist.
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String>;

    /// `Some(self)` if [`Source::get`] may be called from several threads at once; the verifier
    /// then fetches ahead in parallel ([`PREFETCH_WORKERS`]). The default, `None`, keeps every
    /// call on the verifier's own thread (a source bound to its thread's async runtime).
    fn concurrent(&self) -> Option<&(dyn Source + Sync)> {
        None
    }
}

/// A published log directory.
pub struct DirSource(pub std::path::PathBuf);

impl Source for DirSource {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        match std::fs::read(self.0.join(path)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", self.0.join(path).display())),
        }
    }

    fn concurrent(&self) -> Option<&(dyn Source + Sync)> {
        Some(self)
    }
}

/// Why a published log does not verify.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A published file could not be read.
    #[error("reading {path}: {reason}")]
    Read {
        /// Its path in the log.
        path: String,
        /// Why.
        reason: String,
    },
    /// A file the checkpoint needs is not published.
    #[error("{0} is missing")]
    Missing(String),
    /// The checkpoint does not parse or its signature does not verify.
    #[error("checkpoint: {0}")]
    Checkpoint(#[from] crate::FormatError),
    /// A published file is not what the format says.
    #[error("{path}: {reason}")]
    Corrupt {
        /// Its path in the log.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The tiles hash to another root than the signed one.
    #[error("root mismatch: the tiles give {computed}, the checkpoint says {signed}")]
    Root {
        /// The root the tiles give (base64).
        computed: String,
        /// The root the checkpoint signs (base64).
        signed: String,
    },
    /// An entry does not decode or does not hash to its leaf.
    #[error("entry {index}: {reason}")]
    Entry {
        /// Its index.
        index: u64,
        /// Why.
        reason: String,
    },
    /// The remembered state and the log disagree (a fork, a rollback, another key) or the state
    /// file does not parse.
    #[error("audit: {0}")]
    Audit(String),
}

/// What a successful check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The checkpoint verified.
    pub checkpoint: Checkpoint,
    /// The checkpoint note exactly as fetched, with any witness cosignature lines (for a
    /// witness policy's check: [`crate::policy::WitnessPolicy::check`]).
    pub note: Vec<u8>,
    /// Entries read and checked.
    pub entries: u64,
    /// Tiles read.
    pub tiles: usize,
    /// Entry bundles read.
    pub bundles: usize,
    /// Distinct subjects seen (one `prev` record each).
    pub subjects: usize,
    /// The most tree hashes the verifier held at once: at most 256 per tile level, whatever
    /// the log's size (the streaming bound, observable).
    pub peak_hashes: usize,
}

fn fetch(src: &dyn Source, path: &str) -> Result<Vec<u8>, VerifyError> {
    src.get(path)
        .map_err(|reason| VerifyError::Read {
            path: path.into(),
            reason,
        })?
        .ok_or_else(|| VerifyError::Missing(path.into()))
}

/// Verify everything published under `src` with the verifier key `vkey`.
pub fn fsck(src: &dyn Source, vkey: &str) -> Result<Report, VerifyError> {
    check_all(src, vkey, None)
}

/// The files of bundle `b`: the bundle and the tiles its last entry completes (for the last
/// bundle, also every partial tile of the tree).
struct Job {
    bundle: Vec<u8>,
    tiles: Vec<(TileId, Vec<u8>)>,
}

/// Width of bundle `b` in a tree of `size` leaves.
fn bundle_width(b: u64, size: u64) -> u16 {
    let w = u64::from(TILE_WIDTH);
    (((b + 1) * w).min(size) - b * w) as u16
}

fn fetch_job(src: &dyn Source, b: u64, size: u64) -> Result<Job, VerifyError> {
    let start = b * u64::from(TILE_WIDTH);
    let end = start + u64::from(bundle_width(b, size));
    let bundle = fetch(src, &tiles::bundle_path(b, bundle_width(b, size)))?;
    let mut ids: Vec<TileId> = tiles::new_tiles(start, end)
        .into_iter()
        .filter(TileId::is_full)
        .collect();
    if end == size {
        ids.extend(tiles::partial_tiles(size));
    }
    let tiles = ids
        .into_iter()
        .map(|t| Ok((t, fetch(src, &t.path())?)))
        .collect::<Result<_, VerifyError>>()?;
    Ok(Job { bundle, tiles })
}

/// Fetches jobs ahead of the hashing thread, [`PREFETCH_WORKERS`] at a time, in any order;
/// [`Prefetch::take`] hands them out in order.
struct Prefetch<'a> {
    src: &'a (dyn Source + Sync),
    size: u64,
    bundles: u64,
    state: Mutex<PrefetchState>,
    changed: Condvar,
}

struct PrefetchState {
    /// The next job a worker takes.
    next: u64,
    /// The next job [`Prefetch::take`] hands out.
    consumed: u64,
    /// Fetched jobs not handed out yet.
    ready: HashMap<u64, Result<Job, VerifyError>>,
    /// Set when the verifier stops early: workers take no new job.
    stop: bool,
}

impl<'a> Prefetch<'a> {
    fn new(src: &'a (dyn Source + Sync), size: u64, bundles: u64) -> Self {
        Prefetch {
            src,
            size,
            bundles,
            state: Mutex::new(PrefetchState {
                next: 0,
                consumed: 0,
                ready: HashMap::new(),
                stop: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PrefetchState> {
        // A worker never panics while holding the lock (fetches run outside it).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn worker(&self) {
        loop {
            let b = {
                let mut s = self.lock();
                loop {
                    if s.stop || s.next >= self.bundles {
                        return;
                    }
                    // Taken but not handed out: in flight or waiting in `ready`.
                    if s.next < s.consumed + PREFETCH_WORKERS as u64 {
                        break;
                    }
                    s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                s.next += 1;
                s.next - 1
            };
            // A panicking source must not leave `take` waiting for this job forever.
            let job = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                fetch_job(self.src, b, self.size)
            }))
            .unwrap_or_else(|_| {
                Err(VerifyError::Read {
                    path: tiles::bundle_path(b, bundle_width(b, self.size)),
                    reason: "the source panicked".into(),
                })
            });
            self.lock().ready.insert(b, job);
            self.changed.notify_all();
        }
    }

    fn take(&self, b: u64) -> Result<Job, VerifyError> {
        let mut s = self.lock();
        loop {
            if let Some(job) = s.ready.remove(&b) {
                s.consumed = b + 1;
                self.changed.notify_all();
                return job;
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// What streaming the tree gives: the right edge at the checkpoint's size, and tiles checked.
struct Streamed {
    frontier: TileFrontier,
    tiles: usize,
}

/// [`fsck`]; with `prior` (audit), also refuses a shrink and checks the remembered root.
fn check_all(
    src: &dyn Source,
    vkey: &str,
    prior: Option<&AuditState>,
) -> Result<Report, VerifyError> {
    let note_bytes = fetch(src, "checkpoint")?;
    let cp = note::open_checkpoint(&note_bytes, vkey)?;
    let size = cp.size;
    if size > MAX_TREE_SIZE {
        return Err(VerifyError::Corrupt {
            path: "checkpoint".into(),
            reason: format!("size {size} is beyond 2^62"),
        });
    }
    if let Some(p) = prior {
        if size < p.size {
            return Err(VerifyError::Audit(format!(
                "the log shrank from {} to {size}",
                p.size
            )));
        }
    }
    let remembered = prior.filter(|p| p.size > 0).map(|p| (p.size, p.root));
    let bundles = size.div_ceil(u64::from(TILE_WIDTH));
    let prefetch = src.concurrent().map(|s| Prefetch::new(s, size, bundles));
    let (streamed, subjects) = std::thread::scope(|scope| {
        let mut decoders = Decoders::start(scope);
        if let Some(p) = &prefetch {
            for _ in 0..(PREFETCH_WORKERS as u64).min(bundles) {
                scope.spawn(|| p.worker());
            }
        }
        let streamed = stream(src, prefetch.as_ref(), size, remembered, &mut decoders);
        if let Some(p) = &prefetch {
            p.stop();
        }
        // The bundles handed to the decoders are the ones hashed so far: an error in them (a
        // bad entry, a broken `prev` link) is the earlier and the more telling one.
        let decoded = decoders.finish();
        match (streamed, decoded) {
            (_, Err(e)) | (Err(e), _) => Err(e),
            (Ok(s), Ok(n)) => Ok((s, n)),
        }
    })?;
    let computed = streamed.frontier.root().map_err(|e| VerifyError::Corrupt {
        path: "tree".into(),
        reason: e.to_string(),
    })?;
    if computed != cp.root {
        return Err(VerifyError::Root {
            computed: computed.to_base64(),
            signed: cp.root.to_base64(),
        });
    }
    Ok(Report {
        checkpoint: cp,
        note: note_bytes,
        entries: size,
        tiles: streamed.tiles,
        bundles: bundles as usize,
        subjects,
        peak_hashes: streamed.frontier.peak_hashes(),
    })
}

/// Hashes every bundle into the right edge, checking each tile when it completes, the partial
/// tiles at the end, and the root at `remembered`'s size; hands each bundle on to `decoders`.
fn stream(
    src: &dyn Source,
    prefetch: Option<&Prefetch<'_>>,
    size: u64,
    remembered: Option<(u64, Hash)>,
    decoders: &mut Decoders,
) -> Result<Streamed, VerifyError> {
    let mut frontier = TileFrontier::new();
    let mut checked = 0;
    let mut leaves = Vec::with_capacity(usize::from(TILE_WIDTH));
    let mut last_tiles = Vec::new();
    let bundles = size.div_ceil(u64::from(TILE_WIDTH));
    for b in 0..bundles {
        let job = match prefetch {
            Some(p) => p.take(b)?,
            None => fetch_job(src, b, size)?,
        };
        let width = bundle_width(b, size);
        let path = tiles::bundle_path(b, width);
        let entries = tiles::decode_bundle(&job.bundle).map_err(|e| VerifyError::Corrupt {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        if entries.len() != usize::from(width) {
            return Err(VerifyError::Corrupt {
                path,
                reason: format!("{} entries, expected {width}", entries.len()),
            });
        }
        leaves.clear();
        leaves.extend(entries.into_iter().map(merkle::leaf_hash));
        decoders.send(b, job.bundle)?;
        for leaf in &leaves {
            frontier.push(leaf, |t, data| {
                checked += 1;
                check_tile(&job.tiles, t, data)
            })?;
            if let Some((at, root)) = remembered {
                if frontier.size() == at {
                    check_remembered(&frontier, at, &root)?;
                }
            }
        }
        last_tiles = job.tiles;
    }
    for (t, data) in frontier.partial_tiles() {
        checked += 1;
        check_tile(&last_tiles, &t, data)?;
    }
    Ok(Streamed {
        frontier,
        tiles: checked,
    })
}

/// A tree computation that failed (only a tree past 2^62 leaves can): the tree is corrupt.
impl From<merkle::ProofError> for VerifyError {
    fn from(e: merkle::ProofError) -> Self {
        VerifyError::Corrupt {
            path: "tree".into(),
            reason: e.to_string(),
        }
    }
}

/// The published tile `t` (fetched with its bundle) must be exactly `want`.
fn check_tile(fetched: &[(TileId, Vec<u8>)], t: &TileId, want: &[u8]) -> Result<(), VerifyError> {
    let path = t.path();
    let got = fetched
        .iter()
        .find(|(id, _)| id == t)
        .map(|(_, bytes)| bytes)
        .ok_or_else(|| VerifyError::Missing(path.clone()))?;
    if got != want {
        return Err(VerifyError::Corrupt {
            path,
            reason: "tile bytes differ from the hashes the entries give".into(),
        });
    }
    Ok(())
}

/// The edge at the remembered size must give the remembered root: the log then extends what
/// the auditor saw (a consistency proof from that size would verify).
fn check_remembered(frontier: &TileFrontier, at: u64, root: &Hash) -> Result<(), VerifyError> {
    let computed = frontier.root()?;
    if computed != *root {
        return Err(VerifyError::Audit(format!(
            "the log is not consistent with the checkpoint remembered at size {at}: its entries \
             give root {computed} there, not {root} (fork)"
        )));
    }
    Ok(())
}

/// Each entry of a bundle as the `prev` check needs it: its subject (the target id's 16 hex
/// digits as a number) and its `prev`.
type Links = Vec<(u64, Option<u64>)>;

/// The decoding threads, and the in-order `prev` check of what they return.
struct Decoders {
    /// One queue per thread; bundle `b` goes to thread `b mod DECODE_WORKERS`.
    work: Vec<mpsc::SyncSender<(u64, Vec<u8>)>>,
    results: mpsc::Receiver<(u64, Result<Links, VerifyError>)>,
    /// Decoded bundles waiting for the ones before them.
    decoded: HashMap<u64, Result<Links, VerifyError>>,
    /// Bundles handed out, and bundles whose links are checked.
    sent: u64,
    checked: u64,
    /// Set once an error has been returned: nothing more is checked.
    failed: bool,
    prev: PrevLinks,
}

impl Decoders {
    fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>) -> Decoders {
        let (done, results) = mpsc::channel();
        let work = (0..DECODE_WORKERS)
            .map(|_| {
                let (to_worker, bundles) = mpsc::sync_channel::<(u64, Vec<u8>)>(DECODE_QUEUE);
                let done = done.clone();
                scope.spawn(move || {
                    for (b, bundle) in bundles {
                        // A decoding panic must not leave the checker waiting for this bundle.
                        let links = std::panic::catch_unwind(|| decode_links(b, &bundle))
                            .unwrap_or_else(|_| {
                                Err(VerifyError::Entry {
                                    index: b * u64::from(TILE_WIDTH),
                                    reason: "decoding panicked".into(),
                                })
                            });
                        if done.send((b, links)).is_err() {
                            return;
                        }
                    }
                });
                to_worker
            })
            .collect();
        Decoders {
            work,
            results,
            decoded: HashMap::new(),
            sent: 0,
            checked: 0,
            failed: false,
            prev: PrevLinks::default(),
        }
    }

    /// Hands bundle `b` (the next one) to its thread, after checking what is decoded already;
    /// waits while [`DECODE_QUEUE`] bundles are unchecked.
    fn send(&mut self, b: u64, bundle: Vec<u8>) -> Result<(), VerifyError> {
        while self.sent - self.checked >= DECODE_QUEUE as u64 {
            self.wait_one()?;
        }
        let worker = &self.work[(b % DECODE_WORKERS as u64) as usize];
        if worker.send((b, bundle)).is_err() {
            return self.fail(VerifyError::Entry {
                index: b * u64::from(TILE_WIDTH),
                reason: "a decoding thread stopped".into(),
            });
        }
        self.sent += 1;
        while let Ok((done, links)) = self.results.try_recv() {
            self.decoded.insert(done, links);
        }
        self.check_ready()
    }

    fn wait_one(&mut self) -> Result<(), VerifyError> {
        match self.results.recv() {
            Ok((done, links)) => {
                self.decoded.insert(done, links);
                self.check_ready()
            }
            Err(_) => self.fail(VerifyError::Entry {
                index: self.checked * u64::from(TILE_WIDTH),
                reason: "the decoding threads stopped".into(),
            }),
        }
    }

    /// Checks the links of every decoded bundle next in order.
    fn check_ready(&mut self) -> Result<(), VerifyError> {
        while let Some(links) = self.decoded.remove(&self.checked) {
            let first = self.checked * u64::from(TILE_WIDTH);
            let checked = links.and_then(|links| {
                links
                    .into_iter()
                    .zip(first..)
                    .try_for_each(|((key, prev), index)| self.prev.check(index, key, prev))
            });
            if let Err(e) = checked {
                return self.fail(e);
            }
            self.checked += 1;
        }
        Ok(())
    }

    fn fail(&mut self, e: VerifyError) -> Result<(), VerifyError> {
        self.failed = true;
        Err(e)
    }

    /// Checks every bundle handed out; returns the number of subjects. Nothing more (`Ok`)
    /// once an error has been returned.
    fn finish(mut self) -> Result<usize, VerifyError> {
        while !self.failed && self.checked < self.sent {
            self.wait_one()?;
        }
        Ok(self.prev.last.len())
    }
}

/// Decodes bundle `b` (already split once by the hashing thread): every entry must be
/// canonical.
fn decode_links(b: u64, bundle: &[u8]) -> Result<Links, VerifyError> {
    let first = b * u64::from(TILE_WIDTH);
    let entries = tiles::decode_bundle(bundle).map_err(|e| VerifyError::Entry {
        index: first,
        reason: e.to_string(),
    })?;
    entries
        .into_iter()
        .zip(first..)
        .map(|(bytes, index)| {
            let bad = |reason: String| VerifyError::Entry { index, reason };
            let e = Entry::decode(bytes).map_err(|err| bad(err.to_string()))?;
            // A target id is 16 lowercase hex digits: exactly a u64, a quarter of the string.
            let key = u64::from_str_radix(e.subject.id().as_str(), 16)
                .map_err(|err| bad(err.to_string()))?;
            Ok((key, e.prev))
        })
        .collect()
}

/// The `prev` check: each subject seen, with its newest index so far.
#[derive(Default)]
struct PrevLinks {
    last: HashMap<u64, u64>,
}

impl PrevLinks {
    /// Entry `index` of subject `key` must link to exactly its subject's newest earlier entry
    /// (what the sequencer writes): a subject's first entry has `prev` null, every later one the
    /// index of the one before it, so the chain from a subject's newest entry visits all of
    /// them.
    fn check(&mut self, index: u64, key: u64, prev: Option<u64>) -> Result<(), VerifyError> {
        let bad = |reason: String| Err(VerifyError::Entry { index, reason });
        // The target id as written in the entry (only for an error).
        let id = || format!("{key:016x}");
        match (prev, self.last.get(&key)) {
            (None, None) => {}
            (Some(prev), Some(&newest)) if prev == newest => {}
            (Some(prev), Some(&newest)) if prev < index => {
                return bad(format!(
                    "prev {prev} is not the newest earlier entry of subject {}, {newest}",
                    id()
                ));
            }
            (Some(prev), _) => {
                return bad(format!(
                    "prev {prev} is not an earlier entry of subject {}",
                    id()
                ));
            }
            (None, Some(newest)) => {
                return bad(format!(
                    "prev is null but subject {} has an earlier entry, {newest}",
                    id()
                ));
            }
        }
        if self.last.len() >= MAX_SUBJECTS && !self.last.contains_key(&key) {
            return bad(format!("more than {MAX_SUBJECTS} subjects (MAX_SUBJECTS)"));
        }
        self.last.insert(key, index);
        Ok(())
    }
}

/// What an auditor remembers between runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditState {
    /// The log's verifier key.
    pub vkey: String,
    /// The tree size last verified.
    pub size: u64,
    /// Its root.
    pub root: Hash,
}

impl AuditState {
    /// One line: `<vkey> <size> <base64 root>`.
    pub fn to_text(&self) -> String {
        format!("{} {} {}\n", self.vkey, self.size, self.root.to_base64())
    }

    /// Read [`AuditState::to_text`]'s line back.
    pub fn parse(text: &str) -> Result<AuditState, VerifyError> {
        let mut it = text.split_whitespace();
        let bad = || VerifyError::Audit("the state file is not `<vkey> <size> <root>`".into());
        let vkey = it.next().ok_or_else(bad)?.to_owned();
        let size = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let root = it
            .next()
            .and_then(|r| Hash::from_base64(r).ok())
            .ok_or_else(bad)?;
        Ok(AuditState { vkey, size, root })
    }
}

/// fsck, also checking the log against what the auditor saw before: same key, no shrink, and
/// the remembered root reproduced at the remembered size (the right edge at that size gives
/// it while streaming: the check a consistency proof from it would make). Returns the report
/// and the state to remember next.
pub fn audit(
    src: &dyn Source,
    vkey: &str,
    prior: Option<&AuditState>,
) -> Result<(Report, AuditState), VerifyError> {
    if let Some(p) = prior {
        if p.vkey != vkey {
            return Err(VerifyError::Audit(format!(
                "the log key changed: remembered {}, now {vkey}",
                p.vkey
            )));
        }
    }
    let report = check_all(src, vkey, prior)?;
    let cp = &report.checkpoint;
    let state = AuditState {
        vkey: vkey.to_owned(),
        size: cp.size,
        root: cp.root,
    };
    Ok((report, state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Subject;

    fn key(server: &str) -> u64 {
        let id = Subject {
            server: server.into(),
            target: "https://example.com/mcp".into(),
            package: None,
        }
        .id();
        u64::from_str_radix(id.as_str(), 16).unwrap()
    }

    /// With `MAX_SUBJECTS` subjects recorded, a new subject is refused and a known one still
    /// verifies: the `prev` records cannot grow past the bound.
    #[test]
    fn subjects_beyond_max_subjects_are_refused() {
        let known = key("io.example/known");
        let mut links = PrevLinks {
            last: (0..MAX_SUBJECTS as u64 - 1)
                .map(|k| (k, 0))
                .chain([(known, 7)])
                .collect(),
        };
        assert_eq!(links.last.len(), MAX_SUBJECTS);
        let index = 1 << 30;
        links.check(index, known, Some(7)).unwrap();
        let err = links
            .check(index + 1, key("io.example/new"), None)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "entry {}: more than 2097152 subjects (MAX_SUBJECTS)",
                index + 1
            )
        );
        assert_eq!(links.last.len(), MAX_SUBJECTS);
    }

    /// The subject id in a `prev` error is the target id as the entry writes it.
    #[test]
    fn prev_errors_name_the_target_id() {
        let subject = Subject {
            server: "io.example/a".into(),
            target: "https://example.com/mcp".into(),
            package: None,
        };
        let mut links = PrevLinks::default();
        let err = links.check(3, key("io.example/a"), Some(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "entry 3: prev 1 is not an earlier entry of subject {}",
                subject.id()
            )
        );
    }
}
