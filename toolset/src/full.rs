//! The `toolmark/1` full digest: every member of every tool the server sent.
//!
//! MTL/1 drops `title`, `annotations`, `icons`, `execution`, `_meta` and vendor members and
//! refuses fractional numbers, which is where a rug pull can hide. The full digest is
//! `sha256-<base64>` of the RFC 8785 canonical form (ECMAScript numbers) of the array of tool
//! entries, each entry complete, sorted by:
//!
//! 1. entries without a string `name` first, then named entries by name in UTF-16 order;
//! 2. ties (same name, or both unnamed) by their canonical bytes, bytewise.
//!
//! Nothing is refused: an empty set, duplicate names, entries that are not objects and unpaired
//! surrogates (escaped `\udxxx`, as ECMAScript's `JSON.stringify` does) all have a digest, so every
//! set that parses has one. Because the sorted array is itself canonical JSON, anyone can
//! recompute the digest with an off-the-shelf RFC 8785 implementation. `docs/digests.md` has the
//! definition and vectors.

use crate::canon::{self, Numbers};
use crate::json::Json;
use crate::model::ToolSet;
use crate::sri::Sri;
use std::cmp::Ordering;

/// The profile name recorded next to full digests.
pub const PROFILE: &str = "toolmark/1";

/// Each entry's canonical bytes, in the digest's order.
fn sorted_entries(set: &ToolSet) -> Vec<Vec<u8>> {
    let mut entries: Vec<(Option<&crate::json::Str>, Vec<u8>)> = set
        .tools
        .iter()
        .map(|t| {
            let name = match t.value.get("name") {
                Some(Json::String(s)) => Some(s),
                _ => None,
            };
            let bytes = canon::to_vec(&t.value, Numbers::Ecmascript)
                .expect("the ECMAScript profile accepts every parsed value");
            (name, bytes)
        })
        .collect();
    entries.sort_by(|a, b| {
        let by_name = match (a.0, b.0) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.utf16_cmp(y),
        };
        by_name.then_with(|| a.1.cmp(&b.1))
    });
    entries.into_iter().map(|e| e.1).collect()
}

/// Hand the canonical array to `sink` piece by piece.
fn emit(set: &ToolSet, mut sink: impl FnMut(&[u8])) {
    sink(b"[");
    for (i, bytes) in sorted_entries(set).iter().enumerate() {
        if i > 0 {
            sink(b",");
        }
        sink(bytes);
    }
    sink(b"]");
}

/// The canonical bytes the full digest hashes.
pub fn canonical_bytes(set: &ToolSet) -> Vec<u8> {
    let mut out = Vec::new();
    emit(set, |piece| out.extend_from_slice(piece));
    out
}

/// The `toolmark/1` full digest of a tool set.
pub fn digest(set: &ToolSet) -> Sri {
    let mut hasher = Sri::hasher();
    emit(set, |piece| hasher.update(piece));
    hasher.finish()
}
