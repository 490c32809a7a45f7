//! The object store: where the log's public files, its staged batches and the observation
//! documents live — a local directory or any S3-compatible bucket, through `object_store`.
//!
//! The store is **untrusted**: it can stall the log, never fork it. Every write the log makes is
//! create-only ([`Objects::put_create`]: `If-None-Match: *`; on files a rename that refuses to
//! replace, `renameat2(RENAME_NOREPLACE)`, or a hard link where that is missing) except the
//! checkpoint, which only moves forward by a conditional replace ([`Objects::put_if`]:
//! `If-Match` on the version read, a compare under a lock file on a directory). A create that
//! finds an object already there accepts it only if its bytes are identical.
//!
//! The log is synchronous (its SQLite twin and every caller run on blocking threads); the
//! `object_store` futures run on one small runtime owned by this module ([`block`]), which any
//! thread may wait on, inside a tokio blocking task or not.

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long one request to a bucket may take before it is abandoned (and retried, within
/// [`S3_RETRY_TIMEOUT`]).
pub const S3_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to a bucket's endpoint may take.
pub const S3_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Retries of a failed request (5xx, timeouts, connection errors) to a bucket.
pub const S3_MAX_RETRIES: usize = 3;
/// No retry starts once this long has passed since a request's first try: with
/// [`S3_REQUEST_TIMEOUT`] per try, a dead bucket costs a write at most about 90 s before it
/// fails (a refused connection, far less).
pub const S3_RETRY_TIMEOUT: Duration = Duration::from_secs(60);
/// How many writes [`Objects::put_create_all`] keeps in flight at once in a bucket. A batch's
/// tiles and bundles are independent objects; written one after the other, a 100,000-entry batch
/// waits for about 800 bucket round trips in a row. More in flight gains little once the store's
/// own concurrency is used, and each write in flight holds its bytes. A directory gets one at a
/// time: creations in one directory contend on its lock, and the disk is not a round trip away.
pub const MAX_PARALLEL_PUTS: usize = 16;
/// How many reads [`Objects::get_all`] keeps in flight at once (a proof's tiles: one per tile
/// level and a few partial tiles of the right edge, rarely more than 16).
pub const MAX_PARALLEL_GETS: usize = 16;
/// The largest object [`Objects::get`] reads (an entry bundle is at most 256 × 64 KiB plus
/// lengths; a staged batch of [`crate::sequencer::MAX_BATCH`] entries is larger and is read
/// with [`Objects::get_bounded`]).
pub const MAX_OBJECT_BYTES: u64 = 32 * 1024 * 1024;

/// Why an object operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The store failed (I/O, network, a status it should not give).
    #[error("object store {store}: {path}: {reason}")]
    Store {
        /// The store (its URL).
        store: String,
        /// The object.
        path: String,
        /// Why.
        reason: String,
    },
    /// A create-only write found different bytes at the path: the object store holds another
    /// history than the one this writer committed. The writer must halt.
    #[error(
        "fork alarm: {store}: {path} already holds {found} bytes that differ from the {wanted} \
         this log committed"
    )]
    Differs {
        /// The store.
        store: String,
        /// The object.
        path: String,
        /// Length of what is there.
        found: usize,
        /// Length of what the writer wanted to write.
        wanted: usize,
    },
    /// An object is larger than the reader allows.
    #[error("object store {store}: {path} is larger than {max} bytes")]
    TooLarge {
        /// The store.
        store: String,
        /// The object.
        path: String,
        /// The limit.
        max: u64,
    },
    /// The store's URL or options are not usable.
    #[error("object store: {0}")]
    Config(String),
}

/// What a conditional replace ([`Objects::put_if`]) expects to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// No object yet.
    Absent,
    /// The object at this version (as [`Objects::get_versioned`] returned it).
    Version(Version),
}

/// The version of an object as the store reports it (an ETag, and a version id where the store
/// has them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    e_tag: Option<String>,
    version: Option<String>,
}

/// Objects by path, oldest dropped first once they hold more than a byte budget. Only for
/// paths that name immutable bytes (tiles and bundles: a partial tile's path has its width), so
/// an entry is never stale.
#[derive(Debug)]
pub struct ImmutableCache {
    map: std::collections::HashMap<String, Arc<Vec<u8>>>,
    order: std::collections::VecDeque<String>,
    bytes: usize,
    max_bytes: usize,
}

impl ImmutableCache {
    /// An empty cache holding at most `max_bytes` of objects.
    pub fn new(max_bytes: usize) -> ImmutableCache {
        ImmutableCache {
            map: Default::default(),
            order: Default::default(),
            bytes: 0,
            max_bytes,
        }
    }

    /// The object at `path`, if cached.
    pub fn get(&self, path: &str) -> Option<Arc<Vec<u8>>> {
        self.map.get(path).cloned()
    }

    /// Keep `bytes` as the object at `path` (an object larger than the budget is not kept).
    pub fn insert(&mut self, path: String, bytes: Arc<Vec<u8>>) {
        if bytes.len() > self.max_bytes || self.map.contains_key(&path) {
            return;
        }
        self.bytes += bytes.len();
        self.map.insert(path.clone(), bytes);
        self.order.push_back(path);
        while self.bytes > self.max_bytes {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(b) = self.map.remove(&old) {
                self.bytes -= b.len();
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// What a store says of an object without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written.
    pub modified: std::time::SystemTime,
    /// Its ETag, where the store gives one (it changes whenever the object does).
    pub e_tag: Option<String>,
}

/// Whether a create-only write wrote or found its bytes already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// The object did not exist and now holds the bytes.
    New,
    /// The object already held exactly these bytes.
    Identical,
}

/// Threads the object store's runtime runs a directory's file operations on (those through
/// `object_store`; plain reads and create-only writes run on the caller's thread, see
/// `Objects::direct_file`).
pub const OBJECT_BLOCKING_THREADS: usize = 8;

/// The runtime the object store's futures run on (two worker threads, created on first use).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            // A directory's reads and writes run on blocking threads: a few are enough, and
            // each thread's allocator heap stays resident (96 concurrent document reads once
            // took the service 130 MiB over its bound).
            .max_blocking_threads(OBJECT_BLOCKING_THREADS)
            .thread_name("toolmark-objects")
            .enable_all()
            .build()
            .expect("the object store's runtime starts")
    })
}

/// Run `fut` on the object store's runtime and wait for it from this (non-async) thread.
pub fn block<F>(fut: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv()
        .expect("the object store's runtime finishes what it is given")
}

/// A place in an object store: a store and a prefix in it.
#[derive(Clone)]
pub struct Objects {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// The directory behind a local store: `flush` syncs its file system, and `put_if` takes a
    /// lock file beside it (a directory has no conditional replace).
    local: Option<PathBuf>,
    /// A directory's plain reads and create-only writes go straight to the file system on the
    /// caller's thread (see [`Objects::direct_file`]); not through a wrapper (fault injection).
    direct: bool,
    /// The URL this came from, for messages.
    label: String,
}

impl std::fmt::Debug for Objects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label)
    }
}

/// How to reach an S3-compatible bucket (what the `AWS_*` variables say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct S3Options {
    /// The endpoint (`AWS_ENDPOINT_URL`); `None`: AWS itself.
    pub endpoint: Option<String>,
    /// The region (`AWS_REGION`, default `us-east-1`).
    pub region: Option<String>,
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key_id: Option<String>,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_access_key: Option<String>,
    /// Plain HTTP to the endpoint (`AWS_ALLOW_HTTP=true`).
    pub allow_http: bool,
    /// Virtual-hosted-style requests (`bucket.endpoint`) instead of path-style (the default,
    /// what S3-compatible servers expect).
    pub virtual_hosted: bool,
}

impl S3Options {
    /// An S3-compatible server at `endpoint` (path-style requests; plain HTTP allowed when the
    /// endpoint is `http://`), every request signed with these credentials.
    pub fn at(endpoint: &str, access_key_id: &str, secret_access_key: &str) -> S3Options {
        S3Options {
            endpoint: Some(endpoint.to_owned()),
            region: None,
            access_key_id: Some(access_key_id.to_owned()),
            secret_access_key: Some(secret_access_key.to_owned()),
            allow_http: endpoint.starts_with("http://"),
            virtual_hosted: false,
        }
    }

    /// The options the usual `AWS_*` variables give.
    pub fn from_env() -> S3Options {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        S3Options {
            endpoint: var("AWS_ENDPOINT_URL"),
            region: var("AWS_REGION"),
            access_key_id: var("AWS_ACCESS_KEY_ID"),
            secret_access_key: var("AWS_SECRET_ACCESS_KEY"),
            allow_http: var("AWS_ALLOW_HTTP").is_some_and(|v| v.eq_ignore_ascii_case("true")),
            virtual_hosted: var("AWS_VIRTUAL_HOSTED_STYLE_REQUEST")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        }
    }
}

fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) => format!("{prefix}/{path}"),
    }
}

/// A relative path of ours: non-empty `/`-separated components, none `.` or `..`.
fn checked(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

impl Objects {
    /// A local directory (created if missing).
    pub fn dir(dir: &Path) -> Result<Objects, ObjectError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| ObjectError::Config(format!("{}: {e}", dir.display())))?;
        // Resolved once, as `object_store` resolves it: the direct path and its store must name
        // the same files even if the working directory or a symlink on the way changes.
        let dir = &std::fs::canonicalize(dir)
            .map_err(|e| ObjectError::Config(format!("{}: {e}", dir.display())))?;
        let fs = object_store::local::LocalFileSystem::new_with_prefix(dir)
            .map_err(|e| ObjectError::Config(format!("{}: {e}", dir.display())))?;
        Ok(Objects {
            store: Arc::new(fs),
            prefix: String::new(),
            local: Some(dir.to_owned()),
            direct: true,
            label: format!("file:{}", dir.display()),
        })
    }

    /// `s3://BUCKET/PREFIX` with `opts`.
    pub fn s3(url: &str, opts: &S3Options) -> Result<Objects, ObjectError> {
        let rest = url
            .strip_prefix("s3://")
            .ok_or_else(|| ObjectError::Config(format!("{url}: not an s3:// URL")))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(ObjectError::Config(format!("{url}: no bucket")));
        }
        let prefix = prefix.trim_matches('/');
        if !prefix.is_empty() && !checked(prefix) {
            return Err(ObjectError::Config(format!(
                "{url}: the prefix must be plain path components"
            )));
        }
        let mut b = object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region(opts.region.clone().unwrap_or_else(|| "us-east-1".into()))
            .with_allow_http(opts.allow_http)
            .with_virtual_hosted_style_request(opts.virtual_hosted)
            .with_conditional_put(object_store::aws::S3ConditionalPut::ETagMatch)
            .with_client_options(
                object_store::ClientOptions::new()
                    .with_timeout(S3_REQUEST_TIMEOUT)
                    .with_connect_timeout(S3_CONNECT_TIMEOUT)
                    .with_allow_http(opts.allow_http),
            )
            .with_retry(object_store::RetryConfig {
                max_retries: S3_MAX_RETRIES,
                retry_timeout: S3_RETRY_TIMEOUT,
                ..Default::default()
            });
        if let Some(e) = &opts.endpoint {
            b = b.with_endpoint(e);
        }
        if let Some(k) = &opts.access_key_id {
            b = b.with_access_key_id(k);
        }
        if let Some(s) = &opts.secret_access_key {
            b = b.with_secret_access_key(s);
        }
        if opts.access_key_id.is_none() {
            b = b.with_skip_signature(true);
        }
        let store = b
            .build()
            .map_err(|e| ObjectError::Config(format!("{url}: {e}")))?;
        Ok(Objects {
            store: Arc::new(store),
            prefix: prefix.to_owned(),
            local: None,
            direct: false,
            label: url.trim_end_matches('/').to_owned(),
        })
    }

    /// A read-only `http(s)://` base URL (a log served as static files).
    pub fn http(base: &str) -> Result<Objects, ObjectError> {
        let store = object_store::http::HttpBuilder::new()
            .with_url(base.trim_end_matches('/'))
            .with_client_options(
                object_store::ClientOptions::new()
                    .with_timeout(S3_REQUEST_TIMEOUT)
                    .with_connect_timeout(S3_CONNECT_TIMEOUT)
                    .with_allow_http(true),
            )
            .with_retry(object_store::RetryConfig {
                max_retries: S3_MAX_RETRIES,
                retry_timeout: S3_RETRY_TIMEOUT,
                ..Default::default()
            })
            .build()
            .map_err(|e| ObjectError::Config(format!("{base}: {e}")))?;
        Ok(Objects {
            store: Arc::new(store),
            prefix: String::new(),
            local: None,
            direct: false,
            label: base.trim_end_matches('/').to_owned(),
        })
    }

    /// Any `object_store` (tests: the in-memory store behind a fault injector).
    pub fn from_store(store: Arc<dyn ObjectStore>, label: &str) -> Objects {
        Objects {
            store,
            prefix: String::new(),
            local: None,
            direct: false,
            label: label.to_owned(),
        }
    }

    /// The same place through a wrapper of the store (tests: a fault injector around the real
    /// store), keeping the prefix and, for a directory, its path.
    pub fn wrapped(
        &self,
        wrap: impl FnOnce(Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore>,
    ) -> Objects {
        Objects {
            store: wrap(self.store.clone()),
            prefix: self.prefix.clone(),
            local: self.local.clone(),
            direct: false,
            label: self.label.clone(),
        }
    }

    /// The view of the objects under `sub` (`log/public`, `blobs`).
    pub fn sub(&self, sub: &str) -> Objects {
        debug_assert!(checked(sub), "{sub}");
        Objects {
            store: self.store.clone(),
            prefix: join(&self.prefix, sub),
            local: self.local.as_ref().map(|d| d.join(sub)),
            direct: self.direct,
            label: format!("{}/{sub}", self.label),
        }
    }

    /// The URL this store came from (for messages and `/health`).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether plain reads go straight to a local directory's files on the caller's thread
    /// ([`Objects::direct_file`]: bounded file reads, no hop to another runtime or the
    /// network), so a caller on an async worker may read through it.
    pub fn reads_on_caller(&self) -> bool {
        self.direct
    }

    /// The directory behind a local store.
    pub fn local_dir(&self) -> Option<&Path> {
        self.local.as_deref()
    }

    fn location(&self, path: &str) -> Result<ObjectPath, ObjectError> {
        if !checked(path) {
            return Err(self.err(path, "not a plain relative path"));
        }
        ObjectPath::parse(join(&self.prefix, path)).map_err(|e| self.err(path, e))
    }

    fn err(&self, path: &str, reason: impl std::fmt::Display) -> ObjectError {
        ObjectError::Store {
            store: self.label.clone(),
            path: path.to_owned(),
            reason: reason.to_string(),
        }
    }

    /// The object at `path`, `None` if there is none; at most [`MAX_OBJECT_BYTES`].
    pub fn get(&self, path: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        self.get_bounded(path, MAX_OBJECT_BYTES)
    }

    /// [`Objects::get`] with its own size limit.
    pub fn get_bounded(&self, path: &str, max: u64) -> Result<Option<Vec<u8>>, ObjectError> {
        if let Some(file) = self.direct_file(path) {
            return self.read_direct(path, &file, max);
        }
        Ok(self.get_versioned(path, max)?.map(|(b, _)| b))
    }

    /// The file behind `path` when the direct path may take it: a directory store not wrapped,
    /// and a name of plain characters only (`[A-Za-z0-9._-]` components: `object_store`'s
    /// directory store maps those to the same file, and every path the log writes is one).
    /// Reads and create-only writes of such files skip `object_store`'s hop to a blocking
    /// thread, its `fstat` per file and its hard link and unlink per create: a 100,000-entry
    /// batch writes about 800 files, and a proof reads up to a dozen.
    fn direct_file(&self, path: &str) -> Option<PathBuf> {
        let dir = self.local.as_ref().filter(|_| self.direct)?;
        let plain = checked(path)
            && path
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'));
        plain.then(|| dir.join(path))
    }

    /// [`Objects::get_bounded`] of the file `file` (behind `path`).
    fn read_direct(
        &self,
        path: &str,
        file: &Path,
        max: u64,
    ) -> Result<Option<Vec<u8>>, ObjectError> {
        use std::io::Read;
        let f = match std::fs::File::open(file) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.err(path, e)),
        };
        let meta = f.metadata().map_err(|e| self.err(path, e))?;
        if meta.is_dir() {
            return Ok(None);
        }
        let too_large = || ObjectError::TooLarge {
            store: self.label.clone(),
            path: path.to_owned(),
            max,
        };
        if meta.len() > max {
            return Err(too_large());
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        f.take(max.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| self.err(path, e))?;
        if bytes.len() as u64 > max {
            return Err(too_large());
        }
        Ok(Some(bytes))
    }

    /// [`Objects::stat`] of the file `file` (behind `path`) on the caller's thread: one
    /// `statx`, where `object_store` hands an open and an `fstat` to one of its blocking
    /// threads and the caller waits for two thread hand-offs (the API asks for the
    /// checkpoint's on every `/check`, on its async worker). The same [`Stat`] as
    /// `object_store`'s directory store gives (its ETag is `"<inode>-<mtime µs>-<size>"` in
    /// hex), so a stat taken either way compares equal.
    fn stat_direct(&self, path: &str, file: &Path) -> Result<Option<Stat>, ObjectError> {
        use std::os::unix::fs::MetadataExt;
        let meta = match std::fs::metadata(file) {
            Ok(m) if m.is_dir() => return Ok(None),
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.err(path, e)),
        };
        let modified = meta.modified().map_err(|e| self.err(path, e))?;
        let micros = modified
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_micros();
        Ok(Some(Stat {
            size: meta.len(),
            modified,
            e_tag: Some(format!("\"{:x}-{micros:x}-{:x}\"", meta.ino(), meta.len())),
        }))
    }

    /// A create-only write of the file `file` (behind `path`): the bytes to a hidden temporary
    /// file beside it (`NAME#<digits>`, which `object_store` lists as nothing), then a rename
    /// that refuses to replace (`renameat2(RENAME_NOREPLACE)`; a hard link and an unlink where
    /// the file system lacks it). Durable only after [`Objects::flush`], as every write here.
    fn create_direct(&self, path: &str, file: &Path, bytes: &[u8]) -> Result<Created, ObjectError> {
        use std::io::Write;
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut attempt = 0;
        let (tmp, mut f) = loop {
            attempt += 1;
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut name = file.as_os_str().to_owned();
            name.push(format!("#{}{n:08}", pid()));
            let tmp = PathBuf::from(name);
            match std::fs::File::create_new(&tmp) {
                Ok(f) => break (tmp, f),
                Err(e) if attempt < 3 && e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) if attempt < 3 && e.kind() == std::io::ErrorKind::NotFound => {
                    let parent = file.parent().unwrap_or(file);
                    std::fs::create_dir_all(parent).map_err(|e| self.err(path, e))?;
                }
                Err(e) => return Err(self.err(path, e)),
            }
        };
        let written = f.write_all(bytes);
        drop(f);
        // The temporary file is gone only after a rename.
        let mut renamed = false;
        let placed = written.and_then(|()| {
            use rustix::fs::{CWD, RenameFlags, renameat_with};
            match renameat_with(CWD, &tmp, CWD, file, RenameFlags::NOREPLACE) {
                Ok(()) => {
                    renamed = true;
                    Ok(true)
                }
                Err(rustix::io::Errno::EXIST) => Ok(false),
                Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
                    // No RENAME_NOREPLACE here: a hard link is create-only too.
                    match std::fs::hard_link(&tmp, file) {
                        Ok(()) => Ok(true),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                        Err(e) => Err(e),
                    }
                }
                Err(e) => Err(e.into()),
            }
        });
        if !renamed {
            let _ = std::fs::remove_file(&tmp);
        }
        match placed {
            Ok(true) => Ok(Created::New),
            Ok(false) => self.created(
                path,
                bytes,
                Err(object_store::Error::AlreadyExists {
                    path: path.to_owned(),
                    source: "the file exists".into(),
                }),
            ),
            Err(e) => Err(self.err(path, e)),
        }
    }

    /// The object at `path` and its version, `None` if there is none.
    pub fn get_versioned(
        &self,
        path: &str,
        max: u64,
    ) -> Result<Option<(Vec<u8>, Version)>, ObjectError> {
        let loc = self.location(path)?;
        let store = self.store.clone();
        self.read_result(path, max, block(read_once(store, loc, max)))
    }

    /// What [`read_once`] found, as this store's result for `path`.
    fn read_result(
        &self,
        path: &str,
        max: u64,
        r: Result<Read, String>,
    ) -> Result<Option<(Vec<u8>, Version)>, ObjectError> {
        match r {
            Ok(Read::Found(bytes, version)) => Ok(Some((bytes, version))),
            Ok(Read::Absent) => Ok(None),
            Ok(Read::TooLarge) => Err(ObjectError::TooLarge {
                store: self.label.clone(),
                path: path.to_owned(),
                max,
            }),
            Err(reason) => Err(self.err(path, reason)),
        }
    }

    /// [`Objects::get_bounded`] of every path at once (at most [`MAX_PARALLEL_GETS`] in flight;
    /// a directory's one after the other on this thread), in the order given; the first error
    /// fails the whole.
    pub fn get_all(&self, paths: &[String], max: u64) -> Result<Vec<Option<Vec<u8>>>, ObjectError> {
        use futures_util::StreamExt;
        let mut locs = Vec::with_capacity(paths.len());
        for p in paths {
            locs.push(self.location(p)?);
        }
        if self.direct {
            return paths.iter().map(|p| self.get_bounded(p, max)).collect();
        }
        let store = self.store.clone();
        let results = block(async move {
            futures_util::stream::iter(locs.into_iter().map(|loc| {
                let store = store.clone();
                async move { read_once(store, loc, max).await }
            }))
            .buffered(MAX_PARALLEL_GETS)
            .collect::<Vec<_>>()
            .await
        });
        paths
            .iter()
            .zip(results)
            .map(|(path, r)| Ok(self.read_result(path, max, r)?.map(|(b, _)| b)))
            .collect()
    }

    /// What the store says of the object at `path` (its size, when it was written, its ETag),
    /// `None` if there is none.
    pub fn stat(&self, path: &str) -> Result<Option<Stat>, ObjectError> {
        if let Some(file) = self.direct_file(path) {
            return self.stat_direct(path, &file);
        }
        let loc = self.location(path)?;
        let store = self.store.clone();
        match block(async move { store.head(&loc).await }) {
            Ok(m) => Ok(Some(Stat {
                size: m.size,
                modified: std::time::SystemTime::from(m.last_modified),
                e_tag: m.e_tag,
            })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err(path, e)),
        }
    }

    /// Write `bytes` at `path` only if nothing is there (`If-None-Match: *`). An object already
    /// there is accepted only if it holds exactly these bytes; otherwise
    /// [`ObjectError::Differs`] (a fork alarm).
    pub fn put_create(
        &self,
        path: &str,
        bytes: impl Into<Vec<u8>>,
    ) -> Result<Created, ObjectError> {
        let loc = self.location(path)?;
        if let Some(file) = self.direct_file(path) {
            return self.create_direct(path, &file, &bytes.into());
        }
        let store = self.store.clone();
        // An owned buffer is handed over as it is (a staged batch is tens of MB).
        let payload = PutPayload::from(bytes.into());
        let kept = payload.clone();
        let r = block(async move {
            store
                .put_opts(&loc, payload, PutOptions::from(PutMode::Create))
                .await
        });
        // `PutPayload::from(Vec)` is one chunk.
        let chunks: &[_] = kept.as_ref();
        self.created(path, chunks.first().map_or(&[][..], |c| c.as_ref()), r)
    }

    /// What a create-only write of `bytes` at `path` that returned `r` means: an object already
    /// there is accepted only if it holds exactly these bytes.
    fn created(
        &self,
        path: &str,
        bytes: &[u8],
        r: Result<object_store::PutResult, object_store::Error>,
    ) -> Result<Created, ObjectError> {
        match r {
            Ok(_) => Ok(Created::New),
            Err(object_store::Error::AlreadyExists { .. }) => {
                // A larger object than ours differs from it: read at most one byte more.
                let found = match self.get_bounded(path, bytes.len() as u64) {
                    Err(ObjectError::TooLarge { .. }) => {
                        return Err(ObjectError::Differs {
                            store: self.label.clone(),
                            path: path.to_owned(),
                            found: bytes.len() + 1,
                            wanted: bytes.len(),
                        });
                    }
                    r => r?,
                };
                match found {
                    Some(found) if found == bytes => Ok(Created::Identical),
                    Some(found) => Err(ObjectError::Differs {
                        store: self.label.clone(),
                        path: path.to_owned(),
                        found: found.len(),
                        wanted: bytes.len(),
                    }),
                    None => Err(self.err(path, "refused as existing, then not found")),
                }
            }
            Err(e) => Err(self.err(path, e)),
        }
    }

    /// [`Objects::put_create`] of every `(path, bytes)`, at most [`MAX_PARALLEL_PUTS`] in flight
    /// at once (one in a directory), each checked as `put_create` checks it; the first error (in the order given) is
    /// returned once all have finished. Nothing is ordered between the files: a caller that needs
    /// one written after the others writes it after this returns.
    pub fn put_create_all(&self, files: &[(String, Vec<u8>)]) -> Result<(), ObjectError> {
        use futures_util::StreamExt;
        if self.direct {
            // A directory: one file after the other on this thread (see `direct_file`).
            let mut first = None;
            for (path, bytes) in files {
                let r = match self.direct_file(path) {
                    Some(file) => self.create_direct(path, &file, bytes),
                    None => self.put_create(path, bytes.as_slice()),
                };
                if let Err(e) = r {
                    first.get_or_insert(e);
                }
            }
            return first.map_or(Ok(()), Err);
        }
        let mut puts = Vec::with_capacity(files.len());
        for (path, bytes) in files {
            puts.push((self.location(path)?, PutPayload::from(bytes.clone())));
        }
        let in_flight = if self.local.is_some() {
            1
        } else {
            MAX_PARALLEL_PUTS
        };
        let store = self.store.clone();
        let results = block(async move {
            futures_util::stream::iter(puts.into_iter().map(|(loc, payload)| {
                let store = store.clone();
                async move {
                    store
                        .put_opts(&loc, payload, PutOptions::from(PutMode::Create))
                        .await
                }
            }))
            .buffered(in_flight)
            .collect::<Vec<_>>()
            .await
        });
        for ((path, bytes), r) in files.iter().zip(results) {
            self.created(path, bytes, r)?;
        }
        Ok(())
    }

    /// Replace the object at `path` only if it is still what `expect` says (`If-Match` on its
    /// version, or `If-None-Match: *` when absent). `Ok(false)`: someone else changed it first.
    pub fn put_if(&self, path: &str, bytes: &[u8], expect: &Expect) -> Result<bool, ObjectError> {
        if let Some(dir) = &self.local {
            return self.put_if_local(dir, path, bytes, expect);
        }
        let loc = self.location(path)?;
        let store = self.store.clone();
        let payload = PutPayload::from(bytes.to_vec());
        let mode = match expect {
            Expect::Absent => PutMode::Create,
            Expect::Version(v) => PutMode::Update(UpdateVersion {
                e_tag: v.e_tag.clone(),
                version: v.version.clone(),
            }),
        };
        match block(async move { store.put_opts(&loc, payload, PutOptions::from(mode)).await }) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => Ok(false),
            Err(e) => Err(self.err(path, e)),
        }
    }

    /// A directory has no conditional replace: compare and write under an exclusive lock file
    /// beside the directory (`<dir>.lock`), which every writer of this directory takes.
    fn put_if_local(
        &self,
        dir: &Path,
        path: &str,
        bytes: &[u8],
        expect: &Expect,
    ) -> Result<bool, ObjectError> {
        let lock_path = PathBuf::from(format!("{}.lock", dir.display()));
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| self.err(path, format!("{}: {e}", lock_path.display())))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| self.err(path, format!("{}: {e}", lock_path.display())))?;
        let current = self.get_versioned(path, MAX_OBJECT_BYTES)?;
        let same = match (expect, &current) {
            (Expect::Absent, None) => true,
            (Expect::Version(v), Some((_, cur))) => v == cur,
            _ => false,
        };
        if !same {
            return Ok(false);
        }
        self.put(path, bytes)?;
        self.flush()?;
        drop(lock);
        Ok(true)
    }

    /// Write `bytes` at `path` whatever is there (staging cleanup markers, migration).
    pub fn put(&self, path: &str, bytes: &[u8]) -> Result<(), ObjectError> {
        let loc = self.location(path)?;
        let store = self.store.clone();
        let payload = PutPayload::from(bytes.to_vec());
        block(async move { store.put(&loc, payload).await })
            .map(|_| ())
            .map_err(|e| self.err(path, e))
    }

    /// Delete the object at `path` (no error if there is none).
    pub fn delete(&self, path: &str) -> Result<(), ObjectError> {
        let loc = self.location(path)?;
        let store = self.store.clone();
        match block(async move { store.delete(&loc).await }) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.err(path, e)),
        }
    }

    /// The paths (relative to this view) of every object under `sub` (`""`: the whole view), at
    /// most `max` of them, in the store's order (not sorted: SeaweedFS lists a directory tree).
    pub fn list(&self, sub: &str, max: usize) -> Result<Vec<String>, ObjectError> {
        use futures_util::TryStreamExt;
        let loc = match (sub.is_empty(), self.prefix.is_empty()) {
            (false, _) => Some(self.location(sub)?),
            (true, true) => None,
            (true, false) => Some(ObjectPath::parse(&self.prefix).map_err(|e| self.err(sub, e))?),
        };
        let store = self.store.clone();
        let base = if self.prefix.is_empty() {
            String::new()
        } else {
            format!("{}/", self.prefix)
        };
        let r = block(async move {
            let mut out = Vec::new();
            let mut s = store.list(loc.as_ref());
            while let Some(m) = s.try_next().await? {
                out.push(m.location.to_string());
                if out.len() >= max {
                    break;
                }
            }
            Ok::<_, object_store::Error>(out)
        });
        let names = r.map_err(|e| self.err(sub, e))?;
        Ok(names
            .into_iter()
            .filter_map(|n| n.strip_prefix(&base).map(str::to_owned))
            .collect())
    }

    /// Make every write so far durable. A bucket's writes are durable when acknowledged; a
    /// directory's are once its file system is synced (one `syncfs(2)` instead of an fsync per
    /// tile).
    pub fn flush(&self) -> Result<(), ObjectError> {
        let Some(dir) = &self.local else {
            return Ok(());
        };
        let d = std::fs::File::open(dir).map_err(|e| self.err("", e))?;
        rustix::fs::syncfs(&d).map_err(|e| self.err("", std::io::Error::from(e)))
    }

    /// Bytes `range` of the object at `path` (an end past the object's is cut to it), `None`
    /// if there is none; a range longer than [`MAX_OBJECT_BYTES`] is refused. Nothing is checked
    /// here: the caller verifies what the ranges add up to (the API streams an observation
    /// document by ranges and hashes them, so a large document never sits whole in memory and
    /// no request waits on a slow client).
    pub fn get_range(
        &self,
        path: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, ObjectError> {
        if range.end.saturating_sub(range.start) > MAX_OBJECT_BYTES {
            return Err(ObjectError::TooLarge {
                store: self.label.clone(),
                path: path.to_owned(),
                max: MAX_OBJECT_BYTES,
            });
        }
        let loc = self.location(path)?;
        let store = self.store.clone();
        match block(async move { store.get_range(&loc, range).await }) {
            Ok(bytes) => Ok(Some(bytes.into())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err(path, e)),
        }
    }
}

/// This process's id, asked once (it names temporary files).
fn pid() -> u32 {
    static PID: OnceLock<u32> = OnceLock::new();
    *PID.get_or_init(std::process::id)
}

/// What one bounded read found.
enum Read {
    Found(Vec<u8>, Version),
    Absent,
    TooLarge,
}

/// One bounded read of `loc`, with the object's version.
async fn read_once(store: Arc<dyn ObjectStore>, loc: ObjectPath, max: u64) -> Result<Read, String> {
    let got = match store.get(&loc).await {
        Ok(g) => g,
        Err(object_store::Error::NotFound { .. }) => return Ok(Read::Absent),
        Err(e) => return Err(e.to_string()),
    };
    if got.meta.size > max {
        return Ok(Read::TooLarge);
    }
    let version = Version {
        e_tag: got.meta.e_tag.clone(),
        version: got.meta.version.clone(),
    };
    let bytes = got.bytes().await.map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Ok(Read::TooLarge);
    }
    Ok(Read::Found(bytes.to_vec(), version))
}

impl crate::verify::Source for Objects {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        Objects::get(self, path).map_err(|e| e.to_string())
    }

    // Any thread may wait on the objects' runtime: the verifier fetches ahead in parallel.
    fn concurrent(&self) -> Option<&(dyn crate::verify::Source + Sync)> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_to_its_byte_budget_dropping_the_oldest() {
        let mut c = ImmutableCache::new(10);
        c.insert("a".into(), Arc::new(vec![0; 4]));
        c.insert("b".into(), Arc::new(vec![0; 4]));
        c.insert("c".into(), Arc::new(vec![0; 4]));
        assert!(c.get("a").is_none());
        assert!(c.get("b").is_some() && c.get("c").is_some());
        assert_eq!(c.bytes(), 8);
        c.insert("huge".into(), Arc::new(vec![0; 11]));
        assert!(c.get("huge").is_none());
        assert_eq!(c.bytes(), 8);
    }

    /// A directory's stat, taken on the caller's thread, is what `object_store`'s directory
    /// store says of the same file (so a stat taken either way compares equal), and changes
    /// when the file is replaced.
    #[test]
    fn a_directory_stat_is_the_object_stores() {
        let dir = std::env::temp_dir().join(format!("toolmark-objects-stat-{}", pid()));
        let _ = std::fs::remove_dir_all(&dir);
        let direct = Objects::dir(&dir).unwrap();
        // The same directory through `object_store` (a wrapper turns the direct path off).
        let store = direct.wrapped(|s| s);
        direct.put("cp", b"one").unwrap();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for path in ["cp", "absent", "sub"] {
            assert_eq!(
                direct.stat(path).unwrap(),
                store.stat(path).unwrap(),
                "{path}"
            );
        }
        let before = direct.stat("cp").unwrap().unwrap();
        assert_eq!(before.size, 3);
        assert!(before.e_tag.is_some());
        // Replaced by a rename (as a checkpoint is): a new inode, a new ETag.
        std::fs::write(dir.join("cp.new"), b"two").unwrap();
        std::fs::rename(dir.join("cp.new"), dir.join("cp")).unwrap();
        let after = direct.stat("cp").unwrap().unwrap();
        assert_ne!(after, before);
        assert_eq!(Some(after), store.stat("cp").unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn paths_must_be_plain_relative_components() {
        for bad in ["", "/a", "a/", "a//b", "../x", "a/./b", "a/.."] {
            assert!(!checked(bad), "{bad}");
        }
        for good in ["checkpoint", "tile/0/000.p/3", "staging/5-ab"] {
            assert!(checked(good), "{good}");
        }
    }

    #[test]
    fn sub_views_join_prefixes() {
        let o = Objects::from_store(Arc::new(object_store::memory::InMemory::new()), "mem:");
        let v = o.sub("log/public");
        assert_eq!(v.prefix, "log/public");
        assert_eq!(v.sub("tile").prefix, "log/public/tile");
        assert_eq!(v.label(), "mem:/log/public");
    }

    #[test]
    fn create_only_accepts_identical_bytes_and_refuses_others() {
        let o = Objects::from_store(Arc::new(object_store::memory::InMemory::new()), "mem:");
        assert_eq!(o.put_create("a/b", b"one").unwrap(), Created::New);
        assert_eq!(o.put_create("a/b", b"one").unwrap(), Created::Identical);
        let e = o.put_create("a/b", b"two").unwrap_err();
        assert!(matches!(e, ObjectError::Differs { .. }), "{e}");
        assert!(e.to_string().contains("fork alarm"), "{e}");
    }

    #[test]
    fn a_range_is_read_up_to_the_object_end_and_a_long_one_refused() {
        let o = Objects::from_store(Arc::new(object_store::memory::InMemory::new()), "mem:");
        o.put("doc", b"0123456789").unwrap();
        assert_eq!(o.get_range("doc", 2..5).unwrap().unwrap(), b"234");
        assert_eq!(o.get_range("doc", 8..100).unwrap().unwrap(), b"89");
        assert_eq!(o.get_range("absent", 0..1).unwrap(), None);
        let e = o.get_range("doc", 0..MAX_OBJECT_BYTES + 1).unwrap_err();
        assert!(matches!(e, ObjectError::TooLarge { .. }), "{e}");
    }

    #[test]
    fn writing_many_at_once_checks_each_create_only() {
        let o = Objects::from_store(Arc::new(object_store::memory::InMemory::new()), "mem:");
        o.put_create("t/1", b"one").unwrap();
        // More files than are in flight at once; one already there with the same bytes.
        let files: Vec<(String, Vec<u8>)> = (0..3 * MAX_PARALLEL_PUTS)
            .map(|i| {
                (
                    format!("t/{i}"),
                    if i == 1 {
                        b"one".to_vec()
                    } else {
                        vec![i as u8]
                    },
                )
            })
            .collect();
        o.put_create_all(&files).unwrap();
        for (p, d) in &files {
            assert_eq!(&o.get(p).unwrap().unwrap(), d, "{p}");
        }
        let other = vec![
            ("u/new".to_string(), b"x".to_vec()),
            ("t/2".to_string(), b"not what is there".to_vec()),
        ];
        let e = o.put_create_all(&other).unwrap_err();
        assert!(
            matches!(e, ObjectError::Differs { ref path, .. } if path == "t/2"),
            "{e}"
        );
        assert_eq!(
            o.get("t/2").unwrap().unwrap(),
            vec![2u8],
            "the old bytes stay"
        );
    }

    #[test]
    fn conditional_replace_needs_the_version_read() {
        let o = Objects::from_store(Arc::new(object_store::memory::InMemory::new()), "mem:");
        assert!(o.put_if("cp", b"1", &Expect::Absent).unwrap());
        assert!(!o.put_if("cp", b"x", &Expect::Absent).unwrap());
        let (_, v1) = o.get_versioned("cp", 10).unwrap().unwrap();
        assert!(o.put_if("cp", b"2", &Expect::Version(v1.clone())).unwrap());
        assert!(!o.put_if("cp", b"3", &Expect::Version(v1)).unwrap());
        assert_eq!(o.get("cp").unwrap().unwrap(), b"2");
    }

    #[test]
    fn a_directory_creates_files_directly_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("toolmark-direct-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let o = Objects::dir(&dir).unwrap();
        let file = o.direct_file("tile/0/x001/002.p/3").expect("a plain name");
        assert_eq!(file, dir.join("tile/0/x001/002.p/3"));
        assert!(o.direct_file("odd name").is_none(), "not a plain name");
        assert!(
            o.wrapped(|s| s).direct_file("tile/0/000").is_none(),
            "a wrapper sees all"
        );
        assert_eq!(o.put_create("tile/0/000", b"t").unwrap(), Created::New);
        assert_eq!(
            o.put_create("tile/0/000", b"t").unwrap(),
            Created::Identical
        );
        let e = o.put_create("tile/0/000", b"u").unwrap_err();
        assert!(matches!(e, ObjectError::Differs { .. }), "{e}");
        o.put_create_all(&[("a/b".into(), b"1".to_vec()), ("a/c".into(), b"2".to_vec())])
            .unwrap();
        // What object_store's own directory store reads back: the same files, nothing else.
        let mut listed = o.list("", 100).unwrap();
        listed.sort();
        assert_eq!(listed, ["a/b", "a/c", "tile/0/000"]);
        let names: Vec<String> = std::fs::read_dir(dir.join("tile/0"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["000"], "no temporary file is left");
        assert_eq!(o.get_bounded("a/b", 1).unwrap().unwrap(), b"1");
        assert!(matches!(
            o.get_bounded("tile/0/000", 0),
            Err(ObjectError::TooLarge { .. })
        ));
        assert_eq!(o.get("tile").unwrap(), None, "a directory is no object");
        assert_eq!(o.get("absent").unwrap(), None);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_directory_replaces_conditionally_under_its_lock() {
        let dir = std::env::temp_dir().join(format!("toolmark-objects-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let o = Objects::dir(&dir).unwrap();
        assert!(o.put_if("checkpoint", b"1", &Expect::Absent).unwrap());
        assert!(!o.put_if("checkpoint", b"1", &Expect::Absent).unwrap());
        let (_, v1) = o.get_versioned("checkpoint", 10).unwrap().unwrap();
        assert!(
            o.put_if("checkpoint", b"22", &Expect::Version(v1.clone()))
                .unwrap()
        );
        assert!(!o.put_if("checkpoint", b"3", &Expect::Version(v1)).unwrap());
        assert_eq!(o.get("checkpoint").unwrap().unwrap(), b"22");
        assert_eq!(o.put_create("tile/0/000", b"t").unwrap(), Created::New);
        assert!(o.put_create("tile/0/000", b"u").is_err());
        assert!(o.get_bounded("checkpoint", 1).is_err(), "over the bound");
        std::fs::remove_dir_all(&dir).ok();
        std::fs::remove_file(format!("{}.lock", dir.display())).ok();
    }
}
