//! `fsck` and audit: check a published log from its public files alone.
//!
//! [`fsck`] reads the checkpoint, every entry bundle and every tile through a [`Source`] (a
//! directory, or HTTP in the binary), verifies the checkpoint's signature, re-derives every leaf
//! hash from the bundles, rebuilds the whole tree, and requires every tile byte and the root to
//! match. It also decodes every entry and checks each `prev` link (earlier, same subject).
//! [`audit`] adds what a monitor keeps between runs: the last checkpoint it verified. A shrink,
//! a different root at a remembered size, or a different key is refused.
//!
//! It holds the rebuilt tree in memory (32 bytes per stored hash, about 64 bytes per entry).

use crate::entry::{Entry, TargetId};
use crate::merkle::{self, Hash, MemoryHashes};
use crate::note::{self, Checkpoint};
use crate::tiles::{self, TileId};
use std::collections::HashMap;

/// Where public files come from.
pub trait Source {
    /// The file at `path` (`checkpoint`, `tile/0/000`, …), `None` if it does not exist.
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String>;
}

/// A published log directory.
pub struct DirSource(pub std::path::PathBuf);

impl Source for DirSource {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        match std::fs::read(self.0.join(path)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", self.0.join(path).display())),
        }
    }
}

/// Why a published log does not verify.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A published file could not be read.
    #[error("reading {path}: {reason}")]
    Read {
        /// Its path in the log.
        path: String,
        /// Why.
        reason: String,
    },
    /// A file the checkpoint needs is not published.
    #[error("{0} is missing")]
    Missing(String),
    /// The checkpoint does not parse or its signature does not verify.
    #[error("checkpoint: {0}")]
    Checkpoint(#[from] crate::FormatError),
    /// A published file is not what the format says.
    #[error("{path}: {reason}")]
    Corrupt {
        /// Its path in the log.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The tiles hash to another root than the signed one.
    #[error("root mismatch: the tiles give {computed}, the checkpoint says {signed}")]
    Root {
        /// The root the tiles give (base64).
        computed: String,
        /// The root the checkpoint signs (base64).
        signed: String,
    },
    /// An entry does not decode or does not hash to its leaf.
    #[error("entry {index}: {reason}")]
    Entry {
        /// Its index.
        index: u64,
        /// Why.
        reason: String,
    },
    /// The remembered state and the log disagree (a fork, a rollback, another key) or the state
    /// file does not parse.
    #[error("audit: {0}")]
    Audit(String),
}

/// What a successful check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The checkpoint verified.
    pub checkpoint: Checkpoint,
    /// The checkpoint note exactly as fetched, with any witness cosignature lines (for a
    /// witness policy's check: [`crate::policy::WitnessPolicy::check`]).
    pub note: Vec<u8>,
    /// Entries read and checked.
    pub entries: u64,
    /// Tiles read.
    pub tiles: usize,
    /// Entry bundles read.
    pub bundles: usize,
}

fn fetch(src: &dyn Source, path: &str) -> Result<Vec<u8>, VerifyError> {
    src.get(path)
        .map_err(|reason| VerifyError::Read {
            path: path.into(),
            reason,
        })?
        .ok_or_else(|| VerifyError::Missing(path.into()))
}

/// Verify everything published under `src` with the verifier key `vkey`.
pub fn fsck(src: &dyn Source, vkey: &str) -> Result<Report, VerifyError> {
    check_all(src, vkey).map(|(report, _)| report)
}

/// [`fsck`], also returning the rebuilt tree.
fn check_all(src: &dyn Source, vkey: &str) -> Result<(Report, MemoryHashes), VerifyError> {
    let note_bytes = fetch(src, "checkpoint")?;
    let cp = note::open_checkpoint(&note_bytes, vkey)?;
    let size = cp.size;
    let mut tree = MemoryHashes::new();
    let mut subjects: HashMap<u64, TargetId> = HashMap::new();
    let mut bundles = 0;
    let mut b = 0u64;
    while b * 256 < size {
        let width = ((b + 1) * 256).min(size) - b * 256;
        let path = tiles::bundle_path(b, width as u16);
        let bytes = fetch(src, &path)?;
        let entries = tiles::decode_bundle(&bytes).map_err(|e| VerifyError::Corrupt {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        if entries.len() as u64 != width {
            return Err(VerifyError::Corrupt {
                path,
                reason: format!("{} entries, expected {width}", entries.len()),
            });
        }
        for (i, e) in entries.iter().enumerate() {
            let index = b * 256 + i as u64;
            check_entry(index, e, &mut subjects)?;
            tree.append(merkle::leaf_hash(e))
                .map_err(|e| VerifyError::Entry {
                    index,
                    reason: e.to_string(),
                })?;
        }
        bundles += 1;
        b += 1;
    }
    let all_tiles = tiles::tiles_for_size(size);
    for t in &all_tiles {
        check_tile(src, t, &tree)?;
    }
    let computed = merkle::tree_hash(size, &tree).map_err(|e| VerifyError::Corrupt {
        path: "tree".into(),
        reason: e.to_string(),
    })?;
    if computed != cp.root {
        return Err(VerifyError::Root {
            computed: computed.to_base64(),
            signed: cp.root.to_base64(),
        });
    }
    let report = Report {
        checkpoint: cp,
        note: note_bytes,
        entries: size,
        tiles: all_tiles.len(),
        bundles,
    };
    Ok((report, tree))
}

fn check_tile(src: &dyn Source, t: &TileId, tree: &MemoryHashes) -> Result<(), VerifyError> {
    let path = t.path();
    let got = fetch(src, &path)?;
    let want = tiles::tile_data(t, tree).map_err(|e| VerifyError::Corrupt {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if got != want {
        return Err(VerifyError::Corrupt {
            path,
            reason: "tile bytes differ from the hashes the entries give".into(),
        });
    }
    Ok(())
}

/// An entry must be canonical and its `prev` must point back to an earlier entry of the same
/// subject.
fn check_entry(
    index: u64,
    bytes: &[u8],
    subjects: &mut HashMap<u64, TargetId>,
) -> Result<(), VerifyError> {
    let e = Entry::decode(bytes).map_err(|err| VerifyError::Entry {
        index,
        reason: err.to_string(),
    })?;
    let id = e.subject.id();
    if let Some(prev) = e.prev {
        match subjects.get(&prev) {
            Some(p) if prev < index && *p == id => {}
            _ => {
                return Err(VerifyError::Entry {
                    index,
                    reason: format!("prev {prev} is not an earlier entry of subject {id}"),
                });
            }
        }
    }
    subjects.insert(index, id);
    Ok(())
}

/// What an auditor remembers between runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditState {
    /// The log's verifier key.
    pub vkey: String,
    /// The tree size last verified.
    pub size: u64,
    /// Its root.
    pub root: Hash,
}

impl AuditState {
    /// One line: `<vkey> <size> <base64 root>`.
    pub fn to_text(&self) -> String {
        format!("{} {} {}\n", self.vkey, self.size, self.root.to_base64())
    }

    /// Read [`AuditState::to_text`]'s line back.
    pub fn parse(text: &str) -> Result<AuditState, VerifyError> {
        let mut it = text.split_whitespace();
        let bad = || VerifyError::Audit("the state file is not `<vkey> <size> <root>`".into());
        let vkey = it.next().ok_or_else(bad)?.to_owned();
        let size = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let root = it
            .next()
            .and_then(|r| Hash::from_base64(r).ok())
            .ok_or_else(bad)?;
        Ok(AuditState { vkey, size, root })
    }
}

/// fsck, then check the log against what the auditor saw before: same key, no shrink, and the
/// remembered root reproduced at the remembered size (with a consistency proof checked the way a
/// client would). Returns the report and the state to remember next.
pub fn audit(
    src: &dyn Source,
    vkey: &str,
    prior: Option<&AuditState>,
) -> Result<(Report, AuditState), VerifyError> {
    if let Some(p) = prior {
        if p.vkey != vkey {
            return Err(VerifyError::Audit(format!(
                "the log key changed: remembered {}, now {vkey}",
                p.vkey
            )));
        }
    }
    let (report, tree) = check_all(src, vkey)?;
    let cp = &report.checkpoint;
    if let Some(p) = prior {
        if cp.size < p.size {
            return Err(VerifyError::Audit(format!(
                "the log shrank from {} to {}",
                p.size, cp.size
            )));
        }
        if p.size > 0 {
            let proof = merkle::consistency_proof(p.size, cp.size, &tree)
                .map_err(|e| VerifyError::Audit(e.to_string()))?;
            merkle::verify_consistency(&proof, cp.size, &cp.root, p.size, &p.root).map_err(|e| {
                VerifyError::Audit(format!(
                    "the log is not consistent with the checkpoint remembered at size {}: {e} (fork)",
                    p.size
                ))
            })?;
        }
    }
    let state = AuditState {
        vkey: vkey.to_owned(),
        size: cp.size,
        root: cp.root,
    };
    Ok((report, state))
}
