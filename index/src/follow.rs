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
use crate::derive::index_entries;
use crate::index::{Index, IndexError};
use crate::schema::{meta, set_log_size_indexed, set_meta};
use crate::snapshot::RANGE_KEY;

/// Entries verified and indexed per transaction (bounds memory and the transaction's size).
pub const FOLLOW_CHUNK: u64 = 4_096;

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
        let from = indexed;
        let mut at = range.size();
        while at < size {
            let end = (at + chunk).min(size);
            let raws = read_raw(reader, at, end, size)?;
            let mut next = range.clone();
            for raw in &raws {
                next.append_entry(raw);
            }
            let proven = if end == size {
                next.root() == root
            } else {
                let proof = reader
                    .consistency_proof(end, size, &signed)
                    .map_err(follow_err)?;
                merkle::verify_consistency(&proof, size, &root, end, &next.root()).is_ok()
            };
            if !proven {
                return Err(follow_err(format!(
                    "entries {at}..{end} as published do not extend the signed tree of size \
                     {size} (a tampered bundle, or a fork): nothing of them was indexed"
                )));
            }
            let mut entries = Vec::new();
            for (i, raw) in (at..end).zip(&raws) {
                if i >= indexed {
                    let entry = Entry::decode(raw)
                        .map_err(|source| IndexError::Entry { index: i, source })?;
                    entries.push((i, entry));
                }
            }
            let tx = self.conn.transaction()?;
            index_entries(&tx, blobs, &entries, None)?;
            if end > indexed {
                set_log_size_indexed(&tx, end)?;
            }
            set_meta(&tx, RANGE_KEY, &next.to_text())?;
            tx.commit()?;
            range = next;
            at = end;
        }
        Ok(Followed {
            from,
            to: size,
            checkpoint: signed,
        })
    }
}
