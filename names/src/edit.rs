//! Damerau–Levenshtein distance exactly 1, and the symmetric-delete index that finds such
//! neighbours without comparing against every name.
//!
//! Two strings are one edit apart only if they share the string itself or one of its
//! one-character deletions (an insertion on one side is a deletion on the other; a
//! substitution or an adjacent swap leaves a deletion in common). The index keeps a 64-bit
//! hash of every skeleton and of each of its deletions, sorted; a query hashes its own and
//! reads the candidates' ids, and every candidate is then checked exactly ([`one_edit`]), so a
//! hash collision costs a comparison, never a wrong answer. Memory: 12 bytes per (variant,
//! name) pair, i.e. about `12 × (length + 1)` bytes per indexed name.

use std::hash::{DefaultHasher, Hash, Hasher};

/// Whether `a` and `b` (as characters) are exactly one insertion, deletion, substitution or
/// swap of two neighbours apart.
pub(crate) fn one_edit(a: &[char], b: &[char]) -> bool {
    if a == b || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    if a.len() == b.len() {
        let mut diff = (0..a.len()).filter(|&i| a[i] != b[i]);
        let (Some(i), second) = (diff.next(), diff.next()) else {
            return false;
        };
        return match second {
            None => true,
            Some(j) => diff.next().is_none() && j == i + 1 && a[i] == b[j] && a[j] == b[i],
        };
    }
    let (short, long) = if a.len() < b.len() { (a, b) } else { (b, a) };
    let i = short
        .iter()
        .zip(long)
        .position(|(x, y)| x != y)
        .unwrap_or(short.len());
    short[i..] == long[i + 1..]
}

fn hash_skipping(s: &[char], skip: Option<usize>) -> u64 {
    let mut h = DefaultHasher::new();
    for (i, c) in s.iter().enumerate() {
        if Some(i) != skip {
            c.hash(&mut h);
        }
    }
    // The length is part of the value: "ab" skipping nothing differs from "abc" skipping 'c'
    // only by it.
    (s.len() - usize::from(skip.is_some())).hash(&mut h);
    h.finish()
}

/// The hashes of `s` and of each of its one-character deletions.
fn variants(s: &[char]) -> impl Iterator<Item = u64> + '_ {
    std::iter::once(None)
        .chain((0..s.len()).map(Some))
        .map(move |skip| hash_skipping(s, skip))
}

/// A symmetric-delete index over skeletons (as characters), each with a caller's id.
#[derive(Debug, Default)]
pub(crate) struct DeleteIndex {
    pairs: Vec<(u64, u32)>,
}

impl DeleteIndex {
    /// Index every `(skeleton, id)`.
    pub(crate) fn build<'a>(items: impl IntoIterator<Item = (&'a [char], u32)>) -> DeleteIndex {
        let mut pairs = Vec::new();
        for (s, id) in items {
            pairs.extend(variants(s).map(|h| (h, id)));
        }
        pairs.sort_unstable();
        pairs.dedup();
        pairs.shrink_to_fit();
        DeleteIndex { pairs }
    }

    /// The ids of every indexed skeleton that may be one edit from `s` (to be checked with
    /// [`one_edit`]), sorted and without repeats.
    pub(crate) fn candidates(&self, s: &[char]) -> Vec<u32> {
        let mut out = Vec::new();
        for h in variants(s) {
            let start = self.pairs.partition_point(|&(k, _)| k < h);
            out.extend(
                self.pairs[start..]
                    .iter()
                    .take_while(|&&(k, _)| k == h)
                    .map(|&(_, id)| id),
            );
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Bytes held by the index (for the figures in the docs).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.pairs.capacity() * std::mem::size_of::<(u64, u32)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn one_edit_is_exactly_one() {
        for (a, b) in [
            ("servergithub", "servergithb"),   // deletion
            ("servergithub", "servergithubb"), // insertion
            ("servergithub", "servergitheb"),  // substitution
            ("servergithub", "servergihtub"),  // swap of neighbours
            ("servergithub", "ervergithub"),   // first character
            ("servergithub", "servergithu"),   // last character
        ] {
            assert!(one_edit(&c(a), &c(b)), "{a} / {b}");
            assert!(one_edit(&c(b), &c(a)), "{b} / {a}");
        }
        for (a, b) in [
            ("servergithub", "servergithub"), // the same: zero edits
            ("servergithub", "servrgithb"),   // two deletions
            ("servergithub", "servergtihbu"), // two swaps
            ("servergithub", "sevrergihtub"), // swap far apart
            ("abc", "cba"),
        ] {
            assert!(!one_edit(&c(a), &c(b)), "{a} / {b}");
        }
    }

    #[test]
    fn the_index_finds_every_one_edit_neighbour() {
        let names = ["servergithub", "serverslack", "playwrightmcp"];
        let chars: Vec<Vec<char>> = names.iter().map(|n| c(n)).collect();
        let index = DeleteIndex::build(chars.iter().enumerate().map(|(i, s)| (&s[..], i as u32)));
        for q in [
            "servergithb",
            "servergihtub",
            "servergithubs",
            "sorvergithub",
        ] {
            assert!(index.candidates(&c(q)).contains(&0), "{q}");
        }
        assert!(index.candidates(&c("playwrihgtmcp")).contains(&2));
        assert!(!index.candidates(&c("servergthb")).contains(&0));
    }
}
