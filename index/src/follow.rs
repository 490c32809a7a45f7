//! Following a published log: an index fed from the log's public files (a bucket, a directory
//! or an HTTP base URL, through [`Reader`]) instead of from the writer's own `Log` — what an
//! API replica does in a cluster (issue #27).
//!
//! Nothing the public files say is trusted but under the verifier key the caller gives (a
//! replica reads it from the head store, never from the bucket). The checkpoint's signature is
//! verified; every entry
//! read from a bundle is hashed into the index's [`CompactRange`] (the verified tree's right
//! edge, kept in the index beside its size), and each chunk of entries is indexed only once the
//! range's root is proven to be a prefix of the signed tree (a consistency proof from the
//! public tiles, checked against the signed root) or is the signed root itself. A checkpoint
//! smaller than the tree already verified, or of its size with another root, is a fork or a
//! shrink: refused, and nothing is indexed. Documents are read from the blobs and checked
//! against their entries as [`Index::catch_up`] does; the rows derived are the same.

use toolmark_log::entry::Entry;
use toolmark_log::merkle::{self, CompactRange};
use toolmark_log::reader::{Reader, Signed};
use toolmark_log::tiles;

use crate::blobs::Blobs;
use crate::derive::{index_prefetched, prefetch};
use crate::document::{Document, RawPage};
use crate::index::{Index, IndexError};
use crate::schema::{meta, set_log_size_indexed, set_meta};
use crate::snapshot::RANGE_KEY;

/// Entries verified and indexed per transaction (bounds memory and the transaction's size).
pub const FOLLOW_CHUNK: u64 = 4_096;

/// SQLite's page cache (KiB) while an index catches up with or follows a log, instead of the
/// connection's default 2 MiB: the pages a chunk's entries touch (every target's row, the
/// observations' indexes) are spread over the database, and with 2 MiB most were read again and
/// spilled to the WAL mid-transaction for every entry (2.4 reads and 2.3 writes of a page per
/// entry at 200,000 entries, half the catch-up's system time). Put back when the pass ends.
pub const FOLLOW_CACHE_KIB: u64 = 65_536;

impl Index {
    /// Runs `pass` with the page cache at [`FOLLOW_CACHE_KIB`], then puts back the one the
    /// connection had (whether `pass` failed or not).
    pub(crate) fn with_follow_cache<T>(
        &mut self,
        pass: impl FnOnce(&mut Index) -> Result<T, IndexError>,
    ) -> Result<T, IndexError> {
        let before: i64 = self.conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
        self.conn
            .execute_batch(&format!("PRAGMA cache_size = -{FOLLOW_CACHE_KIB}"))?;
        let done = pass(self);
        let put_back = self
            .conn
            .execute_batch(&format!("PRAGMA cache_size = {before}"));
        // The pass's own error first: a cache not put back is told only after a pass that
        // went well.
        let done = done?;
        put_back?;
        Ok(done)
    }
}

/// One chunk as read, not yet verified.
struct Loaded {
    end: u64,
    raws: Vec<Vec<u8>>,
    entries: Vec<(u64, Entry)>,
    documents: std::collections::HashMap<u64, Document<RawPage>>,
    /// The first entry of the chunk that did not decode (reported once the chunk is proven).
    undecodable: Option<IndexError>,
}

/// What one [`Index::follow`] did.
#[derive(Debug, Clone)]
pub struct Followed {
    /// The log size the index had seen before.
    pub from: u64,
    /// The log size it has seen now (the checkpoint's).
    pub to: u64,
    /// The verified checkpoint it followed to.
    pub checkpoint: Signed,
}

fn follow_err(e: impl std::fmt::Display) -> IndexError {
    IndexError::Follow(e.to_string())
}

/// Entries `[from, to)` of the tree of `size` leaves, read from their bundles (not yet
/// verified).
fn read_raw(reader: &Reader, from: u64, to: u64, size: u64) -> Result<Vec<Vec<u8>>, IndexError> {
    const WIDTH: u64 = tiles::TILE_WIDTH as u64;
    let mut out = Vec::with_capacity(usize::try_from(to - from).unwrap_or(0));
    let mut b = from / WIDTH;
    while b * WIDTH < to {
        let width = ((b + 1) * WIDTH).min(size) - b * WIDTH;
        let path = tiles::bundle_path(b, u16::try_from(width).map_err(follow_err)?);
        let bytes = reader
            .file(&path)
            .map_err(follow_err)?
            .ok_or_else(|| follow_err(format!("bundle {path} is missing")))?;
        let members =
            tiles::decode_bundle(&bytes).map_err(|e| follow_err(format!("{path}: {e}")))?;
        for i in (b * WIDTH).max(from)..((b + 1) * WIDTH).min(to) {
            let raw = members
                .get(usize::try_from(i - b * WIDTH).map_err(follow_err)?)
                .ok_or_else(|| follow_err(format!("bundle {path} is short")))?;
            out.push(raw.to_vec());
        }
        b += 1;
    }
    Ok(out)
}

impl Index {
    /// Follows the log `reader` reads up to its current signed checkpoint: verifies and indexes
    /// every entry the index has not seen (see the module documentation). An index that was
    /// fed otherwise (a recorder's, or [`Index::catch_up`]'s) has its entries re-read and
    /// verified once before new ones are indexed.
    pub fn follow(&mut self, reader: &Reader, blobs: &Blobs) -> Result<Followed, IndexError> {
        self.follow_in_chunks(reader, blobs, FOLLOW_CHUNK)
    }

    /// [`Index::follow`], verifying and indexing `chunk` entries per transaction (at least 1):
    /// each chunk short of the checkpoint is proven a prefix of the signed tree by a
    /// consistency proof, the last one by the root itself.
    pub fn follow_in_chunks(
        &mut self,
        reader: &Reader,
        blobs: &Blobs,
        chunk: u64,
    ) -> Result<Followed, IndexError> {
        self.with_follow_cache(|index| index.follow_now(reader, blobs, chunk))
    }

    /// [`Index::follow_in_chunks`] with the connection's cache as it is.
    fn follow_now(
        &mut self,
        reader: &Reader,
        blobs: &Blobs,
        chunk: u64,
    ) -> Result<Followed, IndexError> {
        let chunk = chunk.max(1);
        let vkey = reader.vkey().trim().to_owned();
        let pinned = meta(&self.conn, "log_vkey")?;
        if let Some(v) = &pinned {
            if *v != vkey {
                return Err(IndexError::Inconsistent(format!(
                    "this index follows the log {v}, not {vkey}"
                )));
            }
        }
        let signed = reader.checkpoint().map_err(follow_err)?;
        // The key is pinned once a checkpoint verified under it.
        if pinned.is_none() {
            set_meta(&self.conn, "log_vkey", &vkey)?;
        }
        let (size, root) = (signed.checkpoint.size, signed.checkpoint.root);
        let indexed = self.log_size_indexed()?;
        let mut range = match meta(&self.conn, RANGE_KEY)? {
            Some(text) => CompactRange::parse(&text)
                .map_err(|e| IndexError::Inconsistent(format!("the verified range: {e}")))?,
            None => CompactRange::new(),
        };
        if range.size() > indexed {
            return Err(IndexError::Inconsistent(format!(
                "the verified range holds {} entries, the index {indexed}",
                range.size()
            )));
        }
        if size < indexed || size < range.size() {
            return Err(follow_err(format!(
                "the signed checkpoint is of size {size}, smaller than the {} entries this index \
                 has seen: the log shrank or forked",
                indexed.max(range.size())
            )));
        }
        if size == range.size() && range.root() != root {
            return Err(follow_err(format!(
                "the signed checkpoint of size {size} has another root than the tree this index \
                 verified: a fork"
            )));
        }
        crate::census::refresh(self, blobs)?;
        self.rescan(blobs, crate::scans::RESCAN_PER_PASS)?;
        let from = indexed;
        // The next chunk is read (its bundles, its entries decoded, its documents read, hashed
        // and decoded) on another thread while this one verifies and indexes the current one:
        // reading needs no database, indexing needs nothing else. Nothing read is used before
        // its chunk is proven part of the signed tree.
        let load = |at: u64| -> Result<Loaded, IndexError> {
            let end = (at + chunk).min(size);
            let raws = read_raw(reader, at, end, size)?;
            let (mut entries, mut undecodable) = (Vec::new(), None);
            for (i, raw) in (at..end).zip(&raws) {
                if i >= indexed {
                    match Entry::decode(raw) {
                        Ok(entry) => entries.push((i, entry)),
                        Err(source) => {
                            undecodable = Some(IndexError::Entry { index: i, source });
                            break;
                        }
                    }
                }
            }
            let documents = prefetch(blobs, &entries);
            Ok(Loaded {
                end,
                raws,
                entries,
                documents,
                undecodable,
            })
        };
        let mut at = range.size();
        std::thread::scope(|s| -> Result<(), IndexError> {
            let mut next = (at < size).then(|| s.spawn(move || load(at)));
            while let Some(pending) = next.take() {
                let loaded = pending
                    .join()
                    .map_err(|_| follow_err("the reading thread panicked"))??;
                let end = loaded.end;
                if end < size {
                    next = Some(s.spawn(move || load(end)));
                }
                let mut range_next = range.clone();
                for raw in &loaded.raws {
                    range_next.append_entry(raw);
                }
                let proven = if end == size {
                    range_next.root() == root
                } else {
                    let proof = reader
                        .consistency_proof(end, size, &signed)
                        .map_err(follow_err)?;
                    merkle::verify_consistency(&proof, size, &root, end, &range_next.root()).is_ok()
                };
                if !proven {
                    return Err(follow_err(format!(
                        "entries {at}..{end} as published do not extend the signed tree of size \
                         {size} (a tampered bundle, or a fork): nothing of them was indexed"
                    )));
                }
                if let Some(e) = loaded.undecodable {
                    // Proven part of the signed tree, yet not an entry.
                    return Err(e);
                }
                let tx = self.conn.transaction()?;
                index_prefetched(&tx, blobs, &loaded.entries, None, loaded.documents)?;
                if end > indexed {
                    set_log_size_indexed(&tx, end)?;
                }
                set_meta(&tx, RANGE_KEY, &range_next.to_text())?;
                tx.commit()?;
                range = range_next;
                at = end;
            }
            Ok(())
        })?;
        Ok(Followed {
            from,
            to: size,
            checkpoint: signed,
        })
    }
}
