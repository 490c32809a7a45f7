//! The data directory: the one place that knows what lives where under `DATA/`.
//!
//! ```text
//! DATA/log/                 the verifiable log (toolmark-log FileStore)
//! DATA/log/public/          the C2SP tlog-tiles directory the API serves
//! DATA/log/private/log.key  the log's signing key (mode 0600)
//! DATA/blobs/               content-addressed observation documents (`blobs/` of the object
//!                           store `[storage]` names: `PREFIX/blobs/` of a bucket)
//! DATA/index.sqlite         the queryable index
//! DATA/schedules.sqlite     the schedules' leases and run history (`toolmark run`)
//! DATA/contributions.sqlite `/check` clients' opt-in reports: (target, digest, day) counts
//!                           (bookkeeping, not derived from the log; `contributions`)
//! DATA/api/answer.key       the key that signs `/check` answers (hex seed, mode 0600)
//! DATA/popularity/          weekly download snapshots (`popularity-YYYY-MM-DD.txt`, written
//!                           by `toolmark package popularity --refresh`; the newest is used)
//! ```
//!
//! [`DataDir::open_writer`] creates what is missing (the log with its key, the answer key, the
//! blob store, the index) and brings the index up to the log; readers (the API) open the paths
//! read-only and create nothing but the answer key and the client-report counts.

use std::path::{Path, PathBuf};

use toolmark_log::Log;
use toolmark_log::objects::Objects;
use toolmark_log::store::{LogStores, StorageSpec, StoreError};

use crate::{BlobError, Blobs, Index, IndexError};

/// The log directory under the data directory.
pub const LOG_DIR: &str = "log";
/// The blob store under the data directory.
pub const BLOBS_DIR: &str = "blobs";
/// The index file under the data directory.
pub const INDEX_FILE: &str = "index.sqlite";
/// The schedules' store under the data directory.
pub const SCHEDULES_FILE: &str = "schedules.sqlite";
/// Webhook delivery bookkeeping under the data directory.
pub const WEBHOOKS_FILE: &str = "webhooks.sqlite";
/// The opt-in client reports of `/check` under the data directory (bookkeeping).
pub const CONTRIBUTIONS_FILE: &str = "contributions.sqlite";
/// The answer-signing key under the data directory (hex seed, mode 0600).
pub const ANSWER_KEY_FILE: &str = "api/answer.key";

/// The popularity snapshots under the data directory.
pub const POPULARITY_DIR: &str = "popularity";

/// Why a data directory could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A file or directory could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The log could not be created or opened.
    #[error("the log in {path}: {source}")]
    Log {
        /// The log directory.
        path: PathBuf,
        /// Why.
        source: toolmark_log::LogError,
    },
    /// The blob store could not be opened.
    #[error("the blob store: {0}")]
    Blobs(#[from] BlobError),
    /// The index could not be opened or brought up to the log.
    #[error("the index: {0}")]
    Index(#[from] IndexError),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> DataError + '_ {
    move |e| DataError::Io {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// A data directory (see the module documentation for its layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
    /// Where the log and the blobs are stored (the data directory itself by default).
    storage: StorageSpec,
}

/// The writable parts of a data directory: what one crawl (or the heartbeat) writes to.
pub struct Writer {
    /// The log, held with its single-writer lock.
    pub log: Log,
    /// The blob store.
    pub blobs: Blobs,
    /// The index, caught up with the log.
    pub index: Index,
}

impl DataDir {
    /// The data directory at `root` (nothing is touched yet).
    pub fn new(root: impl Into<PathBuf>) -> DataDir {
        DataDir {
            root: root.into(),
            storage: StorageSpec::default(),
        }
    }

    /// The data directory at `root` whose log and blobs live in the stores `storage` names
    /// (`[storage]`); local bookkeeping (the index, schedules, keys) stays under `root`.
    pub fn with_storage(root: impl Into<PathBuf>, storage: StorageSpec) -> DataDir {
        DataDir {
            root: root.into(),
            storage,
        }
    }

    /// Where the log and the blobs are stored.
    pub fn storage(&self) -> &StorageSpec {
        &self.storage
    }

    /// The log's two stores, opened (the head store takes SQLite's writer lock).
    pub fn log_stores(&self) -> Result<LogStores, StoreError> {
        self.storage.log_stores(&self.root)
    }

    /// The log's public files (C2SP tlog-tiles), where readers verify and the API serves them.
    pub fn log_public_objects(&self) -> Result<Objects, StoreError> {
        Ok(self.storage.objects_root(&self.root)?.sub("log/public"))
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `DATA/log`.
    pub fn log_dir(&self) -> PathBuf {
        self.root.join(LOG_DIR)
    }

    /// `DATA/log/public`, the directory readers verify and the API serves.
    pub fn log_public(&self) -> PathBuf {
        self.log_dir().join("public")
    }

    /// `DATA/log/public/vkey`, the log's verifier key.
    pub fn log_vkey(&self) -> PathBuf {
        self.log_public().join("vkey")
    }

    /// The log's verifier key as published (`public/vkey` in the log's object store, wherever
    /// `[storage]` puts it), trimmed.
    pub fn vkey(&self) -> Result<String, DataError> {
        let at = |reason: String| DataError::Io {
            path: self.log_vkey(),
            reason,
        };
        let public = self.log_public_objects().map_err(|e| at(e.to_string()))?;
        let bytes = public
            .get("vkey")
            .map_err(|e| at(e.to_string()))?
            .ok_or_else(|| at(format!("no vkey in {}", public.label())))?;
        Ok(String::from_utf8_lossy(&bytes).trim().to_owned())
    }

    /// `DATA/log/private/log.key`, the log's signing key.
    pub fn log_key(&self) -> PathBuf {
        self.log_dir().join(toolmark_log::KEY_FILE)
    }

    /// `DATA/blobs`: where the blobs are on the default storage (see [`DataDir::blobs`]).
    pub fn blobs_dir(&self) -> PathBuf {
        self.root.join(BLOBS_DIR)
    }

    /// The blob store: `blobs/` of the object store `[storage]` names (`DATA/blobs` by
    /// default, `DIR/blobs` of `file:DIR`, `PREFIX/blobs/` of `s3://BUCKET/PREFIX`), beside the
    /// log's `log/`.
    pub fn blobs(&self) -> Result<Blobs, DataError> {
        let root = self.storage.objects_root(&self.root).map_err(|e| match e {
            StoreError::Objects(e) => DataError::Blobs(BlobError::Store(e)),
            other => DataError::Io {
                path: self.blobs_dir(),
                reason: other.to_string(),
            },
        })?;
        Ok(Blobs::new(root.sub(BLOBS_DIR))?)
    }

    /// `DATA/index.sqlite`.
    pub fn index_path(&self) -> PathBuf {
        self.root.join(INDEX_FILE)
    }

    /// `DATA/schedules.sqlite`.
    pub fn schedules_path(&self) -> PathBuf {
        self.root.join(SCHEDULES_FILE)
    }

    /// `DATA/webhooks.sqlite`: webhook delivery bookkeeping (cursors, attempts), not derived.
    pub fn webhooks_path(&self) -> PathBuf {
        self.root.join(WEBHOOKS_FILE)
    }

    /// `DATA/contributions.sqlite`: the counts of the tool sets `/check` clients reported
    /// (`crate::contributions`), bookkeeping, not derived.
    pub fn contributions_path(&self) -> PathBuf {
        self.root.join(CONTRIBUTIONS_FILE)
    }

    /// `DATA/api/answer.key`.
    pub fn answer_key_path(&self) -> PathBuf {
        self.root.join(ANSWER_KEY_FILE)
    }

    /// Whether the log exists (its signing key does).
    pub fn has_log(&self) -> bool {
        self.log_key().exists()
    }

    /// Opens the log (created with `origin` when it does not exist yet), the blob store and
    /// the index, and brings the index up to the log. Creates the answer key too, so a data
    /// directory a crawl made is complete for `serve`.
    pub fn open_writer(&self, origin: &str) -> Result<Writer, DataError> {
        let log_dir = self.log_dir();
        std::fs::create_dir_all(&log_dir).map_err(io(&log_dir))?;
        let log = self.open_log(origin).map_err(|source| DataError::Log {
            path: log_dir.clone(),
            source,
        })?;
        self.answer_key()?;
        let blobs = self.blobs()?;
        let mut index = Index::open(&self.index_path())?;
        index.catch_up(&log, &blobs)?;
        Ok(Writer { log, blobs, index })
    }

    /// The log, created with `origin` when this data directory has no signing key yet. On
    /// the default stores that is exactly [`Log::init`] / [`Log::open`] of `DATA/log`; on others
    /// the key stays in `DATA/log/private/` and the log in the configured stores.
    pub fn open_log(&self, origin: &str) -> Result<Log, toolmark_log::LogError> {
        let log_dir = self.log_dir();
        if self.storage.is_default() {
            return if self.has_log() {
                Log::open(&log_dir)
            } else {
                Log::init(&log_dir, origin)
            };
        }
        let stores = self.log_stores()?;
        let clock = Box::new(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        });
        if self.has_log() {
            let key = toolmark_log::sequencer::read_key(&self.log_key())?;
            Log::open_with(stores, key, clock)
        } else {
            let key = toolmark_log::note::LogKey::generate(origin)?;
            toolmark_log::sequencer::write_private_key(&self.log_key(), &key.to_skey())?;
            Log::create(stores, key, clock)
        }
    }

    /// The existing log (an error if this data directory has no signing key).
    pub fn log(&self) -> Result<Log, toolmark_log::LogError> {
        if !self.has_log() {
            return Err(toolmark_log::LogError::Refused(format!(
                "{} holds no log (no {})",
                self.root.display(),
                self.log_key().display()
            )));
        }
        // The origin is only used to create a log, which cannot happen here.
        self.open_log("")
    }

    /// Where refreshed popularity snapshots live.
    pub fn popularity_dir(&self) -> PathBuf {
        self.root.join(POPULARITY_DIR)
    }

    /// The newest refreshed popularity snapshot (`popularity-YYYY-MM-DD.txt`, the greatest
    /// date), if any; other files are ignored.
    pub fn latest_popularity(&self) -> Option<PathBuf> {
        let dir = self.popularity_dir();
        let mut best: Option<String> = None;
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let dated = name
                .strip_prefix("popularity-")
                .and_then(|n| n.strip_suffix(".txt"))
                .is_some_and(|d| {
                    d.len() == 10 && d.bytes().all(|b| b.is_ascii_digit() || b == b'-')
                });
            if dated && best.as_ref().is_none_or(|b| name > *b) {
                best = Some(name);
            }
        }
        best.map(|n| dir.join(n))
    }

    /// Write a refreshed popularity snapshot dated `date` (`YYYY-MM-DD`) atomically: a
    /// temporary file, fsync, rename over `popularity-DATE.txt`, fsync of the directory; a
    /// reader sees the old file or the whole new one.
    pub fn write_popularity(&self, date: &str, text: &str) -> Result<PathBuf, DataError> {
        use std::io::Write;
        let dir = self.popularity_dir();
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join(format!("popularity-{date}.txt"));
        let tmp = dir.join(format!(".popularity-{date}.txt.{}", std::process::id()));
        let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(text.as_bytes()).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
        drop(f);
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        std::fs::File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(io(&dir))?;
        Ok(path)
    }

    /// The answer-signing key, created (from the OS's randomness) on first use.
    pub fn answer_key(&self) -> Result<ed25519_dalek::SigningKey, DataError> {
        let path = self.answer_key_path();
        let not_a_seed = || DataError::Io {
            path: path.clone(),
            reason: "not a 64-hex-digit Ed25519 seed".into(),
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let seed: [u8; 32] =
                    toolmark_toolset::hex::decode(text.trim()).map_err(|_| not_a_seed())?;
                Ok(ed25519_dalek::SigningKey::from_bytes(&seed))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut seed = [0u8; 32];
                getrandom::fill(&mut seed).map_err(|e| DataError::Io {
                    path: path.clone(),
                    reason: format!("no randomness: {e}"),
                })?;
                let dir = path.parent().unwrap_or(&self.root);
                std::fs::create_dir_all(dir).map_err(io(dir))?;
                write_private(&path, &toolmark_toolset::hex::encode(&seed))?;
                Ok(ed25519_dalek::SigningKey::from_bytes(&seed))
            }
            Err(e) => Err(io(&path)(e)),
        }
    }
}

/// Writes a new file readable by its owner only; refuses to overwrite one.
fn write_private(path: &Path, text: &str) -> Result<(), DataError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io(path))?;
    f.write_all(text.as_bytes()).map_err(io(path))?;
    f.sync_all().map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> DataDir {
        let dir =
            std::env::temp_dir().join(format!("toolmark-datadir-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        DataDir::new(dir)
    }

    #[test]
    fn open_writer_creates_the_log_both_keys_the_blobs_and_the_index() {
        let data = scratch("create");
        let w = data.open_writer("toolmark.test/log").unwrap();
        assert_eq!(w.log.head().size, 0);
        for path in [
            data.log_key(),
            data.log_vkey(),
            data.answer_key_path(),
            data.index_path(),
        ] {
            assert!(path.exists(), "{}", path.display());
        }
        assert!(data.blobs_dir().is_dir());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.answer_key_path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        drop(w);
        std::fs::remove_dir_all(data.root()).unwrap();
    }

    #[test]
    fn a_reopened_data_directory_keeps_its_keys() {
        let data = scratch("reopen");
        let vkey = {
            let w = data.open_writer("toolmark.test/log").unwrap();
            w.log.vkey().to_owned()
        };
        let answer = data.answer_key().unwrap().to_bytes();
        let w = data.open_writer("another.origin/ignored").unwrap();
        assert_eq!(w.log.vkey(), vkey);
        assert_eq!(data.answer_key().unwrap().to_bytes(), answer);
        drop(w);
        std::fs::remove_dir_all(data.root()).unwrap();
    }

    #[test]
    fn the_newest_popularity_snapshot_is_the_one_read() {
        let data = scratch("popularity");
        assert_eq!(data.latest_popularity(), None);
        data.write_popularity("2026-11-01", "a").unwrap();
        let newest = data.write_popularity("2026-12-02", "b").unwrap();
        std::fs::write(data.popularity_dir().join("popularity-notes.txt"), "c").unwrap();
        assert_eq!(data.latest_popularity(), Some(newest.clone()));
        assert_eq!(std::fs::read_to_string(newest).unwrap(), "b");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(data.popularity_dir()).unwrap().count(), 3);
        std::fs::remove_dir_all(data.root()).unwrap();
    }

    #[test]
    fn an_answer_key_that_is_not_a_seed_is_refused() {
        let data = scratch("bad-key");
        std::fs::create_dir_all(data.answer_key_path().parent().unwrap()).unwrap();
        std::fs::write(data.answer_key_path(), "zz".repeat(32)).unwrap();
        let err = data.answer_key().unwrap_err().to_string();
        assert!(err.contains("not a 64-hex-digit Ed25519 seed"), "{err}");
        std::fs::remove_dir_all(data.root()).unwrap();
    }
}
