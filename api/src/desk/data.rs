//! Everything the desk reads from the index, in one place: the servers search (SQL on the
//! index's connection), a target with its timeline and changes, the changes lists, one change,
//! and the target with the newest entry. Pages get rows from here and never query themselves.

use toolmark_index::IndexError;
use toolmark_index::index::{ChangeRow, ObservationRow, ServerRow, TargetRow};

use super::{Fail, TARGET_CHANGES, TIMELINE_ROWS, bad_request, internal};
use crate::AppState;

fn sql(e: impl Into<IndexError>) -> Fail {
    internal(e.into())
}

/// One row of the servers table.
pub(super) struct ListRow {
    pub id: String,
    pub server: String,
    pub target: String,
    pub last_status: Option<String>,
    pub last_observed_at: Option<String>,
    pub tools: Option<i64>,
    pub skip_reason: Option<String>,
    pub delisted: bool,
    pub changes: i64,
}

fn state_clause(state: &str) -> &'static str {
    match state {
        "observed" => "t.last_status = 'ok'",
        "changed" => "EXISTS (SELECT 1 FROM changes c WHERE c.target_id = t.id)",
        "failing" => {
            "t.last_status IS NOT NULL AND t.last_status <> 'ok' AND t.skip_reason IS NULL"
        }
        "skipped" => "t.skip_reason IS NOT NULL",
        "delisted" => "(t.delisted_at IS NOT NULL OR s.delisted_at IS NOT NULL)",
        _ => "1",
    }
}

const SEARCH: &str = "(?1 = '' OR instr(lower(t.server), ?1) > 0 OR instr(lower(t.target), ?1) > 0
     OR instr(lower(coalesce(s.title, '')), ?1) > 0
     OR instr(lower(coalesce(s.description, '')), ?1) > 0)";

/// The targets matching `q` (ASCII-case-insensitive substring of name, endpoint, title or
/// description) in state `filter`: how many in all, and the page at `offset`.
pub(super) fn list_targets(
    state: &AppState,
    q: &str,
    filter: &str,
    limit: u32,
    offset: u64,
) -> Result<(u64, Vec<ListRow>), Fail> {
    let index = state.index.get();
    let conn = index.connection();
    let needle = q.to_ascii_lowercase();
    let clause = state_clause(filter);
    let total: i64 = conn
        .prepare_cached(&format!(
            "SELECT COUNT(*) FROM targets t LEFT JOIN servers s ON s.name = t.server
             WHERE {SEARCH} AND {clause}"
        ))
        .and_then(|mut st| st.query_row([&needle], |r| r.get(0)))
        .map_err(sql)?;
    let offset = i64::try_from(offset).map_err(|_| bad_request("offset is too large"))?;
    let mut st = conn
        .prepare_cached(&format!(
            "SELECT t.id, t.server, t.target, t.last_status, t.last_observed_at, t.current_tools,
                    t.skip_reason, (t.delisted_at IS NOT NULL OR s.delisted_at IS NOT NULL),
                    (SELECT COUNT(*) FROM changes c WHERE c.target_id = t.id)
             FROM targets t LEFT JOIN servers s ON s.name = t.server
             WHERE {SEARCH} AND {clause}
             ORDER BY t.server, t.kind DESC, t.target, t.id LIMIT ?2 OFFSET ?3"
        ))
        .map_err(sql)?;
    let rows = st
        .query_map((&needle, i64::from(limit), offset), |r| {
            Ok(ListRow {
                id: r.get(0)?,
                server: r.get(1)?,
                target: r.get(2)?,
                last_status: r.get(3)?,
                last_observed_at: r.get(4)?,
                tools: r.get(5)?,
                skip_reason: r.get(6)?,
                delisted: r.get(7)?,
                changes: r.get(8)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(sql)?;
    Ok((u64::try_from(total).unwrap_or(0), rows))
}

/// A target with what its page shows from the index.
pub(super) struct TargetData {
    pub target: TargetRow,
    pub server: Option<ServerRow>,
    pub observations: Vec<ObservationRow>,
    pub changes: Vec<ChangeRow>,
}

/// The target `id`, its registry record, a page of its timeline (below `before`) and its
/// changes; `None` when no such target is known.
pub(super) fn load_target(
    state: &AppState,
    id: &str,
    before: Option<u64>,
) -> Result<Option<TargetData>, Fail> {
    let (target, server, observations, changes) = {
        let index = state.index.get();
        let Some(target) = index.target(id).map_err(sql)? else {
            return Ok(None);
        };
        let server = index.server(&target.server).map_err(sql)?;
        let observations = index
            .observations_of(id, TIMELINE_ROWS, before)
            .map_err(sql)?;
        let changes = index
            .latest_changes(None, TARGET_CHANGES, Some(&target.server), None)
            .map_err(sql)?
            .into_iter()
            .filter(|c| c.target_id == id)
            .collect();
        (target, server, observations, changes)
    };
    Ok(Some(TargetData {
        target,
        server,
        observations,
        changes,
    }))
}

/// Changes newest first below `before`, of `class` only when given.
pub(super) fn latest_changes(
    state: &AppState,
    before: Option<i64>,
    limit: u32,
    class: Option<&str>,
) -> Result<Vec<ChangeRow>, Fail> {
    state
        .index
        .get()
        .latest_changes(before, limit, None, class)
        .map_err(sql)
}

/// The change `id`, if there is one.
pub(super) fn change(state: &AppState, id: i64) -> Result<Option<ChangeRow>, Fail> {
    state.index.get().change(id).map_err(sql)
}

/// The target with the newest log entry (the log page's default).
pub(super) fn newest_target(state: &AppState) -> Result<Option<String>, Fail> {
    let index = state.index.get();
    index
        .connection()
        .prepare_cached("SELECT target_id FROM observations ORDER BY entry DESC LIMIT 1")
        .and_then(|mut st| {
            st.query_map([], |r| r.get::<_, String>(0))?
                .next()
                .transpose()
        })
        .map_err(sql)
}

/// The log's current signed checkpoint.
pub(super) fn checkpoint(state: &AppState) -> Result<toolmark_log::reader::Signed, Fail> {
    state.log.checkpoint().map_err(internal)
}
