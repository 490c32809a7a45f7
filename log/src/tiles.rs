//! C2SP `tlog-tiles`: tile coordinates and paths, tile contents, reading hashes back out of
//! tiles, and entry bundles.
//!
//! Tiles have height 8: a full tile holds 256 hashes (8,192 bytes). The tile `(l, n)` holds, for
//! `i` in `0..256`, the root of leaves `[(n·256 + i)·256^l, (n·256 + i + 1)·256^l)`; level 0
//! holds leaf hashes and each hash at level `l ≥ 1` is the root of a full tile at level `l − 1`,
//! which is the stored hash at tree level `8·l` (see [`crate::merkle::stored_hash_index`]). A
//! tree of size `s` has at level `l` a partial tile of `floor(s / 256^l) mod 256` hashes when that
//! is not zero. Entry bundles (`tile/entries/<N>`) hold the entries of the level-0 tile `N`, each
//! prefixed by a big-endian `u16` length.
//!
//! This module writes its own C2SP paths (`tile/<L>/<N>[.p/<W>]`): the `tlog_tiles` crate's
//! `Tile::path()` emits Go sumdb paths (`tile/8/<L>/…`, `data`), which are a different format.
//!
//! It does no I/O: [`tile_data`] reads from a [`HashReader`], and [`TileHashReader`] gets tile
//! bytes from a caller-supplied function (a directory, HTTP, a map in a test). It authenticates
//! nothing: tile bytes are trusted as given. A verifier must recompute the root from them
//! ([`crate::merkle::tree_hash`]) and compare it with a signed checkpoint, or verify the proofs it
//! builds from them against that checkpoint's root; bad bytes then fail verification.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;

use crate::merkle::{
    FormatError, Hash, HashReader, MAX_TREE_SIZE, ProofError, node_hash, split_stored_hash_index,
    stored_hash_index, truncate_for_error,
};

/// Tile height: each tile spans 8 tree levels.
pub const TILE_HEIGHT: u8 = 8;

/// Hashes in a full tile (and entries in a full bundle): 2^8.
pub const TILE_WIDTH: u16 = 256;

/// The largest entry an entry bundle can carry.
///
/// Why: `tlog-tiles` prefixes every entry in a bundle with a big-endian `uint16` length, so no
/// entry longer than 65,535 bytes can be served in the standard format, and a log that accepted
/// one could never publish it.
pub const MAX_ENTRY_BYTES: usize = 65_535;

/// A Merkle tile: level `level`, index `index` within the level, `width` hashes (1..=256;
/// 256 is a full tile, anything less a partial one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TileId {
    /// Tile level (tree level `8·level`); C2SP allows 0..=63, trees up to 2^62 leaves use 0..=7.
    pub level: u8,
    /// Index of the tile within its level.
    pub index: u64,
    /// Number of hashes, 1..=256.
    pub width: u16,
}

impl TileId {
    /// A full tile.
    pub fn full(level: u8, index: u64) -> TileId {
        TileId {
            level,
            index,
            width: TILE_WIDTH,
        }
    }

    /// Whether the tile holds all 256 hashes.
    pub fn is_full(&self) -> bool {
        self.width == TILE_WIDTH
    }

    /// The C2SP path, `tile/<L>/<N>[.p/<W>]`, e.g. `tile/0/x001/x234/067.p/8`.
    ///
    /// The tile is not validated here; an invalid width shows up in the path as it is (see
    /// [`TileId::check`]).
    pub fn path(&self) -> String {
        let mut p = format!("tile/{}/{}", self.level, encode_index(self.index));
        push_width(&mut p, self.width);
        p
    }

    /// Checks the ranges: width 1..=256 and, at tree positions, within [`MAX_TREE_SIZE`] leaves.
    ///
    /// # Errors
    ///
    /// [`ProofError::InvalidTile`].
    pub fn check(&self) -> Result<(), ProofError> {
        let bad = |why: &str| ProofError::InvalidTile(format!("{}: {why}", self.path()));
        if self.width == 0 || self.width > TILE_WIDTH {
            return Err(bad("width must be 1..=256"));
        }
        if self.level >= 8 {
            return Err(bad("level beyond a 2^62-leaf tree"));
        }
        // The first leaf after the tile's last hash.
        let end = self
            .index
            .checked_mul(u64::from(TILE_WIDTH))
            .and_then(|x| x.checked_add(u64::from(self.width)))
            .and_then(|x| x.checked_mul(1u64 << (8 * u32::from(self.level))));
        match end {
            Some(e) if e <= MAX_TREE_SIZE => Ok(()),
            _ => Err(bad("tile lies beyond a 2^62-leaf tree")),
        }
    }
}

impl fmt::Display for TileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path())
    }
}

/// The C2SP path of an entry bundle: `tile/entries/<N>[.p/<W>]` (width 256 = full).
pub fn bundle_path(index: u64, width: u16) -> String {
    let mut p = format!("tile/entries/{}", encode_index(index));
    push_width(&mut p, width);
    p
}

fn push_width(p: &mut String, width: u16) {
    if width != TILE_WIDTH {
        p.push_str(&format!(".p/{width}"));
    }
}

/// `1234067` → `x001/x234/067`; `0` → `000`; `1000` → `x001/000`.
fn encode_index(mut n: u64) -> String {
    let mut groups = vec![format!("{:03}", n % 1000)];
    n /= 1000;
    while n > 0 {
        groups.push(format!("x{:03}", n % 1000));
        n /= 1000;
    }
    groups.reverse();
    groups.join("/")
}

/// What a tile path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParsedPath {
    /// A Merkle tile, `tile/<L>/<N>[.p/<W>]`.
    Tile(TileId),
    /// An entry bundle, `tile/entries/<N>[.p/<W>]`.
    Bundle {
        /// The bundle's index (the index of its level-0 tile).
        index: u64,
        /// Entries in it, 1..=256 (256 = full).
        width: u16,
    },
}

/// Parses a C2SP tile or entry-bundle path, exactly as [`TileId::path`] and [`bundle_path`]
/// write them: relative (`tile/…`, no leading `/`), level 0..=63 without leading zeros, index in
/// 3-digit groups with `x` on all but the last and no all-zero leading group, and for partials
/// `.p/<W>` with `W` in 1..=255 without leading zeros.
///
/// # Errors
///
/// [`FormatError::BadTilePath`] naming the first rule broken.
pub fn parse_tile_path(path: &str) -> Result<ParsedPath, FormatError> {
    let bad = |reason: &'static str| FormatError::BadTilePath {
        path: truncate_for_error(path),
        reason,
    };
    // Longest valid: "tile/entries/" + 7 groups + ".p/255".
    if path.len() > 64 {
        return Err(bad("too long"));
    }
    let rest = path
        .strip_prefix("tile/")
        .ok_or(bad("must start with tile/"))?;
    let (first, rest) = rest.split_once('/').ok_or(bad("missing tile index"))?;
    let level = if first == "entries" {
        None
    } else {
        Some(parse_decimal(first, 63).ok_or(bad("level must be 0..=63 without leading zeros"))?)
    };

    let (index_part, width) = match rest.split_once(".p/") {
        Some((idx, w)) => {
            let w = parse_decimal(w, 255)
                .filter(|&w| w >= 1)
                .ok_or(bad("partial width must be 1..=255 without leading zeros"))?;
            (idx, w as u16)
        }
        None => (rest, TILE_WIDTH),
    };

    let groups: Vec<&str> = index_part.split('/').collect();
    let mut index: u64 = 0;
    for (i, g) in groups.iter().enumerate() {
        let last = i + 1 == groups.len();
        let digits = if last {
            *g
        } else {
            g.strip_prefix('x')
                .ok_or(bad("index groups before the last need an x prefix"))?
        };
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("index groups must be exactly 3 digits"));
        }
        let v = u64::from(digits.parse::<u16>().map_err(|_| bad("bad index group"))?);
        if i == 0 && !last && v == 0 {
            return Err(bad("index has a leading zero group"));
        }
        index = index
            .checked_mul(1000)
            .and_then(|x| x.checked_add(v))
            .ok_or(bad("index overflows 64 bits"))?;
    }

    Ok(match level {
        Some(level) => ParsedPath::Tile(TileId {
            level: level as u8,
            index,
            width,
        }),
        None => ParsedPath::Bundle { index, width },
    })
}

/// Decimal without sign, leading zeros (other than "0" itself) or anything else, at most `max`.
fn parse_decimal(s: &str, max: u64) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse::<u64>().ok().filter(|&v| v <= max)
}

/// Every tile, full and partial, of a tree of `size` leaves, level by level, in index order.
///
/// At level `l` there are `floor(s/256^l) / 256` full tiles and, if `floor(s/256^l) mod 256` is
/// not zero, one partial tile of that width. The list has about `size/255` entries: meant for
/// small trees, tests and audits, not for enumerating a large log.
pub fn tiles_for_size(size: u64) -> Vec<TileId> {
    let mut out = Vec::new();
    let mut level: u8 = 0;
    loop {
        let count = hashes_at_level(size, level);
        if count == 0 {
            break;
        }
        let full = count / u64::from(TILE_WIDTH);
        out.extend((0..full).map(|i| TileId::full(level, i)));
        let w = (count % u64::from(TILE_WIDTH)) as u16;
        if w > 0 {
            out.push(TileId {
                level,
                index: full,
                width: w,
            });
        }
        level += 1;
    }
    out
}

/// The tiles to write when the tree grows from `old_size` to `new_size` leaves: at each level
/// whose hash count changed, every tile that became full and the new partial tile (if any).
/// Tiles already complete at `old_size` are not repeated; a partial tile that grew is listed at
/// its new width. Empty if `new_size <= old_size`.
///
/// The level-0 entries also say which entry bundles to write (same index and width).
pub fn new_tiles(old_size: u64, new_size: u64) -> Vec<TileId> {
    let mut out = Vec::new();
    if new_size <= old_size {
        return out;
    }
    let w = u64::from(TILE_WIDTH);
    let mut level: u8 = 0;
    loop {
        let new_n = hashes_at_level(new_size, level);
        if new_n == 0 {
            break;
        }
        let old_n = hashes_at_level(old_size, level);
        if old_n != new_n {
            out.extend((old_n / w..new_n / w).map(|i| TileId::full(level, i)));
            let partial = (new_n % w) as u16;
            if partial > 0 {
                out.push(TileId {
                    level,
                    index: new_n / w,
                    width: partial,
                });
            }
        }
        level += 1;
    }
    out
}

/// The partial tiles of a tree of `size` leaves, lowest level first: at each level `l` where
/// `floor(size/256^l) mod 256` is not zero, the tile of that width. At most one per level, so at
/// most 8 for any tree up to [`MAX_TREE_SIZE`] (unlike [`tiles_for_size`], cheap at any size).
pub fn partial_tiles(size: u64) -> Vec<TileId> {
    let w = u64::from(TILE_WIDTH);
    (0u8..)
        .map(|level| (level, hashes_at_level(size, level)))
        .take_while(|&(_, count)| count > 0)
        .filter(|&(_, count)| count % w != 0)
        .map(|(level, count)| TileId {
            level,
            index: count / w,
            width: (count % w) as u16,
        })
        .collect()
}

/// Number of hashes at tile level `level` (tree level 8·level) in a tree of `size` leaves.
fn hashes_at_level(size: u64, level: u8) -> u64 {
    let shift = 8 * u32::from(level);
    if shift >= 64 { 0 } else { size >> shift }
}

/// The bytes of `tile`: its `width` hashes, 32 bytes each, read from `r` (which must hold the
/// stored hashes of a tree containing the tile). Level 0 holds leaf hashes; level `l` holds
/// stored hashes of tree level `8·l`.
///
/// # Errors
///
/// [`ProofError::InvalidTile`] for an out-of-range tile; whatever `r` returns.
pub fn tile_data(tile: &TileId, r: &impl HashReader) -> Result<Vec<u8>, ProofError> {
    tile.check()?;
    let tree_level = TILE_HEIGHT * tile.level;
    let first = tile.index * u64::from(TILE_WIDTH);
    let indexes: Vec<u64> = (0..u64::from(tile.width))
        .map(|i| stored_hash_index(tree_level, first + i))
        .collect();
    let hashes = r.read_hashes(&indexes)?;
    if hashes.len() != indexes.len() {
        return Err(ProofError::ShortRead {
            wanted: indexes.len(),
            got: hashes.len(),
        });
    }
    let mut out = Vec::with_capacity(hashes.len() * 32);
    for h in &hashes {
        out.extend_from_slice(&h.0);
    }
    Ok(out)
}

/// A [`HashReader`] over the tiles of a tree of a given size, fetched by a function.
///
/// `fetch` receives each tile as it exists at `size` (full, or partial with the width the tree
/// implies) and returns its bytes; [`TileHashReader::read_hashes`] then takes stored hashes from
/// those bytes, hashing inside a tile for tree levels that are not a multiple of 8. Each tile is
/// fetched at most once per `read_hashes` call; caching across calls is the fetcher's business.
///
/// It authenticates nothing: the caller must compare what it computes (a root, or a proof's
/// verification) against a signed checkpoint of the same size.
pub struct TileHashReader<F> {
    size: u64,
    fetch: F,
}

impl<F> TileHashReader<F>
where
    F: Fn(&TileId) -> Result<Vec<u8>, ProofError>,
{
    /// A reader for the tree of `size` leaves.
    pub fn new(size: u64, fetch: F) -> Self {
        Self { size, fetch }
    }

    /// The tree size the tiles are read at.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl<F> HashReader for TileHashReader<F>
where
    F: Fn(&TileId) -> Result<Vec<u8>, ProofError>,
{
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ProofError> {
        let mut tiles: HashMap<TileId, Vec<u8>> = HashMap::new();
        let mut out = Vec::with_capacity(indexes.len());
        for &idx in indexes {
            let (tile, from, to) = self.place(idx)?;
            let data = match tiles.entry(tile) {
                Entry::Occupied(o) => o.into_mut(),
                Entry::Vacant(v) => {
                    let data = (self.fetch)(&tile)?;
                    let expected = 32 * usize::from(tile.width);
                    if data.len() != expected {
                        return Err(ProofError::BadTile {
                            path: tile.path(),
                            expected,
                            got: data.len(),
                        });
                    }
                    v.insert(data)
                }
            };
            out.push(subtree_root(&data[from..to]));
        }
        Ok(out)
    }
}

impl<F> TileHashReader<F> {
    /// The tiles `read_hashes(indexes)` fetches, each once, in the order it first needs them
    /// (so that a caller can fetch them all at once beforehand).
    pub fn tiles_for(&self, indexes: &[u64]) -> Result<Vec<TileId>, ProofError> {
        let mut out: Vec<TileId> = Vec::new();
        for &idx in indexes {
            let (tile, _, _) = self.place(idx)?;
            if !out.contains(&tile) {
                out.push(tile);
            }
        }
        Ok(out)
    }

    /// The tile holding the stored hash `idx` (or the hashes under it) and the byte range in
    /// the tile's data of the hashes it is the root of (2^k hashes, aligned to 2^k: see
    /// [`tile_levels`]).
    ///
    /// # Errors
    ///
    /// [`ProofError::MissingHash`] when the subtree is not complete in the tree of this size.
    pub fn place(&self, idx: u64) -> Result<(TileId, usize, usize), ProofError> {
        if self.size > MAX_TREE_SIZE || idx >= 2 * MAX_TREE_SIZE {
            return Err(ProofError::MissingHash(idx));
        }
        let (level, n) = split_stored_hash_index(idx);
        // The subtree must be complete in the tree of `size` leaves.
        let end = (n + 1).checked_mul(1u64 << level);
        if end.is_none_or(|e| e > self.size) {
            return Err(ProofError::MissingHash(idx));
        }
        let tile_level = level / TILE_HEIGHT;
        let k = level % TILE_HEIGHT;
        // The 2^k hashes of tile level `tile_level` under this subtree.
        let start = n << k;
        let count = 1u64 << k;
        let w = u64::from(TILE_WIDTH);
        let tile_index = start / w;
        let available = hashes_at_level(self.size, tile_level) - tile_index * w;
        let tile = TileId {
            level: tile_level,
            index: tile_index,
            width: available.min(w) as u16,
        };
        let from = ((start % w) * 32) as usize;
        Ok((tile, from, from + (count * 32) as usize))
    }
}

/// Bytes of a full tile: 256 hashes of 32 bytes.
const FULL_TILE_BYTES: usize = 32 * TILE_WIDTH as usize;

/// The right edge of a tree built leaf by leaf, kept as tile data: for each tile level, the
/// hashes of its one tile that is not complete yet. A streaming verifier feeds it every leaf
/// hash in order and compares each tile the moment it is complete, so it never holds the tree.
///
/// It holds at most 255 hashes per level between pushes, and 256 per level while a push
/// completes tiles up the levels: [`TileFrontier::peak_hashes`] reports the most it ever held,
/// at most 256 × the number of tile levels (2,048 for a 2^62-leaf tree, 64 KiB).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TileFrontier {
    size: u64,
    /// `levels[l]`: the hashes (32 bytes each) of the incomplete tile at level `l`.
    levels: Vec<Vec<u8>>,
    peak: usize,
}

impl TileFrontier {
    /// The empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Leaves pushed so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The most hashes held at once so far.
    pub fn peak_hashes(&self) -> usize {
        self.peak
    }

    /// Appends leaf hash `leaf`. Each tile the leaf completes (the level-0 tile, then the tile
    /// above it if that tile's root completes it, and so on) is handed to `full` with its 256
    /// hashes as tile bytes, lowest level first, before its root is folded into the level above.
    ///
    /// # Errors
    ///
    /// [`ProofError::TooLarge`] past [`MAX_TREE_SIZE`] leaves, or the first error `full`
    /// returns; after an error the frontier is no longer a valid tree and must be dropped.
    pub fn push<E: From<ProofError>>(
        &mut self,
        leaf: &Hash,
        mut full: impl FnMut(&TileId, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let n = self.size;
        if n >= MAX_TREE_SIZE {
            return Err(ProofError::TooLarge(n + 1).into());
        }
        let mut hash = *leaf;
        let mut level = 0usize;
        loop {
            if self.levels.len() == level {
                self.levels.push(Vec::with_capacity(FULL_TILE_BYTES));
            }
            self.levels[level].extend_from_slice(&hash.0);
            if self.levels[level].len() < FULL_TILE_BYTES {
                break;
            }
            let held: usize = self.levels.iter().map(|l| l.len() / 32).sum();
            self.peak = self.peak.max(held);
            // Leaf `n` is the last leaf of tile `n >> 8(level + 1)` at this level.
            let tile = TileId::full(level as u8, n >> (8 * (level + 1)));
            full(&tile, &self.levels[level])?;
            hash = subtree_root(&self.levels[level]);
            self.levels[level].clear();
            level += 1;
        }
        self.size = n + 1;
        let held: usize = self.levels.iter().map(|l| l.len() / 32).sum();
        self.peak = self.peak.max(held);
        Ok(())
    }

    /// The partial tiles of the tree so far with their bytes (the tiles [`partial_tiles`] names
    /// for [`TileFrontier::size`]), lowest level first.
    pub fn partial_tiles(&self) -> Vec<(TileId, &[u8])> {
        partial_tiles(self.size)
            .into_iter()
            .map(|t| (t, self.levels[usize::from(t.level)].as_slice()))
            .collect()
    }

    /// The root of the tree so far ([`crate::merkle::EMPTY_ROOT`] when empty): the partial
    /// tiles hold every complete subtree of the right edge, which is all the root needs.
    ///
    /// # Errors
    ///
    /// None in practice; the type is [`crate::merkle::tree_hash`]'s.
    pub fn root(&self) -> Result<Hash, ProofError> {
        let reader = TileHashReader::new(self.size, |t: &TileId| {
            self.levels
                .get(usize::from(t.level))
                .filter(|data| data.len() == 32 * usize::from(t.width))
                .cloned()
                .ok_or_else(|| ProofError::InvalidTile(format!("{t} is not on the right edge")))
        });
        crate::merkle::tree_hash(self.size, &reader)
    }
}

/// Root of 2^k consecutive hashes (a complete subtree inside one tile).
fn subtree_root(data: &[u8]) -> Hash {
    if data.len() == 32 {
        let mut h = [0u8; 32];
        h.copy_from_slice(data);
        return Hash(h);
    }
    let mid = data.len() / 2;
    node_hash(&subtree_root(&data[..mid]), &subtree_root(&data[mid..]))
}

/// Largest [`tile_levels`] of a tile: a full tile's 256 hashes and its 128 + 64 + … + 2 subtree
/// roots (510 hashes, 16,320 bytes).
pub const MAX_TILE_LEVELS_BYTES: usize = 32 * (2 * TILE_WIDTH as usize - 2);

/// Every subtree root inside a tile, from its data (`width` hashes of 32 bytes; checked by the
/// caller): the `width` hashes themselves, then for each `k` in 1..8 the `width >> k` roots of
/// its complete aligned runs of 2^k hashes, level after level (at most
/// [`MAX_TILE_LEVELS_BYTES`]). A proof needs one such root per tree level; computed once per
/// (immutable) tile, [`level_root`] then reads it instead of hashing up to 255 nodes per proof.
pub fn tile_levels(data: &[u8]) -> Vec<u8> {
    let width = data.len() / 32;
    let mut out = Vec::with_capacity(32 * (2 * width));
    out.extend_from_slice(&data[..32 * width]);
    let mut below = 0;
    let mut count = width;
    for _ in 1..TILE_HEIGHT {
        let pairs = count / 2;
        for j in 0..pairs {
            let at = below + 64 * j;
            let mut left = [0u8; 32];
            let mut right = [0u8; 32];
            left.copy_from_slice(&out[at..at + 32]);
            right.copy_from_slice(&out[at + 32..at + 64]);
            let h = node_hash(&Hash(left), &Hash(right));
            out.extend_from_slice(&h.0);
        }
        below += 32 * count;
        count = pairs;
    }
    out
}

/// The root of the tile data's bytes `from..to` (as [`TileHashReader::place`] gives them: 2^k
/// hashes starting at a multiple of 2^k, k < 8) out of the tile's [`tile_levels`] (`width`
/// hashes). `None` when the range is not such a run of that tile.
pub fn level_root(levels: &[u8], width: usize, from: usize, to: usize) -> Option<Hash> {
    let count = to.checked_sub(from)? / 32;
    if !count.is_power_of_two() || from % (32 * count) != 0 || to > 32 * width {
        return None;
    }
    let k = count.trailing_zeros();
    let below: usize = (0..k).map(|i| 32 * (width >> i)).sum();
    let at = below + 32 * ((from / 32) >> k);
    let mut h = [0u8; 32];
    h.copy_from_slice(levels.get(at..at + 32)?);
    Some(Hash(h))
}

/// Encodes an entry bundle: each entry prefixed by its length as a big-endian `u16`.
///
/// # Errors
///
/// [`FormatError::BundleEntryCount`] for 0 or more than 256 entries (empty tiles are never
/// served); [`FormatError::EntryTooLarge`] for an entry over [`MAX_ENTRY_BYTES`].
pub fn encode_bundle(entries: &[&[u8]]) -> Result<Vec<u8>, FormatError> {
    if entries.is_empty() || entries.len() > usize::from(TILE_WIDTH) {
        return Err(FormatError::BundleEntryCount(entries.len()));
    }
    let total: usize = entries.iter().map(|e| e.len() + 2).sum();
    let mut out = Vec::with_capacity(total);
    for (index, e) in entries.iter().enumerate() {
        let len = u16::try_from(e.len()).map_err(|_| FormatError::EntryTooLarge {
            index,
            len: e.len(),
        })?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(e);
    }
    Ok(out)
}

/// Decodes an entry bundle into its entries (borrowed from `bytes`).
///
/// # Errors
///
/// [`FormatError::BundleTruncated`] if the bytes end inside a length prefix or an entry (this
/// includes a single trailing byte); [`FormatError::BundleEntryCount`] for an empty bundle or
/// one with more than 256 entries.
pub fn decode_bundle(bytes: &[u8]) -> Result<Vec<&[u8]>, FormatError> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let index = out.len();
        if index == usize::from(TILE_WIDTH) {
            // Count the rest only to say how many there were; stop at the first malformed one.
            let mut n = index;
            let mut p = pos;
            while p + 2 <= bytes.len() {
                let len = usize::from(u16::from_be_bytes([bytes[p], bytes[p + 1]]));
                p += 2 + len;
                n += 1;
            }
            return Err(FormatError::BundleEntryCount(n));
        }
        if pos + 2 > bytes.len() {
            return Err(FormatError::BundleTruncated { index, offset: pos });
        }
        let len = usize::from(u16::from_be_bytes([bytes[pos], bytes[pos + 1]]));
        let body = pos + 2;
        if body + len > bytes.len() {
            return Err(FormatError::BundleTruncated {
                index,
                offset: bytes.len(),
            });
        }
        out.push(&bytes[body..body + len]);
        pos = body + len;
    }
    if out.is_empty() {
        return Err(FormatError::BundleEntryCount(0));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_levels_hold_every_subtree_root_of_every_width() {
        let hashes: Vec<u8> = (0..256u32)
            .flat_map(|i| crate::merkle::leaf_hash(&i.to_be_bytes()).0)
            .collect();
        for width in 1..=256usize {
            let data = &hashes[..32 * width];
            let levels = tile_levels(data);
            assert!(levels.len() <= MAX_TILE_LEVELS_BYTES);
            for k in 0..u32::from(TILE_HEIGHT) {
                let run = 32usize << k;
                for j in 0..width >> k {
                    let (from, to) = (j * run, (j + 1) * run);
                    assert_eq!(
                        level_root(&levels, width, from, to),
                        Some(subtree_root(&data[from..to])),
                        "width {width}, k {k}, run {j}"
                    );
                }
                // A run past the tile's hashes, or not aligned, or not 2^k long, has none.
                let past = (width >> k) * run;
                assert_eq!(level_root(&levels, width, past, past + run), None);
            }
            if width >= 4 {
                assert_eq!(level_root(&levels, width, 32, 96), None);
                assert_eq!(level_root(&levels, width, 0, 96), None);
            }
        }
        assert_eq!(tile_levels(&hashes).len(), MAX_TILE_LEVELS_BYTES);
    }

    #[test]
    fn index_encoding() {
        assert_eq!(encode_index(0), "000");
        assert_eq!(encode_index(999), "999");
        assert_eq!(encode_index(1000), "x001/000");
        assert_eq!(encode_index(1234067), "x001/x234/067");
        assert_eq!(encode_index(u64::MAX), "x018/x446/x744/x073/x709/x551/615");
    }

    #[test]
    fn parse_round_trips_and_rejects() {
        for t in [
            TileId::full(0, 0),
            TileId::full(63, u64::MAX),
            TileId {
                level: 2,
                index: 1234067,
                width: 255,
            },
            TileId {
                level: 10,
                index: 1000,
                width: 1,
            },
        ] {
            assert_eq!(parse_tile_path(&t.path()).unwrap(), ParsedPath::Tile(t));
        }
        assert_eq!(
            parse_tile_path(&bundle_path(1234067, 7)).unwrap(),
            ParsedPath::Bundle {
                index: 1234067,
                width: 7
            }
        );
        for bad in [
            "",
            "/tile/0/000",
            "tile/0",
            "tile/0/",
            "tile/00/000",
            "tile/01/000",
            "tile/64/000",
            "tile/-1/000",
            "tile/+1/000",
            "tile/0/00",
            "tile/0/0000",
            "tile/0/x000/000",
            "tile/0/001/000",
            "tile/0/x001",
            "tile/0/x001/x000",
            "tile/0/000.p/0",
            "tile/0/000.p/256",
            "tile/0/000.p/01",
            "tile/0/000.p/",
            "tile/0/000.p",
            "tile/0/000.p/5/",
            "tile/0/000/",
            "tile/data/000",
            "tile/8/0/000",
            "tile/entries/x000/x001/000.p/1",
            "tile/entries/000.p/256",
            "tile/0/x018/x446/x744/x073/x709/x551/616",
            "tile/0/x1000/000",
            "tile/0/x01a/000",
        ] {
            assert!(parse_tile_path(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn tiles_for_small_sizes() {
        assert!(tiles_for_size(0).is_empty());
        assert_eq!(
            tiles_for_size(1),
            vec![TileId {
                level: 0,
                index: 0,
                width: 1
            }]
        );
        assert_eq!(new_tiles(5, 5), vec![]);
        assert_eq!(new_tiles(6, 5), vec![]);
        assert_eq!(
            new_tiles(255, 257),
            vec![
                TileId::full(0, 0),
                TileId {
                    level: 0,
                    index: 1,
                    width: 1
                },
                TileId {
                    level: 1,
                    index: 0,
                    width: 1
                },
            ]
        );
    }

    #[test]
    fn partial_tiles_are_the_partials_of_tiles_for_size() {
        for size in [
            0u64, 1, 255, 256, 257, 65_535, 65_536, 65_537, 16_777_217, 70_000,
        ] {
            let want: Vec<TileId> = tiles_for_size(size)
                .into_iter()
                .filter(|t| !t.is_full())
                .collect();
            assert_eq!(partial_tiles(size), want, "size {size}");
        }
        assert_eq!(partial_tiles(MAX_TREE_SIZE).len(), 1);
    }

    /// Every tile the frontier completes, every partial tile and every root it gives equal what
    /// the whole tree in memory gives, at and around every tile edge up to two levels.
    #[test]
    fn frontier_matches_the_whole_tree() {
        use crate::merkle::{MemoryHashes, leaf_hash};
        let checkpoints = [1u64, 2, 255, 256, 257, 511, 512, 65_535, 65_536, 65_537];
        let last = *checkpoints.last().unwrap();
        let mut tree = MemoryHashes::new();
        let mut frontier = TileFrontier::new();
        let mut completed: Vec<(TileId, Vec<u8>)> = Vec::new();
        for i in 0..last {
            let leaf = leaf_hash(&i.to_be_bytes());
            tree.append(leaf).unwrap();
            frontier
                .push(&leaf, |t, data| {
                    completed.push((*t, data.to_vec()));
                    Ok::<(), ProofError>(())
                })
                .unwrap();
            let size = i + 1;
            if checkpoints.contains(&size) {
                assert_eq!(frontier.root().unwrap(), tree.root(), "root at {size}");
                let full: Vec<TileId> = completed.iter().map(|(t, _)| *t).collect();
                let want_full: Vec<TileId> = tiles_for_size(size)
                    .into_iter()
                    .filter(TileId::is_full)
                    .collect();
                let mut sorted = full.clone();
                sorted.sort();
                assert_eq!(sorted, want_full, "full tiles at {size}");
                for (t, data) in frontier.partial_tiles() {
                    assert_eq!(data, tile_data(&t, &tree).unwrap(), "{t} at {size}");
                }
                assert_eq!(
                    frontier
                        .partial_tiles()
                        .iter()
                        .map(|(t, _)| *t)
                        .collect::<Vec<_>>(),
                    partial_tiles(size)
                );
            }
        }
        for (t, data) in &completed {
            assert_eq!(*data, tile_data(t, &tree).unwrap(), "{t}");
        }
        // Levels 0, 1 and 2 are in use at 65,537 leaves: never more than 256 hashes per level.
        assert!(
            frontier.peak_hashes() <= 3 * 256,
            "{}",
            frontier.peak_hashes()
        );
        assert_eq!(
            TileFrontier::new().root().unwrap(),
            crate::merkle::EMPTY_ROOT
        );
    }

    #[test]
    fn new_tiles_cover_growth() {
        // Applying new_tiles over a sequence of sizes must yield exactly tiles_for_size at the
        // end, if later writes of the same (level, index) replace earlier ones.
        let sizes = [
            0u64, 1, 255, 256, 300, 65_535, 65_536, 65_537, 70_000, 70_001,
        ];
        let mut have: HashMap<(u8, u64), u16> = HashMap::new();
        for pair in sizes.windows(2) {
            for t in new_tiles(pair[0], pair[1]) {
                let prev = have.insert((t.level, t.index), t.width);
                assert!(prev.is_none_or(|w| w < t.width), "{t} rewritten or shrunk");
            }
            let mut want: Vec<TileId> = tiles_for_size(pair[1]);
            let mut got: Vec<TileId> = have
                .iter()
                .map(|(&(level, index), &width)| TileId {
                    level,
                    index,
                    width,
                })
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "after growing to {}", pair[1]);
        }
    }
}
