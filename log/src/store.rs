//! Where a log keeps its state: the storage contract and the default store (SQLite + files).
//!
//! A log directory looks like this:
//!
//! ```text
//! DIR/log.sqlite          checkpoints signed (CAS row per size), subjects' last entries, meta
//! DIR/private/log.key     the Ed25519 signing key (mode 0600), never served
//! DIR/private/marker      the last checkpoint this log published: "<size> <base64 root>"
//! DIR/private/checkpoint  the newest checkpoint the log signed (with witnesses, published only
//!                         once cosigned: see [`publish_witnessed`])
//! DIR/private/publish.lock held (flock) while a cosigned checkpoint is being published
//! DIR/private/hashes      the stored Merkle hashes, 32 bytes each, in tlog stored-hash order
//! DIR/private/lock        held (flock) by the one process that has the log open
//! DIR/staging/<size>      the files of a committed batch until they are all durable in public/
//! DIR/public/             exactly C2SP tlog-tiles: checkpoint, vkey, tile/<L>/<N>, tile/entries/<N>
//! ```
//!
//! Only `public/` is meant to be served; it can be copied to any static host or object store as
//! it is. Everything in it except `checkpoint` is immutable once written.

use crate::merkle::Hash;
use rusqlite::{Connection, OptionalExtension, params};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A checkpoint the log has committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The tree size it commits to.
    pub size: u64,
    /// The tree's root hash at that size.
    pub root: Hash,
    /// The signed checkpoint note, as published.
    pub note: Vec<u8>,
    /// When it was signed (Unix seconds). Never goes backwards.
    pub signed_at: u64,
}

/// What can go wrong in storage.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The SQLite database failed.
    #[error("database: {0}")]
    Db(#[from] rusqlite::Error),
    /// The compare-and-swap found a different current checkpoint than the writer expected.
    #[error("checkpoint compare-and-swap failed: expected {expected:?}, found {found:?}")]
    Conflict {
        /// The size the writer expected to replace (`None`: no checkpoint yet).
        expected: Option<u64>,
        /// The size stored.
        found: Option<u64>,
    },
    /// A rule that protects the log's history would be broken; the log must stop.
    #[error("refused: {0}")]
    Fatal(String),
    /// A publication the store will not make (it says why); the log itself is unharmed.
    #[error("not published: {0}")]
    Refused(String),
    /// A failure injected by a test double.
    #[error("injected fault at {0}")]
    Injected(&'static str),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The storage contract the sequencer relies on.
///
/// * `append_hashes` MUST be durable when it returns and MUST NOT alter hashes already stored.
///   Hashes beyond the committed head MAY exist after a crash; the sequencer truncates them.
/// * `stage` MUST make the batch's public files durable (outside the public directory) before it
///   returns.
/// * `commit` is a compare-and-swap: it MUST succeed only if the current head is exactly
///   `expected` (size and root), MUST be durable when it returns, MUST NOT store two different
///   roots for one size, and MUST refuse a `signed_at` older than the current head's. Several
///   processes MAY race; at most one MUST win.
/// * `publish` MUST move the staged files of the committed head into the public directory before
///   it writes `public/checkpoint`, MUST be idempotent (recovery calls it again), and MUST NOT
///   report success before the files and the checkpoint are durable.
/// * A store MUST NOT be trusted to serve reads honestly to others: readers verify tiles against
///   signed checkpoints. It MUST be trusted by the writer: whoever can rewrite `commit`'s record
///   can make the log sign a fork.
pub trait Storage {
    /// The committed head, or `None` for a log with no checkpoint yet.
    fn head(&self) -> Result<Option<Head>, StoreError>;
    /// How many stored hashes exist (possibly more than the head covers, after a crash).
    fn hash_count(&self) -> Result<u64, StoreError>;
    /// The stored hashes at `indexes` (positions in the stored order), in that order.
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, StoreError>;
    /// Drop stored hashes from `count` on (uncommitted leftovers of a crashed batch).
    fn truncate_hashes(&mut self, count: u64) -> Result<(), StoreError>;
    /// Durably add `hashes` after the stored ones.
    fn append_hashes(&mut self, hashes: &[Hash]) -> Result<(), StoreError>;
    /// Durably keep the public files of the batch that will make the tree `size` big.
    fn stage(&mut self, size: u64, files: &[(String, Vec<u8>)]) -> Result<(), StoreError>;
    /// Compare-and-swap the head, recording each subject's newest entry index with it.
    fn commit(
        &mut self,
        expected: Option<(u64, Hash)>,
        new: &Head,
        subjects: &[(String, u64)],
    ) -> Result<(), StoreError>;
    /// Put the committed head's staged files and its checkpoint in the public directory.
    fn publish(&mut self, head: &Head) -> Result<(), StoreError>;
    /// A file of the public directory (`tile/entries/000.p/5`), if it exists.
    fn read_public(&self, path: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// The newest entry index of a subject.
    fn subject_last(&self, id: &str) -> Result<Option<u64>, StoreError>;
    /// The last checkpoint this log published, as remembered next to the key ("size root").
    fn marker(&self) -> Result<Option<(u64, Hash)>, StoreError>;
}

/// The default store: SQLite for the compare-and-swap record, files for everything else.
pub struct FileStore {
    dir: PathBuf,
    db: Connection,
    hashes: File,
    /// Publication waits for witnesses: `publish` leaves `public/checkpoint` alone (meta
    /// `publication` = `witnessed`).
    witnessed: bool,
    /// Held (an exclusive `flock`) for as long as the store is open: one writer per log, across
    /// processes; the kernel releases it when the process dies.
    _lock: File,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS checkpoints (
    size INTEGER PRIMARY KEY,
    root BLOB NOT NULL,
    note BLOB NOT NULL,
    signed_at INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS subjects (id TEXT PRIMARY KEY, last INTEGER NOT NULL) STRICT;
";

impl FileStore {
    /// Open (creating what is missing) the store in `dir`.
    pub fn open(dir: &Path) -> Result<FileStore, StoreError> {
        for sub in ["private", "public", "staging"] {
            fs::create_dir_all(dir.join(sub)).map_err(io(&dir.join(sub)))?;
        }
        let lp = dir.join("private/lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lp)
            .map_err(io(&lp))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(
            |_| {
                StoreError::Fatal(format!(
                    "{} is open for writing by another process (lock {})",
                    dir.display(),
                    lp.display()
                ))
            },
        )?;
        let db = Connection::open(dir.join("log.sqlite"))?;
        db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")?;
        db.busy_timeout(std::time::Duration::from_secs(10))?;
        db.execute_batch(SCHEMA)?;
        let hp = dir.join("private/hashes");
        let hashes = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&hp)
            .map_err(io(&hp))?;
        let witnessed = db
            .query_row(
                "SELECT value FROM meta WHERE key = 'publication'",
                [],
                |r| r.get::<_, String>(0),
            )
            .optional()?
            .is_some_and(|v| v == WITNESSED);
        Ok(FileStore {
            dir: dir.to_owned(),
            db,
            hashes,
            witnessed,
            _lock: lock,
        })
    }

    /// Whether publication waits for witnesses.
    pub fn witnessed(&self) -> bool {
        self.witnessed
    }

    /// Makes publication wait for witnesses (`true`: `publish` no longer writes
    /// `public/checkpoint`; [`publish_witnessed`] does, with cosignatures) or not. Persisted, so
    /// every writer of this log (a `crawl` beside `run`) obeys it.
    pub fn set_witnessed(&mut self, on: bool) -> Result<(), StoreError> {
        if on {
            self.set_meta("publication", WITNESSED)?;
        } else {
            self.db
                .execute("DELETE FROM meta WHERE key = 'publication'", [])?;
        }
        self.witnessed = on;
        Ok(())
    }

    /// The log's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A value of the `meta` table (origin, vkey).
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .db
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    /// Set a value of the `meta` table.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
            params![key, value],
        )?;
        Ok(())
    }

    fn staging_file(&self, size: u64) -> PathBuf {
        self.dir.join("staging").join(size.to_string())
    }
}

/// The `meta` value of `publication` when publication waits for witnesses.
pub const WITNESSED: &str = "witnessed";

/// Takes `DIR/private/publish.lock` (a blocking exclusive `flock`), held while
/// `public/checkpoint` is written, so the writer and a cosigner never interleave.
fn publish_lock(dir: &Path) -> Result<File, StoreError> {
    let lp = dir.join("private/publish.lock");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lp)
        .map_err(io(&lp))?;
    rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive).map_err(|e| {
        StoreError::Io {
            path: lp.clone(),
            source: e.into(),
        }
    })?;
    Ok(f)
}

/// The newest checkpoint the log in `dir` signed (`private/checkpoint`), published or not.
/// `None` for a log that has not signed since this file was introduced.
pub fn signed_checkpoint(dir: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    let p = dir.join("private/checkpoint");
    match fs::read(&p) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(&p)(e)),
    }
}

/// Publishes a cosigned checkpoint of the log in `dir` as `public/checkpoint`, without the
/// writer's lock (a writer may be appending meanwhile).
///
/// It must be: signed by the log's key (`public/vkey`), of a size and root the log committed
/// (`log.sqlite`), no larger than the last size whose files are durable in `public/`
/// (`private/marker`), and no smaller than the published checkpoint's. The log must be in
/// witnessed publication ([`FileStore::set_witnessed`]); otherwise the writer publishes and this
/// refuses. The caller decides whether the cosignatures satisfy its policy; this checks only the
/// log's own signature. The file is written durably (fsync, rename, fsync of the directory).
///
/// # Errors
///
/// [`StoreError::Refused`] naming the rule the note breaks; I/O and database errors.
pub fn publish_witnessed(dir: &Path, note: &[u8]) -> Result<u64, StoreError> {
    let refused = |why: String| StoreError::Refused(why);
    let _held = publish_lock(dir)?;
    let vp = dir.join("public/vkey");
    let vkey = fs::read_to_string(&vp).map_err(io(&vp))?;
    let cp = crate::note::open_checkpoint(note, vkey.trim())
        .map_err(|e| refused(format!("the note is not the log's checkpoint: {e}")))?;
    let db = Connection::open_with_flags(
        dir.join("log.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )?;
    db.busy_timeout(std::time::Duration::from_secs(10))?;
    let publication: Option<String> = db
        .query_row(
            "SELECT value FROM meta WHERE key = 'publication'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if publication.as_deref() != Some(WITNESSED) {
        return Err(refused(
            "the log publishes its checkpoints itself (no witnesses configured)".into(),
        ));
    }
    let root: Option<Vec<u8>> = db
        .query_row(
            "SELECT root FROM checkpoints WHERE size = ?1",
            [cp.size as i64],
            |r| r.get(0),
        )
        .optional()?;
    if root.as_deref() != Some(cp.root.0.as_slice()) {
        return Err(refused(format!(
            "the log never committed size {} with root {}",
            cp.size,
            cp.root.to_base64()
        )));
    }
    let mp = dir.join("private/marker");
    let marker = fs::read_to_string(&mp).map_err(io(&mp))?;
    let durable: u64 = marker
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| StoreError::Fatal(format!("{} is corrupt", mp.display())))?;
    if cp.size > durable {
        return Err(refused(format!(
            "the files of size {} are not all published yet (published up to {durable})",
            cp.size
        )));
    }
    let pp = dir.join("public/checkpoint");
    if let Ok(current) = fs::read(&pp) {
        if let Ok(cur) = crate::note::open_checkpoint(&current, vkey.trim()) {
            if cur.size > cp.size {
                return Err(refused(format!(
                    "size {} is older than the published {}",
                    cp.size, cur.size
                )));
            }
        }
    }
    write_atomic(&pp, note, true)?;
    Ok(cp.size)
}

/// Write `bytes` to `path` through a temporary file and a rename, so readers never see a torn
/// file; with `durable`, the file is fsynced before the rename.
pub fn write_atomic(path: &Path, bytes: &[u8], durable: bool) -> Result<(), StoreError> {
    let parent = path.parent().expect("a file path has a parent");
    fs::create_dir_all(parent).map_err(io(parent))?;
    let tmp = parent.join(format!(
        ".{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file")
    ));
    let mut f = File::create(&tmp).map_err(io(&tmp))?;
    f.write_all(bytes).map_err(io(&tmp))?;
    if durable {
        f.sync_all().map_err(io(&tmp))?;
    }
    fs::rename(&tmp, path).map_err(io(path))?;
    if durable {
        File::open(parent)
            .and_then(|d| d.sync_all())
            .map_err(io(parent))?;
    }
    Ok(())
}

/// Flush every file of the filesystem holding `dir` (one `syncfs(2)` instead of an fsync per
/// tile).
fn sync_filesystem(dir: &Path) -> Result<(), StoreError> {
    let d = File::open(dir).map_err(io(dir))?;
    rustix::fs::syncfs(&d).map_err(|e| StoreError::Io {
        path: dir.to_owned(),
        source: e.into(),
    })
}

/// A staged batch: records of (u32 path length, path, u32 data length, data).
fn encode_batch(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (p, d) in files {
        out.extend_from_slice(&(p.len() as u32).to_be_bytes());
        out.extend_from_slice(p.as_bytes());
        out.extend_from_slice(&(d.len() as u32).to_be_bytes());
        out.extend_from_slice(d);
    }
    out
}

fn decode_batch(mut b: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    let take = |b: &mut &[u8]| -> Option<Vec<u8>> {
        let len = u32::from_be_bytes(b.get(..4)?.try_into().ok()?) as usize;
        let v = b.get(4..4 + len)?.to_vec();
        *b = &b[4 + len..];
        Some(v)
    };
    while !b.is_empty() {
        let p = String::from_utf8(take(&mut b)?).ok()?;
        // Staged paths are ours, but never let one escape the public directory.
        if p.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
            return None;
        }
        out.push((p, take(&mut b)?));
    }
    Some(out)
}

impl Storage for FileStore {
    fn head(&self) -> Result<Option<Head>, StoreError> {
        Ok(self
            .db
            .query_row(
                "SELECT size, root, note, signed_at FROM checkpoints ORDER BY size DESC LIMIT 1",
                [],
                |r| {
                    let root: Vec<u8> = r.get(1)?;
                    Ok((r.get::<_, i64>(0)?, root, r.get(2)?, r.get::<_, i64>(3)?))
                },
            )
            .optional()?
            .map(|(size, root, note, at)| Head {
                size: size as u64,
                root: Hash(root.try_into().unwrap_or([0; 32])),
                note,
                signed_at: at as u64,
            }))
    }

    fn hash_count(&self) -> Result<u64, StoreError> {
        let len = self
            .hashes
            .metadata()
            .map_err(io(&self.dir.join("private/hashes")))?
            .len();
        Ok(len / 32)
    }

    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, StoreError> {
        use std::os::unix::fs::FileExt;
        let path = self.dir.join("private/hashes");
        indexes
            .iter()
            .map(|&i| {
                let mut b = [0u8; 32];
                self.hashes
                    .read_exact_at(&mut b, i * 32)
                    .map_err(io(&path))?;
                Ok(Hash(b))
            })
            .collect()
    }

    fn truncate_hashes(&mut self, count: u64) -> Result<(), StoreError> {
        let path = self.dir.join("private/hashes");
        self.hashes.set_len(count * 32).map_err(io(&path))?;
        self.hashes.sync_all().map_err(io(&path))
    }

    fn append_hashes(&mut self, hashes: &[Hash]) -> Result<(), StoreError> {
        let path = self.dir.join("private/hashes");
        let mut buf = Vec::with_capacity(hashes.len() * 32);
        for h in hashes {
            buf.extend_from_slice(&h.0);
        }
        self.hashes.seek(SeekFrom::End(0)).map_err(io(&path))?;
        self.hashes.write_all(&buf).map_err(io(&path))?;
        self.hashes.sync_data().map_err(io(&path))
    }

    fn stage(&mut self, size: u64, files: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        write_atomic(&self.staging_file(size), &encode_batch(files), true)
    }

    fn commit(
        &mut self,
        expected: Option<(u64, Hash)>,
        new: &Head,
        subjects: &[(String, u64)],
    ) -> Result<(), StoreError> {
        let tx = self
            .db
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let current: Option<(i64, Vec<u8>, i64)> = tx
            .query_row(
                "SELECT size, root, signed_at FROM checkpoints ORDER BY size DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let found = current.as_ref().map(|c| (c.0 as u64, c.1.as_slice()));
        let matches = match (expected, found) {
            (None, None) => true,
            (Some((s, r)), Some((fs, fr))) => s == fs && r.0.as_slice() == fr,
            _ => false,
        };
        if !matches {
            return Err(StoreError::Conflict {
                expected: expected.map(|e| e.0),
                found: found.map(|f| f.0),
            });
        }
        if let Some((size, root, at)) = &current {
            if (new.signed_at as i64) < *at {
                return Err(StoreError::Fatal(format!(
                    "the clock went backwards: new checkpoint signed at {}, the last at {at}",
                    new.signed_at
                )));
            }
            let same = new.size == *size as u64;
            if new.size < *size as u64 || (same && new.root.0.as_slice() != root.as_slice()) {
                return Err(StoreError::Fatal(format!(
                    "would sign size {} after size {size}: shrink or fork",
                    new.size
                )));
            }
        }
        // INSERT OR REPLACE only ever replaces a row of the same size and root (a re-signed
        // heartbeat); the check above refused every other case.
        tx.execute(
            "INSERT OR REPLACE INTO checkpoints (size, root, note, signed_at) VALUES (?1, ?2, ?3, ?4)",
            params![new.size as i64, new.root.0.as_slice(), new.note, new.signed_at as i64],
        )?;
        {
            let mut st = tx.prepare_cached(
                "INSERT INTO subjects (id, last) VALUES (?1, ?2)
                 ON CONFLICT(id) DO UPDATE SET last = excluded.last",
            )?;
            for (id, last) in subjects {
                st.execute(params![id, *last as i64])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn publish(&mut self, head: &Head) -> Result<(), StoreError> {
        let public = self.dir.join("public");
        let staged = self.staging_file(head.size);
        if staged.exists() {
            let mut bytes = Vec::new();
            File::open(&staged)
                .and_then(|mut f| f.read_to_end(&mut bytes))
                .map_err(io(&staged))?;
            let files = decode_batch(&bytes)
                .ok_or_else(|| StoreError::Fatal(format!("{} is corrupt", staged.display())))?;
            for (p, d) in &files {
                write_atomic(&public.join(p), d, false)?;
            }
        }
        if !self.witnessed {
            let _held = publish_lock(&self.dir)?;
            write_atomic(&public.join("checkpoint"), &head.note, false)?;
        }
        sync_filesystem(&public)?;
        write_atomic(
            &self.dir.join("private/marker"),
            format!("{} {}\n", head.size, head.root.to_base64()).as_bytes(),
            true,
        )?;
        // Only now, with every file of this size durable (the marker), the newest signed
        // checkpoint: the cosigner submits what it reads here, and `publish_witnessed` refuses
        // a size past the marker, so written earlier a round could be refused and not rerun.
        // A crash before this line is repaired on open (`Log::open` publishes the head again).
        write_atomic(&self.dir.join("private/checkpoint"), &head.note, false)?;
        // Everything of this batch is durable in public/: its staging copy, and any left by an
        // older or abandoned batch, can go.
        let staging = self.dir.join("staging");
        for e in fs::read_dir(&staging).map_err(io(&staging))?.flatten() {
            let _ = fs::remove_file(e.path());
        }
        Ok(())
    }

    fn read_public(&self, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let p = self.dir.join("public").join(path);
        match fs::read(&p) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&p)(e)),
        }
    }

    fn subject_last(&self, id: &str) -> Result<Option<u64>, StoreError> {
        let mut st = self
            .db
            .prepare_cached("SELECT last FROM subjects WHERE id = ?1")?;
        Ok(st
            .query_row([id], |r| r.get::<_, i64>(0))
            .optional()?
            .map(|v| v as u64))
    }

    fn marker(&self) -> Result<Option<(u64, Hash)>, StoreError> {
        let p = self.dir.join("private/marker");
        let text = match fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&p)(e)),
        };
        let mut it = text.split_whitespace();
        let parsed = (|| {
            let size = it.next()?.parse().ok()?;
            let root = Hash::from_base64(it.next()?).ok()?;
            Some((size, root))
        })();
        parsed
            .map(Some)
            .ok_or_else(|| StoreError::Fatal(format!("{} is corrupt", p.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_writer_at_a_time() {
        let dir = std::env::temp_dir().join(format!("toolmark-lock-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let first = FileStore::open(&dir).unwrap();
        let err = FileStore::open(&dir)
            .err()
            .expect("a second writer is refused");
        assert!(err.to_string().contains("another process"), "{err}");
        drop(first);
        FileStore::open(&dir).unwrap();
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn staged_batches_round_trip_and_refuse_escaping_paths() {
        let files = vec![
            ("tile/0/000.p/3".to_string(), vec![1u8; 96]),
            ("tile/entries/000.p/3".to_string(), b"abc".to_vec()),
        ];
        assert_eq!(decode_batch(&encode_batch(&files)), Some(files));
        let evil = vec![("../private/log.key".to_string(), vec![])];
        assert_eq!(decode_batch(&encode_batch(&evil)), None);
        assert_eq!(decode_batch(&[0, 0, 0, 9, b'a']), None);
    }
}
