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

/// The canonical bytes the full digest hashes.
pub fn canonical_bytes(set: &ToolSet) -> Vec<u8> {
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
    let len = entries.iter().map(|e| e.1.len() + 1).sum::<usize>() + 2;
    let mut out = Vec::with_capacity(len);
    out.push(b'[');
    for (i, (_, bytes)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(bytes);
    }
    out.push(b']');
    out
}

/// The `toolmark/1` full digest of a tool set.
pub fn digest(set: &ToolSet) -> Sri {
    Sri::of(&canonical_bytes(set))
}
