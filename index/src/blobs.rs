//! The content-addressed blob store: stored raw material (observation documents), named by the
//! SHA-256 of their bytes, in the object store beside the log ([`Objects`]: the data directory,
//! another directory or an S3-compatible bucket; `DataDir::blobs`).
//!
//! A blob is the object `sha256/<first 2 hex>/<64 hex>` under the store's `blobs/` view
//! (`DATA/blobs/sha256/…` on the default store, `PREFIX/blobs/sha256/…` in a bucket). It is
//! written create-only ([`Objects::put_create`]: `If-None-Match: *` in a bucket, a hard link of a
//! fully written temporary file in a directory), so a reader sees no blob or the whole blob.
//! [`Blobs::put`] is durable when it returns (a directory's file system is synced; a bucket's
//! write is durable once acknowledged), because the recorder writes blobs before the log entries
//! that name them; [`Blobs::put_deferred`] and one [`Blobs::sync`] do the same for a batch.
//!
//! Putting the same bytes twice is a no-op. An object already at the name with other bytes
//! cannot be another blob (its name is the hash of the bytes being put), so it is a corrupted
//! copy: it is replaced by a plain write of the right bytes — the only bytes that can ever
//! replace it. [`Blobs::get`] hashes what it reads: a blob whose bytes do not match its name is
//! [`BlobError::Corrupt`], never returned as data, and nothing larger than [`MAX_BLOB_BYTES`] is
//! read.
//!
//! What it does not do: garbage-collect (nothing is ever deleted: every blob is named by a log
//! entry), deduplicate across stores, or compress.

use std::ops::Range;
use std::path::{Path, PathBuf};

use toolmark_log::objects::{ObjectError, Objects};
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
    /// A local directory of the store could not be created.
    #[error("blob store: {path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The object store failed (I/O, the network, a status it should not give).
    #[error("blob store: {0}")]
    Store(#[from] ObjectError),
    /// The stored bytes do not hash to the blob's name.
    #[error("blob {sri} is corrupted: {location} holds bytes whose digest is {found}")]
    Corrupt {
        /// The blob's name.
        sri: Sri,
        /// Its object (the store and the key).
        location: String,
        /// The digest of what the object holds.
        found: Sri,
    },
    /// The blob is larger than [`MAX_BLOB_BYTES`].
    #[error("blob of {0} bytes is larger than the limit of {MAX_BLOB_BYTES}")]
    TooLarge(u64),
}

/// A blob store: the `blobs/` view of an object store.
#[derive(Debug, Clone)]
pub struct Blobs {
    objects: Objects,
}

impl Blobs {
    /// The store in `objects` (blobs at `sha256/<2 hex>/<64 hex>` under it). A directory's is
    /// created if missing, so it can be synced before the first blob is written.
    pub fn new(objects: Objects) -> Result<Blobs, BlobError> {
        if let Some(dir) = objects.local_dir() {
            std::fs::create_dir_all(dir).map_err(|source| BlobError::Io {
                path: dir.to_owned(),
                source,
            })?;
        }
        Ok(Blobs { objects })
    }

    /// Open (creating if needed) the store in the directory `dir`.
    pub fn open(dir: &Path) -> Result<Blobs, BlobError> {
        Blobs::new(Objects::dir(dir)?)
    }

    /// The object store the blobs live in (tests reach the raw objects through it).
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// The key of the blob named `sri` in [`Blobs::objects`]: `sha256/<2 hex>/<64 hex>`.
    pub fn key_of(sri: &Sri) -> String {
        let hex = sri.hex();
        format!("sha256/{}/{hex}", &hex[..2])
    }

    /// Where the blob named `sri` lives, for messages: the store's URL and the key.
    pub fn location(&self, sri: &Sri) -> String {
        format!("{}/{}", self.objects.label(), Blobs::key_of(sri))
    }

    /// The file of the blob named `sri` (whether or not it exists) when the store is a
    /// directory; `None` for a bucket.
    pub fn path_of(&self, sri: &Sri) -> Option<PathBuf> {
        self.objects
            .local_dir()
            .map(|dir| dir.join(Blobs::key_of(sri)))
    }

    /// Store `bytes`; returns their name. Durable when it returns.
    pub fn put(&self, bytes: &[u8]) -> Result<Sri, BlobError> {
        let sri = self.put_deferred(bytes)?;
        self.sync()?;
        Ok(sri)
    }

    /// [`Blobs::put`] without waiting for the disk: the blob is in place whole but, in a
    /// directory, not yet durable. Call [`Blobs::sync`] before anything that names it is
    /// committed elsewhere. A batch of N blobs then costs one `syncfs` instead of N.
    pub fn put_deferred(&self, bytes: &[u8]) -> Result<Sri, BlobError> {
        if bytes.len() as u64 > MAX_BLOB_BYTES {
            return Err(BlobError::TooLarge(bytes.len() as u64));
        }
        let sri = Sri::of(bytes);
        let key = Blobs::key_of(&sri);
        match self.objects.put_create(&key, bytes) {
            Ok(_) => {}
            // What is there is not these bytes, whose hash is the name: a corrupted copy, which
            // only these bytes may replace (see the module documentation).
            Err(ObjectError::Differs { .. }) => self.objects.put(&key, bytes)?,
            Err(e) => return Err(e.into()),
        }
        Ok(sri)
    }

    /// Make every blob written so far durable: one `syncfs(2)` of a directory's file system
    /// (files, renames and new directories alike); nothing for a bucket, whose writes are
    /// durable once acknowledged.
    pub fn sync(&self) -> Result<(), BlobError> {
        Ok(self.objects.flush()?)
    }

    /// The blob named `sri`, verified; `None` when it is not stored.
    pub fn get(&self, sri: &Sri) -> Result<Option<Vec<u8>>, BlobError> {
        let key = Blobs::key_of(sri);
        let bytes = match self.objects.get_bounded(&key, MAX_BLOB_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(ObjectError::TooLarge { .. }) => {
                // Only the message needs the size; a store that cannot say is still refused.
                let size = self.size(sri).ok().flatten().unwrap_or(MAX_BLOB_BYTES + 1);
                return Err(BlobError::TooLarge(size));
            }
            Err(e) => return Err(e.into()),
        };
        self.verify(sri, &bytes)?;
        Ok(Some(bytes))
    }

    /// [`BlobError::Corrupt`] unless `bytes` (the whole of what was read for `sri`) hash to
    /// `sri`.
    pub fn verify(&self, sri: &Sri, bytes: &[u8]) -> Result<(), BlobError> {
        let found = Sri::of(bytes);
        if found != *sri {
            return Err(self.corrupt(sri, found));
        }
        Ok(())
    }

    /// The error for the blob `sri` found to hold bytes whose digest is `found`.
    pub fn corrupt(&self, sri: &Sri, found: Sri) -> BlobError {
        BlobError::Corrupt {
            sri: *sri,
            location: self.location(sri),
            found,
        }
    }

    /// Whether an object for `sri` exists (not verified; use [`Blobs::get`] to read it).
    pub fn contains(&self, sri: &Sri) -> Result<bool, BlobError> {
        Ok(self.size(sri)?.is_some())
    }

    /// The size of the stored object for `sri`, `None` when there is none (not verified).
    pub fn size(&self, sri: &Sri) -> Result<Option<u64>, BlobError> {
        Ok(self.objects.stat(&Blobs::key_of(sri))?.map(|s| s.size))
    }

    /// Bytes `range` of the stored object for `sri`, **not verified**: for a reader that hashes
    /// the ranges it reads and checks the whole against `sri` before it trusts any of it (the
    /// API's document stream). `None` when there is no such object.
    pub fn get_range_unverified(
        &self,
        sri: &Sri,
        range: Range<u64>,
    ) -> Result<Option<Vec<u8>>, BlobError> {
        Ok(self.objects.get_range(&Blobs::key_of(sri), range)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("toolmark-index-blobs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// On a directory a blob is the file `sha256/<2 hex>/<64 hex>`, with no temporary file left
    /// beside it. (Every store's behaviour is tested in tests/blobs.rs.)
    #[test]
    fn a_directory_keeps_the_file_layout() {
        let dir = scratch("layout");
        let blobs = Blobs::open(&dir).unwrap();
        let sri = blobs.put(b"hello").unwrap();
        let hex = sri.hex();
        let path = dir.join("sha256").join(&hex[..2]).join(&hex);
        assert_eq!(blobs.path_of(&sri), Some(path.clone()));
        assert_eq!(Blobs::key_of(&sri), format!("sha256/{}/{hex}", &hex[..2]));
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        assert_eq!(blobs.put(b"hello").unwrap(), sri);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(&hex)]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
