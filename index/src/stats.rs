//! The counts behind `/api/v1/stats`, the desk's stats page and the badges: targets by state,
//! changes in a window, observations and changes per day, the newest run of each kind, the
//! hosts with the most endpoints, and what one target's badge says.
//!
//! Every query is bounded: the per-target ones read one target's rows through
//! `observations_target` / `changes_target`; the windowed ones read only the window's rows
//! through the version-5 indexes on `observed_at` ([`STATS_INDEXES`]); the whole-table ones
//! (targets by state, hosts) read the `targets` table once (one row per remote or package of
//! the registry: tens of thousands, not millions). Times compare as text: every time the index
//! holds is the log's `YYYY-MM-DDTHH:MM:SSZ` (UTC), so text order is time order.
//!
//! It only reads; the caller (the API) decides how long an answer may be reused.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::index::{Index, IndexError, MAX_QUERY_ROWS};
use crate::rows::{RUN_COLS, RunRow, need_unsigned, run_row};

/// Version 5 (stats): indexes on the times of observations and changes, so that counting a
/// window (changes in the last 24 hours, observations per day of the last 30 days) reads the
/// window's rows only, not the whole table. Indexes only: nothing to derive, and
/// [`Index::rebuild`](crate::Index::rebuild) keeps them (they index the rows it writes).
pub(crate) const STATS_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS observations_observed_at ON observations (observed_at);
CREATE INDEX IF NOT EXISTS changes_observed_at ON changes (observed_at, kind, class);
";

/// Targets by state. A target is one remote or one package of a registry server; "listed"
/// means neither it nor its server has left the registry. Every count but `total` and
/// `delisted` counts listed targets only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetCounts {
    /// Every target the index knows, listed or not.
    pub total: u64,
    /// Targets in the registry now (neither the target nor its server delisted).
    pub listed: u64,
    /// Targets that left the registry (the target or its server).
    pub delisted: u64,
    /// Listed remotes (URLs).
    pub remotes: u64,
    /// Listed packages (`npm:`, `pypi:`, …).
    pub packages: u64,
    /// Listed targets whose newest observation is `ok`.
    pub observed: u64,
    /// Listed targets with a pinned tool set: at least one complete `ok` observation.
    pub pinned: u64,
    /// Listed targets with a pinned tool set and no change ever recorded.
    pub never_changed: u64,
    /// Listed targets with at least one recorded change (of any kind).
    pub changed: u64,
    /// Listed targets with no pinned tool set (never observed `ok`; skipped ones included).
    pub unobserved: u64,
    /// Listed targets that are not skipped and whose newest observation is not `ok`.
    pub failing: u64,
    /// Listed targets that are not dialled, by skip reason.
    pub skipped: BTreeMap<String, u64>,
    /// Listed targets by the status of their newest observation (`never`: no observation).
    pub last_status: BTreeMap<String, u64>,
}

/// Changes recorded in a window, by kind (`tools`, `authorization`, `behaviour`) and by class.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeCounts {
    /// Changes in the window.
    pub total: u64,
    /// By kind.
    pub by_kind: BTreeMap<String, u64>,
    /// By class (`benign`, `unsure`, `dangerous`).
    pub by_class: BTreeMap<String, u64>,
}

/// One UTC day's activity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayCount {
    /// The day, `YYYY-MM-DD` (UTC).
    pub day: String,
    /// Log entries (observations, of any status) observed that day.
    pub observations: u64,
    /// Changes (of any kind) observed that day.
    pub changes: u64,
}

/// A host and how many endpoints it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCount {
    /// The host as endpoint keys write it (lower case, with a port other than the default).
    pub host: String,
    /// Distinct endpoints (endpoint keys, `crate::index::endpoint_key`: URLs with their query,
    /// without fragment or trailing slash) of listed remotes on it.
    pub endpoints: u64,
}

/// The hosts serving the most endpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostCounts {
    /// The first hosts by endpoints (most first, ties by host name).
    pub hosts: Vec<HostCount>,
    /// Distinct hosts of listed remotes, in all.
    pub distinct_hosts: u64,
}

/// What one target's badge is made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BadgeFacts {
    /// The target or its server left the registry.
    pub delisted: bool,
    /// The target has a pinned tool set (at least one complete `ok` observation).
    pub pinned: bool,
    /// When the target was first observed `ok` with a complete tool set.
    pub first_pinned_at: Option<String>,
    /// Changes recorded (of any kind).
    pub changes: u64,
    /// When the newest change was observed.
    pub last_change_at: Option<String>,
}

/// The host of an endpoint key in SQL: what follows `://` up to the first `/` or `?` (a key
/// keeps its query, and a bare host's has no `/` before it: `https://host?x`). `?` is read as
/// `/` (one character for one, so positions do not move; a host holds neither).
const HOST_SQL: &str =
    "CASE WHEN instr(substr(replace(endpoint_key, '?', '/'), instr(endpoint_key, '://') + 3), '/') > 0
     THEN substr(substr(endpoint_key, instr(endpoint_key, '://') + 3), 1,
                 instr(substr(replace(endpoint_key, '?', '/'), instr(endpoint_key, '://') + 3), '/') - 1)
     ELSE substr(endpoint_key, instr(endpoint_key, '://') + 3) END";

/// Listed remotes with an http(s) endpoint key.
const LISTED_REMOTES: &str = "FROM targets t LEFT JOIN servers s ON s.name = t.server
     WHERE t.kind = 'remote' AND coalesce(t.delisted_at, s.delisted_at) IS NULL
       AND (t.endpoint_key LIKE 'http://%' OR t.endpoint_key LIKE 'https://%')";

impl Index {
    /// Targets by state ([`TargetCounts`]): one pass over `targets`, and two grouped counts.
    pub fn target_counts_by_state(&self) -> Result<TargetCounts, IndexError> {
        let listed = "coalesce(t.delisted_at, s.delisted_at) IS NULL";
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT count(*),
                 coalesce(sum(l), 0),
                 coalesce(sum(l AND kind = 'remote'), 0),
                 coalesce(sum(l AND kind = 'package'), 0),
                 coalesce(sum(l AND last_status = 'ok'), 0),
                 coalesce(sum(l AND pinned), 0),
                 coalesce(sum(l AND pinned AND NOT changed), 0),
                 coalesce(sum(l AND changed), 0),
                 coalesce(sum(l AND skip_reason IS NULL AND last_status IS NOT NULL
                              AND last_status <> 'ok'), 0)
             FROM (SELECT t.kind, t.last_status, t.skip_reason,
                          ({listed}) AS l,
                          (t.current_full IS NOT NULL) AS pinned,
                          EXISTS (SELECT 1 FROM changes c WHERE c.target_id = t.id) AS changed
                   FROM targets t LEFT JOIN servers s ON s.name = t.server)"
        ))?;
        let mut c = st.query_row([], |r| {
            Ok(TargetCounts {
                total: need_unsigned(r, 0)?,
                listed: need_unsigned(r, 1)?,
                remotes: need_unsigned(r, 2)?,
                packages: need_unsigned(r, 3)?,
                observed: need_unsigned(r, 4)?,
                pinned: need_unsigned(r, 5)?,
                never_changed: need_unsigned(r, 6)?,
                changed: need_unsigned(r, 7)?,
                failing: need_unsigned(r, 8)?,
                ..TargetCounts::default()
            })
        })?;
        c.delisted = c.total - c.listed;
        c.unobserved = c.listed - c.pinned;
        c.skipped = self.grouped(&format!(
            "SELECT t.skip_reason, count(*) FROM targets t LEFT JOIN servers s ON s.name = t.server
             WHERE {listed} AND t.skip_reason IS NOT NULL GROUP BY 1 ORDER BY 1"
        ))?;
        c.last_status = self.grouped(&format!(
            "SELECT coalesce(t.last_status, 'never'), count(*)
             FROM targets t LEFT JOIN servers s ON s.name = t.server
             WHERE {listed} GROUP BY 1 ORDER BY 1"
        ))?;
        Ok(c)
    }

    fn grouped(&self, sql: &str) -> Result<BTreeMap<String, u64>, IndexError> {
        let mut st = self.conn.prepare_cached(sql)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, need_unsigned(r, 1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Changes observed at or after `since` (`YYYY-MM-DDTHH:MM:SSZ`), by kind and class (a
    /// range read of `changes_observed_at`).
    pub fn change_counts_since(&self, since: &str) -> Result<ChangeCounts, IndexError> {
        let mut st = self.conn.prepare_cached(
            "SELECT kind, class, count(*) FROM changes WHERE observed_at >= ?1 GROUP BY 1, 2",
        )?;
        let rows = st.query_map([since], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                need_unsigned(r, 2)?,
            ))
        })?;
        let mut out = ChangeCounts::default();
        for row in rows {
            let (kind, class, n) = row?;
            out.total += n;
            *out.by_kind.entry(kind).or_default() += n;
            *out.by_class.entry(class).or_default() += n;
        }
        Ok(out)
    }

    /// Changes recorded in all.
    pub fn change_total(&self) -> Result<u64, IndexError> {
        Ok(self
            .conn
            .prepare_cached("SELECT count(*) FROM changes")?
            .query_row([], |r| need_unsigned(r, 0))?)
    }

    /// Observations and changes per UTC day for `days` (each `YYYY-MM-DD`), in the order given.
    /// One range count per day and table over the version-5 indexes on `observed_at` (a
    /// range count walks the index, never the table: measured in docs/benchmarks.md).
    pub fn daily_activity(&self, days: &[String]) -> Result<Vec<DayCount>, IndexError> {
        let count = |table: &str, day: &str| -> Result<u64, IndexError> {
            Ok(self
                .conn
                .prepare_cached(&format!(
                    "SELECT count(*) FROM {table} WHERE observed_at >= ?1 AND observed_at < ?2"
                ))?
                .query_row(params![format!("{day}T"), format!("{day}U")], |r| {
                    need_unsigned(r, 0)
                })?)
        };
        days.iter()
            .map(|day| {
                Ok(DayCount {
                    day: day.clone(),
                    observations: count("observations", day)?,
                    changes: count("changes", day)?,
                })
            })
            .collect()
    }

    /// The newest run of `kind` (`crawl`, or `sweep` for the package sweep).
    pub fn last_run_of_kind(&self, kind: &str) -> Result<Option<RunRow>, IndexError> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {RUN_COLS} FROM runs WHERE kind = ?1 ORDER BY id DESC LIMIT 1"
            ))?
            .query_row([kind], run_row)
            .optional()?)
    }

    /// The `limit` hosts (capped at [`MAX_QUERY_ROWS`]) serving the most distinct endpoints
    /// among listed remotes, and how many distinct hosts there are.
    pub fn hosts_by_endpoints(&self, limit: u32) -> Result<HostCounts, IndexError> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {HOST_SQL} AS host, count(DISTINCT t.endpoint_key) AS n {LISTED_REMOTES}
             GROUP BY host ORDER BY n DESC, host LIMIT ?1"
        ))?;
        let hosts = st
            .query_map([limit.min(MAX_QUERY_ROWS)], |r| {
                Ok(HostCount {
                    host: r.get(0)?,
                    endpoints: need_unsigned(r, 1)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        let distinct_hosts = self
            .conn
            .prepare_cached(&format!(
                "SELECT count(DISTINCT {HOST_SQL}) {LISTED_REMOTES}"
            ))?
            .query_row([], |r| need_unsigned(r, 0))?;
        Ok(HostCounts {
            hosts,
            distinct_hosts,
        })
    }

    /// What target `id`'s badge is made from; `None` for an id the index does not know. Reads
    /// the target's own rows only (`observations_target`, `changes_target`).
    pub fn badge_facts(&self, id: &str) -> Result<Option<BadgeFacts>, IndexError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT coalesce(t.delisted_at, s.delisted_at) IS NOT NULL,
                     t.current_full IS NOT NULL,
                     (SELECT min(o.observed_at) FROM observations o
                      WHERE o.target_id = t.id AND o.status = 'ok' AND o.full IS NOT NULL),
                     (SELECT count(*) FROM changes c WHERE c.target_id = t.id),
                     (SELECT max(c.observed_at) FROM changes c WHERE c.target_id = t.id)
                 FROM targets t LEFT JOIN servers s ON s.name = t.server WHERE t.id = ?1",
            )?
            .query_row(params![id], |r| {
                Ok(BadgeFacts {
                    delisted: r.get(0)?,
                    pinned: r.get(1)?,
                    first_pinned_at: r.get(2)?,
                    changes: need_unsigned(r, 3)?,
                    last_change_at: r.get(4)?,
                })
            })
            .optional()?)
    }
}
