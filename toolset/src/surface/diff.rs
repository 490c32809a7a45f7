//! What changed in one kind of the surface (prompts, resources, resource templates, MCP Apps
//! pages) between two observations, and what the change means.
//!
//! [`diff`] matches the entries of a kind by their key ([`key_member`]: prompts by `name`,
//! resources and app pages by `uri`, templates by `uriTemplate`) and describes every difference,
//! with the tool diff's pieces ([`crate::diff`]): entries added, removed and changed; per changed
//! entry a word diff of its `description` and `title`, for prompts each argument added, removed
//! or changed (by `name`: `required`, a word diff of its `description`, other members), every
//! other changed leaf as a [`PathChange`], and for app pages a [`PageDiff`] of the two pages'
//! [`AppFacts`](super::app::AppFacts) and texts. A resource or template whose key changed while its `name` stayed (one
//! of that name removed, one added) is one changed entry with its [`ItemDiff::old_key`]. An app
//! page that is new is compared with everything the old pages held ([`KindDiff::added_pages`]):
//! a page renamed to carry a new script is not a blank slate. Outside addresses (hosts, e-mail
//! addresses, IP literals) in the `description` and `title` texts of new and changed entries
//! that appear nowhere in the old entries are listed as the tool diff lists them.
//!
//! [`classify_kind`] judges a [`KindDiff`] (with the new entries, whose texts it scans): every
//! signal with its class ([`Class`]), the class of the change the worst of them. Signals of the
//! text rules are the tool classification's, with its ids; the others are this table's:
//!
//! | id | class | fires when |
//! | --- | --- | --- |
//! | `prompt-added` | unsure | a prompt with no prior definition |
//! | `prompt-removed` | unsure | a prompt is gone |
//! | `prompt-argument-added` | unsure | a prompt gained an argument (the detail says whether it is required) |
//! | `prompt-argument-removed` | unsure | a prompt lost an argument |
//! | `prompt-argument-required-changed` | unsure | an argument's `required` changed (absent is `false`) |
//! | `resource-added` | unsure | a resource with no prior definition |
//! | `resource-removed` | unsure | a resource is gone |
//! | `resource-uri-changed` | unsure | a resource of the same `name` now has another `uri` |
//! | `resource-metadata-changed` | benign | only `size` or `annotations.lastModified` changed (the content changed, not what the resource is) |
//! | `template-added` | unsure | a resource template with no prior definition |
//! | `template-removed` | unsure | a resource template is gone |
//! | `template-uri-changed` | unsure | a template of the same `name` now has another `uriTemplate` |
//! | `mime-type-changed` | unsure | a resource's, template's or page's `mimeType` changed |
//! | `app-page-added` | unsure | an app page with no prior read (its [`PageDiff`] against the old pages fires the rules below) |
//! | `app-page-removed` | unsure | an app page is gone (no tool names it, or its read failed) |
//! | `app-script-added` | dangerous | a `<script src>` the old page(s) did not load |
//! | `app-inline-script-changed` | unsure | the inline scripts, event handlers or data blocks changed (count or bytes): code a reader cannot judge |
//! | `app-outside-origin-added` | dangerous | the page refers to an outside origin (an attribute, CSS, a script's fetch, connect or navigation literal) the old page(s) did not |
//! | `app-script-literal-origin-added` | unsure | a script names a new outside origin in another string literal |
//! | `app-form-added` | unsure | a new `<form>` |
//! | `app-form-action-changed` | dangerous | a form's `action` or `method` changed (where what a user types goes) |
//! | `app-frame-added` | unsure | a new `<iframe>` or `<frame>` |
//! | `app-csp-widened` | dangerous | a domain added to a `_meta.ui.csp` list (the host now lets the page reach it) |
//! | `app-csp-narrowed` | benign | a domain removed from a `_meta.ui.csp` list |
//! | `app-meta-csp-changed` | unsure | the page's own `<meta http-equiv=Content-Security-Policy>` changed |
//! | `app-base-changed` | unsure | the page's `<base href>` changed (every relative URL moves with it) |
//! | `app-permission-added` | dangerous | `_meta.ui.permissions` asks for a new capability (`camera`, `microphone`, `geolocation`, `clipboardWrite`) |
//! | `app-permission-removed` | benign | a permission is no longer asked for |
//! | `app-domain-changed` | unsure | `_meta.ui.domain` (the page's dedicated origin) changed |
//! | `app-prefers-border-changed` | benign | `_meta.ui.prefersBorder` changed |
//! | `app-text-changed` | benign | the texts a user reads changed (the rule set judges the new ones) |
//! | `app-page-truncated` | unsure | a page was read only in part ([`super::app`]'s bounds), so not all of it was compared |
//! | `kind-diff-truncated` | unsure | a list of the diff was cut by its cap: entries past it are not classified |
//!
//! From the tool classification ([`crate::classify`]): `description-trivial`,
//! `description-small-edit`, `description-rewritten` (a `description` or `title`, of an entry or
//! of an argument), `member-changed` (another member, once per top-level member),
//! `annotation-changed` (a resource's `annotations` other than `lastModified`),
//! `address-added` (a new outside address), `entry-unmatched` (an entry without a unique key
//! was added or removed), `scan-truncated` (the address scan's budget ran out),
//! `equivalent-change` (a changed entry nothing else fired on), and the rule set's
//! `pattern-block-added` (dangerous) and `pattern-advise-added` (unsure): a match
//! ([`crate::rules`]) in a text that is new or changed — every text of an added prompt,
//! resource or template ([`crate::rules::scan_tool`] reads an entry as it reads a tool, without
//! the learned score, which was trained on tools), the changed texts of a changed one, and the
//! page texts ([`super::app::texts`]) an app page did not have. The tiers split as they do for
//! tools: advise-tier text is text a person should look at, not a known attack.
//!
//! Output is bounded whatever the input: each list has a cap (the `pub const`s here and the
//! tool diff's), with a total or a count beside it, and [`KindDiff::truncated`] says whether a
//! cap was hit.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::Kind;
use super::app::{self, Form, Frame, Origin, Page, PageText};
use super::items::{Item, Items, key_member};
use crate::classify::{self, Class, Rule, Signal, Sink};
use crate::diff::{
    Builder, DescriptionDiff, MAX_LISTED_NAMES, MAX_MODIFIED_DETAILED, MAX_NEW_ADDRESSES,
    MemberChange, PATH_MAX_CHARS, PathChange, StrAt, WORD_DIFF_BUDGET_CHARS, canonical,
    each_string, push_index, push_key, same, same_opt,
};
use crate::json::{self, Json};
use crate::model::Tool;
use crate::rules::{self, Match};
use crate::text::{self, Address, AddressKind, AddressScan, EditOp, VALUE_MAX_CHARS, WordEdit};

/// Keys (a prompt's name, a URI, a URI template) in the output are cut to this many characters:
/// URIs run longer than names, and this is the length paths are cut to
/// ([`crate::diff::PATH_MAX_CHARS`]).
pub const KEY_MAX_CHARS: usize = PATH_MAX_CHARS;

/// At most this many argument changes are listed per prompt
/// ([`ItemDiff::arguments_truncated`] counts the rest). Real prompts have a handful of
/// arguments (server-everything's take two).
pub const MAX_ARGUMENT_CHANGES: usize = 100;

/// The texts added and removed of one page ([`PageDiff::texts_added`], `texts_removed`) hold
/// at most this many characters in all, each text at most [`crate::rules::FIELD_MAX_CHARS`]
/// (what the rule set reads of one text). The official examples' pages show under 1,000
/// characters of text; 100,000 shows a rewritten page whole while keeping a stored diff small.
pub const TEXT_DIFF_MAX_CHARS: usize = 100_000;

/// Compares and reads `kind` as a JSON string (`prompts`, `resourceTemplates`, …).
mod kind_name {
    use super::Kind;

    pub(super) fn serialize<S: serde::Serializer>(k: &Kind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.as_str())
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        Kind::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format_args!("unknown kind {name:?}")))
    }
}

/// The difference between two observations of one kind.
///
/// Entries are matched by their string key. An entry without one, and every entry after the
/// first of a key, cannot be matched: such entries are only counted
/// ([`KindDiff::unmatched_old`], [`KindDiff::unmatched_new`]), and
/// [`KindDiff::unmatched_changed`] says whether they differ (as multisets of canonical values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindDiff {
    /// The kind compared.
    #[serde(with = "kind_name")]
    pub kind: Kind,
    /// Keys only in the new entries, in UTF-16 order, at most
    /// [`crate::diff::MAX_LISTED_NAMES`], each cut to [`KEY_MAX_CHARS`].
    pub added: Vec<String>,
    /// How many keys are only in the new entries.
    pub added_total: usize,
    /// Keys only in the old entries, likewise.
    pub removed: Vec<String>,
    /// How many keys are only in the old entries.
    pub removed_total: usize,
    /// Entries in both (or re-keyed) that differ, in UTF-16 key order, at most
    /// [`crate::diff::MAX_MODIFIED_DETAILED`].
    pub changed: Vec<ItemDiff>,
    /// How many entries differ.
    pub changed_total: usize,
    /// How many entries in both are the same.
    pub unchanged: usize,
    /// Entries of the old side that cannot be matched by key.
    pub unmatched_old: usize,
    /// Entries of the new side that cannot be matched by key.
    pub unmatched_new: usize,
    /// Whether the unmatched entries of the two sides differ.
    pub unmatched_changed: bool,
    /// For app pages: each added page against everything the old pages held (their scripts,
    /// origins, forms, frames, declared CSP and permissions, texts), in the order of
    /// [`KindDiff::added`], at most [`crate::diff::MAX_MODIFIED_DETAILED`].
    pub added_pages: Vec<AddedPage>,
    /// Outside addresses in the `description` and `title` texts (at any depth) of new and
    /// changed entries that appear in no string of the old entries, at most
    /// [`crate::diff::MAX_NEW_ADDRESSES`] (app pages: see [`PageDiff::origins_added`]).
    pub new_addresses: Vec<AddressAt>,
    /// How many such addresses there are.
    pub new_addresses_total: usize,
    /// Whether either side held more than [`crate::text::ADDRESS_SCAN_MAX_CHARS`] characters of
    /// strings, so that the addresses were found in a prefix.
    pub address_scan_truncated: bool,
    /// Whether any list was cut by its cap, a description got snippets, a page was read in part
    /// or the address scan was cut.
    pub truncated: bool,
}

impl KindDiff {
    /// Whether the two sides are the same.
    pub fn is_empty(&self) -> bool {
        self.added_total == 0
            && self.removed_total == 0
            && self.changed_total == 0
            && !self.unmatched_changed
    }
}

/// How one entry present on both sides changed. A member is `None` (or empty) when it did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ItemDiff {
    /// The entry's key (the new one), cut to [`KEY_MAX_CHARS`].
    pub key: String,
    /// The old key, when a resource or template kept its `name` and changed its key.
    pub old_key: Option<String>,
    /// The `description`'s change (absent reads as empty text).
    pub description: Option<DescriptionDiff>,
    /// The `title`'s change.
    pub title: Option<DescriptionDiff>,
    /// Prompts: the arguments added, removed or changed, by `name` in UTF-16 order, at most
    /// [`MAX_ARGUMENT_CHANGES`]. (When an argument has no unique string name, or `arguments`
    /// is not an array, the arguments are compared as [`ItemDiff::changes`] instead.)
    pub arguments: Vec<ArgumentDiff>,
    /// How many argument changes were left out.
    pub arguments_truncated: usize,
    /// Every other changed leaf, by normalized path from the entry (`$['annotations']
    /// ['audience'][0]`), at most [`crate::diff::MAX_PATH_CHANGES`] (an app page's HTML and
    /// the `_meta.ui` members its facts declare are compared in [`ItemDiff::page`] instead).
    pub changes: Vec<PathChange>,
    /// How many leaf changes were left out.
    pub changes_truncated: usize,
    /// App pages: what changed in the page.
    pub page: Option<PageDiff>,
}

/// A prompt argument's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArgumentDiff {
    /// The argument's name, cut to [`crate::diff::NAME_MAX_CHARS`].
    pub name: String,
    /// What happened to it.
    pub change: ArgumentChange,
}

/// What happened to a prompt argument. `required` is the effective value (absent: `false`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum ArgumentChange {
    /// A new argument.
    Added {
        /// Whether it is required.
        required: bool,
        /// Its description, cut to [`crate::text::VALUE_MAX_CHARS`].
        description: Option<String>,
    },
    /// An argument gone.
    Removed {
        /// Whether it was required.
        required: bool,
    },
    /// An argument on both sides that differs.
    Changed {
        /// `required`, when it changed.
        required: Option<Change<bool>>,
        /// The description's change.
        description: Option<DescriptionDiff>,
        /// Other changed members, at most [`crate::diff::MAX_MEMBER_CHANGES`].
        members: Vec<MemberChange>,
    },
}

/// A value on each side.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Change<T> {
    /// The old value.
    pub old: T,
    /// The new value.
    pub new: T,
}

/// An added app page, compared with all the old pages together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddedPage {
    /// The page's URI, cut to [`KEY_MAX_CHARS`].
    pub key: String,
    /// What it holds that no old page did.
    pub page: PageDiff,
}

/// What changed in an app page: from its facts ([`super::app::AppFacts`]) and texts. Each list
/// holds at most [`super::app::MAX_LISTED`] entries, values as the facts give them.
///
/// For an [`AddedPage`] the old side is every old page together: the lists say what no old page
/// had, and the members that compare one page with one page (`mime_type`, `inline`,
/// `forms_changed`, `meta_csp`, `base_href`, `domain`, `prefers_border`, the removed lists) are
/// empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageDiff {
    /// `mimeType`, when it changed.
    pub mime_type: Option<Change<Option<String>>>,
    /// The HTML's bytes on each side.
    pub html_bytes: Change<usize>,
    /// `<script src>`s not loaded before, in document order.
    pub scripts_added: Vec<String>,
    /// `<script src>`s no longer loaded.
    pub scripts_removed: Vec<String>,
    /// The inline scripts' counts, when any changed.
    pub inline: Option<Change<InlineScripts>>,
    /// Outside origins the page refers to that it did not, in origin order.
    pub origins_added: Vec<Origin>,
    /// Outside origins it no longer refers to.
    pub origins_removed: Vec<String>,
    /// Outside origins newly named by other string literals in its scripts.
    pub script_literal_origins_added: Vec<String>,
    /// Such origins no longer named.
    pub script_literal_origins_removed: Vec<String>,
    /// Forms past the old page's number of forms (a changed page), or forms no old page had
    /// (an added one).
    pub forms_added: Vec<Form>,
    /// Forms past the new page's number of forms.
    pub forms_removed: Vec<Form>,
    /// Forms at the same position whose `action` or `method` changed.
    pub forms_changed: Vec<FormChange>,
    /// Frames not there before.
    pub frames_added: Vec<Frame>,
    /// Frames gone.
    pub frames_removed: Vec<Frame>,
    /// The declared `_meta.ui.csp` lists that gained or lost domains, in the specification's
    /// order (an absent `csp` reads as four empty lists).
    pub csp: Vec<CspChange>,
    /// The page's own CSP `<meta>` contents, when they changed.
    pub meta_csp: Option<Change<Vec<String>>>,
    /// `<base href>`, when it changed.
    pub base_href: Option<Change<Option<String>>>,
    /// Permissions newly asked for.
    pub permissions_added: Vec<String>,
    /// Permissions no longer asked for.
    pub permissions_removed: Vec<String>,
    /// `_meta.ui.domain`, when it changed.
    pub domain: Option<Change<Option<String>>>,
    /// `_meta.ui.prefersBorder`, when it changed.
    pub prefers_border: Option<Change<Option<bool>>>,
    /// Texts a user reads that the old side did not have, in document order, within
    /// [`TEXT_DIFF_MAX_CHARS`].
    pub texts_added: Vec<PageText>,
    /// Texts no longer there, likewise.
    pub texts_removed: Vec<PageText>,
    /// Whether a list or the texts here were cut, or either page was read in part.
    pub truncated: bool,
}

/// A page's inline script counts ([`super::app::Scripts`] without the external ones).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InlineScripts {
    /// Inline scripts that run.
    pub inline: usize,
    /// Their bytes.
    pub inline_bytes: usize,
    /// Event handlers and `javascript:` URLs.
    pub handlers: usize,
    /// Data blocks.
    pub data_blocks: usize,
}

/// A form at the same position on both sides that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FormChange {
    /// Its position among the page's forms.
    pub index: usize,
    /// The old form.
    pub old: Form,
    /// The new form.
    pub new: Form,
}

/// A declared CSP list that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CspChange {
    /// The list's member name (`connectDomains`, `resourceDomains`, `frameDomains`,
    /// `baseUriDomains`).
    pub list: String,
    /// Domains added, in order.
    pub added: Vec<String>,
    /// Domains removed, in order.
    pub removed: Vec<String>,
}

/// An outside address found in an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddressAt {
    /// The entry's key, cut to [`KEY_MAX_CHARS`].
    pub key: String,
    /// Where in the entry (the first text holding it), cut to [`crate::diff::PATH_MAX_CHARS`].
    pub path: String,
    /// The address (its value cut to [`crate::text::VALUE_MAX_CHARS`]).
    pub address: Address,
}

/// The entries of two sides paired by key.
struct Matching<'a> {
    /// Every key on either side, in UTF-16 order, with the first entry of that key on each.
    pairs: Vec<(&'a str, Option<&'a Item>, Option<&'a Item>)>,
    /// Indexes of old entries that cannot be matched.
    unmatched_old: Vec<usize>,
    /// Indexes of new entries that cannot be matched.
    unmatched_new: Vec<usize>,
}

/// The entries of `items` by their string `key` member (the first of each), and the indexes
/// of the others.
fn index_by_key<'a>(
    items: &'a Items,
    key: Option<&str>,
) -> (HashMap<&'a str, &'a Item>, Vec<usize>) {
    let mut by_key: HashMap<&str, &Item> = HashMap::new();
    let mut unmatched = Vec::new();
    for (i, item) in items.items.iter().enumerate() {
        match key.and_then(|k| item.get_str(k)) {
            Some(k) if !by_key.contains_key(k) => {
                by_key.insert(k, item);
            }
            _ => unmatched.push(i),
        }
    }
    (by_key, unmatched)
}

fn match_items<'a>(old: &'a Items, new: &'a Items, key: Option<&str>) -> Matching<'a> {
    let (om, unmatched_old) = index_by_key(old, key);
    let (nm, unmatched_new) = index_by_key(new, key);
    let mut keys: Vec<&str> = om.keys().chain(nm.keys()).copied().collect();
    keys.sort_by(|a, b| json::utf16_cmp(a, b));
    keys.dedup();
    Matching {
        pairs: keys
            .into_iter()
            .map(|k| (k, om.get(k).copied(), nm.get(k).copied()))
            .collect(),
        unmatched_old,
        unmatched_new,
    }
}

/// Whether the unmatched entries of two sides differ, as multisets of canonical values.
fn unmatched_differ(old: &Items, m: &Matching<'_>, new: &Items) -> bool {
    let canon_all = |items: &Items, idx: &[usize]| {
        let mut v: Vec<Vec<u8>> = idx
            .iter()
            .map(|&i| canonical(&items.items[i].value))
            .collect();
        v.sort();
        v
    };
    canon_all(old, &m.unmatched_old) != canon_all(new, &m.unmatched_new)
}

/// `v` without the members `skip` (a clone; `v` itself when it is not an object).
fn without(v: &Json, skip: &[&str]) -> Json {
    match v {
        Json::Object(members) => Json::Object(
            members
                .iter()
                .filter(|(k, _)| !k.as_str().is_some_and(|k| skip.contains(&k)))
                .cloned()
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The members of `_meta.ui` a page's facts compare ([`super::app::Declared`]).
const DECLARED_UI: [&str; 4] = ["csp", "permissions", "domain", "prefersBorder"];

/// An app page's entry as its leaves are compared: without its HTML (`text`, `blob`) and the
/// parts of `_meta.ui` its [`PageDiff`] compares; an empty `_meta.ui` or `_meta` is left out
/// too (declaring a CSP where there was none is one change, the CSP's).
fn page_leaves(v: &Json) -> Json {
    let mut out = without(v, &["text", "blob"]);
    if let Json::Object(members) = &mut out {
        for (_, meta) in members
            .iter_mut()
            .filter(|(k, _)| k.as_str() == Some("_meta"))
        {
            if let Json::Object(meta) = meta {
                for (_, ui) in meta.iter_mut().filter(|(k, _)| k.as_str() == Some("ui")) {
                    *ui = without(ui, &DECLARED_UI);
                }
                meta.retain(|(k, ui)| {
                    k.as_str() != Some("ui") || ui.as_object().is_none_or(|m| !m.is_empty())
                });
            }
        }
        members.retain(|(k, meta)| {
            k.as_str() != Some("_meta") || meta.as_object().is_none_or(|m| !m.is_empty())
        });
    }
    out
}

/// A prompt argument's effective `required` (absent or not `true`: `false`).
fn required(arg: &Json) -> bool {
    matches!(arg.get("required"), Some(Json::Bool(true)))
}

/// A prompt's arguments by string `name`, when `arguments` is absent or an array of objects
/// with unique string names (otherwise `None`: compared as leaves).
fn arguments_by_name(v: Option<&Json>) -> Option<BTreeMap<&str, &Json>> {
    let items = match v {
        None => return Some(BTreeMap::new()),
        Some(Json::Array(items)) => items,
        Some(_) => return None,
    };
    let mut by_name = BTreeMap::new();
    for arg in items {
        let name = arg.get("name").and_then(Json::as_str)?;
        if by_name.insert(name, arg).is_some() {
            return None;
        }
    }
    Some(by_name)
}

/// The union of every old page: what an added page is compared with.
#[derive(Default)]
struct Baseline {
    scripts: BTreeSet<String>,
    origins: BTreeSet<String>,
    literals: BTreeSet<String>,
    forms: Vec<Form>,
    frames: Vec<Frame>,
    csp: [BTreeSet<String>; 4],
    permissions: BTreeSet<String>,
    texts: HashSet<PageText>,
}

impl Baseline {
    fn of<'p>(pages: impl IntoIterator<Item = &'p Page>) -> Baseline {
        let mut b = Baseline::default();
        for p in pages {
            let f = &p.facts;
            b.scripts.extend(f.scripts.external.iter().cloned());
            b.origins.extend(f.origins.iter().map(|o| o.origin.clone()));
            b.literals.extend(f.script_literal_origins.iter().cloned());
            b.forms.extend(f.forms.iter().cloned());
            b.frames.extend(f.frames.iter().cloned());
            if let Some(csp) = &f.declared.csp {
                for (set, (_, list)) in b.csp.iter_mut().zip(csp.lists()) {
                    set.extend(list.iter().cloned());
                }
            }
            b.permissions.extend(f.declared.permissions.iter().cloned());
            b.texts.extend(p.texts.texts.iter().cloned());
        }
        b
    }
}

/// The items of `new` for which `old` is false, in `new`'s order, each once (the lists are
/// facts' lists, at most [`app::MAX_LISTED`] long).
fn fresh<T: Clone + PartialEq>(new: &[T], old: &dyn Fn(&T) -> bool) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in new {
        if !old(x) && !out.contains(x) {
            out.push(x.clone());
        }
    }
    out
}

fn inline_of(p: &Page) -> InlineScripts {
    let s = &p.facts.scripts;
    InlineScripts {
        inline: s.inline,
        inline_bytes: s.inline_bytes,
        handlers: s.handlers,
        data_blocks: s.data_blocks,
    }
}

/// `Some` change when the two values differ.
fn changed<T: PartialEq + Clone>(old: &T, new: &T) -> Option<Change<T>> {
    (old != new).then(|| Change {
        old: old.clone(),
        new: new.clone(),
    })
}

/// Texts of `new` not in `old`, within the shared character budget `left`.
fn texts_diff(
    new: &[PageText],
    old: &dyn Fn(&PageText) -> bool,
    left: &mut usize,
    cut: &mut bool,
) -> Vec<PageText> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for t in new {
        if old(t) || !seen.insert(t) {
            continue;
        }
        let text = text::cap(&t.text, rules::FIELD_MAX_CHARS);
        let n = text.chars().count();
        if n > *left || out.len() >= app::MAX_LISTED {
            *cut = true;
            break;
        }
        *left -= n;
        out.push(PageText { at: t.at, text });
    }
    out
}

/// What `new` holds that `base` (the union of the old pages) does not; with `old`, the one old
/// page it replaces, also what changed between the two.
fn page_diff(base: &Baseline, old: Option<&Page>, new: &Page) -> PageDiff {
    let (nf, of) = (&new.facts, old.map(|p| &p.facts));
    let mut truncated = nf.truncated || new.texts.truncated;
    let mut d = PageDiff {
        html_bytes: Change {
            old: of.map_or(0, |f| f.html_bytes),
            new: nf.html_bytes,
        },
        scripts_added: fresh(&nf.scripts.external, &|s| base.scripts.contains(s)),
        origins_added: fresh(&nf.origins, &|o| base.origins.contains(&o.origin)),
        script_literal_origins_added: fresh(&nf.script_literal_origins, &|o| {
            base.literals.contains(o) || base.origins.contains(o)
        }),
        frames_added: fresh(&nf.frames, &|f| base.frames.contains(f)),
        permissions_added: fresh(&nf.declared.permissions, &|p| base.permissions.contains(p)),
        ..PageDiff::default()
    };
    let new_csp = nf.declared.csp.clone().unwrap_or_default();
    let old_csp = of.and_then(|f| f.declared.csp.clone()).unwrap_or_default();
    for (i, (list, domains)) in new_csp.lists().into_iter().enumerate() {
        let added = fresh(domains, &|x| base.csp[i].contains(x));
        let removed = match old {
            Some(_) => {
                let now: BTreeSet<&String> = domains.iter().collect();
                fresh(old_csp.lists()[i].1, &|x| now.contains(x))
            }
            None => Vec::new(),
        };
        if !added.is_empty() || !removed.is_empty() {
            d.csp.push(CspChange {
                list: list.to_owned(),
                added,
                removed,
            });
        }
    }
    let mut left = TEXT_DIFF_MAX_CHARS;
    d.texts_added = texts_diff(
        &new.texts.texts,
        &|t| base.texts.contains(t),
        &mut left,
        &mut truncated,
    );
    match (old, of) {
        (Some(old), Some(of)) => {
            truncated |= of.truncated || old.texts.truncated;
            let now = Baseline::of([new]);
            d.mime_type = changed(&of.mime_type, &nf.mime_type);
            d.scripts_removed = fresh(&of.scripts.external, &|s| now.scripts.contains(s));
            d.inline = changed(&inline_of(old), &inline_of(new));
            d.origins_removed = fresh(&of.origins, &|o| now.origins.contains(&o.origin))
                .into_iter()
                .map(|o| o.origin)
                .collect();
            d.script_literal_origins_removed = fresh(&of.script_literal_origins, &|o| {
                now.literals.contains(o) || now.origins.contains(o)
            });
            let shared = of.forms.len().min(nf.forms.len());
            d.forms_changed = (0..shared)
                .filter(|&i| of.forms[i] != nf.forms[i])
                .map(|i| FormChange {
                    index: i,
                    old: of.forms[i].clone(),
                    new: nf.forms[i].clone(),
                })
                .collect();
            d.forms_added = nf.forms[shared..].to_vec();
            d.forms_removed = of.forms[shared..].to_vec();
            d.frames_removed = fresh(&of.frames, &|f| now.frames.contains(f));
            d.meta_csp = changed(&of.meta_csp, &nf.meta_csp);
            d.base_href = changed(&of.base_href, &nf.base_href);
            d.permissions_removed =
                fresh(&of.declared.permissions, &|p| now.permissions.contains(p));
            d.domain = changed(&of.declared.domain, &nf.declared.domain);
            d.prefers_border = changed(&of.declared.prefers_border, &nf.declared.prefers_border);
            d.texts_removed = texts_diff(
                &old.texts.texts,
                &|t| now.texts.contains(t),
                &mut left,
                &mut truncated,
            );
        }
        _ => d.forms_added = fresh(&nf.forms, &|f| base.forms.contains(f)),
    }
    d.truncated = truncated;
    d
}

/// Every address in the strings (values and member names) of `items` under the scan budget;
/// an app page's HTML is left out (its origins are the page's facts).
fn kind_addresses(items: &Items, pages: bool) -> AddressScan<BTreeSet<Address>> {
    let mut scan = AddressScan::new(text::ADDRESS_SCAN_MAX_CHARS);
    for item in &items.items {
        let v = if pages {
            without(&item.value, &["text", "blob"])
        } else {
            item.value.clone()
        };
        let mut path = String::from("$");
        each_string(&v, &mut path, true, &mut |_, s, _| {
            if !scan.truncated {
                scan.scan(&s.lossy());
            }
        });
    }
    scan
}

/// The keys of `items`' entries, cut.
fn key_of(k: &str) -> String {
    text::cap(k, KEY_MAX_CHARS)
}

/// Builds a [`KindDiff`].
struct Differ<'a> {
    kind: Kind,
    b: Builder,
    /// The old pages, read once each (app pages only).
    old_pages: HashMap<&'a str, Page>,
    truncated: bool,
}

impl<'a> Differ<'a> {
    fn item(&mut self, key: &str, old_key: Option<&str>, o: &'a Item, n: &'a Item) -> ItemDiff {
        let (ov, nv) = (&o.value, &n.value);
        let mut text_change = |m: &str| {
            (!same_opt(ov.get(m), nv.get(m))).then(|| self.b.description(ov.get(m), nv.get(m)))
        };
        let description = text_change("description");
        let title = text_change("title");
        let mut skip = vec!["description", "title"];
        let mut arguments = Vec::new();
        let mut arguments_truncated = 0;
        if self.kind == Kind::Prompts {
            if let (Some(oa), Some(na)) = (
                arguments_by_name(ov.get("arguments")),
                arguments_by_name(nv.get("arguments")),
            ) {
                skip.push("arguments");
                (arguments, arguments_truncated) = self.arguments(&oa, &na);
            }
        }
        let mut page = None;
        if self.kind == Kind::AppPages {
            let new_page = app::page(nv);
            let old_page = self
                .old_pages
                .get(old_key.unwrap_or(key))
                .cloned()
                .unwrap_or_else(|| app::page(ov));
            let d = page_diff(&Baseline::of([&old_page]), Some(&old_page), &new_page);
            self.truncated |= d.truncated;
            page = Some(d);
        }
        let leaves = |v: &Json| match self.kind {
            Kind::AppPages => without(&page_leaves(v), &skip),
            _ => without(v, &skip),
        };
        let (old_leaves, new_leaves) = (leaves(ov), leaves(nv));
        let (changes, changes_truncated) = match self.b.schema(Some(&old_leaves), Some(&new_leaves))
        {
            Some(s) => (s.changes, s.truncated),
            None => (Vec::new(), 0),
        };
        ItemDiff {
            key: key_of(key),
            old_key: old_key.map(key_of),
            description,
            title,
            arguments,
            arguments_truncated,
            changes,
            changes_truncated,
            page,
        }
    }

    fn arguments(
        &mut self,
        old: &BTreeMap<&str, &Json>,
        new: &BTreeMap<&str, &Json>,
    ) -> (Vec<ArgumentDiff>, usize) {
        let mut names: Vec<&str> = old.keys().chain(new.keys()).copied().collect();
        names.sort_by(|a, b| json::utf16_cmp(a, b));
        names.dedup();
        let mut out = Vec::new();
        let mut left_out = 0;
        for name in names {
            let change = match (old.get(name), new.get(name)) {
                (None, Some(a)) => ArgumentChange::Added {
                    required: required(a),
                    description: a.get("description").map(|d| {
                        text::cap(&crate::diff::description_text(Some(d)), VALUE_MAX_CHARS)
                    }),
                },
                (Some(a), None) => ArgumentChange::Removed {
                    required: required(a),
                },
                (Some(a), Some(b)) if !same(a, b) => {
                    let (od, nd) = (a.get("description"), b.get("description"));
                    ArgumentChange::Changed {
                        required: changed(&required(a), &required(b)),
                        description: (!same_opt(od, nd)).then(|| self.b.description(od, nd)),
                        members: self
                            .b
                            .members(Some(a), Some(b), &["name", "description", "required"])
                            .0,
                    }
                }
                _ => continue,
            };
            if out.len() >= MAX_ARGUMENT_CHANGES {
                left_out += 1;
                continue;
            }
            out.push(ArgumentDiff {
                name: text::cap(name, crate::diff::NAME_MAX_CHARS),
                change,
            });
        }
        if left_out > 0 {
            self.truncated = true;
        }
        (out, left_out)
    }
}

/// Re-key pairs: among the keys only on one side, a removed and an added entry that share a
/// string `name` no other removed or added entry has (resources and templates only).
fn rekeyed<'a>(pairs: &[(&'a str, Option<&'a Item>, Option<&'a Item>)]) -> Vec<(&'a str, &'a str)> {
    let mut by_name: HashMap<&str, (Vec<&str>, Vec<&str>)> = HashMap::new();
    for &(k, o, n) in pairs {
        match (o, n) {
            (Some(o), None) => {
                if let Some(name) = o.get_str("name") {
                    by_name.entry(name).or_default().0.push(k);
                }
            }
            (None, Some(n)) => {
                if let Some(name) = n.get_str("name") {
                    by_name.entry(name).or_default().1.push(k);
                }
            }
            _ => {}
        }
    }
    let mut out: Vec<(&str, &str)> = by_name
        .into_values()
        .filter_map(|(o, n)| match (o.as_slice(), n.as_slice()) {
            ([o], [n]) => Some((*o, *n)),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| json::utf16_cmp(a.1, b.1));
    out
}

/// The difference between `old` and `new`, both read as entries of `kind` (see [`KindDiff`]
/// for what is matched and what is capped). The card is not a list: its entries have no key,
/// and are all unmatched (the card is compared with `super::card`).
pub fn diff(kind: Kind, old: &Items, new: &Items) -> KindDiff {
    let key = key_member(kind);
    let m = match_items(old, new, key);
    let pages = kind == Kind::AppPages;
    let mut d = Differ {
        kind,
        b: Builder {
            word_budget: WORD_DIFF_BUDGET_CHARS,
            truncated: false,
        },
        old_pages: HashMap::new(),
        truncated: false,
    };
    let rekeys = if matches!(kind, Kind::Resources | Kind::Templates) {
        rekeyed(&m.pairs)
    } else {
        Vec::new()
    };
    let rekeyed_old: HashSet<&str> = rekeys.iter().map(|r| r.0).collect();
    let rekeyed_new: HashMap<&str, &str> = rekeys.iter().map(|&(o, n)| (n, o)).collect();
    let old_by_key: HashMap<&str, &Item> = m
        .pairs
        .iter()
        .filter_map(|&(k, o, _)| o.map(|o| (k, o)))
        .collect();
    let any_added = m.pairs.iter().any(|p| p.1.is_none() && p.2.is_some());
    if pages && any_added {
        d.old_pages = old_by_key
            .iter()
            .map(|(&k, item)| (k, app::page(&item.value)))
            .collect();
    }
    let baseline = (pages && any_added).then(|| Baseline::of(d.old_pages.values()));
    let (mut added, mut removed, mut changed, mut added_pages) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut added_total, mut removed_total, mut changed_total, mut unchanged) = (0, 0, 0, 0);
    let mut touched: Vec<(&str, &Item)> = Vec::new();
    for &(k, o, n) in &m.pairs {
        match (o, n) {
            (Some(_), None) if rekeyed_old.contains(k) => {}
            (None, Some(n)) if rekeyed_new.contains_key(k) => {
                let old_key = rekeyed_new[k];
                changed_total += 1;
                touched.push((k, n));
                if changed.len() < MAX_MODIFIED_DETAILED {
                    changed.push(d.item(k, Some(old_key), old_by_key[old_key], n));
                }
            }
            (None, Some(n)) => {
                added_total += 1;
                touched.push((k, n));
                if added.len() < MAX_LISTED_NAMES {
                    added.push(key_of(k));
                }
                if let Some(base) = &baseline {
                    if added_pages.len() < MAX_MODIFIED_DETAILED {
                        let page = page_diff(base, None, &app::page(&n.value));
                        d.truncated |= page.truncated;
                        added_pages.push(AddedPage {
                            key: key_of(k),
                            page,
                        });
                    }
                }
            }
            (Some(_), None) => {
                removed_total += 1;
                if removed.len() < MAX_LISTED_NAMES {
                    removed.push(key_of(k));
                }
            }
            (Some(o), Some(n)) if same(&o.value, &n.value) => unchanged += 1,
            (Some(o), Some(n)) => {
                changed_total += 1;
                touched.push((k, n));
                if changed.len() < MAX_MODIFIED_DETAILED {
                    changed.push(d.item(k, None, o, n));
                }
            }
            (None, None) => {}
        }
    }
    // Outside addresses in the description and title texts of new and changed entries.
    let old_scan = kind_addresses(old, pages);
    let mut scan: AddressScan<Vec<Address>> = AddressScan::new(text::ADDRESS_SCAN_MAX_CHARS);
    let mut new_addresses = Vec::new();
    let mut new_addresses_total = 0;
    let mut reported: HashSet<(&str, Address)> = HashSet::new();
    for &(k, n) in &touched {
        let v = if pages {
            without(&n.value, &["text", "blob"])
        } else {
            n.value.clone()
        };
        let mut path = String::from("$");
        each_string(&v, &mut path, false, &mut |p, s, at| {
            let StrAt::Member(m) = at else { return };
            if !matches!(m.as_str(), Some("description" | "title")) || scan.truncated {
                return;
            }
            for a in scan.scan(&s.lossy()) {
                if a.kind == AddressKind::Url
                    || old_scan.found.contains(&a)
                    || !reported.insert((k, a.clone()))
                {
                    continue;
                }
                new_addresses_total += 1;
                if new_addresses.len() < MAX_NEW_ADDRESSES {
                    new_addresses.push(AddressAt {
                        key: key_of(k),
                        path: text::cap(p, PATH_MAX_CHARS),
                        address: Address {
                            kind: a.kind,
                            value: text::cap(&a.value, VALUE_MAX_CHARS),
                        },
                    });
                }
            }
        });
    }
    let address_scan_truncated = old_scan.truncated || scan.truncated;
    let truncated = d.truncated
        || d.b.truncated
        || added_total > added.len()
        || removed_total > removed.len()
        || changed_total > changed.len()
        || added_total > added_pages.len() && pages
        || new_addresses_total > new_addresses.len()
        || address_scan_truncated
        || changed.iter().any(|c| c.changes_truncated > 0);
    KindDiff {
        kind,
        added,
        added_total,
        removed,
        removed_total,
        changed,
        changed_total,
        unchanged,
        unmatched_old: m.unmatched_old.len(),
        unmatched_new: m.unmatched_new.len(),
        unmatched_changed: unmatched_differ(old, &m, new),
        added_pages,
        new_addresses,
        new_addresses_total,
        address_scan_truncated,
        truncated,
    }
}

macro_rules! kind_rules {
    ($($name:ident = $id:literal, $class:ident, $meaning:literal;)*) => {
        $(#[doc = $meaning] pub const $name: &str = $id;)*
        /// Every rule of this module, in the order of the module documentation's table (the
        /// text rules it shares with [`crate::classify`] are in [`crate::classify::RULES`]).
        pub const KIND_RULES: &[Rule] = &[$(Rule { id: $id, class: Class::$class, meaning: $meaning }),*];
    };
}

kind_rules! {
    PROMPT_ADDED = "prompt-added", Unsure, "A prompt with no prior definition.";
    PROMPT_REMOVED = "prompt-removed", Unsure, "A prompt is gone.";
    PROMPT_ARGUMENT_ADDED = "prompt-argument-added", Unsure, "A prompt gained an argument.";
    PROMPT_ARGUMENT_REMOVED = "prompt-argument-removed", Unsure, "A prompt lost an argument.";
    PROMPT_ARGUMENT_REQUIRED_CHANGED = "prompt-argument-required-changed", Unsure, "A prompt argument's required changed.";
    RESOURCE_ADDED = "resource-added", Unsure, "A resource with no prior definition.";
    RESOURCE_REMOVED = "resource-removed", Unsure, "A resource is gone.";
    RESOURCE_URI_CHANGED = "resource-uri-changed", Unsure, "A resource of the same name now has another URI.";
    RESOURCE_METADATA_CHANGED = "resource-metadata-changed", Benign, "Only a resource's size or lastModified changed.";
    TEMPLATE_ADDED = "template-added", Unsure, "A resource template with no prior definition.";
    TEMPLATE_REMOVED = "template-removed", Unsure, "A resource template is gone.";
    TEMPLATE_URI_CHANGED = "template-uri-changed", Unsure, "A template of the same name now has another URI template.";
    MIME_TYPE_CHANGED = "mime-type-changed", Unsure, "A resource's, template's or page's mimeType changed.";
    APP_PAGE_ADDED = "app-page-added", Unsure, "An app page with no prior read.";
    APP_PAGE_REMOVED = "app-page-removed", Unsure, "An app page is gone.";
    APP_SCRIPT_ADDED = "app-script-added", Dangerous, "A page loads a script it did not.";
    APP_INLINE_SCRIPT_CHANGED = "app-inline-script-changed", Unsure, "A page's inline scripts or handlers changed.";
    APP_OUTSIDE_ORIGIN_ADDED = "app-outside-origin-added", Dangerous, "A page refers to an outside origin it did not.";
    APP_SCRIPT_LITERAL_ORIGIN_ADDED = "app-script-literal-origin-added", Unsure, "A page's script names a new outside origin in a string.";
    APP_FORM_ADDED = "app-form-added", Unsure, "A page has a new form.";
    APP_FORM_ACTION_CHANGED = "app-form-action-changed", Dangerous, "A form's action or method changed.";
    APP_FRAME_ADDED = "app-frame-added", Unsure, "A page has a new iframe or frame.";
    APP_CSP_WIDENED = "app-csp-widened", Dangerous, "A domain was added to a page's declared CSP.";
    APP_CSP_NARROWED = "app-csp-narrowed", Benign, "A domain was removed from a page's declared CSP.";
    APP_META_CSP_CHANGED = "app-meta-csp-changed", Unsure, "A page's own CSP meta element changed.";
    APP_BASE_CHANGED = "app-base-changed", Unsure, "A page's base URL changed.";
    APP_PERMISSION_ADDED = "app-permission-added", Dangerous, "A page asks for a new permission.";
    APP_PERMISSION_REMOVED = "app-permission-removed", Benign, "A page no longer asks for a permission.";
    APP_DOMAIN_CHANGED = "app-domain-changed", Unsure, "A page's dedicated domain changed.";
    APP_PREFERS_BORDER_CHANGED = "app-prefers-border-changed", Benign, "A page's prefersBorder changed.";
    APP_TEXT_CHANGED = "app-text-changed", Benign, "The texts a user reads on a page changed.";
    APP_PAGE_TRUNCATED = "app-page-truncated", Unsure, "A page was read only in part.";
    KIND_DIFF_TRUNCATED = "kind-diff-truncated", Unsure, "A list of the diff was cut: entries past it are not classified.";
}

/// The class a rule gives: this module's rules, then the tool classification's.
pub fn rule_class(id: &str) -> Class {
    KIND_RULES
        .iter()
        .find(|r| r.id == id)
        .map_or_else(|| classify::rule_class(id), |r| r.class)
}

/// One rule that fired on a change of a kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindSignal {
    /// The rule's id ([`KIND_RULES`] or [`crate::classify::RULES`]; read back as its entry's,
    /// another id is refused).
    // The path spelling keeps serde's derive from taking this for a borrowed `&str`.
    #[serde(deserialize_with = "known_rule")]
    pub rule: &'static std::primitive::str,
    /// The rule's class.
    pub class: Class,
    /// The entry's key (cut to [`KEY_MAX_CHARS`]); `None` for a kind-level signal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// Where, as a normalized path from the entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The old value or text (cut to [`crate::text::VALUE_MAX_CHARS`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// The new value or text (cut).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
    /// More about why it fired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A [`KindSignal`]'s rule read back: this module's rules, then the tool classification's.
fn known_rule<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    classify::known_rule_in(d, &[KIND_RULES, classify::RULES])
}

/// The verdict on a change of a kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindClassification {
    /// The kind.
    #[serde(with = "kind_name")]
    pub kind: Kind,
    /// The worst class of the signals (benign when nothing changed).
    pub class: Class,
    /// Every signal: kind-level ones (`kind-diff-truncated`, `scan-truncated`) first, then
    /// entry by entry in the diff's order; at most [`crate::classify::MAX_SIGNALS`].
    pub signals: Vec<KindSignal>,
    /// How many signals were left out of [`KindClassification::signals`].
    pub signals_truncated: usize,
}

/// Gathers signals.
struct Signals {
    out: Vec<KindSignal>,
}

impl Signals {
    fn emit(
        &mut self,
        rule: &'static str,
        item: Option<&str>,
        path: Option<&str>,
        old: Option<String>,
        new: Option<String>,
        detail: Option<String>,
    ) {
        self.out.push(KindSignal {
            rule,
            class: rule_class(rule),
            item: item.map(key_of),
            path: path.map(|p| text::cap(p, PATH_MAX_CHARS)),
            old,
            new,
            detail,
        });
    }

    /// Run one of the tool classification's text rules, its signals made this kind's.
    fn with_sink(&mut self, item: Option<&str>, f: impl FnOnce(&mut Sink<'_>)) {
        let mut tool_signals: Vec<Signal> = Vec::new();
        f(&mut Sink {
            tool: None,
            out: &mut tool_signals,
        });
        for s in tool_signals {
            self.out.push(KindSignal {
                rule: s.rule,
                class: s.class,
                item: item.map(key_of),
                path: s.path,
                old: s.old,
                new: s.new,
                detail: s.detail,
            });
        }
    }

    /// The old and new texts of a word diff (snippets for a long one), judged as a description.
    fn text(&mut self, item: &str, path: &str, d: &DescriptionDiff) {
        let (o, n) = sides(d);
        self.with_sink(Some(item), |sink| {
            classify::judge_text(
                sink,
                path,
                &o,
                &n,
                Some(classify::shown(&o)),
                Some(classify::shown(&n)),
            );
        });
    }

    /// `pattern-block-added` / `pattern-advise-added` for every match in `matches` (each code
    /// once per entry), `text_at` giving the text at a match's field.
    fn patterns(
        &mut self,
        item: Option<&str>,
        matches: &[Match],
        text_at: &dyn Fn(&str) -> Option<String>,
    ) {
        self.with_sink(item, |sink| {
            classify::pattern_signals(sink, &HashSet::new(), matches, text_at);
        });
    }
}

/// The old and new text of a description's change.
fn sides(d: &DescriptionDiff) -> (String, String) {
    match d {
        DescriptionDiff::Words { ops } => {
            let side = |keep: EditOp| {
                ops.iter()
                    .filter(|WordEdit(op, _)| *op == EditOp::Equal || *op == keep)
                    .map(|WordEdit(_, t)| t.as_str())
                    .collect()
            };
            (side(EditOp::Delete), side(EditOp::Insert))
        }
        DescriptionDiff::Snippets { old, new, .. } => (old.clone(), new.clone()),
    }
}

/// An entry read as a tool, as the rule set reads tools.
fn as_tool(item: &Item) -> Tool {
    Tool {
        value: item.value.clone(),
        raw: item.raw.clone(),
    }
}

/// The rule set's matches in an entry read as a tool, but for the learned score's: it was
/// trained on tool definitions (the rule set does not apply it to `instructions` either), and it
/// judges a whole entry, which a match on the entry's changed texts cannot say.
fn scan_item(tool: &Tool) -> Vec<Match> {
    let mut matches = rules::scan_tool(tool);
    matches.retain(|m| m.code != rules::LEARNED_SCORE);
    matches
}

/// `pattern-…-added` for `matches` of the entry `tool` (keyed `item`).
fn item_patterns(sig: &mut Signals, item: Option<&str>, tool: &Tool, matches: &[Match]) {
    sig.patterns(item, matches, &|f| rules::field_text(tool, f));
}

/// The rule set's matches in page texts: one [`Match`] per rule and text, the field the page's
/// HTML (`$['text']`) and the tool its key.
fn scan_texts(texts: &[PageText]) -> Vec<(Match, String)> {
    let mut out = Vec::new();
    for t in texts {
        for (rule, span) in rules::scan_text(&t.text, false) {
            let r = &rules::RULES[rule];
            out.push((
                Match {
                    class: r.class,
                    code: r.code.to_owned(),
                    field: "$['text']".to_owned(),
                    span,
                    tier: r.tier,
                    tool: None,
                },
                t.text.clone(),
            ));
        }
    }
    out
}

/// Whether a text at `field` is (inside) one of the changed `paths`, or is a member name over
/// one of them.
fn in_changed(field: &str, paths: &[String]) -> bool {
    paths.iter().any(|p| {
        p == field
            || p.strip_prefix(field)
                .is_some_and(|rest| rest.starts_with('['))
            || field
                .strip_prefix(p.as_str())
                .is_some_and(|rest| rest.starts_with('['))
    })
}

/// The index of the argument `name` in a prompt's `arguments`.
fn argument_path(prompt: Option<&Item>, name: &str) -> String {
    let mut path = String::from("$['arguments']");
    let index = prompt
        .and_then(|p| p.get("arguments"))
        .and_then(Json::as_array)
        .and_then(|a| {
            a.iter()
                .position(|x| x.get("name").and_then(Json::as_str) == Some(name))
        });
    if let Some(i) = index {
        push_index(&mut path, i);
    }
    path
}

/// The summary of inline scripts shown in a signal.
fn inline_shown(s: &InlineScripts) -> String {
    format!(
        "{} inline ({} bytes), {} handlers, {} data blocks",
        s.inline, s.inline_bytes, s.handlers, s.data_blocks
    )
}

/// The page's signals.
fn page_signals(sig: &mut Signals, key: &str, d: &PageDiff) {
    let item = Some(key);
    let html = Some("$['text']");
    if let Some(c) = &d.mime_type {
        sig.emit(
            MIME_TYPE_CHANGED,
            item,
            Some("$['mimeType']"),
            c.old.clone(),
            c.new.clone(),
            None,
        );
    }
    for s in &d.scripts_added {
        sig.emit(APP_SCRIPT_ADDED, item, html, None, Some(s.clone()), None);
    }
    if let Some(c) = &d.inline {
        sig.emit(
            APP_INLINE_SCRIPT_CHANGED,
            item,
            html,
            Some(inline_shown(&c.old)),
            Some(inline_shown(&c.new)),
            None,
        );
    }
    for o in &d.origins_added {
        sig.emit(
            APP_OUTSIDE_ORIGIN_ADDED,
            item,
            html,
            None,
            Some(o.origin.clone()),
            Some(o.via.clone()),
        );
    }
    for o in &d.script_literal_origins_added {
        sig.emit(
            APP_SCRIPT_LITERAL_ORIGIN_ADDED,
            item,
            html,
            None,
            Some(o.clone()),
            None,
        );
    }
    let form_shown = |f: &Form| {
        format!(
            "{} {}",
            f.method,
            f.action
                .as_deref()
                .unwrap_or("(no action: the page itself)")
        )
    };
    for f in &d.forms_added {
        sig.emit(APP_FORM_ADDED, item, html, None, Some(form_shown(f)), None);
    }
    for c in &d.forms_changed {
        sig.emit(
            APP_FORM_ACTION_CHANGED,
            item,
            html,
            Some(form_shown(&c.old)),
            Some(form_shown(&c.new)),
            Some(format!("form {}", c.index)),
        );
    }
    for f in &d.frames_added {
        let shown = match (&f.src, f.srcdoc) {
            (Some(src), _) => src.clone(),
            (None, true) => "(srcdoc)".to_owned(),
            (None, false) => "(no src)".to_owned(),
        };
        sig.emit(APP_FRAME_ADDED, item, html, None, Some(shown), None);
    }
    for c in &d.csp {
        let mut path = String::from("$['_meta']['ui']['csp']");
        push_key(&mut path, &c.list);
        for domain in &c.added {
            sig.emit(
                APP_CSP_WIDENED,
                item,
                Some(&path),
                None,
                Some(domain.clone()),
                Some(c.list.clone()),
            );
        }
        if !c.removed.is_empty() {
            sig.emit(
                APP_CSP_NARROWED,
                item,
                Some(&path),
                Some(text::cap(&c.removed.join(" "), VALUE_MAX_CHARS)),
                None,
                Some(c.list.clone()),
            );
        }
    }
    if let Some(c) = &d.meta_csp {
        let joined = |v: &[String]| text::cap(&v.join(" | "), VALUE_MAX_CHARS);
        sig.emit(
            APP_META_CSP_CHANGED,
            item,
            html,
            Some(joined(&c.old)),
            Some(joined(&c.new)),
            None,
        );
    }
    if let Some(c) = &d.base_href {
        sig.emit(
            APP_BASE_CHANGED,
            item,
            html,
            c.old.clone(),
            c.new.clone(),
            None,
        );
    }
    for p in &d.permissions_added {
        sig.emit(
            APP_PERMISSION_ADDED,
            item,
            Some("$['_meta']['ui']['permissions']"),
            None,
            Some(p.clone()),
            None,
        );
    }
    for p in &d.permissions_removed {
        sig.emit(
            APP_PERMISSION_REMOVED,
            item,
            Some("$['_meta']['ui']['permissions']"),
            Some(p.clone()),
            None,
            None,
        );
    }
    if let Some(c) = &d.domain {
        sig.emit(
            APP_DOMAIN_CHANGED,
            item,
            Some("$['_meta']['ui']['domain']"),
            c.old.clone(),
            c.new.clone(),
            None,
        );
    }
    if let Some(c) = &d.prefers_border {
        let shown = |b: Option<bool>| b.map(|b| b.to_string());
        sig.emit(
            APP_PREFERS_BORDER_CHANGED,
            item,
            Some("$['_meta']['ui']['prefersBorder']"),
            shown(c.old),
            shown(c.new),
            None,
        );
    }
    if !d.texts_added.is_empty() || !d.texts_removed.is_empty() {
        sig.emit(
            APP_TEXT_CHANGED,
            item,
            html,
            None,
            None,
            Some(format!(
                "{} texts added, {} removed",
                d.texts_added.len(),
                d.texts_removed.len()
            )),
        );
    }
    if d.truncated {
        sig.emit(APP_PAGE_TRUNCATED, item, html, None, None, None);
    }
}

/// The rule set's matches in the texts of a page that are new: those the diff lists, or every
/// text of the new page when the diff's list was cut.
fn page_patterns(sig: &mut Signals, key: &str, d: &PageDiff, new: Option<&Item>) {
    let all;
    let texts: &[PageText] = if d.truncated {
        all = new.map(|n| app::texts(&n.value).texts).unwrap_or_default();
        &all
    } else {
        &d.texts_added
    };
    let found = scan_texts(texts);
    let matches: Vec<Match> = found.iter().map(|(m, _)| m.clone()).collect();
    // One signal per rule code: show the first matched text.
    let first: HashMap<&str, &str> = found
        .iter()
        .rev()
        .map(|(m, t)| (m.code.as_str(), t.as_str()))
        .collect();
    let mut seen = HashSet::new();
    for m in &matches {
        if !seen.insert(m.code.as_str()) {
            continue;
        }
        let text = first.get(m.code.as_str()).map(|t| t.to_string());
        sig.patterns(Some(key), std::slice::from_ref(m), &|_| text.clone());
    }
}

/// The signals of a changed entry.
fn item_signals(sig: &mut Signals, kind: Kind, c: &ItemDiff, new: Option<&Item>) {
    let start = sig.out.len();
    let key = c.key.as_str();
    let item = Some(key);
    if let Some(old_key) = &c.old_key {
        let (rule, path) = match kind {
            Kind::Templates => (TEMPLATE_URI_CHANGED, "$['uriTemplate']"),
            _ => (RESOURCE_URI_CHANGED, "$['uri']"),
        };
        sig.emit(
            rule,
            item,
            Some(path),
            Some(old_key.clone()),
            Some(c.key.clone()),
            None,
        );
    }
    // The paths of changed texts, for the rule set.
    let mut changed_paths: Vec<String> = Vec::new();
    for (member, d) in [("description", &c.description), ("title", &c.title)] {
        if let Some(d) = d {
            let mut path = String::from("$");
            push_key(&mut path, member);
            sig.text(key, &path, d);
            changed_paths.push(path);
        }
    }
    for a in &c.arguments {
        let at = argument_path(new, &a.name);
        match &a.change {
            ArgumentChange::Added { required, .. } => {
                sig.emit(
                    PROMPT_ARGUMENT_ADDED,
                    item,
                    Some(&at),
                    None,
                    Some(a.name.clone()),
                    Some(if *required { "required" } else { "optional" }.to_owned()),
                );
                changed_paths.push(at);
            }
            ArgumentChange::Removed { required } => sig.emit(
                PROMPT_ARGUMENT_REMOVED,
                item,
                Some(&at),
                Some(a.name.clone()),
                None,
                Some(
                    if *required {
                        "was required"
                    } else {
                        "was optional"
                    }
                    .to_owned(),
                ),
            ),
            ArgumentChange::Changed {
                required,
                description,
                members,
            } => {
                if let Some(r) = required {
                    let mut path = at.clone();
                    push_key(&mut path, "required");
                    sig.emit(
                        PROMPT_ARGUMENT_REQUIRED_CHANGED,
                        item,
                        Some(&path),
                        Some(r.old.to_string()),
                        Some(r.new.to_string()),
                        Some(a.name.clone()),
                    );
                }
                if let Some(d) = description {
                    let mut path = at.clone();
                    push_key(&mut path, "description");
                    sig.text(key, &path, d);
                    changed_paths.push(path);
                }
                for m in members {
                    let mut path = at.clone();
                    push_key(&mut path, &m.member);
                    sig.emit(
                        classify::MEMBER_CHANGED,
                        item,
                        Some(&path),
                        m.old.clone(),
                        m.new.clone(),
                        None,
                    );
                    changed_paths.push(path);
                }
            }
        }
    }
    // Other leaves: one signal per top-level member (and per kind of resource metadata).
    let mut by_member: BTreeMap<String, (&'static str, usize, &PathChange)> = BTreeMap::new();
    for ch in &c.changes {
        changed_paths.push(ch.path.clone());
        let top = top_member(&ch.path);
        let rule = match (kind, top.as_str(), ch.path.as_str()) {
            (_, "$['uri']" | "$['uriTemplate']", _) if c.old_key.is_some() => continue,
            (Kind::AppPages, "$['mimeType']", _) => continue,
            (_, "$['mimeType']", _) => MIME_TYPE_CHANGED,
            (Kind::Resources, "$['size']", _) => RESOURCE_METADATA_CHANGED,
            (Kind::Resources | Kind::Templates, _, "$['annotations']['lastModified']") => {
                RESOURCE_METADATA_CHANGED
            }
            (_, "$['annotations']", _) => classify::ANNOTATION_CHANGED,
            _ => classify::MEMBER_CHANGED,
        };
        let group = if rule == RESOURCE_METADATA_CHANGED || rule == classify::ANNOTATION_CHANGED {
            ch.path.clone()
        } else {
            top
        };
        by_member.entry(group).or_insert((rule, 0, ch)).1 += 1;
    }
    for (path, (rule, n, first)) in by_member {
        let detail = (n > 1).then(|| format!("{n} leaves changed"));
        let (old, new) = if n == 1 {
            (first.old.clone(), first.new.clone())
        } else {
            (None, None)
        };
        sig.emit(rule, item, Some(&path), old, new, detail);
    }
    if let Some(p) = &c.page {
        page_signals(sig, key, p);
        page_patterns(sig, key, p, new);
    } else if let Some(n) = new {
        // The rule set over the new entry, its matches in changed texts (all of them when a
        // list of the diff was cut).
        let all = c.changes_truncated > 0 || c.arguments_truncated > 0;
        let tool = as_tool(n);
        let matches: Vec<Match> = scan_item(&tool)
            .into_iter()
            .filter(|m| all || in_changed(&m.field, &changed_paths))
            .collect();
        item_patterns(sig, Some(key), &tool, &matches);
    }
    if sig.out.len() == start {
        sig.emit(classify::EQUIVALENT_CHANGE, item, None, None, None, None);
    }
}

/// The top-level member a path is under (`$['annotations']`).
fn top_member(path: &str) -> String {
    // A normalized path's first segment ends at the first `']` not escaped by a backslash.
    let bytes = path.as_bytes();
    let mut i = 3; // after `$['`
    while i + 1 < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\'' if bytes[i + 1] == b']' => return path[..i + 2].to_owned(),
            _ => i += 1,
        }
    }
    path.to_owned()
}

/// Judge a change of one kind: `d` is [`diff`] of the two sides, `new` the new entries (whose
/// texts the rule set reads). See the module documentation for the rules.
pub fn classify_kind(kind: Kind, d: &KindDiff, new: &Items) -> KindClassification {
    let (by_key, unmatched) = index_by_key(new, key_member(kind));
    let mut sig = Signals { out: Vec::new() };
    let (added_rule, removed_rule) = match kind {
        Kind::Prompts => (PROMPT_ADDED, PROMPT_REMOVED),
        Kind::Resources => (RESOURCE_ADDED, RESOURCE_REMOVED),
        Kind::Templates => (TEMPLATE_ADDED, TEMPLATE_REMOVED),
        // The card has no keyed entries: nothing is added or removed.
        Kind::AppPages | Kind::Card => (APP_PAGE_ADDED, APP_PAGE_REMOVED),
    };
    // Kind-level signals first: a cap on the signals must not hide them.
    if d.address_scan_truncated {
        sig.emit(
            classify::SCAN_TRUNCATED,
            None,
            None,
            None,
            None,
            Some(format!(
                "only the first {} characters were scanned for addresses",
                text::ADDRESS_SCAN_MAX_CHARS
            )),
        );
    }
    if d.added_total > d.added.len()
        || d.removed_total > d.removed.len()
        || d.changed_total > d.changed.len()
    {
        sig.emit(
            KIND_DIFF_TRUNCATED,
            None,
            None,
            None,
            None,
            Some(format!(
                "{} added, {} removed, {} changed; {}, {} and {} listed",
                d.added_total,
                d.removed_total,
                d.changed_total,
                d.added.len(),
                d.removed.len(),
                d.changed.len()
            )),
        );
    }
    let pages: HashMap<&str, &PageDiff> = d
        .added_pages
        .iter()
        .map(|p| (p.key.as_str(), &p.page))
        .collect();
    for k in &d.added {
        sig.emit(added_rule, Some(k), None, None, None, None);
        let item = by_key.get(k.as_str()).copied();
        if kind == Kind::AppPages {
            if let Some(p) = pages.get(k.as_str()) {
                page_signals(&mut sig, k, p);
                page_patterns(&mut sig, k, p, item);
            }
        } else if let Some(n) = item {
            let tool = as_tool(n);
            item_patterns(&mut sig, Some(k), &tool, &scan_item(&tool));
        }
    }
    for k in &d.removed {
        sig.emit(removed_rule, Some(k), None, None, None, None);
    }
    for c in &d.changed {
        item_signals(&mut sig, kind, c, by_key.get(c.key.as_str()).copied());
    }
    for a in &d.new_addresses {
        sig.emit(
            classify::ADDRESS_ADDED,
            Some(&a.key),
            Some(&a.path),
            None,
            Some(a.address.value.clone()),
            Some(format!("{:?}", a.address.kind).to_lowercase()),
        );
    }
    if d.unmatched_changed {
        sig.emit(
            classify::ENTRY_UNMATCHED,
            None,
            None,
            Some(d.unmatched_old.to_string()),
            Some(d.unmatched_new.to_string()),
            Some("entries without a unique key differ".to_owned()),
        );
        if kind != Kind::AppPages {
            for &i in &unmatched {
                let tool = as_tool(&new.items[i]);
                item_patterns(&mut sig, None, &tool, &scan_item(&tool));
            }
        }
    }
    let mut signals = sig.out;
    let class = signals.iter().map(|s| s.class).max().unwrap_or_default();
    let signals_truncated = signals.len().saturating_sub(classify::MAX_SIGNALS);
    signals.truncate(classify::MAX_SIGNALS);
    KindClassification {
        kind,
        class,
        signals,
        signals_truncated,
    }
}

/// A change of one kind as text for a terminal, as [`crate::render::text`] shows a tool set's:
/// the kind and its class, every signal, then the entries added, removed and changed (word-diff
/// runs marked `[-old-]` and `{+new+}`), the added pages, and the new outside addresses.
pub fn render(d: &KindDiff, c: &KindClassification) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", d.kind.as_str(), c.class.as_str());
    for s in &c.signals {
        crate::render::SignalLine {
            class: s.class,
            rule: s.rule,
            subject: s.item.clone(),
            path: s.path.as_deref(),
            old: s.old.as_deref(),
            new: s.new.as_deref(),
            detail: s.detail.as_deref(),
        }
        .write(&mut out);
    }
    if c.signals_truncated > 0 {
        let _ = writeln!(out, "  … {} more signals", c.signals_truncated);
    }
    for (label, keys, total) in [
        ("added", &d.added, d.added_total),
        ("removed", &d.removed, d.removed_total),
    ] {
        if total > 0 {
            let _ = writeln!(out, "{label} ({total}): {}", keys.join(", "));
        }
    }
    if d.changed_total > 0 {
        let _ = writeln!(out, "changed ({}):", d.changed_total);
    }
    let text_line = |out: &mut String, label: &str, t: &DescriptionDiff| match t {
        DescriptionDiff::Words { ops } => {
            let _ = writeln!(out, "    {label}: {}", crate::render::word_runs(ops));
        }
        DescriptionDiff::Snippets { old, new, .. } => {
            let _ = writeln!(out, "    {label} (long): {old:?} -> {new:?}");
        }
    };
    let absent = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".to_owned());
    for i in &d.changed {
        match &i.old_key {
            Some(old) => {
                let _ = writeln!(out, "  {} (was {old})", i.key);
            }
            None => {
                let _ = writeln!(out, "  {}", i.key);
            }
        }
        if let Some(t) = &i.description {
            text_line(&mut out, "description", t);
        }
        if let Some(t) = &i.title {
            text_line(&mut out, "title", t);
        }
        for a in &i.arguments {
            match &a.change {
                ArgumentChange::Added { required, .. } => {
                    let how = if *required { "required" } else { "optional" };
                    let _ = writeln!(out, "    argument {}: added ({how})", a.name);
                }
                ArgumentChange::Removed { .. } => {
                    let _ = writeln!(out, "    argument {}: removed", a.name);
                }
                ArgumentChange::Changed {
                    required,
                    description,
                    members,
                } => {
                    if let Some(r) = required {
                        let _ = writeln!(
                            out,
                            "    argument {} required: {} -> {}",
                            a.name, r.old, r.new
                        );
                    }
                    if let Some(t) = description {
                        text_line(&mut out, &format!("argument {} description", a.name), t);
                    }
                    for m in members {
                        let _ = writeln!(
                            out,
                            "    argument {} {}: {} -> {}",
                            a.name,
                            m.member,
                            absent(&m.old),
                            absent(&m.new)
                        );
                    }
                }
            }
        }
        for ch in &i.changes {
            let _ = writeln!(
                out,
                "    {}: {} -> {}",
                ch.path,
                absent(&ch.old),
                absent(&ch.new)
            );
        }
        if let Some(p) = &i.page {
            page_lines(&mut out, p);
        }
    }
    for p in &d.added_pages {
        let _ = writeln!(out, "added page {}:", p.key);
        page_lines(&mut out, &p.page);
    }
    if d.new_addresses_total > 0 {
        let values: Vec<&str> = d
            .new_addresses
            .iter()
            .map(|a| a.address.value.as_str())
            .collect();
        let _ = writeln!(
            out,
            "new outside addresses ({}): {}",
            d.new_addresses_total,
            values.join(", ")
        );
    }
    if d.truncated {
        out.push_str("(output truncated: see the caps in toolset::surface::diff)\n");
    }
    out
}

/// A page's changes, one line each.
fn page_lines(out: &mut String, p: &PageDiff) {
    use std::fmt::Write as _;
    let list = |out: &mut String, label: &str, sign: char, items: &[String]| {
        if !items.is_empty() {
            let _ = writeln!(
                out,
                "    {label}: {sign} {}",
                items.join(&format!(", {sign} "))
            );
        }
    };
    list(out, "scripts", '+', &p.scripts_added);
    list(out, "scripts", '-', &p.scripts_removed);
    if let Some(c) = &p.inline {
        let _ = writeln!(
            out,
            "    inline scripts: {} -> {}",
            inline_shown(&c.old),
            inline_shown(&c.new)
        );
    }
    let origins: Vec<String> = p
        .origins_added
        .iter()
        .map(|o| format!("{} ({})", o.origin, o.via))
        .collect();
    list(out, "outside origins", '+', &origins);
    list(out, "outside origins", '-', &p.origins_removed);
    list(
        out,
        "origins in script strings",
        '+',
        &p.script_literal_origins_added,
    );
    list(
        out,
        "origins in script strings",
        '-',
        &p.script_literal_origins_removed,
    );
    let form = |f: &Form| {
        format!(
            "{} {}",
            f.method,
            f.action.as_deref().unwrap_or("(no action)")
        )
    };
    list(
        out,
        "forms",
        '+',
        &p.forms_added.iter().map(form).collect::<Vec<_>>(),
    );
    list(
        out,
        "forms",
        '-',
        &p.forms_removed.iter().map(form).collect::<Vec<_>>(),
    );
    for c in &p.forms_changed {
        let _ = writeln!(
            out,
            "    form {}: {} -> {}",
            c.index,
            form(&c.old),
            form(&c.new)
        );
    }
    let frame = |f: &Frame| match (&f.src, f.srcdoc) {
        (Some(s), _) => s.clone(),
        (None, true) => "(srcdoc)".to_owned(),
        (None, false) => "(no src)".to_owned(),
    };
    list(
        out,
        "frames",
        '+',
        &p.frames_added.iter().map(frame).collect::<Vec<_>>(),
    );
    list(
        out,
        "frames",
        '-',
        &p.frames_removed.iter().map(frame).collect::<Vec<_>>(),
    );
    for c in &p.csp {
        list(out, &format!("csp {}", c.list), '+', &c.added);
        list(out, &format!("csp {}", c.list), '-', &c.removed);
    }
    if let Some(c) = &p.meta_csp {
        let _ = writeln!(out, "    meta csp: {:?} -> {:?}", c.old, c.new);
    }
    if let Some(c) = &p.base_href {
        let _ = writeln!(out, "    base href: {:?} -> {:?}", c.old, c.new);
    }
    list(out, "permissions", '+', &p.permissions_added);
    list(out, "permissions", '-', &p.permissions_removed);
    if let Some(c) = &p.domain {
        let _ = writeln!(out, "    domain: {:?} -> {:?}", c.old, c.new);
    }
    if let Some(c) = &p.prefers_border {
        let _ = writeln!(out, "    prefersBorder: {:?} -> {:?}", c.old, c.new);
    }
    for (sign, texts) in [('+', &p.texts_added), ('-', &p.texts_removed)] {
        for t in texts {
            let _ = writeln!(
                out,
                "    text {sign} {}: {:?}",
                t.at.as_str(),
                text::cap(&t.text, 120)
            );
        }
    }
}
