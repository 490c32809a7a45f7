//! Numbers about the log and its targets, and badges.
//!
//! - `GET /api/v1/stats` — [`Stats`]: targets by state, changes in the last 24 hours, 7 and 30
//!   days, observations and changes per day, the newest crawl and package sweep with their
//!   status counts, the log's size, root and checkpoint age, the starter-policy census, and the
//!   rule-set scan ([`ScanStats`]: targets scanned, flagged, blocked, with a toxic flow, on the
//!   current rule set, and flagged targets per rule class).
//! - `GET /api/v1/stats/hosts?limit=` — the hosts serving the most endpoints (`limit` 1–
//!   [`MAX_HOSTS`], default [`DEFAULT_HOSTS`]).
//! - `GET /badge/{id}.svg` — a target's badge ([`badge`]); `GET /api/v1/badges/{id}` the same
//!   as a shields.io endpoint answer; `GET /api/v1/badges/{log,pinned,changes,checkpoint}`
//!   global ones.
//!
//! The counts are computed at most once per [`STATS_CACHE_SECONDS`] per process
//! ([`StatsCache`], one computation at a time: concurrent requests wait for it and share its
//! result), so the stats routes cost a cache read, whatever the load. Badges are per target
//! (one target's rows, no cache here) and say `Cache-Control: public, max-age=3600`.
//!
//! It only reads, through the index's typed queries ([`toolmark_index::stats`]) and the
//! checkpoint; the desk's stats page ([`crate::desk`]) renders the same [`Stats`].

pub mod badge;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use serde_json::Value;
use toolmark_index::index::Index;
use toolmark_index::rows::RunRow;
use toolmark_index::{ChangeCounts, DayCount, HostCounts, TargetCounts};

use crate::servers::{Params, blocking, valid_id};
use crate::{ApiError, AppState};
use badge::{BADGE_CACHE_SECONDS, Badge, CHECKPOINT_STALE_SECONDS, Color};

/// How long computed stats are reused, in seconds: the counts read the whole `targets` table
/// (see `toolmark_index::stats`), which a public route must not do per request.
pub const STATS_CACHE_SECONDS: u64 = 60;

/// Days of activity the stats hold (observations and changes per UTC day, today included).
pub const ACTIVITY_DAYS: u64 = 30;

/// Hosts `/api/v1/stats/hosts` lists when `limit` is not given.
pub const DEFAULT_HOSTS: u32 = 15;

/// Most hosts `/api/v1/stats/hosts` lists (`limit` above it is refused with 400).
pub const MAX_HOSTS: u32 = 50;

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/stats", get(stats_json))
        .route("/api/v1/stats/hosts", get(hosts_json))
        .route("/api/v1/badges/log", get(log_badge))
        .route("/api/v1/badges/pinned", get(pinned_badge))
        .route("/api/v1/badges/changes", get(changes_badge))
        .route("/api/v1/badges/checkpoint", get(checkpoint_badge))
        .route("/api/v1/badges/{id}", get(target_shields))
        .route("/badge/{file}", get(target_svg))
}

/// A run as the stats show it: its row and what its report counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStats {
    /// Run id.
    pub id: i64,
    /// `crawl` or `sweep`.
    pub kind: String,
    /// `running`, `complete` or `failed`.
    pub status: String,
    /// When it started.
    pub started_at: String,
    /// When it finished (`null` while running).
    pub finished_at: Option<String>,
    /// Targets (crawl) or package versions (sweep) recorded, by the status of their
    /// observation (the report's `totals`; empty while running).
    pub statuses: BTreeMap<String, u64>,
    /// Observations recorded in all (the sum of `statuses`).
    pub observed: u64,
    /// Targets or versions chosen but not observed because the run was stopped.
    pub abandoned: Option<u64>,
    /// The log's size when the run ended.
    pub log_size: Option<u64>,
    /// For a crawl: registry servers read (the latest record per name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<u64>,
    /// For a sweep: package targets the sandbox can observe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packages: Option<u64>,
}

impl RunStats {
    /// The run's stats from its row; the report (JSON this service's own runs wrote) is read
    /// member by member, and a member that is missing or of another type is absent.
    fn from_row(r: RunRow) -> RunStats {
        let report: Value = r
            .report
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Value::Null);
        let statuses: BTreeMap<String, u64> = report["totals"]
            .as_object()
            .map(|o| {
                o.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                    .collect()
            })
            .unwrap_or_default();
        RunStats {
            id: r.id,
            observed: statuses.values().sum(),
            statuses,
            abandoned: report["abandoned"].as_u64(),
            log_size: report["logSize"].as_u64(),
            servers: report["servers"].as_u64().filter(|_| r.kind == "crawl"),
            packages: report["packages"].as_u64().filter(|_| r.kind == "sweep"),
            kind: r.kind,
            status: r.status,
            started_at: r.started_at,
            finished_at: r.finished_at,
        }
    }
}

/// Changes in the three windows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeStats {
    /// Changes (of any kind) observed in the last 24 hours.
    pub last24h: u64,
    /// … in the last 7 days (168 hours).
    pub last7d: u64,
    /// … in the last 30 days (720 hours).
    pub last30d: u64,
    /// Changes recorded in all.
    pub total: u64,
    /// Each window by kind and class (`last24h`, `last7d`, `last30d`).
    pub windows: BTreeMap<&'static str, ChangeCounts>,
}

/// The log as the stats show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogStats {
    /// The checkpoint's tree size (entries in the log).
    pub tree_size: u64,
    /// Its root hash, base64 as the checkpoint writes it.
    pub root_hash: String,
    /// The log's origin line.
    pub origin: String,
    /// When the checkpoint file was written (its modification time: the checkpoint text
    /// carries no time of its own).
    pub checkpoint_written_at: Option<String>,
    /// Seconds from then to `generatedAt`.
    pub checkpoint_age_seconds: Option<u64>,
    /// Log entries the index has read (below the tree size while it catches up).
    pub indexed_entries: u64,
}

/// Everything `/api/v1/stats` answers and the desk's stats page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// When these numbers were computed (they are reused for [`STATS_CACHE_SECONDS`]).
    pub generated_at: String,
    /// How long they are reused, in seconds.
    pub cache_seconds: u64,
    /// Targets by state.
    pub targets: TargetCounts,
    /// Changes by window.
    pub changes: ChangeStats,
    /// Observations and changes per UTC day, the last [`ACTIVITY_DAYS`] days, oldest first,
    /// every day present (zeros included).
    pub daily: Vec<DayCount>,
    /// The newest crawl (HISTOR's `lastRun`).
    pub last_run: Option<RunStats>,
    /// The newest package sweep.
    pub last_sweep: Option<RunStats>,
    /// The log.
    pub log: LogStats,
    /// The starter-policy census: targets (and servers) whose current tool set has tools in
    /// each category (`toolmark_index::census`, the same as `/api/v1/census`).
    pub sensitive: toolmark_index::CensusSummary,
    /// The rule-set scan of the targets' current tool sets and instructions.
    pub scans: ScanStats,
    /// The hosts serving the most endpoints (the first [`MAX_HOSTS`]; the JSON route lists
    /// them at `/api/v1/stats/hosts`, not here).
    #[serde(skip)]
    pub hosts: HostCounts,
}

/// The rule-set scan across the index (`toolmark_index::scans`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanStats {
    /// The rule set the code scans with now (`toolmark-rules/N`).
    pub rules: &'static str,
    /// Its digest (SRI), as `/api/v1/rules` serves it.
    pub rules_digest: &'static str,
    /// Targets scanned (every target with an `ok` observation), flagged (any match), blocked
    /// (a block-tier match), with a toxic flow, and scanned with the current rule set.
    pub totals: toolmark_index::ScanTotals,
    /// Every rule class, in the rule set's order, with the targets (and their servers) whose
    /// scan has a match of it (zero included).
    pub by_class: Vec<toolmark_index::ClassCount>,
}

impl ScanStats {
    fn compute(index: &Index) -> Result<ScanStats, ApiError> {
        let counted = index.flagged_by_class()?;
        let by_class = toolmark_toolset::rules::RuleClass::ALL
            .iter()
            .map(|k| {
                counted
                    .iter()
                    .find(|c| c.class == k.as_str())
                    .cloned()
                    .unwrap_or(toolmark_index::ClassCount {
                        class: k.as_str().to_owned(),
                        targets: 0,
                        servers: 0,
                    })
            })
            .collect();
        Ok(ScanStats {
            rules: toolmark_toolset::rules::RULES_ID,
            rules_digest: crate::rules::digest(),
            totals: index.scan_totals()?,
            by_class,
        })
    }
}

/// `now` as Unix seconds.
fn unix_now(now: SystemTime) -> u64 {
    now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Stats {
    /// Compute the stats at `now`.
    pub fn compute(state: &AppState, now: SystemTime) -> Result<Stats, ApiError> {
        let t = unix_now(now);
        let cp = state.checkpoint().map_err(ApiError::internal)?;
        let written = state.log.checkpoint_written();
        let index = state.index.get();
        let since = |hours: u64| toolmark_index::time::from_unix(t.saturating_sub(hours * 3600));
        let mut windows = BTreeMap::new();
        for (name, hours) in [("last24h", 24), ("last7d", 168), ("last30d", 720)] {
            windows.insert(name, index.change_counts_since(&since(hours))?);
        }
        let changes = ChangeStats {
            last24h: windows["last24h"].total,
            last7d: windows["last7d"].total,
            last30d: windows["last30d"].total,
            total: index.change_total()?,
            windows,
        };
        Ok(Stats {
            generated_at: toolmark_index::time::utc(now),
            cache_seconds: STATS_CACHE_SECONDS,
            targets: index.target_counts_by_state()?,
            changes,
            daily: daily(&index, t)?,
            last_run: index.last_run_of_kind("crawl")?.map(RunStats::from_row),
            last_sweep: index.last_run_of_kind("sweep")?.map(RunStats::from_row),
            log: LogStats {
                tree_size: cp.checkpoint.size,
                root_hash: cp.checkpoint.root.to_base64(),
                origin: cp.checkpoint.origin.clone(),
                checkpoint_written_at: written.map(toolmark_index::time::utc),
                checkpoint_age_seconds: written
                    .map(|w| now.duration_since(w).map_or(0, |d| d.as_secs())),
                indexed_entries: index.log_size_indexed()?,
            },
            hosts: index.hosts_by_endpoints(MAX_HOSTS)?,
            sensitive: index.census_summary()?,
            scans: ScanStats::compute(&index)?,
        })
    }
}

/// The last [`ACTIVITY_DAYS`] UTC days up to the one holding `now`, each with its counts.
fn daily(index: &Index, now: u64) -> Result<Vec<DayCount>, ApiError> {
    let today = now / 86_400;
    let first = today + 1 - ACTIVITY_DAYS.min(today + 1);
    let days: Vec<String> = (first..=today)
        .map(|d| toolmark_index::time::from_unix(d * 86_400)[..10].to_owned())
        .collect();
    Ok(index.daily_activity(&days)?)
}

/// The stats of the last [`STATS_CACHE_SECONDS`], computed by one request at a time.
#[derive(Default)]
pub struct StatsCache {
    slot: Mutex<Option<(Instant, Arc<Stats>)>>,
}

impl StatsCache {
    /// The cached stats if they are younger than [`STATS_CACHE_SECONDS`], else fresh ones
    /// (computed while holding the cache, so concurrent callers wait and share them). Blocks:
    /// call it off the async workers.
    pub fn get(&self, state: &AppState) -> Result<Arc<Stats>, ApiError> {
        let mut slot = self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, stats)) = slot.as_ref() {
            if at.elapsed() < Duration::from_secs(STATS_CACHE_SECONDS) {
                return Ok(stats.clone());
            }
        }
        let stats = Arc::new(Stats::compute(state, (state.clock)())?);
        *slot = Some((Instant::now(), stats.clone()));
        Ok(stats)
    }
}

fn json_with(value: &impl Serialize, cache_seconds: u64) -> Response {
    let mut r = axum::Json(value).into_response();
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_str(&format!("public, max-age={cache_seconds}"))
            .unwrap_or(HeaderValue::from_static("no-cache")),
    );
    r
}

async fn stats_json(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let stats = blocking(move || state.stats.get(&state)).await?;
    Ok(json_with(&*stats, STATS_CACHE_SECONDS))
}

async fn hosts_json(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let p = Params::new(query)?;
    let limit = match p.integer("limit") {
        Ok(None) => DEFAULT_HOSTS,
        Ok(Some(n)) if (1..=i64::from(MAX_HOSTS)).contains(&n) => n as u32,
        _ => {
            return Err(crate::servers::bad(format!(
                "limit must be an integer from 1 to {MAX_HOSTS}"
            )));
        }
    };
    let stats = blocking(move || state.stats.get(&state)).await?;
    let hosts = HostCounts {
        hosts: stats
            .hosts
            .hosts
            .iter()
            .take(limit as usize)
            .cloned()
            .collect(),
        distinct_hosts: stats.hosts.distinct_hosts,
    };
    Ok(json_with(&hosts, STATS_CACHE_SECONDS))
}

/// A badge's headers: cached for [`BADGE_CACHE_SECONDS`], and for the SVG a policy that lets
/// it run nothing when opened on its own.
fn badge_response(body: Response, svg: bool) -> Response {
    let mut r = body;
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&format!("public, max-age={BADGE_CACHE_SECONDS}")) {
        h.insert(header::CACHE_CONTROL, v);
    }
    if svg {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("image/svg+xml; charset=utf-8"),
        );
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'"),
        );
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
    }
    r
}

/// Target `id`'s badge (the id is checked by the caller).
async fn target_badge(state: Arc<AppState>, id: String) -> Result<Badge, ApiError> {
    blocking(move || {
        let facts = state.index.get().badge_facts(&id)?;
        Ok(Badge::for_target(facts.as_ref(), unix_now((state.clock)())))
    })
    .await
}

async fn target_svg(
    State(state): State<Arc<AppState>>,
    Path(file): Path<String>,
) -> Result<Response, ApiError> {
    let id = file
        .strip_suffix(".svg")
        .filter(|id| valid_id(id))
        .ok_or_else(|| {
            ApiError::NotFound("a badge is /badge/<id>.svg, the id 16 lowercase hex digits".into())
        })?;
    let badge = target_badge(state, id.to_owned()).await?;
    Ok(badge_response(badge.svg().into_response(), true))
}

async fn target_shields(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    if !valid_id(&id) {
        return Err(crate::servers::bad(
            "a server id is 16 lowercase hex digits (or log, pinned, changes, checkpoint)",
        ));
    }
    let badge = target_badge(state, id).await?;
    Ok(badge_response(
        axum::Json(badge.shields()).into_response(),
        false,
    ))
}

fn shields(label: &str, message: String, color: Color) -> Response {
    let badge = Badge {
        label: label.to_owned(),
        message,
        color,
        state: "global",
    };
    badge_response(axum::Json(badge.shields()).into_response(), false)
}

async fn log_badge(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let stats = blocking(move || state.stats.get(&state)).await?;
    Ok(shields(
        "toolmark log",
        format!("{} entries", stats.log.tree_size),
        Color::Blue,
    ))
}

async fn pinned_badge(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let stats = blocking(move || state.stats.get(&state)).await?;
    Ok(shields(
        "tool sets pinned",
        format!("{} of {}", stats.targets.pinned, stats.targets.listed),
        Color::Blue,
    ))
}

async fn changes_badge(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let stats = blocking(move || state.stats.get(&state)).await?;
    Ok(shields(
        "changes (7 days)",
        stats.changes.last7d.to_string(),
        Color::Blue,
    ))
}

async fn checkpoint_badge(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let stats = blocking(move || state.stats.get(&state)).await?;
    let (message, color) = match stats.log.checkpoint_age_seconds {
        None => ("unknown".to_owned(), Color::LightGrey),
        Some(age) => (
            format!("{} ago", human_age(age)),
            if age > CHECKPOINT_STALE_SECONDS {
                Color::Yellow
            } else {
                Color::BrightGreen
            },
        ),
    };
    Ok(shields("checkpoint", message, color))
}

/// An age in its largest whole unit: `45s`, `12m`, `5h`, `3d`.
pub fn human_age(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}
