//! The writer: turns batches of entries into tiles, bundles and a signed checkpoint, over a
//! head store and an object store ([`crate::store`]), safely with several writers.
//!
//! An append goes: take the writers' lease (liveness only) → read the committed head (adopting
//! another writer's newer one) → drop entries already logged (dedup keys) → encode every entry
//! (with `prev` filled in) → compute the new stored hashes, root, tiles and bundles in memory,
//! reading the old tree's hashes from its tiles → check our own consistency proof from the old
//! head → stage the batch's files as one object (`staging/<base>-<size>-<hex root>`) → sign → compare-
//! and-swap the new head in the head store (the only commit point) → apply the staged files to
//! `public/` create-only → publish the checkpoint (forward only) → record `applied` → drop the
//! staged object. Indices are acknowledged only after the compare-and-swap, and no signed
//! checkpoint leaves the process before it. A writer that loses the compare-and-swap reads the
//! winner's head and computes its batch again. Whoever finds a committed head not applied yet
//! (its writer died) applies its staged object: [`Log::open`] and every append do.
//!
//! Any storage error poisons the `Log`: the caller must reopen it, which runs that recovery.
//! Opening refuses a head store older than what the object store or the `applied` marker show
//! (a bucket checkpoint newer than the head, or the same size with another root), tiles that do
//! not reproduce the head's root, and a key that is not the log's.

use crate::entry::{Entry, EntryError, TargetId};
use crate::head::{DedupKey, HeadStore};
use crate::merkle::{self, Hash, HashReader, ProofError};
use crate::note::{Checkpoint, LogKey};
use crate::objects::{ImmutableCache, Objects};
use crate::store::{self, Head, LogStores, StoreError};
use crate::tiles::{self, TileId};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most entries one `append` call takes: a day's crawl of the whole registry is about 20,000
/// targets; a 100,000-entry cap keeps a batch's in-memory tiles and bundles to tens of MB.
pub const MAX_BATCH: usize = 100_000;

/// Most threads a batch's per-entry work (encoding, dedup keys, leaf hashes) is split over; a
/// batch smaller than [`PARALLEL_MIN`] stays on the caller's thread.
pub const MAX_WRITER_THREADS: usize = 4;
/// The smallest batch whose per-entry work is split over threads.
pub const PARALLEL_MIN: usize = 4_096;

/// How long the writers' lease lasts when not renewed: a writer paused or killed while holding
/// it delays the others this long at most.
pub const LEASE_TTL: Duration = Duration::from_secs(5);
/// How long an append waits for the lease before going on without it (the compare-and-swap
/// keeps that safe; the lease only saves a batch computed in vain).
pub const LEASE_WAIT: Duration = Duration::from_secs(30);
/// How often a writer waiting for the lease asks again.
const LEASE_POLL: Duration = Duration::from_millis(10);
/// How far (seconds) another writer's clock may run ahead of ours: its checkpoint's time is
/// then reused rather than going backwards. Writers' clocks must be synchronised (NTP) to this.
pub const MAX_CLOCK_SKEW: u64 = 5;
/// How many times one append computes its batch again after losing the compare-and-swap to
/// another writer before it gives up ([`LogError::Contended`]).
pub const MAX_CAS_RETRIES: usize = 16;
/// Bytes of tiles and bundles a writer keeps in memory between batches (the right edge of the
/// tree and the files it wrote last), so a batch reads few tiles from the object store.
pub const TILE_CACHE_BYTES: usize = 32 << 20;
/// The largest staged batch read back ([`MAX_BATCH`] entries of at most 64 KiB would be more;
/// real batches of observations are ~400 B an entry).
pub const MAX_STAGED_BYTES: u64 = 1 << 30;

/// What can go wrong with the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The storage failed or refused (see [`StoreError`]).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An entry of a batch does not encode.
    #[error("entry {index}: {source}")]
    Entry {
        /// Its position in the batch.
        index: usize,
        /// Why.
        source: EntryError,
    },
    /// A proof could not be made (an index or size beyond the tree).
    #[error(transparent)]
    Proof(#[from] ProofError),
    /// A stored checkpoint, tile or key does not parse.
    #[error(transparent)]
    Format(#[from] crate::FormatError),
    /// A batch over [`MAX_BATCH`] entries.
    #[error("a batch holds {0} entries, more than {MAX_BATCH}")]
    BatchTooLarge(usize),
    /// An earlier storage error left the in-memory state unknown; nothing more is appended.
    #[error("the log is poisoned by an earlier storage error; reopen it to recover")]
    Poisoned,
    /// Other writers won the compare-and-swap [`MAX_CAS_RETRIES`] times in a row.
    #[error("other writers won the compare-and-swap {MAX_CAS_RETRIES} times in a row")]
    Contended,
    /// A request the log will not carry out (it says why).
    #[error("{0}")]
    Refused(String),
}

/// The clock the log signs with (Unix seconds); injectable for tests.
pub type Clock = Box<dyn Fn() -> u64 + Send>;

/// The system's clock, in Unix seconds (0 before 1970).
pub fn system_clock() -> Clock {
    Box::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    })
}

/// A log open for writing.
pub struct Log {
    head_store: Box<dyn HeadStore>,
    public: Objects,
    staging: Objects,
    key: LogKey,
    head: Head,
    clock: Clock,
    poisoned: bool,
    witnessed: bool,
    tiles: Mutex<ImmutableCache>,
    /// Who this writer is in the lease (`<pid>-<random>`).
    holder: String,
}

/// The result of an append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The index of each entry, in the order given (an entry logged before, by this writer or
    /// another, gets the index it was logged at).
    pub indices: Vec<u64>,
    /// The tree size this batch was sequenced after: indices from here on are new entries,
    /// smaller ones were logged before.
    pub base: u64,
    /// The new checkpoint note.
    pub checkpoint: Vec<u8>,
}

/// Reads the old tree's hashes from its tiles, and the ones a batch has computed but not yet
/// stored.
struct Overlay<'a, R: HashReader> {
    stored: &'a R,
    base: u64,
    pending: Vec<Hash>,
}

impl<R: HashReader> HashReader for Overlay<'_, R> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ProofError> {
        let old: Vec<u64> = indexes.iter().copied().filter(|&i| i < self.base).collect();
        let mut from_tiles = if old.is_empty() {
            Vec::new().into_iter()
        } else {
            self.stored.read_hashes(&old)?.into_iter()
        };
        indexes
            .iter()
            .map(|&i| {
                if i < self.base {
                    from_tiles.next().ok_or(ProofError::MissingHash(i))
                } else {
                    self.pending
                        .get((i - self.base) as usize)
                        .copied()
                        .ok_or(ProofError::MissingHash(i))
                }
            })
            .collect()
    }
}

/// A batch's public files: (path under `public/`, bytes).
type Files = Vec<(String, Vec<u8>)>;

/// Where a log directory keeps its signing key (mode 0600, outside `public/`).
pub const KEY_FILE: &str = "private/log.key";

/// The dedup key of an entry ([`DedupKey`]): its time (`YYYYMMDDhhmmss` as a big-endian
/// number), then the first 16 bytes of the SHA-256 of its encoding without `prev`.
pub fn dedup_key(e: &Entry) -> Result<DedupKey, EntryError> {
    if e.prev.is_some() {
        let mut plain = e.clone();
        plain.prev = None;
        return dedup_key(&plain);
    }
    Ok(key_of(&e.observed_at, &e.encode()?))
}

/// The dedup key of an entry of time `observed_at` (checked by `encode`: `YYYY-MM-DDThh:mm:ssZ`)
/// whose encoding without `prev` is `plain`.
fn key_of(observed_at: &str, plain: &[u8]) -> DedupKey {
    use sha2::Digest;
    let d = sha2::Sha256::digest(plain);
    let time = observed_at
        .bytes()
        .filter(u8::is_ascii_digit)
        .fold(0u64, |n, b| n * 10 + u64::from(b - b'0'));
    let mut k = [0u8; 24];
    k[..8].copy_from_slice(&time.to_be_bytes());
    k[8..].copy_from_slice(&d[..16]);
    k
}

/// The staged object of the batch that grows the tree from `base` to `size` with root `root`:
/// two writers staging the same batch from the same base write the same bytes; from different
/// bases, different objects.
fn staging_name(base: u64, size: u64, root: &Hash) -> String {
    format!("{base}-{size}-{}", root.to_hex())
}

impl Log {
    /// Create a new log in the single-box directory `dir`: a fresh Ed25519 key (mode 0600 in
    /// `private/`), the verifier key at `vkey` and `public/vkey`, and a signed checkpoint of
    /// the empty tree.
    pub fn init(dir: &Path, origin: &str) -> Result<Log, LogError> {
        Self::init_with_key(dir, LogKey::generate(origin)?)
    }

    /// [`Log::init`] with a given key (its name is the log's origin): for tests that need the
    /// same signed bytes on every run, and for keys generated elsewhere.
    pub fn init_with_key(dir: &Path, key: LogKey) -> Result<Log, LogError> {
        if dir.join(KEY_FILE).exists() {
            return Err(LogError::Refused(format!(
                "{} already holds a log",
                dir.display()
            )));
        }
        let stores = LogStores::dir(dir)?;
        write_private_key(&dir.join(KEY_FILE), &key.to_skey())?;
        // Beside the log for operators (`toolmark log key`); `public/vkey` is published.
        store::write_atomic(
            &dir.join("vkey"),
            format!("{}\n", key.vkey()).as_bytes(),
            true,
        )?;
        Log::create(stores, key, system_clock())
    }

    /// Create a new log in `stores` with `key` (whose name is the log's origin): the head store
    /// must be empty. Writes `public/vkey` and commits and publishes the empty tree.
    pub fn create(mut stores: LogStores, key: LogKey, clock: Clock) -> Result<Log, LogError> {
        if stores.head.head()?.is_some() || stores.head.meta("vkey")?.is_some() {
            return Err(LogError::Refused(format!(
                "{} already holds a log",
                stores.head.describe()
            )));
        }
        stores
            .public()
            .put_create("vkey", format!("{}\n", key.vkey()).as_bytes())
            .map_err(StoreError::from)?;
        stores.head.set_meta("origin", Some(key.name()))?;
        stores.head.set_meta("vkey", Some(&key.vkey()))?;
        let head = sign_head(&key, 0, merkle::EMPTY_ROOT, clock())?;
        stores.head.commit(None, &head, &[], &[])?;
        Log::open_with(stores, key, clock)
    }

    /// Makes publication wait for witnesses, or not (persisted in the head store, so every
    /// writer of this log obeys it). Turning it off publishes the current head at once.
    pub fn set_witnessed(&mut self, on: bool) -> Result<(), LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        if self.witnessed == on {
            return Ok(());
        }
        self.head_store
            .set_meta("publication", on.then_some(store::WITNESSED))?;
        self.witnessed = on;
        if !on {
            let h = self.head.clone();
            self.publish_checkpoint(&h)?;
        }
        Ok(())
    }

    /// Whether publication waits for witnesses.
    pub fn witnessed(&self) -> bool {
        self.witnessed
    }

    /// Open the log in the single-box directory `dir`, recovering from any interrupted append.
    pub fn open(dir: &Path) -> Result<Log, LogError> {
        Self::open_with_clock(dir, system_clock())
    }

    /// [`Log::open`] with an injected clock.
    pub fn open_with_clock(dir: &Path, clock: Clock) -> Result<Log, LogError> {
        let key = read_key(&dir.join(KEY_FILE))?;
        Log::open_with(LogStores::dir(dir)?, key, clock)
    }

    /// Open a log over any stores: check the key, the head store against the object store and
    /// the `applied` marker, apply a committed batch not yet applied, verify the head's root
    /// from the tiles, and (re)publish the head.
    pub fn open_with(mut stores: LogStores, key: LogKey, clock: Clock) -> Result<Log, LogError> {
        match stores.head.meta("vkey")? {
            Some(v) if v == key.vkey() => {}
            Some(v) => {
                return Err(LogError::Refused(format!(
                    "the signing key ({}) is not this log's key ({v})",
                    key.vkey()
                )));
            }
            None => {
                return Err(LogError::Refused(
                    "the head store records no log key".into(),
                ));
            }
        }
        // `applied` and the published checkpoint only move forward, and only after the head they
        // name was committed: read before the head, they can never be ahead of it unless the
        // head store lost commits (another writer may move all three meanwhile).
        let applied = stores.head.applied()?;
        let public = stores.public();
        let published = public
            .get_bounded("checkpoint", store::MAX_CHECKPOINT_BYTES)
            .map_err(StoreError::from)?;
        let head = stores
            .head
            .head()?
            .ok_or_else(|| LogError::Refused("the store holds no checkpoint: run init".into()))?;
        let opened = crate::note::open_checkpoint(&head.note, &key.vkey())?;
        if opened.size != head.size || opened.root != head.root {
            return Err(LogError::Refused(
                "the stored checkpoint note does not match its record".into(),
            ));
        }
        if let Some((size, root)) = applied {
            if size > head.size {
                return Err(LogError::Refused(format!(
                    "the database is older than the last checkpoint this log published \
                     (database at size {}, published size {size}): restoring an old backup \
                     would let the log sign a fork",
                    head.size
                )));
            }
            if size == head.size && root != head.root {
                return Err(LogError::Refused(format!(
                    "the database and the published checkpoint disagree at size {size}: fork"
                )));
            }
        }
        // The published checkpoint is a second witness of how far the log got (the marker may
        // be lost with the private directory, and a bucket outlives a database).
        if let Some(bytes) = published {
            let published = crate::note::open_checkpoint(&bytes, &key.vkey())?;
            if published.size > head.size
                || (published.size == head.size && published.root != head.root)
            {
                return Err(LogError::Refused(format!(
                    "the public directory holds a checkpoint at size {} that the database \
                     (at size {}) does not: restoring an old database would let the log sign a \
                     fork",
                    published.size, head.size
                )));
            }
        }
        let witnessed = stores.head.meta("publication")?.as_deref() == Some(store::WITNESSED);
        let mut log = Log {
            staging: stores.staging(),
            public,
            head_store: stores.head,
            key,
            head: head.clone(),
            clock,
            poisoned: false,
            witnessed,
            tiles: Mutex::new(ImmutableCache::new(TILE_CACHE_BYTES)),
            holder: format!("{}-{:016x}", std::process::id(), random_u64()),
        };
        log.apply_committed(&head)?;
        log.check_root(&head)?;
        if !log.witnessed {
            log.publish_checkpoint(&head)?;
        }
        Ok(log)
    }

    /// The committed head (as of this writer's last append or refresh).
    pub fn head(&self) -> &Head {
        &self.head
    }

    /// The verifier key (`<name>+<id>+<base64>`).
    pub fn vkey(&self) -> String {
        self.key.vkey()
    }

    /// The head store, for reads the log does not offer itself.
    pub fn head_store(&mut self) -> &mut dyn HeadStore {
        self.head_store.as_mut()
    }

    /// The public files' store.
    pub fn public(&self) -> &Objects {
        &self.public
    }

    /// A public file (`tile/entries/000.p/5`), if it exists.
    pub fn read_public(&self, path: &str) -> Result<Option<Vec<u8>>, LogError> {
        Ok(self.public.get(path).map_err(StoreError::from)?)
    }

    /// Adopt the head store's committed head if another writer moved it, applying its batch if
    /// that writer died before it could.
    pub fn refresh(&mut self) -> Result<(), LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        let r = self.refresh_inner();
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    fn refresh_inner(&mut self) -> Result<(), LogError> {
        let head = self
            .head_store
            .head()?
            .ok_or_else(|| LogError::Refused("the head store lost its checkpoint".into()))?;
        if head == self.head {
            return Ok(());
        }
        if head.size < self.head.size
            || (head.size == self.head.size && head.root != self.head.root)
        {
            return Err(StoreError::Fatal(format!(
                "the head store went from size {} to size {} with another root: fork or rollback",
                self.head.size, head.size
            ))
            .into());
        }
        let opened = crate::note::open_checkpoint(&head.note, &self.key.vkey())?;
        if opened.size != head.size || opened.root != head.root {
            return Err(LogError::Refused(
                "the stored checkpoint note does not match its record".into(),
            ));
        }
        self.witnessed = self.head_store.meta("publication")?.as_deref() == Some(store::WITNESSED);
        self.apply_committed(&head)?;
        if head.size != self.head.size {
            self.check_root(&head)?;
        }
        self.head = head;
        Ok(())
    }

    /// The tree's hashes at the committed size, read from its tiles through the cache.
    fn stored(&self, size: u64) -> impl HashReader + '_ {
        tiles::TileHashReader::new(size, move |t: &TileId| {
            self.cached(&t.path())
                .map(|b| b.as_ref().clone())
                .map_err(ProofError::storage)
        })
    }

    /// A committed public file, from the cache or the object store.
    fn cached(&self, path: &str) -> Result<Arc<Vec<u8>>, StoreError> {
        if let Some(b) = self.tiles.lock().expect("tile cache").get(path) {
            return Ok(b);
        }
        let bytes = self.public.get(path)?.ok_or_else(|| {
            StoreError::Fatal(format!("{}/{path} is missing", self.public.label()))
        })?;
        let bytes = Arc::new(bytes);
        self.tiles
            .lock()
            .expect("tile cache")
            .insert(path.to_owned(), bytes.clone());
        Ok(bytes)
    }

    fn check_root(&self, head: &Head) -> Result<(), LogError> {
        let root = merkle::tree_hash(head.size, &self.stored(head.size))?;
        if root != head.root {
            return Err(LogError::Refused(format!(
                "the tiles give root {} at size {}, the checkpoint says {}",
                root.to_base64(),
                head.size,
                head.root.to_base64()
            )));
        }
        Ok(())
    }

    /// Make sure the object store holds everything of the committed `head`: if `applied` is
    /// behind it, apply its staged object (its writer stopped between the compare-and-swap and
    /// the end of publication), publish, and move `applied`.
    fn apply_committed(&mut self, head: &Head) -> Result<(), LogError> {
        let behind = |a: Option<(u64, Hash)>| a.is_none_or(|(s, _)| s < head.size);
        if !behind(self.head_store.applied()?) {
            return Ok(());
        }
        // Every batch is staged from the applied head (a writer adopts, and applies, the
        // committed head before it computes on it).
        let applied = self.head_store.applied()?;
        let base = applied.map_or(0, |(s, _)| s);
        let name = staging_name(base, head.size, &head.root);
        match self
            .staging
            .get_bounded(&name, MAX_STAGED_BYTES)
            .map_err(StoreError::from)?
        {
            Some(bytes) => {
                // The staged object comes from the untrusted store: nothing of it is written
                // but what its entries give, computed here from the applied tree.
                let corrupt =
                    |why: &str| StoreError::Fatal(format!("{}/{name} {why}", self.staging.label()));
                let files =
                    store::decode_batch(&bytes).ok_or_else(|| corrupt("is not a staged batch"))?;
                let base_root = applied.map_or(merkle::EMPTY_ROOT, |(_, r)| r);
                let entries = Self::staged_entries(&files, base, head.size)
                    .ok_or_else(|| corrupt("does not hold the committed entries"))?;
                let (root, expected) = self.layout(base, base_root, &entries)?;
                if root != head.root || expected != files {
                    return Err(corrupt("does not reproduce the committed head").into());
                }
                self.apply(&expected)?;
            }
            None => {
                // Another writer may have applied it and dropped the object meanwhile.
                if behind(self.head_store.applied()?) && head.size > 0 {
                    // Everything may be in place and only `applied` lost (a crash right
                    // before it was written): the root check of the caller tells.
                    self.check_root(head).map_err(|e| {
                        StoreError::Fatal(format!(
                            "the committed size {} is not applied and its staged batch \
                             {}/{name} is gone: {e}",
                            head.size,
                            self.staging.label()
                        ))
                    })?;
                }
            }
        }
        self.finish(head, base)?;
        Ok(())
    }

    /// Write a committed batch's files create-only (identical bytes already there are fine; other
    /// bytes are a fork alarm) and make them durable.
    fn apply(&self, files: &[(String, Vec<u8>)]) -> Result<(), LogError> {
        self.public
            .put_create_all(files)
            .map_err(StoreError::from)?;
        self.public.flush().map_err(StoreError::from)?;
        Ok(())
    }

    /// After a committed head's files are durable: publish its checkpoint (unless witnesses
    /// must cosign it first), record `applied`, drop its staged object.
    fn finish(&mut self, head: &Head, base: u64) -> Result<(), LogError> {
        if !self.witnessed {
            self.publish_checkpoint(head)?;
        }
        self.head_store.set_applied(head.size, head.root)?;
        // Best effort: a staged object left behind is only garbage (its head is applied).
        if base < head.size {
            let _ = self
                .staging
                .delete(&staging_name(base, head.size, &head.root));
        }
        Ok(())
    }

    fn publish_checkpoint(&self, head: &Head) -> Result<(), LogError> {
        store::publish_forward(
            &self.public,
            &self.key.vkey(),
            &head.note,
            head.size,
            head.root,
        )?;
        Ok(())
    }

    /// The time to sign the next checkpoint with: this writer's clock, or the head's time when
    /// another writer's clock ran at most [`MAX_CLOCK_SKEW`] ahead (several machines' clocks are
    /// never equal; a checkpoint's time must not go backwards). Further behind is a clock going
    /// backwards, which the head store refuses.
    fn signing_time(&self) -> u64 {
        let now = (self.clock)();
        if now < self.head.signed_at && self.head.signed_at - now <= MAX_CLOCK_SKEW {
            self.head.signed_at
        } else {
            now
        }
    }

    /// Wait for the writers' lease (at most [`LEASE_WAIT`]; then go on without it).
    fn lease(&mut self) -> Result<(), LogError> {
        let start = Instant::now();
        while !self.head_store.try_lease(&self.holder, LEASE_TTL)? {
            if start.elapsed() >= LEASE_WAIT {
                return Ok(());
            }
            std::thread::sleep(LEASE_POLL);
        }
        Ok(())
    }

    /// Append a batch. Each entry's `prev` is set here from the head store's record of its
    /// subject. An entry already logged (the same observation, by any writer) is not logged
    /// again: its index is the one it was logged at.
    pub fn append(&mut self, mut entries: Vec<Entry>) -> Result<Appended, LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        if entries.len() > MAX_BATCH {
            return Err(LogError::BatchTooLarge(entries.len()));
        }
        if entries.is_empty() {
            // Nothing to sequence: no new checkpoint (a heartbeat is `resign`'s job).
            return Ok(Appended {
                indices: Vec::new(),
                base: self.head.size,
                checkpoint: self.head.note.clone(),
            });
        }
        for e in entries.iter_mut() {
            // Set again below for every entry logged now; cleared here so the key needs no copy.
            e.prev = None;
        }
        // Encoded once: the key hashes these bytes, and the leaf is them with `prev` set.
        let encoded = par_map(&entries, |e| {
            e.encode()
                .map(|plain| (key_of(&e.observed_at, &plain), plain))
        });
        let mut keys = Vec::with_capacity(entries.len());
        let mut plains = Vec::with_capacity(entries.len());
        for (index, r) in encoded.into_iter().enumerate() {
            let (key, plain) = r.map_err(|source| LogError::Entry { index, source })?;
            keys.push(key);
            plains.push(plain);
        }
        let result = self.append_keyed(entries, &keys, &plains);
        if matches!(
            result,
            Err(LogError::Store(_))
                | Err(LogError::Proof(_))
                | Err(LogError::Format(_))
                | Err(LogError::Contended)
        ) {
            self.poisoned = true;
        }
        let _ = self.head_store.release_lease(&self.holder);
        result
    }

    fn append_keyed(
        &mut self,
        mut entries: Vec<Entry>,
        keys: &[DedupKey],
        plains: &[Vec<u8>],
    ) -> Result<Appended, LogError> {
        for _ in 0..MAX_CAS_RETRIES {
            self.lease()?;
            self.refresh_inner()?;
            let logged: HashMap<DedupKey, u64> =
                self.head_store.logged(keys)?.into_iter().collect();
            // The entries to log now: not logged before, and each key once.
            let old = self.head.size;
            if logged.values().any(|&i| i >= old) {
                // Another writer logged some of them after our head was read: read it again.
                continue;
            }
            let mut at: HashMap<DedupKey, u64> = logged.clone();
            let mut fresh: Vec<usize> = Vec::new();
            for (i, k) in keys.iter().enumerate() {
                if !at.contains_key(k) {
                    at.insert(*k, old + fresh.len() as u64);
                    fresh.push(i);
                }
            }
            let indices: Vec<u64> = keys.iter().map(|k| at[k]).collect();
            if fresh.is_empty() {
                return Ok(Appended {
                    indices,
                    base: old,
                    checkpoint: self.head.note.clone(),
                });
            }
            // Each fresh entry's subject id, computed once (a hash and its hex).
            let fresh_ids: Vec<TargetId> = fresh.iter().map(|&i| entries[i].subject.id()).collect();
            let ids: Vec<String> = {
                let mut seen = std::collections::HashSet::new();
                fresh_ids
                    .iter()
                    .map(|id| id.as_str())
                    .filter(|id| seen.insert(*id))
                    .map(str::to_owned)
                    .collect()
            };
            let mut last: HashMap<String, u64> =
                self.head_store.subjects_last(&ids)?.into_iter().collect();
            let mut encoded = Vec::with_capacity(fresh.len());
            let mut new_keys = Vec::with_capacity(fresh.len());
            for (n, (&i, id)) in fresh.iter().zip(&fresh_ids).enumerate() {
                let index = old + n as u64;
                let e = &mut entries[i];
                e.prev = last.get(id.as_str()).copied();
                last.insert(id.to_string(), index);
                encoded.push(
                    Entry::encode_with_prev(&plains[i], e.prev)
                        .map_err(|source| LogError::Entry { index: i, source })?,
                );
                new_keys.push((keys[i], index));
            }
            let subjects: Vec<(String, u64)> = ids
                .into_iter()
                .filter_map(|id| last.get(&id).map(|&l| (id, l)))
                .filter(|(_, l)| *l >= old)
                .collect();
            match self.append_encoded(&encoded, &subjects, &new_keys) {
                Ok(checkpoint) => {
                    return Ok(Appended {
                        indices,
                        base: old,
                        checkpoint,
                    });
                }
                Err(LogError::Store(StoreError::Conflict { .. })) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(LogError::Contended)
    }

    /// The root and the public files (new tiles, then bundles) of the tree `old` (of root
    /// `old_root`) grown by `encoded`, computed from the old tree's tiles, with our own
    /// consistency proof from `old_root` checked.
    fn layout(
        &self,
        old: u64,
        old_root: Hash,
        encoded: &[Vec<u8>],
    ) -> Result<(Hash, Files), LogError> {
        let new = old + encoded.len() as u64;
        let stored = self.stored(old);
        let mut overlay = Overlay {
            stored: &stored,
            base: merkle::stored_hash_count(old),
            pending: Vec::new(),
        };
        let leaves = par_map(encoded, |e| merkle::leaf_hash(e));
        for (i, leaf) in leaves.into_iter().enumerate() {
            let hs = merkle::stored_hashes_for_leaf(old + i as u64, leaf, &overlay)?;
            overlay.pending.extend(hs);
        }
        let root = merkle::tree_hash(new, &overlay)?;
        if old > 0 {
            let proof = merkle::consistency_proof(old, new, &overlay)?;
            merkle::verify_consistency(&proof, new, &root, old, &old_root)
                .map_err(|e| LogError::Refused(format!("our own consistency proof failed: {e}")))?;
        }
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for t in tiles::new_tiles(old, new) {
            files.push((t.path(), tiles::tile_data(&t, &overlay)?));
        }
        drop(overlay);
        drop(stored);
        files.extend(self.bundles(old, encoded)?);
        Ok((root, files))
    }

    /// The entries `from..to` a staged batch's bundles hold (`None` if they do not hold exactly
    /// those).
    fn staged_entries(files: &[(String, Vec<u8>)], from: u64, to: u64) -> Option<Vec<Vec<u8>>> {
        let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
        for (p, d) in files {
            if let Ok(tiles::ParsedPath::Bundle { index, width }) = tiles::parse_tile_path(p) {
                let members = tiles::decode_bundle(d).ok()?;
                if members.len() != usize::from(width) {
                    return None;
                }
                for (k, m) in members.into_iter().enumerate() {
                    let i = index * 256 + k as u64;
                    if (from..to).contains(&i) {
                        out.push((i, m.to_vec()));
                    }
                }
            }
        }
        out.sort_by_key(|(i, _)| *i);
        let contiguous = out.len() as u64 == to - from
            && out
                .iter()
                .enumerate()
                .all(|(k, (i, _))| *i == from + k as u64);
        contiguous.then(|| out.into_iter().map(|(_, e)| e).collect())
    }

    /// Sequence `encoded` after the head; returns the new checkpoint. A lost compare-and-swap is
    /// [`StoreError::Conflict`] (nothing was committed; the staged object is dropped).
    fn append_encoded(
        &mut self,
        encoded: &[Vec<u8>],
        subjects: &[(String, u64)],
        keys: &[(DedupKey, u64)],
    ) -> Result<Vec<u8>, LogError> {
        let old = self.head.size;
        let new = old + encoded.len() as u64;
        let (root, files) = self.layout(old, self.head.root, encoded)?;
        let head = sign_head(&self.key, new, root, self.signing_time())?;
        let name = staging_name(old, new, &root);
        self.staging
            .put_create(&name, store::encode_batch(&files))
            .map_err(StoreError::from)?;
        self.staging.flush().map_err(StoreError::from)?;
        if let Err(e) = self
            .head_store
            .commit(Some((old, self.head.root)), &head, subjects, keys)
        {
            // Drop our staged object only if nobody committed this very batch: a writer that
            // staged the same batch from the same base wrote the same object, and may still
            // need it to be applied.
            if matches!(e, StoreError::Conflict { .. })
                && self
                    .head_store
                    .checkpoint_at(new)
                    .ok()
                    .flatten()
                    .is_none_or(|h| h.root != root)
            {
                let _ = self.staging.delete(&name);
            }
            return Err(e.into());
        }
        // Committed: from here on the batch is acknowledged, whatever happens to publication
        // (whoever opens or appends next applies it).
        self.apply(&files)?;
        {
            let mut cache = self.tiles.lock().expect("tile cache");
            for (p, d) in files {
                cache.insert(p, Arc::new(d));
            }
        }
        self.finish(&head, old)?;
        let checkpoint = head.note.clone();
        self.head = head;
        Ok(checkpoint)
    }

    /// The entry bundles a batch writes: the bundle the old size left partial gets its earlier
    /// entries back from the published partial bundle.
    fn bundles(&self, old: u64, encoded: &[Vec<u8>]) -> Result<Vec<(String, Vec<u8>)>, LogError> {
        let new = old + encoded.len() as u64;
        let mut out = Vec::new();
        let first = old / 256;
        let mut carried: Vec<Vec<u8>> = Vec::new();
        if old % 256 != 0 {
            let path = tiles::bundle_path(first, (old % 256) as u16);
            let bytes = self.cached(&path)?;
            carried = tiles::decode_bundle(&bytes)?
                .into_iter()
                .map(<[u8]>::to_vec)
                .collect();
            // The bundle comes from the untrusted store: its entries go into a new immutable
            // bundle only if they hash to the tree's leaves (whose tiles reproduce the root).
            let leaves: Vec<u64> = (first * 256..old)
                .map(|i| merkle::stored_hash_index(0, i))
                .collect();
            let want = self.stored(old).read_hashes(&leaves)?;
            if carried.len() != want.len()
                || carried
                    .iter()
                    .zip(&want)
                    .any(|(e, w)| merkle::leaf_hash(e) != *w)
            {
                return Err(StoreError::Fatal(format!(
                    "the published bundle {path} does not hold the tree's entries"
                ))
                .into());
            }
        }
        let mut b = first;
        while b * 256 < new {
            let start = (b * 256).max(old);
            let end = ((b + 1) * 256).min(new);
            let mut members: Vec<&[u8]> = if b == first {
                carried.iter().map(Vec::as_slice).collect()
            } else {
                Vec::new()
            };
            members.extend(
                encoded[(start - old) as usize..(end - old) as usize]
                    .iter()
                    .map(Vec::as_slice),
            );
            let width = (end - b * 256) as u16;
            out.push((
                tiles::bundle_path(b, width),
                tiles::encode_bundle(&members)?,
            ));
            b += 1;
        }
        Ok(out)
    }

    /// Re-sign the current head with a fresh timestamp (a heartbeat on a day without entries).
    pub fn resign(&mut self) -> Result<&Head, LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        self.refresh()?;
        let head = sign_head(
            &self.key,
            self.head.size,
            self.head.root,
            self.signing_time(),
        )?;
        let r = self
            .head_store
            .commit(Some((self.head.size, self.head.root)), &head, &[], &[])
            .map_err(LogError::from)
            .and_then(|_| self.finish(&head, self.head.size));
        if let Err(e) = r {
            self.poisoned = true;
            return Err(e);
        }
        self.head = head;
        Ok(&self.head)
    }

    /// Inclusion proof of `index` in the tree of `size` (≤ the head's size).
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<Hash>, LogError> {
        self.check_size(size)?;
        if index >= size {
            return Err(LogError::Refused(format!(
                "index {index} is not below size {size}"
            )));
        }
        Ok(merkle::inclusion_proof(
            index,
            size,
            &self.stored(self.head.size),
        )?)
    }

    /// Consistency proof from `old` to `new` (0 < old ≤ new ≤ the head's size).
    pub fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, LogError> {
        self.check_size(new)?;
        if old == 0 || old > new {
            return Err(LogError::Refused(format!(
                "no consistency proof from {old} to {new}"
            )));
        }
        Ok(merkle::consistency_proof(
            old,
            new,
            &self.stored(self.head.size),
        )?)
    }

    /// The root of the tree at `size` (≤ the head's size).
    pub fn root_at(&self, size: u64) -> Result<Hash, LogError> {
        self.check_size(size)?;
        Ok(merkle::tree_hash(size, &self.stored(self.head.size))?)
    }

    fn check_size(&self, size: u64) -> Result<(), LogError> {
        if size > self.head.size {
            return Err(LogError::Refused(format!(
                "size {size} is beyond the log's {}",
                self.head.size
            )));
        }
        Ok(())
    }

    /// The entry bytes at `index`, read from its published bundle.
    pub fn entry(&self, index: u64) -> Result<Vec<u8>, LogError> {
        self.check_size(index + 1)?;
        let b = index / 256;
        let width = ((b + 1) * 256).min(self.head.size) - b * 256;
        let path = tiles::bundle_path(b, width as u16);
        let bytes = self.cached(&path)?;
        let entries = tiles::decode_bundle(&bytes)?;
        entries
            .get((index % 256) as usize)
            .map(|e| e.to_vec())
            .ok_or_else(|| LogError::Refused(format!("bundle {path} is short")))
    }

    /// A `c2sp.org/tlog-proof@v1` bundle for `index` against the current checkpoint, with the
    /// entry's bytes in its `extra` line, so the bundle alone is enough to check offline.
    pub fn tlog_proof(&self, index: u64) -> Result<String, LogError> {
        let proof = self.inclusion_proof(index, self.head.size)?;
        let entry = self.entry(index)?;
        Ok(crate::proof::encode_tlog_proof(
            Some(&entry),
            index,
            &proof,
            &self.head.note,
        ))
    }
}

/// `f` of every item, in order, over up to [`MAX_WRITER_THREADS`] scoped threads (one for a
/// batch smaller than [`PARALLEL_MIN`]).
fn par_map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_WRITER_THREADS);
    if threads < 2 || items.len() < PARALLEL_MIN {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let f = &f;
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<U>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().expect("a writer thread does not panic"))
            .collect()
    })
}

fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    // Only distinguishes writers in the lease; a failure leaves the pid to do it.
    let _ = getrandom::fill(&mut b);
    u64::from_le_bytes(b)
}

/// Reads a signing key file (`PRIVATE+KEY+…`).
pub fn read_key(path: &Path) -> Result<LogKey, LogError> {
    let skey = std::fs::read_to_string(path)
        .map_err(|e| LogError::Refused(format!("{}: {e}", path.display())))?;
    Ok(LogKey::from_skey(skey.trim())?)
}

/// Writes a new signing key file (mode 0600; refuses to replace one).
pub fn write_private_key(path: &Path, skey: &str) -> Result<(), LogError> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| LogError::Refused(format!("{}: {e}", parent.display())))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| LogError::Refused(format!("{}: {e}", path.display())))?;
    use std::io::Write;
    f.write_all(format!("{skey}\n").as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| LogError::Refused(format!("{}: {e}", path.display())))
}

fn sign_head(key: &LogKey, size: u64, root: Hash, signed_at: u64) -> Result<Head, LogError> {
    let note = key.sign_checkpoint(&Checkpoint {
        origin: key.name().to_owned(),
        size,
        root,
        extensions: Vec::new(),
    })?;
    Ok(Head {
        size,
        root,
        note,
        signed_at,
    })
}
