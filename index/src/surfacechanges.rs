//! Changes of the surface beyond `tools/list` (schema version 8): per kind, `card-mismatch` and
//! `cloaking`, derived from each entry's `surface` and `second` members and the stored
//! observation documents (so [`Index::rebuild`](crate::Index::rebuild) reproduces them).
//!
//! # Per-kind changes (`prompts`, `resources`, `resourceTemplates`, `appPages`, `card`)
//!
//! When an entry read a kind completely (`{"digest","count"}`) and the target's previous entry
//! that read that kind completely holds another digest, a change of that kind: `old_entry` that
//! entry, `old_full`/`new_full` the two digests of the kind (not tool-set digests),
//! `diff` the [`KindDiff`] and `classification` the [`KindClassification`] as JSON
//! (`toolmark_toolset::surface::diff`), `class` the classification's, `added`/`removed`/
//! `modified` the diff's totals of entries added, removed and changed. A kind that was not read
//! completely (`{"status"}`) is no change and does not move the kind's current digest: the next
//! complete read is compared with the last complete one. The card is one document, not a list:
//! it is compared as one unkeyed entry ([`Items::of_card`]), so its change says `entry-unmatched`
//! (unsure) and the rule set reads the new card's texts. When either document is not stored or
//! its kind cannot be read again, the change is recorded `unsure` with no diff (as a tool-set
//! change without documents).
//!
//! # `card-mismatch`
//!
//! When an `ok` entry read a card that lists tools (a SEP-1649-style card, [`card::tools`]) and
//! that list disagrees with the tool set the same entry served ([`card::compare`] not empty): a
//! change of kind `card-mismatch` with `old_entry` = `new_entry` = the entry, `old_full` the
//! card's digest, `new_full` the served tool set's full digest, `diff` the
//! [`card::CardComparison`] as JSON (no classification), `added` the tools only the card lists,
//! `removed` the served tools the card does not list, `modified` the tools whose definitions
//! differ. The class: `dangerous` when a tool both list has another definition on the card
//! than the one served (what a client reads before it connects is not what a model is given);
//! else `unsure` (a card listing tools the endpoint does not serve, or missing some, is often a
//! stale card, sometimes a decoy). One per onset: the change is made when the mismatch starts or
//! its card digest or full digest changes (`targets.card_mismatch` holds the pair of digests
//! last compared and whether they disagreed, so a pair already compared is not read again); an
//! entry whose card agrees ends it, one that did not read the card or the tools leaves it as it
//! was.
//!
//! # `cloaking`
//!
//! When an entry's `second` (the tools listed again from a second client identity) was read
//! completely and its digest is not the entry's `full`: a change of kind `cloaking`, always
//! `dangerous` (a server that answers another client with other tools is hiding what it serves
//! someone), with `old_entry` = `new_entry` = the entry, `old_full` the first listing's full
//! digest, `new_full` the second's, and, when the document's `secondLook` pages give a tool set,
//! `diff`/`classification` the tool-set diff and classification of the first listing to the
//! second (the class stays `dangerous` whatever the classification says). One per onset:
//! `targets.cloaking` holds the pair of digests in force; consecutive entries with the same
//! pair make one change, an entry whose second listing agrees ends it, one without a complete
//! second listing leaves it as it was.

use rusqlite::{OptionalExtension, Transaction, params};
use toolmark_log::entry::{Entry, KindEntry};
use toolmark_toolset::Sri;
use toolmark_toolset::surface::card;
use toolmark_toolset::surface::diff::{KindClassification, KindDiff, classify_kind, diff};
use toolmark_toolset::surface::items::Items;
use toolmark_toolset::surface::{Kind, OK};

use crate::blobs::Blobs;
use crate::document::{Document, RawPage};
use crate::index::IndexError;
use crate::queries::{checked_tool_set, parse_raw};
use crate::rows::int;

/// Version 8: the surface's change kinds in `changes` (rebuilt, ids kept), the onset state of
/// `card-mismatch` and `cloaking` on `targets`, and an index to find a target's previous read
/// of a kind. Entries before version 7 carry no surface and the entries of version 7 were
/// indexed without these changes: nothing is derived for them (a rebuild derives them).
pub(crate) const SURFACE_CHANGE_TABLES: &str = "
CREATE TABLE changes_v8 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    target_id TEXT NOT NULL,
    server TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    old_entry INTEGER NOT NULL,
    new_entry INTEGER NOT NULL,
    old_full TEXT NOT NULL,
    new_full TEXT NOT NULL,
    old_mtl1 TEXT,
    new_mtl1 TEXT,
    class TEXT NOT NULL CHECK (class IN ('benign', 'unsure', 'dangerous')),
    added INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    diff TEXT,
    classification TEXT,
    kind TEXT NOT NULL DEFAULT 'tools' CHECK (kind IN
        ('tools', 'authorization', 'behaviour', 'registry', 'instructions', 'scan',
         'prompts', 'resources', 'resourceTemplates', 'appPages', 'card', 'card-mismatch',
         'cloaking')),
    old_auth TEXT,
    new_auth TEXT,
    old_behaviour TEXT,
    new_behaviour TEXT,
    old_registry TEXT,
    new_registry TEXT,
    UNIQUE (new_entry, kind)
) STRICT;
INSERT INTO changes_v8 (id, target_id, server, endpoint, observed_at, old_entry, new_entry,
    old_full, new_full, old_mtl1, new_mtl1, class, added, removed, modified, diff,
    classification, kind, old_auth, new_auth, old_behaviour, new_behaviour, old_registry,
    new_registry)
SELECT id, target_id, server, endpoint, observed_at, old_entry, new_entry, old_full, new_full,
    old_mtl1, new_mtl1, class, added, removed, modified, diff, classification, kind, old_auth,
    new_auth, old_behaviour, new_behaviour, old_registry, new_registry FROM changes;
DROP TABLE changes;
ALTER TABLE changes_v8 RENAME TO changes;
CREATE INDEX IF NOT EXISTS changes_target ON changes (target_id, id);
CREATE INDEX IF NOT EXISTS changes_server ON changes (server, id);
CREATE INDEX IF NOT EXISTS changes_class ON changes (class, id);
CREATE INDEX IF NOT EXISTS changes_new_entry ON changes (new_entry);
CREATE INDEX IF NOT EXISTS changes_observed_at ON changes (observed_at, kind, class);
CREATE INDEX IF NOT EXISTS observation_kinds_target ON observation_kinds (target_id, kind, entry);
ALTER TABLE targets ADD COLUMN card_mismatch TEXT;
ALTER TABLE targets ADD COLUMN cloaking TEXT;
";

/// The change kinds this module derives, in the order an entry's changes of them are made
/// (after its `tools`, `instructions` and `scan` changes).
pub const SURFACE_CHANGE_KINDS: [&str; 7] = [
    "prompts",
    "resources",
    "resourceTemplates",
    "appPages",
    "card",
    "card-mismatch",
    "cloaking",
];

/// One change row's own columns (the target's are the entry's).
struct Row<'a> {
    kind: &'a str,
    old_entry: u64,
    old_full: &'a str,
    new_full: &'a str,
    class: &'a str,
    counts: (usize, usize, usize),
    diff: Option<String>,
    classification: Option<String>,
}

fn insert(tx: &Transaction, (index, entry): (u64, &Entry), r: Row<'_>) -> Result<i64, IndexError> {
    tx.prepare_cached(
        "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry, new_entry,
             old_full, new_full, class, added, removed, modified, diff, classification, kind)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        entry.subject.id().as_str(),
        entry.subject.server,
        entry.subject.target,
        entry.observed_at,
        int(r.old_entry)?,
        int(index)?,
        r.old_full,
        r.new_full,
        r.class,
        int(r.counts.0 as u64)?,
        int(r.counts.1 as u64)?,
        int(r.counts.2 as u64)?,
        r.diff,
        r.classification,
        r.kind,
    ])?;
    Ok(tx.last_insert_rowid())
}

/// The surface changes of an entry (indexed now, its `observation_kinds` rows written), in
/// [`SURFACE_CHANGE_KINDS`] order; returns their ids. `doc` is the entry's document.
pub(crate) fn derive(
    tx: &Transaction,
    blobs: &Blobs,
    (index, entry): (u64, &Entry),
    doc: Option<&Document<RawPage>>,
) -> Result<Vec<i64>, IndexError> {
    let mut out = Vec::new();
    for (kind, e) in entry.surface.iter().flatten() {
        if let KindEntry::Read { digest, .. } = e
            && let Some(id) = kind_change(tx, blobs, (index, entry), doc, *kind, digest)?
        {
            out.push(id);
        }
    }
    out.extend(card_mismatch(tx, (index, entry), doc)?);
    out.extend(cloaking(tx, (index, entry), doc)?);
    Ok(out)
}

/// The entries of `kind` in `doc`'s surface, when it holds them readably and they are the ones
/// `digest` (the entry's digest of the kind) names.
fn items_of(doc: &Document<RawPage>, kind: Kind, digest: &Sri) -> Option<Items> {
    let surface = doc.surface.as_ref()?;
    match kind {
        Kind::Card => {
            let c = surface.card.as_ref().filter(|c| c.status == OK)?;
            let body = c.body.as_deref()?;
            (card::digest(body).ok()? == *digest).then_some(())?;
            Items::of_card(body).ok()
        }
        Kind::AppPages => Items::of_reads(&surface.app_pages)
            .ok()
            .filter(|i| i.digest() == *digest),
        k => Items::of_list(k, surface.list(k)?)
            .ok()
            .filter(|i| i.digest() == *digest),
    }
}

/// The stored document of an entry already indexed, when its blob is stored and decodes.
fn stored_document(
    tx: &Transaction,
    blobs: &Blobs,
    entry: u64,
) -> Result<Option<Document<RawPage>>, IndexError> {
    let raw: Option<String> = tx
        .prepare_cached("SELECT raw FROM observations WHERE entry = ?1")?
        .query_row([int(entry)?], |r| r.get(0))
        .optional()?
        .flatten();
    let Some(raw) = raw else { return Ok(None) };
    let Some(bytes) = blobs.get(&parse_raw(&raw, entry)?)? else {
        return Ok(None);
    };
    Ok(Document::decode_raw_pages(&bytes).ok())
}

/// A change of `kind` when the target's previous complete read of it holds another digest.
fn kind_change(
    tx: &Transaction,
    blobs: &Blobs,
    (index, entry): (u64, &Entry),
    doc: Option<&Document<RawPage>>,
    kind: Kind,
    digest: &Sri,
) -> Result<Option<i64>, IndexError> {
    let previous: Option<(i64, String)> = tx
        .prepare_cached(
            "SELECT entry, digest FROM observation_kinds
             WHERE target_id = ?1 AND kind = ?2 AND entry < ?3 AND digest IS NOT NULL
             ORDER BY entry DESC LIMIT 1",
        )?
        .query_row(
            params![entry.subject.id().as_str(), kind.as_str(), int(index)?],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let new_digest = digest.to_string();
    let Some((old_entry, old_digest)) = previous else {
        return Ok(None);
    };
    if old_digest == new_digest {
        return Ok(None);
    }
    let old_entry = u64::try_from(old_entry)
        .map_err(|_| IndexError::Inconsistent(format!("entry {old_entry} is negative")))?;
    let old_sri: Option<Sri> = old_digest.parse().ok();
    let old_items = match old_sri {
        Some(sri) => stored_document(tx, blobs, old_entry)?.and_then(|d| items_of(&d, kind, &sri)),
        None => None,
    };
    let new_items = doc.and_then(|d| items_of(d, kind, digest));
    let analysed: Option<(KindDiff, KindClassification)> =
        old_items.zip(new_items).map(|(old, new)| {
            let d = diff(kind, &old, &new);
            let c = classify_kind(kind, &d, &new);
            (d, c)
        });
    let (class, counts, d, c) = match &analysed {
        Some((d, c)) => (
            c.class.as_str(),
            (d.added_total, d.removed_total, d.changed_total),
            Some(serde_json::to_string(d)?),
            Some(serde_json::to_string(c)?),
        ),
        None => ("unsure", (0, 0, 0), None, None),
    };
    let row = Row {
        kind: kind.as_str(),
        old_entry,
        old_full: &old_digest,
        new_full: &new_digest,
        class,
        counts,
        diff: d,
        classification: c,
    };
    Ok(Some(insert(tx, (index, entry), row)?))
}

/// The onset state of a target: `card_mismatch` (the card digest and full digest last compared
/// and whether they disagreed, `1` or `0`) or `cloaking` (the pair of digests in force).
fn onset(tx: &Transaction, entry: &Entry, column: &str) -> Result<Option<String>, IndexError> {
    Ok(tx
        .prepare_cached(&format!("SELECT {column} FROM targets WHERE id = ?1"))?
        .query_row([entry.subject.id().as_str()], |r| r.get(0))
        .optional()?
        .flatten())
}

fn set_onset(
    tx: &Transaction,
    entry: &Entry,
    column: &str,
    value: Option<&str>,
) -> Result<(), IndexError> {
    tx.prepare_cached(&format!("UPDATE targets SET {column} = ?2 WHERE id = ?1"))?
        .execute(params![entry.subject.id().as_str(), value])?;
    Ok(())
}

/// The class of a card that disagrees with the served tools (see the module documentation).
pub fn card_mismatch_class(c: &card::CardComparison) -> &'static str {
    if c.differing_total > 0 {
        "dangerous"
    } else {
        "unsure"
    }
}

/// A `card-mismatch` change when the entry's card lists tools other than the ones it served,
/// at the onset of that mismatch.
fn card_mismatch(
    tx: &Transaction,
    (index, entry): (u64, &Entry),
    doc: Option<&Document<RawPage>>,
) -> Result<Option<i64>, IndexError> {
    let card_digest = entry
        .surface
        .iter()
        .flatten()
        .find_map(|(k, e)| match (k, e) {
            (Kind::Card, KindEntry::Read { digest, .. }) => Some(digest),
            _ => None,
        });
    let (Some(card_digest), Some(full), Some(raw), Some(doc), true) = (
        card_digest,
        entry.full,
        entry.raw,
        doc,
        entry.status.is_ok(),
    ) else {
        return Ok(None);
    };
    let (card_digest, full, raw) = (card_digest.to_string(), full.to_string(), raw.to_string());
    // The comparison is a function of the card and the served set (compared canonically, so of
    // its full digest): a pair compared before, on the target's last comparison, gives what it
    // gave then, and is not read again.
    let pair = format!("{card_digest} {full}");
    let last = onset(tx, entry, "card_mismatch")?;
    if last
        .as_deref()
        .and_then(|l| l.rsplit_once(' '))
        .map(|(p, _)| p)
        == Some(pair.as_str())
    {
        return Ok(None);
    }
    let Some(body) = doc
        .surface
        .as_ref()
        .and_then(|s| s.card.as_ref())
        .and_then(|c| c.body.as_deref())
    else {
        return Ok(None);
    };
    let Ok(card_doc) = card::document(body) else {
        return Ok(None);
    };
    // A served set that cannot be read again (or is not the entry's) leaves the state as it was.
    let Ok(served) = checked_tool_set(doc.tool_set(), &raw, &full, index) else {
        return Ok(None);
    };
    let comparison = card::compare(&card::tools(&card_doc), &served);
    let disagrees = !comparison.is_empty();
    set_onset(
        tx,
        entry,
        "card_mismatch",
        Some(&format!("{pair} {}", u8::from(disagrees))),
    )?;
    if !disagrees {
        return Ok(None);
    }
    let row = Row {
        kind: "card-mismatch",
        old_entry: index,
        old_full: &card_digest,
        new_full: &full,
        class: card_mismatch_class(&comparison),
        counts: (
            comparison.only_card_total,
            comparison.only_served_total,
            comparison.differing_total,
        ),
        diff: Some(serde_json::to_string(&comparison)?),
        classification: None,
    };
    Ok(Some(insert(tx, (index, entry), row)?))
}

/// A `cloaking` change when the entry's second listing has another digest than its first, at
/// the onset of that pair.
fn cloaking(
    tx: &Transaction,
    (index, entry): (u64, &Entry),
    doc: Option<&Document<RawPage>>,
) -> Result<Option<i64>, IndexError> {
    let (Some(KindEntry::Read { digest: second, .. }), Some(full)) = (&entry.second, entry.full)
    else {
        return Ok(None);
    };
    let (full, second) = (full.to_string(), second.to_string());
    if full == second {
        set_onset(tx, entry, "cloaking", None)?;
        return Ok(None);
    }
    let key = format!("{full} {second}");
    if onset(tx, entry, "cloaking")?.as_deref() == Some(key.as_str()) {
        return Ok(None);
    }
    set_onset(tx, entry, "cloaking", Some(&key))?;
    // The two listings' tool sets, each checked against its digest.
    let first = match (doc, entry.raw) {
        (Some(d), Some(raw)) => checked_tool_set(d.tool_set(), &raw.to_string(), &full, index).ok(),
        _ => None,
    };
    let other = doc
        .and_then(|d| d.second_look.as_ref())
        .and_then(|s| s.tool_set())
        .filter(|s| toolmark_toolset::full::digest(s).to_string() == second);
    let analysed = first.zip(other).map(|(a, b)| {
        (
            toolmark_toolset::diff::diff(&a, &b),
            toolmark_toolset::classify::classify(&a, &b),
        )
    });
    let (counts, d, c) = match &analysed {
        Some((d, c)) => (
            (d.added_total, d.removed_total, d.modified_total),
            Some(serde_json::to_string(d)?),
            Some(serde_json::to_string(c)?),
        ),
        None => ((0, 0, 0), None, None),
    };
    let row = Row {
        kind: "cloaking",
        old_entry: index,
        old_full: &full,
        new_full: &second,
        class: "dangerous",
        counts,
        diff: d,
        classification: c,
    };
    Ok(Some(insert(tx, (index, entry), row)?))
}
