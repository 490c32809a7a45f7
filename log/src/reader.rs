//! Reading a published log without its writer: what a server of the log needs.
//!
//! A [`Reader`] works from the public files alone (`checkpoint`, tiles, entry bundles; in a
//! directory, a bucket or behind an HTTP base URL: [`Objects`]) and the verifier key, so it never takes the writer's lock and can run in another thread or
//! process while the sequencer appends. Every answer is tied to one checkpoint: the reader
//! loads the current checkpoint (verifying its signature) and answers proofs at that size,
//! reading hashes from the tiles of that size. Published tiles of a size never change, so a
//! concurrent append cannot make a proof inconsistent with the checkpoint it is served with.
//!
//! It authenticates what it reads only as far as the signed checkpoint goes: a proof it returns
//! verifies against that checkpoint if and only if the tiles are the log's (a client verifies
//! anyway). It keeps the tiles and bundles it read (they never change: `READER_CACHE_BYTES`), so a
//! bucket-backed reader pays a request only for the tiles particular to a proof.

use crate::merkle::{self, Hash, HashReader, ProofError};
use crate::note::{self, Checkpoint};
use crate::objects::{ImmutableCache, Objects};
use crate::tiles::{self, TileId};
use crate::{FormatError, proof};

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A file could not be read.
    #[error("reading {path}: {reason}")]
    Io {
        /// The public path.
        path: String,
        /// Why.
        reason: String,
    },
    /// The checkpoint does not verify or parse.
    #[error("checkpoint: {0}")]
    Checkpoint(#[from] FormatError),
    /// A proof could not be built from the tiles.
    #[error(transparent)]
    Proof(#[from] ProofError),
    /// The request is outside the tree (index ≥ size, size beyond the checkpoint…).
    #[error("{0}")]
    OutOfRange(String),
}

/// A proof that does not exist, and `why` (the bound the request is outside).
fn no_such_proof<T>(why: impl std::fmt::Display) -> Result<T, ReadError> {
    Err(ReadError::OutOfRange(format!("no such proof: {why}")))
}

/// A verified checkpoint: the signed note as published, and its parsed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The note bytes exactly as published.
    pub note: Vec<u8>,
    /// Its parsed, verified content.
    pub checkpoint: Checkpoint,
}

/// A read-only view of a published log.
#[derive(Debug, Clone)]
pub struct Reader {
    public: Objects,
    vkey: String,
    /// Tiles and bundles read (immutable), shared by the clones of this reader.
    cache: std::sync::Arc<std::sync::Mutex<ImmutableCache>>,
    /// Tiles' subtree roots ([`tiles::tile_levels`]), by tile path, shared by the clones.
    levels: std::sync::Arc<std::sync::Mutex<ImmutableCache>>,
}

/// Bytes of tiles and bundles a reader keeps (its clones share them): the upper tiles and the
/// right edge every proof needs, so a bucket-backed reader pays a request only for the tiles
/// particular to a proof.
pub const READER_CACHE_BYTES: usize = 16 << 20;

/// Bytes of tiles' subtree roots a reader keeps ([`tiles::tile_levels`], at most 16,320 bytes
/// a tile: about 500 full tiles), its clones sharing them: every proof needs one subtree root
/// per tree level, and without them each proof hashed up to 255 nodes of each tile it touched
/// (the right edge's, on every `/check`). Tiles are immutable (a partial tile's path names its
/// width), so an entry is never stale.
pub const TILE_LEVELS_CACHE_BYTES: usize = 8 << 20;

impl Reader {
    /// A reader of the public files in `public` (a directory, a bucket or an HTTP base URL)
    /// whose checkpoints must verify under `vkey`.
    pub fn new(public: Objects, vkey: &str) -> Reader {
        Reader::with_budgets(public, vkey, READER_CACHE_BYTES, TILE_LEVELS_CACHE_BYTES)
    }

    /// [`Reader::new`] keeping at most `tiles_and_bundles` bytes of tiles and bundles and
    /// `tile_levels` bytes of subtree roots instead of [`READER_CACHE_BYTES`] and
    /// [`TILE_LEVELS_CACHE_BYTES`] (a test of the bounds; the defaults are what serve uses).
    pub fn with_budgets(
        public: Objects,
        vkey: &str,
        tiles_and_bundles: usize,
        tile_levels: usize,
    ) -> Reader {
        Reader {
            public,
            vkey: vkey.trim().to_owned(),
            cache: std::sync::Arc::new(std::sync::Mutex::new(ImmutableCache::new(
                tiles_and_bundles,
            ))),
            levels: std::sync::Arc::new(std::sync::Mutex::new(ImmutableCache::new(tile_levels))),
        }
    }

    /// The verifier key.
    pub fn vkey(&self) -> &str {
        &self.vkey
    }

    /// Where the public files are read from.
    pub fn public(&self) -> &Objects {
        &self.public
    }

    /// When the published checkpoint was last written (a batch, or a heartbeat re-signing the
    /// same tree: the note has no time of its own), as the store says; `None` if it cannot tell.
    pub fn checkpoint_written(&self) -> Option<std::time::SystemTime> {
        self.public
            .stat("checkpoint")
            .ok()
            .flatten()
            .map(|m| m.modified)
    }

    /// A public file (`checkpoint`, `tile/0/000`, …), `None` if it does not exist. The path must
    /// already be checked (see [`tiles::parse_tile_path`]); this does not sanitise it.
    pub fn file(&self, path: &str) -> Result<Option<Vec<u8>>, ReadError> {
        self.public.get(path).map_err(|e| ReadError::Io {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    }

    /// A tile or bundle (immutable: cached), which must exist. Shared, not copied: a bundle is
    /// up to 256 entries (tens to hundreds of KB) of which a caller wants one.
    fn need(&self, path: &str) -> Result<std::sync::Arc<Vec<u8>>, ReadError> {
        let cache = || {
            self.cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(b) = cache().get(path) {
            return Ok(b);
        }
        let bytes = std::sync::Arc::new(self.file(path)?.ok_or_else(|| ReadError::Io {
            path: path.to_owned(),
            reason: "missing".into(),
        })?);
        cache().insert(path.to_owned(), bytes.clone());
        Ok(bytes)
    }

    /// The subtree roots of `tile` ([`tiles::tile_levels`]), computed from its bytes the first
    /// time and kept ([`TILE_LEVELS_CACHE_BYTES`]).
    fn levels(&self, tile: &TileId) -> Result<std::sync::Arc<Vec<u8>>, ReadError> {
        let path = tile.path();
        let cache = || {
            self.levels
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(l) = cache().get(&path) {
            return Ok(l);
        }
        let data = self.need(&path)?;
        let expected = 32 * usize::from(tile.width);
        if data.len() != expected {
            return Err(ProofError::BadTile {
                path,
                expected,
                got: data.len(),
            }
            .into());
        }
        let levels = std::sync::Arc::new(tiles::tile_levels(&data));
        cache().insert(path, levels.clone());
        Ok(levels)
    }

    /// Bytes of subtree roots kept ([`TILE_LEVELS_CACHE_BYTES`] at most).
    pub fn tile_levels_cached_bytes(&self) -> usize {
        self.levels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .bytes()
    }

    /// The current checkpoint, signature verified.
    pub fn checkpoint(&self) -> Result<Signed, ReadError> {
        // The one mutable file: read every time, never cached, bounded.
        let note = self
            .public
            .get_bounded("checkpoint", crate::store::MAX_CHECKPOINT_BYTES)
            .map_err(|e| ReadError::Io {
                path: "checkpoint".into(),
                reason: e.to_string(),
            })?
            .ok_or_else(|| ReadError::Io {
                path: "checkpoint".into(),
                reason: "missing".into(),
            })?;
        let checkpoint = note::open_checkpoint(&note, &self.vkey)?;
        Ok(Signed { note, checkpoint })
    }

    /// The hashes of the tree of `size` leaves, from its tiles.
    fn hashes(&self, size: u64) -> Prefetching<'_> {
        Prefetching { reader: self, size }
    }

    /// Read every path not in the cache at once ([`Objects::get_all`]: in parallel from a
    /// bucket) into the cache.
    fn prefetch(&self, paths: Vec<String>) -> Result<(), ReadError> {
        let missing: Vec<String> = {
            let cache = self
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            paths
                .into_iter()
                .filter(|p| cache.get(p).is_none())
                .collect()
        };
        if missing.len() < 2 {
            // Nothing to overlap: `need` reads it.
            return Ok(());
        }
        let got = self
            .public
            .get_all(&missing, crate::objects::MAX_OBJECT_BYTES)
            .map_err(|e| ReadError::Io {
                path: missing.join(", "),
                reason: e.to_string(),
            })?;
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (path, bytes) in missing.into_iter().zip(got) {
            if let Some(b) = bytes {
                cache.insert(path, std::sync::Arc::new(b));
            }
        }
        Ok(())
    }

    /// Inclusion proof of `index` in the tree of `size` leaves (size ≤ `at`'s size).
    pub fn inclusion_proof(
        &self,
        index: u64,
        size: u64,
        at: &Signed,
    ) -> Result<Vec<Hash>, ReadError> {
        let published = at.checkpoint.size;
        // Each refusal names the condition that failed (any u64 may be asked for).
        if size == 0 {
            return no_such_proof("size 0 is the empty tree, which includes no entry");
        }
        if size > published {
            return no_such_proof(format!(
                "size {size} is beyond the published tree size {published}"
            ));
        }
        if index >= size {
            return no_such_proof(format!("index {index} is not below the tree size {size}"));
        }
        Ok(merkle::inclusion_proof(
            index,
            size,
            &self.hashes(at.checkpoint.size),
        )?)
    }

    /// Consistency proof from `old` to `new` leaves (0 < old ≤ new ≤ `at`'s size).
    pub fn consistency_proof(
        &self,
        old: u64,
        new: u64,
        at: &Signed,
    ) -> Result<Vec<Hash>, ReadError> {
        let published = at.checkpoint.size;
        if old == 0 {
            return no_such_proof("old 0 is the empty tree, which has no consistency proof");
        }
        if new > published {
            return no_such_proof(format!(
                "new {new} is beyond the published tree size {published}"
            ));
        }
        if old > new {
            return no_such_proof(format!("old {old} is larger than new {new}"));
        }
        Ok(merkle::consistency_proof(
            old,
            new,
            &self.hashes(at.checkpoint.size),
        )?)
    }

    /// The bytes of entry `index`, from its bundle in the tree of `at`'s size.
    pub fn entry(&self, index: u64, at: &Signed) -> Result<Vec<u8>, ReadError> {
        let size = at.checkpoint.size;
        if index >= size {
            return Err(ReadError::OutOfRange(format!(
                "entry {index} is not below size {size}"
            )));
        }
        let b = index / 256;
        let width = ((b + 1) * 256).min(size) - b * 256;
        let path = tiles::bundle_path(b, width as u16);
        let leaf = merkle::stored_hash_index(0, index);
        // The bundle and the leaf's tile at once.
        let mut paths: Vec<String> = tiles::TileHashReader::new(size, |_: &TileId| Ok(Vec::new()))
            .tiles_for(&[leaf])?
            .iter()
            .map(TileId::path)
            .collect();
        paths.push(path.clone());
        self.prefetch(paths)?;
        let bytes = self.need(&path)?;
        let entries = tiles::decode_bundle(&bytes)?;
        let entry = entries
            .get((index % 256) as usize)
            .map(|e| e.to_vec())
            .ok_or_else(|| ReadError::Io {
                path: path.clone(),
                reason: "bundle is short".into(),
            })?;
        // The bundle is not signed: the entry must be the leaf the tiles hold (proofs of it
        // are made from the same tiles, and a client checks those against the checkpoint).
        let leaf = self.hashes(size).read_hashes(&[leaf])?;
        if leaf.first() != Some(&merkle::leaf_hash(&entry)) {
            return Err(ReadError::Io {
                path,
                reason: format!("entry {index} does not hash to its leaf in the tiles"),
            });
        }
        Ok(entry)
    }

    /// A `c2sp.org/tlog-proof@v1` bundle for `index` against `at`, the entry in its `extra`
    /// line: enough to check offline that the log holds the entry.
    pub fn tlog_proof(&self, index: u64, at: &Signed) -> Result<String, ReadError> {
        let entry = self.entry(index, at)?;
        self.tlog_proof_of(index, &entry, at)
    }

    /// [`Reader::tlog_proof`] for a caller that has already read the entry (`entry`: what
    /// [`Reader::entry`] gave for `index` at `at`, so checked against its leaf), without reading
    /// it again.
    pub fn tlog_proof_of(
        &self,
        index: u64,
        entry: &[u8],
        at: &Signed,
    ) -> Result<String, ReadError> {
        let path = self.inclusion_proof(index, at.checkpoint.size, at)?;
        Ok(proof::encode_tlog_proof(
            Some(entry),
            index,
            &path,
            &at.note,
        ))
    }
}

/// The tree's hashes from its tiles, every tile a call needs read at once before any is used.
struct Prefetching<'a> {
    reader: &'a Reader,
    size: u64,
}

impl HashReader for Prefetching<'_> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ProofError> {
        let tiles = tiles::TileHashReader::new(self.size, |_: &TileId| Ok(Vec::new()));
        let places = indexes
            .iter()
            .map(|&i| tiles.place(i))
            .collect::<Result<Vec<_>, _>>()?;
        // The tiles whose subtree roots are not kept yet, read at once.
        let missing: Vec<String> = {
            let levels = self
                .reader
                .levels
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut paths: Vec<String> = Vec::new();
            for (tile, _, _) in &places {
                let path = tile.path();
                if levels.get(&path).is_none() && !paths.contains(&path) {
                    paths.push(path);
                }
            }
            paths
        };
        self.reader
            .prefetch(missing)
            .map_err(|e| ProofError::storage(e.to_string()))?;
        let mut out = Vec::with_capacity(places.len());
        for (i, (tile, from, to)) in places.iter().enumerate() {
            let levels = self.reader.levels(tile).map_err(|e| match e {
                ReadError::Proof(p) => p,
                other => ProofError::storage(other.to_string()),
            })?;
            let hash = tiles::level_root(&levels, usize::from(tile.width), *from, *to)
                .ok_or(ProofError::MissingHash(indexes[i]))?;
            out.push(hash);
        }
        Ok(out)
    }
}
