//! The popularity snapshot: weekly download counts per package, dated, with where they came
//! from (`toolmark-popularity/1`).
//!
//! ```text
//! toolmark-popularity/1
//! date 2026-10-10
//! source HISTOR 0.4.2's curated.json (MIT): npm weekly counts of 2026-10-10; …
//!
//! npm:@modelcontextprotocol/server-github<TAB>111195
//! pypi:mcp<TAB>53893709<TAB>2026-10-01
//! ```
//!
//! The first line is the format; then header lines `date YYYY-MM-DD` (once) and `source TEXT`
//! (one or more) up to an empty line; then one line per package: its key (`npm:…`, `pypi:…`),
//! a tab, its weekly downloads, and optionally a tab and the day they were counted when it is
//! not the snapshot's date (`<TAB>` above is a tab; a refresh that could not reach every name
//! keeps older counts with their own day).
//! Keys are written sorted, unique, and PyPI's PEP 503-normalised; every line ends in `\n`.
//! Reading is bounded by the `MAX_*` constants and refuses anything else with the line number.

use std::collections::BTreeMap;

use crate::packages::PackageKey;

/// The format's first line.
pub const FORMAT: &str = "toolmark-popularity/1";
/// Most bytes a snapshot may have.
pub const MAX_SNAPSHOT_BYTES: usize = 16 << 20;
/// Most packages a snapshot may list.
pub const MAX_ENTRIES: usize = 300_000;
/// Most `source` lines.
pub const MAX_SOURCES: usize = 16;
/// Longest `source` text, in bytes.
pub const MAX_SOURCE_BYTES: usize = 1000;
/// Longest package key, in bytes (`pypi:` + a name; npm names are at most 214).
pub const MAX_KEY_BYTES: usize = 300;

/// One package's count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// Downloads in a week.
    pub weekly: u64,
    /// The day counted, when it is not the snapshot's date.
    pub as_of: Option<String>,
}

/// A parsed snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The snapshot's date (`YYYY-MM-DD`).
    pub date: String,
    /// Where the counts came from and how they were made, one line each.
    pub sources: Vec<String>,
    /// Counts by package key (`npm:@scope/name`, `pypi:name`).
    pub counts: BTreeMap<String, Count>,
}

/// Why a snapshot was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SnapshotError {
    /// Larger than [`MAX_SNAPSHOT_BYTES`].
    #[error("a popularity snapshot is at most {MAX_SNAPSHOT_BYTES} bytes")]
    TooLarge,
    /// More than [`MAX_ENTRIES`] packages.
    #[error("a popularity snapshot lists at most {MAX_ENTRIES} packages")]
    TooManyEntries,
    /// A line that does not fit the format.
    #[error("line {line}: {why}")]
    Line {
        /// 1-based.
        line: usize,
        /// What is wrong.
        why: String,
    },
}

/// Whether `s` is a `YYYY-MM-DD` date (digits in place, month 01–12, day 01–31).
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) {
        return false;
    }
    if !digits(5..7) || !digits(8..10) {
        return false;
    }
    let month = (b[5] - b'0') * 10 + (b[6] - b'0');
    let day = (b[8] - b'0') * 10 + (b[9] - b'0');
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

impl Snapshot {
    /// Read a snapshot's text.
    pub fn parse(text: &str) -> Result<Snapshot, SnapshotError> {
        if text.len() > MAX_SNAPSHOT_BYTES {
            return Err(SnapshotError::TooLarge);
        }
        let err = |line: usize, why: &str| SnapshotError::Line {
            line: line + 1,
            why: why.to_owned(),
        };
        let mut lines = text.split_terminator('\n').enumerate();
        match lines.next() {
            Some((_, FORMAT)) => {}
            _ => return Err(err(0, "the first line must be toolmark-popularity/1")),
        }
        let mut date = None;
        let mut sources = Vec::new();
        for (n, line) in lines.by_ref() {
            if line.is_empty() {
                break;
            }
            match line.split_once(' ') {
                Some(("date", d)) if date.is_none() && is_date(d) => date = Some(d.to_owned()),
                Some(("date", _)) => return Err(err(n, "one date, YYYY-MM-DD")),
                Some(("source", s)) if !s.is_empty() && s.len() <= MAX_SOURCE_BYTES => {
                    if sources.len() == MAX_SOURCES {
                        return Err(err(n, "too many source lines"));
                    }
                    if s.chars().any(char::is_control) {
                        return Err(err(n, "a source holds no control characters"));
                    }
                    sources.push(s.to_owned());
                }
                _ => return Err(err(n, "a header line is `date D` or `source TEXT`")),
            }
        }
        let date = date.ok_or_else(|| err(0, "the header has no date"))?;
        if sources.is_empty() {
            return Err(err(0, "the header has no source"));
        }
        let mut counts = BTreeMap::new();
        for (n, line) in lines {
            if counts.len() == MAX_ENTRIES {
                return Err(SnapshotError::TooManyEntries);
            }
            let mut fields = line.split('\t');
            let (Some(key), Some(weekly), as_of, None) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                return Err(err(n, "an entry is KEY<tab>WEEKLY[<tab>YYYY-MM-DD]"));
            };
            if key.len() > MAX_KEY_BYTES {
                return Err(err(n, "the key is too long"));
            }
            let parsed = PackageKey::parse(key).map_err(|e| err(n, &e.to_string()))?;
            if parsed.key() != key {
                return Err(err(n, "the key is not in its normal form"));
            }
            if weekly.is_empty() || !weekly.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err(n, "the weekly count is a decimal integer"));
            }
            let weekly: u64 = weekly
                .parse()
                .map_err(|_| err(n, "the weekly count is too large"))?;
            let as_of = match as_of {
                None => None,
                Some(d) if is_date(d) => Some(d.to_owned()),
                Some(_) => return Err(err(n, "the date is YYYY-MM-DD")),
            };
            if counts
                .insert(key.to_owned(), Count { weekly, as_of })
                .is_some()
            {
                return Err(err(n, "the key is listed twice"));
            }
        }
        Ok(Snapshot {
            date,
            sources,
            counts,
        })
    }

    /// The snapshot as text ([`Snapshot::parse`] reads it back equal).
    pub fn to_text(&self) -> String {
        let mut out = format!("{FORMAT}\ndate {}\n", self.date);
        for s in &self.sources {
            out.push_str("source ");
            out.push_str(s);
            out.push('\n');
        }
        out.push('\n');
        for (key, c) in &self.counts {
            out.push_str(key);
            out.push('\t');
            out.push_str(&c.weekly.to_string());
            if let Some(d) = c.as_of.as_ref().filter(|d| **d != self.date) {
                out.push('\t');
                out.push_str(d);
            }
            out.push('\n');
        }
        out
    }

    /// This snapshot refreshed on `date` with `counts` (key, weekly, the day counted when it
    /// is not `date`): the counts given replace the old ones, the others are kept with their
    /// own day, and `source` is added to the sources (the oldest `refreshed` line is dropped
    /// beyond [`MAX_SOURCES`]). Keys that are not package keys in normal form, and counts past
    /// [`MAX_ENTRIES`] packages, are left out.
    pub fn refreshed(
        &self,
        date: &str,
        counts: impl IntoIterator<Item = (String, u64, Option<String>)>,
        source: String,
    ) -> Snapshot {
        let mut out = self.clone();
        for c in out.counts.values_mut() {
            if c.as_of.is_none() {
                c.as_of = Some(self.date.clone());
            }
        }
        out.date = date.to_owned();
        for (key, weekly, as_of) in counts {
            let normal = PackageKey::parse(&key).is_ok_and(|k| k.key() == key);
            if !normal || (out.counts.len() >= MAX_ENTRIES && !out.counts.contains_key(&key)) {
                continue;
            }
            let as_of = as_of.filter(|d| is_date(d) && d != date);
            out.counts.insert(key, Count { weekly, as_of });
        }
        for c in out.counts.values_mut() {
            if c.as_of.as_deref() == Some(date) {
                c.as_of = None;
            }
        }
        let mut source: String = source.chars().filter(|c| !c.is_control()).collect();
        source.truncate(
            (0..=MAX_SOURCE_BYTES.min(source.len()))
                .rev()
                .find(|&i| source.is_char_boundary(i))
                .unwrap_or(0),
        );
        if !source.is_empty() {
            out.sources.push(source);
        }
        while out.sources.len() > MAX_SOURCES {
            let oldest = out
                .sources
                .iter()
                .position(|s| s.starts_with("refreshed "))
                .unwrap_or(0);
            out.sources.remove(oldest);
        }
        out
    }

    /// The day `key`'s count was made.
    pub fn as_of<'a>(&'a self, count: &'a Count) -> &'a str {
        count.as_of.as_deref().unwrap_or(&self.date)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "toolmark-popularity/1\ndate 2026-10-10\nsource a test\n\nnpm:@a/b\t5\npypi:mcp\t7\t2026-10-01\n";

    #[test]
    fn a_snapshot_reads_back_what_it_writes() {
        let s = Snapshot::parse(TEXT).unwrap();
        assert_eq!(s.counts.len(), 2);
        assert_eq!(s.as_of(&s.counts["pypi:mcp"]), "2026-10-01");
        assert_eq!(s.as_of(&s.counts["npm:@a/b"]), "2026-10-10");
        assert_eq!(s.to_text(), TEXT);
    }

    #[test]
    fn a_refresh_replaces_the_counts_it_has_and_keeps_the_others_with_their_day() {
        let s = Snapshot::parse(TEXT).unwrap();
        let r = s.refreshed(
            "2026-12-02",
            [
                ("npm:@a/b".to_owned(), 9, Some("2026-11-30".to_owned())),
                ("npm:new".to_owned(), 3, None),
                ("pypi:Not_Normal".to_owned(), 1, None),
            ],
            "refreshed 2026-12-02: a test".to_owned(),
        );
        assert_eq!(r.date, "2026-12-02");
        assert_eq!(r.counts["npm:@a/b"].weekly, 9);
        assert_eq!(r.as_of(&r.counts["npm:@a/b"]), "2026-11-30");
        assert_eq!(r.as_of(&r.counts["npm:new"]), "2026-12-02");
        // Not refreshed: the old count with its old day.
        assert_eq!(r.as_of(&r.counts["pypi:mcp"]), "2026-10-01");
        assert!(!r.counts.contains_key("pypi:Not_Normal"));
        assert_eq!(r.sources, ["a test", "refreshed 2026-12-02: a test"]);
        // What it writes reads back equal.
        assert_eq!(Snapshot::parse(&r.to_text()).unwrap(), r);
        // The snapshot's date is written once, not on every line.
        assert!(r.to_text().contains("npm:new\t3\n"));
    }

    #[test]
    fn malformed_snapshots_are_refused_with_their_line() {
        for (bad, line) in [
            ("toolmark-popularity/2\n", 1),
            ("toolmark-popularity/1\ndate 2026-13-01\n", 2),
            ("toolmark-popularity/1\ndate 2026-10-10\n\nnpm:a\t1\n", 1),
            (
                "toolmark-popularity/1\ndate 2026-10-10\nsource s\n\nnpm:a\t-1\n",
                5,
            ),
            (
                "toolmark-popularity/1\ndate 2026-10-10\nsource s\n\nnpm:a\t1\nnpm:a\t2\n",
                6,
            ),
            (
                "toolmark-popularity/1\ndate 2026-10-10\nsource s\n\npypi:A_b\t1\n",
                5,
            ),
            (
                "toolmark-popularity/1\ndate 2026-10-10\nsource s\n\ncargo:a\t1\n",
                5,
            ),
            (
                "toolmark-popularity/1\ndate 2026-10-10\nsource s\n\nnpm:a\t99999999999999999999\n",
                5,
            ),
        ] {
            match Snapshot::parse(bad) {
                Err(SnapshotError::Line { line: l, .. }) => assert_eq!(l, line, "{bad:?}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
}
