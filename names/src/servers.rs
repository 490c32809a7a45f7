//! Server-name look-alikes: an MCP registry name (`io.github.x/name`) that is not listed but
//! reads like one that is.
//!
//! There are no download counts for server names, so **being listed stands in for
//! popularity**: only a name the registry does not list is checked, against the names it
//! does. The registry verifies namespaces (`io.github.alice` is GitHub user `alice`'s), so a
//! name that is listed is its namespace owner's, never an imitation; an unlisted name that
//! reads like a listed one is either a typo in a client's configuration or a server presenting
//! itself under a name that is not its own. Rules, in order:
//!
//! 1. the same skeleton: namespace and name each reduced like a package name (confusables
//!    folded, lower case, `-_.` removed, `0`→`o`, `1`→`l`), the `/` kept:
//!    [`HOW_SEPARATORS`] (or [`HOW_CONFUSABLE`] when a non-ASCII character was read as ASCII);
//! 2. only if that finds nothing, and the skeleton has at least [`MIN_EDIT_LENGTH`]
//!    characters: one edit away over the whole skeleton (namespace included): [`HOW_ONE_EDIT`].
//!
//! HISTOR's "same name under another scope" has no counterpart: the same name under another
//! namespace is how forks and re-publications are honestly named. Among several hits the first
//! in name order is reported (no counts to rank by).

use std::collections::{HashMap, HashSet};

use crate::edit::{DeleteIndex, one_edit};
use crate::skeleton::skeleton;
use crate::{
    HOW_CONFUSABLE, HOW_ONE_EDIT, HOW_SEPARATORS, Lookalike, MAX_EDIT_CHARS, MIN_EDIT_LENGTH,
};

/// Most listed names indexed (the official registry lists a few thousand); names beyond it are
/// ignored. The one-edit index costs about 12 bytes per character per name: 50,000 names of
/// registry length took 26 MB and 0.85 s to index (release build, `examples/index_figures`).
pub const MAX_SERVER_NAMES: usize = 100_000;

/// A server name's skeleton and whether a confusable was folded.
fn server_skeleton(name: &str) -> (String, bool) {
    let (namespace, rest) = name.split_once('/').unwrap_or(("", name));
    let a = skeleton(namespace);
    let b = skeleton(rest);
    (
        format!("{}/{}", a.text, b.text),
        a.confusable || b.confusable,
    )
}

/// The listed server names, indexed.
pub struct ServerNames {
    names: Vec<String>,
    listed: HashSet<String>,
    skeletons: Vec<Vec<char>>,
    by_skeleton: HashMap<String, Vec<u32>>,
    edits: DeleteIndex,
}

impl ServerNames {
    /// Index `names` (at most [`MAX_SERVER_NAMES`]).
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> ServerNames {
        let mut names: Vec<String> = names
            .into_iter()
            .take(MAX_SERVER_NAMES)
            .map(str::to_owned)
            .collect();
        names.sort();
        names.dedup();
        let mut by_skeleton: HashMap<String, Vec<u32>> = HashMap::new();
        let mut skeletons = Vec::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            let (s, _) = server_skeleton(n);
            skeletons.push(s.chars().collect::<Vec<char>>());
            by_skeleton.entry(s).or_default().push(i as u32);
        }
        let edits = DeleteIndex::build(
            skeletons
                .iter()
                .enumerate()
                .filter(|(_, s)| (MIN_EDIT_LENGTH..=MAX_EDIT_CHARS).contains(&s.len()))
                .map(|(i, s)| (&s[..], i as u32)),
        );
        ServerNames {
            listed: names.iter().cloned().collect(),
            names,
            skeletons,
            by_skeleton,
            edits,
        }
    }

    /// How many names are indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no name is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Bytes held by the one-edit index.
    pub fn edit_index_bytes(&self) -> usize {
        self.edits.heap_bytes()
    }

    /// The listed name `asked` reads like, when `asked` is not itself listed.
    pub fn check(&self, asked: &str) -> Option<Lookalike> {
        if self.listed.contains(asked) {
            return None;
        }
        let (text, confusable) = server_skeleton(asked);
        let chars: Vec<char> = text.chars().collect();
        let hit = |i: u32, how| Lookalike {
            of: self.names[i as usize].clone(),
            how,
            weekly: None,
            own_weekly: None,
        };
        if let Some(&i) = self.by_skeleton.get(&text).and_then(|v| v.first()) {
            return Some(hit(
                i,
                if confusable {
                    HOW_CONFUSABLE
                } else {
                    HOW_SEPARATORS
                },
            ));
        }
        if !(MIN_EDIT_LENGTH..=MAX_EDIT_CHARS).contains(&chars.len()) {
            return None;
        }
        self.edits
            .candidates(&chars)
            .into_iter()
            .find(|&i| one_edit(&chars, &self.skeletons[i as usize]))
            .map(|i| hit(i, HOW_ONE_EDIT))
    }
}
