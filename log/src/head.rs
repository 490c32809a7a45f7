//! The head store: the one linearizable, trusted record of a log — its committed tree head,
//! changed only by a compare-and-swap on `(size, root)`, with each subject's newest entry and
//! the dedup keys of every logged observation committed in the same transaction.
//!
//! Two implementations: [`SqliteHead`] (the single box: `DIR/log.sqlite`, one writer process
//! under a `flock`) and [`postgres::PgHead`] (several writers on several machines). Whoever can
//! rewrite this record can make the log sign a fork; whoever can only read or stall it cannot.
//! Locks and leases ([`HeadStore::try_lease`]) only save wasted work: the compare-and-swap is
//! the only commit point, so a writer that wakes after losing its lease is refused by it.

pub mod postgres;

use crate::merkle::Hash;
use crate::store::{Head, StoreError};
use rusqlite::{Connection, OptionalExtension, params};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The key under which an observation is logged at most once: its `observedAt` as the big-endian
/// number `YYYYMMDDhhmmss` (8 bytes), then the first 16 bytes of the SHA-256 of its canonical
/// entry without `prev` (the same observation submitted by two processes encodes to the same
/// bytes). Time first, so that a batch's keys land at the right edge of the head store's B-tree
/// (a day's observations are new): with random keys every batch dirtied nearly every leaf page
/// of a tree of all keys ever logged.
pub type DedupKey = [u8; 24];

/// The head store's contract (docs/log-format.md, "Storage contract").
///
/// * `commit` is the only commit point: a compare-and-swap that MUST succeed only if the current
///   head is exactly `expected` (size and root), MUST be durable when it returns, MUST NOT store
///   two roots for one size, MUST refuse a `signed_at` older than the current head's, and MUST
///   commit the subjects' newest indices and the dedup keys in the same transaction (a key
///   already present fails the whole commit). Several processes MAY race; at most one wins.
/// * Every read MUST see every commit that returned before it (read-after-write, across
///   processes).
/// * `applied` is how far the object store holds every file and the checkpoint of the committed
///   heads; it MUST only move forward and never past the committed head.
pub trait HeadStore: Send {
    /// The committed head, or `None` for a log with no checkpoint yet.
    fn head(&mut self) -> Result<Option<Head>, StoreError>;
    /// The checkpoint committed at `size` (the newest signature of that size), if any.
    fn checkpoint_at(&mut self, size: u64) -> Result<Option<Head>, StoreError>;
    /// Compare-and-swap the head (see the trait's contract).
    fn commit(
        &mut self,
        expected: Option<(u64, Hash)>,
        new: &Head,
        subjects: &[(String, u64)],
        keys: &[(DedupKey, u64)],
    ) -> Result<(), StoreError>;
    /// The newest entry index of each of `ids` that has one.
    fn subjects_last(&mut self, ids: &[String]) -> Result<Vec<(String, u64)>, StoreError>;
    /// The index each of `keys` was logged at, for those already logged.
    fn logged(&mut self, keys: &[DedupKey]) -> Result<Vec<(DedupKey, u64)>, StoreError>;
    /// The last head whose files and checkpoint the object store holds (`size`, `root`).
    fn applied(&mut self) -> Result<Option<(u64, Hash)>, StoreError>;
    /// Record that the object store holds everything of the committed head `(size, root)`.
    fn set_applied(&mut self, size: u64, root: Hash) -> Result<(), StoreError>;
    /// A value of the log's settings (`origin`, `vkey`, `publication`).
    fn meta(&mut self, key: &str) -> Result<Option<String>, StoreError>;
    /// Set (`Some`) or remove (`None`) a value of the log's settings.
    fn set_meta(&mut self, key: &str, value: Option<&str>) -> Result<(), StoreError>;
    /// Take or renew the writers' lease for `ttl` as `holder`; `false` while another holder's
    /// lease runs. Liveness only: nothing is safe because of it.
    fn try_lease(&mut self, holder: &str, ttl: Duration) -> Result<bool, StoreError>;
    /// Give the lease up if `holder` has it.
    fn release_lease(&mut self, holder: &str) -> Result<(), StoreError>;
    /// What the store is, for messages (`sqlite:DIR/log.sqlite`, `postgres://host/db`).
    fn describe(&self) -> String;
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
CREATE TABLE IF NOT EXISTS logged (key BLOB PRIMARY KEY, idx INTEGER NOT NULL) STRICT, WITHOUT ROWID;
";

/// The page cache of the single box's head store (SQLite's default is 2 MiB). A 100,000-entry
/// batch looks up and inserts 100,000 dedup keys: with the default cache the pages of the
/// `logged` and `subjects` B-trees are read again and dirty pages spill to the WAL before the
/// commit. Memory, at most this much per open head store.
pub const SQLITE_CACHE_BYTES: u64 = 64 << 20;

/// The head store's meta key saying its dedup keys are [`DedupKey`]s (time, then hash: 24
/// bytes). A store of the format before (16-byte hash prefixes, 2026-12-06 until commit
/// 72b5b63) is refused at open: its keys would never match the new ones, so an observation
/// logged before could be logged again.
pub const META_KEY_FORMAT: &str = "dedup-key-format";
/// [`META_KEY_FORMAT`]'s value.
pub const KEY_FORMAT: &str = "time-sha256-24";

/// The error for a head store holding dedup keys of the older format.
pub(crate) fn old_key_format(store: &str) -> StoreError {
    StoreError::Fatal(format!(
        "{store} holds dedup keys of an older format (16 bytes; this version's are 24, time \
         first): a log written by toolmark between 2026-12-06 and commit 72b5b63; copy its \
         entries into a new log"
    ))
}

/// Dedup keys inserted by one SQLite statement (two parameters each, far below SQLite's limit
/// of 32,766).
const KEYS_PER_INSERT: usize = 500;

/// The single box's head store: `DIR/log.sqlite`, the `applied` marker in `DIR/private/marker`
/// (outside the database, so that restoring an old database is detected), and an exclusive
/// `flock` on `DIR/private/lock` for as long as it is open: one writer process per log.
pub struct SqliteHead {
    dir: PathBuf,
    db: Connection,
    /// The writer's `flock`; `None` for a read-only view beside the writer.
    _lock: Option<File>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

impl SqliteHead {
    /// Open (creating what is missing) the head store of the log directory `dir`.
    pub fn open(dir: &Path) -> Result<SqliteHead, StoreError> {
        let private = dir.join("private");
        std::fs::create_dir_all(&private).map_err(io(&private))?;
        let lp = private.join("lock");
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
        db.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -{};",
            SQLITE_CACHE_BYTES / 1024
        ))?;
        db.busy_timeout(Duration::from_secs(10))?;
        db.execute_batch(SCHEMA)?;
        let mut me = SqliteHead {
            dir: dir.to_owned(),
            db,
            _lock: Some(lock),
        };
        me.check_key_format()?;
        Ok(me)
    }

    /// Refuse a store of the older dedup keys ([`META_KEY_FORMAT`]); mark one that has none
    /// (a new store, or one from before dedup keys) as of this format. The scan runs once.
    fn check_key_format(&mut self) -> Result<(), StoreError> {
        if self.meta(META_KEY_FORMAT)?.as_deref() == Some(KEY_FORMAT) {
            return Ok(());
        }
        let other: Option<i64> = self
            .db
            .query_row(
                "SELECT length(key) FROM logged WHERE length(key) <> 24 LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?;
        if other.is_some() {
            return Err(old_key_format(&self.describe()));
        }
        self.set_meta(META_KEY_FORMAT, Some(KEY_FORMAT))
    }

    /// A read-only view of the head store of `dir`, without the writer's lock (a cosigner
    /// beside a running writer): every write fails.
    pub fn open_read_only(dir: &Path) -> Result<SqliteHead, StoreError> {
        let db = Connection::open_with_flags(
            dir.join("log.sqlite"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        db.busy_timeout(Duration::from_secs(10))?;
        Ok(SqliteHead {
            dir: dir.to_owned(),
            db,
            _lock: None,
        })
    }

    fn marker_path(&self) -> PathBuf {
        self.dir.join("private/marker")
    }
}

fn sqlite_head(db: &Connection, size: Option<u64>) -> Result<Option<Head>, StoreError> {
    let row = |r: &rusqlite::Row<'_>| {
        let root: Vec<u8> = r.get(1)?;
        Ok((r.get::<_, i64>(0)?, root, r.get(2)?, r.get::<_, i64>(3)?))
    };
    let found = match size {
        None => db
            .query_row(
                "SELECT size, root, note, signed_at FROM checkpoints ORDER BY size DESC LIMIT 1",
                [],
                row,
            )
            .optional()?,
        Some(s) => db
            .query_row(
                "SELECT size, root, note, signed_at FROM checkpoints WHERE size = ?1",
                [s as i64],
                row,
            )
            .optional()?,
    };
    Ok(found.map(|(size, root, note, at)| Head {
        size: size as u64,
        root: Hash(root.try_into().unwrap_or([0; 32])),
        note,
        signed_at: at as u64,
    }))
}

/// The checks every head store makes inside its compare-and-swap, on the current head
/// (`size`, `root`, `signed_at`) and the expected and new ones.
pub(crate) fn check_swap(
    current: Option<(u64, &[u8], u64)>,
    expected: Option<(u64, Hash)>,
    new: &Head,
) -> Result<(), StoreError> {
    let matches = match (expected, current) {
        (None, None) => true,
        (Some((s, r)), Some((fs, fr, _))) => s == fs && r.0.as_slice() == fr,
        _ => false,
    };
    if !matches {
        return Err(StoreError::Conflict {
            expected: expected.map(|e| e.0),
            found: current.map(|f| f.0),
        });
    }
    if let Some((size, root, at)) = current {
        if new.signed_at < at {
            return Err(StoreError::Fatal(format!(
                "the clock went backwards: new checkpoint signed at {}, the last at {at}",
                new.signed_at
            )));
        }
        if new.size < size || (new.size == size && new.root.0.as_slice() != root) {
            return Err(StoreError::Fatal(format!(
                "would sign size {} after size {size}: shrink or fork",
                new.size
            )));
        }
    }
    Ok(())
}

/// Reads `"<size> <base64 root>"`.
pub(crate) fn parse_marker(text: &str) -> Option<(u64, Hash)> {
    let mut it = text.split_whitespace();
    let size = it.next()?.parse().ok()?;
    let root = Hash::from_base64(it.next()?).ok()?;
    Some((size, root))
}

impl HeadStore for SqliteHead {
    fn head(&mut self) -> Result<Option<Head>, StoreError> {
        sqlite_head(&self.db, None)
    }

    fn checkpoint_at(&mut self, size: u64) -> Result<Option<Head>, StoreError> {
        sqlite_head(&self.db, Some(size))
    }

    fn commit(
        &mut self,
        expected: Option<(u64, Hash)>,
        new: &Head,
        subjects: &[(String, u64)],
        keys: &[(DedupKey, u64)],
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
        check_swap(
            current
                .as_ref()
                .map(|c| (c.0 as u64, c.1.as_slice(), c.2 as u64)),
            expected,
            new,
        )?;
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
            // In key order: each B-tree page is then dirtied once, not once per random key.
            let mut sorted: Vec<&(DedupKey, u64)> = keys.iter().collect();
            sorted.sort_unstable_by_key(|(k, _)| *k);
            // Many rows a statement: a 100,000-key batch otherwise runs 100,000 statements.
            for rows in sorted.chunks(KEYS_PER_INSERT) {
                let sql = format!(
                    "INSERT INTO logged (key, idx) VALUES {}",
                    vec!["(?, ?)"; rows.len()].join(", ")
                );
                let values: Vec<rusqlite::types::Value> = rows
                    .iter()
                    .flat_map(|(key, idx)| {
                        [
                            rusqlite::types::Value::Blob(key.to_vec()),
                            rusqlite::types::Value::Integer(*idx as i64),
                        ]
                    })
                    .collect();
                let values = rusqlite::params_from_iter(values);
                // Only the full chunk's statement is worth keeping in rusqlite's small cache.
                if rows.len() == KEYS_PER_INSERT {
                    tx.prepare_cached(&sql)?.execute(values)?;
                } else {
                    tx.prepare(&sql)?.execute(values)?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn subjects_last(&mut self, ids: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        // One read transaction for all the lookups: outside one, every statement takes and
        // drops SQLite's shared lock (an fcntl and a look at the WAL index each).
        let tx = self.db.transaction()?;
        let mut out = Vec::new();
        {
            let mut st = tx.prepare_cached("SELECT last FROM subjects WHERE id = ?1")?;
            for id in ids {
                if let Some(v) = st.query_row([id], |r| r.get::<_, i64>(0)).optional()? {
                    out.push((id.clone(), v as u64));
                }
            }
        }
        tx.commit()?;
        Ok(out)
    }

    fn logged(&mut self, keys: &[DedupKey]) -> Result<Vec<(DedupKey, u64)>, StoreError> {
        // In key order (consecutive lookups walk neighbouring B-tree pages), in one read
        // transaction (see `subjects_last`).
        let mut sorted = keys.to_vec();
        sorted.sort_unstable();
        let tx = self.db.transaction()?;
        // Keys begin with their time, so a batch of new observations is mostly past the largest
        // key logged: only the keys up to it can have been logged.
        let largest: Option<Vec<u8>> =
            tx.query_row("SELECT max(key) FROM logged", [], |r| r.get(0))?;
        let upto = largest.map_or(0, |m| {
            sorted.partition_point(|k| k.as_slice() <= m.as_slice())
        });
        sorted.truncate(upto);
        let mut out = Vec::new();
        {
            let mut st = tx.prepare_cached("SELECT idx FROM logged WHERE key = ?1")?;
            for k in sorted {
                if let Some(v) = st
                    .query_row([k.as_slice()], |r| r.get::<_, i64>(0))
                    .optional()?
                {
                    out.push((k, v as u64));
                }
            }
        }
        tx.commit()?;
        Ok(out)
    }

    fn applied(&mut self) -> Result<Option<(u64, Hash)>, StoreError> {
        let p = self.marker_path();
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&p)(e)),
        };
        parse_marker(&text)
            .map(Some)
            .ok_or_else(|| StoreError::Fatal(format!("{} is corrupt", p.display())))
    }

    fn set_applied(&mut self, size: u64, root: Hash) -> Result<(), StoreError> {
        if self._lock.is_none() {
            return Err(StoreError::Refused(
                "a read-only view of the head store does not write".into(),
            ));
        }
        crate::store::write_atomic(
            &self.marker_path(),
            format!("{size} {}\n", root.to_base64()).as_bytes(),
            true,
        )
    }

    fn meta(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .db
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    fn set_meta(&mut self, key: &str, value: Option<&str>) -> Result<(), StoreError> {
        match value {
            Some(v) => self.db.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
                params![key, v],
            )?,
            None => self.db.execute("DELETE FROM meta WHERE key = ?1", [key])?,
        };
        Ok(())
    }

    fn try_lease(&mut self, _holder: &str, _ttl: Duration) -> Result<bool, StoreError> {
        // The flock taken on open is this store's lease: nobody else can hold it.
        Ok(true)
    }

    fn release_lease(&mut self, _holder: &str) -> Result<(), StoreError> {
        Ok(())
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.dir.join("log.sqlite").display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_writer_process_at_a_time() {
        let dir = std::env::temp_dir().join(format!("toolmark-head-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = SqliteHead::open(&dir).unwrap();
        let err = SqliteHead::open(&dir)
            .err()
            .expect("a second writer is refused");
        assert!(err.to_string().contains("another process"), "{err}");
        drop(first);
        SqliteHead::open(&dir).unwrap();
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn markers_parse_size_and_root() {
        let root = Hash([7; 32]);
        assert_eq!(
            parse_marker(&format!("12 {}\n", root.to_base64())),
            Some((12, root))
        );
        assert_eq!(parse_marker("12"), None);
        assert_eq!(parse_marker("x y"), None);
    }
}
