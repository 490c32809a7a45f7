//! The content-addressed blob store: stored raw material (observation documents), named by the
//! SHA-256 of their bytes.
//!
//! A blob lives at `<dir>/sha256/<first 2 hex>/<64 hex>`. [`Blobs::put`] writes it through a
//! uniquely named temporary file in the same directory, fsyncs it, renames it into place and
//! fsyncs the directory, so a crash leaves either no blob or the whole blob, and a blob is
//! durable before `put` returns (the recorder writes blobs before the log entries that name
//! them). Putting the same bytes twice is a no-op, except that a corrupted copy is replaced.
//! [`Blobs::get`] hashes what it reads: a blob whose bytes do not match its name is
//! [`BlobError::Corrupt`], never returned as data.
//!
//! What it does not do: garbage-collect (nothing is ever deleted: every blob is named by a log
//! entry), deduplicate across stores, or compress.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use toolmark_toolset::Sri;

/// Largest blob stored or read. An observation document embeds at most
/// `toolmark_crawler::limits::MAX_TOOLSET_BYTES` (16 MiB) of pages and one `initialize` result
/// of at most `MAX_RESPONSE_BYTES` (8 MiB); JSON escaping can grow text at most sixfold
/// (`\u00xx` for a control byte), which stays below this. The cap bounds what reading a damaged
/// or hostile store can cost.
pub const MAX_BLOB_BYTES: u64 = 256 * 1024 * 1024;

/// What can go wrong with the blob store.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// A file system operation failed.
    #[error("blob store: {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The stored bytes do not hash to the blob's name.
    #[error("blob {sri} is corrupted: {path} holds bytes whose digest is {found}")]
    Corrupt {
        /// The blob's name.
        sri: Sri,
        /// Its file.
        path: PathBuf,
        /// The digest of what the file holds.
        found: Sri,
    },
    /// The blob is larger than [`MAX_BLOB_BYTES`].
    #[error("blob of {0} bytes is larger than the limit of {MAX_BLOB_BYTES}")]
    TooLarge(u64),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BlobError + '_ {
    move |source| BlobError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Distinguishes temporary files of concurrent `put`s within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A blob store rooted at a directory.
#[derive(Debug, Clone)]
pub struct Blobs {
    root: PathBuf,
}

impl Blobs {
    /// Open (creating if needed) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Blobs, BlobError> {
        let root = dir.join("sha256");
        fs::create_dir_all(&root).map_err(io(&root))?;
        Ok(Blobs { root })
    }

    /// Where the blob named `sri` lives (whether or not it exists).
    pub fn path_of(&self, sri: &Sri) -> PathBuf {
        let hex = sri.hex();
        self.root.join(&hex[..2]).join(hex)
    }

    /// Store `bytes`; returns their name. Durable when it returns.
    pub fn put(&self, bytes: &[u8]) -> Result<Sri, BlobError> {
        self.write(bytes, true)
    }

    /// [`Blobs::put`] without waiting for the disk: the blob is in place (atomically renamed)
    /// but not yet durable. Call [`Blobs::sync`] before anything that names it is committed
    /// elsewhere. A batch of N blobs then costs one `syncfs` instead of 2N fsyncs.
    pub fn put_deferred(&self, bytes: &[u8]) -> Result<Sri, BlobError> {
        self.write(bytes, false)
    }

    /// Make every blob written so far durable: one `syncfs(2)` of the store's file system
    /// (files, renames and new directories alike).
    pub fn sync(&self) -> Result<(), BlobError> {
        let root = File::open(&self.root).map_err(io(&self.root))?;
        rustix::fs::syncfs(&root).map_err(|e| io(&self.root)(e.into()))
    }

    fn write(&self, bytes: &[u8], durable: bool) -> Result<Sri, BlobError> {
        if bytes.len() as u64 > MAX_BLOB_BYTES {
            return Err(BlobError::TooLarge(bytes.len() as u64));
        }
        let sri = Sri::of(bytes);
        match self.get(&sri) {
            Ok(Some(_)) => return Ok(sri),
            // Absent, or a damaged copy that this write repairs.
            Ok(None) | Err(BlobError::Corrupt { .. }) => {}
            Err(e) => return Err(e),
        }
        let path = self.path_of(&sri);
        let dir = path.parent().unwrap_or(&self.root).to_owned();
        if !dir.is_dir() {
            fs::create_dir_all(&dir).map_err(io(&dir))?;
            if durable {
                sync_dir(&self.root)?;
            }
        }
        let tmp = dir.join(format!(
            ".{}.{}.{}.tmp",
            sri.hex(),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut f = File::options()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(io(&tmp))?;
            f.write_all(bytes).map_err(io(&tmp))?;
            if durable {
                f.sync_all().map_err(io(&tmp))?;
            }
            fs::rename(&tmp, &path).map_err(io(&path))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written?;
        if durable {
            sync_dir(&dir)?;
        }
        Ok(sri)
    }

    /// The blob named `sri`, verified; `None` when it is not stored.
    pub fn get(&self, sri: &Sri) -> Result<Option<Vec<u8>>, BlobError> {
        let path = self.path_of(sri);
        let f = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path)(e)),
        };
        let len = f.metadata().map_err(io(&path))?.len();
        if len > MAX_BLOB_BYTES {
            return Err(BlobError::TooLarge(len));
        }
        let mut bytes = Vec::with_capacity(len as usize);
        f.take(MAX_BLOB_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io(&path))?;
        if bytes.len() as u64 > MAX_BLOB_BYTES {
            return Err(BlobError::TooLarge(bytes.len() as u64));
        }
        let found = Sri::of(&bytes);
        if found != *sri {
            return Err(BlobError::Corrupt {
                sri: *sri,
                path,
                found,
            });
        }
        Ok(Some(bytes))
    }

    /// Whether a file for `sri` exists (not verified; use [`Blobs::get`] to read it).
    pub fn contains(&self, sri: &Sri) -> bool {
        self.path_of(sri).is_file()
    }
}

fn sync_dir(dir: &Path) -> Result<(), BlobError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("toolmark-index-blobs-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn put_get_layout_and_idempotence() {
        let dir = scratch("layout");
        let blobs = Blobs::open(&dir).unwrap();
        let sri = blobs.put(b"hello").unwrap();
        assert_eq!(sri, Sri::of(b"hello"));
        let hex = sri.hex();
        let path = dir.join("sha256").join(&hex[..2]).join(&hex);
        assert_eq!(blobs.path_of(&sri), path);
        assert_eq!(fs::read(&path).unwrap(), b"hello");
        assert_eq!(blobs.put(b"hello").unwrap(), sri);
        assert_eq!(blobs.get(&sri).unwrap().as_deref(), Some(&b"hello"[..]));
        assert!(blobs.contains(&sri));
        assert_eq!(blobs.get(&Sri::of(b"other")).unwrap(), None);
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(&hex)]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn corruption_is_an_error_and_put_repairs_it() {
        let dir = scratch("corrupt");
        let blobs = Blobs::open(&dir).unwrap();
        let sri = blobs.put(b"{\"tools\":[]}").unwrap();
        let path = blobs.path_of(&sri);
        fs::write(&path, b"{\"tools\":[1]}").unwrap();
        assert!(matches!(
            blobs.get(&sri),
            Err(BlobError::Corrupt { sri: s, .. }) if s == sri
        ));
        fs::write(&path, b"").unwrap();
        assert!(matches!(blobs.get(&sri), Err(BlobError::Corrupt { .. })));
        assert_eq!(blobs.put(b"{\"tools\":[]}").unwrap(), sri);
        assert_eq!(
            blobs.get(&sri).unwrap().as_deref(),
            Some(&b"{\"tools\":[]}"[..])
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
