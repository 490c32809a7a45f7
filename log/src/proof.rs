//! C2SP `tlog-proof` (`c2sp.org/tlog-proof@v1`): an offline-verifiable bundle of an entry's
//! index, its inclusion proof and the signed checkpoint it is proved against.
//!
//! ```text
//! c2sp.org/tlog-proof@v1
//! extra <base64>            optional, unauthenticated application data
//! index <decimal>
//! <base64 hash>             zero or more: the leaf's sibling first, the root's child last
//!                           (empty line)
//! <checkpoint note, verbatim, with its signature and any cosignature lines>
//! ```
//!
//! This module encodes and decodes that text and verifies a bundle against the log's verifier
//! key and the entry's bytes. It does not check witness cosignatures or a witness policy
//! (`tlog-policy`): a bundle it accepts is proved against the log's own signature only. It never
//! trusts `extra`, which nothing signs.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::merkle::{
    FormatError, Hash, MAX_INCLUSION_PROOF_LEN, leaf_hash, truncate_for_error, verify_inclusion,
};
use crate::note::{Checkpoint, open_checkpoint};

/// The first line of every bundle.
pub const TLOG_PROOF_HEADER: &str = "c2sp.org/tlog-proof@v1";

/// A decoded `c2sp.org/tlog-proof@v1` bundle. Nothing in it is verified until
/// [`verify_tlog_proof`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlogProof {
    /// Opaque, unauthenticated application data from the `extra` line.
    pub extra: Option<Vec<u8>>,
    /// Leaf index of the entry.
    pub index: u64,
    /// The inclusion proof, leaf's sibling first.
    pub proof: Vec<Hash>,
    /// The checkpoint note, verbatim.
    pub checkpoint: Vec<u8>,
}

/// Writes a bundle. `checkpoint_note` is included verbatim; a signed note is UTF-8, and any
/// invalid UTF-8 in it (which no verifier would accept anyway) is replaced by U+FFFD.
pub fn encode_tlog_proof(
    extra: Option<&[u8]>,
    index: u64,
    proof: &[Hash],
    checkpoint_note: &[u8],
) -> String {
    let mut s = String::with_capacity(64 + 45 * proof.len() + checkpoint_note.len());
    s.push_str(TLOG_PROOF_HEADER);
    s.push('\n');
    if let Some(extra) = extra {
        s.push_str("extra ");
        s.push_str(&BASE64.encode(extra));
        s.push('\n');
    }
    s.push_str(&format!("index {index}\n"));
    for h in proof {
        s.push_str(&h.to_base64());
        s.push('\n');
    }
    s.push('\n');
    s.push_str(&String::from_utf8_lossy(checkpoint_note));
    s
}

/// Reads a bundle (strictly: exact header, no leading zeros in the index, canonical 44-character
/// hashes, at most 64 proof lines, a non-empty checkpoint after the empty line).
///
/// # Errors
///
/// [`FormatError::BadTlogProof`] with the line number of the first problem.
pub fn decode_tlog_proof(text: &str) -> Result<TlogProof, FormatError> {
    let bad = |line: usize, reason: String| FormatError::BadTlogProof { line, reason };
    let mut lines = Lines { rest: text, no: 0 };

    let header = lines.next().ok_or(bad(1, "empty or unterminated".into()))?;
    if header != TLOG_PROOF_HEADER {
        return Err(bad(
            lines.no,
            format!("first line must be {TLOG_PROOF_HEADER}"),
        ));
    }

    let mut line = lines.next().ok_or(bad(2, "missing index line".into()))?;
    let mut extra = None;
    if let Some(b64) = line.strip_prefix("extra ") {
        extra = Some(
            BASE64
                .decode(b64)
                .map_err(|_| bad(lines.no, "extra is not standard base64".into()))?,
        );
        line = lines
            .next()
            .ok_or(bad(lines.no + 1, "missing index line".into()))?;
    }
    let idx = line
        .strip_prefix("index ")
        .ok_or(bad(lines.no, "expected \"index <decimal>\"".into()))?;
    if idx.is_empty()
        || !idx.bytes().all(|b| b.is_ascii_digit())
        || (idx.len() > 1 && idx.starts_with('0'))
    {
        return Err(bad(
            lines.no,
            "index must be decimal without leading zeros".into(),
        ));
    }
    let index: u64 = idx
        .parse()
        .map_err(|_| bad(lines.no, "index does not fit 64 bits".into()))?;

    let mut proof = Vec::new();
    loop {
        let line = lines.next().ok_or(bad(
            lines.no + 1,
            "missing the empty line before the checkpoint".into(),
        ))?;
        if line.is_empty() {
            break;
        }
        if proof.len() == MAX_INCLUSION_PROOF_LEN {
            return Err(bad(
                lines.no,
                format!("more than {MAX_INCLUSION_PROOF_LEN} proof hashes"),
            ));
        }
        let h = Hash::from_base64(line).map_err(|_| {
            bad(
                lines.no,
                format!("{:?} is not a base64 hash", truncate_for_error(line)),
            )
        })?;
        proof.push(h);
    }
    if lines.rest.is_empty() {
        return Err(bad(lines.no + 1, "missing checkpoint".into()));
    }
    Ok(TlogProof {
        extra,
        index,
        proof,
        checkpoint: lines.rest.as_bytes().to_vec(),
    })
}

/// `\n`-terminated lines with a 1-based counter; an unterminated tail is not a line.
struct Lines<'a> {
    rest: &'a str,
    no: usize,
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Option<&'a str> {
        let (line, after) = self.rest.split_once('\n')?;
        self.rest = after;
        self.no += 1;
        Some(line)
    }
}

/// Verifies a bundle for `entry`: opens the checkpoint with the log's `vkey` (origin must be
/// the key name) and checks the inclusion of `leaf_hash(entry)` at `p.index`. Returns the
/// checkpoint the entry is proved in.
///
/// # Errors
///
/// Everything [`open_checkpoint`] returns; [`FormatError::Proof`] if the inclusion proof does
/// not verify against the checkpoint.
pub fn verify_tlog_proof(
    p: &TlogProof,
    entry: &[u8],
    vkey: &str,
) -> Result<Checkpoint, FormatError> {
    let cp = open_checkpoint(&p.checkpoint, vkey)?;
    verify_inclusion(&p.proof, cp.size, &cp.root, p.index, &leaf_hash(entry))?;
    Ok(cp)
}
