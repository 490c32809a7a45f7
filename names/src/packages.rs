//! Package look-alikes: HISTOR's rules over a popularity snapshot, plus Unicode confusables.

use std::collections::{HashMap, HashSet};

use crate::edit::{DeleteIndex, one_edit};
use crate::skeleton::{Skeleton, skeleton};
use crate::snapshot::{MAX_KEY_BYTES, Snapshot};
use crate::{
    GENERIC_SCOPES, HOW_CONFUSABLE, HOW_ONE_EDIT, HOW_OTHER_SCOPE, HOW_SEPARATORS, Lookalike,
    MAX_EDIT_CHARS, MIN_EDIT_LENGTH, POPULAR_WEEKLY, RATIO, Weekly,
};

/// A package registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Registry {
    /// npm (`npm:`): scopes, and `-`, `_`, `.` and case make different packages.
    Npm,
    /// PyPI (`pypi:`): no scopes; names compare PEP 503-normalised, so `-_.` and case variants
    /// are the same project, never a look-alike of it.
    Pypi,
}

/// A package key as `/check` takes it: `npm:name`, `npm:@scope/name` or `pypi:name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackageKey {
    /// Its registry.
    pub registry: Registry,
    /// The npm scope with its `@`, or empty.
    pub scope: String,
    /// The name without scope (PyPI's PEP 503-normalised).
    pub name: String,
}

/// Why a package key was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    /// Not `npm:` or `pypi:`.
    #[error("a package is npm:NAME, npm:@SCOPE/NAME or pypi:NAME")]
    Registry,
    /// Empty, too long, or with a character no package name has.
    #[error("not a package name")]
    Name,
}

/// The PEP 503 normal form of a PyPI name: lower case, runs of `-`, `_`, `.` as one `-`.
pub fn pep503(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
            continue;
        }
        if sep && !out.is_empty() {
            out.push('-');
        }
        sep = false;
        out.extend(c.to_lowercase());
    }
    out
}

fn plain(s: &str) -> bool {
    !s.is_empty()
        && !s
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '@' | ':'))
}

impl PackageKey {
    /// Read a key. An npm key may end in `@VERSION`, which is dropped.
    pub fn parse(key: &str) -> Result<PackageKey, KeyError> {
        if key.len() > MAX_KEY_BYTES {
            return Err(KeyError::Name);
        }
        let (registry, rest) = key.split_once(':').ok_or(KeyError::Registry)?;
        match registry {
            "npm" => {
                let (scope, name) = match rest.strip_prefix('@') {
                    Some(scoped) => {
                        let (scope, name) = scoped.split_once('/').ok_or(KeyError::Name)?;
                        (format!("@{scope}"), name)
                    }
                    None => (String::new(), rest),
                };
                let name = name.split_once('@').map_or(name, |(n, _)| n);
                if (!scope.is_empty() && !plain(&scope[1..])) || !plain(name) {
                    return Err(KeyError::Name);
                }
                Ok(PackageKey {
                    registry: Registry::Npm,
                    scope,
                    name: name.to_owned(),
                })
            }
            "pypi" => {
                let name = pep503(rest);
                if !plain(&name) {
                    return Err(KeyError::Name);
                }
                Ok(PackageKey {
                    registry: Registry::Pypi,
                    scope: String::new(),
                    name,
                })
            }
            _ => Err(KeyError::Registry),
        }
    }

    /// The key's normal form (`npm:@scope/name`, `npm:name`, `pypi:name`).
    pub fn key(&self) -> String {
        match (self.registry, self.scope.is_empty()) {
            (Registry::Npm, true) => format!("npm:{}", self.name),
            (Registry::Npm, false) => format!("npm:{}/{}", self.scope, self.name),
            (Registry::Pypi, _) => format!("pypi:{}", self.name),
        }
    }
}

struct Entry {
    key: String,
    key_parts: PackageKey,
    weekly: u64,
    as_of: String,
    skeleton: Vec<char>,
}

/// The look-alike index of one snapshot: built once, then asked about any package.
///
/// Building it costs one skeleton per listed package and, for the popular ones (at least
/// [`POPULAR_WEEKLY`] a week) of at least [`MIN_EDIT_LENGTH`] characters, one hash per
/// one-character deletion; the bundled snapshot's figures are in `names/data/SOURCES`.
pub struct LookalikeIndex {
    date: String,
    sources: Vec<String>,
    entries: Vec<Entry>,
    by_key: HashMap<String, u32>,
    by_skeleton: HashMap<(Registry, String), Vec<u32>>,
    edits: DeleteIndex,
    generic: HashSet<(Registry, String)>,
    generic_list: Vec<(Registry, Vec<char>)>,
    generic_edits: DeleteIndex,
}

impl LookalikeIndex {
    /// Index `snapshot`.
    pub fn new(snapshot: &Snapshot) -> LookalikeIndex {
        let mut entries = Vec::with_capacity(snapshot.counts.len());
        let mut by_key = HashMap::with_capacity(snapshot.counts.len());
        let mut scopes: HashMap<(Registry, String), usize> = HashMap::new();
        for (key, count) in &snapshot.counts {
            // The snapshot's keys were parsed when it was read.
            let Ok(parts) = PackageKey::parse(key) else {
                continue;
            };
            *scopes
                .entry((parts.registry, parts.name.to_lowercase()))
                .or_default() += 1;
            by_key.insert(key.clone(), entries.len() as u32);
            entries.push(Entry {
                key: key.clone(),
                skeleton: skeleton(&parts.name).text.chars().collect(),
                key_parts: parts,
                weekly: count.weekly,
                as_of: snapshot.as_of(count).to_owned(),
            });
        }
        // Generic names (mcp, mcp-server, cli) and their one-edit variants are nobody's brand.
        let mut generic = HashSet::new();
        for ((registry, name), n) in scopes {
            if n >= GENERIC_SCOPES {
                generic.insert((registry, skeleton(&name).text));
            }
        }
        let mut generic_list: Vec<(Registry, Vec<char>)> = generic
            .iter()
            .map(|(r, s)| (*r, s.chars().collect()))
            .collect();
        generic_list.sort();
        let generic_edits = DeleteIndex::build(
            generic_list
                .iter()
                .enumerate()
                .map(|(i, (_, s))| (&s[..], i as u32)),
        );
        let mut index = LookalikeIndex {
            date: snapshot.date.clone(),
            sources: snapshot.sources.clone(),
            entries,
            by_key,
            by_skeleton: HashMap::new(),
            edits: DeleteIndex::default(),
            generic,
            generic_list,
            generic_edits,
        };
        let mut editable = Vec::new();
        for (i, e) in index.entries.iter().enumerate() {
            if e.weekly < POPULAR_WEEKLY || index.near_generic(e.key_parts.registry, &e.skeleton) {
                continue;
            }
            index
                .by_skeleton
                .entry((e.key_parts.registry, e.skeleton.iter().collect()))
                .or_default()
                .push(i as u32);
            if (MIN_EDIT_LENGTH..=MAX_EDIT_CHARS).contains(&e.skeleton.len()) {
                editable.push((&e.skeleton[..], i as u32));
            }
        }
        index.edits = DeleteIndex::build(editable);
        index
    }

    fn near_generic(&self, registry: Registry, s: &[char]) -> bool {
        self.generic
            .contains(&(registry, s.iter().collect::<String>()))
            || s.len() <= MAX_EDIT_CHARS
                && self.generic_edits.candidates(s).into_iter().any(|i| {
                    let (r, g) = &self.generic_list[i as usize];
                    *r == registry && one_edit(s, g)
                })
    }

    /// The snapshot's date.
    pub fn date(&self) -> &str {
        &self.date
    }

    /// The snapshot's sources.
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    /// How many packages the snapshot lists.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the snapshot lists no package.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes held by the one-edit indexes (the figure the docs quote).
    pub fn edit_index_bytes(&self) -> usize {
        self.edits.heap_bytes() + self.generic_edits.heap_bytes()
    }

    /// `key`'s weekly count and its day, when the snapshot lists it.
    pub fn weekly(&self, key: &PackageKey) -> Option<Weekly> {
        let e = &self.entries[*self.by_key.get(&key.key())? as usize];
        Some(Weekly {
            count: e.weekly,
            as_of: e.as_of.clone(),
        })
    }

    /// The popular package `key` imitates, and how; `None` when it imitates none (or is
    /// itself the popular one). Rules in HISTOR's order: the same skeleton (under another
    /// scope, or spelled with other separators or look-alike characters); only when that
    /// finds nothing, one edit away. The most-downloaded hit is reported, and only when it
    /// has at least [`RATIO`] × max(own, 1) weekly downloads.
    pub fn check(&self, key: &PackageKey) -> Option<Lookalike> {
        let own_key = key.key();
        let own = self
            .by_key
            .get(&own_key)
            .map_or(0, |&i| self.entries[i as usize].weekly);
        let Skeleton { text, confusable } = skeleton(&key.name);
        let chars: Vec<char> = text.chars().collect();
        let lower = key.name.to_lowercase();
        let mut found: Vec<(u32, &'static str)> = Vec::new();
        for &i in self
            .by_skeleton
            .get(&(key.registry, text))
            .into_iter()
            .flatten()
        {
            let e = &self.entries[i as usize];
            if e.key == own_key {
                continue;
            }
            if e.key_parts.name.to_lowercase() == lower {
                // Only a distinctive name is worth stealing, and the same name in the same
                // scope is the same package.
                if e.key_parts.scope == key.scope {
                    continue;
                }
                found.push((i, HOW_OTHER_SCOPE));
            } else if confusable {
                found.push((i, HOW_CONFUSABLE));
            } else {
                found.push((i, HOW_SEPARATORS));
            }
        }
        if found.is_empty()
            && (MIN_EDIT_LENGTH..=MAX_EDIT_CHARS).contains(&chars.len())
            && !self.near_generic(key.registry, &chars)
        {
            for i in self.edits.candidates(&chars) {
                let e = &self.entries[i as usize];
                if e.key_parts.registry == key.registry
                    && e.key != own_key
                    && one_edit(&chars, &e.skeleton)
                {
                    found.push((i, HOW_ONE_EDIT));
                }
            }
        }
        let (best, how) = found.into_iter().max_by(|a, b| {
            let (ea, eb) = (&self.entries[a.0 as usize], &self.entries[b.0 as usize]);
            ea.weekly.cmp(&eb.weekly).then_with(|| eb.key.cmp(&ea.key))
        })?;
        let e = &self.entries[best as usize];
        if e.weekly < RATIO.saturating_mul(own.max(1)) {
            return None;
        }
        Some(Lookalike {
            of: e.key.clone(),
            how,
            weekly: Some(Weekly {
                count: e.weekly,
                as_of: e.as_of.clone(),
            }),
            own_weekly: Some(own),
        })
    }
}
