//! The typed rows the index's queries return, and how each is read from its table.
//!
//! Every query of the crate selects a table's columns with the `*_COLS` list of that table and
//! reads them with the matching `*_row` function, so a row type and its SQL cannot drift apart;
//! none of these readers is public (callers get the structs, never a `rusqlite::Row`).

use rusqlite::Row;
use serde::Serialize;

use crate::index::IndexError;

/// One crawl run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    /// Run id.
    pub id: i64,
    /// What kind of run (`crawl`, or `sweep` for a package sweep).
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
    /// The headers its registry entry declares that the crawler dials it without (secrets,
    /// templates, values the user supplies; `registry::Declared::withheld`): a client that
    /// sends them may be served more or other tools than toolmark observed. Empty for a target
    /// that is not dialled.
    pub withheld_headers: Vec<String>,
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
    /// `tools` (the tool set changed), `authorization` (the authorization servers changed),
    /// `behaviour` (a package's newer version behaved differently in the sandbox) or `registry`
    /// (a package's newer version's registry signals raise a flag).
    pub kind: String,
    /// For an `authorization` change: the authorization servers before (a JSON array).
    pub old_auth: Option<String>,
    /// For an `authorization` change: the authorization servers after (a JSON array).
    pub new_auth: Option<String>,
    /// For a `behaviour` change: the older version (a `crate::packages::BehaviourSide`
    /// `{"version"}`, JSON).
    pub old_behaviour: Option<String>,
    /// For a `behaviour` change: the newer version and what differs (a
    /// `crate::packages::BehaviourSide` `{"version", "change"}`; JSON).
    pub new_behaviour: Option<String>,
    /// For a `registry` change: the older version (a `crate::packages::RegistrySide`
    /// `{"version"}`, JSON).
    pub old_registry: Option<String>,
    /// For a `registry` change: the newer version and its flags (a
    /// `crate::packages::RegistrySide` `{"version", "comparison"}`; JSON).
    pub new_registry: Option<String>,
}

/// `v` as an SQLite integer (`IndexError::Invalid` past `i64::MAX`).
pub(crate) fn int(v: u64) -> Result<i64, IndexError> {
    i64::try_from(v).map_err(|_| IndexError::Invalid(format!("{v} does not fit an index row")))
}

/// A nullable non-negative integer column.
pub(crate) fn unsigned(row: &Row, i: usize) -> rusqlite::Result<Option<u64>> {
    match row.get::<_, Option<i64>>(i)? {
        None => Ok(None),
        Some(v) => u64::try_from(v)
            .map(Some)
            .map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v)),
    }
}

/// A non-null non-negative integer column.
pub(crate) fn need_unsigned(row: &Row, i: usize) -> rusqlite::Result<u64> {
    unsigned(row, i)?.ok_or(rusqlite::Error::InvalidColumnType(
        i,
        "NULL".into(),
        rusqlite::types::Type::Null,
    ))
}

pub(crate) const RUN_COLS: &str =
    "id, kind, started_at, finished_at, status, registry, harvest_complete, report";

pub(crate) fn run_row(r: &Row) -> rusqlite::Result<RunRow> {
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

pub(crate) const SERVER_COLS: &str = "name, version, title, description, status, repository_url, \
    website_url, first_listed, last_listed, delisted_at";

pub(crate) fn server_row(r: &Row) -> rusqlite::Result<ServerRow> {
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

pub(crate) const TARGET_COLS: &str = "id, server, target, kind, declared_transport, package_version, \
    skip_reason, skip_detail, first_listed, last_listed, delisted_at, last_status, last_detail, \
    last_entry, last_observed_at, last_ok_entry, current_full, current_mtl1, current_raw, \
    current_tools, withheld_headers";

pub(crate) fn target_row(r: &Row) -> rusqlite::Result<TargetRow> {
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
        withheld_headers: match r.get::<_, Option<String>>(20)? {
            None => Vec::new(),
            Some(text) => serde_json::from_str(&text).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(20, rusqlite::types::Type::Text, e.into())
            })?,
        },
    })
}

pub(crate) const OBSERVATION_COLS: &str = "entry, target_id, run_id, observed_at, status, detail, mtl1, \
    mtl1_error, full, tools, raw, transport, protocol_version, elapsed_ms, prev";

pub(crate) fn observation_row(r: &Row) -> rusqlite::Result<ObservationRow> {
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

pub(crate) const CHANGE_COLS: &str = "id, target_id, server, endpoint, observed_at, old_entry, new_entry, \
    old_full, new_full, old_mtl1, new_mtl1, class, added, removed, modified, diff, classification, \
    kind, old_auth, new_auth, old_behaviour, new_behaviour, old_registry, new_registry";

pub(crate) fn change_row(r: &Row) -> rusqlite::Result<ChangeRow> {
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
        kind: r.get(17)?,
        old_auth: r.get(18)?,
        new_auth: r.get(19)?,
        old_behaviour: r.get(20)?,
        new_behaviour: r.get(21)?,
        old_registry: r.get(22)?,
        new_registry: r.get(23)?,
    })
}
