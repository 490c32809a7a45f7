//! The queryable index: one SQLite database (WAL, `STRICT` tables) holding runs, servers,
//! targets, observations and changes, and the queries the API needs.
//!
//! # Schema (version [`SCHEMA_VERSION`], recorded in `meta.schema_version`)
//!
//! * `meta(key, value)`: `schema_version`; `log_size_indexed` (every log entry below it has its
//!   observation row); `log_vkey` (the verifier key of the one log this index follows).
//! * `runs`: one row per crawl run: `kind`, `started_at`, `finished_at`, `status`
//!   (`running|complete|failed`), `registry`, `harvest_complete`, `report` (JSON).
//! * `servers`: the latest registry record per name: `version`, `title`, `description`,
//!   `status` (registry lifecycle), `repository_url`, `website_url`, `first_listed`,
//!   `last_listed`, `delisted_at`.
//! * `targets`: every remote and package of every server, keyed by the log's subject id
//!   (`Subject::id()`): what it is (`target` = URL or `npm:<name>`/`pypi:<name>`, `kind`
//!   `remote|package`, `declared_transport`, `package_version`, `skip_reason`, `skip_detail`),
//!   listing dates, the newest entry (`last_status`, `last_detail`, `last_entry`,
//!   `last_observed_at`) and the newest complete tool set (`last_ok_entry`, `current_full`,
//!   `current_mtl1`, `current_raw`, `current_tools`).
//! * `observations`: one row per log entry (`entry` = its index): the entry's members, plus
//!   `transport`, `protocol_version`, `elapsed_ms` from its observation document, `prev`, and
//!   the `run_id` that recorded it (bookkeeping: `NULL` for rows derived by
//!   [`Index::catch_up`]).
//! * `changes`: one row per `ok` entry whose full digest differs from the target's previous `ok`
//!   entry: the two entries and digests, the class, counts of added/removed/modified tools, the
//!   `toolmark_toolset::diff::Diff` and `toolmark_toolset::classify::Classification` as JSON.
//!   When either entry has no stored document the change is recorded as `unsure` with no diff.
//!
//! # Derivability
//!
//! Observation and change rows, and the `last_*`/`current_*` columns of targets, are computed
//! by one function from log entries (read back from the log's own bundles) and the blobs they
//! name; [`crate::Recorder`] uses it for fresh entries and [`Index::catch_up`] for entries the
//! index has not seen (after a crash between the log append and the index commit, or on a new
//! database). [`Index::rebuild`] clears those rows and derives them again; change ids then come
//! out the same, because changes are numbered in log order. Registry metadata and runs are not
//! in the log and are not rebuilt.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, Transaction, params};
use serde::Serialize;
use toolmark_log::entry::{Entry, EntryError};
use toolmark_log::store::Storage;
use toolmark_log::{Log, LogError, tiles};
use toolmark_toolset::{Sri, ToolSet};

use crate::blobs::{BlobError, Blobs};
use crate::document::{Document, DocumentError};

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// Most rows a list query returns, whatever limit is asked for.
pub const MAX_QUERY_ROWS: u32 = 1_000;

/// Entries indexed per transaction by [`Index::catch_up`] (bounds memory and transaction size).
const CATCH_UP_CHUNK: u64 = 4_096;

/// What can go wrong with the index or recording.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// SQLite failed.
    #[error("index database: {0}")]
    Sql(#[from] rusqlite::Error),
    /// The log failed.
    #[error("log: {0}")]
    Log(#[from] LogError),
    /// A log entry did not decode.
    #[error("log entry {index}: {source}")]
    Entry {
        /// Its index.
        index: u64,
        /// Why.
        source: EntryError,
    },
    /// The blob store failed (including a corrupted blob).
    #[error(transparent)]
    Blob(#[from] BlobError),
    /// A stored observation document did not decode.
    #[error("observation document {sri}: {source}")]
    Document {
        /// The blob's name.
        sri: String,
        /// Why.
        source: DocumentError,
    },
    /// An observation document could not be written.
    #[error("writing an observation document: {0}")]
    Encode(DocumentError),
    /// A log entry names a blob that is not stored.
    #[error("log entry {entry} names blob {sri}, which is not stored")]
    MissingBlob {
        /// The entry's index.
        entry: u64,
        /// The blob's name.
        sri: String,
    },
    /// The database has a schema version this code does not know.
    #[error("index schema version {found:?} is not {SCHEMA_VERSION}")]
    Schema {
        /// What the database says.
        found: String,
    },
    /// The index, the log and the blobs disagree.
    #[error("inconsistent index: {0}")]
    Inconsistent(String),
    /// A caller passed something unusable.
    #[error("invalid input: {0}")]
    Invalid(String),
    /// JSON serialisation failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

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
    endpoint_key TEXT
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
    classification TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS changes_target ON changes (target_id, id);
CREATE INDEX IF NOT EXISTS changes_server ON changes (server, id);
CREATE INDEX IF NOT EXISTS changes_class ON changes (class, id);
";

/// One crawl run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    /// Run id.
    pub id: i64,
    /// What kind of run (`crawl`).
    pub kind: String,
    /// When it started.
    pub started_at: String,
    /// When it finished.
    pub finished_at: Option<String>,
    /// `running`, `complete` or `failed`.
    pub status: String,
    /// The registry it read.
    pub registry: String,
    /// Whether the registry harvest was complete (so absences mean delisting).
    pub harvest_complete: bool,
    /// The run report (JSON text).
    pub report: Option<String>,
}

/// One registry server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerRow {
    /// Reverse-DNS name.
    pub name: String,
    /// Latest version.
    pub version: String,
    /// Display title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Registry lifecycle status (`active`, `deprecated`, …).
    pub status: String,
    /// Repository URL.
    pub repository_url: Option<String>,
    /// Website URL.
    pub website_url: Option<String>,
    /// First run that listed it.
    pub first_listed: String,
    /// Last run that listed it.
    pub last_listed: String,
    /// When a complete harvest first missed it.
    pub delisted_at: Option<String>,
}

/// One target (remote or package).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetRow {
    /// Subject id.
    pub id: String,
    /// Server name.
    pub server: String,
    /// URL, or `npm:<name>` / `pypi:<name>` / `<type>:<name>`.
    pub target: String,
    /// `remote` or `package`.
    pub kind: String,
    /// The remote's declared transport.
    pub declared_transport: Option<String>,
    /// The package's version.
    pub package_version: Option<String>,
    /// Why it is not observed, when it is not.
    pub skip_reason: Option<String>,
    /// Names behind the skip reason (variables, headers, the type).
    pub skip_detail: Option<String>,
    /// First run that listed it.
    pub first_listed: Option<String>,
    /// Last run that listed it.
    pub last_listed: Option<String>,
    /// When it stopped being listed.
    pub delisted_at: Option<String>,
    /// Status of the newest entry.
    pub last_status: Option<String>,
    /// Detail of the newest entry.
    pub last_detail: Option<String>,
    /// Index of the newest entry.
    pub last_entry: Option<u64>,
    /// Time of the newest entry.
    pub last_observed_at: Option<String>,
    /// Index of the newest `ok` entry.
    pub last_ok_entry: Option<u64>,
    /// Its full digest.
    pub current_full: Option<String>,
    /// Its MTL/1 digest.
    pub current_mtl1: Option<String>,
    /// Its document's blob name.
    pub current_raw: Option<String>,
    /// Its tool count.
    pub current_tools: Option<u64>,
}

/// One observation (one log entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservationRow {
    /// Log index.
    pub entry: u64,
    /// Subject id.
    pub target_id: String,
    /// The run that recorded it (`None` when derived by catch-up).
    pub run_id: Option<i64>,
    /// `observedAt`.
    pub observed_at: String,
    /// Status.
    pub status: String,
    /// Detail (capped as in the entry).
    pub detail: Option<String>,
    /// MTL/1 digest.
    pub mtl1: Option<String>,
    /// MTL/1 error code.
    pub mtl1_error: Option<String>,
    /// Full digest.
    pub full: Option<String>,
    /// Tool count.
    pub tools: Option<u64>,
    /// Document blob name.
    pub raw: Option<String>,
    /// Transport that answered (from the document).
    pub transport: Option<String>,
    /// Protocol version (from the document).
    pub protocol_version: Option<String>,
    /// Duration in ms (from the document).
    pub elapsed_ms: Option<u64>,
    /// Previous entry of the same subject.
    pub prev: Option<u64>,
}

/// One change of a target's tool set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRow {
    /// Change id (log order).
    pub id: i64,
    /// Subject id.
    pub target_id: String,
    /// Server name.
    pub server: String,
    /// The target (URL).
    pub endpoint: String,
    /// When the new tool set was observed.
    pub observed_at: String,
    /// The previous `ok` entry.
    pub old_entry: u64,
    /// The `ok` entry with the new tool set.
    pub new_entry: u64,
    /// Old full digest.
    pub old_full: String,
    /// New full digest.
    pub new_full: String,
    /// Old MTL/1 digest.
    pub old_mtl1: Option<String>,
    /// New MTL/1 digest.
    pub new_mtl1: Option<String>,
    /// `benign`, `unsure` or `dangerous`.
    pub class: String,
    /// Tools added.
    pub added: u64,
    /// Tools removed.
    pub removed: u64,
    /// Tools modified.
    pub modified: u64,
    /// The diff (JSON), when both documents were stored.
    pub diff: Option<String>,
    /// The classification (JSON), when both documents were stored.
    pub classification: Option<String>,
}

/// The index database.
pub struct Index {
    pub(crate) conn: Connection,
}

fn int(v: u64) -> Result<i64, IndexError> {
    i64::try_from(v).map_err(|_| IndexError::Invalid(format!("{v} does not fit an index row")))
}

fn unsigned(row: &Row, i: usize) -> rusqlite::Result<Option<u64>> {
    match row.get::<_, Option<i64>>(i)? {
        None => Ok(None),
        Some(v) => u64::try_from(v)
            .map(Some)
            .map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v)),
    }
}

fn need_unsigned(row: &Row, i: usize) -> rusqlite::Result<u64> {
    unsigned(row, i)?.ok_or(rusqlite::Error::InvalidColumnType(
        i,
        "NULL".into(),
        rusqlite::types::Type::Null,
    ))
}

const RUN_COLS: &str =
    "id, kind, started_at, finished_at, status, registry, harvest_complete, report";

fn run_row(r: &Row) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        started_at: r.get(2)?,
        finished_at: r.get(3)?,
        status: r.get(4)?,
        registry: r.get(5)?,
        harvest_complete: r.get::<_, i64>(6)? != 0,
        report: r.get(7)?,
    })
}

const SERVER_COLS: &str = "name, version, title, description, status, repository_url, \
    website_url, first_listed, last_listed, delisted_at";

fn server_row(r: &Row) -> rusqlite::Result<ServerRow> {
    Ok(ServerRow {
        name: r.get(0)?,
        version: r.get(1)?,
        title: r.get(2)?,
        description: r.get(3)?,
        status: r.get(4)?,
        repository_url: r.get(5)?,
        website_url: r.get(6)?,
        first_listed: r.get(7)?,
        last_listed: r.get(8)?,
        delisted_at: r.get(9)?,
    })
}

const TARGET_COLS: &str = "id, server, target, kind, declared_transport, package_version, \
    skip_reason, skip_detail, first_listed, last_listed, delisted_at, last_status, last_detail, \
    last_entry, last_observed_at, last_ok_entry, current_full, current_mtl1, current_raw, \
    current_tools";

fn target_row(r: &Row) -> rusqlite::Result<TargetRow> {
    Ok(TargetRow {
        id: r.get(0)?,
        server: r.get(1)?,
        target: r.get(2)?,
        kind: r.get(3)?,
        declared_transport: r.get(4)?,
        package_version: r.get(5)?,
        skip_reason: r.get(6)?,
        skip_detail: r.get(7)?,
        first_listed: r.get(8)?,
        last_listed: r.get(9)?,
        delisted_at: r.get(10)?,
        last_status: r.get(11)?,
        last_detail: r.get(12)?,
        last_entry: unsigned(r, 13)?,
        last_observed_at: r.get(14)?,
        last_ok_entry: unsigned(r, 15)?,
        current_full: r.get(16)?,
        current_mtl1: r.get(17)?,
        current_raw: r.get(18)?,
        current_tools: unsigned(r, 19)?,
    })
}

const OBSERVATION_COLS: &str = "entry, target_id, run_id, observed_at, status, detail, mtl1, \
    mtl1_error, full, tools, raw, transport, protocol_version, elapsed_ms, prev";

fn observation_row(r: &Row) -> rusqlite::Result<ObservationRow> {
    Ok(ObservationRow {
        entry: need_unsigned(r, 0)?,
        target_id: r.get(1)?,
        run_id: r.get(2)?,
        observed_at: r.get(3)?,
        status: r.get(4)?,
        detail: r.get(5)?,
        mtl1: r.get(6)?,
        mtl1_error: r.get(7)?,
        full: r.get(8)?,
        tools: unsigned(r, 9)?,
        raw: r.get(10)?,
        transport: r.get(11)?,
        protocol_version: r.get(12)?,
        elapsed_ms: unsigned(r, 13)?,
        prev: unsigned(r, 14)?,
    })
}

/// The columns [`change_row`] reads, in order, for queries this module does not offer.
pub const CHANGE_COLS: &str = "id, target_id, server, endpoint, observed_at, old_entry, new_entry, \
    old_full, new_full, old_mtl1, new_mtl1, class, added, removed, modified, diff, classification";

/// A `changes` row selected with [`CHANGE_COLS`].
pub fn change_row(r: &Row) -> rusqlite::Result<ChangeRow> {
    Ok(ChangeRow {
        id: r.get(0)?,
        target_id: r.get(1)?,
        server: r.get(2)?,
        endpoint: r.get(3)?,
        observed_at: r.get(4)?,
        old_entry: need_unsigned(r, 5)?,
        new_entry: need_unsigned(r, 6)?,
        old_full: r.get(7)?,
        new_full: r.get(8)?,
        old_mtl1: r.get(9)?,
        new_mtl1: r.get(10)?,
        class: r.get(11)?,
        added: need_unsigned(r, 12)?,
        removed: need_unsigned(r, 13)?,
        modified: need_unsigned(r, 14)?,
        diff: r.get(15)?,
        classification: r.get(16)?,
    })
}

fn meta(conn: &Connection, key: &str) -> Result<Option<String>, IndexError> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<(), IndexError> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// One remote's hint row: (URL, transport of its latest `ok` observation, milliseconds its
/// latest observation took).
pub type CrawlHint = (String, Option<String>, Option<u64>);

/// The form endpoints are matched in (`/check`, lookups): for an `http(s)` URL, the scheme and
/// host lower-cased, the default port dropped, userinfo, query and fragment dropped, and the
/// path without trailing slashes (`https://Example.COM:443/mcp/?x#y` → `https://example.com/mcp`;
/// a bare host keeps no path). `npm:<name>` is kept as is; `pypi:<name>` is normalised as PEP 503
/// does (lower case, runs of `-`, `_`, `.` become one `-`). Anything else is returned unchanged.
pub fn endpoint_key(endpoint: &str) -> String {
    let endpoint = endpoint.trim();
    if let Some(name) = endpoint.strip_prefix("pypi:") {
        let mut out = String::from("pypi:");
        let mut dash = false;
        for c in name.chars() {
            if matches!(c, '-' | '_' | '.') {
                dash = true;
            } else {
                if dash && out.len() > 5 {
                    out.push('-');
                }
                dash = false;
                out.extend(c.to_lowercase());
            }
        }
        return out;
    }
    match url::Url::parse(endpoint) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
            let mut out = format!("{}://{}", u.scheme(), u.host_str().unwrap_or(""));
            if let Some(port) = u.port() {
                out.push_str(&format!(":{port}"));
            }
            out.push_str(u.path().trim_end_matches('/'));
            out
        }
        _ => endpoint.to_owned(),
    }
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
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")?;
        let tx = conn.transaction()?;
        match stored_schema_version(&tx)? {
            Some(v) if v == SCHEMA_VERSION.to_string() => {}
            Some(found) => return Err(IndexError::Schema { found }),
            None => {}
        }
        tx.execute_batch(SCHEMA)?;
        set_meta(&tx, "schema_version", &SCHEMA_VERSION.to_string())?;
        tx.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('log_size_indexed', '0')",
            [],
        )?;
        tx.commit()?;
        Ok(Index { conn })
    }

    /// Open an existing index for queries only (for example by the API, beside the writer).
    pub fn open_read_only(path: &Path) -> Result<Index, IndexError> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_secs(10))?;
        match stored_schema_version(&conn)? {
            Some(v) if v == SCHEMA_VERSION.to_string() => Ok(Index { conn }),
            found => Err(IndexError::Schema {
                found: found.unwrap_or_default(),
            }),
        }
    }

    /// The database connection, for read queries this module does not offer.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Every log entry below this index has its observation row.
    pub fn log_size_indexed(&self) -> Result<u64, IndexError> {
        let v = meta(&self.conn, "log_size_indexed")?.unwrap_or_default();
        v.parse()
            .map_err(|_| IndexError::Inconsistent(format!("log_size_indexed is {v:?}")))
    }

    /// Index every log entry the index has not seen yet (observation rows, target state,
    /// changes), reading entries from the log's bundles and documents from the blobs. Returns
    /// how many entries it indexed. Rows it derives have no `run_id`.
    pub fn catch_up<S: Storage>(&mut self, log: &Log<S>, blobs: &Blobs) -> Result<u64, IndexError> {
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
            set_meta(&tx, "log_size_indexed", &end.to_string())?;
            tx.commit()?;
            at = end;
        }
        Ok(to - from)
    }

    /// Clear every row derived from the log (observations, changes, the entry columns of
    /// targets) and derive them again from the log and the blobs. Returns how many entries it
    /// indexed.
    pub fn rebuild<S: Storage>(&mut self, log: &Log<S>, blobs: &Blobs) -> Result<u64, IndexError> {
        let tx = self.conn.transaction()?;
        tx.execute_batch(
            "DELETE FROM observations;
             DELETE FROM changes;
             DELETE FROM sqlite_sequence WHERE name = 'changes';
             UPDATE targets SET last_status = NULL, last_detail = NULL, last_entry = NULL,
                 last_observed_at = NULL, last_ok_entry = NULL, current_full = NULL,
                 current_mtl1 = NULL, current_raw = NULL, current_tools = NULL;",
        )?;
        set_meta(&tx, "log_size_indexed", "0")?;
        tx.commit()?;
        self.catch_up(log, blobs)
    }

    /// A server by name.
    pub fn server(&self, name: &str) -> Result<Option<ServerRow>, IndexError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {SERVER_COLS} FROM servers WHERE name = ?1"),
                [name],
                server_row,
            )
            .optional()?)
    }

    /// Every target of a server, remotes first, then by target.
    pub fn targets_of(&self, server: &str) -> Result<Vec<TargetRow>, IndexError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {TARGET_COLS} FROM targets WHERE server = ?1
             ORDER BY kind DESC, target, id"
        ))?;
        let rows = st.query_map([server], target_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A target by subject id.
    pub fn target(&self, id: &str) -> Result<Option<TargetRow>, IndexError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {TARGET_COLS} FROM targets WHERE id = ?1"),
                [id],
                target_row,
            )
            .optional()?)
    }

    /// Every target whose [`endpoint_key`] equals that of `endpoint` (so `HTTPS://Host:443/mcp/`
    /// finds `https://host/mcp`), across servers.
    pub fn find_target_by_key(&self, endpoint: &str) -> Result<Vec<TargetRow>, IndexError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {TARGET_COLS} FROM targets WHERE endpoint_key = ?1 ORDER BY server, id"
        ))?;
        let rows = st.query_map([endpoint_key(endpoint)], target_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every target whose URL (or package string) is exactly `endpoint`, across servers.
    pub fn find_target_by_endpoint(&self, endpoint: &str) -> Result<Vec<TargetRow>, IndexError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {TARGET_COLS} FROM targets WHERE target = ?1 ORDER BY server, id"
        ))?;
        let rows = st.query_map([endpoint], target_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Observations of a target, newest first: at most `limit` (capped at [`MAX_QUERY_ROWS`])
    /// with an entry index below `before` when given.
    pub fn observations_of(
        &self,
        target_id: &str,
        limit: u32,
        before: Option<u64>,
    ) -> Result<Vec<ObservationRow>, IndexError> {
        let before = match before {
            Some(b) => int(b)?,
            None => i64::MAX,
        };
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {OBSERVATION_COLS} FROM observations
             WHERE target_id = ?1 AND entry < ?2 ORDER BY entry DESC LIMIT ?3"
        ))?;
        let rows = st.query_map(
            params![target_id, before, limit.min(MAX_QUERY_ROWS)],
            observation_row,
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The observation row of one log entry.
    pub fn observation(&self, entry: u64) -> Result<Option<ObservationRow>, IndexError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {OBSERVATION_COLS} FROM observations WHERE entry = ?1"),
                [int(entry)?],
                observation_row,
            )
            .optional()?)
    }

    /// Changes with an id above `after_id`, oldest first (a feed cursor), at most `limit`
    /// (capped at [`MAX_QUERY_ROWS`]), optionally of one server and/or one class.
    pub fn changes(
        &self,
        after_id: i64,
        limit: u32,
        server: Option<&str>,
        class: Option<&str>,
    ) -> Result<Vec<ChangeRow>, IndexError> {
        self.change_query("id > ?1", "id ASC", after_id, limit, server, class)
    }

    /// The newest changes, newest first, with an id below `before_id` when given, at most
    /// `limit` (capped at [`MAX_QUERY_ROWS`]), optionally of one server and/or one class.
    pub fn latest_changes(
        &self,
        before_id: Option<i64>,
        limit: u32,
        server: Option<&str>,
        class: Option<&str>,
    ) -> Result<Vec<ChangeRow>, IndexError> {
        self.change_query(
            "id < ?1",
            "id DESC",
            before_id.unwrap_or(i64::MAX),
            limit,
            server,
            class,
        )
    }

    fn change_query(
        &self,
        bound: &str,
        order: &str,
        cursor: i64,
        limit: u32,
        server: Option<&str>,
        class: Option<&str>,
    ) -> Result<Vec<ChangeRow>, IndexError> {
        let mut sql = format!("SELECT {CHANGE_COLS} FROM changes WHERE {bound}");
        if server.is_some() {
            sql.push_str(" AND server = ?3");
        }
        if class.is_some() {
            sql.push_str(" AND class = ?4");
        }
        sql.push_str(&format!(" ORDER BY {order} LIMIT ?2"));
        let mut st = self.conn.prepare_cached(&sql)?;
        let limit = limit.min(MAX_QUERY_ROWS);
        let rows = match (server, class) {
            (None, None) => st.query_map(params![cursor, limit], change_row)?,
            (Some(s), None) => st.query_map(params![cursor, limit, s], change_row)?,
            (None, Some(c)) => {
                // ?3 is unused: bind it anyway so ?4 has its number.
                st.query_map(params![cursor, limit, rusqlite::types::Null, c], change_row)?
            }
            (Some(s), Some(c)) => st.query_map(params![cursor, limit, s, c], change_row)?,
        };
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One change by id.
    pub fn change(&self, id: i64) -> Result<Option<ChangeRow>, IndexError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {CHANGE_COLS} FROM changes WHERE id = ?1"),
                [id],
                change_row,
            )
            .optional()?)
    }

    /// Entries of a target whose full digest is `full`, oldest first.
    pub fn entries_with_full(&self, target_id: &str, full: &str) -> Result<Vec<u64>, IndexError> {
        self.entries_with("full", target_id, full)
    }

    /// Entries of a target whose MTL/1 digest is `mtl1`, oldest first.
    pub fn entries_with_mtl1(&self, target_id: &str, mtl1: &str) -> Result<Vec<u64>, IndexError> {
        self.entries_with("mtl1", target_id, mtl1)
    }

    fn entries_with(
        &self,
        column: &'static str,
        target_id: &str,
        digest: &str,
    ) -> Result<Vec<u64>, IndexError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT entry FROM observations WHERE {column} = ?1 AND target_id = ?2
             ORDER BY entry"
        ))?;
        let rows = st.query_map([digest, target_id], |r| need_unsigned(r, 0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// For every remote observed before: its URL, the transport of its latest observation that
    /// answered (`ok`), and how long its latest observation took. The crawler uses these to try
    /// the transport that worked first and to start the slowest observations first.
    pub fn crawl_hints(&self) -> Result<Vec<CrawlHint>, IndexError> {
        let mut st = self.conn.prepare_cached(
            "SELECT t.target, ok.transport, last.elapsed_ms FROM targets t
             LEFT JOIN observations ok ON ok.entry = t.last_ok_entry
             LEFT JOIN observations last ON last.entry = t.last_entry
             WHERE t.kind = 'remote' AND t.last_entry IS NOT NULL",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<i64>>(2)?.map(|v| v.max(0) as u64),
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// For `/check`: how many `ok` observations a target has, the time of its first, and how
    /// many changes it has had (one indexed query each, without loading rows).
    pub fn target_counts(&self, target_id: &str) -> Result<(u64, Option<String>, u64), IndexError> {
        let (ok, first): (i64, Option<String>) = self.conn.prepare_cached(
            "SELECT count(*), min(observed_at) FROM observations WHERE target_id = ?1 AND status = 'ok'",
        )?
        .query_row([target_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let changes: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM changes WHERE target_id = ?1")?
            .query_row([target_id], |r| r.get(0))?;
        Ok((ok.max(0) as u64, first, changes.max(0) as u64))
    }

    /// Every server name the index knows, listed or delisted, sorted.
    pub fn known_server_names(&self) -> Result<Vec<String>, IndexError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT name FROM servers ORDER BY name")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The newest run.
    pub fn last_run(&self) -> Result<Option<RunRow>, IndexError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {RUN_COLS} FROM runs ORDER BY id DESC LIMIT 1"),
                [],
                run_row,
            )
            .optional()?)
    }

    /// A run by id.
    pub fn run(&self, id: i64) -> Result<Option<RunRow>, IndexError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {RUN_COLS} FROM runs WHERE id = ?1"),
                [id],
                run_row,
            )
            .optional()?)
    }
}

pub(crate) fn set_log_size_indexed(tx: &Transaction, size: u64) -> Result<(), IndexError> {
    set_meta(tx, "log_size_indexed", &size.to_string())
}

pub(crate) fn log_size_indexed_in(tx: &Transaction) -> Result<u64, IndexError> {
    let v = meta(tx, "log_size_indexed")?.unwrap_or_default();
    v.parse()
        .map_err(|_| IndexError::Inconsistent(format!("log_size_indexed is {v:?}")))
}

/// Entries `from..to` decoded from the log's published bundles (one read per bundle).
pub(crate) fn read_entries<S: Storage>(
    log: &Log<S>,
    from: u64,
    to: u64,
) -> Result<Vec<(u64, Entry)>, IndexError> {
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
            .store()
            .read_public(&path)
            .map_err(LogError::from)?
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

/// The observation document an entry names, verified against the entry.
fn load_document(
    blobs: &Blobs,
    raw: &str,
    index: u64,
    entry: Option<&Entry>,
) -> Result<Document, IndexError> {
    let sri: Sri = raw.parse().map_err(|_| {
        IndexError::Inconsistent(format!("entry {index}: raw {raw:?} is not a digest"))
    })?;
    let bytes = blobs.get(&sri)?.ok_or_else(|| IndexError::MissingBlob {
        entry: index,
        sri: raw.to_owned(),
    })?;
    let doc = Document::decode(&bytes).map_err(|source| IndexError::Document {
        sri: raw.to_owned(),
        source,
    })?;
    if let Some(e) = entry {
        if doc.target.server != e.subject.server
            || doc.target.endpoint != e.subject.target
            || doc.status != e.status.as_str()
        {
            return Err(IndexError::Inconsistent(format!(
                "entry {index} and its document {raw} describe different observations"
            )));
        }
    }
    Ok(doc)
}

/// The tool set of a document, checked against the full digest its entry recorded.
fn checked_tool_set(doc: &Document, full: &str, index: u64) -> Result<ToolSet, IndexError> {
    let set = doc.tool_set().ok_or_else(|| {
        IndexError::Inconsistent(format!(
            "entry {index}: its document holds no readable tool set"
        ))
    })?;
    let digest = toolmark_toolset::full::digest(&set).to_string();
    if digest != full {
        return Err(IndexError::Inconsistent(format!(
            "entry {index}: its document's tool set has full digest {digest}, the entry says {full}"
        )));
    }
    Ok(set)
}

/// The state of a target before an entry is indexed.
struct TargetState {
    last_entry: Option<u64>,
    last_ok_entry: Option<u64>,
    current_full: Option<String>,
    current_mtl1: Option<String>,
    current_raw: Option<String>,
}

/// Index entries (in log order): observation rows, target state, change rows. Returns the
/// change id recorded for each entry that has one. Entries already indexed are left alone.
pub(crate) fn index_entries(
    tx: &Transaction,
    blobs: &Blobs,
    entries: &[(u64, Entry)],
    run: Option<i64>,
) -> Result<HashMap<u64, i64>, IndexError> {
    let mut changes = HashMap::new();
    for (index, entry) in entries {
        if let Some(id) = index_entry(tx, blobs, *index, entry, run)? {
            changes.insert(*index, id);
        }
    }
    Ok(changes)
}

fn index_entry(
    tx: &Transaction,
    blobs: &Blobs,
    index: u64,
    entry: &Entry,
    run: Option<i64>,
) -> Result<Option<i64>, IndexError> {
    let at = int(index)?;
    let seen = tx
        .query_row("SELECT 1 FROM observations WHERE entry = ?1", [at], |_| {
            Ok(())
        })
        .optional()?
        .is_some();
    if seen {
        return Ok(tx
            .query_row("SELECT id FROM changes WHERE new_entry = ?1", [at], |r| {
                r.get(0)
            })
            .optional()?);
    }
    let target_id = entry.subject.id().to_string();
    // The entry's digests as the index stores them (SRI text).
    let (full, mtl1, raw) = (
        entry.full.map(|d| d.to_string()),
        entry.mtl1_digest().map(Sri::to_string),
        entry.raw.map(|d| d.to_string()),
    );
    let doc = match &raw {
        Some(raw) => Some(load_document(blobs, raw, index, Some(entry))?),
        None => None,
    };
    tx.prepare_cached(
        "INSERT INTO observations (entry, target_id, run_id, observed_at, status, detail, mtl1,
             mtl1_error, full, tools, raw, transport, protocol_version, elapsed_ms, prev)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
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
        doc.as_ref().and_then(|d| d.transport.clone()),
        doc.as_ref().and_then(|d| d.protocol_version.clone()),
        doc.as_ref().map(|d| int(d.elapsed_ms)).transpose()?,
        entry.prev.map(int).transpose()?,
    ])?;

    let state = tx
        .query_row(
            "SELECT last_entry, last_ok_entry, current_full, current_mtl1, current_raw
             FROM targets WHERE id = ?1",
            [&target_id],
            |r| {
                Ok(TargetState {
                    last_entry: unsigned(r, 0)?,
                    last_ok_entry: unsigned(r, 1)?,
                    current_full: r.get(2)?,
                    current_mtl1: r.get(3)?,
                    current_raw: r.get(4)?,
                })
            },
        )
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
            }
        }
    };
    if state.last_entry.is_none_or(|l| l < index) {
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
    }
    let (Some(full), true) = (&full, entry.status.is_ok()) else {
        return Ok(None);
    };
    if state.last_ok_entry.is_some_and(|l| l >= index) {
        return Ok(None);
    }
    let mut change = None;
    if let (Some(old_full), Some(old_entry)) = (&state.current_full, state.last_ok_entry) {
        if old_full != full {
            change = Some(insert_change(
                tx,
                blobs,
                (index, entry, doc.as_ref()),
                (old_entry, old_full, &state),
            )?);
        }
    }
    tx.prepare_cached(
        "UPDATE targets SET last_ok_entry = ?2, current_full = ?3, current_mtl1 = ?4,
             current_raw = ?5, current_tools = ?6 WHERE id = ?1",
    )?
    .execute(params![
        target_id,
        at,
        full,
        mtl1,
        raw,
        entry.tools.map(int).transpose()?
    ])?;
    Ok(change)
}

fn insert_change(
    tx: &Transaction,
    blobs: &Blobs,
    (index, entry, doc): (u64, &Entry, Option<&Document>),
    (old_entry, old_full, state): (u64, &str, &TargetState),
) -> Result<i64, IndexError> {
    let new_full = entry.full.map(|d| d.to_string()).unwrap_or_default();
    let new_full = new_full.as_str();
    let analysed = match (&state.current_raw, doc) {
        (Some(old_raw), Some(doc)) => {
            let old_doc = load_document(blobs, old_raw, old_entry, None)?;
            let old_set = checked_tool_set(&old_doc, old_full, old_entry)?;
            let new_set = checked_tool_set(doc, new_full, index)?;
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

#[cfg(test)]
mod key_tests {
    use super::endpoint_key;

    #[test]
    fn endpoint_keys() {
        for (a, b) in [
            (
                "https://Example.COM:443/mcp/?x=1#f",
                "https://example.com/mcp",
            ),
            ("https://example.com", "https://example.com"),
            ("https://example.com/", "https://example.com"),
            ("HTTP://u:p@example.com:80/a//", "http://example.com/a"),
            (
                "https://example.com:8443/MCP",
                "https://example.com:8443/MCP",
            ),
            ("pypi:Mcp_Server.Time", "pypi:mcp-server-time"),
            ("npm:@scope/Name", "npm:@scope/Name"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(endpoint_key(a), b, "{a}");
        }
    }
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

    #[test]
    fn opens_idempotently_and_refuses_other_schema_versions() {
        let dir = scratch("schema");
        let path = dir.join("index.sqlite");
        {
            let index = Index::open(&path).unwrap();
            assert_eq!(index.log_size_indexed().unwrap(), 0);
            let mode: String = index
                .connection()
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .unwrap();
            assert_eq!(mode, "wal");
            let strict: i64 = index
                .connection()
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
            .connection()
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
    fn strict_tables_refuse_wrong_types_and_classes() {
        let dir = scratch("strict");
        let index = Index::open(&dir.join("index.sqlite")).unwrap();
        let bad_type = index.connection().execute(
            "INSERT INTO observations (entry, target_id, observed_at, status, tools)
             VALUES (1, 't', 'x', 'ok', 'many')",
            [],
        );
        assert!(bad_type.is_err());
        let bad_class = index.connection().execute(
            "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry, new_entry,
                 old_full, new_full, class, added, removed, modified)
             VALUES ('t', 's', 'e', 'x', 0, 1, 'a', 'b', 'scary', 0, 0, 0)",
            [],
        );
        assert!(bad_class.is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
