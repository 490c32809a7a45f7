//! The rule-set scan and the data-flow legs of every target's current tool set and server
//! instructions ([`toolmark_toolset::rules`], [`toolmark_toolset::legs`]).
//!
//! Derived, like the census: when a target's newest `ok` entry brings another tool set or other
//! `instructions` than the ones its row was scanned from, `derive` scans them and replaces the
//! row; [`Index::rebuild`] clears the rows and derives them again. The same entry also records
//! what changed, as change rows (so security events follow them, [`crate::events`]):
//!
//! * `instructions`: the instructions differ from the previous `ok` entry's
//!   ([`toolmark_toolset::instructions::change`]: word diff, signals, class); an event when
//!   `dangerous`.
//! * `scan`: the target became flagged — its previous scan had no match (or it had none: its
//!   first observation, `old_entry` = `new_entry`) and this one has; `dangerous` with a
//!   block-tier match, else `unsure`; always an event.
//!
//! # A new rule set
//!
//! Each row records the rule set it was scanned with (`rules`, the id, and `rules_digest`) and
//! the legs judge's version (`legs_version`, [`toolmark_toolset::legs::LEGS_ID`]). When the
//! code's rule set is another ([`toolmark_toolset::rules::digest`]) or its legs judge, rows are scanned again
//! from their stored documents, at most [`RESCAN_PER_PASS`] per pass ([`Index::rescan`], which
//! every catch-up and follow pass runs): a target is answered with the scan it has, which names
//! the rules it was made with, until its turn comes. A pass also stops after
//! [`RESCAN_PASS_TIME`], commits every [`RESCAN_CHUNK`] targets, and stops at a blob store that
//! cannot be read (a later pass goes on). A re-scan writes no change and no event: those come
//! only from observations. A rebuild by the same release derives the same ones; a rebuild by a
//! release with another rule set can derive other `scan` changes (a target flagged at another
//! observation, or not at all) and so other change ids after them, as a release that classifies
//! changes otherwise already can (docs/api.md, "Security events").
//!
//! A row whose document could not be read (`scan` NULL: not stored, or not decodable) is not
//! compared with: the next observation writes a row of its own and records neither change.
//!
//! What it never does: scan a tool set that is not a target's current one, call a model, or keep
//! a scan whose document could not be read (the row then says `scan` NULL: not scanned).

use rusqlite::{OptionalExtension, Row, Transaction, params};
use serde::Serialize;
use toolmark_toolset::ToolSet;
use toolmark_toolset::legs::{self, Certainty, ToolLegs};
use toolmark_toolset::rules::{self, RuleClass, Scan};

use crate::blobs::Blobs;
use crate::document::{Document, RawPage};
use crate::index::{Index, IndexError};
use crate::queries::{checked_tool_set, parse_raw};
use crate::rows::{int, need_unsigned, unsigned};
use crate::schema::{meta, set_meta};

/// Targets [`Index::rescan`] scans again per pass when the rule set changed: a pass stays
/// within seconds (a scan of a large set is milliseconds) and a crawl's catch-up is not held up.
pub const RESCAN_PER_PASS: usize = 2_000;

/// A re-scan pass stops starting targets after this long (documents can be megabytes: a pass
/// over 2,000 large ones must not hold a crawl's recording for minutes).
pub const RESCAN_PASS_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Targets re-scanned per transaction.
pub const RESCAN_CHUNK: usize = 100;

/// Tools whose legs a row keeps (the most any reader lists: `/check` answers list 200); the
/// count and the toxic flow are over all of them. A 4,000-tool set's legs would otherwise be
/// megabytes parsed by every page that shows the target.
pub const STORED_LEG_TOOLS: usize = 100;

/// Most characters of a server's `instructions` kept in the row (what the next observation's
/// instructions are compared with; the scan reads them all within the rule set's own limits).
pub const MAX_INSTRUCTIONS_CHARS: usize = 65_536;

/// Version 6: one row per target with an `ok` observation (see the module documentation), and
/// `changes` rebuilt (ids and rows kept) so that it holds `instructions` and `scan` changes.
pub(crate) const SCAN_TABLES: &str = "
CREATE TABLE changes_v6 (
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
        ('tools', 'authorization', 'behaviour', 'registry', 'instructions', 'scan')),
    old_auth TEXT,
    new_auth TEXT,
    old_behaviour TEXT,
    new_behaviour TEXT,
    old_registry TEXT,
    new_registry TEXT,
    UNIQUE (new_entry, kind)
) STRICT;
INSERT INTO changes_v6 (id, target_id, server, endpoint, observed_at, old_entry, new_entry,
    old_full, new_full, old_mtl1, new_mtl1, class, added, removed, modified, diff,
    classification, kind, old_auth, new_auth, old_behaviour, new_behaviour, old_registry,
    new_registry)
SELECT id, target_id, server, endpoint, observed_at, old_entry, new_entry, old_full, new_full,
    old_mtl1, new_mtl1, class, added, removed, modified, diff, classification, kind, old_auth,
    new_auth, old_behaviour, new_behaviour, old_registry, new_registry FROM changes;
DROP TABLE changes;
ALTER TABLE changes_v6 RENAME TO changes;
CREATE INDEX IF NOT EXISTS changes_target ON changes (target_id, id);
CREATE INDEX IF NOT EXISTS changes_server ON changes (server, id);
CREATE INDEX IF NOT EXISTS changes_class ON changes (class, id);
CREATE INDEX IF NOT EXISTS changes_new_entry ON changes (new_entry);
CREATE INDEX IF NOT EXISTS changes_observed_at ON changes (observed_at, kind, class);
CREATE TABLE IF NOT EXISTS target_scans (
    target_id TEXT PRIMARY KEY,
    entry INTEGER NOT NULL,
    full TEXT NOT NULL,
    instructions TEXT,
    rules TEXT NOT NULL,
    rules_digest TEXT NOT NULL,
    legs_version TEXT NOT NULL,
    scan TEXT,
    block INTEGER NOT NULL,
    advise INTEGER NOT NULL,
    classes TEXT NOT NULL,
    legs TEXT NOT NULL,
    legs_total INTEGER NOT NULL,
    toxic TEXT CHECK (toxic IN ('possible', 'confirmed'))
) STRICT;
CREATE INDEX IF NOT EXISTS target_scans_rules ON target_scans (rules_digest, target_id);
CREATE INDEX IF NOT EXISTS target_scans_flagged ON target_scans (target_id)
    WHERE block + advise > 0;
";

/// The stored scan of one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetScan {
    /// The entry whose tool set and instructions were scanned.
    pub entry: u64,
    /// That tool set's full digest.
    pub full: String,
    /// The server's instructions scanned with it (at most [`MAX_INSTRUCTIONS_CHARS`]; what
    /// `$['instructions']` matches index into).
    pub instructions: Option<String>,
    /// The rule set's id it was scanned with (`toolmark-rules/4`).
    pub rules: String,
    /// That rule set's digest.
    pub rules_digest: String,
    /// The scan; `None` when the document could not be read.
    pub scan: Option<Scan>,
    /// The legs of the first [`STORED_LEG_TOOLS`] tools that have one.
    pub legs: Vec<ToolLegs>,
    /// How many tools have a leg (`legs` may list fewer).
    pub legs_total: u64,
    /// All three legs on this server (over every tool), and how sure.
    pub toxic_flow: Option<Certainty>,
}

impl TargetScan {
    /// Whether the scan has a match.
    pub fn flagged(&self) -> bool {
        self.scan.as_ref().is_some_and(Scan::flagged)
    }
}

/// The `instructions` string of an `initialize` result's JSON text (`None`: absent, not a
/// string, or the text is not JSON).
pub fn instructions_of(initialize: &str) -> Option<String> {
    let v = toolmark_toolset::json::parse(initialize).ok()?;
    v.get("instructions")?.as_str().map(str::to_owned)
}

/// The instructions a document's `initialize` result carries.
fn doc_instructions(doc: &Document<RawPage>) -> Option<String> {
    doc.initialize.as_deref().and_then(instructions_of)
}

/// What a scan row holds besides its keys.
struct Scanned {
    scan: Option<Scan>,
    legs: Vec<ToolLegs>,
    toxic: Option<Certainty>,
}

fn scan_of(set: Option<&ToolSet>, instructions: Option<&str>) -> Scanned {
    match set {
        Some(set) => {
            let l = legs::set_legs(set);
            Scanned {
                scan: Some(rules::scan(set, instructions)),
                toxic: legs::toxic_flow(&l),
                legs: l,
            }
        }
        None => Scanned {
            scan: None,
            legs: Vec::new(),
            toxic: None,
        },
    }
}

fn classes_of(scan: Option<&Scan>) -> Vec<RuleClass> {
    let mut out: Vec<RuleClass> = scan
        .map(|s| s.matches.iter().map(|m| m.class).collect())
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

fn certainty_str(c: Certainty) -> &'static str {
    match c {
        Certainty::Possible => "possible",
        Certainty::Confirmed => "confirmed",
    }
}

/// Write (insert or replace) a target's row.
fn write_row(
    tx: &Transaction,
    target_id: &str,
    (entry, full): (u64, &str),
    instructions: Option<&str>,
    s: &Scanned,
) -> Result<(), IndexError> {
    let kept = instructions.map(|i| toolmark_toolset::text::cap(i, MAX_INSTRUCTIONS_CHARS));
    tx.prepare_cached(
        "INSERT OR REPLACE INTO target_scans (target_id, entry, full, instructions, rules,
             rules_digest, scan, block, advise, classes, legs, toxic, legs_version, legs_total)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        target_id,
        int(entry)?,
        full,
        kept,
        rules::RULES_ID,
        current_digest(),
        s.scan.as_ref().map(serde_json::to_string).transpose()?,
        int(s.scan.as_ref().map_or(0, |x| x.block) as u64)?,
        int(s.scan.as_ref().map_or(0, |x| x.advise) as u64)?,
        serde_json::to_string(&classes_of(s.scan.as_ref()))?,
        serde_json::to_string(&s.legs[..s.legs.len().min(STORED_LEG_TOOLS)])?,
        s.toxic.map(certainty_str),
        legs::LEGS_ID,
        int(s.legs.len() as u64)?,
    ])?;
    Ok(())
}

/// The code's rule-set digest, computed once.
fn current_digest() -> &'static str {
    static DIGEST: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| rules::digest().to_string());
    &DIGEST
}

/// What `derive` learnt of an entry.
pub(crate) struct Derived {
    /// The changes it recorded (instructions, then scan), in id order.
    pub changes: Vec<i64>,
}

/// The previous row's facts `derive` compares with.
struct Previous {
    entry: u64,
    full: String,
    instructions: Option<String>,
    flagged: bool,
    /// The row holds a scan (its document was read): only then is it compared with.
    read: bool,
}

/// An `ok` entry that is its target's newest `ok` one: scan its tool set and instructions when
/// either differs from the row's, replace the row, and record the `instructions` and `scan`
/// changes (see the module documentation). `set` is the entry's tool set when the caller read
/// it (it was checked against `full`); otherwise it is read from `doc` when needed. `had_ok`:
/// the target had an `ok` entry before this one.
pub(crate) fn derive(
    tx: &Transaction,
    (index, entry): (u64, &toolmark_log::entry::Entry),
    full: &str,
    doc: Option<&Document<RawPage>>,
    (set, had_ok): (Option<&ToolSet>, bool),
) -> Result<Derived, IndexError> {
    let target_id = entry.subject.id().to_string();
    let previous = tx
        .prepare_cached(
            "SELECT entry, full, instructions, block + advise > 0, scan IS NOT NULL
             FROM target_scans WHERE target_id = ?1",
        )?
        .query_row([&target_id], |r| {
            Ok(Previous {
                entry: need_unsigned(r, 0)?,
                full: r.get(1)?,
                instructions: r.get(2)?,
                flagged: r.get(3)?,
                read: r.get(4)?,
            })
        })
        .optional()?;
    let instructions = doc.and_then(doc_instructions);
    let kept = instructions
        .as_deref()
        .map(|i| toolmark_toolset::text::cap(i, MAX_INSTRUCTIONS_CHARS));
    let same = previous
        .as_ref()
        .is_some_and(|p| p.read && p.full == full && p.instructions == kept);
    if same {
        return Ok(Derived {
            changes: Vec::new(),
        });
    }
    let read;
    let set = match set {
        Some(s) => Some(s),
        None => {
            read = doc.zip(entry.raw).and_then(|(d, raw)| {
                checked_tool_set(d.tool_set(), &raw.to_string(), full, index).ok()
            });
            read.as_ref()
        }
    };
    let scanned = scan_of(set, instructions.as_deref());
    write_row(
        tx,
        &target_id,
        (index, full),
        instructions.as_deref(),
        &scanned,
    )?;
    let mut changes = Vec::new();
    if previous.as_ref().map_or(had_ok, |p| !p.read) {
        // Nothing to compare with: a target observed before this index had scans (a database
        // migrated from version 5 whose re-scan has not reached it), or a row whose document
        // could not be read (its instructions and scan are unknown, not absent).
        return Ok(Derived { changes });
    }
    if let Some(p) = &previous {
        if p.instructions != kept {
            // Both sides as kept (cut alike past `MAX_INSTRUCTIONS_CHARS`), so a long text is
            // not read as changed where only the kept copy was cut.
            if let Some(ch) =
                toolmark_toolset::instructions::change(p.instructions.as_deref(), kept.as_deref())
            {
                changes.push(insert_change(
                    tx,
                    (index, entry),
                    (p.entry, &p.full, full),
                    "instructions",
                    ch.class.as_str(),
                    &serde_json::to_string(&ch)?,
                )?);
            }
        }
    }
    let flagged = scanned.scan.as_ref().is_some_and(Scan::flagged);
    if flagged && !previous.as_ref().is_some_and(|p| p.flagged) {
        let scan = scanned.scan.as_ref().expect("flagged implies a scan");
        let class = if scan.block > 0 {
            "dangerous"
        } else {
            "unsure"
        };
        let (old_entry, old_full) = previous
            .as_ref()
            .map_or((index, full), |p| (p.entry, p.full.as_str()));
        let summary = BecameFlagged {
            rules: scan.rules.clone(),
            rules_digest: current_digest().to_owned(),
            block: scan.block as u64,
            advise: scan.advise as u64,
            classes: classes_of(Some(scan)),
            matches: scan.matches.clone(),
            truncated: scan.truncated as u64,
        };
        changes.push(insert_change(
            tx,
            (index, entry),
            (old_entry, old_full, full),
            "scan",
            class,
            &serde_json::to_string(&summary)?,
        )?);
    }
    Ok(Derived { changes })
}

/// Insert a change row of `kind` (no diff; its facts in `classification`).
fn insert_change(
    tx: &Transaction,
    (index, entry): (u64, &toolmark_log::entry::Entry),
    (old_entry, old_full, new_full): (u64, &str, &str),
    kind: &str,
    class: &str,
    classification: &str,
) -> Result<i64, IndexError> {
    tx.prepare_cached(
        "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry, new_entry,
             old_full, new_full, class, added, removed, modified, classification, kind)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, 0, 0, ?10, ?11)",
    )?
    .execute(params![
        entry.subject.id().to_string(),
        entry.subject.server,
        entry.subject.target,
        entry.observed_at,
        int(old_entry)?,
        int(index)?,
        old_full,
        new_full,
        class,
        classification,
        kind,
    ])?;
    Ok(tx.last_insert_rowid())
}

/// A `scan` change's facts (its `classification` column): the scan that made the target
/// flagged. One type for the index, which writes it, and the API, which reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BecameFlagged {
    /// The rule set's id.
    pub rules: String,
    /// Its digest.
    pub rules_digest: String,
    /// Block-tier matches.
    pub block: u64,
    /// Advise-tier matches.
    pub advise: u64,
    /// The classes matched, sorted.
    pub classes: Vec<RuleClass>,
    /// The matches (at most `toolset::rules::MAX_MATCHES`).
    pub matches: Vec<rules::Match>,
    /// Matches left out.
    pub truncated: u64,
}

/// What one [`Index::rescan`] pass did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rescan {
    /// Rows scanned again (or made, for targets a migrated database had none for).
    pub scanned: u64,
    /// Rows still scanned with another rule set (or missing) after the pass.
    pub remaining: u64,
}

/// A stale row's inputs: target, entry, full digest, stored document.
type Stale = (String, u64, String, Option<String>);

impl Index {
    /// Scan again, from their stored documents, at most `limit` targets whose row was made with
    /// another rule set than this code's, or that have a current tool set and no row (a
    /// database migrated from version 5). Writes no change or event.
    pub fn rescan(&mut self, blobs: &Blobs, limit: usize) -> Result<Rescan, IndexError> {
        let digest = current_digest();
        let key = format!("{digest} {}", legs::LEGS_ID);
        if meta(&self.conn, "scan_rules")?.as_deref() == Some(key.as_str()) {
            return Ok(Rescan::default());
        }
        let started = std::time::Instant::now();
        let stale: Vec<Stale> = self
            .conn
            .prepare(
                "SELECT t.id, t.last_ok_entry, t.current_full, o.raw FROM targets t
                 LEFT JOIN target_scans s ON s.target_id = t.id
                 LEFT JOIN observations o ON o.entry = coalesce(s.entry, t.last_ok_entry)
                 WHERE t.current_full IS NOT NULL AND t.last_ok_entry IS NOT NULL
                     AND (s.target_id IS NULL OR s.rules_digest <> ?1
                         OR s.legs_version <> ?3)
                 ORDER BY t.id LIMIT ?2",
            )?
            .query_map(
                params![
                    digest,
                    int(limit.min(u32::MAX as usize) as u64)?,
                    legs::LEGS_ID
                ],
                |r| Ok((r.get(0)?, need_unsigned(r, 1)?, r.get(2)?, r.get(3)?)),
            )?
            .collect::<Result<_, _>>()?;
        let mut scanned = 0;
        let mut stale = stale.into_iter().peekable();
        while stale.peek().is_some() && started.elapsed() < RESCAN_PASS_TIME {
            // A short transaction per chunk: a writer waiting for the index is not held up by
            // a whole pass.
            let tx = self.conn.transaction()?;
            let mut read = true;
            for (target_id, last_ok, current_full, raw) in stale.by_ref().take(RESCAN_CHUNK) {
                read = rescan_one(&tx, blobs, (&target_id, last_ok, current_full), raw)?;
                if !read {
                    break;
                }
                scanned += 1;
            }
            tx.commit()?;
            if !read {
                break;
            }
        }
        let remaining: i64 = self.conn.query_row(
            "SELECT count(*) FROM targets t LEFT JOIN target_scans s ON s.target_id = t.id
             WHERE t.current_full IS NOT NULL AND t.last_ok_entry IS NOT NULL
                 AND (s.target_id IS NULL OR s.rules_digest <> ?1 OR s.legs_version <> ?2)",
            [digest, legs::LEGS_ID],
            |r| r.get(0),
        )?;
        if remaining == 0 {
            // Every row is this rule set's: later passes need not look (rows written from now
            // on are, too).
            set_meta(&self.conn, "scan_rules", &key)?;
        }
        Ok(Rescan {
            scanned,
            remaining: u64::try_from(remaining).unwrap_or(0),
        })
    }
}

/// Scan one stale target again from its stored document (see [`Index::rescan`]). A document
/// that is not stored or does not decode leaves a row that says so (`scan` NULL, made with this
/// rule set: this release does not try it again), which later observations do not compare
/// with. Returns `false`, writing nothing, when the blob store could not be read (a transient
/// failure: the pass stops and a later one tries again).
fn rescan_one(
    tx: &Transaction,
    blobs: &Blobs,
    (target_id, last_ok, current_full): (&str, u64, String),
    raw: Option<String>,
) -> Result<bool, IndexError> {
    // The row's own entry when it has one (the set and instructions it was made from).
    let (entry, full) = tx
        .prepare_cached("SELECT entry, full FROM target_scans WHERE target_id = ?1")?
        .query_row([target_id], |r| Ok((need_unsigned(r, 0)?, r.get(1)?)))
        .optional()?
        .unwrap_or((last_ok, current_full));
    let doc = match raw {
        Some(raw) => match blobs.get(&parse_raw(&raw, entry)?) {
            Ok(bytes) => bytes.and_then(|b| Document::decode_raw_pages(&b).ok()),
            Err(_) => return Ok(false),
        },
        None => None,
    };
    let instructions = doc.as_ref().and_then(doc_instructions);
    let set = doc
        .as_ref()
        .and_then(|d| checked_tool_set(d.tool_set(), target_id, &full, entry).ok());
    let s = scan_of(set.as_ref(), instructions.as_deref());
    write_row(tx, target_id, (entry, &full), instructions.as_deref(), &s)?;
    Ok(true)
}

impl Index {
    /// The stored scan of a target; `None` when it has none (never observed `ok`).
    pub fn target_scan(&self, target_id: &str) -> Result<Option<TargetScan>, IndexError> {
        self.conn
            .prepare_cached(
                "SELECT entry, full, rules, rules_digest, scan, legs, toxic, instructions, legs_total
                 FROM target_scans WHERE target_id = ?1",
            )?
            .query_row([target_id], scan_row)
            .optional()?
            .transpose()
    }

    /// Per rule class, how many targets (and their servers) have a match of it.
    pub fn flagged_by_class(&self) -> Result<Vec<ClassCount>, IndexError> {
        let mut st = self.conn.prepare_cached(
            "SELECT c.value, count(DISTINCT s.target_id), count(DISTINCT t.server)
             FROM target_scans s JOIN targets t ON t.id = s.target_id, json_each(s.classes) c
             GROUP BY c.value ORDER BY c.value",
        )?;
        let rows = st
            .query_map([], |r| {
                Ok(ClassCount {
                    class: r.get(0)?,
                    targets: need_unsigned(r, 1)?,
                    servers: need_unsigned(r, 2)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Targets flagged (any match), with a block-tier match, and with a toxic flow.
    pub fn scan_totals(&self) -> Result<ScanTotals, IndexError> {
        Ok(self.conn.query_row(
            "SELECT count(*), coalesce(sum(block + advise > 0), 0), coalesce(sum(block > 0), 0),
                 coalesce(sum(toxic IS NOT NULL), 0), coalesce(sum(rules_digest = ?1), 0)
             FROM target_scans",
            [current_digest()],
            |r| {
                Ok(ScanTotals {
                    scanned: need_unsigned(r, 0)?,
                    flagged: need_unsigned(r, 1)?,
                    blocked: need_unsigned(r, 2)?,
                    toxic_flow: need_unsigned(r, 3)?,
                    current_rules: need_unsigned(r, 4)?,
                })
            },
        )?)
    }
}

/// One rule class across the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassCount {
    /// The class (`hidden-instructions`, …).
    pub class: String,
    /// Targets whose current scan has a match of it.
    pub targets: u64,
    /// Registry servers with such a target.
    pub servers: u64,
}

/// Scan totals across the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanTotals {
    /// Targets with a scan row.
    pub scanned: u64,
    /// Of them, with any match.
    pub flagged: u64,
    /// With a block-tier match.
    pub blocked: u64,
    /// Holding all three data-flow legs.
    pub toxic_flow: u64,
    /// Scanned with this code's rule set (the rest await a re-scan).
    pub current_rules: u64,
}

fn scan_row(r: &Row<'_>) -> rusqlite::Result<Result<TargetScan, IndexError>> {
    let entry = unsigned(r, 0)?.unwrap_or(0);
    let scan: Option<String> = r.get(4)?;
    let legs: String = r.get(5)?;
    let toxic: Option<String> = r.get(6)?;
    let (full, rules, rules_digest) = (r.get(1)?, r.get(2)?, r.get(3)?);
    let instructions: Option<String> = r.get(7)?;
    let legs_total = need_unsigned(r, 8)?;
    Ok((|| {
        Ok(TargetScan {
            entry,
            full,
            instructions,
            rules,
            rules_digest,
            scan: scan.map(|s| serde_json::from_str(&s)).transpose()?,
            legs: serde_json::from_str(&legs)?,
            legs_total,
            toxic_flow: match toxic.as_deref() {
                Some("confirmed") => Some(Certainty::Confirmed),
                Some(_) => Some(Certainty::Possible),
                None => None,
            },
        })
    })())
}
