//! Where a log keeps its state: its two stores, and the storage contract between them.
//!
//! * The **head store** ([`crate::head::HeadStore`]: SQLite on one box, PostgreSQL for several
//!   writers) is trusted and linearizable: the committed tree head, changed only by a
//!   compare-and-swap, with the subjects' newest entries and the dedup keys.
//! * The **object store** ([`crate::objects::Objects`]: a directory, or any S3-compatible
//!   bucket) is untrusted: it holds the public C2SP tlog-tiles files under `public/` and the
//!   staged batches under `staging/`. It can stall the log, never fork it.
//!
//! The single box (`LogStores::dir(DIR)`):
//!
//! ```text
//! DIR/log.sqlite          the head store: checkpoints (one CAS row per size), subjects, dedup keys, meta
//! DIR/private/log.key     the Ed25519 signing key (mode 0600), never served
//! DIR/private/marker      how far the object store holds everything: "<size> <base64 root>"
//! DIR/private/lock        held (flock) by the one process that has the log open
//! DIR/staging/<base>-<size>-<hex root>  a committed batch's files until they are all in public/
//! DIR/public/             exactly C2SP tlog-tiles: checkpoint, vkey, tile/<L>/<N>, tile/entries/<N>
//! DIR/public.lock         held (flock) while public/checkpoint is replaced
//! ```
//!
//! In a bucket (`s3://BUCKET/PREFIX`, the log under `PREFIX/log/`), the same `public/` and
//! `staging/` objects; the head store is PostgreSQL (or SQLite on one machine) and the key a
//! local file of each writer. Only `public/` is meant to be served; everything in it except
//! `checkpoint` is immutable once written.

use crate::head::{HeadStore, SqliteHead};
use crate::merkle::Hash;
use crate::objects::{Expect, ObjectError, Objects};
use std::fs::{self, File};
use std::io::Write;
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
    /// The PostgreSQL head store failed (connection, statement, timeout).
    #[error("postgres: {0}")]
    Postgres(String),
    /// The object store failed, or a create-only write found other bytes (a fork alarm).
    #[error(transparent)]
    Objects(#[from] ObjectError),
    /// The compare-and-swap found a different current checkpoint than the writer expected.
    #[error("checkpoint compare-and-swap failed: expected {expected:?}, found {found:?}")]
    Conflict {
        /// The size the writer expected to replace (`None`: no checkpoint yet).
        expected: Option<u64>,
        /// The size stored (`None` when the store does not say).
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

impl StoreError {
    /// Whether this is a fork alarm or a broken history rule: the writer must halt, and
    /// reopening will not make it go away by itself.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            StoreError::Fatal(_) | StoreError::Objects(ObjectError::Differs { .. })
        )
    }
}

/// A log's two stores.
pub struct LogStores {
    /// The head store.
    pub head: Box<dyn HeadStore>,
    /// The log's objects: `public/` (what is served) and `staging/` under it.
    pub objects: Objects,
}

impl LogStores {
    /// The single box's stores of the log directory `dir`: `DIR/log.sqlite` and files under
    /// `DIR/` (see the module documentation).
    pub fn dir(dir: &Path) -> Result<LogStores, StoreError> {
        Ok(LogStores {
            head: Box::new(SqliteHead::open(dir)?),
            objects: Objects::dir(dir)?,
        })
    }

    /// The public files (C2SP tlog-tiles).
    pub fn public(&self) -> Objects {
        self.objects.sub("public")
    }

    /// The staged batches.
    pub fn staging(&self) -> Objects {
        self.objects.sub("staging")
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Where a deployment's two stores are: what `[storage]`, `TOOLMARK_STORAGE_HEAD` /
/// `TOOLMARK_STORAGE_OBJECTS` and `--head` / `--objects` name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StorageSpec {
    /// The head store.
    pub head: HeadSpec,
    /// The object store's root: the log lives under `log/` in it, the documents under `blobs/`.
    pub objects: ObjectsSpec,
}

/// Which head store.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HeadSpec {
    /// SQLite in the log's directory (`DATA/log/log.sqlite`): one writer process.
    #[default]
    Sqlite,
    /// A PostgreSQL database (`postgres://…`): several writers.
    Postgres(String),
}

/// Which object store.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ObjectsSpec {
    /// A directory: `file:` alone is the data directory itself.
    File(Option<PathBuf>),
    /// An S3-compatible bucket and key prefix (`s3://BUCKET/PREFIX`), reached as the `AWS_*`
    /// variables say (endpoint, region, credentials, `AWS_ALLOW_HTTP`).
    S3(String),
    /// The data directory (the default; the same as `file:`).
    #[default]
    DataDir,
}

impl StorageSpec {
    /// Parse the two settings; each error names the setting (`storage.head`, `storage.objects`).
    pub fn parse(head: &str, objects: &str) -> Result<StorageSpec, String> {
        let head = match head.trim() {
            "" | "sqlite" => HeadSpec::Sqlite,
            h if h.starts_with("postgres://") || h.starts_with("postgresql://") => {
                h.parse::<postgres::Config>()
                    .map_err(|e| format!("storage.head: not a PostgreSQL URL: {e}"))?;
                HeadSpec::Postgres(h.to_owned())
            }
            h => {
                return Err(format!(
                    "storage.head: {h:?} is neither `sqlite` nor a `postgres://` URL"
                ));
            }
        };
        let objects = match objects.trim() {
            "" | "file:" => ObjectsSpec::DataDir,
            o if o.starts_with("file:") => ObjectsSpec::File(Some(PathBuf::from(&o[5..]))),
            o if o.starts_with("s3://") => {
                let rest = &o[5..];
                let bucket = rest.split('/').next().unwrap_or("");
                if bucket.is_empty() {
                    return Err(format!("storage.objects: {o:?} names no bucket"));
                }
                let prefix = rest[bucket.len()..].trim_matches('/');
                if prefix
                    .split('/')
                    .any(|c| prefix.contains("//") || c == "." || c == "..")
                {
                    return Err(format!(
                        "storage.objects: {o:?}: the prefix must be plain path components"
                    ));
                }
                ObjectsSpec::S3(o.trim_end_matches('/').to_owned())
            }
            o => {
                return Err(format!(
                    "storage.objects: {o:?} is neither `file:PATH` nor `s3://BUCKET/PREFIX`"
                ));
            }
        };
        Ok(StorageSpec { head, objects })
    }

    /// Whether this is the single box's default (SQLite and the data directory).
    pub fn is_default(&self) -> bool {
        self.head == HeadSpec::Sqlite && self.objects == ObjectsSpec::DataDir
    }

    /// The object store's root for the data directory `data`.
    pub fn objects_root(&self, data: &Path) -> Result<Objects, StoreError> {
        Ok(match &self.objects {
            ObjectsSpec::DataDir | ObjectsSpec::File(None) => Objects::dir(data)?,
            ObjectsSpec::File(Some(p)) => Objects::dir(p)?,
            ObjectsSpec::S3(url) => Objects::s3(url, &crate::objects::S3Options::from_env())?,
        })
    }

    /// The head store of the log whose local directory is `log_dir` (where SQLite lives).
    pub fn head_store(&self, log_dir: &Path) -> Result<Box<dyn HeadStore>, StoreError> {
        Ok(match &self.head {
            HeadSpec::Sqlite => Box::new(SqliteHead::open(log_dir)?),
            HeadSpec::Postgres(url) => Box::new(crate::head::postgres::PgHead::connect(url)?),
        })
    }

    /// A head store that only reads, beside a running writer (a cosigner's).
    pub fn head_reader(&self, log_dir: &Path) -> Result<Box<dyn HeadStore>, StoreError> {
        Ok(match &self.head {
            HeadSpec::Sqlite => Box::new(SqliteHead::open_read_only(log_dir)?),
            HeadSpec::Postgres(url) => Box::new(crate::head::postgres::PgHead::connect(url)?),
        })
    }

    /// The stores of the log of data directory `data` (SQLite in `DATA/log`, the objects under
    /// `log/` of the root).
    pub fn log_stores(&self, data: &Path) -> Result<LogStores, StoreError> {
        Ok(LogStores {
            head: self.head_store(&data.join("log"))?,
            objects: self.objects_root(data)?.sub("log"),
        })
    }

    /// For messages: `sqlite + file:DATA`, `postgres://host/db + s3://bucket/prefix`.
    pub fn describe(&self) -> String {
        let head = match &self.head {
            HeadSpec::Sqlite => "sqlite".to_owned(),
            HeadSpec::Postgres(u) => u
                .split('@')
                .next_back()
                .map_or(u.clone(), |h| format!("postgres://{h}")),
        };
        let objects = match &self.objects {
            ObjectsSpec::DataDir | ObjectsSpec::File(None) => "file:".to_owned(),
            ObjectsSpec::File(Some(p)) => format!("file:{}", p.display()),
            ObjectsSpec::S3(u) => u.clone(),
        };
        format!("{head} + {objects}")
    }
}

/// The largest checkpoint note read from an object store (a checkpoint with many cosignatures
/// is a few KiB).
pub const MAX_CHECKPOINT_BYTES: u64 = 64 * 1024;

/// How many times a checkpoint replace may lose a race to other writers before giving up.
pub const MAX_PUBLISH_RACES: usize = 16;

/// Replace `public/checkpoint` with `note` (of `size` and `root`), only ever moving it forward:
/// a newer published checkpoint is left alone (`Ok(false)`), the same size with another root is
/// a fork alarm, and the replace is conditional on the version read (`If-Match`).
pub(crate) fn publish_forward(
    public: &Objects,
    vkey: &str,
    note: &[u8],
    size: u64,
    root: Hash,
) -> Result<bool, StoreError> {
    for _ in 0..MAX_PUBLISH_RACES {
        let expect = match public.get_versioned("checkpoint", MAX_CHECKPOINT_BYTES) {
            Ok(None) => Expect::Absent,
            Ok(Some((bytes, version))) => {
                // A checkpoint that does not verify is the untrusted store's garbage: replace it.
                if let Ok(cur) = crate::note::open_checkpoint(&bytes, vkey) {
                    if cur.size > size {
                        return Ok(false);
                    }
                    if cur.size == size && cur.root != root {
                        return Err(StoreError::Fatal(format!(
                            "the published checkpoint has another root at size {size}: fork"
                        )));
                    }
                    if bytes == note {
                        return Ok(true);
                    }
                }
                Expect::Version(version)
            }
            // Larger than any checkpoint: garbage too, but a version is needed to replace it.
            Err(ObjectError::TooLarge { .. }) => {
                return Err(StoreError::Fatal(
                    "the published checkpoint is larger than any checkpoint".into(),
                ));
            }
            Err(e) => return Err(e.into()),
        };
        if public.put_if("checkpoint", note, &expect)? {
            return Ok(true);
        }
    }
    Err(StoreError::Refused(format!(
        "the checkpoint changed under {MAX_PUBLISH_RACES} attempts to replace it"
    )))
}

/// The newest checkpoint the log signed whose files the object store holds (what a cosigner
/// submits to witnesses), published or not. `None` before the first one.
pub fn signed_checkpoint(head: &mut dyn HeadStore) -> Result<Option<Vec<u8>>, StoreError> {
    let Some((size, _)) = head.applied()? else {
        return Ok(None);
    };
    Ok(head.checkpoint_at(size)?.map(|h| h.note))
}

/// Publishes a cosigned checkpoint as `public/checkpoint`, beside a writer that may be
/// appending meanwhile (no writer's lock is needed).
///
/// It must be: signed by the log's key (the head store's `vkey`), of a size and root the log
/// committed, no larger than the last size whose files the object store holds (`applied`), and
/// no smaller than the published checkpoint's. The log must be in witnessed publication
/// ([`crate::Log::set_witnessed`]); otherwise the writer publishes and this refuses. The caller
/// decides whether the cosignatures satisfy its policy; this checks only the log's own
/// signature. The replace is conditional on the version it read (`If-Match`).
///
/// # Errors
///
/// [`StoreError::Refused`] naming the rule the note breaks; store errors.
pub fn publish_witnessed(
    head: &mut dyn HeadStore,
    public: &Objects,
    note: &[u8],
) -> Result<u64, StoreError> {
    let refused = |why: String| StoreError::Refused(why);
    let vkey = head
        .meta("vkey")?
        .ok_or_else(|| refused("the head store records no log key".into()))?;
    let cp = crate::note::open_checkpoint(note, vkey.trim())
        .map_err(|e| refused(format!("the note is not the log's checkpoint: {e}")))?;
    if head.meta("publication")?.as_deref() != Some(WITNESSED) {
        return Err(refused(
            "the log publishes its checkpoints itself (no witnesses configured)".into(),
        ));
    }
    match head.checkpoint_at(cp.size)? {
        Some(h) if h.root == cp.root => {}
        _ => {
            return Err(refused(format!(
                "the log never committed size {} with root {}",
                cp.size,
                cp.root.to_base64()
            )));
        }
    }
    let durable = head.applied()?.map_or(0, |(s, _)| s);
    if cp.size > durable {
        return Err(refused(format!(
            "the files of size {} are not all published yet (published up to {durable})",
            cp.size
        )));
    }
    if !publish_forward(public, vkey.trim(), note, cp.size, cp.root)? {
        return Err(refused(format!(
            "size {} is older than the published checkpoint",
            cp.size
        )));
    }
    Ok(cp.size)
}

/// The `meta` value of `publication` when publication waits for witnesses.
pub const WITNESSED: &str = "witnessed";

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

/// A staged batch (`staging/<base>-<size>-<hex root>`): records of (u32 path length, path, u32 data
/// length, data), big-endian lengths.
pub fn encode_batch(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        files
            .iter()
            .map(|(p, d)| 8 + p.len() + d.len())
            .sum::<usize>(),
    );
    for (p, d) in files {
        out.extend_from_slice(&(p.len() as u32).to_be_bytes());
        out.extend_from_slice(p.as_bytes());
        out.extend_from_slice(&(d.len() as u32).to_be_bytes());
        out.extend_from_slice(d);
    }
    out
}

/// Reads a staged batch back (it comes from the untrusted object store): `None` for bytes that
/// are not one, or a path that is empty, absolute, or has `.` or `..` components.
pub fn decode_batch(mut b: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_settings_parse_and_name_the_key_they_refuse() {
        assert!(StorageSpec::parse("sqlite", "file:").unwrap().is_default());
        assert!(StorageSpec::parse("", "").unwrap().is_default());
        let s = StorageSpec::parse("postgres://tm@127.0.0.1:5432/log", "s3://b/p/q/").unwrap();
        assert_eq!(
            s.head,
            HeadSpec::Postgres("postgres://tm@127.0.0.1:5432/log".into())
        );
        assert_eq!(s.objects, ObjectsSpec::S3("s3://b/p/q".into()));
        assert_eq!(
            StorageSpec::parse("sqlite", "file:/srv/tm")
                .unwrap()
                .objects,
            ObjectsSpec::File(Some("/srv/tm".into()))
        );
        for (h, o, key) in [
            ("mysql://x", "file:", "storage.head"),
            ("postgres://x:notaport/db", "file:", "storage.head"),
            ("sqlite", "s3://", "storage.objects"),
            ("sqlite", "s3://b/../x", "storage.objects"),
            ("sqlite", "gs://b", "storage.objects"),
        ] {
            let e = StorageSpec::parse(h, o).unwrap_err();
            assert!(e.starts_with(key), "{h} {o}: {e}");
        }
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
