//! Everything the desk reads from the index, in one place, all through the index's typed
//! queries (no SQL here): the servers search (the same search as `/api/v1/servers`), a target
//! with its timeline, changes and the client reports shown, the changes lists, one change,
//! the target with the newest entry, and the stats (the API's cached computation,
//! [`crate::stats::StatsCache`]). Pages get rows from here and never query themselves.

use toolmark_index::index::{ChangeRow, ObservationRow, ServerRow, TargetRow};
use toolmark_index::{IndexError, SensitiveFilter, TargetFilter, TargetState};

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
    pub tools: Option<u64>,
    pub skip_reason: Option<String>,
    pub delisted: bool,
    pub changes: u64,
    /// The scan's counts; `None` before the first `ok` observation.
    pub scan: Option<toolmark_index::ScanSummary>,
}

/// The targets matching `q` in state `filter` and census filter `sensitive` (the index's one
/// search, the same as `/api/v1/servers`: see `toolmark_index::queries`): how many in all, and
/// the page at `offset`.
pub(super) fn list_targets(
    state: &AppState,
    q: &str,
    filter: &str,
    sensitive: Option<SensitiveFilter>,
    limit: u32,
    offset: u64,
) -> Result<(u64, Vec<ListRow>), Fail> {
    if i64::try_from(offset).is_err() {
        return Err(bad_request("offset is too large"));
    }
    let filter = TargetFilter {
        q: q.to_owned(),
        state: TargetState::parse(filter).unwrap_or_default(),
        sensitive,
    };
    let page = state
        .index
        .get()
        .search_targets(&filter, limit, offset)
        .map_err(sql)?;
    let rows = page
        .targets
        .into_iter()
        .map(|s| ListRow {
            delisted: s.delisted_at.is_some(),
            changes: s.changes,
            scan: s.scan,
            id: s.target.id,
            server: s.target.server,
            target: s.target.target,
            last_status: s.target.last_status,
            last_observed_at: s.target.last_observed_at,
            tools: s.target.current_tools,
            skip_reason: s.target.skip_reason,
        })
        .collect();
    Ok((page.total, rows))
}

/// A target with what its page shows from the index.
pub(super) struct TargetData {
    pub target: TargetRow,
    pub server: Option<ServerRow>,
    pub observations: Vec<ObservationRow>,
    pub changes: Vec<ChangeRow>,
    /// A package's observed versions (newest last), with what the sandbox saw.
    pub packages: Vec<toolmark_index::packages::PackageObservation>,
    /// The tool sets clients reported this week that toolmark never observed here, at or
    /// above the minimum of reports (`crate::contribute`).
    pub client_reports: Vec<toolmark_index::ClientReport>,
    /// The rule-set scan of its current tool set and instructions, with the data-flow legs.
    pub scan: Option<toolmark_index::TargetScan>,
    /// Its surface beyond `tools/list` now: the entry that says it and each kind
    /// (`Index::surface_now`).
    pub surface: Option<(u64, toolmark_index::queries::EntrySurfaceRow)>,
}

/// Package observations a target page lists (the newest).
const TARGET_VERSIONS: usize = 20;

/// The target `id`, its registry record, a page of its timeline (below `before`) and its
/// changes; `None` when no such target is known.
pub(super) fn load_target(
    state: &AppState,
    id: &str,
    before: Option<u64>,
) -> Result<Option<TargetData>, Fail> {
    let (target, server, observations, changes, packages, client_reports, scan, surface) = {
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
        let packages = if target.kind == "package" {
            index
                .package_observations(id, TARGET_VERSIONS)
                .map_err(sql)?
        } else {
            Vec::new()
        };
        let client_reports = state
            .client_reports
            .other_reports(&index, id, toolmark_index::Day::of((state.clock)()))
            .map_err(internal)?;
        let scan = index.target_scan(id).map_err(sql)?;
        let surface = index.surface_now(&target).map_err(sql)?;
        (
            target,
            server,
            observations,
            changes,
            packages,
            client_reports,
            scan,
            surface,
        )
    };
    Ok(Some(TargetData {
        target,
        server,
        observations,
        changes,
        packages,
        client_reports,
        scan,
        surface,
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
    state.index.get().newest_entry_target().map_err(sql)
}

/// The log's current signed checkpoint.
pub(super) fn checkpoint(state: &AppState) -> Result<toolmark_log::reader::Signed, Fail> {
    state.log.checkpoint().map_err(internal)
}

/// The stats `/api/v1/stats` answers (computed at most once a minute, shared with the API).
pub(super) fn stats(state: &AppState) -> Result<std::sync::Arc<crate::stats::Stats>, Fail> {
    state.stats.get(state).map_err(internal)
}
