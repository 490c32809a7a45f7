//! Index snapshots (issue #27): an API replica publishes a consistent copy of its index to the
//! log's object store, so a new replica joins from it and follows the log from there instead of
//! deriving every row from the whole log.
//!
//! # Layout (under the object store's root, beside `log/` and `blobs/`)
//!
//! * `index-snapshots/parts/<sha256 hex>`: the snapshot's bytes (an SQLite database written by
//!   `VACUUM INTO`) cut into parts of [`SNAPSHOT_PART_BYTES`], each named by its SHA-256 and
//!   written create-only: two publishers never overwrite each other's parts.
//! * `index-snapshots/schema-<N>/manifest.json`: the newest snapshot of index schema `N`
//!   ([`Manifest`]), written last, and only over a manifest of a smaller tree (a conditional
//!   replace on the version read): concurrent publishers cannot leave a manifest naming parts
//!   that are not all there, nor replace a newer snapshot with an older one.
//!
//! # What a joining replica checks, and what it trusts
//!
//! [`join`] refuses a snapshot ([`IndexError::Snapshot`]) unless: its manifest is of this
//! code's schema version; the checkpoint it rests on verifies under the log's key (the caller's,
//! from the trusted head store) and states the manifest's tree size and root; that checkpoint
//! is consistent with the verified published checkpoint (a consistency proof from the public
//! tiles, or the same root at the same size); every part and the whole hash to the manifest's
//! SHA-256s within [`MAX_SNAPSHOT_BYTES`] and [`SNAPSHOT_DOWNLOAD_TIMEOUT`]; and the database
//! itself opens at this schema version and records that tree (`log_size_indexed`, the verified
//! range's size and root, the pinned log key). The tree is thereby verified; the rows derived
//! from its entries (observations, changes, signed events, census) are **not** derived again:
//! they are trusted as the publishing replica wrote them, as anyone who can write the bucket's
//! `index-snapshots/` could write them. An operator who does not trust that deletes the index
//! and starts the replica with snapshots off, which derives everything from the log.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use toolmark_log::merkle::{self, CompactRange, Hash};
use toolmark_log::note::open_checkpoint;
use toolmark_log::objects::{Expect, MAX_OBJECT_BYTES, Objects};
use toolmark_log::reader::{Reader, Signed};

use crate::index::{Index, IndexError};
use crate::schema::{SCHEMA_VERSION, log_size_indexed_in, meta};

/// Where snapshots live under the object store's root.
pub const SNAPSHOT_DIR: &str = "index-snapshots";

/// The manifest's format name.
pub const MANIFEST_FORMAT: &str = "toolmark-index-snapshot/1";

/// Bytes per part: the object store's largest single read ([`MAX_OBJECT_BYTES`]).
pub const SNAPSHOT_PART_BYTES: usize = MAX_OBJECT_BYTES as usize;

/// The largest snapshot a replica downloads (the sum of its parts).
pub const MAX_SNAPSHOT_BYTES: u64 = 64 << 30;

/// The largest manifest a replica reads (2,048 parts' names fit in a tenth of it).
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// How long a replica spends downloading a snapshot before it gives up and derives its index
/// from the log (checked between groups of parts; each read also has the store's own timeouts).
pub const SNAPSHOT_DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Parts read (and held in memory) at once while downloading or uploading.
const PARTS_IN_FLIGHT: usize = 8;

/// The index's meta key of the verified tree's right edge (kept by [`Index::follow`]).
pub(crate) const RANGE_KEY: &str = "follow_range";

/// One part of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// Its SHA-256 (lowercase hex), which names it.
    pub sha256: String,
    /// Its length.
    pub bytes: u64,
}

/// `index-snapshots/schema-<N>/manifest.json`: what a snapshot is and the tree it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: String,
    /// The index schema version of the database.
    pub schema_version: u32,
    /// The log size the index holds (every entry below it indexed).
    pub tree_size: u64,
    /// The root of that tree (base64, as in checkpoints).
    pub root_hash: String,
    /// The signed checkpoint of that tree, as published (a signed note).
    pub checkpoint: String,
    /// The SHA-256 of the whole database (lowercase hex).
    pub sha256: String,
    /// The database's length.
    pub bytes: u64,
    /// Its parts, in order.
    pub parts: Vec<Part>,
    /// When it was published (RFC 3339, UTC; for operators only).
    pub created: String,
}

/// The manifest's path under the object store's root, for this schema version.
pub fn manifest_path() -> String {
    format!("{SNAPSHOT_DIR}/schema-{SCHEMA_VERSION}/manifest.json")
}

fn part_path(sha256: &str) -> String {
    format!("{SNAPSHOT_DIR}/parts/{sha256}")
}

fn hex(digest: impl Into<[u8; 32]>) -> String {
    Hash(digest.into()).to_hex()
}

fn refused(why: impl std::fmt::Display) -> IndexError {
    IndexError::Snapshot(why.to_string())
}

fn store_err(e: impl std::fmt::Display) -> IndexError {
    IndexError::Snapshot(format!("the object store: {e}"))
}

/// The tree an index records: its `log_size_indexed` and the verified range, which must agree.
fn recorded_tree(conn: &rusqlite::Connection) -> Result<CompactRange, IndexError> {
    let indexed = log_size_indexed_in(conn)?;
    let range = match meta(conn, RANGE_KEY)? {
        Some(text) => CompactRange::parse(&text)
            .map_err(|e| IndexError::Inconsistent(format!("the verified range: {e}")))?,
        None => CompactRange::new(),
    };
    if range.size() != indexed {
        return Err(IndexError::Inconsistent(format!(
            "the index holds {indexed} entries, its verified range {}",
            range.size()
        )));
    }
    Ok(range)
}

/// The newest manifest in `objects` of this schema version, `None` if there is none.
pub fn newest(objects: &Objects) -> Result<Option<Manifest>, IndexError> {
    let Some(bytes) = objects
        .get_bounded(&manifest_path(), MAX_MANIFEST_BYTES)
        .map_err(store_err)?
    else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| refused(format!("{} does not parse: {e}", manifest_path())))
}

impl Index {
    /// Writes a consistent copy of this index to `path` (`VACUUM INTO`: one read transaction,
    /// compacted), which must not exist.
    pub fn write_snapshot(&self, path: &Path) -> Result<(), IndexError> {
        let to = path
            .to_str()
            .ok_or_else(|| IndexError::Invalid(format!("{} is not UTF-8", path.display())))?;
        self.conn.execute("VACUUM INTO ?1", [to])?;
        Ok(())
    }
}

/// What [`publish`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Published {
    /// The manifest now names this snapshot.
    New(Manifest),
    /// The bucket already had a snapshot of this tree size or larger (of this size: another
    /// publisher's); nothing replaced it.
    NotNewer(u64),
}

/// Publishes a snapshot of `index`, which must hold exactly the tree of `at` (a follower right
/// after a pass), to `objects` (the object store's root), staging the database at `scratch`
/// (removed afterwards).
pub fn publish(
    index: &Index,
    at: &Signed,
    objects: &Objects,
    scratch: &Path,
) -> Result<Published, IndexError> {
    let range = recorded_tree(&index.conn)?;
    let (size, root) = (at.checkpoint.size, at.checkpoint.root);
    if range.size() != size || range.root() != root {
        return Err(IndexError::Inconsistent(format!(
            "the index holds a tree of {} entries, not the checkpoint's {size}",
            range.size()
        )));
    }
    let current = objects
        .get_versioned(&manifest_path(), MAX_MANIFEST_BYTES)
        .map_err(store_err)?;
    let expect = match &current {
        Some((bytes, version)) => {
            if let Ok(m) = serde_json::from_slice::<Manifest>(bytes) {
                if m.tree_size >= size {
                    return Ok(Published::NotNewer(m.tree_size));
                }
            }
            Expect::Version(version.clone())
        }
        None => Expect::Absent,
    };
    let _ = std::fs::remove_file(scratch);
    let staged = (|| {
        index.write_snapshot(scratch)?;
        upload(scratch, objects)
    })();
    let _ = std::fs::remove_file(scratch);
    let (sha256, bytes, parts) = staged?;
    let manifest = Manifest {
        format: MANIFEST_FORMAT.into(),
        schema_version: SCHEMA_VERSION,
        tree_size: size,
        root_hash: root.to_base64(),
        checkpoint: String::from_utf8_lossy(&at.note).into_owned(),
        sha256,
        bytes,
        parts,
        created: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| refused(e.to_string()))?;
    if objects
        .put_if(&manifest_path(), &json, &expect)
        .map_err(store_err)?
    {
        Ok(Published::New(manifest))
    } else {
        // Another publisher replaced it meanwhile: its snapshot stands (its parts are all there).
        Ok(Published::NotNewer(
            newest(objects)?.map_or(0, |m| m.tree_size),
        ))
    }
}

/// Cuts the file at `path` into parts, writes them create-only; the whole's SHA-256, length
/// and parts.
fn upload(path: &Path, objects: &Objects) -> Result<(String, u64, Vec<Part>), IndexError> {
    let io = |e: std::io::Error| refused(format!("{}: {e}", path.display()));
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut whole = Sha256::new();
    let (mut bytes, mut parts) = (0u64, Vec::new());
    loop {
        let mut group = Vec::new();
        for _ in 0..PARTS_IN_FLIGHT {
            let mut buf = Vec::with_capacity(SNAPSHOT_PART_BYTES);
            (&mut file)
                .take(SNAPSHOT_PART_BYTES as u64)
                .read_to_end(&mut buf)
                .map_err(io)?;
            if buf.is_empty() {
                break;
            }
            whole.update(&buf);
            bytes += buf.len() as u64;
            let sha = hex(Sha256::digest(&buf));
            parts.push(Part {
                sha256: sha.clone(),
                bytes: buf.len() as u64,
            });
            group.push((part_path(&sha), buf));
        }
        if group.is_empty() {
            break;
        }
        objects.put_create_all(&group).map_err(store_err)?;
    }
    if bytes > MAX_SNAPSHOT_BYTES {
        return Err(refused(format!(
            "the snapshot is {bytes} bytes, more than MAX_SNAPSHOT_BYTES ({MAX_SNAPSHOT_BYTES}) a replica downloads"
        )));
    }
    Ok((hex(whole.finalize()), bytes, parts))
}

/// Joins from the newest snapshot in `objects`: checks it as the module documentation says
/// against `published` (the verified published checkpoint `reader` read, under the trusted
/// key) and writes the database at `dest` (which must not exist; a partial download is left at
/// `dest` + `.part`, removed here on failure). `Ok(None)`: there is no snapshot to join from.
pub fn join(
    objects: &Objects,
    reader: &Reader,
    published: &Signed,
    dest: &Path,
) -> Result<Option<Manifest>, IndexError> {
    let Some(m) = newest(objects)? else {
        return Ok(None);
    };
    let partial = dest.with_extension("snapshot.part");
    let _ = std::fs::remove_file(&partial);
    let r = check_and_download(&m, objects, reader, published, &partial);
    if r.is_err() {
        let _ = std::fs::remove_file(&partial);
        return r.map(|()| None);
    }
    std::fs::rename(&partial, dest).map_err(|e| refused(format!("{}: {e}", dest.display())))?;
    Ok(Some(m))
}

fn check_and_download(
    m: &Manifest,
    objects: &Objects,
    reader: &Reader,
    published: &Signed,
    partial: &Path,
) -> Result<(), IndexError> {
    if m.format != MANIFEST_FORMAT {
        return Err(refused(format!(
            "format {:?} is not {MANIFEST_FORMAT}",
            m.format
        )));
    }
    if m.schema_version != SCHEMA_VERSION {
        return Err(refused(format!(
            "index schema version {} is not {SCHEMA_VERSION}",
            m.schema_version
        )));
    }
    let vkey = reader.vkey();
    let cp = open_checkpoint(m.checkpoint.as_bytes(), vkey).map_err(|e| {
        refused(format!(
            "its checkpoint does not verify under the log's key: {e}"
        ))
    })?;
    if cp.size != m.tree_size || cp.root.to_base64() != m.root_hash || cp.size == 0 {
        return Err(refused(format!(
            "its checkpoint (size {}, root {}) is not the manifest's tree (size {}, root {})",
            cp.size,
            cp.root.to_base64(),
            m.tree_size,
            m.root_hash
        )));
    }
    let now = &published.checkpoint;
    let consistent = if cp.size > now.size {
        false
    } else if cp.size == now.size {
        cp.root == now.root
    } else {
        let proof = reader
            .consistency_proof(cp.size, now.size, published)
            .map_err(|e| refused(format!("no consistency proof to the published tree: {e}")))?;
        merkle::verify_consistency(&proof, now.size, &now.root, cp.size, &cp.root).is_ok()
    };
    if !consistent {
        return Err(refused(format!(
            "its tree (size {}) is not a prefix of the published checkpoint (size {}): a fork",
            cp.size, now.size
        )));
    }
    let sum: u64 = m.parts.iter().map(|p| p.bytes).sum();
    if m.bytes > MAX_SNAPSHOT_BYTES || sum != m.bytes {
        return Err(refused(format!(
            "{} bytes in parts of {sum} (at most MAX_SNAPSHOT_BYTES, {MAX_SNAPSHOT_BYTES})",
            m.bytes
        )));
    }
    download(m, objects, partial)?;
    let index = Index::open(partial)?;
    let range = recorded_tree(&index.conn)?;
    if range.size() != cp.size || range.root() != cp.root {
        return Err(refused(format!(
            "the database records a tree of {} entries with root {}, not the manifest's",
            range.size(),
            range.root().to_base64()
        )));
    }
    if meta(&index.conn, "log_vkey")?.as_deref().map(str::trim) != Some(vkey.trim()) {
        return Err(refused("the database follows another log key"));
    }
    Ok(())
}

/// The parts, each checked, into `partial`; the whole checked.
fn download(m: &Manifest, objects: &Objects, partial: &Path) -> Result<(), IndexError> {
    let io = |e: std::io::Error| refused(format!("{}: {e}", partial.display()));
    let until = Instant::now() + SNAPSHOT_DOWNLOAD_TIMEOUT;
    let mut out = std::fs::File::create_new(partial).map_err(io)?;
    let mut whole = Sha256::new();
    for group in m.parts.chunks(PARTS_IN_FLIGHT) {
        if Instant::now() > until {
            return Err(refused(format!(
                "not downloaded within SNAPSHOT_DOWNLOAD_TIMEOUT ({SNAPSHOT_DOWNLOAD_TIMEOUT:?})"
            )));
        }
        let paths: Vec<String> = group.iter().map(|p| part_path(&p.sha256)).collect();
        let got = objects
            .get_all(&paths, SNAPSHOT_PART_BYTES as u64)
            .map_err(store_err)?;
        for (part, bytes) in group.iter().zip(got) {
            let bytes = bytes.ok_or_else(|| refused(format!("part {} is missing", part.sha256)))?;
            if bytes.len() as u64 != part.bytes || hex(Sha256::digest(&bytes)) != part.sha256 {
                return Err(refused(format!(
                    "part {} does not hash to its name",
                    part.sha256
                )));
            }
            whole.update(&bytes);
            out.write_all(&bytes).map_err(io)?;
        }
    }
    if hex(whole.finalize()) != m.sha256 {
        return Err(refused(format!(
            "the database does not hash to the manifest's sha256 {}",
            m.sha256
        )));
    }
    out.sync_all().map_err(io)?;
    Ok(())
}
