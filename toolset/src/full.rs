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
//!
//! The same definition with another key member digests each kind of a server's surface
//! ([`digest_by`], used by `surface::items`), and each entry's canonical bytes alone give the
//! tool's `toolmark-tool/1` digest ([`tool_digest`]) and the set's [`ToolIndex`].

use crate::canon::{self, Numbers};
use crate::json::{Json, Str};
use crate::model::{Tool, ToolSet};
use crate::sri::Sri;
use std::cmp::Ordering;

/// The profile name recorded next to full digests (and next to the per-kind digests of the
/// surface, which are the same definition with another key member: `surface::items`).
pub const PROFILE: &str = "toolmark/1";

/// The profile name of a single tool's digest ([`tool_digest`], [`ToolIndex`]).
pub const TOOL_PROFILE: &str = "toolmark-tool/1";

/// The member tool entries are sorted by.
pub const TOOL_KEY: &str = "name";

/// One entry's canonical bytes: RFC 8785 with ECMAScript numbers, every member kept.
pub fn entry_bytes(value: &Json) -> Vec<u8> {
    canon::to_vec(value, Numbers::Ecmascript)
        .expect("the ECMAScript profile accepts every parsed value")
}

/// Each entry's canonical bytes, in the digest's order: entries that are not objects with a
/// string member `key` first, then by that string in UTF-16 order; ties by canonical bytes.
fn sorted_entries<'a>(values: impl IntoIterator<Item = &'a Json>, key: &str) -> Vec<Vec<u8>> {
    let mut entries: Vec<(Option<&Str>, Vec<u8>)> = values
        .into_iter()
        .map(|v| {
            let k = match v.get(key) {
                Some(Json::String(s)) => Some(s),
                _ => None,
            };
            (k, entry_bytes(v))
        })
        .collect();
    entries.sort_by(|a, b| {
        let by_key = match (a.0, b.0) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.utf16_cmp(y),
        };
        by_key.then_with(|| a.1.cmp(&b.1))
    });
    entries.into_iter().map(|e| e.1).collect()
}

/// Hand the canonical sorted array to `sink` piece by piece.
fn emit<'a>(values: impl IntoIterator<Item = &'a Json>, key: &str, mut sink: impl FnMut(&[u8])) {
    sink(b"[");
    for (i, bytes) in sorted_entries(values, key).iter().enumerate() {
        if i > 0 {
            sink(b",");
        }
        sink(bytes);
    }
    sink(b"]");
}

/// The canonical bytes of `values` sorted by the string member `key`: the one definition
/// behind the full digest (`key` = `name`) and every per-kind digest of the surface.
pub fn canonical_bytes_by<'a>(values: impl IntoIterator<Item = &'a Json>, key: &str) -> Vec<u8> {
    let mut out = Vec::new();
    emit(values, key, |piece| out.extend_from_slice(piece));
    out
}

/// The `toolmark/1` digest of `values` sorted by the string member `key`: the SRI of
/// [`canonical_bytes_by`], computed without holding the whole array.
pub fn digest_by<'a>(values: impl IntoIterator<Item = &'a Json>, key: &str) -> Sri {
    let mut hasher = Sri::hasher();
    emit(values, key, |piece| hasher.update(piece));
    hasher.finish()
}

/// The canonical bytes the full digest hashes.
pub fn canonical_bytes(set: &ToolSet) -> Vec<u8> {
    canonical_bytes_by(set.tools.iter().map(|t| &t.value), TOOL_KEY)
}

/// The `toolmark/1` full digest of a tool set.
pub fn digest(set: &ToolSet) -> Sri {
    digest_by(set.tools.iter().map(|t| &t.value), TOOL_KEY)
}

/// The `toolmark-tool/1` digest of one tool entry: the SRI of exactly the bytes the full digest
/// puts in its array for that entry ([`entry_bytes`]).
pub fn tool_digest(tool: &Tool) -> Sri {
    Sri::of(&entry_bytes(&tool.value))
}

/// Every tool's `toolmark-tool/1` digest and one digest over them: what a `/check` about one
/// tool is answered with, and what a log entry's `toolIndex` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolIndex {
    /// One digest per entry (duplicates kept), sorted by their SRI strings bytewise (the same
    /// order as UTF-16 code units, since the strings are ASCII: what `Array.prototype.sort`
    /// and Python's `sorted` give).
    pub digests: Vec<Sri>,
    /// The SRI of the RFC 8785 array of [`ToolIndex::digests`]' SRI strings, in that order.
    pub digest: Sri,
}

impl ToolIndex {
    /// The index of a tool set.
    pub fn of(set: &ToolSet) -> ToolIndex {
        let mut named: Vec<(String, Sri)> = set
            .tools
            .iter()
            .map(|t| {
                let d = tool_digest(t);
                (d.to_string(), d)
            })
            .collect();
        named.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let digests: Vec<Sri> = named.into_iter().map(|(_, d)| d).collect();
        ToolIndex {
            digest: ToolIndex::digest_of(&digests),
            digests,
        }
    }

    /// The index digest of `digests` taken in the order given: the SRI of the RFC 8785 array
    /// of their SRI strings. What a client holding an answer's list of tool digests recomputes
    /// to compare with a log entry's `toolIndex` (a list out of [`ToolIndex::of`]'s order gives
    /// another digest).
    pub fn digest_of(digests: &[Sri]) -> Sri {
        let array = Json::Array(
            digests
                .iter()
                .map(|d| Json::String(Str::from(d.to_string().as_str())))
                .collect(),
        );
        Sri::of(&entry_bytes(&array))
    }
}
