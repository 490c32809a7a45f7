//! Every read the index offers: typed functions returning typed rows ([`crate::rows`]), so no
//! caller writes SQL against the schema.
//!
//! - Lookups: a server, a target, a target's siblings, targets by endpoint or endpoint key, the
//!   targets a `/check` question about an endpoint is about ([`Index::targets_at`]: a URL
//!   without a query stands for the targets at its path with any query too), observations,
//!   changes, runs, the entries holding a digest, the crawler's hints.
//! - Listings: [`Index::search_targets`] over a [`TargetFilter`] (the one search of the API's
//!   `/api/v1/servers` and the desk's servers page), [`Index::query_changes`] over a
//!   [`ChangeQuery`].
//! - Counts: per target for `/check`, per status and per class for `/metrics`.
//! - The current tool set of a target, verified: [`TargetRow::current_tool_set`] says where it
//!   is stored and [`ToolSetRef::read`] reads it from the blobs and checks its full digest
//!   against the indexed one. It is the only way a stored tool set is read (the derivation of
//!   change rows uses it too), so a tool set shown or compared is always the one the log names.
//!
//! # The search
//!
//! [`TargetFilter::q`], without its leading and trailing white space, matches a target when it
//! is a substring, without regard to ASCII case, of the target's registry server name, its
//! endpoint (URL or package string), its server's registry title or its server's registry
//! description. `%`, `_` and `\` in `q` are literal (not wildcards); a `q` that is empty (or
//! only white space) matches every target. Non-ASCII letters match only in the case
//! written (SQLite folds ASCII only). A page is ordered by server name, remotes before
//! packages, then endpoint and id.

use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params, params_from_iter};
use serde::Serialize;
use toolmark_toolset::{Sri, ToolSet};

use crate::blobs::Blobs;
use crate::census::SensitiveFilter;
use crate::document::Document;
use crate::index::{EndpointKey, Index, IndexError, MAX_QUERY_ROWS, endpoint_key};
use crate::rows::{
    CHANGE_COLS, ChangeRow, OBSERVATION_COLS, ObservationRow, RUN_COLS, RunRow, SERVER_COLS,
    ServerRow, TARGET_COLS, TargetRow, change_row, int, need_unsigned, observation_row, run_row,
    server_row, target_row, unsigned,
};

// ---------------------------------------------------------------------------------------------
// Listing targets: the one search.

/// Which targets a listing selects by their state (`state=` of `/api/v1/servers` and the desk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetState {
    /// Every target.
    #[default]
    All,
    /// The last observation is `ok`.
    Observed,
    /// At least one change is recorded.
    Changed,
    /// The last observation is not `ok` and the target is not skipped.
    Failing,
    /// Not dialled (a skip reason such as `header-required`).
    Skipped,
    /// The target or its server left the registry.
    Delisted,
    /// The rule set's scan of its current tool set and instructions has a match
    /// ([`crate::scans`]).
    Flagged,
}

impl TargetState {
    /// Every state, in the order pages list them.
    pub const ALL: [TargetState; 7] = [
        TargetState::All,
        TargetState::Observed,
        TargetState::Changed,
        TargetState::Failing,
        TargetState::Skipped,
        TargetState::Delisted,
        TargetState::Flagged,
    ];

    /// The state's name as `state=` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetState::All => "all",
            TargetState::Observed => "observed",
            TargetState::Changed => "changed",
            TargetState::Failing => "failing",
            TargetState::Skipped => "skipped",
            TargetState::Delisted => "delisted",
            TargetState::Flagged => "flagged",
        }
    }

    /// The state named `s` (exactly as [`TargetState::as_str`] spells it).
    pub fn parse(s: &str) -> Option<TargetState> {
        TargetState::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The SQL condition over `targets t LEFT JOIN servers s`.
    fn condition(self) -> &'static str {
        match self {
            TargetState::All => "1",
            TargetState::Observed => "t.last_status = 'ok'",
            TargetState::Changed => "EXISTS (SELECT 1 FROM changes c WHERE c.target_id = t.id)",
            TargetState::Failing => {
                "t.skip_reason IS NULL AND t.last_status IS NOT NULL AND t.last_status <> 'ok'"
            }
            TargetState::Skipped => "t.skip_reason IS NOT NULL",
            TargetState::Delisted => "coalesce(t.delisted_at, s.delisted_at) IS NOT NULL",
            TargetState::Flagged => "sc.block + sc.advise > 0",
        }
    }
}

/// What a listing of targets selects: the search text and the state (see the module
/// documentation for what `q` matches).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetFilter {
    /// The search text (leading and trailing white space ignored); empty matches every
    /// target.
    pub q: String,
    /// The state the targets must be in.
    pub state: TargetState,
    /// When given, only targets whose current tool set has a tool the starter policy calls
    /// sensitive (in any category, or in the one named): [`crate::census`].
    pub sensitive: Option<SensitiveFilter>,
}

impl TargetFilter {
    /// The SQL condition over `targets t LEFT JOIN servers s`, and its arguments (`?1`, the
    /// `LIKE` pattern when there is a search; then the census category when one is named).
    fn condition(&self) -> (String, Vec<Value>) {
        let mut cond = format!("({})", self.state.condition());
        let mut args = Vec::new();
        let q = self.q.trim();
        if !q.is_empty() {
            cond.push_str(
                " AND (t.server LIKE ?1 ESCAPE '\\' OR t.target LIKE ?1 ESCAPE '\\' \
                 OR s.title LIKE ?1 ESCAPE '\\' OR s.description LIKE ?1 ESCAPE '\\')",
            );
            args.push(Value::Text(like_substring(q)));
        }
        match &self.sensitive {
            None => {}
            Some(SensitiveFilter::Any) => cond.push_str(
                " AND EXISTS (SELECT 1 FROM target_sensitive x WHERE x.target_id = t.id)",
            ),
            Some(SensitiveFilter::Category(c)) => {
                args.push(Value::Text((*c).to_owned()));
                cond.push_str(&format!(
                    " AND EXISTS (SELECT 1 FROM target_sensitive x WHERE x.target_id = t.id \
                     AND x.category = ?{})",
                    args.len()
                ));
            }
        }
        (cond, args)
    }
}

/// A `LIKE … ESCAPE '\'` pattern matching `q` as a substring: `\`, `%` and `_` escaped so they
/// match themselves.
fn like_substring(q: &str) -> String {
    let mut out = String::with_capacity(q.len() + 2);
    out.push('%');
    for c in q.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// One target as listings show it: its row, what its server's registry record adds, and how
/// many changes it has had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetSummary {
    /// The target's row (its own `delisted_at` included).
    pub target: TargetRow,
    /// Its server's registry title.
    pub title: Option<String>,
    /// When the target, or else its server, left the registry (`None`: both are listed).
    pub delisted_at: Option<String>,
    /// Changes recorded for the target.
    pub changes: u64,
    /// The starter-policy categories its current tool set has tools in ([`crate::census`]),
    /// in the policy's order.
    pub sensitive: Vec<String>,
    /// Its scan's counts ([`crate::scans`]); `None` before its first `ok` observation.
    pub scan: Option<ScanSummary>,
}

/// A target's scan as listings show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanSummary {
    /// Block-tier matches.
    pub block: u64,
    /// Advise-tier matches.
    pub advise: u64,
    /// The rule classes matched, sorted.
    pub classes: Vec<String>,
    /// `possible` or `confirmed` when the set holds all three data-flow legs.
    pub toxic_flow: Option<String>,
}

/// A page of [`Index::search_targets`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetPage {
    /// Targets the filter selects, in all.
    pub total: u64,
    /// The page's targets.
    pub targets: Vec<TargetSummary>,
}

const SUMMARY_FROM: &str = "FROM targets t LEFT JOIN servers s ON s.name = t.server \
     LEFT JOIN target_scans sc ON sc.target_id = t.id";

/// The columns [`summary_row`] reads.
fn summary_cols() -> String {
    let target: Vec<String> = TARGET_COLS.split(", ").map(|c| format!("t.{c}")).collect();
    format!(
        "{}, s.title, coalesce(t.delisted_at, s.delisted_at), \
         (SELECT count(*) FROM changes c WHERE c.target_id = t.id), \
         (SELECT group_concat(x.category) FROM target_sensitive x WHERE x.target_id = t.id), \
         sc.block, sc.advise, sc.classes, sc.toxic",
        target.join(", ")
    )
}

fn summary_row(r: &rusqlite::Row) -> rusqlite::Result<TargetSummary> {
    let n = TARGET_COLS.split(", ").count();
    Ok(TargetSummary {
        target: target_row(r)?,
        title: r.get(n)?,
        delisted_at: r.get(n + 1)?,
        changes: need_unsigned(r, n + 2)?,
        sensitive: crate::census::categories_from_concat(r.get(n + 3)?),
        scan: match unsigned(r, n + 4)? {
            None => None,
            Some(block) => Some(ScanSummary {
                block,
                advise: need_unsigned(r, n + 5)?,
                classes: r
                    .get::<_, Option<String>>(n + 6)?
                    .and_then(|c| serde_json::from_str(&c).ok())
                    .unwrap_or_default(),
                toxic_flow: r.get(n + 7)?,
            }),
        },
    })
}

// ---------------------------------------------------------------------------------------------
// The current tool set, verified.

/// The current tool set of a target as the index records it: the `ok` entry it was observed
/// in, the content address of that entry's stored document, and the entry's full digest. Read
/// it with [`ToolSetRef::read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSetRef {
    /// The log entry.
    pub entry: u64,
    /// The stored observation document (the entry's `raw`).
    pub document: Sri,
    /// The full digest (`toolmark/1`) the entry and the index record.
    pub full: String,
}

/// A tool set read from its stored document, its full digest checked against the indexed one.
#[derive(Debug, Clone)]
pub struct VerifiedToolSet {
    /// Where it was read from.
    pub at: ToolSetRef,
    /// The document's size in bytes.
    pub document_bytes: u64,
    /// The tool set, every tool's raw text kept.
    pub set: ToolSet,
}

/// `raw` (a log entry's blob name) as a content address.
pub(crate) fn parse_raw(raw: &str, entry: u64) -> Result<Sri, IndexError> {
    raw.parse().map_err(|_| {
        IndexError::Inconsistent(format!("entry {entry}: raw {raw:?} is not a digest"))
    })
}

/// The tool set of a document (`set`, its [`Document::tool_set`]; the stored document `sri` of
/// `entry`), checked against the full digest `full` the entry records: the one check every
/// stored tool set passes before it is shown or compared.
pub(crate) fn checked_tool_set(
    set: Option<ToolSet>,
    sri: &str,
    full: &str,
    entry: u64,
) -> Result<ToolSet, IndexError> {
    let set = set.ok_or_else(|| IndexError::NoToolSet {
        entry,
        sri: sri.to_owned(),
    })?;
    let found = toolmark_toolset::full::digest(&set).to_string();
    if found != full {
        return Err(IndexError::ToolSetDigest {
            entry,
            sri: sri.to_owned(),
            found,
            indexed: full.to_owned(),
        });
    }
    Ok(set)
}

impl TargetRow {
    /// Where the target's current tool set (that of its newest `ok` entry) is stored; `None`
    /// when it has none, or when that entry names no stored document.
    pub fn current_tool_set(&self) -> Result<Option<ToolSetRef>, IndexError> {
        let (Some(raw), Some(full), Some(entry)) =
            (&self.current_raw, &self.current_full, self.last_ok_entry)
        else {
            return Ok(None);
        };
        Ok(Some(ToolSetRef {
            entry,
            document: parse_raw(raw, entry)?,
            full: full.clone(),
        }))
    }
}

impl ToolSetRef {
    /// Read the document from `blobs` (which verify its bytes against its address), assemble
    /// its tool set and check that its full digest is [`ToolSetRef::full`]. A document that is
    /// not stored is [`IndexError::MissingBlob`], one holding no tool set
    /// [`IndexError::NoToolSet`], a digest that differs [`IndexError::ToolSetDigest`].
    pub fn read(&self, blobs: &Blobs) -> Result<VerifiedToolSet, IndexError> {
        let sri = self.document.to_string();
        let bytes = blobs
            .get(&self.document)?
            .ok_or_else(|| IndexError::MissingBlob {
                entry: self.entry,
                sri: sri.clone(),
            })?;
        let document_bytes = bytes.len() as u64;
        let doc = Document::decode(&bytes).map_err(|source| IndexError::Document {
            sri: sri.clone(),
            source,
        })?;
        drop(bytes);
        let set = checked_tool_set(doc.tool_set(), &sri, &self.full, self.entry)?;
        Ok(VerifiedToolSet {
            at: self.clone(),
            document_bytes,
            set,
        })
    }
}

/// One remote's hint row: (URL, transport of its latest `ok` observation, milliseconds its
/// latest observation took).
pub type CrawlHint = (String, Option<String>, Option<u64>, bool);

/// The targets [`Index::targets_at`] reads: `?1` the key asked, `?2`..`?3` the keys with a
/// query at its base (empty when there are none), `?4` the server or `NULL`.
const TARGETS_AT_MATCHING: &str =
    "(endpoint_key = ?1 OR (endpoint_key >= ?2 AND endpoint_key < ?3))
     AND (?4 IS NULL OR server = ?4)";

/// [`Index::targets_at`]'s rows: the key asked first, then by server and id, at most `?5`.
pub(crate) fn targets_at_sql() -> String {
    format!(
        "SELECT {TARGET_COLS} FROM targets WHERE {TARGETS_AT_MATCHING}
         ORDER BY endpoint_key <> ?1, server, id LIMIT ?5"
    )
}

impl Index {
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
    /// finds `https://host/mcp`, and `https://host/mcp?login` only the target with that query),
    /// across servers.
    pub fn find_target_by_key(&self, endpoint: &str) -> Result<Vec<TargetRow>, IndexError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {TARGET_COLS} FROM targets WHERE endpoint_key = ?1 ORDER BY server, id"
        ))?;
        let rows = st.query_map([endpoint_key(endpoint)], target_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The targets a question about `endpoint` is about, and how many there are: those whose
    /// [`endpoint_key`] equals its key; and when it is an `http(s)` URL without a query
    /// ([`EndpointKey::is_bare_url`]), also every target at the same scheme, host, port and
    /// path with a query (`https://host/mcp` stands for `https://host/mcp?login` too). Only the
    /// targets of `server` when one is given (filtered before the limit, so a server's target
    /// is found however many others share its endpoint); across servers otherwise. The target
    /// whose key is the question's comes first, then by server and id; at most `limit` rows
    /// (capped at [`MAX_QUERY_ROWS`]), the count is of all of them.
    pub fn targets_at(
        &self,
        endpoint: &str,
        server: Option<&str>,
        limit: u32,
    ) -> Result<(Vec<TargetRow>, u64), IndexError> {
        let asked = EndpointKey::of(endpoint);
        let key = asked.key();
        // Keys with a query at this base are those from `base?` up to (not including) `base@`
        // (`@` follows `?` in byte order), a range the key's index answers.
        let (from, to) = if asked.is_bare_url() {
            (format!("{key}?"), format!("{key}@"))
        } else {
            (String::new(), String::new())
        };
        let limit = limit.min(MAX_QUERY_ROWS);
        let mut st = self.conn.prepare_cached(&targets_at_sql())?;
        let rows: Vec<TargetRow> = st
            .query_map(params![key, from, to, server, limit], target_row)?
            .collect::<Result<_, _>>()?;
        // Fewer rows than the limit are all of them: counted without a second query (the
        // common case: one target at an endpoint).
        if rows.len() < limit as usize {
            let count = rows.len() as u64;
            return Ok((rows, count));
        }
        let count: i64 = self
            .conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM targets WHERE {TARGETS_AT_MATCHING}"
            ))?
            .query_row(params![key, from, to, server], |r| r.get(0))?;
        Ok((rows, count.unsigned_abs()))
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
        self.query_changes(&ChangeQuery {
            after: Some(after_id),
            limit,
            server,
            class,
            ..ChangeQuery::default()
        })
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
        self.query_changes(&ChangeQuery {
            before: before_id,
            limit,
            server,
            class,
            ..ChangeQuery::default()
        })
    }

    /// The changes `q` selects: ids ascending above `q.after` when it is given (reading
    /// forwards), else descending (newest first); below `q.before` when given; at most
    /// `q.limit` (capped at [`MAX_QUERY_ROWS`]).
    pub fn query_changes(&self, q: &ChangeQuery<'_>) -> Result<Vec<ChangeRow>, IndexError> {
        let mut sql = format!("SELECT {CHANGE_COLS} FROM changes WHERE 1");
        let mut args: Vec<Value> = Vec::new();
        if let Some(a) = q.after {
            sql.push_str(" AND id > ?");
            args.push(Value::Integer(a));
        }
        if let Some(b) = q.before {
            sql.push_str(" AND id < ?");
            args.push(Value::Integer(b));
        }
        if let Some(s) = q.server {
            sql.push_str(" AND server = ?");
            args.push(Value::Text(s.to_owned()));
        }
        if let Some(c) = q.class {
            sql.push_str(" AND class = ?");
            args.push(Value::Text(c.to_owned()));
        }
        if let Some(targets) = q.targets {
            only_targets(&mut sql, &mut args, targets);
        }
        sql.push_str(if q.after.is_some() {
            " ORDER BY id ASC LIMIT ?"
        } else {
            " ORDER BY id DESC LIMIT ?"
        });
        args.push(Value::Integer(i64::from(q.limit.min(MAX_QUERY_ROWS))));
        let mut st = self.conn.prepare_cached(&sql)?;
        let rows = st.query_map(params_from_iter(&args), change_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// `(new entry, change id)` of every change of a target whose new entry is at or after
    /// `from_entry`, in change order (what a timeline of entries from `from_entry` on links to).
    pub fn change_ids_since(
        &self,
        target_id: &str,
        from_entry: u64,
    ) -> Result<Vec<(u64, i64)>, IndexError> {
        let mut st = self.conn.prepare_cached(
            "SELECT new_entry, id FROM changes WHERE target_id = ?1 AND new_entry >= ?2
             ORDER BY id",
        )?;
        let from = i64::try_from(from_entry).unwrap_or(i64::MAX);
        let rows = st.query_map(params![target_id, from], |r| {
            Ok((need_unsigned(r, 0)?, r.get(1)?))
        })?;
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

    /// What entry `entry` says of the surface (`observation_kinds`, in the order of the kinds'
    /// names) and its `toolIndex`: `None` for the kinds when the entry carries no surface.
    pub fn entry_surface(&self, entry: u64) -> Result<EntrySurfaceRow, IndexError> {
        let at = crate::rows::int(entry)?;
        let (tool_index, tools_cache) = self
            .conn
            .prepare_cached(
                "SELECT tool_index, cache_scope, ttl_ms FROM observations WHERE entry = ?1",
            )?
            .query_row([at], |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    (
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<i64>>(2)?.map(|t| t.max(0) as u64),
                    ),
                ))
            })
            .optional()?
            .unwrap_or_default();
        let mut st = self.conn.prepare_cached(
            "SELECT kind, digest, count, status, cache_scope, ttl_ms FROM observation_kinds
             WHERE entry = ?1 ORDER BY kind",
        )?;
        let kinds = st
            .query_map([at], |r| {
                Ok(KindRow {
                    kind: r.get(0)?,
                    digest: r.get(1)?,
                    count: r.get::<_, Option<i64>>(2)?.map(|c| c.max(0) as u64),
                    status: r.get(3)?,
                    cache_scope: r.get(4)?,
                    ttl_ms: r.get::<_, Option<i64>>(5)?.map(|c| c.max(0) as u64),
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EntrySurfaceRow {
            tool_index,
            tools_cache,
            kinds,
        })
    }

    /// The newest `ok` entry of a target that read its surface beyond `tools/list` (holds a
    /// kind in `observation_kinds`): since a remote's surface is read one crawl in
    /// `crawl.surface_days`, the entry that says what its surface is now. `None` when none did
    /// (or every one that did declared nothing).
    pub fn latest_surface_entry(&self, target_id: &str) -> Result<Option<u64>, IndexError> {
        let entry: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT max(k.entry) FROM observation_kinds k
                 JOIN observations o ON o.entry = k.entry
                 WHERE k.target_id = ?1 AND o.status = 'ok'",
            )?
            .query_row([target_id], |r| r.get(0))?;
        Ok(entry.map(|e| e.max(0) as u64))
    }

    /// What a target's surface beyond `tools/list` is now: the entry its kinds come from (the
    /// latest `ok` entry that read a kind, [`Index::latest_surface_entry`], else its latest
    /// `ok` entry) with those kinds, and the `toolIndex` and `tools/list` cache hints of its
    /// latest `ok` entry (the tools are listed on every crawl, the surface one crawl in
    /// `crawl.surface_days`). `None` when it has no `ok` entry. The one choice the server's
    /// JSON and its page both show.
    pub fn surface_now(
        &self,
        target: &TargetRow,
    ) -> Result<Option<(u64, EntrySurfaceRow)>, IndexError> {
        let Some(latest) = target.last_ok_entry else {
            return Ok(None);
        };
        let mut now = self.entry_surface(latest)?;
        let kinds_entry = self.latest_surface_entry(&target.id)?.unwrap_or(latest);
        if kinds_entry != latest {
            now.kinds = self.entry_surface(kinds_entry)?.kinds;
        }
        Ok(Some((kinds_entry, now)))
    }

    /// The `cloaking` change in force at a target: its latest one (id, entry, time) when the
    /// second look's digest still differed from the first at the last entry that made one
    /// (`targets.cloaking` is set); `None` when none is in force.
    pub fn cloaking_now(&self, target_id: &str) -> Result<Option<(i64, u64, String)>, IndexError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT c.id, c.new_entry, c.observed_at FROM changes c
                 JOIN targets t ON t.id = c.target_id
                 WHERE c.target_id = ?1 AND c.kind = 'cloaking' AND t.cloaking IS NOT NULL
                 ORDER BY c.id DESC LIMIT 1",
            )?
            .query_row([target_id], |r| {
                Ok((r.get(0)?, need_unsigned(r, 1)?, r.get(2)?))
            })
            .optional()?)
    }

    /// Entries of a target whose surface holds `kind` read completely with `digest`
    /// (`observation_kinds`), oldest first.
    pub fn entries_with_kind(
        &self,
        target_id: &str,
        kind: toolmark_toolset::surface::Kind,
        digest: &str,
    ) -> Result<Vec<u64>, IndexError> {
        let mut st = self.conn.prepare_cached(
            "SELECT entry FROM observation_kinds WHERE target_id = ?1 AND kind = ?2
             AND digest = ?3 ORDER BY entry",
        )?;
        let rows = st.query_map([target_id, kind.as_str(), digest], |r| need_unsigned(r, 0))?;
        Ok(rows.collect::<Result<_, _>>()?)
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
    /// answered (`ok`), how long its latest observation took, and whether any of its entries
    /// read its surface beyond `tools/list` (holds a kind: `observation_kinds`). The crawler
    /// uses these to try the transport that worked first, to start the slowest observations
    /// first, and to read a surface it has read before only on its rotation day.
    pub fn crawl_hints(&self) -> Result<Vec<CrawlHint>, IndexError> {
        let mut st = self.conn.prepare_cached(
            "SELECT t.target, ok.transport, last.elapsed_ms,
                 EXISTS (SELECT 1 FROM observation_kinds k WHERE k.target_id = t.id)
             FROM targets t
             LEFT JOIN observations ok ON ok.entry = t.last_ok_entry
             LEFT JOIN observations last ON last.entry = t.last_entry
             WHERE t.kind = 'remote' AND t.last_entry IS NOT NULL",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<i64>>(2)?.map(|v| v.max(0) as u64),
                r.get::<_, bool>(3)?,
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// For `/check`: how many `ok` observations a target has, the time of its first, and how
    /// many changes it has had (one statement of two indexed counts, without loading rows).
    pub fn target_counts(&self, target_id: &str) -> Result<(u64, Option<String>, u64), IndexError> {
        let (ok, first, changes): (i64, Option<String>, i64) = self
            .conn
            .prepare_cached(
                "SELECT count(*), min(observed_at),
                    (SELECT count(*) FROM changes WHERE target_id = ?1)
                 FROM observations WHERE target_id = ?1 AND status = 'ok'",
            )?
            .query_row([target_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok((ok.max(0) as u64, first, changes.max(0) as u64))
    }

    /// For `/check`'s `observed.unchangedSince`: the time of the first `ok` observation of the
    /// run of `ok` observations, ending at entry `current` (a target's latest `ok` entry),
    /// whose full digest is `full` (that entry's). Observations that are not `ok` (a timeout,
    /// a 401) do not break a run; an `ok` one with another full digest does. `None` when
    /// `current` is not an `ok` observation of `target_id` with that digest.
    ///
    /// Two indexed range reads over the target's observations (`observations_target`): the
    /// newest `ok` entry before `current` with another digest, then the first `ok` entry
    /// after it.
    pub fn unchanged_since(
        &self,
        target_id: &str,
        current: u64,
        full: &str,
    ) -> Result<Option<String>, IndexError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT observed_at FROM observations
                 WHERE target_id = ?1 AND status = 'ok' AND full = ?3 AND entry <= ?2
                   AND entry > coalesce((SELECT max(entry) FROM observations
                        WHERE target_id = ?1 AND status = 'ok' AND full IS NOT NULL
                          AND full <> ?3 AND entry < ?2), -1)
                   AND EXISTS (SELECT 1 FROM observations WHERE entry = ?2 AND target_id = ?1
                        AND status = 'ok' AND full = ?3)
                 ORDER BY entry LIMIT 1",
            )?
            .query_row(params![target_id, int(current)?, full], |r| r.get(0))
            .optional()?)
    }

    /// Every server name the index knows, listed or delisted, sorted.
    pub fn known_server_names(&self) -> Result<Vec<String>, IndexError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT name FROM servers ORDER BY name")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A mark that moves whenever a server name is added to `servers` (names are never
    /// removed, only delisted; a rebuild renumbers them): the row count and the highest rowid.
    /// Cheap, so a reader can ask it per request and re-read [`Self::known_server_names`] only
    /// when it moved.
    pub fn server_names_mark(&self) -> Result<(u64, u64), IndexError> {
        let (count, max): (i64, Option<i64>) =
            self.conn
                .query_row("SELECT count(*), max(rowid) FROM servers", [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
        Ok((
            u64::try_from(count).unwrap_or(0),
            max.and_then(|m| u64::try_from(m).ok()).unwrap_or(0),
        ))
    }

    /// The newest crawl run (package sweeps are runs of another kind).
    pub fn last_run(&self) -> Result<Option<RunRow>, IndexError> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {RUN_COLS} FROM runs WHERE kind = 'crawl' ORDER BY id DESC LIMIT 1"
                ),
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

impl Index {
    /// The targets `filter` selects: how many in all, and the page of at most `limit` (capped
    /// at [`MAX_QUERY_ROWS`]) from `offset` on, ordered as the module documentation says.
    pub fn search_targets(
        &self,
        filter: &TargetFilter,
        limit: u32,
        offset: u64,
    ) -> Result<TargetPage, IndexError> {
        let (cond, mut args) = filter.condition();
        let total: i64 = self
            .conn
            .prepare_cached(&format!("SELECT count(*) {SUMMARY_FROM} WHERE {cond}"))?
            .query_row(params_from_iter(&args), |r| r.get(0))?;
        let n = args.len();
        args.push(Value::Integer(i64::from(limit.min(MAX_QUERY_ROWS))));
        // An offset past every row selects none, however large.
        args.push(Value::Integer(i64::try_from(offset).unwrap_or(i64::MAX)));
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {} {SUMMARY_FROM} WHERE {cond}
             ORDER BY t.server, t.kind DESC, t.target, t.id LIMIT ?{} OFFSET ?{}",
            summary_cols(),
            n + 1,
            n + 2
        ))?;
        let targets = st
            .query_map(params_from_iter(&args), summary_row)?
            .collect::<Result<_, _>>()?;
        Ok(TargetPage {
            total: u64::try_from(total).unwrap_or(0),
            targets,
        })
    }

    /// One target as listings show it.
    pub fn target_summary(&self, id: &str) -> Result<Option<TargetSummary>, IndexError> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {} {SUMMARY_FROM} WHERE t.id = ?1",
                summary_cols()
            ))?
            .query_row([id], summary_row)
            .optional()?)
    }

    /// How many targets have each status as their newest entry's, `never` counting the
    /// targets with no entry, ordered by status.
    pub fn target_status_counts(&self) -> Result<Vec<(String, u64)>, IndexError> {
        self.counts(
            "SELECT coalesce(last_status, 'never'), count(*) FROM targets GROUP BY 1 ORDER BY 1",
        )
    }

    /// How many changes of each class are recorded, ordered by class (classes without a
    /// change are absent).
    pub fn change_class_counts(&self) -> Result<Vec<(String, u64)>, IndexError> {
        self.counts("SELECT class, count(*) FROM changes GROUP BY 1 ORDER BY 1")
    }

    fn counts(&self, sql: &str) -> Result<Vec<(String, u64)>, IndexError> {
        let mut st = self.conn.prepare_cached(sql)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, need_unsigned(r, 1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The subject id of the newest log entry indexed, if any.
    pub fn newest_entry_target(&self) -> Result<Option<String>, IndexError> {
        Ok(self
            .conn
            .prepare_cached("SELECT target_id FROM observations ORDER BY entry DESC LIMIT 1")?
            .query_row([], |r| r.get(0))
            .optional()?)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading changes.

/// What changes [`Index::query_changes`] reads: filters, the cursor and the page size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChangeQuery<'a> {
    /// Only changes of these targets (subject ids); an empty list selects none.
    pub targets: Option<&'a [String]>,
    /// Only changes of this registry server.
    pub server: Option<&'a str>,
    /// Only changes of this class (`benign`, `unsure`, `dangerous`).
    pub class: Option<&'a str>,
    /// Ids above this, oldest first (forward reading); newest first when `None`.
    pub after: Option<i64>,
    /// Ids below this.
    pub before: Option<i64>,
    /// At most this many (capped at [`MAX_QUERY_ROWS`]).
    pub limit: u32,
}

/// Narrow a query (`sql`, its `args`) to rows whose `target_id` is one of `targets`; an empty
/// list selects nothing. The change and security-event queries share it.
pub(crate) fn only_targets(sql: &mut String, args: &mut Vec<Value>, targets: &[String]) {
    if targets.is_empty() {
        sql.push_str(" AND 0");
    } else {
        sql.push_str(" AND target_id IN (");
        sql.push_str(&vec!["?"; targets.len()].join(","));
        sql.push(')');
        args.extend(targets.iter().map(|t| Value::Text(t.clone())));
    }
}

/// One kind of an entry's surface as indexed: `digest` and `count` when read completely, else
/// `status`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KindRow {
    /// `prompts`, `resources`, `resourceTemplates`, `appPages` or `card`.
    pub kind: String,
    /// The kind's digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Its entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Why it was not read completely.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The list's `cacheScope` (MCP 2026-07-28): `private` when any page said so (the server
    /// may list otherwise to other callers), `public`, or none.
    #[serde(rename = "cacheScope", skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// The smallest `ttlMs` of its pages.
    #[serde(rename = "ttlMs", skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
}

/// What an entry says of the surface and its tool index ([`Index::entry_surface`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySurfaceRow {
    /// The entry's `toolIndex`.
    pub tool_index: Option<String>,
    /// Its `tools/list` cache hints: the `cacheScope` (`private` when any page said so) and
    /// the smallest `ttlMs`.
    pub tools_cache: (Option<String>, Option<u64>),
    /// Its surface kinds (none when it carries no surface, or nothing was declared).
    pub kinds: Vec<KindRow>,
}

// ---------------------------------------------------------------------------------------------
// A target's distinct tool sets, run by run.

/// One run of a target's successful observations with the same tool set: consecutive `ok`
/// entries (failed observations in between do not end a run; a different full digest does)
/// with one full digest ([`Index::tool_set_runs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSetRun {
    /// The run's first entry.
    pub first_entry: u64,
    /// When it was observed.
    pub first_at: String,
    /// The run's last entry.
    pub last_entry: u64,
    /// When it was observed.
    pub last_at: String,
    /// How many `ok` entries the run holds.
    pub observations: u64,
    /// Where the set is stored: the document of the run's last entry that names one (`None`
    /// when no entry of the run does), with the run's full digest.
    pub tool_set: Option<ToolSetRef>,
    /// The run's full digest (`toolmark/1`).
    pub full: String,
}

impl Index {
    /// The runs of target `target_id`'s successful observations with entries below `before`,
    /// newest first, at most `limit` of them (the whole of each run read, however long).
    /// Entries without a full digest (none is `ok` without one) are skipped.
    pub fn tool_set_runs(
        &self,
        target_id: &str,
        before: u64,
        limit: usize,
    ) -> Result<Vec<ToolSetRun>, IndexError> {
        let before = i64::try_from(before).unwrap_or(i64::MAX);
        let mut st = self.conn.prepare_cached(
            "SELECT entry, observed_at, full, raw FROM observations
             WHERE target_id = ?1 AND entry < ?2 AND status = 'ok' AND full IS NOT NULL
             ORDER BY entry DESC",
        )?;
        let mut rows = st.query(params![target_id, before])?;
        let mut runs: Vec<ToolSetRun> = Vec::new();
        while let Some(r) = rows.next()? {
            let entry = need_unsigned(r, 0)?;
            let at: String = r.get(1)?;
            let full: String = r.get(2)?;
            let raw: Option<String> = r.get(3)?;
            match runs.last_mut() {
                Some(run) if run.full == full => {
                    run.first_entry = entry;
                    run.first_at = at;
                    run.observations += 1;
                    if run.tool_set.is_none()
                        && let Some(raw) = raw
                    {
                        run.tool_set = Some(ToolSetRef {
                            entry,
                            document: parse_raw(&raw, entry)?,
                            full: full.clone(),
                        });
                    }
                }
                _ => {
                    if runs.len() == limit {
                        break;
                    }
                    let tool_set = match raw {
                        Some(raw) => Some(ToolSetRef {
                            entry,
                            document: parse_raw(&raw, entry)?,
                            full: full.clone(),
                        }),
                        None => None,
                    };
                    runs.push(ToolSetRun {
                        first_entry: entry,
                        first_at: at.clone(),
                        last_entry: entry,
                        last_at: at,
                        observations: 1,
                        tool_set,
                        full,
                    });
                }
            }
        }
        Ok(runs)
    }
}
