//! What changed between two tool sets, field by field, for people and for [`crate::classify`].
//!
//! [`diff`] matches tools by name and describes every difference: tools added, removed,
//! renamed (a removed and an added tool whose definitions are near-identical, see
//! [`Rename`]) and modified; per modified tool a word diff of the description, JSON-path changes of the input
//! and output schemas, the effective MCP hints and changed annotation members, and every other
//! changed top-level member; plus the outside addresses the new set mentions that the old one
//! did not. Values are compared semantically (RFC 8785 canonical bytes, so `1.0` equals `1` and
//! member order does not matter).
//!
//! Output is bounded whatever the input size: every list has a cap (the `pub const`s below),
//! with a total or a `truncated` count next to it, and [`Diff::truncated`] says whether any cap
//! was hit. It does not judge the change (that is [`crate::classify`]) and does not follow
//! `$ref`s.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::canon::{self, Numbers};
use crate::json::{self, Json, Str};
use crate::model::{Tool, ToolSet};
use crate::text::{self, Address, AddressKind, AddressScan, WordEdit};

pub use crate::text::VALUE_MAX_CHARS;

/// At most this many modified tools are detailed ([`Diff::modified_total`] counts them all).
/// The largest set in this repository's corpus (okta-mcp-server) has 108 tools, so 500 details
/// a change to every tool of a set several times that size, while a hostile set of 100,000
/// tools still yields a bounded diff.
pub const MAX_MODIFIED_DETAILED: usize = 500;

/// At most this many added and this many removed tool names are listed. Names are short, so
/// 1,000 keeps the list under a few hundred kilobytes while covering any real server.
pub const MAX_LISTED_NAMES: usize = 1_000;

/// Tool names in the output are cut to this many characters. The MCP specification advises
/// names of at most 128 characters; 256 shows every sensible name whole.
pub const NAME_MAX_CHARS: usize = 256;

/// A description longer than this (in characters, either side) gets bounded snippets instead
/// of a word diff: the word diff costs O((N+M)·D) in tokens. The longest description in this
/// repository's corpus is about 3,000 characters, so 20,000 word-diffs any plausible one; a
/// worst case (two unrelated 20,000-character texts) takes a few milliseconds in release.
pub const WORD_DIFF_MAX_CHARS: usize = 20_000;

/// At most this many description characters (old plus new) are word-diffed in one [`diff`];
/// later descriptions get snippets. At the worst case measured for [`WORD_DIFF_MAX_CHARS`]
/// (a few milliseconds per 40,000 characters) this bounds the total work on a huge hostile set
/// well under a second.
pub const WORD_DIFF_BUDGET_CHARS: usize = 2_000_000;

/// Snippets of over-long descriptions are cut to this many characters.
pub const SNIPPET_MAX_CHARS: usize = 500;

/// At most this many path changes are listed per schema ([`SchemaDiff::truncated`] counts the
/// rest). Real schema edits touch a handful of paths; 200 shows a whole rewritten schema of a
/// typical tool.
pub const MAX_PATH_CHANGES: usize = 200;

/// Paths in the output are cut to this many characters (a path is as long as the property
/// names along it, which a server chooses).
pub const PATH_MAX_CHARS: usize = 1_000;

/// At most this many changed annotation members and this many other changed top-level members
/// are listed per tool. Real tools have fewer than ten of either.
pub const MAX_MEMBER_CHANGES: usize = 100;

/// At most this many new addresses are listed ([`Diff::new_addresses_total`] counts them all).
pub const MAX_NEW_ADDRESSES: usize = 50;

/// A removed and an added tool that take the same parameters are a rename when their
/// descriptions are at least this similar, in percent: `100 × (1 − d / n)` with `d` the Levenshtein distance of
/// the two descriptions after NFC and `n` the longer one's length in characters (two empty
/// descriptions are 100 % similar). 80 % keeps a description that names the tool (`Use
/// get_weather to…` → `Use fetch_weather to…`) and a rewording of a few words, and refuses two
/// different tools that happen to share a schema (`{}` is common): their descriptions share
/// little beyond common words.
pub const RENAME_MIN_SIMILARITY_PERCENT: usize = 80;

/// Work allowed for comparing descriptions when looking for renames, in Levenshtein cells (one
/// cell is one step of the banded distance: a pair of texts of `n` characters at threshold `k`
/// costs about `n · (2k + 1)`). 50,000,000 cells take well under a second in release; a real
/// rename of a server (a few dozen tools with descriptions of a few hundred characters) costs
/// a few million. Pairs past the budget are not compared (they stay an added and a removed
/// tool) and [`Diff::truncated`] is set.
pub const RENAME_BUDGET_CELLS: usize = 50_000_000;

/// The four MCP tool hints and their defaults when absent (MCP 2025-06-18 `ToolAnnotations`):
/// a tool is by default not read-only, destructive, not idempotent and open-world.
pub const HINTS: [(&str, bool); 4] = [
    ("readOnlyHint", false),
    ("destructiveHint", true),
    ("idempotentHint", false),
    ("openWorldHint", true),
];

/// The difference between two tool sets.
///
/// Tools are matched by their string `name`. An entry without a string name, and every
/// occurrence of a name after its first, cannot be matched: such entries are only counted in
/// [`Diff::unmatched_old`] and [`Diff::unmatched_new`], and [`Diff::unmatched_changed`] says
/// whether the two sets' unmatched entries differ (compared as multisets of canonical values).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Diff {
    /// Names only in the new set, in UTF-16 order, at most [`MAX_LISTED_NAMES`].
    pub added: Vec<String>,
    /// How many names are only in the new set.
    pub added_total: usize,
    /// Names only in the old set, in UTF-16 order, at most [`MAX_LISTED_NAMES`].
    pub removed: Vec<String>,
    /// How many names are only in the old set.
    pub removed_total: usize,
    /// Removed tools paired with an added tool as a rename ([`Rename`]), in UTF-16 order of the
    /// new name, at most [`MAX_LISTED_NAMES`]. Their names are in neither [`Diff::added`] nor
    /// [`Diff::removed`] (nor in the totals). Absent from a stored diff that has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renames: Vec<Rename>,
    /// How many renames there are.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub renames_total: usize,
    /// Tools in both whose definitions differ, in UTF-16 name order, at most
    /// [`MAX_MODIFIED_DETAILED`].
    pub modified: Vec<ToolDiff>,
    /// How many tools in both differ.
    pub modified_total: usize,
    /// How many tools in both are the same.
    pub unchanged: usize,
    /// Entries of the old set that cannot be matched by name.
    pub unmatched_old: usize,
    /// Entries of the new set that cannot be matched by name.
    pub unmatched_new: usize,
    /// Whether the unmatched entries of the two sets differ.
    pub unmatched_changed: bool,
    /// Outside addresses (hosts, e-mail addresses, IP literals; see [`text::addresses`]) in the
    /// new set's strings and not in the old set's, in (kind, value) order, at most
    /// [`MAX_NEW_ADDRESSES`], each value cut to [`VALUE_MAX_CHARS`].
    pub new_addresses: Vec<Address>,
    /// How many new addresses there are.
    pub new_addresses_total: usize,
    /// Whether either set held more than [`text::ADDRESS_SCAN_MAX_CHARS`] characters of strings,
    /// so that [`Diff::new_addresses`] was computed on a prefix.
    pub address_scan_truncated: bool,
    /// Whether any list in this diff was cut by its cap, a description got snippets instead of a
    /// word diff, or the address scan was cut. (A value cut to its cap carries its own
    /// `…[+N chars]` marker instead.)
    pub truncated: bool,
}

impl Diff {
    /// Whether the two sets are the same (no tool added, removed or modified, and the same
    /// unmatched entries).
    pub fn is_empty(&self) -> bool {
        self.added_total == 0
            && self.removed_total == 0
            && self.renames_total == 0
            && self.modified_total == 0
            && !self.unmatched_changed
    }
}

/// Serde's `skip_serializing_if` for counts.
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A removed tool and an added tool whose definitions are near-identical: shown as one tool
/// renamed, not as two unrelated changes.
///
/// Near-identical: both take the same parameters — the same names in their input schemas'
/// top-level `properties` and the same `required` names (both absent reads as none) — and
/// their descriptions are at least [`RENAME_MIN_SIMILARITY_PERCENT`] % similar. Everything else
/// may differ, the rest of the input schema included (a type, a constraint, an
/// `additionalProperties`): those differences are in [`Rename::changes`] and are classified as
/// a modified tool's are, so a rename cannot hide them. Pairs are chosen greedily, best first:
/// identical but for the name before the rest, then by similarity (exact, not rounded), then by
/// old name and new name in UTF-16 order; a tool is in at most one pair. So the pairing is a
/// function of the two sets. Tools that take other parameters are other tools to a client:
/// they stay a removed and an added tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rename {
    /// The old name, cut to [`NAME_MAX_CHARS`].
    pub from: String,
    /// The new name, cut to [`NAME_MAX_CHARS`].
    pub to: String,
    /// Whether the two definitions are canonically equal but for `name`.
    pub identical: bool,
    /// The descriptions' similarity in percent, rounded down (100 when they are equal).
    pub similarity: u8,
    /// What else changed, as for a modified tool (its `name` is the new name); `None` when
    /// identical, or when [`MAX_MODIFIED_DETAILED`] renames were already detailed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<ToolDiff>,
}

/// How one tool present in both sets changed. A field is `None` (or empty) when it did not.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolDiff {
    /// The tool's name, cut to [`NAME_MAX_CHARS`].
    pub name: String,
    /// The description's change.
    pub description: Option<DescriptionDiff>,
    /// The `inputSchema`'s changes (an absent schema has no leaves).
    pub input_schema: Option<SchemaDiff>,
    /// The `outputSchema`'s changes (an absent schema has no leaves).
    pub output_schema: Option<SchemaDiff>,
    /// The `annotations`' changes.
    pub annotations: Option<AnnotationsDiff>,
    /// Every other top-level member that changed (`title`, `icons`, `execution`, `_meta`,
    /// vendor keys), in UTF-16 order, at most [`MAX_MEMBER_CHANGES`].
    pub members: Vec<MemberChange>,
    /// How many changed members were left out of [`ToolDiff::members`].
    pub members_truncated: usize,
}

/// A description change. An absent description reads as empty text; one that is not a string
/// reads as its compact JSON.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum DescriptionDiff {
    /// A word diff (`["=", text]`, `["-", text]`, `["+", text]` runs).
    Words {
        /// The runs, in order.
        ops: Vec<WordEdit>,
    },
    /// One side is longer than [`WORD_DIFF_MAX_CHARS`] (or the diff's word-diff budget is
    /// spent): both sides cut to [`SNIPPET_MAX_CHARS`], with their full lengths.
    Snippets {
        /// The old text, cut.
        old: String,
        /// The new text, cut.
        new: String,
        /// The old text's length in characters.
        old_chars: usize,
        /// The new text's length in characters.
        new_chars: usize,
    },
}

/// Changes of one schema, flattened to leaves.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SchemaDiff {
    /// At most [`MAX_PATH_CHANGES`] leaf changes, in document order (members in UTF-16 order).
    pub changes: Vec<PathChange>,
    /// How many changes were left out.
    pub truncated: usize,
}

/// One changed leaf of a schema.
///
/// `path` is an RFC 9535 normalized path from the schema's root (`$['properties']['city']
/// ['type']`). A leaf is a scalar or an empty object or array. Arrays are compared element by
/// element, except `required` and `enum`, which are sets: a removed element is reported at its
/// old index with no `new`, an added one at its new index with no `old` (so both may share a
/// path). `old`/`new` are compact canonical JSON, absent when the leaf is absent on that side,
/// cut to [`VALUE_MAX_CHARS`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathChange {
    /// The leaf's normalized path, cut to [`PATH_MAX_CHARS`].
    pub path: String,
    /// The old leaf.
    pub old: Option<String>,
    /// The new leaf.
    pub new: Option<String>,
}

/// Annotation changes: the four hints (always all four, so old and new can be read side by
/// side) and every other changed annotation member.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnnotationsDiff {
    /// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`, in that order.
    pub hints: Vec<HintState>,
    /// Changed members other than the four hints (`title`, vendor keys), at most
    /// [`MAX_MEMBER_CHANGES`].
    pub members: Vec<MemberChange>,
}

/// One hint's effective value on each side, and whether it was given explicitly (as a JSON
/// boolean: any other value is ignored and the default applies).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HintState {
    /// The hint's member name (read back as the [`HINTS`] entry's; another name is refused).
    // The path spelling keeps serde's derive from taking this for a `&str` borrowed from the
    // input (which would make the type readable only from `'static` text).
    #[serde(deserialize_with = "known_hint")]
    pub hint: &'static std::primitive::str,
    /// The old effective value.
    pub old: bool,
    /// The new effective value.
    pub new: bool,
    /// Whether the old annotations gave it as a boolean.
    pub old_explicit: bool,
    /// Whether the new annotations give it as a boolean.
    pub new_explicit: bool,
}

/// A changed member: compact canonical JSON of each side (absent when absent), cut to
/// [`VALUE_MAX_CHARS`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberChange {
    /// The member's name, cut to [`NAME_MAX_CHARS`] (empty for a non-object `annotations`
    /// reported whole).
    pub member: String,
    /// The old value.
    pub old: Option<String>,
    /// The new value.
    pub new: Option<String>,
}

/// Reads a hint name back as the `&'static str` of its [`HINTS`] entry.
fn known_hint<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let name = <String as serde::Deserialize>::deserialize(d)?;
    HINTS
        .iter()
        .find(|(h, _)| *h == name)
        .map(|(h, _)| *h)
        .ok_or_else(|| serde::de::Error::custom(format_args!("unknown hint {name:?}")))
}

/// The RFC 8785 canonical bytes of `v` (ECMAScript numbers, which never fail).
pub fn canonical(v: &Json) -> Vec<u8> {
    canon::to_vec(v, Numbers::Ecmascript).unwrap_or_default()
}

/// Whether two values are the same JSON value (equal canonical bytes).
pub fn same(a: &Json, b: &Json) -> bool {
    a == b || canonical(a) == canonical(b)
}

/// Whether two optional values are the same (both absent, or both present and [`same`]).
pub fn same_opt(a: Option<&Json>, b: Option<&Json>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => same(a, b),
        _ => false,
    }
}

/// Compact canonical JSON text of `v` (an unpaired surrogate shows as a `\udxxx` escape).
pub fn compact(v: &Json) -> String {
    String::from_utf8(canonical(v)).unwrap_or_default()
}

/// [`compact`] cut to [`VALUE_MAX_CHARS`].
pub fn compact_capped(v: &Json) -> String {
    text::cap(&compact(v), VALUE_MAX_CHARS)
}

/// Append `['key']` to an RFC 9535 normalized path (with its escapes for `'`, `\` and control
/// characters).
pub fn push_key(path: &mut String, key: &str) {
    path.push_str("['");
    for c in key.chars() {
        match c {
            '\'' => path.push_str("\\'"),
            '\\' => path.push_str("\\\\"),
            '\u{8}' => path.push_str("\\b"),
            '\u{c}' => path.push_str("\\f"),
            '\n' => path.push_str("\\n"),
            '\r' => path.push_str("\\r"),
            '\t' => path.push_str("\\t"),
            c if (c as u32) < 0x20 => path.push_str(&format!("\\u{:04x}", c as u32)),
            c => path.push(c),
        }
    }
    path.push_str("']");
}

/// Append `[index]` to a normalized path.
pub fn push_index(path: &mut String, index: usize) {
    path.push_str(&format!("[{index}]"));
}

/// A hint's effective value and whether it was explicit (a JSON boolean), for a tool's
/// `annotations` value (absent or not an object: every hint takes its default).
pub fn hint(annotations: Option<&Json>, name: &str, default: bool) -> (bool, bool) {
    match annotations.and_then(|a| a.get(name)) {
        Some(Json::Bool(b)) => (*b, true),
        _ => (default, false),
    }
}

/// Object members sorted by UTF-16 name order, from both sides: each name once, with its value
/// on each side.
pub(crate) fn member_union<'a>(
    old: Option<&'a Json>,
    new: Option<&'a Json>,
) -> Vec<(&'a Str, Option<&'a Json>, Option<&'a Json>)> {
    member_union_of(
        old.and_then(Json::as_object).unwrap_or(&[]),
        new.and_then(Json::as_object).unwrap_or(&[]),
    )
}

/// [`member_union`] over member lists.
pub(crate) fn member_union_of<'a>(
    om: &'a [(Str, Json)],
    nm: &'a [(Str, Json)],
) -> Vec<(&'a Str, Option<&'a Json>, Option<&'a Json>)> {
    let mut keys: Vec<&Str> = om.iter().chain(nm).map(|(k, _)| k).collect();
    keys.sort_by(|a, b| a.utf16_cmp(b));
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let o = om.iter().find(|(ok, _)| ok == k).map(|(_, v)| v);
            let n = nm.iter().find(|(nk, _)| nk == k).map(|(_, v)| v);
            (k, o, n)
        })
        .collect()
}

/// The tools of two sets paired by name.
pub(crate) struct Matching<'a> {
    /// Every name in either set, UTF-16 order, with the first tool of that name on each side.
    pub pairs: Vec<(&'a str, Option<&'a Tool>, Option<&'a Tool>)>,
    /// Indexes of old entries that cannot be matched (no string name, or a repeated name).
    pub unmatched_old: Vec<usize>,
    /// Indexes of new entries that cannot be matched.
    pub unmatched_new: Vec<usize>,
}

fn index_by_name(set: &ToolSet) -> (HashMap<&str, &Tool>, Vec<usize>) {
    let mut by_name: HashMap<&str, &Tool> = HashMap::new();
    let mut unmatched = Vec::new();
    for (i, t) in set.tools.iter().enumerate() {
        match t.name() {
            Some(n) if !by_name.contains_key(n) => {
                by_name.insert(n, t);
            }
            _ => unmatched.push(i),
        }
    }
    (by_name, unmatched)
}

pub(crate) fn match_tools<'a>(old: &'a ToolSet, new: &'a ToolSet) -> Matching<'a> {
    let (om, unmatched_old) = index_by_name(old);
    let (nm, unmatched_new) = index_by_name(new);
    let mut names: Vec<&str> = om.keys().chain(nm.keys()).copied().collect();
    names.sort_by(|a, b| json::utf16_cmp(a, b));
    names.dedup();
    let pairs = names
        .into_iter()
        .map(|n| (n, om.get(n).copied(), nm.get(n).copied()))
        .collect();
    Matching {
        pairs,
        unmatched_old,
        unmatched_new,
    }
}

/// A removed and an added tool paired as a rename (see [`Rename`] for the definition).
pub(crate) struct RenamePair<'a> {
    /// The old name.
    pub from: &'a str,
    /// The new name.
    pub to: &'a str,
    /// The removed tool.
    pub old: &'a Tool,
    /// The added tool.
    pub new: &'a Tool,
    /// Canonically equal but for `name`.
    pub identical: bool,
    /// The descriptions' similarity in percent, rounded down.
    pub similarity: u8,
}

/// The renames among the tools only one side of a [`Matching`] has.
pub(crate) struct Renames<'a> {
    /// The pairs, in UTF-16 order of the new name.
    pub pairs: Vec<RenamePair<'a>>,
    /// Whether [`RENAME_BUDGET_CELLS`] ran out, leaving candidate pairs uncompared.
    pub truncated: bool,
    /// The old names of the pairs.
    from: HashSet<&'a str>,
    /// The index in `pairs` of each new name.
    to: HashMap<&'a str, usize>,
}

impl<'a> Renames<'a> {
    /// Whether `name` is the old name of a rename.
    pub fn is_from(&self, name: &str) -> bool {
        self.from.contains(name)
    }

    /// The rename whose new name is `name`.
    pub fn to(&self, name: &str) -> Option<&RenamePair<'a>> {
        self.to.get(name).map(|&i| &self.pairs[i])
    }
}

/// A description for the rename test: NFC characters (an absent one is empty).
fn rename_text(t: &Tool) -> Vec<char> {
    text::nfc(&description_text(t.get("description")))
        .chars()
        .collect()
}

/// Pair removed and added tools as renames ([`Rename`]): candidates take the same parameters
/// ([`Parameters`]) and have descriptions at least [`RENAME_MIN_SIMILARITY_PERCENT`] % similar, within
/// [`RENAME_BUDGET_CELLS`]; then greedily best first.
pub(crate) fn find_renames<'a>(m: &Matching<'a>) -> Renames<'a> {
    let removed: Vec<(&str, &Tool)> = m
        .pairs
        .iter()
        .filter_map(|&(n, o, new)| o.filter(|_| new.is_none()).map(|o| (n, o)))
        .collect();
    let added: Vec<(&str, &Tool)> = m
        .pairs
        .iter()
        .filter_map(|&(n, old, new)| new.filter(|_| old.is_none()).map(|t| (n, t)))
        .collect();
    let mut out = Renames {
        pairs: Vec::new(),
        truncated: false,
        from: HashSet::new(),
        to: HashMap::new(),
    };
    if removed.is_empty() || added.is_empty() {
        return out;
    }
    let mut by_params: HashMap<Parameters, Vec<usize>> = HashMap::new();
    for (j, (_, t)) in added.iter().enumerate() {
        by_params.entry(parameters(t)).or_default().push(j);
    }
    let added_texts: Vec<Vec<char>> = added.iter().map(|(_, t)| rename_text(t)).collect();
    let other_pct = 100 - RENAME_MIN_SIMILARITY_PERCENT;
    let mut budget = RENAME_BUDGET_CELLS;
    // (identical, similar characters, longer length, removed index, added index)
    let mut candidates: Vec<(bool, usize, usize, usize, usize)> = Vec::new();
    for (i, (_, o)) in removed.iter().enumerate() {
        let Some(group) = by_params.get(&parameters(o)) else {
            continue;
        };
        let a = rename_text(o);
        for &j in group {
            let b = &added_texts[j];
            let longer = a.len().max(b.len());
            let allowed = longer * other_pct / 100;
            if a.len().abs_diff(b.len()) > allowed {
                continue;
            }
            let distance = if a == *b {
                0
            } else {
                let cost = (a.len() + 1) * (2 * allowed + 1);
                if cost > budget {
                    out.truncated = true;
                    continue;
                }
                budget -= cost;
                match text::levenshtein_within(&a, b, allowed) {
                    Some(d) => d,
                    None => continue,
                }
            };
            let identical = distance == 0 && same_but_name(&o.value, &added[j].1.value);
            candidates.push((identical, longer - distance, longer, i, j));
        }
    }
    // Best first: identical, then the larger similarity (compared exactly as fractions; two
    // empty descriptions are 1/1), then old and new name order (the indexes follow it).
    let ratio = |c: &(bool, usize, usize, usize, usize)| {
        if c.2 == 0 {
            (1u128, 1u128)
        } else {
            (c.1 as u128, c.2 as u128)
        }
    };
    candidates.sort_by(|x, y| {
        let ((xn, xd), (yn, yd)) = (ratio(x), ratio(y));
        y.0.cmp(&x.0)
            .then((yn * xd).cmp(&(xn * yd)))
            .then(x.3.cmp(&y.3))
            .then(x.4.cmp(&y.4))
    });
    let (mut used_old, mut used_new) = (vec![false; removed.len()], vec![false; added.len()]);
    for c in &candidates {
        let (identical, _, _, i, j) = *c;
        if used_old[i] || used_new[j] {
            continue;
        }
        used_old[i] = true;
        used_new[j] = true;
        let (n, d) = ratio(c);
        out.pairs.push(RenamePair {
            from: removed[i].0,
            to: added[j].0,
            old: removed[i].1,
            new: added[j].1,
            identical,
            similarity: u8::try_from(n * 100 / d).unwrap_or(100),
        });
    }
    out.pairs.sort_by(|x, y| json::utf16_cmp(x.to, y.to));
    out.from = out.pairs.iter().map(|p| p.from).collect();
    out.to = out
        .pairs
        .iter()
        .enumerate()
        .map(|(i, p)| (p.to, i))
        .collect();
    out
}

/// A tool's parameters as a client passes them: the names of the input schema's top-level
/// `properties` and of its `required` array, each sorted (empty when absent or not of that type).
type Parameters = (Vec<String>, Vec<String>);

/// The [`Parameters`] of a tool.
fn parameters(t: &Tool) -> Parameters {
    let schema = t.get("inputSchema");
    let mut properties: Vec<String> = schema
        .and_then(|s| s.get("properties"))
        .and_then(Json::as_object)
        .map(|m| m.iter().map(|(k, _)| k.lossy().into_owned()).collect())
        .unwrap_or_default();
    let mut required: Vec<String> = schema
        .and_then(|s| s.get("required"))
        .and_then(Json::as_array)
        .map(|a| a.iter().map(compact).collect())
        .unwrap_or_default();
    properties.sort_unstable();
    required.sort_unstable();
    required.dedup();
    (properties, required)
}

/// Whether two tool objects are canonically equal once `name` is set aside.
fn same_but_name(o: &Json, n: &Json) -> bool {
    member_union(Some(o), Some(n))
        .into_iter()
        .all(|(k, a, b)| k.as_str() == Some("name") || same_opt(a, b))
}

/// Whether the unmatched entries of two sets differ, as multisets of canonical values.
pub(crate) fn unmatched_differ(old: &ToolSet, m: &Matching<'_>, new: &ToolSet) -> bool {
    let canon_all = |set: &ToolSet, idx: &[usize]| {
        let mut v: Vec<Vec<u8>> = idx
            .iter()
            .map(|&i| canonical(&set.tools[i].value))
            .collect();
        v.sort();
        v
    };
    canon_all(old, &m.unmatched_old) != canon_all(new, &m.unmatched_new)
}

/// Where [`each_string`] found a string.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StrAt<'a> {
    /// A member name (the path is the member's).
    Key,
    /// The value of the member with this name.
    Member(&'a Str),
    /// An array element or the root.
    Element,
}

/// Call `f` with every string in `v` (member names too when `keys`) and its normalized path.
pub(crate) fn each_string<'a>(
    v: &'a Json,
    path: &mut String,
    keys: bool,
    f: &mut dyn FnMut(&str, &'a Str, StrAt<'a>),
) {
    each_string_at(v, StrAt::Element, path, keys, f);
}

fn each_string_at<'a>(
    v: &'a Json,
    at: StrAt<'a>,
    path: &mut String,
    keys: bool,
    f: &mut dyn FnMut(&str, &'a Str, StrAt<'a>),
) {
    match v {
        Json::String(s) => f(path, s, at),
        Json::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                each_string_at(item, StrAt::Element, path, keys, f);
                path.truncate(len);
            }
        }
        Json::Object(members) => {
            for (k, item) in members {
                let len = path.len();
                push_key(path, &k.lossy());
                if keys {
                    f(path, k, StrAt::Key);
                }
                each_string_at(item, StrAt::Member(k), path, keys, f);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Every address in every string (values and member names) of a set, under the scan budget.
pub(crate) fn set_addresses(set: &ToolSet) -> AddressScan<BTreeSet<Address>> {
    let mut scan = AddressScan::new(text::ADDRESS_SCAN_MAX_CHARS);
    for t in &set.tools {
        let mut path = String::from("$");
        each_string(&t.value, &mut path, true, &mut |_, s, _| {
            if !scan.truncated {
                scan.scan(&s.lossy());
            }
        });
    }
    scan
}

/// A description as text: the string, the compact JSON of a non-string, or empty when absent.
pub(crate) fn description_text(v: Option<&Json>) -> std::borrow::Cow<'_, str> {
    match v {
        None => "".into(),
        Some(Json::String(s)) => s.lossy(),
        Some(other) => compact(other).into(),
    }
}

pub(crate) struct Builder {
    pub(crate) word_budget: usize,
    pub(crate) truncated: bool,
}

impl Builder {
    pub(crate) fn description(
        &mut self,
        old: Option<&Json>,
        new: Option<&Json>,
    ) -> DescriptionDiff {
        let (o, n) = (description_text(old), description_text(new));
        let (oc, nc) = (o.chars().count(), n.chars().count());
        if oc <= WORD_DIFF_MAX_CHARS && nc <= WORD_DIFF_MAX_CHARS && oc + nc <= self.word_budget {
            self.word_budget -= oc + nc;
            DescriptionDiff::Words {
                ops: text::word_diff(&o, &n),
            }
        } else {
            self.truncated = true;
            DescriptionDiff::Snippets {
                old: text::cap(&o, SNIPPET_MAX_CHARS),
                new: text::cap(&n, SNIPPET_MAX_CHARS),
                old_chars: oc,
                new_chars: nc,
            }
        }
    }

    pub(crate) fn schema(&mut self, old: Option<&Json>, new: Option<&Json>) -> Option<SchemaDiff> {
        if same_opt(old, new) {
            return None;
        }
        let mut acc = SchemaDiff {
            changes: Vec::new(),
            truncated: 0,
        };
        let mut path = String::from("$");
        flatten(old, new, &mut path, false, &mut acc);
        if acc.truncated > 0 {
            self.truncated = true;
        }
        Some(acc)
    }

    pub(crate) fn members(
        &mut self,
        old: Option<&Json>,
        new: Option<&Json>,
        skip: &[&str],
    ) -> (Vec<MemberChange>, usize) {
        let mut out = Vec::new();
        let mut left_out = 0;
        for (k, o, n) in member_union(old, new) {
            if k.as_str().is_some_and(|k| skip.contains(&k)) || same_opt(o, n) {
                continue;
            }
            if out.len() >= MAX_MEMBER_CHANGES {
                left_out += 1;
                self.truncated = true;
                continue;
            }
            out.push(MemberChange {
                member: text::cap(&k.lossy(), NAME_MAX_CHARS),
                old: o.map(compact_capped),
                new: n.map(compact_capped),
            });
        }
        (out, left_out)
    }

    fn tool(&mut self, name: &str, old: &Tool, new: &Tool) -> ToolDiff {
        let (o, n) = (&old.value, &new.value);
        let description = (!same_opt(o.get("description"), n.get("description")))
            .then(|| self.description(o.get("description"), n.get("description")));
        let input_schema = self.schema(o.get("inputSchema"), n.get("inputSchema"));
        let output_schema = self.schema(o.get("outputSchema"), n.get("outputSchema"));
        let (oa, na) = (o.get("annotations"), n.get("annotations"));
        let annotations = (!same_opt(oa, na)).then(|| {
            let hints = HINTS
                .iter()
                .map(|&(h, default)| {
                    let (old, old_explicit) = hint(oa, h, default);
                    let (new, new_explicit) = hint(na, h, default);
                    HintState {
                        hint: h,
                        old,
                        new,
                        old_explicit,
                        new_explicit,
                    }
                })
                .collect();
            let hint_names: Vec<&str> = HINTS.iter().map(|h| h.0).collect();
            let (mut members, _) = self.members(oa, na, &hint_names);
            // An annotations value that is not an object is reported as a whole.
            if members.is_empty()
                && (oa.is_some_and(|a| a.as_object().is_none())
                    || na.is_some_and(|a| a.as_object().is_none()))
            {
                members.push(MemberChange {
                    member: String::new(),
                    old: oa.map(compact_capped),
                    new: na.map(compact_capped),
                });
            }
            AnnotationsDiff { hints, members }
        });
        let (members, members_truncated) = self.members(
            Some(o),
            Some(n),
            &[
                "name",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
        );
        ToolDiff {
            name: text::cap(name, NAME_MAX_CHARS),
            description,
            input_schema,
            output_schema,
            annotations,
            members,
            members_truncated,
        }
    }
}

fn is_container(v: &Json) -> bool {
    match v {
        Json::Object(m) => !m.is_empty(),
        Json::Array(a) => !a.is_empty(),
        _ => false,
    }
}

fn push_change(acc: &mut SchemaDiff, path: &str, old: Option<&Json>, new: Option<&Json>) {
    if acc.changes.len() >= MAX_PATH_CHANGES {
        acc.truncated += 1;
        return;
    }
    acc.changes.push(PathChange {
        path: text::cap(path, PATH_MAX_CHARS),
        old: old.map(compact_capped),
        new: new.map(compact_capped),
    });
}

/// Walk two values in parallel and record every leaf that differs. `set` says the values are
/// the array of a `required` or `enum` member.
fn flatten(
    old: Option<&Json>,
    new: Option<&Json>,
    path: &mut String,
    set: bool,
    acc: &mut SchemaDiff,
) {
    if same_opt(old, new) {
        return;
    }
    match (old, new) {
        (Some(Json::Object(_)), Some(Json::Object(_))) => {
            for (k, o, n) in member_union(old, new) {
                let len = path.len();
                push_key(path, &k.lossy());
                let is_set = matches!(k.as_str(), Some("required" | "enum"));
                flatten(o, n, path, is_set, acc);
                path.truncate(len);
            }
        }
        (Some(Json::Array(oa)), Some(Json::Array(na))) if set => {
            let oc: Vec<Vec<u8>> = oa.iter().map(canonical).collect();
            let nc: Vec<Vec<u8>> = na.iter().map(canonical).collect();
            for (side, items, mine, theirs) in [(0, oa, &oc, &nc), (1, na, &nc, &oc)] {
                for (i, (item, c)) in items.iter().zip(mine).enumerate() {
                    // Multiset difference: the k-th copy of a value is matched by a k-th copy.
                    let rank = mine[..i].iter().filter(|x| *x == c).count();
                    if theirs.iter().filter(|x| *x == c).count() > rank {
                        continue;
                    }
                    let len = path.len();
                    push_index(path, i);
                    let (o, n) = if side == 0 {
                        (Some(item), None)
                    } else {
                        (None, Some(item))
                    };
                    push_change(acc, path, o, n);
                    path.truncate(len);
                }
            }
        }
        (Some(Json::Array(oa)), Some(Json::Array(na))) => {
            for i in 0..oa.len().max(na.len()) {
                let len = path.len();
                push_index(path, i);
                flatten(oa.get(i), na.get(i), path, false, acc);
                path.truncate(len);
            }
        }
        _ => {
            let o_leaf = old.filter(|v| !is_container(v));
            let n_leaf = new.filter(|v| !is_container(v));
            if o_leaf.is_some() || n_leaf.is_some() {
                push_change(acc, path, o_leaf, n_leaf);
            }
            for (v, is_old) in [(old, true), (new, false)] {
                if let Some(v) = v.filter(|v| is_container(v)) {
                    expand(v, is_old, path, acc);
                }
            }
        }
    }
}

/// Record every leaf of `v` as present on one side only.
fn expand(v: &Json, is_old: bool, path: &mut String, acc: &mut SchemaDiff) {
    match v {
        Json::Object(m) if !m.is_empty() => {
            let mut sorted: Vec<&(Str, Json)> = m.iter().collect();
            sorted.sort_by(|a, b| a.0.utf16_cmp(&b.0));
            for (k, item) in sorted {
                let len = path.len();
                push_key(path, &k.lossy());
                expand(item, is_old, path, acc);
                path.truncate(len);
            }
        }
        Json::Array(a) if !a.is_empty() => {
            for (i, item) in a.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                expand(item, is_old, path, acc);
                path.truncate(len);
            }
        }
        leaf => {
            if is_old {
                push_change(acc, path, Some(leaf), None);
            } else {
                push_change(acc, path, None, Some(leaf));
            }
        }
    }
}

/// The difference between `old` and `new` (see [`Diff`] for what is matched and what is capped).
pub fn diff(old: &ToolSet, new: &ToolSet) -> Diff {
    let m = match_tools(old, new);
    let found = find_renames(&m);
    let mut b = Builder {
        word_budget: WORD_DIFF_BUDGET_CHARS,
        truncated: found.truncated,
    };
    let (mut added, mut removed, mut modified) = (Vec::new(), Vec::new(), Vec::new());
    let (mut added_total, mut removed_total, mut modified_total, mut unchanged) = (0, 0, 0, 0);
    let mut renames = Vec::new();
    let mut detailed = 0;
    for p in &found.pairs {
        if renames.len() >= MAX_LISTED_NAMES {
            b.truncated = true;
            break;
        }
        let changes = (!p.identical && detailed < MAX_MODIFIED_DETAILED).then(|| {
            detailed += 1;
            b.tool(p.to, p.old, p.new)
        });
        if !p.identical && changes.is_none() {
            b.truncated = true;
        }
        renames.push(Rename {
            from: text::cap(p.from, NAME_MAX_CHARS),
            to: text::cap(p.to, NAME_MAX_CHARS),
            identical: p.identical,
            similarity: p.similarity,
            changes,
        });
    }
    for &(name, o, n) in &m.pairs {
        match (o, n) {
            (None, Some(_)) if found.to(name).is_some() => {}
            (Some(_), None) if found.is_from(name) => {}
            (None, Some(_)) => {
                added_total += 1;
                if added.len() < MAX_LISTED_NAMES {
                    added.push(text::cap(name, NAME_MAX_CHARS));
                }
            }
            (Some(_), None) => {
                removed_total += 1;
                if removed.len() < MAX_LISTED_NAMES {
                    removed.push(text::cap(name, NAME_MAX_CHARS));
                }
            }
            (Some(o), Some(n)) if same(&o.value, &n.value) => unchanged += 1,
            (Some(o), Some(n)) => {
                modified_total += 1;
                if modified.len() < MAX_MODIFIED_DETAILED {
                    modified.push(b.tool(name, o, n));
                }
            }
            (None, None) => {}
        }
    }
    let old_scan = set_addresses(old);
    let new_scan = set_addresses(new);
    let fresh: Vec<&Address> = new_scan
        .found
        .difference(&old_scan.found)
        .filter(|a| a.kind != AddressKind::Url)
        .collect();
    let new_addresses: Vec<Address> = fresh
        .iter()
        .take(MAX_NEW_ADDRESSES)
        .map(|a| Address {
            kind: a.kind,
            value: text::cap(&a.value, VALUE_MAX_CHARS),
        })
        .collect();
    let address_scan_truncated = old_scan.truncated || new_scan.truncated;
    let truncated = b.truncated
        || added_total > added.len()
        || removed_total > removed.len()
        || modified_total > modified.len()
        || fresh.len() > new_addresses.len()
        || address_scan_truncated;
    Diff {
        added,
        added_total,
        removed,
        removed_total,
        renames_total: found.pairs.len(),
        renames,
        modified,
        modified_total,
        unchanged,
        unmatched_old: m.unmatched_old.len(),
        unmatched_new: m.unmatched_new.len(),
        unmatched_changed: unmatched_differ(old, &m, new),
        new_addresses_total: fresh.len(),
        new_addresses,
        address_scan_truncated,
        truncated,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::text::EditOp;
    use serde_json::{Value, json};

    fn set(tools: Value) -> ToolSet {
        ToolSet::parse(tools.to_string().as_bytes()).unwrap()
    }

    fn weather() -> Value {
        json!({
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "units": {"type": "string", "enum": ["c", "f"]}
                },
                "required": ["city"]
            }
        })
    }

    #[test]
    fn identical_and_semantically_equal_sets_have_no_diff() {
        let d = diff(&set(json!([weather()])), &set(json!([weather()])));
        assert!(d.is_empty());
        assert_eq!(d.unchanged, 1);
        // Member order and number spelling do not matter.
        let a = ToolSet::parse(br#"[{"name":"t","inputSchema":{"maximum":1.0,"type":"object"}}]"#)
            .unwrap();
        let b = ToolSet::parse(br#"[{"inputSchema":{"type":"object","maximum":1},"name":"t"}]"#)
            .unwrap();
        assert!(diff(&a, &b).is_empty());
    }

    #[test]
    fn added_removed_modified_in_utf16_order() {
        // The removed tool takes a parameter the added ones do not: it is no rename of either.
        let old = set(json!([
            {"name": "b"},
            {"name": "\u{FFFF}", "inputSchema": {"properties": {"x": {}}}},
            weather()
        ]));
        let new = set(
            json!([{"name": "\u{1F600}"}, {"name": "a"}, {"name": "b", "title": "B"}, weather()]),
        );
        let d = diff(&old, &new);
        // U+1F600 sorts before U+FFFF in UTF-16 order though not in code-point order.
        assert_eq!(d.added, ["a", "\u{1F600}"]);
        assert_eq!(d.removed, ["\u{FFFF}"]);
        assert_eq!(d.modified.len(), 1);
        assert_eq!(d.modified[0].name, "b");
        assert_eq!(
            d.modified[0].members,
            [MemberChange {
                member: "title".into(),
                old: None,
                new: Some("\"B\"".into())
            }]
        );
        assert_eq!(
            (
                d.added_total,
                d.removed_total,
                d.modified_total,
                d.unchanged
            ),
            (2, 1, 1, 1)
        );
    }

    #[test]
    fn unnamed_and_repeated_entries_are_counted_not_matched() {
        let old = set(json!([{"name": "a"}, {"description": "x"}, 42]));
        let new = set(
            json!([{"name": "a"}, {"name": "a", "description": "shadow"}, 42, {"description": "x"}]),
        );
        let d = diff(&old, &new);
        assert_eq!((d.unmatched_old, d.unmatched_new), (2, 3));
        assert!(d.unmatched_changed);
        assert_eq!(d.modified_total, 0);
        assert!(!d.is_empty());
        let same_again = diff(&old, &old);
        assert!(!same_again.unmatched_changed && same_again.is_empty());
    }

    #[test]
    fn description_word_diff() {
        let mut new = weather();
        new["description"] = json!("Get the forecast weather for a city.");
        let d = diff(&set(json!([weather()])), &set(json!([new])));
        let DescriptionDiff::Words { ops } = d.modified[0].description.clone().unwrap() else {
            panic!("expected a word diff")
        };
        assert_eq!(
            ops,
            [
                WordEdit(EditOp::Equal, "Get the ".into()),
                WordEdit(EditOp::Delete, "current".into()),
                WordEdit(EditOp::Insert, "forecast".into()),
                WordEdit(EditOp::Equal, " weather for a city.".into()),
            ]
        );
        let v = serde_json::to_value(&d.modified[0].description).unwrap();
        assert_eq!(v["kind"], "words");
        assert_eq!(v["ops"][1], json!(["-", "current"]));
    }

    #[test]
    fn long_descriptions_get_snippets() {
        let mut old = weather();
        old["description"] = json!("word ".repeat(WORD_DIFF_MAX_CHARS / 5 + 1));
        let d = diff(&set(json!([old])), &set(json!([weather()])));
        match d.modified[0].description.as_ref().unwrap() {
            DescriptionDiff::Snippets {
                old,
                new,
                old_chars,
                new_chars,
            } => {
                assert_eq!(*old_chars, WORD_DIFF_MAX_CHARS + 5);
                assert!(old.ends_with(&format!("…[+{} chars]", old_chars - SNIPPET_MAX_CHARS)));
                assert_eq!(*new_chars, 35);
                assert_eq!(new, "Get the current weather for a city.");
            }
            other => panic!("{other:?}"),
        }
        assert!(d.truncated);
    }

    #[test]
    fn schema_paths_and_set_arrays() {
        let mut new = weather();
        new["inputSchema"]["properties"]["city"]["type"] = json!("integer");
        new["inputSchema"]["properties"]["units"]["enum"] = json!(["f", "k", "c"]);
        new["inputSchema"]["required"] = json!(["units", "city"]);
        new["inputSchema"]["properties"]["o'k"] = json!({"type": ["string", "null"]});
        let d = diff(&set(json!([weather()])), &set(json!([new])));
        let changes = &d.modified[0].input_schema.as_ref().unwrap().changes;
        let got: Vec<(&str, Option<&str>, Option<&str>)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.old.as_deref(), c.new.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "$['properties']['city']['type']",
                    Some("\"string\""),
                    Some("\"integer\"")
                ),
                (
                    "$['properties']['o\\'k']['type'][0]",
                    None,
                    Some("\"string\"")
                ),
                (
                    "$['properties']['o\\'k']['type'][1]",
                    None,
                    Some("\"null\"")
                ),
                ("$['properties']['units']['enum'][1]", None, Some("\"k\"")),
                ("$['required'][0]", None, Some("\"units\"")),
            ]
        );
        assert!(d.modified[0].output_schema.is_none());
    }

    #[test]
    fn schema_changes_are_capped() {
        let props: serde_json::Map<String, Value> = (0..MAX_PATH_CHANGES + 50)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        let mut new = weather();
        new["outputSchema"] = json!({"type": "object", "properties": props});
        let d = diff(&set(json!([weather()])), &set(json!([new])));
        let out = d.modified[0].output_schema.as_ref().unwrap();
        assert_eq!(out.changes.len(), MAX_PATH_CHANGES);
        assert_eq!(out.truncated, 51); // 250 property types + the root type, minus 200
        assert!(out.changes.iter().all(|c| c.old.is_none()));
        assert!(d.truncated);
    }

    #[test]
    fn values_are_capped_with_a_marker() {
        let mut new = weather();
        new["inputSchema"]["properties"]["city"]["default"] = json!("x".repeat(2000));
        let d = diff(&set(json!([weather()])), &set(json!([new])));
        let c = &d.modified[0].input_schema.as_ref().unwrap().changes[0];
        let v = c.new.as_ref().unwrap();
        assert!(
            v.starts_with("\"xxx") && v.ends_with("…[+1502 chars]"),
            "{v}"
        );
    }

    #[test]
    fn annotations_report_effective_hints() {
        let mut old = weather();
        old["annotations"] = json!({"readOnlyHint": true, "destructiveHint": true, "title": "W"});
        let mut new = weather();
        new["annotations"] =
            json!({"readOnlyHint": false, "openWorldHint": "no", "title": "Weather"});
        let d = diff(&set(json!([old])), &set(json!([new])));
        let a = d.modified[0].annotations.as_ref().unwrap();
        let hint = |h: &str| a.hints.iter().find(|x| x.hint == h).unwrap().clone();
        assert_eq!(
            hint("readOnlyHint"),
            HintState {
                hint: "readOnlyHint",
                old: true,
                new: false,
                old_explicit: true,
                new_explicit: true
            }
        );
        assert_eq!(
            hint("destructiveHint"),
            HintState {
                hint: "destructiveHint",
                old: true,
                new: true,
                old_explicit: true,
                new_explicit: false
            }
        );
        // A non-boolean hint is ignored: the default applies.
        assert_eq!(
            hint("openWorldHint"),
            HintState {
                hint: "openWorldHint",
                old: true,
                new: true,
                old_explicit: false,
                new_explicit: false
            }
        );
        assert_eq!(
            a.members,
            [MemberChange {
                member: "title".into(),
                old: Some("\"W\"".into()),
                new: Some("\"Weather\"".into())
            }]
        );
    }

    #[test]
    fn new_addresses_of_every_kind() {
        let mut old = weather();
        old["description"] = json!("Docs at https://Example.com/docs. Edit config.json.");
        let mut new = weather();
        new["description"] = json!(
            "Docs at https://example.COM/v2. Send to https://collect.evil.io/x, \
             mail leak@evil.io, ping 203.0.113.7 or 2001:db8::7, see attacker.net; edit settings.json."
        );
        let d = diff(&set(json!([old])), &set(json!([new])));
        let got: Vec<(AddressKind, &str)> = d
            .new_addresses
            .iter()
            .map(|a| (a.kind, a.value.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (AddressKind::Host, "attacker.net"),
                (AddressKind::Host, "collect.evil.io"),
                (AddressKind::Email, "leak@evil.io"),
                (AddressKind::Ipv4, "203.0.113.7"),
                (AddressKind::Ipv6, "2001:db8::7"),
            ]
        );
        assert_eq!(d.new_addresses_total, 5);
        assert!(!d.address_scan_truncated);
    }

    #[test]
    fn huge_sets_are_bounded() {
        let n = 3_000;
        let mk = |suffix: &str| {
            let tools: Vec<Value> = (0..n)
                .map(|i| {
                    json!({
                        "name": format!("tool_{i:05}"),
                        "description": format!("Tool {i} at host{i}{suffix}.example.com"),
                        "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}
                    })
                })
                .collect();
            set(Value::Array(tools))
        };
        let (old, new) = (mk(""), mk("x"));
        let d = diff(&old, &new);
        assert_eq!(d.modified_total, n);
        assert_eq!(d.modified.len(), MAX_MODIFIED_DETAILED);
        assert_eq!(d.new_addresses.len(), MAX_NEW_ADDRESSES);
        assert_eq!(d.new_addresses_total, n);
        assert!(d.truncated);
        let json = serde_json::to_string(&d).unwrap();
        assert!(json.len() < 1_000_000, "{}", json.len());
        // Added and removed names are capped too.
        let empty = set(json!([]));
        let d = diff(&empty, &new);
        assert_eq!((d.added.len(), d.added_total), (MAX_LISTED_NAMES, n));
        let d = diff(&new, &empty);
        assert_eq!((d.removed.len(), d.removed_total), (MAX_LISTED_NAMES, n));
    }

    #[test]
    fn address_scan_is_bounded() {
        let big = "a".repeat(text::ADDRESS_SCAN_MAX_CHARS) + " late.example.com";
        let d = diff(
            &set(json!([])),
            &set(json!([{"name": "t", "description": big}])),
        );
        assert!(d.address_scan_truncated && d.truncated);
        assert!(d.new_addresses.is_empty());
    }

    #[test]
    fn normalized_path_escapes() {
        let mut p = String::from("$");
        push_key(&mut p, "a'b\\c\n\u{1}");
        push_index(&mut p, 3);
        assert_eq!(p, "$['a\\'b\\\\c\\n\\u0001'][3]");
    }

    /// Two sets that exercise every part of a diff: a word diff and snippets, schema paths
    /// (input and output), hints and other annotation members, other members, added, removed
    /// and unmatched entries, new addresses.
    fn rich_pair() -> (ToolSet, ToolSet) {
        let long = "word ".repeat(WORD_DIFF_MAX_CHARS / 5 + 1);
        let old = set(json!([
            weather(),
            {"name": "gone"},
            {"name": "long", "description": long, "outputSchema": {"type": "object"}},
            {"name": "hinted", "annotations": {"readOnlyHint": true, "title": "a"}},
            {"description": "no name"},
        ]));
        let new = set(json!([
            {
                "name": "get_weather",
                "title": "Weather",
                "description": "Get the forecast for a city from https://evil.example.net/x.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"city": {"type": "number", "default": 3}},
                    "required": ["city", "units"]
                }
            },
            {"name": "new'one"},
            {"name": "long", "description": format!("{long}changed"),
             "outputSchema": {"type": "array"}, "_meta": {"k": [1]}},
            {"name": "hinted", "annotations": {"destructiveHint": false, "title": "b"}},
            {"description": "no name, changed"},
        ]));
        (old, new)
    }

    #[test]
    fn a_diff_reads_back_from_its_json() {
        let (old, new) = rich_pair();
        let d = diff(&old, &new);
        let description_kinds: Vec<_> = d.modified.iter().map(|t| &t.description).collect();
        assert!(
            description_kinds
                .iter()
                .any(|k| matches!(k, Some(DescriptionDiff::Words { .. })))
                && description_kinds
                    .iter()
                    .any(|k| matches!(k, Some(DescriptionDiff::Snippets { .. }))),
            "{d:?}"
        );
        assert!(!d.new_addresses.is_empty() && d.unmatched_changed, "{d:?}");
        assert_reads_back(&d);
    }

    /// `v`'s JSON reads back as `v`, and writes the same text again.
    pub(crate) fn assert_reads_back<T>(v: &T)
    where
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let text = serde_json::to_string(v).unwrap();
        let back: T = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, v);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    #[test]
    fn a_stored_diff_with_an_unknown_member_or_hint_is_refused() {
        let (old, new) = rich_pair();
        let mut v = serde_json::to_value(diff(&old, &new)).unwrap();
        v["addedCount"] = json!(1);
        assert!(serde_json::from_value::<Diff>(v.clone()).is_err());
        v.as_object_mut().unwrap().remove("addedCount");
        let hinted = v["modified"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|t| t["name"] == "hinted")
            .unwrap();
        hinted["annotations"]["hints"][0]["hint"] = json!("fastHint");
        let e = serde_json::from_value::<Diff>(v).unwrap_err();
        assert!(e.to_string().contains("unknown hint"), "{e}");
    }
}
