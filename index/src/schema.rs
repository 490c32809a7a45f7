//! The index's schema: its DDL, its version, and opening a database (creating the tables, or
//! refusing a version this code does not know).
//!
//! # Schema (version [`SCHEMA_VERSION`], recorded in `meta.schema_version`)
//!
//! * `meta(key, value)`: `schema_version`; `log_size_indexed` (every log entry below it has its
//!   observation row); `log_vkey` (the verifier key of the one log this index follows);
//!   `endpoint_keys` (the [`ENDPOINT_KEY_RULES`] the targets' `endpoint_key` were computed with:
//!   a writable open computes every key again when it is not this code's, in the transaction
//!   that migrates, so a database whose keys dropped the query gets keys that keep it).
//! * `runs`: one row per crawl run: `kind`, `started_at`, `finished_at`, `status`
//!   (`running|complete|failed`), `registry`, `harvest_complete`, `report` (JSON).
//! * `servers`: the latest registry record per name: `version`, `title`, `description`,
//!   `status` (registry lifecycle), `repository_url`, `website_url`, `first_listed`,
//!   `last_listed`, `delisted_at`.
//! * `targets`: every remote and package of every server, keyed by the log's subject id
//!   (`Subject::id()`): what it is (`target` = URL or `npm:<name>`/`pypi:<name>`, `kind`
//!   `remote|package`, `declared_transport`, `package_version`, `skip_reason`, `skip_detail`,
//!   `withheld_headers`: a JSON array of the declared headers a remote is dialled without;
//!   `endpoint_key`: [`crate::index::endpoint_key`] of `target`, what `/check` matches),
//!   listing dates, the newest entry (`last_status`, `last_detail`, `last_entry`,
//!   `last_observed_at`) and the newest complete tool set (`last_ok_entry`, `current_full`,
//!   `current_mtl1`, `current_raw`, `current_tools`), and the authorization servers its newest
//!   readable protected-resource metadata named (`current_auth`, a JSON array sorted and
//!   deduplicated; `current_auth_entry`).
//! * `observations`: one row per log entry (`entry` = its index): the entry's members, plus
//!   `transport`, `protocol_version`, `elapsed_ms` from its observation document, `prev`, and
//!   the `run_id` that recorded it (bookkeeping: `NULL` for rows derived by
//!   [`Index::catch_up`](crate::Index::catch_up)).
//! * `package_observations` (version 4): per package entry, what the sandbox saw, derived from
//!   its document's `package.sandbox` (`crate::packages`): `package`, `version`, `status`,
//!   `observer`, `complete`, `artifact`, `findings` and `behaviour` (JSON, the answer's shape);
//!   an entry whose document holds no facts (a fetch that failed) has a row too, not complete.
//!   Version 5 adds the registry signals (`crate::packages::REGISTRY_SIGNAL_TABLES`):
//!   `registry` (the document's `package.registry` facts, JSON), `registry_previous` (the entry
//!   of the previous observed version that has facts, compared with) and
//!   `registry_comparison` (the flags and what they name, JSON).
//! * `changes`: one row per `ok` entry whose full digest differs from the target's previous `ok`
//!   entry: the two entries and digests, the class, counts of added/removed/modified tools, the
//!   `toolmark_toolset::diff::Diff` and `toolmark_toolset::classify::Classification` as JSON.
//!   When either entry has no stored document the change is recorded as `unsure` with no diff.
//!   `kind` is `tools` for those; `authorization` for a change of the authorization servers a
//!   remote's protected-resource metadata names (`old_auth`, `new_auth`: JSON arrays, the
//!   entries that read them; `old_full`/`new_full` empty, no diff; always `dangerous`: a swapped
//!   authorization server decides who may mint tokens for the server); `behaviour` (version 4)
//!   for a package entry whose version behaved otherwise than the package's latest `ok`
//!   observation of another version (`old_behaviour`, `new_behaviour`: JSON; `added`/`removed`
//!   count findings); `registry` (version 5) for a package entry whose registry facts raise a
//!   flag against the previous observed version's (`old_registry`: `{"version"}`,
//!   `new_registry`: `{"version", "comparison"}`; `added` counts the flags; `dangerous` for
//!   `provenance-lost`, `publisher-changed`, `install-scripts-added`, else `unsure`).
//! * `target_sensitive` (version 5, [`crate::census`]): per target and starter-policy category
//!   its current tool set has tools in: `category`, the `entry` of that set, `tool_count` and
//!   `tools` (a JSON array of the first names). Derived when the current tool set changes;
//!   `meta.census_policy` names the policy version it was derived with, and a catch-up
//!   re-derives it from the stored current tool sets when that is not this code's (so a
//!   database migrated from version 4 gets its census on the first catch-up).
//! * `registry_records` (version 3): per registry (`registry`, its base URL) and server `name`,
//!   the latest record the last harvests left: `version` and `item`, the registry's
//!   `ServerResponse` item as JSON text, from which the record and its targets are rebuilt
//!   without the registry ([`crate::harvests`]).
//! * `registry_harvests` (version 3): per registry, the last complete harvest (`last_complete_at`,
//!   `last_complete_mode` `full|delta`, `next_since`: the `updated_since` of the next delta) and
//!   the last complete full harvest (`last_full_at`).
//! * `security_events` (version 5): one event per `behaviour`, `registry` and `authorization`
//!   change and per `dangerous` `tools` change (`seq` the cursor, `id` the event's digest,
//!   `target_id`, `kind`, `observed_at`, `change_id`, `body` the unsigned event document),
//!   derived in change order ([`crate::events`]).
//! * `target_scans` (version 6, [`crate::scans`]): per target, the rule-set scan and the
//!   data-flow legs of its current tool set and server instructions (`entry`, `full`,
//!   `instructions`, `rules`/`rules_digest` it was scanned with, `scan` JSON, `block`/`advise`
//!   counts, `classes`, `legs`, `toxic`); `meta.scan_rules` is set once every row is this code's
//!   rule set. Version 6 also rebuilds `changes` (ids kept) for the `instructions` and `scan`
//!   kinds.
//! * `observation_kinds` (version 7): per entry and kind of the surface beyond `tools/list`
//!   its `surface` member names (`prompts`, `resources`, `resourceTemplates`, `appPages`,
//!   `card`): `digest` and `count` when read completely, else `status`; and
//!   `observations.tool_index`, the entry's `toolIndex`.
//! * Version 8 ([`crate::surfacechanges`]): `changes` rebuilt (ids kept) for the surface's
//!   change kinds: `prompts`, `resources`, `resourceTemplates`, `appPages` and `card` (an
//!   entry's complete read of a kind whose digest differs from the target's previous complete
//!   read: `old_full`/`new_full` the kind's digests, `diff`/`classification` the
//!   `toolmark_toolset::surface::diff` `KindDiff`/`KindClassification`), `card-mismatch` (a
//!   card listing tools other than the ones served; `diff` the card comparison) and `cloaking`
//!   (a second client identity was listed other tools; always `dangerous`);
//!   `targets.card_mismatch` (the card and full digests last compared, and whether they
//!   disagreed) and `targets.cloaking` (the pair of digests in force), so one is recorded per
//!   onset; and `observation_kinds_target (target_id, kind,
//!   entry)`. A migrated database derives nothing for the entries it holds (a rebuild does,
//!   numbering their changes in log order among the others: docs/operations.md).
//! * Version 9: `cache_scope` and `ttl_ms` on `observation_kinds` and `observations`, each
//!   list's MCP 2026-07-28 cache hints (`CACHE_HINT_COLUMNS`); null for entries indexed before.
//! * Version 5 (stats, [`crate::stats`]): no table, two indexes,
//!   `observations_observed_at (observed_at)` and `changes_observed_at (observed_at, kind,
//!   class)`, so the stats' windows (changes in the last 24 hours, observations per day) read
//!   only their rows.
//!
//! Version 2 changed tables in place (the authorization columns); from it on, migrations are
//! numbered ([`MIGRATIONS`]) and keep every row: opening a database of version
//! [`OLDEST_MIGRATABLE`] or later applies the missing ones in one transaction and records the
//! new version; an older, newer or unknown version is refused ([`IndexError::Schema`]). Version
//! 3 adds tables; version 4 adds `package_observations` and rebuilds `changes` (same ids and
//! rows) so that it holds `behaviour` changes and one change of each kind per entry; version 5
//! adds the registry signals' columns, rebuilds `changes` again (ids kept) for `registry`
//! changes, adds `security_events` (deriving the events of the changes already held, as a
//! rebuild would) and the stats' indexes (several pieces of one version, applied in order). A
//! read-only open accepts only the versions in [`READ_ONLY_VERSIONS`] (readers rely on version
//! 5's tables and indexes): the binary migrates (a writable open) before it serves. The index is derivable,
//! so an operator can always rebuild it.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, params};

use crate::index::{ENDPOINT_KEY_RULES, Index, IndexError, endpoint_key};

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: u32 = 9;

/// The oldest version [`Index::open`] migrates; older ones are refused (version 2 changed
/// tables in place, so a version-1 database is rebuilt, not migrated).
pub const OLDEST_MIGRATABLE: u32 = 2;

/// Versions a read-only open accepts: the current one, and older ones whose later migrations
/// only add tables that readers (the API, the desk) never query. Version 8's onset columns and
/// version 9's cache hints are queried by readers, so only 9.
pub const READ_ONLY_VERSIONS: &[u32] = &[9];

/// The additive migrations: (the version a database has once it is applied, its DDL). Applied in
/// order to a database of an older version; a new database gets [`SCHEMA`] and all of them.
pub const MIGRATIONS: &[(u32, &str)] = &[
    (3, REGISTRY_TABLES),
    (4, PACKAGE_TABLES),
    // One version, several pieces, applied in this order: `changes` is rebuilt before the
    // stats' index on it is made.
    (5, crate::packages::REGISTRY_SIGNAL_TABLES),
    (5, crate::events::EVENT_TABLES),
    (5, crate::stats::STATS_INDEXES),
    (5, crate::census::CENSUS_TABLES),
    (6, crate::scans::SCAN_TABLES),
    (7, SURFACE_TABLES),
    (8, crate::surfacechanges::SURFACE_CHANGE_TABLES),
    (9, CACHE_HINT_COLUMNS),
];

/// Version 7 (issue #29): each entry's surface beyond `tools/list`, one row per kind its
/// `surface` member names (`kind` as `toolmark_toolset::surface::Kind::as_str`; `digest` and
/// `count` when read completely, else `status`), and its `toolIndex`, so `/check` can locate
/// the entries of a target that hold a kind's digest. Entries before version 7 carry no surface,
/// so a migrated database has nothing to derive.
const SURFACE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS observation_kinds (
    entry INTEGER NOT NULL,
    target_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    digest TEXT,
    count INTEGER,
    status TEXT,
    PRIMARY KEY (entry, kind)
) STRICT;
CREATE INDEX IF NOT EXISTS observation_kinds_digest ON observation_kinds (target_id, kind, digest);
ALTER TABLE observations ADD COLUMN tool_index TEXT;
";

/// Version 9 (issue #29): each list's MCP 2026-07-28 cache hints as the stored document's pages
/// give them (`toolmark_toolset::surface::cache::CacheHints`): `cache_scope` (`private` when
/// any page says so, `public`, or null) and the smallest `ttl_ms`, on a kind's row and, for
/// `tools/list`, on the observation. Entries indexed before version 9 have none until a rebuild.
const CACHE_HINT_COLUMNS: &str = "
ALTER TABLE observation_kinds ADD COLUMN cache_scope TEXT;
ALTER TABLE observation_kinds ADD COLUMN ttl_ms INTEGER;
ALTER TABLE observations ADD COLUMN cache_scope TEXT;
ALTER TABLE observations ADD COLUMN ttl_ms INTEGER;
";

/// Version 4: what the package sandbox saw of each package entry (derived from its document),
/// and `changes` rebuilt to hold `behaviour` changes — one kind of change per entry at most,
/// so an entry can carry both a tool-set change and a behaviour change. A version-3 database
/// has no package entries yet (no observer wrote any), so nothing needs deriving: the
/// table starts empty and [`Index::rebuild`](crate::Index::rebuild) fills it from the log.
const PACKAGE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS package_observations (
    entry INTEGER PRIMARY KEY,
    target_id TEXT NOT NULL,
    package TEXT NOT NULL,
    version TEXT NOT NULL,
    status TEXT NOT NULL,
    observer TEXT,
    complete INTEGER NOT NULL,
    artifact TEXT,
    findings TEXT NOT NULL,
    behaviour TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS package_observations_target ON package_observations (target_id, entry);
CREATE INDEX IF NOT EXISTS package_observations_package ON package_observations (package, entry);
CREATE TABLE changes_v4 (
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
    kind TEXT NOT NULL DEFAULT 'tools' CHECK (kind IN ('tools', 'authorization', 'behaviour')),
    old_auth TEXT,
    new_auth TEXT,
    old_behaviour TEXT,
    new_behaviour TEXT,
    UNIQUE (new_entry, kind)
) STRICT;
INSERT INTO changes_v4 (id, target_id, server, endpoint, observed_at, old_entry, new_entry,
    old_full, new_full, old_mtl1, new_mtl1, class, added, removed, modified, diff,
    classification, kind, old_auth, new_auth)
SELECT id, target_id, server, endpoint, observed_at, old_entry, new_entry, old_full, new_full,
    old_mtl1, new_mtl1, class, added, removed, modified, diff, classification, kind, old_auth,
    new_auth FROM changes;
DROP TABLE changes;
ALTER TABLE changes_v4 RENAME TO changes;
CREATE INDEX IF NOT EXISTS changes_target ON changes (target_id, id);
CREATE INDEX IF NOT EXISTS changes_server ON changes (server, id);
CREATE INDEX IF NOT EXISTS changes_class ON changes (class, id);
CREATE INDEX IF NOT EXISTS changes_new_entry ON changes (new_entry);
";

/// Version 3: the registry's records and the harvest bookkeeping that deltas start from.
const REGISTRY_TABLES: &str = "
CREATE TABLE IF NOT EXISTS registry_records (
    registry TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    item TEXT NOT NULL,
    PRIMARY KEY (registry, name)
) STRICT;
CREATE TABLE IF NOT EXISTS registry_harvests (
    registry TEXT PRIMARY KEY,
    last_complete_at TEXT NOT NULL,
    last_complete_mode TEXT NOT NULL CHECK (last_complete_mode IN ('full', 'delta')),
    next_since TEXT NOT NULL,
    last_full_at TEXT
) STRICT;
";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed')),
    registry TEXT NOT NULL,
    harvest_complete INTEGER NOT NULL,
    report TEXT
) STRICT;
CREATE TABLE IF NOT EXISTS servers (
    name TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    title TEXT,
    description TEXT,
    status TEXT NOT NULL,
    repository_url TEXT,
    website_url TEXT,
    first_listed TEXT NOT NULL,
    last_listed TEXT NOT NULL,
    delisted_at TEXT
) STRICT;
CREATE TABLE IF NOT EXISTS targets (
    id TEXT PRIMARY KEY,
    server TEXT NOT NULL,
    target TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('remote', 'package')),
    declared_transport TEXT,
    package_version TEXT,
    skip_reason TEXT,
    skip_detail TEXT,
    first_listed TEXT,
    last_listed TEXT,
    delisted_at TEXT,
    last_status TEXT,
    last_detail TEXT,
    last_entry INTEGER,
    last_observed_at TEXT,
    last_ok_entry INTEGER,
    current_full TEXT,
    current_mtl1 TEXT,
    current_raw TEXT,
    current_tools INTEGER,
    endpoint_key TEXT,
    current_auth TEXT,
    current_auth_entry INTEGER,
    withheld_headers TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS targets_server ON targets (server);
CREATE INDEX IF NOT EXISTS targets_endpoint_key ON targets (endpoint_key);
CREATE INDEX IF NOT EXISTS targets_target ON targets (target);
CREATE TABLE IF NOT EXISTS observations (
    entry INTEGER PRIMARY KEY,
    target_id TEXT NOT NULL,
    run_id INTEGER,
    observed_at TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT,
    mtl1 TEXT,
    mtl1_error TEXT,
    full TEXT,
    tools INTEGER,
    raw TEXT,
    transport TEXT,
    protocol_version TEXT,
    elapsed_ms INTEGER,
    prev INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS observations_target ON observations (target_id, entry);
CREATE INDEX IF NOT EXISTS observations_full ON observations (full);
CREATE INDEX IF NOT EXISTS observations_mtl1 ON observations (mtl1);
CREATE TABLE IF NOT EXISTS changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    target_id TEXT NOT NULL,
    server TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    old_entry INTEGER NOT NULL,
    new_entry INTEGER NOT NULL UNIQUE,
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
    kind TEXT NOT NULL DEFAULT 'tools' CHECK (kind IN ('tools', 'authorization')),
    old_auth TEXT,
    new_auth TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS changes_target ON changes (target_id, id);
CREATE INDEX IF NOT EXISTS changes_server ON changes (server, id);
CREATE INDEX IF NOT EXISTS changes_class ON changes (class, id);
";

/// Prepared statements a read-write index connection keeps.
const STATEMENT_CACHE: usize = 128;

/// A `meta` value.
pub(crate) fn meta(conn: &Connection, key: &str) -> Result<Option<String>, IndexError> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

/// Set a `meta` value.
pub(crate) fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<(), IndexError> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// Compute every target's `endpoint_key` again from its `target` with this code's
/// [`endpoint_key`] (a database written by code whose keys dropped the query); returns how many
/// changed. The keys are not derived from the log, so [`Index::rebuild`] keeps them; this is
/// their migration.
fn rekey_endpoints(tx: &Transaction) -> Result<usize, IndexError> {
    let rows: Vec<(String, String, Option<String>)> = tx
        .prepare("SELECT id, target, endpoint_key FROM targets")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let mut update = tx.prepare("UPDATE targets SET endpoint_key = ?2 WHERE id = ?1")?;
    let mut changed = 0;
    for (id, target, old) in rows {
        let key = endpoint_key(&target);
        if old.as_deref() != Some(key.as_str()) {
            update.execute(params![id, key])?;
            changed += 1;
        }
    }
    Ok(changed)
}

fn stored_schema_version(conn: &Connection) -> Result<Option<String>, IndexError> {
    let has_meta: bool = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !has_meta {
        return Ok(None);
    }
    meta(conn, "schema_version")
}

impl Index {
    /// Open (creating if needed) the index at `path` for reading and writing.
    pub fn open(path: &Path) -> Result<Index, IndexError> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        // Indexing an entry runs a score of cached statements: rusqlite's default cache (16)
        // evicted some on every entry, and preparing them again was a tenth of a catch-up.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")?;
        let tx = conn.transaction()?;
        let from = match stored_schema_version(&tx)? {
            Some(found) => match found.parse::<u32>() {
                Ok(v) if (OLDEST_MIGRATABLE..=SCHEMA_VERSION).contains(&v) => v,
                _ => return Err(IndexError::Schema { found }),
            },
            None => 0,
        };
        tx.execute_batch(SCHEMA)?;
        for (version, ddl) in MIGRATIONS {
            if *version > from {
                tx.execute_batch(ddl)?;
            }
        }
        if from > 0 && from < 5 {
            // Version 5's events of the changes an older database already holds.
            crate::events::backfill(&tx)?;
        }
        if meta(&tx, "endpoint_keys")?.as_deref() != Some(ENDPOINT_KEY_RULES) {
            rekey_endpoints(&tx)?;
            set_meta(&tx, "endpoint_keys", ENDPOINT_KEY_RULES)?;
        }
        set_meta(&tx, "schema_version", &SCHEMA_VERSION.to_string())?;
        tx.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('log_size_indexed', '0')",
            [],
        )?;
        tx.commit()?;
        Ok(Index { conn })
    }

    /// Open an existing index for queries only (for example by the API, beside the writer).
    ///
    /// Its statements are planned without looking at the values bound to them (SQLite's query
    /// planner stability guarantee, `SQLITE_DBCONFIG_ENABLE_QPSG`). Without it SQLite marks a
    /// statement whose plan read a bound value (`LIMIT ?5` under an `ORDER BY`, as in
    /// [`Index::targets_at`]) to be compiled again whenever a value is bound, and rusqlite's
    /// statement cache clears the bindings of every statement it takes back: such a statement
    /// was parsed and planned anew on every call, a quarter of the CPU of an uncached `/check`
    /// (docs/benchmarks.md, "Where an uncached /check goes"). The rows are the same either way;
    /// only the choice of plan could differ, and these queries have one sensible plan each.
    pub fn open_read_only(path: &Path) -> Result<Index, IndexError> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        conn.busy_timeout(Duration::from_secs(10))?;
        match stored_schema_version(&conn)? {
            Some(v)
                if v.parse()
                    .is_ok_and(|v: u32| READ_ONLY_VERSIONS.contains(&v)) =>
            {
                Ok(Index { conn })
            }
            found => Err(IndexError::Schema {
                found: found.unwrap_or_default(),
            }),
        }
    }

    /// Every log entry below this index has its observation row.
    pub fn log_size_indexed(&self) -> Result<u64, IndexError> {
        log_size_indexed_in(&self.conn)
    }
}

/// Record that every entry below `size` is indexed (inside the transaction that indexed them).
pub(crate) fn set_log_size_indexed(tx: &Transaction, size: u64) -> Result<(), IndexError> {
    set_meta(tx, "log_size_indexed", &size.to_string())
}

/// [`Index::log_size_indexed`] on a connection (or within a transaction).
pub(crate) fn log_size_indexed_in(conn: &Connection) -> Result<u64, IndexError> {
    let v = meta(conn, "log_size_indexed")?.unwrap_or_default();
    v.parse()
        .map_err(|_| IndexError::Inconsistent(format!("log_size_indexed is {v:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("toolmark-index-unit-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A read-only connection plans each cached statement once: `/check`'s `targets_at` (an
    /// `ORDER BY` with a bound `LIMIT`) is not compiled again on later calls, as it is on a
    /// connection without the planner stability guarantee (the writer's), where every call
    /// parses and plans it anew.
    #[test]
    fn a_read_only_index_does_not_plan_its_cached_statements_again() {
        let dir = scratch("qpsg");
        let path = dir.join("index.sqlite");
        let writer = Index::open(&path).unwrap();
        writer
            .conn
            .execute_batch(
                "INSERT INTO targets (id, server, target, kind, endpoint_key) VALUES
                 ('0000000000000001', 'a/b', 'https://a.example/mcp', 'remote',
                  'https://a.example/mcp');",
            )
            .unwrap();
        let reader = Index::open_read_only(&path).unwrap();
        let reprepared = |index: &Index| {
            for endpoint in ["https://a.example/mcp", "https://b.example/mcp", "npm:c"] {
                let (rows, _) = index.targets_at(endpoint, None, 10).unwrap();
                assert_eq!(rows.len(), usize::from(endpoint.starts_with("https://a.")));
            }
            index
                .conn
                .prepare_cached(&crate::queries::targets_at_sql())
                .unwrap()
                .get_status(rusqlite::StatementStatus::RePrepare)
        };
        assert_eq!(reprepared(&reader), 0);
        // What the setting prevents, on the writer's connection.
        assert!(reprepared(&writer) >= 2);
        drop((reader, writer));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A database whose keys dropped the query (written before [`ENDPOINT_KEY_RULES`] 2, so
    /// without `meta.endpoint_keys`) gets keys that keep it at its next writable open, and
    /// `targets_at` then tells its two Hugging Face remotes apart.
    #[test]
    fn a_writable_open_computes_keys_that_dropped_the_query_again() {
        let dir = scratch("rekey");
        let path = dir.join("index.sqlite");
        {
            let index = Index::open(&path).unwrap();
            index
                .conn
                .execute_batch(
                    "INSERT INTO targets (id, server, target, kind, endpoint_key) VALUES
                     ('0000000000000001', 'co.huggingface/hf-mcp-server',
                      'https://huggingface.co/mcp', 'remote', 'https://huggingface.co/mcp'),
                     ('0000000000000002', 'co.huggingface/hf-mcp-server',
                      'https://huggingface.co/mcp?login', 'remote', 'https://huggingface.co/mcp');
                     DELETE FROM meta WHERE key = 'endpoint_keys';",
                )
                .unwrap();
            // Before the keys are computed again, no row has the query's key.
            assert_eq!(
                index
                    .find_target_by_key("https://huggingface.co/mcp?login")
                    .unwrap()
                    .len(),
                0
            );
        }
        let index = Index::open(&path).unwrap();
        let keys: Vec<String> = index
            .conn
            .prepare("SELECT endpoint_key FROM targets ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            keys,
            [
                "https://huggingface.co/mcp",
                "https://huggingface.co/mcp?login"
            ]
        );
        assert_eq!(
            meta(&index.conn, "endpoint_keys").unwrap().as_deref(),
            Some(ENDPOINT_KEY_RULES)
        );
        let login = index
            .find_target_by_key("https://huggingface.co/mcp?login")
            .unwrap();
        assert_eq!(login.len(), 1);
        assert_eq!(login[0].id, "0000000000000002");
        let (both, count) = index
            .targets_at("https://huggingface.co/mcp", None, 10)
            .unwrap();
        assert_eq!(count, 2);
        assert_eq!(both[0].id, "0000000000000001");
    }

    #[test]
    fn opens_idempotently_and_refuses_other_schema_versions() {
        let dir = scratch("schema");
        let path = dir.join("index.sqlite");
        {
            let index = Index::open(&path).unwrap();
            assert_eq!(index.log_size_indexed().unwrap(), 0);
            let mode: String = index
                .conn
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .unwrap();
            assert_eq!(mode, "wal");
            let strict: i64 = index
                .conn
                .query_row(
                    "SELECT count(*) FROM pragma_table_list WHERE strict = 1
                     AND name IN ('meta', 'runs', 'servers', 'targets', 'observations', 'changes')",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(strict, 6);
        }
        let index = Index::open(&path).unwrap();
        assert_eq!(index.last_run().unwrap(), None);
        assert!(index.known_server_names().unwrap().is_empty());
        let ro = Index::open_read_only(&path).unwrap();
        assert_eq!(ro.log_size_indexed().unwrap(), 0);
        index
            .conn
            .execute(
                "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
                [],
            )
            .unwrap();
        drop(index);
        assert!(matches!(
            Index::open(&path),
            Err(IndexError::Schema { found }) if found == "999"
        ));
        assert!(matches!(
            Index::open_read_only(&path),
            Err(IndexError::Schema { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_version_2_database_is_migrated_to_the_current_version_keeping_its_rows() {
        let dir = scratch("migrate");
        let path = dir.join("index.sqlite");
        {
            // A version-2 database as the previous code wrote it: SCHEMA alone, version 2.
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(SCHEMA).unwrap();
            set_meta(&conn, "schema_version", "2").unwrap();
            conn.execute(
                "INSERT INTO servers (name, version, status, first_listed, last_listed)
                 VALUES ('a/b', '1', 'active', 'x', 'x')",
                [],
            )
            .unwrap();
        }
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute(
                "INSERT INTO changes (id, target_id, server, endpoint, observed_at, old_entry,
                     new_entry, old_full, new_full, class, added, removed, modified)
                 VALUES (7, 't', 'a/b', 'https://a.example', 'x', 0, 1, 'f0', 'f1', 'benign',
                     1, 0, 0)",
                [],
            )
            .unwrap();
        }
        // Readers refuse it until the writer has migrated it (they query the newest tables).
        assert!(Index::open_read_only(&path).is_err());
        let index = Index::open(&path).unwrap();
        Index::open_read_only(&path).unwrap();
        assert_eq!(
            meta(&index.conn, "schema_version").unwrap().as_deref(),
            Some(SCHEMA_VERSION.to_string().as_str())
        );
        assert_eq!(index.known_server_names().unwrap(), ["a/b"]);
        // `changes` was rebuilt with its rows and ids; an entry may now carry a change of
        // each kind, and no two of one kind.
        let kept: (i64, String) = index
            .conn
            .query_row("SELECT id, kind FROM changes", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(kept, (7, "tools".to_owned()));
        let insert = |kind: &str| {
            index.conn.execute(
                "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry,
                     new_entry, old_full, new_full, class, added, removed, modified, kind)
                 VALUES ('t', 'a/b', 'e', 'x', 0, 1, '', '', 'dangerous', 1, 0, 0, ?1)",
                [kind],
            )
        };
        insert("behaviour").unwrap();
        assert!(insert("behaviour").is_err());
        // Version 5: registry changes, and the registry signals of package observations.
        insert("registry").unwrap();
        assert!(insert("registry").is_err());
        assert!(insert("other").is_err());
        index
            .conn
            .query_row(
                "SELECT count(registry), count(registry_previous), count(registry_comparison)
                 FROM package_observations",
                [],
                |_| Ok(()),
            )
            .unwrap();
        let indices: i64 = index
            .conn
            .query_row(
                "SELECT count(*) FROM pragma_index_list('changes') WHERE name IN
                 ('changes_target', 'changes_server', 'changes_class', 'changes_new_entry',
                  'changes_observed_at')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(indices, 5);
        let tables: i64 = index
            .conn
            .query_row(
                "SELECT count(*) FROM pragma_table_list WHERE strict = 1
                 AND name IN ('registry_records', 'registry_harvests', 'target_sensitive')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 3);
        // Version 5's security events: the one change (benign, of tools) is no event.
        let events: i64 = index
            .conn
            .query_row("SELECT count(*) FROM security_events", [], |r| r.get(0))
            .unwrap();
        assert_eq!(events, 0);
        // Version 1 changed in place in version 2: refused, to be rebuilt.
        index
            .conn
            .execute(
                "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
                [],
            )
            .unwrap();
        drop(index);
        assert!(matches!(
            Index::open(&path),
            Err(IndexError::Schema { found }) if found == "1"
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A version-7 database (its tables as version 7's code made them) is migrated to the
    /// current version keeping its changes and their ids; the surface's change kinds and the
    /// cache hints' columns are then there, and nothing is derived for the entries it holds.
    #[test]
    fn a_version_7_database_is_migrated_keeping_change_ids_and_taking_the_surface_kinds() {
        let dir = scratch("migrate-7");
        let path = dir.join("index.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(SCHEMA).unwrap();
            for (version, ddl) in MIGRATIONS {
                if *version <= 7 {
                    conn.execute_batch(ddl).unwrap();
                }
            }
            set_meta(&conn, "schema_version", "7").unwrap();
            conn.execute_batch(
                "INSERT INTO changes (id, target_id, server, endpoint, observed_at, old_entry,
                     new_entry, old_full, new_full, class, added, removed, modified, kind)
                 VALUES (41, 't', 'a/b', 'https://a.example', 'x', 0, 1, 'f0', 'f1', 'benign',
                     1, 0, 0, 'tools'),
                        (42, 't', 'a/b', 'https://a.example', 'x', 1, 2, 'f1', 'f2', 'dangerous',
                     0, 0, 1, 'scan');
                 INSERT INTO sqlite_sequence (name, seq) VALUES ('changes', 42)
                     ON CONFLICT DO NOTHING;",
            )
            .unwrap();
            // Version 7 refuses the surface's kinds.
            assert!(
                conn.execute(
                    "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry,
                         new_entry, old_full, new_full, class, added, removed, modified, kind)
                     VALUES ('t', 'a/b', 'e', 'x', 0, 3, '', '', 'unsure', 0, 0, 0, 'prompts')",
                    [],
                )
                .is_err()
            );
        }
        let index = Index::open(&path).unwrap();
        assert_eq!(
            meta(&index.conn, "schema_version").unwrap().as_deref(),
            Some("9")
        );
        for (table, column) in [
            ("observation_kinds", "cache_scope"),
            ("observation_kinds", "ttl_ms"),
            ("observations", "cache_scope"),
            ("observations", "ttl_ms"),
        ] {
            let n: i64 = index
                .conn
                .query_row(
                    "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
                    [table, column],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "{table}.{column}");
        }
        let kept: Vec<(i64, String)> = index
            .conn
            .prepare("SELECT id, kind FROM changes ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(kept, [(41, "tools".to_owned()), (42, "scan".to_owned())]);
        for kind in crate::surfacechanges::SURFACE_CHANGE_KINDS {
            index
                .conn
                .execute(
                    "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry,
                         new_entry, old_full, new_full, class, added, removed, modified, kind)
                     VALUES ('t', 'a/b', 'e', 'x', 0, 3, '', '', 'unsure', 0, 0, 0, ?1)",
                    [kind],
                )
                .unwrap();
        }
        // Ids go on after the kept ones.
        let next: i64 = index
            .conn
            .query_row("SELECT min(id) FROM changes WHERE new_entry = 3", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(next, 43);
        let onsets: i64 = index
            .conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('targets')
                 WHERE name IN ('card_mismatch', 'cloaking')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(onsets, 2);
        Index::open_read_only(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn strict_tables_refuse_wrong_types_and_classes() {
        let dir = scratch("strict");
        let index = Index::open(&dir.join("index.sqlite")).unwrap();
        let bad_type = index.conn.execute(
            "INSERT INTO observations (entry, target_id, observed_at, status, tools)
             VALUES (1, 't', 'x', 'ok', 'many')",
            [],
        );
        assert!(bad_type.is_err());
        let bad_class = index.conn.execute(
            "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry, new_entry,
                 old_full, new_full, class, added, removed, modified)
             VALUES ('t', 's', 'e', 'x', 0, 1, 'a', 'b', 'scary', 0, 0, 0)",
            [],
        );
        assert!(bad_class.is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
