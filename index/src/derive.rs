//! Deriving the index from the log and the blobs: the observation and change rows and the
//! `last_*`/`current_*` columns of targets.
//!
//! They are computed by one function ([`index_entries`]) from log entries (read back from the
//! log's own bundles) and the blobs they name; [`crate::Recorder`] uses it for fresh entries
//! and [`Index::catch_up`] for entries the index has not seen (after a crash between the log
//! append and the index commit, or on a new database). [`Index::rebuild`] clears those rows and
//! derives them again; change ids then come out the same, because changes are numbered in log
//! order. Registry metadata and runs are not in the log and are not rebuilt.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, Transaction, params};
use toolmark_log::entry::{Entry, KindEntry};
use toolmark_log::{Log, LogError, tiles};
use toolmark_observation::registry_facts;
use toolmark_toolset::Sri;
use toolmark_toolset::surface::cache::{CacheHints, Scope};

use crate::blobs::Blobs;
use crate::document::{DocVia, Document, RawPage};
use crate::index::{Index, IndexError, endpoint_key};
use crate::packages::{
    Behaviour, BehaviourSide, RegistryFacts, RegistrySide, behaviour_of, compare, side_text,
    version_of,
};
use crate::queries::{ToolSetRef, checked_tool_set, parse_raw};
use crate::record::AWAITING_SANDBOX;
use crate::rows::{int, unsigned};
use crate::schema::{meta, set_log_size_indexed, set_meta};

/// Entries indexed per transaction by [`Index::catch_up`] (bounds memory and transaction size).
const CATCH_UP_CHUNK: u64 = 4_096;

impl Index {
    /// Index every log entry the index has not seen yet (observation rows, target state,
    /// changes), reading entries from the log's bundles and documents from the blobs. Returns
    /// how many entries it indexed. Rows it derives have no `run_id`.
    pub fn catch_up(&mut self, log: &Log, blobs: &Blobs) -> Result<u64, IndexError> {
        self.with_follow_cache(|index| index.catch_up_now(log, blobs))
    }

    /// [`Index::catch_up`] with the connection's cache as it is.
    fn catch_up_now(&mut self, log: &Log, blobs: &Blobs) -> Result<u64, IndexError> {
        let vkey = log.vkey();
        match meta(&self.conn, "log_vkey")? {
            Some(v) if v == vkey => {}
            Some(v) => {
                return Err(IndexError::Inconsistent(format!(
                    "this index follows the log {v}, not {vkey}"
                )));
            }
            None => set_meta(&self.conn, "log_vkey", &vkey)?,
        }
        crate::census::refresh(self, blobs)?;
        self.rescan(blobs, crate::scans::RESCAN_PER_PASS)?;
        let from = self.log_size_indexed()?;
        let to = log.head().size;
        if from > to {
            return Err(IndexError::Inconsistent(format!(
                "the index has seen {from} entries, the log holds {to}"
            )));
        }
        let mut at = from;
        while at < to {
            let end = (at + CATCH_UP_CHUNK).min(to);
            let entries = read_entries(log, at, end)?;
            let tx = self.conn.transaction()?;
            index_entries(&tx, blobs, &entries, None)?;
            set_log_size_indexed(&tx, end)?;
            tx.commit()?;
            at = end;
        }
        Ok(to - from)
    }

    /// Clear every row derived from the log (observations, changes, the entry columns of
    /// targets) and derive them again from the log and the blobs. Returns how many entries it
    /// indexed.
    pub fn rebuild(&mut self, log: &Log, blobs: &Blobs) -> Result<u64, IndexError> {
        let tx = self.conn.transaction()?;
        tx.execute_batch(
            "DELETE FROM observations;
             DELETE FROM changes;
             DELETE FROM package_observations;
             DELETE FROM target_sensitive;
             DELETE FROM target_scans;
             DELETE FROM observation_kinds;
             DELETE FROM security_events;
             DELETE FROM sqlite_sequence WHERE name = 'changes';
             UPDATE targets SET last_status = NULL, last_detail = NULL, last_entry = NULL,
                 last_observed_at = NULL, last_ok_entry = NULL, current_full = NULL,
                 current_mtl1 = NULL, current_raw = NULL, current_tools = NULL,
                 current_auth = NULL, current_auth_entry = NULL, card_mismatch = NULL,
                 cloaking = NULL;",
        )?;
        set_log_size_indexed(&tx, 0)?;
        tx.commit()?;
        self.catch_up(log, blobs)
    }
}

/// Entries `from..to` decoded from the log's published bundles (one read per bundle).
pub(crate) fn read_entries(log: &Log, from: u64, to: u64) -> Result<Vec<(u64, Entry)>, IndexError> {
    const WIDTH: u64 = 256;
    let size = log.head().size;
    if to > size {
        return Err(IndexError::Inconsistent(format!(
            "entries up to {to} asked for, the log holds {size}"
        )));
    }
    let mut out = Vec::with_capacity(to.saturating_sub(from) as usize);
    let mut b = from / WIDTH;
    while b * WIDTH < to {
        let width = ((b + 1) * WIDTH).min(size) - b * WIDTH;
        let path = tiles::bundle_path(b, width as u16);
        let bytes = log
            .read_public(&path)?
            .ok_or_else(|| IndexError::Inconsistent(format!("log bundle {path} is missing")))?;
        let members = tiles::decode_bundle(&bytes).map_err(LogError::from)?;
        for i in (b * WIDTH).max(from)..((b + 1) * WIDTH).min(to) {
            let raw = members
                .get((i - b * WIDTH) as usize)
                .ok_or_else(|| IndexError::Inconsistent(format!("log bundle {path} is short")))?;
            let entry =
                Entry::decode(raw).map_err(|source| IndexError::Entry { index: i, source })?;
            out.push((i, entry));
        }
        b += 1;
    }
    Ok(out)
}

/// The observation document an entry names, verified against the entry, its pages kept raw
/// (unescaped only when a tool set is needed: [`Document::decode_raw_pages`]).
/// `read`: the document as [`prefetch`] already read, hashed and decoded it.
fn load_document(
    blobs: &Blobs,
    raw: &str,
    index: u64,
    entry: &Entry,
    read: Option<Document<RawPage>>,
) -> Result<Document<RawPage>, IndexError> {
    let doc = match read {
        Some(doc) => doc,
        None => {
            let sri = parse_raw(raw, index)?;
            let bytes = blobs.get(&sri)?.ok_or_else(|| IndexError::MissingBlob {
                entry: index,
                sri: raw.to_owned(),
            })?;
            Document::decode_raw_pages(&bytes).map_err(|source| IndexError::Document {
                sri: raw.to_owned(),
                source,
            })?
        }
    };
    // A package's document under the entry of that package at that version; a remote's under a
    // remote's entry.
    let package = match &doc.via {
        DocVia::Remote(_) => None,
        DocVia::Package(p) => Some(&p.id),
    };
    if doc.target.server != entry.subject.server
        || doc.target.endpoint != entry.subject.target
        || doc.status != entry.status.as_str()
        || package != entry.subject.package.as_ref()
    {
        return Err(IndexError::Inconsistent(format!(
            "entry {index} and its document {raw} describe different observations"
        )));
    }
    Ok(doc)
}

/// The state of a target before an entry is indexed.
struct TargetState {
    last_entry: Option<u64>,
    last_ok_entry: Option<u64>,
    current_full: Option<String>,
    current_mtl1: Option<String>,
    current_raw: Option<String>,
    current_auth: Option<String>,
    current_auth_entry: Option<u64>,
}

/// Index entries (in log order): observation rows, target state, change rows. Returns the
/// change id recorded for each entry that has one. Entries already indexed are left alone.
pub(crate) fn index_entries(
    tx: &Transaction,
    blobs: &Blobs,
    entries: &[(u64, Entry)],
    run: Option<i64>,
) -> Result<HashMap<u64, i64>, IndexError> {
    index_prefetched(tx, blobs, entries, run, prefetch(blobs, entries))
}

/// [`index_entries`] with the documents [`prefetch`] read for them (by entry index; one
/// missing is read here).
pub(crate) fn index_prefetched(
    tx: &Transaction,
    blobs: &Blobs,
    entries: &[(u64, Entry)],
    run: Option<i64>,
    mut documents: HashMap<u64, Document<RawPage>>,
) -> Result<HashMap<u64, i64>, IndexError> {
    let mut changes = HashMap::new();
    for (index, entry) in entries {
        let document = documents.remove(index);
        let indexed = index_entry(tx, blobs, *index, entry, run, document)?;
        if let Some(id) = indexed.change {
            changes.insert(*index, id);
        }
        // Change rows are made only by indexing their entry, so one indexed now without a
        // change has none to derive events of: the query is skipped for it (most entries; it
        // cost a sixth of a catch-up's CPU). An entry indexed before is looked at as ever.
        if indexed.change.is_some() || !indexed.fresh {
            crate::events::derive(tx, *index)?;
        }
    }
    Ok(changes)
}

/// What [`index_entry`] did with one entry.
struct Indexed {
    /// The change id recorded for the entry (its `tools` change when it has several kinds).
    change: Option<i64>,
    /// Whether the entry was indexed now (false: it had been before, and was left alone).
    fresh: bool,
}

/// Threads [`prefetch`] reads documents on (at most; one per core).
const PREFETCH_THREADS: usize = 4;

/// The documents `entries` name, each read, hashed against its name and decoded on up to
/// [`PREFETCH_THREADS`] threads (the part of indexing that needs no database, and most of its
/// CPU), by entry index. A document that cannot be read or decoded is left out:
/// [`load_document`] reads it again on the indexing thread and reports why.
pub(crate) fn prefetch(blobs: &Blobs, entries: &[(u64, Entry)]) -> HashMap<u64, Document<RawPage>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(PREFETCH_THREADS);
    if threads < 2 || entries.len() < 2 * threads {
        return HashMap::new();
    }
    std::thread::scope(|s| {
        let parts: Vec<_> = entries
            .chunks(entries.len().div_ceil(threads))
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .filter_map(|(i, e)| {
                            let bytes = blobs.get(e.raw.as_ref()?).ok()??;
                            Some((*i, Document::decode_raw_pages(&bytes).ok()?))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().unwrap_or_default())
            .collect()
    })
}

fn index_entry(
    tx: &Transaction,
    blobs: &Blobs,
    index: u64,
    entry: &Entry,
    run: Option<i64>,
    document: Option<Document<RawPage>>,
) -> Result<Indexed, IndexError> {
    let at = int(index)?;
    let seen = tx
        .prepare_cached("SELECT 1 FROM observations WHERE entry = ?1")?
        .query_row([at], |_| Ok(()))
        .optional()?
        .is_some();
    if seen {
        return Ok(Indexed {
            change: tx
                .prepare_cached(
                    "SELECT id FROM changes WHERE new_entry = ?1 ORDER BY kind <> 'tools', id \
                     LIMIT 1",
                )?
                .query_row([at], |r| r.get(0))
                .optional()?,
            fresh: false,
        });
    }
    let change = index_fresh(tx, blobs, (index, at), entry, run, document)?;
    Ok(Indexed {
        change,
        fresh: true,
    })
}

/// [`index_entry`] of an entry not indexed yet: its rows and changes. Returns the change id
/// recorded for it.
fn index_fresh(
    tx: &Transaction,
    blobs: &Blobs,
    (index, at): (u64, i64),
    entry: &Entry,
    run: Option<i64>,
    document: Option<Document<RawPage>>,
) -> Result<Option<i64>, IndexError> {
    let target_id = entry.subject.id().to_string();
    // The entry's digests as the index stores them (SRI text).
    let (full, mtl1, raw) = (
        entry.full.map(|d| d.to_string()),
        entry.mtl1_digest().map(Sri::to_string),
        entry.raw.map(|d| d.to_string()),
    );
    let doc = match &raw {
        Some(raw) => Some(load_document(blobs, raw, index, entry, document)?),
        None => None,
    };
    tx.prepare_cached(
        "INSERT INTO observations (entry, target_id, run_id, observed_at, status, detail, mtl1,
             mtl1_error, full, tools, raw, transport, protocol_version, elapsed_ms, prev,
             tool_index)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        at,
        target_id,
        run,
        entry.observed_at,
        entry.status.as_str(),
        entry.detail,
        mtl1,
        entry.mtl1_error(),
        full,
        entry.tools.map(int).transpose()?,
        raw,
        doc.as_ref()
            .and_then(|d| d.remote())
            .and_then(|r| r.transport.clone()),
        doc.as_ref().and_then(|d| d.protocol_version.clone()),
        doc.as_ref().map(|d| int(d.elapsed_ms)).transpose()?,
        entry.prev.map(int).transpose()?,
        entry.tool_index.map(|t| t.to_string()),
    ])?;
    if let Some(hints) = doc.as_ref().map(tools_cache_hints) {
        tx.prepare_cached(
            "UPDATE observations SET cache_scope = ?2, ttl_ms = ?3 WHERE entry = ?1",
        )?
        .execute(params![
            at,
            scope_text(&hints),
            hints.ttl_ms.map(int).transpose()?
        ])?;
    }
    let raw_surface = doc.as_ref().and_then(|d| d.surface.as_ref());
    for (kind, e) in entry.surface.iter().flatten() {
        let (digest, count, status) = match e {
            KindEntry::Read { digest, count } => {
                (Some(digest.to_string()), Some(int(*count)?), None)
            }
            KindEntry::Unread(status) => (None, None, Some(status.as_str())),
        };
        let hints = raw_surface
            .and_then(|r| r.list(*kind))
            .map(|l| CacheHints::of_pages(&l.pages));
        tx.prepare_cached(
            "INSERT INTO observation_kinds (entry, target_id, kind, digest, count, status,
                 cache_scope, ttl_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            at,
            target_id,
            kind.as_str(),
            digest,
            count,
            status,
            hints.as_ref().and_then(scope_text),
            hints.and_then(|h| h.ttl_ms).map(int).transpose()?,
        ])?;
    }

    let state = tx
        .prepare_cached(
            "SELECT last_entry, last_ok_entry, current_full, current_mtl1, current_raw,
                 current_auth, current_auth_entry
             FROM targets WHERE id = ?1",
        )?
        .query_row([&target_id], |r| {
            Ok(TargetState {
                last_entry: unsigned(r, 0)?,
                last_ok_entry: unsigned(r, 1)?,
                current_full: r.get(2)?,
                current_mtl1: r.get(3)?,
                current_raw: r.get(4)?,
                current_auth: r.get(5)?,
                current_auth_entry: unsigned(r, 6)?,
            })
        })
        .optional()?;
    let state = match state {
        Some(s) => s,
        None => {
            // A target the registry side has not described (catch-up on a fresh index).
            tx.execute(
                "INSERT INTO targets (id, server, target, kind, declared_transport, endpoint_key)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    target_id,
                    entry.subject.server,
                    entry.subject.target,
                    if entry.subject.package.is_some() {
                        "package"
                    } else {
                        "remote"
                    },
                    doc.as_ref().map(|d| d.target.declared_transport.clone()),
                    endpoint_key(&entry.subject.target),
                ],
            )?;
            TargetState {
                last_entry: None,
                last_ok_entry: None,
                current_full: None,
                current_mtl1: None,
                current_raw: None,
                current_auth: None,
                current_auth_entry: None,
            }
        }
    };
    // The entry is the target's newest: its `last_*` columns are written by the one UPDATE
    // that writes the current tool set's (most entries, `tools`), else alone.
    let newest = state.last_entry.is_none_or(|l| l < index);
    let set_last = || -> Result<(), IndexError> {
        tx.prepare_cached(
            "UPDATE targets SET last_status = ?2, last_detail = ?3, last_entry = ?4,
                 last_observed_at = ?5 WHERE id = ?1",
        )?
        .execute(params![
            target_id,
            entry.status.as_str(),
            entry.detail,
            at,
            entry.observed_at
        ])?;
        Ok(())
    };
    if entry.subject.package.is_some() {
        // A package with an entry has been observed: it no longer awaits the sandbox.
        tx.prepare_cached(
            "UPDATE targets SET skip_reason = NULL WHERE id = ?1 AND skip_reason = ?2",
        )?
        .execute(params![target_id, AWAITING_SANDBOX])?;
    }
    if let Some(servers) = doc.as_ref().and_then(authorization_servers) {
        if newest {
            set_last()?;
        }
        return authorization(tx, (index, entry), &servers, &state);
    }
    let behaviour_change = match doc.as_ref() {
        Some(doc) => package_behaviour(tx, (index, entry), doc)?,
        None => None,
    };
    let registry_change = match doc.as_ref() {
        Some(doc) => package_registry(tx, (index, entry), doc)?,
        None => None,
    };
    let (tools_change, last_written) =
        tools(tx, blobs, (index, entry), doc.as_ref(), (&state, newest))?;
    if newest && !last_written {
        set_last()?;
    }
    // The surface's changes come after the tool set's, in id order.
    let surface_changes = crate::surfacechanges::derive(tx, blobs, (index, entry), doc.as_ref())?;
    // An entry carries at most one change of each kind; its line names the tool-set change
    // when there is one.
    Ok(tools_change
        .or(behaviour_change)
        .or(registry_change)
        .or(surface_changes.first().copied()))
}

/// What the sandbox saw of a package entry (its document's `package.sandbox`), indexed in
/// `package_observations`; when the entry is `ok` and the package's previous `ok` observation
/// ran another version that behaved differently, a `behaviour` change. Returns its id.
fn package_behaviour(
    tx: &Transaction,
    (index, entry): (u64, &Entry),
    doc: &Document<RawPage>,
) -> Result<Option<i64>, IndexError> {
    let DocVia::Package(package) = &doc.via else {
        return Ok(None);
    };
    let listed: Vec<String> = doc
        .tool_set()
        .filter(|_| entry.status.is_ok())
        .map(|set| {
            set.tools
                .iter()
                .filter_map(|t| t.name().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    // A version that was never run (its fetch failed) has a row too, with nothing seen.
    let behaviour = behaviour_of(package.sandbox.as_ref(), &listed);
    let target_id = entry.subject.id().to_string();
    let version = version_of(&package.id);
    tx.prepare_cached(
        "INSERT INTO package_observations (entry, target_id, package, version, status, observer,
             complete, artifact, findings, behaviour)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        int(index)?,
        target_id,
        package.id,
        version,
        entry.status.as_str(),
        behaviour.observer,
        behaviour.complete,
        package.artifact,
        serde_json::to_string(&behaviour.findings)?,
        serde_json::to_string(&behaviour)?,
    ])?;
    if !entry.status.is_ok() {
        return Ok(None);
    }
    // Compared with the package's latest `ok` observation of another version; a version
    // already seen completely and `ok` before was compared then (a new observer's run of it
    // is not a change between versions), but one seen only incompletely is compared again now.
    let seen_before: bool = tx
        .prepare_cached(
            "SELECT 1 FROM package_observations WHERE target_id = ?1 AND entry < ?2
                 AND version = ?3 AND status = 'ok' AND complete = 1",
        )?
        .query_row(params![target_id, int(index)?, version], |_| Ok(()))
        .optional()?
        .is_some();
    if seen_before {
        return Ok(None);
    }
    let previous: Option<(i64, String, String)> = tx
        .prepare_cached(
            "SELECT entry, version, behaviour FROM package_observations
             WHERE target_id = ?1 AND entry < ?2 AND status = 'ok' AND version <> ?3
             ORDER BY entry DESC LIMIT 1",
        )?
        .query_row(params![target_id, int(index)?, version], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?;
    let Some((old_entry, old_version, old)) = previous else {
        return Ok(None);
    };
    let old: Behaviour = serde_json::from_str(&old)?;
    let Some(change) = compare(&old, &behaviour) else {
        return Ok(None);
    };
    tx.prepare_cached(
        "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry, new_entry,
             old_full, new_full, class, added, removed, modified, kind, old_behaviour,
             new_behaviour)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, '', '', ?7, ?8, ?9, 0, 'behaviour', ?10, ?11)",
    )?
    .execute(params![
        target_id,
        entry.subject.server,
        entry.subject.target,
        entry.observed_at,
        old_entry,
        int(index)?,
        change.class,
        int(change.findings_added.len() as u64)?,
        int(change.findings_removed.len() as u64)?,
        side_text(&BehaviourSide {
            version: old_version,
            change: None,
        })?,
        side_text(&BehaviourSide {
            version: version.to_owned(),
            change: Some(change.clone()),
        })?,
    ])?;
    Ok(Some(tx.last_insert_rowid()))
}

/// The registry signals of a package entry (its document's `package.registry`), stored on its
/// `package_observations` row with the comparison against the package's previous observation
/// of another version that has facts; when that comparison raises a flag (other than the
/// informational `install-scripts`) and no earlier observation of this version had facts, a
/// `registry` change (class [`crate::packages::RegistryComparison::class`]). Returns its id.
fn package_registry(
    tx: &Transaction,
    (index, entry): (u64, &Entry),
    doc: &Document<RawPage>,
) -> Result<Option<i64>, IndexError> {
    let DocVia::Package(package) = &doc.via else {
        return Ok(None);
    };
    let Some(facts) = &package.registry else {
        return Ok(None);
    };
    let target_id = entry.subject.id().to_string();
    let version = version_of(&package.id);
    let at = int(index)?;
    let previous: Option<(i64, String, String)> = tx
        .prepare_cached(
            "SELECT entry, version, registry FROM package_observations
             WHERE target_id = ?1 AND entry < ?2 AND version <> ?3 AND registry IS NOT NULL
             ORDER BY entry DESC LIMIT 1",
        )?
        .query_row(params![target_id, at, version], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?;
    let previous_facts: Option<RegistryFacts> = previous
        .as_ref()
        .map(|(_, _, f)| serde_json::from_str(f))
        .transpose()?;
    let comparison = registry_facts::compare(previous_facts.as_ref(), facts);
    tx.prepare_cached(
        "UPDATE package_observations SET registry = ?2, registry_previous = ?3,
             registry_comparison = ?4 WHERE entry = ?1",
    )?
    .execute(params![
        at,
        serde_json::to_string(facts)?,
        previous.as_ref().map(|(e, _, _)| *e),
        serde_json::to_string(&comparison)?,
    ])?;
    let (Some((old_entry, old_version, _)), Some(class)) = (previous, comparison.class()) else {
        return Ok(None);
    };
    // This version's facts were compared before (an earlier observation of it): not a new
    // change between versions.
    let seen_before: bool = tx
        .prepare_cached(
            "SELECT 1 FROM package_observations WHERE target_id = ?1 AND entry < ?2
                 AND version = ?3 AND registry IS NOT NULL",
        )?
        .query_row(params![target_id, at, version], |_| Ok(()))
        .optional()?
        .is_some();
    if seen_before {
        return Ok(None);
    }
    tx.prepare_cached(
        "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry, new_entry,
             old_full, new_full, class, added, removed, modified, kind, old_registry,
             new_registry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, '', '', ?7, ?8, 0, 0, 'registry', ?9, ?10)",
    )?
    .execute(params![
        target_id,
        entry.subject.server,
        entry.subject.target,
        entry.observed_at,
        old_entry,
        at,
        class,
        int(comparison.change_flags().len() as u64)?,
        side_text(&RegistrySide {
            version: old_version,
            comparison: None,
        })?,
        side_text(&RegistrySide {
            version: version.to_owned(),
            comparison: Some(comparison.clone()),
        })?,
    ])?;
    Ok(Some(tx.last_insert_rowid()))
}

/// The cache hints of a document's `tools/list` pages (MCP 2026-07-28 `ttlMs`, `cacheScope`).
/// A page is parsed for them only when its text names `cacheScope` or `ttlMs` (servers of
/// earlier versions send neither, and their pages are not parsed twice).
fn tools_cache_hints(doc: &Document<RawPage>) -> CacheHints {
    let pages: Vec<String> = doc
        .pages
        .iter()
        .filter(|p| {
            let raw = p.as_escaped();
            raw.contains("cacheScope") || raw.contains("ttlMs")
        })
        .filter_map(RawPage::text)
        .collect();
    CacheHints::of_pages(&pages)
}

/// A cache scope as the index stores it (`public`, `private`), `None` when no page had one.
fn scope_text(hints: &CacheHints) -> Option<&'static str> {
    hints.scope.map(|s| match s {
        Scope::Public => "public",
        Scope::Private => "private",
    })
}

/// The target's current tool set after an entry: when the entry is `ok` with another full
/// digest than the target's current one, a `tools` change. Returns its id, and whether the
/// target's `last_*` columns were written too (`newest`: the entry is the target's newest, and
/// its current tool set's UPDATE wrote them).
fn tools(
    tx: &Transaction,
    blobs: &Blobs,
    (index, entry): (u64, &Entry),
    doc: Option<&Document<RawPage>>,
    (state, newest): (&TargetState, bool),
) -> Result<(Option<i64>, bool), IndexError> {
    let target_id = entry.subject.id().to_string();
    let (full, mtl1, raw) = (
        entry.full.map(|d| d.to_string()),
        entry.mtl1_digest().map(Sri::to_string),
        entry.raw.map(|d| d.to_string()),
    );
    let at = int(index)?;
    let (Some(full), true) = (&full, entry.status.is_ok()) else {
        return Ok((None, false));
    };
    if state.last_ok_entry.is_some_and(|l| l >= index) {
        return Ok((None, false));
    }
    let mut set = None;
    if state.current_full.as_ref() != Some(full) {
        // The census follows the current tool set (read only when it changes).
        set = doc
            .zip(raw.as_deref())
            .and_then(|(d, r)| checked_tool_set(d.tool_set(), r, full, index).ok());
        crate::census::derive(tx, &target_id, index, set.as_ref())?;
    }
    let mut change = None;
    if let (Some(old_full), Some(old_entry)) = (&state.current_full, state.last_ok_entry) {
        if old_full != full {
            change = Some(insert_change(
                tx,
                blobs,
                (index, entry, doc),
                (old_entry, old_full, state),
            )?);
        }
    }
    // The scan follows the current tool set and instructions; its changes come after the
    // tool-set change, in id order.
    let scanned = crate::scans::derive(
        tx,
        (index, entry),
        full,
        doc,
        (set.as_ref(), state.last_ok_entry.is_some()),
    )?;
    let change = change.or(scanned.changes.first().copied());
    let current = params![
        target_id,
        at,
        full,
        mtl1,
        raw,
        entry.tools.map(int).transpose()?,
        entry.status.as_str(),
        entry.detail,
        entry.observed_at,
    ];
    if newest {
        tx.prepare_cached(
            "UPDATE targets SET last_ok_entry = ?2, current_full = ?3, current_mtl1 = ?4,
                 current_raw = ?5, current_tools = ?6, last_status = ?7, last_detail = ?8,
                 last_entry = ?2, last_observed_at = ?9 WHERE id = ?1",
        )?
        .execute(current)?;
    } else {
        tx.prepare_cached(
            "UPDATE targets SET last_ok_entry = ?2, current_full = ?3, current_mtl1 = ?4,
                 current_raw = ?5, current_tools = ?6 WHERE id = ?1",
        )?
        .execute(&current[..6])?;
    }
    Ok((change, newest))
}

/// The authorization servers `doc`'s protected-resource metadata names, as stored (a JSON
/// array, sorted and deduplicated: an order change is not a swap); `None` when it has none that
/// were read (no challenge, no metadata fetched, or nothing usable in it).
fn authorization_servers(doc: &Document<RawPage>) -> Option<String> {
    let found = doc.remote()?.auth.as_ref()?.protected_resource.as_ref()?;
    if found.error.is_some() {
        return None;
    }
    let servers: std::collections::BTreeSet<&str> = found
        .authorization_servers
        .iter()
        .map(String::as_str)
        .collect();
    serde_json::to_string(&servers).ok()
}

/// Record the authorization servers an entry read for its target and, when the target's
/// previous ones (read by an earlier entry) differ, an `authorization` change (always
/// `dangerous`). Returns that change's id.
fn authorization(
    tx: &Transaction,
    (index, entry): (u64, &Entry),
    servers: &str,
    state: &TargetState,
) -> Result<Option<i64>, IndexError> {
    if state.current_auth_entry.is_some_and(|l| l >= index) {
        return Ok(None);
    }
    let target_id = entry.subject.id().to_string();
    let mut change = None;
    if let (Some(old), Some(old_entry)) = (&state.current_auth, state.current_auth_entry)
        && old != servers
    {
        tx.prepare_cached(
            "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry, new_entry,
                 old_full, new_full, class, added, removed, modified, kind, old_auth, new_auth)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, '', '', 'dangerous', 0, 0, 0, 'authorization',
                 ?7, ?8)",
        )?
        .execute(params![
            target_id,
            entry.subject.server,
            entry.subject.target,
            entry.observed_at,
            int(old_entry)?,
            int(index)?,
            old,
            servers,
        ])?;
        change = Some(tx.last_insert_rowid());
    }
    tx.prepare_cached(
        "UPDATE targets SET current_auth = ?2, current_auth_entry = ?3 WHERE id = ?1",
    )?
    .execute(params![target_id, servers, int(index)?])?;
    Ok(change)
}

fn insert_change(
    tx: &Transaction,
    blobs: &Blobs,
    (index, entry, doc): (u64, &Entry, Option<&Document<RawPage>>),
    (old_entry, old_full, state): (u64, &str, &TargetState),
) -> Result<i64, IndexError> {
    let new_full = entry.full.map(|d| d.to_string()).unwrap_or_default();
    let new_full = new_full.as_str();
    let new_raw = entry.raw.map(|d| d.to_string());
    let analysed = match (&state.current_raw, &new_raw, doc) {
        (Some(old_raw), Some(new_raw), Some(doc)) => {
            // The target's current tool set, read as every reader of it reads it.
            let old_set = ToolSetRef {
                entry: old_entry,
                document: parse_raw(old_raw, old_entry)?,
                full: old_full.to_owned(),
            }
            .read(blobs)?
            .set;
            let new_set = checked_tool_set(doc.tool_set(), new_raw, new_full, index)?;
            let diff = toolmark_toolset::diff::diff(&old_set, &new_set);
            let classification = toolmark_toolset::classify::classify(&old_set, &new_set);
            Some((diff, classification))
        }
        // A digest changed but one side has no stored tool set (an entry appended by hand):
        // the change is real, what it is cannot be said.
        _ => None,
    };
    let (class, added, removed, modified, diff, classification) = match &analysed {
        Some((d, c)) => (
            c.class.as_str(),
            d.added_total as u64,
            d.removed_total as u64,
            d.modified_total as u64,
            Some(serde_json::to_string(d)?),
            Some(serde_json::to_string(c)?),
        ),
        None => ("unsure", 0, 0, 0, None, None),
    };
    tx.prepare_cached(
        "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry, new_entry,
             old_full, new_full, old_mtl1, new_mtl1, class, added, removed, modified, diff,
             classification)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        entry.subject.id().as_str(),
        entry.subject.server,
        entry.subject.target,
        entry.observed_at,
        int(old_entry)?,
        int(index)?,
        old_full,
        new_full,
        state.current_mtl1,
        entry.mtl1_digest().map(Sri::to_string),
        class,
        int(added)?,
        int(removed)?,
        int(modified)?,
        diff,
        classification,
    ])?;
    Ok(tx.last_insert_rowid())
}
