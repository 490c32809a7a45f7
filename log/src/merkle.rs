//! RFC 6962 Merkle hashing over a dense, append-only array of stored hashes.
//!
//! This module holds the tree math of the log:
//!
//! * [`Hash`](struct@Hash), [`leaf_hash`], [`node_hash`] and [`EMPTY_ROOT`] (RFC 6962 §2.1, SHA-256);
//! * the stored-hash numbering of Go's `golang.org/x/mod/sumdb/tlog` ([`stored_hash_index`],
//!   [`split_stored_hash_index`], [`stored_hash_count`]): every complete subtree's hash gets one
//!   slot in an append-only array, so a log stores each hash once and never rewrites one;
//! * [`stored_hashes_for_leaf`]: what to append to that array when a leaf is sequenced;
//! * [`tree_hash`], [`inclusion_proof`] and [`consistency_proof`], computed from stored hashes
//!   fetched through a [`HashReader`], and their verifiers [`verify_inclusion`] and
//!   [`verify_consistency`]. Proofs are RFC 6962 audit paths (leaf's sibling first, root's child
//!   last): the same bytes Go's `tlog.ProveRecord`/`ProveTree` and the `ct-merkle` crate give;
//! * [`MemoryHashes`], an in-memory hash store for tests and small logs.
//!
//! The arithmetic is delegated to the `tlog_tiles` crate (a port of Go's `tlog`), pinned exactly
//! and kept out of this module's public API: its types never appear here, and the calls into it
//! are guarded so that a misbehaving [`HashReader`] yields an error, never one of its panics.
//!
//! It does no I/O: storage is whatever the caller's [`HashReader`] reads. It knows nothing about
//! tiles and their paths ([`crate::tiles`]), signed checkpoints ([`crate::note`]) or proof bundles
//! ([`crate::proof`]). [`FormatError`], the error of every parser in those modules, lives here
//! because the base64 hash parser needs it too.

use std::cell::RefCell;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use thiserror::Error;

/// The largest tree size (number of leaves) the proof and storage functions accept: 2^62.
///
/// Stored-hash indexes are about twice the leaf count, so this keeps every index arithmetic in
/// `u64` without overflow. Verifiers ([`verify_inclusion`], [`verify_consistency`]) accept any
/// `u64` size, since they never index storage.
pub const MAX_TREE_SIZE: u64 = 1 << 62;

/// The longest inclusion proof any tree of up to 2^64 leaves has: one hash per level.
pub const MAX_INCLUSION_PROOF_LEN: usize = 64;

/// A bound on consistency proof length (the real maximum is about `2·log2(size)`; anything
/// longer is rejected before any hashing).
pub const MAX_CONSISTENCY_PROOF_LEN: usize = 128;

/// A SHA-256 hash: a leaf hash, an interior node hash or a tree root.
///
/// `Debug` and `Display` show standard base64 (the form checkpoints and proofs use).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// Standard base64 with padding (44 characters), as in checkpoints and proof lines.
    pub fn to_base64(&self) -> String {
        BASE64.encode(self.0)
    }

    /// Parses exactly what [`Hash::to_base64`] produces: 44 characters of canonical standard
    /// base64 decoding to 32 bytes.
    ///
    /// # Errors
    ///
    /// [`FormatError::BadHash`] for any other input (wrong length, bad alphabet, non-canonical
    /// padding bits, surrounding whitespace).
    pub fn from_base64(s: &str) -> Result<Hash, FormatError> {
        let bad = || FormatError::BadHash(truncate_for_error(s));
        if s.len() != 44 {
            return Err(bad());
        }
        let bytes = BASE64.decode(s).map_err(|_| bad())?;
        let arr: [u8; 32] = bytes.try_into().map_err(|_| bad())?;
        let h = Hash(arr);
        // The decoder already rejects non-zero padding bits; re-encoding makes canonicality a
        // property of this function rather than of a decoder setting.
        if h.to_base64() != s {
            return Err(bad());
        }
        Ok(h)
    }

    /// Lower-case hex (64 characters), for logs and test vectors.
    pub fn to_hex(&self) -> String {
        toolmark_toolset::hex::encode(&self.0)
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", self.to_base64())
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base64())
    }
}

/// The root of the empty tree: SHA-256 of the empty string
/// (`47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=`).
pub const EMPTY_ROOT: Hash = Hash([
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
]);

/// The RFC 6962 leaf hash of an entry: SHA-256(0x00 ‖ entry).
pub fn leaf_hash(entry: &[u8]) -> Hash {
    from_t(tlog_tiles::record_hash(entry))
}

/// The RFC 6962 interior node hash: SHA-256(0x01 ‖ left ‖ right).
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    from_t(tlog_tiles::node_hash(to_t(left), to_t(right)))
}

/// Errors of the Merkle, storage and tile-reading functions, and of proof verification.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ProofError {
    /// A leaf index that is not in the tree.
    #[error("index {index} is not in a tree of size {size}")]
    IndexOutOfRange {
        /// The leaf index asked for.
        index: u64,
        /// The tree size.
        size: u64,
    },
    /// A consistency proof between sizes in the wrong order.
    #[error("old size {old} is larger than new size {new}")]
    SizeOrder {
        /// The old tree size.
        old: u64,
        /// The new tree size.
        new: u64,
    },
    /// A tree size beyond [`MAX_TREE_SIZE`] given to a function that reads storage.
    #[error("tree size {0} is beyond the supported maximum of 2^62 leaves")]
    TooLarge(u64),
    /// A proof longer than any valid proof can be; rejected before hashing.
    #[error("proof has {0} hashes, more than any valid proof of this kind")]
    ProofTooLong(usize),
    /// The proof does not lead from the given leaf or old root to the given root.
    #[error("proof does not verify against the given root")]
    InvalidProof,
    /// A [`HashReader`] was asked for a stored hash it does not have.
    #[error("stored hash {0} is not available")]
    MissingHash(u64),
    /// A [`HashReader`] returned the wrong number of hashes.
    #[error("hash reader returned {got} hashes for {wanted} indexes")]
    ShortRead {
        /// How many were asked for.
        wanted: usize,
        /// How many came back.
        got: usize,
    },
    /// A tile id outside the valid ranges (width 1..=256, positions within [`MAX_TREE_SIZE`]).
    #[error("invalid tile: {0}")]
    InvalidTile(String),
    /// Tile bytes of the wrong length for the tile asked for.
    #[error("tile {path}: expected {expected} bytes, got {got}")]
    BadTile {
        /// The tile's C2SP path.
        path: String,
        /// 32 × width.
        expected: usize,
        /// What the fetcher returned.
        got: usize,
    },
    /// A storage backend or tile fetcher failed; the cause is kept as the error source.
    #[error("storage: {0}")]
    Storage(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl ProofError {
    /// Wraps a backend error (I/O, SQLite, HTTP) as [`ProofError::Storage`].
    pub fn storage(e: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        ProofError::Storage(e.into())
    }
}

/// Errors of every parser and encoder of wire formats in this crate: hashes, tile paths, entry
/// bundles, checkpoints, signed notes, keys and `tlog-proof` bundles.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FormatError {
    /// Not 44 characters of canonical base64 encoding 32 bytes.
    #[error("not a base64 SHA-256 hash: {0:?}")]
    BadHash(String),
    /// A path that is not a C2SP tile or entry-bundle path.
    #[error("bad tile path {path:?}: {reason}")]
    BadTilePath {
        /// The path (truncated if long).
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An entry longer than the uint16 length prefix of an entry bundle can carry.
    #[error("entry {index} is {len} bytes; entry bundles carry at most 65535")]
    EntryTooLarge {
        /// Position of the entry in the bundle.
        index: usize,
        /// Its length.
        len: usize,
    },
    /// A bundle with no entries, or more than 256.
    #[error("entry bundle has {0} entries; a bundle holds 1 to 256")]
    BundleEntryCount(usize),
    /// A bundle that ends inside a length prefix or inside an entry.
    #[error("entry bundle truncated in entry {index} at byte {offset}")]
    BundleTruncated {
        /// The entry being read.
        index: usize,
        /// Byte offset where the data ran out.
        offset: usize,
    },
    /// A checkpoint text that breaks c2sp.org/tlog-checkpoint.
    #[error("bad checkpoint: {0}")]
    BadCheckpoint(String),
    /// A note that breaks c2sp.org/signed-note's format.
    #[error("malformed note: {0}")]
    MalformedNote(String),
    /// A verifier or signer key string that cannot be used.
    #[error("bad key: {0}")]
    BadKey(String),
    /// A signature by the known key that does not verify; the whole note is rejected.
    #[error("signature by {name}+{id:08x} does not verify")]
    BadSignature {
        /// Key name on the signature line.
        name: String,
        /// Key ID on the signature line.
        id: u32,
    },
    /// No signature line is by the known key.
    #[error("note has no signature by {0}")]
    NotSigned(String),
    /// A checkpoint whose origin is not the signing key's name.
    #[error("checkpoint origin {origin:?} is not the key name {key:?}")]
    OriginMismatch {
        /// The checkpoint's origin line.
        origin: String,
        /// The verifier key's name.
        key: String,
    },
    /// A `c2sp.org/tlog-proof@v1` bundle that breaks the format.
    #[error("bad tlog-proof (line {line}): {reason}")]
    BadTlogProof {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A well-formed proof bundle whose inclusion proof does not verify.
    #[error("inclusion proof: {0}")]
    Proof(#[from] ProofError),
}

pub(crate) fn truncate_for_error(s: &str) -> String {
    const MAX: usize = 80;
    if s.len() <= MAX {
        return s.to_owned();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Reads stored hashes by their stored-hash index (see [`stored_hash_index`]).
///
/// Implementations must return exactly one hash per requested index, in the requested order, or
/// an error ([`ProofError::MissingHash`] for an index they do not hold, [`ProofError::Storage`]
/// for backend failures). Callers in this crate ask for sorted indexes, which lets a file-backed
/// reader seek forward only.
pub trait HashReader {
    /// Returns the hashes stored at `indexes`, in the same order.
    ///
    /// # Errors
    ///
    /// Any [`ProofError`]; the functions of this module pass it through unchanged.
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ProofError>;
}

impl<T: HashReader + ?Sized> HashReader for &T {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ProofError> {
        (**self).read_hashes(indexes)
    }
}

/// Where the hash of the `n`-th complete subtree of height `level` (covering leaves
/// `[n·2^level, (n+1)·2^level)`) lives in the append-only stored-hash array. Same numbering as
/// Go's `tlog.StoredHashIndex` (Crosby–Wallach §3.3): leaf `n`'s hash is followed by the hashes
/// of the subtrees that leaf completes, lowest first.
///
/// # Panics
///
/// If `level > 63` or the subtree ends beyond [`MAX_TREE_SIZE`] leaves (the index would not fit
/// the arithmetic); the functions of this crate never ask for such an index.
pub fn stored_hash_index(level: u8, n: u64) -> u64 {
    assert!(
        subtree_end(level, n).is_some_and(|end| end <= MAX_TREE_SIZE),
        "stored_hash_index: subtree ({level}, {n}) lies beyond 2^62 leaves"
    );
    tlog_tiles::stored_hash_index(level, n)
}

/// The inverse of [`stored_hash_index`]: `(level, n)` for a stored-hash index.
///
/// # Panics
///
/// If `index` is beyond the stored hashes of a [`MAX_TREE_SIZE`] tree.
pub fn split_stored_hash_index(index: u64) -> (u8, u64) {
    assert!(
        index < 2 * MAX_TREE_SIZE,
        "split_stored_hash_index: index {index} is beyond a 2^62-leaf tree"
    );
    tlog_tiles::split_stored_hash_index(index)
}

/// How many stored hashes a tree of `size` leaves has (Go's `tlog.StoredHashCount`).
///
/// # Panics
///
/// If `size > MAX_TREE_SIZE`.
pub fn stored_hash_count(size: u64) -> u64 {
    assert!(
        size <= MAX_TREE_SIZE,
        "stored_hash_count: size {size} is beyond 2^62"
    );
    tlog_tiles::stored_hash_count(size)
}

fn subtree_end(level: u8, n: u64) -> Option<u64> {
    if level > 63 {
        return None;
    }
    n.checked_add(1)?.checked_mul(1u64 << level)
}

/// The hashes to append to storage when appending leaf number `n` (0-based) with leaf hash
/// `leaf`, in stored-index order starting at `stored_hash_index(0, n)`: the leaf hash, then one
/// hash per complete subtree the leaf closes. Reads up to `log2(n)` earlier hashes from `r`.
///
/// `r` must hold the stored hashes of the tree of size `n` (that is, `stored_hash_count(n)`
/// hashes).
///
/// # Errors
///
/// [`ProofError::TooLarge`] if `n >= MAX_TREE_SIZE`; whatever `r` returns.
pub fn stored_hashes_for_leaf(
    n: u64,
    leaf: Hash,
    r: &impl HashReader,
) -> Result<Vec<Hash>, ProofError> {
    if n >= MAX_TREE_SIZE {
        return Err(ProofError::TooLarge(n + 1));
    }
    let a = Adapter::new(r);
    let out = tlog_tiles::stored_hashes_for_record_hash(n, to_t(&leaf), &a);
    a.finish(out).map(from_t_vec)
}

/// The root hash of the tree of the first `size` leaves ([`EMPTY_ROOT`] for 0), from at most
/// `1 + log2(size)` stored hashes read in one call.
///
/// # Errors
///
/// [`ProofError::TooLarge`]; whatever `r` returns.
pub fn tree_hash(size: u64, r: &impl HashReader) -> Result<Hash, ProofError> {
    check_size(size)?;
    if size == 0 {
        return Ok(EMPTY_ROOT);
    }
    let a = Adapter::new(r);
    let out = tlog_tiles::tree_hash(size, &a);
    a.finish(out).map(from_t)
}

/// The RFC 6962 inclusion proof (audit path) of leaf `index` in the tree of size `size`: the
/// leaf's sibling first, the root's child last. Empty for a one-leaf tree.
///
/// # Errors
///
/// [`ProofError::IndexOutOfRange`] if `index >= size`; [`ProofError::TooLarge`]; whatever `r`
/// returns.
pub fn inclusion_proof(
    index: u64,
    size: u64,
    r: &impl HashReader,
) -> Result<Vec<Hash>, ProofError> {
    check_size(size)?;
    if index >= size {
        return Err(ProofError::IndexOutOfRange { index, size });
    }
    let a = Adapter::new(r);
    let out = tlog_tiles::prove_record(size, index, &a);
    a.finish(out).map(from_t_vec)
}

/// The RFC 6962 consistency proof that the tree of size `old` is a prefix of the tree of size
/// `new`. Empty when `old == 0` or `old == new` (nothing to prove beyond comparing roots).
///
/// # Errors
///
/// [`ProofError::SizeOrder`] if `old > new`; [`ProofError::TooLarge`]; whatever `r` returns.
pub fn consistency_proof(old: u64, new: u64, r: &impl HashReader) -> Result<Vec<Hash>, ProofError> {
    check_size(new)?;
    if old > new {
        return Err(ProofError::SizeOrder { old, new });
    }
    if old == 0 || old == new {
        return Ok(Vec::new());
    }
    let a = Adapter::new(r);
    let out = tlog_tiles::prove_tree(new, old, &a);
    a.finish(out).map(from_t_vec)
}

/// Checks that `proof` shows the leaf with hash `leaf` at position `index` in the tree of size
/// `size` whose root is `root`.
///
/// # Errors
///
/// [`ProofError::IndexOutOfRange`] if `index >= size`; [`ProofError::ProofTooLong`];
/// [`ProofError::InvalidProof`] if the proof has the wrong length for `(index, size)` or does
/// not hash to `root`.
pub fn verify_inclusion(
    proof: &[Hash],
    size: u64,
    root: &Hash,
    index: u64,
    leaf: &Hash,
) -> Result<(), ProofError> {
    if index >= size {
        return Err(ProofError::IndexOutOfRange { index, size });
    }
    if proof.len() > MAX_INCLUSION_PROOF_LEN {
        return Err(ProofError::ProofTooLong(proof.len()));
    }
    let p = to_t_vec(proof);
    tlog_tiles::check_record(&p, size, to_t(root), index, to_t(leaf))
        .map_err(|_| ProofError::InvalidProof)
}

/// Checks that `proof` shows the tree of size `old_size` with root `old_root` to be a prefix of
/// the tree of size `new_size` with root `new_root`.
///
/// With `old_size == 0` the proof must be empty and `old_root` must be [`EMPTY_ROOT`] (the empty
/// tree is a prefix of every tree; `c2sp.org/tlog-witness` treats size 0 the same way). With
/// `old_size == new_size` the proof must be empty and the roots equal.
///
/// # Errors
///
/// [`ProofError::SizeOrder`] if `old_size > new_size`; [`ProofError::ProofTooLong`];
/// [`ProofError::InvalidProof`] otherwise when the proof does not verify.
pub fn verify_consistency(
    proof: &[Hash],
    new_size: u64,
    new_root: &Hash,
    old_size: u64,
    old_root: &Hash,
) -> Result<(), ProofError> {
    if old_size > new_size {
        return Err(ProofError::SizeOrder {
            old: old_size,
            new: new_size,
        });
    }
    if proof.len() > MAX_CONSISTENCY_PROOF_LEN {
        return Err(ProofError::ProofTooLong(proof.len()));
    }
    if old_size == 0 {
        return if proof.is_empty() && *old_root == EMPTY_ROOT {
            Ok(())
        } else {
            Err(ProofError::InvalidProof)
        };
    }
    let p = to_t_vec(proof);
    tlog_tiles::check_tree(&p, new_size, to_t(new_root), old_size, to_t(old_root))
        .map_err(|_| ProofError::InvalidProof)
}

/// The stored hashes of a tree, kept in memory; a [`HashReader`] that can also append leaves.
///
/// For tests and small logs: 100,000 leaves take about 6.4 MB.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryHashes {
    hashes: Vec<Hash>,
    size: u64,
}

impl MemoryHashes {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuilds a store from the stored hashes of a tree of `size` leaves (for instance, read
    /// back from a file), checking only their count.
    ///
    /// # Errors
    ///
    /// [`ProofError::TooLarge`]; [`ProofError::ShortRead`] if `hashes.len()` is not
    /// `stored_hash_count(size)`.
    pub fn from_stored(size: u64, hashes: Vec<Hash>) -> Result<Self, ProofError> {
        check_size(size)?;
        let wanted = stored_hash_count(size);
        if hashes.len() as u64 != wanted {
            return Err(ProofError::ShortRead {
                wanted: usize::try_from(wanted).unwrap_or(usize::MAX),
                got: hashes.len(),
            });
        }
        Ok(Self { hashes, size })
    }

    /// Appends a leaf by its leaf hash; returns the leaf's index.
    ///
    /// # Errors
    ///
    /// [`ProofError::TooLarge`] once the tree holds [`MAX_TREE_SIZE`] leaves.
    pub fn append(&mut self, leaf: Hash) -> Result<u64, ProofError> {
        let n = self.size;
        let new = stored_hashes_for_leaf(n, leaf, self)?;
        self.hashes.extend(new);
        self.size += 1;
        Ok(n)
    }

    /// Appends an entry (hashed with [`leaf_hash`]); returns the leaf's index.
    ///
    /// # Errors
    ///
    /// As [`MemoryHashes::append`].
    pub fn append_entry(&mut self, entry: &[u8]) -> Result<u64, ProofError> {
        self.append(leaf_hash(entry))
    }

    /// Number of leaves.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The stored hashes, in stored-index order.
    pub fn stored(&self) -> &[Hash] {
        &self.hashes
    }

    /// The current root.
    pub fn root(&self) -> Hash {
        tree_hash(self.size, self).expect("a MemoryHashes holds every hash of its own tree")
    }
}

impl HashReader for MemoryHashes {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ProofError> {
        indexes
            .iter()
            .map(|&i| {
                usize::try_from(i)
                    .ok()
                    .and_then(|u| self.hashes.get(u))
                    .copied()
                    .ok_or(ProofError::MissingHash(i))
            })
            .collect()
    }
}

fn check_size(size: u64) -> Result<(), ProofError> {
    if size > MAX_TREE_SIZE {
        Err(ProofError::TooLarge(size))
    } else {
        Ok(())
    }
}

fn to_t(h: &Hash) -> tlog_tiles::Hash {
    tlog_tiles::Hash(h.0)
}

fn from_t(h: tlog_tiles::Hash) -> Hash {
    Hash(h.0)
}

fn to_t_vec(v: &[Hash]) -> Vec<tlog_tiles::Hash> {
    v.iter().map(to_t).collect()
}

fn from_t_vec(v: Vec<tlog_tiles::Hash>) -> Vec<Hash> {
    v.into_iter().map(from_t).collect()
}

/// Presents one of our [`HashReader`]s to `tlog_tiles`, keeping our error (which `tlog_tiles`
/// cannot carry) and turning a wrong-length read into an error before `tlog_tiles` would assert.
struct Adapter<'a, R: ?Sized> {
    inner: &'a R,
    error: RefCell<Option<ProofError>>,
}

impl<'a, R: HashReader + ?Sized> Adapter<'a, R> {
    fn new(inner: &'a R) -> Self {
        Self {
            inner,
            error: RefCell::new(None),
        }
    }

    fn finish<T>(self, out: Result<T, tlog_tiles::Error>) -> Result<T, ProofError> {
        if let Some(e) = self.error.into_inner() {
            return Err(e);
        }
        // Inputs are validated before every call, so tlog_tiles has nothing of its own to
        // reject; map defensively all the same.
        out.map_err(|e| ProofError::InvalidTile(format!("tlog_tiles: {e}")))
    }
}

impl<R: HashReader + ?Sized> tlog_tiles::HashReader for Adapter<'_, R> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        let fail = |e: ProofError| {
            *self.error.borrow_mut() = Some(e);
            tlog_tiles::Error::IndexesNotInTree
        };
        match self.inner.read_hashes(indexes) {
            Ok(v) if v.len() == indexes.len() => Ok(to_t_vec(&v)),
            Ok(v) => Err(fail(ProofError::ShortRead {
                wanted: indexes.len(),
                got: v.len(),
            })),
            Err(e) => Err(fail(e)),
        }
    }
}

/// The right edge of a tree as its perfect subtrees' roots (a compact range from leaf 0): what
/// a follower of the log keeps to check that the entries it reads extend the tree it verified,
/// with O(log n) hashes and no tile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactRange {
    size: u64,
    /// One root per set bit of `size`, the largest subtree first.
    peaks: Vec<Hash>,
}

impl CompactRange {
    /// The empty tree.
    pub fn new() -> Self {
        CompactRange::default()
    }

    /// Leaves so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends the leaf whose hash is `leaf`.
    pub fn append(&mut self, leaf: Hash) {
        let mut hash = leaf;
        let mut size = self.size;
        // Each trailing 1 bit of the old size is a subtree of the new leaf's height: merge.
        while size & 1 == 1 {
            if let Some(left) = self.peaks.pop() {
                hash = node_hash(&left, &hash);
            }
            size >>= 1;
        }
        self.peaks.push(hash);
        self.size += 1;
    }

    /// Appends an entry (its leaf hash).
    pub fn append_entry(&mut self, entry: &[u8]) {
        self.append(leaf_hash(entry));
    }

    /// The root of the tree so far ([`EMPTY_ROOT`] when empty).
    pub fn root(&self) -> Hash {
        let mut peaks = self.peaks.iter().rev();
        let Some(last) = peaks.next() else {
            return EMPTY_ROOT;
        };
        peaks.fold(*last, |right, left| node_hash(left, &right))
    }

    /// `size` then each root in base64, space-separated (kept by a follower between runs).
    pub fn to_text(&self) -> String {
        let mut text = self.size.to_string();
        for p in &self.peaks {
            text.push(' ');
            text.push_str(&p.to_base64());
        }
        text
    }

    /// Reads [`CompactRange::to_text`]'s form back: as many roots as `size` has set bits.
    ///
    /// # Errors
    ///
    /// [`FormatError`] for any other text.
    pub fn parse(text: &str) -> Result<CompactRange, FormatError> {
        let bad = || {
            FormatError::BadHash(format!(
                "{text:?} is not a compact range (SIZE, then one base64 root per set bit)"
            ))
        };
        let mut parts = text.split(' ');
        let size: u64 = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let peaks = parts
            .map(Hash::from_base64)
            .collect::<Result<Vec<_>, _>>()?;
        if peaks.len() != size.count_ones() as usize || size > MAX_TREE_SIZE {
            return Err(bad());
        }
        Ok(CompactRange { size, peaks })
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_compact_range_has_the_root_of_the_whole_tree_at_every_size() {
        let mut all = MemoryHashes::new();
        let mut range = CompactRange::new();
        assert_eq!(range.root(), EMPTY_ROOT);
        for i in 0..1100u32 {
            let entry = i.to_be_bytes();
            all.append_entry(&entry).unwrap();
            range.append_entry(&entry);
            assert_eq!(range.root(), all.root(), "size {}", i + 1);
            assert_eq!(range.size(), all.size());
        }
    }

    #[test]
    fn a_compact_range_reads_back_from_its_text_and_refuses_a_wrong_count() {
        let mut range = CompactRange::new();
        for i in 0..13u8 {
            range.append_entry(&[i]);
        }
        assert_eq!(CompactRange::parse(&range.to_text()).unwrap(), range);
        assert_eq!(CompactRange::parse("0").unwrap(), CompactRange::new());
        let mut text = range.to_text();
        text.push_str(&format!(" {}", EMPTY_ROOT.to_base64()));
        assert!(CompactRange::parse(&text).is_err());
        assert!(CompactRange::parse("x").is_err());
    }
    use super::*;

    #[test]
    fn empty_root_is_sha256_of_nothing() {
        assert_eq!(
            EMPTY_ROOT.to_base64(),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
        assert_eq!(tree_hash(0, &MemoryHashes::new()).unwrap(), EMPTY_ROOT);
    }

    #[test]
    fn base64_is_strict() {
        let s = EMPTY_ROOT.to_base64();
        assert_eq!(Hash::from_base64(&s).unwrap(), EMPTY_ROOT);
        for bad in [
            "",
            " 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU",
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFV=", // non-zero padding bits
            "47DEQpj8HBSa-_TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", // URL alphabet
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuA==", // 31 bytes
        ] {
            assert!(Hash::from_base64(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_reader_is_an_error_not_a_panic() {
        struct Short;
        impl HashReader for Short {
            fn read_hashes(&self, _: &[u64]) -> Result<Vec<Hash>, ProofError> {
                Ok(vec![])
            }
        }
        assert!(matches!(
            tree_hash(5, &Short),
            Err(ProofError::ShortRead { .. })
        ));
        assert!(matches!(
            inclusion_proof(1, 5, &Short),
            Err(ProofError::ShortRead { .. })
        ));
        assert!(matches!(
            consistency_proof(3, 5, &Short),
            Err(ProofError::ShortRead { .. })
        ));
        assert!(matches!(
            stored_hashes_for_leaf(3, EMPTY_ROOT, &Short),
            Err(ProofError::ShortRead { .. })
        ));
        assert!(matches!(
            tree_hash(5, &MemoryHashes::new()),
            Err(ProofError::MissingHash(_))
        ));
    }

    #[test]
    fn index_math_matches_counts() {
        let mut m = MemoryHashes::new();
        for i in 0..300u64 {
            assert_eq!(m.stored().len() as u64, stored_hash_count(i));
            assert_eq!(stored_hash_index(0, i), m.stored().len() as u64);
            m.append_entry(&i.to_be_bytes()).unwrap();
        }
        for idx in 0..stored_hash_count(300) {
            let (l, n) = split_stored_hash_index(idx);
            assert_eq!(stored_hash_index(l, n), idx);
        }
    }

    #[test]
    fn edge_sizes() {
        let mut m = MemoryHashes::new();
        m.append_entry(b"x").unwrap();
        assert_eq!(inclusion_proof(0, 1, &m).unwrap(), vec![]);
        verify_inclusion(&[], 1, &leaf_hash(b"x"), 0, &leaf_hash(b"x")).unwrap();
        assert!(matches!(
            inclusion_proof(1, 1, &m),
            Err(ProofError::IndexOutOfRange { index: 1, size: 1 })
        ));
        assert!(matches!(
            consistency_proof(2, 1, &m),
            Err(ProofError::SizeOrder { .. })
        ));
        assert_eq!(consistency_proof(0, 1, &m).unwrap(), vec![]);
        let root = m.root();
        verify_consistency(&[], 1, &root, 0, &EMPTY_ROOT).unwrap();
        verify_consistency(&[], 1, &root, 1, &root).unwrap();
        assert!(verify_consistency(&[], 1, &root, 0, &root).is_err());
        assert!(verify_consistency(&[root], 1, &root, 1, &root).is_err());
        assert!(matches!(
            tree_hash(MAX_TREE_SIZE + 1, &m),
            Err(ProofError::TooLarge(_))
        ));
        // Verifiers take any u64 size without panicking.
        assert!(verify_inclusion(&[root; 64], u64::MAX, &root, u64::MAX - 1, &root).is_err());
        assert!(verify_consistency(&[root; 3], u64::MAX, &root, u64::MAX - 7, &root).is_err());
        assert!(matches!(
            verify_inclusion(&[root; 65], u64::MAX, &root, 0, &root),
            Err(ProofError::ProofTooLong(65))
        ));
    }
}
