//! The single writer: turns batches of entries into tiles, bundles and a signed checkpoint.
//!
//! An append goes: encode every entry (with `prev` filled in) → compute the new stored hashes,
//! root, tiles and bundles in memory → check our own consistency proof from the old head →
//! append the hashes durably → stage the public files durably → compare-and-swap the new
//! checkpoint in the store → publish files, then the checkpoint. Indices are acknowledged only
//! after the compare-and-swap, so a crash at any step either loses an unacknowledged batch or
//! leaves one that [`Log::open`] finishes publishing. Any storage error poisons the `Log`: the
//! caller must reopen it, which runs that recovery.
//!
//! Opening refuses a store whose head is older than the last checkpoint this log published (the
//! marker next to the key), a head that differs from it at the same size, stored hashes that do
//! not reproduce the head's root, and a key that is not the log's.

use crate::entry::{Entry, EntryError, TargetId};
use crate::merkle::{self, Hash, HashReader, ProofError};
use crate::note::{Checkpoint, LogKey};
use crate::store::{FileStore, Head, Storage, StoreError};
use crate::tiles;
use std::collections::HashMap;
use std::path::Path;

/// Most entries one `append` call takes: a day's crawl of the whole registry is about 20,000
/// targets; a 100,000-entry cap keeps a batch's in-memory tiles and bundles to tens of MB.
pub const MAX_BATCH: usize = 100_000;

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
    /// A request the log will not carry out (it says why).
    #[error("{0}")]
    Refused(String),
}

/// The clock the log signs with (Unix seconds); injectable for tests.
pub type Clock = Box<dyn Fn() -> u64 + Send>;

fn system_clock() -> Clock {
    Box::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    })
}

/// A log open for writing.
pub struct Log<S: Storage = FileStore> {
    store: S,
    key: LogKey,
    head: Head,
    clock: Clock,
    poisoned: bool,
}

/// The result of an append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The index of each entry, in the order given.
    pub indices: Vec<u64>,
    /// The new checkpoint note.
    pub checkpoint: Vec<u8>,
}

/// Reads stored hashes from the store, and the ones a batch has computed but not yet stored.
struct Overlay<'a, S: Storage> {
    store: &'a S,
    base: u64,
    pending: Vec<Hash>,
}

impl<S: Storage> HashReader for Overlay<'_, S> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ProofError> {
        let stored: Vec<u64> = indexes.iter().copied().filter(|&i| i < self.base).collect();
        let mut from_store = self
            .store
            .read_hashes(&stored)
            .map_err(ProofError::storage)?
            .into_iter();
        indexes
            .iter()
            .map(|&i| {
                if i < self.base {
                    from_store.next().ok_or(ProofError::MissingHash(i))
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

/// The store itself as a hash reader (no pending hashes).
struct Stored<'a, S: Storage>(&'a S);

impl<S: Storage> HashReader for Stored<'_, S> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ProofError> {
        self.0.read_hashes(indexes).map_err(ProofError::storage)
    }
}

/// Where a log directory keeps its signing key (mode 0600, outside `public/`).
pub const KEY_FILE: &str = "private/log.key";

impl Log<FileStore> {
    /// Create a new log in `dir`: a fresh Ed25519 key (mode 0600, outside `public/`), the
    /// verifier key at `public/vkey`, and a signed checkpoint of the empty tree.
    pub fn init(dir: &Path, origin: &str) -> Result<Log<FileStore>, LogError> {
        Self::init_with_key(dir, LogKey::generate(origin)?)
    }

    /// [`Log::init`] with a given key (its name is the log's origin): for tests that need the
    /// same signed bytes on every run, and for keys generated elsewhere.
    pub fn init_with_key(dir: &Path, key: LogKey) -> Result<Log<FileStore>, LogError> {
        let store = FileStore::open(dir)?;
        if store.head()?.is_some() || dir.join(KEY_FILE).exists() {
            return Err(LogError::Refused(format!(
                "{} already holds a log",
                dir.display()
            )));
        }
        write_private_key(&dir.join(KEY_FILE), &key.to_skey())?;
        store.set_meta("origin", key.name())?;
        store.set_meta("vkey", &key.vkey())?;
        // Published with the log, and beside it for operators (`toolmark log key`).
        for path in ["public/vkey", "vkey"] {
            crate::store::write_atomic(
                &dir.join(path),
                format!("{}\n", key.vkey()).as_bytes(),
                true,
            )?;
        }
        let mut store = store;
        let clock = system_clock();
        let head = sign_head(&key, 0, merkle::EMPTY_ROOT, clock())?;
        store.commit(None, &head, &[])?;
        store.publish(&head)?;
        Log::open_with(store, key, clock)
    }

    /// Makes publication wait for witnesses, or not (persisted in the log's database; see
    /// [`FileStore::set_witnessed`]). Turning it off publishes the current head at once.
    pub fn set_witnessed(&mut self, on: bool) -> Result<(), LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        if self.store.witnessed() == on {
            return Ok(());
        }
        self.store.set_witnessed(on)?;
        if !on {
            self.store.publish(&self.head)?;
        }
        Ok(())
    }

    /// Open the log in `dir`, recovering from any interrupted append.
    pub fn open(dir: &Path) -> Result<Log<FileStore>, LogError> {
        Self::open_with_clock(dir, system_clock())
    }

    /// [`Log::open`] with an injected clock.
    pub fn open_with_clock(dir: &Path, clock: Clock) -> Result<Log<FileStore>, LogError> {
        let skey = std::fs::read_to_string(dir.join(KEY_FILE))
            .map_err(|e| LogError::Refused(format!("{}: {e}", dir.join(KEY_FILE).display())))?;
        let key = LogKey::from_skey(skey.trim())?;
        let store = FileStore::open(dir)?;
        match store.meta("vkey")? {
            Some(v) if v == key.vkey() => {}
            Some(v) => {
                return Err(LogError::Refused(format!(
                    "the key in {} ({}) is not this log's key ({v})",
                    KEY_FILE,
                    key.vkey()
                )));
            }
            None => return Err(LogError::Refused("the database records no log key".into())),
        }
        Log::open_with(store, key, clock)
    }
}

fn write_private_key(path: &Path, skey: &str) -> Result<(), LogError> {
    use std::os::unix::fs::OpenOptionsExt;
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

impl<S: Storage> Log<S> {
    /// Open a log over any store: check it against the marker and the key, drop uncommitted
    /// hashes, verify the head's root from the stored hashes, and (re)publish the head.
    pub fn open_with(mut store: S, key: LogKey, clock: Clock) -> Result<Log<S>, LogError> {
        let head = store
            .head()?
            .ok_or_else(|| LogError::Refused("the store holds no checkpoint: run init".into()))?;
        if let Some((size, root)) = store.marker()? {
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
        // be lost with the private directory).
        if let Some(bytes) = store.read_public("checkpoint")? {
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
        let opened = crate::note::open_checkpoint(&head.note, &key.vkey())?;
        if opened.size != head.size || opened.root != head.root {
            return Err(LogError::Refused(
                "the stored checkpoint note does not match its record".into(),
            ));
        }
        let want = merkle::stored_hash_count(head.size);
        let have = store.hash_count()?;
        if have < want {
            return Err(LogError::Refused(format!(
                "{} stored hashes are missing: the hash file is older than the checkpoint",
                want - have
            )));
        }
        if have > want {
            store.truncate_hashes(want)?;
        }
        let root = merkle::tree_hash(head.size, &Stored(&store))?;
        if root != head.root {
            return Err(LogError::Refused(format!(
                "the stored hashes give root {} at size {}, the checkpoint says {}",
                root.to_base64(),
                head.size,
                head.root.to_base64()
            )));
        }
        store.publish(&head)?;
        Ok(Log {
            store,
            key,
            head,
            clock,
            poisoned: false,
        })
    }

    /// The committed head.
    pub fn head(&self) -> &Head {
        &self.head
    }

    /// The verifier key (`<name>+<id>+<base64>`).
    pub fn vkey(&self) -> String {
        self.key.vkey()
    }

    /// The storage underneath, for reads the log does not offer itself.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Append a batch. Each entry's `prev` is set here from the log's own record of its subject.
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
                checkpoint: self.head.note.clone(),
            });
        }
        let old = self.head.size;
        let mut last: HashMap<TargetId, u64> = HashMap::new();
        let mut encoded = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter_mut().enumerate() {
            let id = e.subject.id();
            e.prev = match last.get(&id) {
                Some(&p) => Some(p),
                None => self.store.subject_last(id.as_str())?,
            };
            let index = old + i as u64;
            last.insert(id, index);
            encoded.push(
                e.encode()
                    .map_err(|source| LogError::Entry { index: i, source })?,
            );
        }
        let subjects = last.into_iter().map(|(id, i)| (id.to_string(), i));
        let result = self.append_encoded(&encoded, subjects.collect());
        if matches!(result, Err(LogError::Store(_)) | Err(LogError::Proof(_))) {
            self.poisoned = true;
        }
        result
    }

    fn append_encoded(
        &mut self,
        encoded: &[Vec<u8>],
        subjects: Vec<(String, u64)>,
    ) -> Result<Appended, LogError> {
        let old = self.head.size;
        let new = old + encoded.len() as u64;
        let mut overlay = Overlay {
            store: &self.store,
            base: merkle::stored_hash_count(old),
            pending: Vec::new(),
        };
        for (i, bytes) in encoded.iter().enumerate() {
            let hs =
                merkle::stored_hashes_for_leaf(old + i as u64, merkle::leaf_hash(bytes), &overlay)?;
            overlay.pending.extend(hs);
        }
        let root = merkle::tree_hash(new, &overlay)?;
        if old > 0 {
            let proof = merkle::consistency_proof(old, new, &overlay)?;
            merkle::verify_consistency(&proof, new, &root, old, &self.head.root)
                .map_err(|e| LogError::Refused(format!("our own consistency proof failed: {e}")))?;
        }
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for t in tiles::new_tiles(old, new) {
            files.push((t.path(), tiles::tile_data(&t, &overlay)?));
        }
        files.extend(self.bundles(old, encoded)?);
        let head = sign_head(&self.key, new, root, (self.clock)())?;
        let pending = std::mem::take(&mut overlay.pending);
        self.store.append_hashes(&pending)?;
        self.store.stage(new, &files)?;
        self.store
            .commit(Some((old, self.head.root)), &head, &subjects)?;
        self.store.publish(&head)?;
        let checkpoint = head.note.clone();
        self.head = head;
        Ok(Appended {
            indices: (old..new).collect(),
            checkpoint,
        })
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
            let bytes = self.store.read_public(&path)?.ok_or_else(|| {
                LogError::Refused(format!("the published bundle {path} is missing"))
            })?;
            carried = tiles::decode_bundle(&bytes)?
                .into_iter()
                .map(<[u8]>::to_vec)
                .collect();
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
        let head = sign_head(&self.key, self.head.size, self.head.root, (self.clock)())?;
        let r = self
            .store
            .commit(Some((self.head.size, self.head.root)), &head, &[])
            .and_then(|_| self.store.publish(&head));
        if let Err(e) = r {
            self.poisoned = true;
            return Err(e.into());
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
        Ok(merkle::inclusion_proof(index, size, &Stored(&self.store))?)
    }

    /// Consistency proof from `old` to `new` (0 < old ≤ new ≤ the head's size).
    pub fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, LogError> {
        self.check_size(new)?;
        if old == 0 || old > new {
            return Err(LogError::Refused(format!(
                "no consistency proof from {old} to {new}"
            )));
        }
        Ok(merkle::consistency_proof(old, new, &Stored(&self.store))?)
    }

    /// The root of the tree at `size` (≤ the head's size).
    pub fn root_at(&self, size: u64) -> Result<Hash, LogError> {
        self.check_size(size)?;
        Ok(merkle::tree_hash(size, &Stored(&self.store))?)
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
        let bytes = self
            .store
            .read_public(&path)?
            .ok_or_else(|| LogError::Refused(format!("bundle {path} is missing")))?;
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
