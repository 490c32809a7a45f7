//! The API replica's follower: keeps the replica's own index (SQLite, local) a verified
//! materialised view of the published log (`Index::follow`: the checkpoint's signature, every
//! entry hashed into the verified tree, documents checked against their entries), polling the
//! log's public files every interval, and says how far behind it is. A replica with no index
//! joins from the newest index snapshot in the bucket ([`join_from_snapshot`]); one replica
//! publishes them ([`SnapshotPolicy`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use toolmark_index::snapshot::{self, Published};
use toolmark_index::{DataDir, Index};
use toolmark_log::reader::{Reader, Signed};

use crate::shared::Db;
use crate::{RoleError, Stop, chain};

/// How often a replica looks for a newer checkpoint unless told otherwise.
pub const DEFAULT_FOLLOW_INTERVAL: Duration = Duration::from_secs(2);

/// A publishing replica's cadence: a snapshot after a pass once the index has grown by
/// `every_entries` since the bucket's newest snapshot, or by anything once `every` has passed
/// since this replica's last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotPolicy {
    /// Entries the index must have grown by (default [`SNAPSHOT_EVERY_ENTRIES`]).
    pub every_entries: u64,
    /// Time after which any growth is published (default [`SNAPSHOT_EVERY`]).
    pub every: Duration,
}

/// Entries after which a publishing replica publishes a new snapshot unless told otherwise.
pub const SNAPSHOT_EVERY_ENTRIES: u64 = 100_000;

/// Time after which a publishing replica publishes any growth unless told otherwise.
pub const SNAPSHOT_EVERY: Duration = Duration::from_secs(60 * 60);

impl Default for SnapshotPolicy {
    fn default() -> Self {
        SnapshotPolicy {
            every_entries: SNAPSHOT_EVERY_ENTRIES,
            every: SNAPSHOT_EVERY,
        }
    }
}

/// What the follower knows of its lag, for `/metrics`.
#[derive(Debug, Default)]
pub struct FollowerStatus {
    /// Entries indexed (the verified tree's size).
    indexed: AtomicU64,
    /// The size of the newest checkpoint seen published.
    published: AtomicU64,
    /// Follow passes that failed.
    failures: AtomicU64,
    /// Since when the index has been behind the published checkpoint (`None`: caught up).
    behind_since: Mutex<Option<Instant>>,
    /// The last pass's error, if it failed.
    last_error: Mutex<Option<String>>,
    /// The log's verifier key, once read from the trusted head store (or, on one box, the
    /// data directory's log).
    vkey: std::sync::OnceLock<String>,
    /// The tree size of the newest snapshot in the bucket, as this replica last saw or
    /// published it (`None`: not looked yet).
    snapshot_size: Mutex<Option<u64>>,
    /// When this replica last published one.
    snapshot_at: Mutex<Option<Instant>>,
    /// Snapshots this replica published.
    snapshots: AtomicU64,
}

impl FollowerStatus {
    /// Entries indexed.
    pub fn indexed(&self) -> u64 {
        self.indexed.load(Ordering::Relaxed)
    }

    /// Entries published but not indexed yet (as of the last look).
    pub fn lag_entries(&self) -> u64 {
        self.published
            .load(Ordering::Relaxed)
            .saturating_sub(self.indexed())
    }

    /// How long the index has been behind the newest checkpoint seen (0 when caught up).
    pub fn lag(&self) -> Duration {
        self.behind_since
            .lock()
            .ok()
            .and_then(|b| b.map(|t| t.elapsed()))
            .unwrap_or_default()
    }

    /// The last pass's error, if it failed.
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|e| e.clone())
    }

    /// The follower's metrics in Prometheus' text format.
    pub fn prometheus(&self) -> String {
        format!(
            "# HELP toolmark_follower_indexed_entries Entries this replica's index holds (verified).\n\
             # TYPE toolmark_follower_indexed_entries gauge\n\
             toolmark_follower_indexed_entries {}\n\
             # HELP toolmark_follower_lag_entries Entries published and not yet indexed by this replica.\n\
             # TYPE toolmark_follower_lag_entries gauge\n\
             toolmark_follower_lag_entries {}\n\
             # HELP toolmark_follower_lag_seconds How long this replica's index has been behind the newest checkpoint it saw.\n\
             # TYPE toolmark_follower_lag_seconds gauge\n\
             toolmark_follower_lag_seconds {:.3}\n\
             # HELP toolmark_follower_failures_total Follow passes that failed.\n\
             # TYPE toolmark_follower_failures_total counter\n\
             toolmark_follower_failures_total {}\n\
             # HELP toolmark_follower_snapshots_published_total Index snapshots this replica published.\n\
             # TYPE toolmark_follower_snapshots_published_total counter\n\
             toolmark_follower_snapshots_published_total {}\n",
            self.indexed(),
            self.lag_entries(),
            self.lag().as_secs_f64(),
            self.failures.load(Ordering::Relaxed),
            self.snapshots.load(Ordering::Relaxed),
        )
    }

    fn saw(&self, published: u64) {
        self.published.fetch_max(published, Ordering::Relaxed);
        if let Ok(mut b) = self.behind_since.lock() {
            if published > self.indexed() && b.is_none() {
                *b = Some(Instant::now());
            }
        }
    }

    fn reached(&self, indexed: u64) {
        self.indexed.store(indexed, Ordering::Relaxed);
        if let Ok(mut b) = self.behind_since.lock() {
            if indexed >= self.published.load(Ordering::Relaxed) {
                *b = None;
            }
        }
        if let Ok(mut e) = self.last_error.lock() {
            *e = None;
        }
    }

    fn failed(&self, why: String) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut e) = self.last_error.lock() {
            *e = Some(why);
        }
    }
}

/// A reader of the log's public files under the trusted key, and its verified checkpoint.
fn reader(dir: &DataDir, status: &FollowerStatus) -> Result<(Reader, Signed), RoleError> {
    let public = dir
        .log_public_objects()
        .map_err(RoleError::doing("the log's public files"))?;
    let vkey = match status.vkey.get() {
        Some(v) => v.clone(),
        None => {
            let v = trusted_vkey(dir)?;
            status.vkey.get_or_init(|| v).clone()
        }
    };
    let reader = Reader::new(public, &vkey);
    let published = reader
        .checkpoint()
        .map_err(RoleError::doing("the published checkpoint"))?;
    status.saw(published.checkpoint.size);
    Ok((reader, published))
}

/// One follow pass over `dir`: its index brought up to the log's published checkpoint, and with
/// `listings` (the cluster's PostgreSQL) the harvests stamped below that size applied
/// ([`apply_listings`]). Blocks; returns the size indexed.
pub fn follow_once(
    dir: &DataDir,
    status: &FollowerStatus,
    listings: Option<&Db>,
) -> Result<u64, RoleError> {
    pass(dir, status, None, listings)
}

/// Applies to `index` (which follows the log to `size`) the cluster's harvests stamped below
/// `size` that it has not applied (`toolmark_queue::harvests`): their servers and targets,
/// listed at their runs' start, as a crawl on one box lists them. Every replica at one size
/// has applied the same ones. Returns how many it applied.
pub fn apply_listings(
    index: &mut Index,
    blobs: &toolmark_index::Blobs,
    db: &Db,
    size: u64,
) -> Result<usize, RoleError> {
    let applied = index
        .listing_applied()
        .map_err(RoleError::doing("the index's listing"))?;
    let harvests = db
        .with(|queue| queue.harvests_before(applied, size))
        .map_err(RoleError::doing("the cluster's harvests"))?;
    for h in &harvests {
        let sri: toolmark_toolset::Sri = h.snapshot.parse().map_err(|e| {
            RoleError::Refused(format!("harvest {}: snapshot {}: {e}", h.run, h.snapshot))
        })?;
        let bytes = blobs
            .get(&sri)
            .map_err(RoleError::doing(format!("harvest {}: its snapshot", h.run)))?
            .ok_or_else(|| {
                RoleError::Refused(format!(
                    "harvest {}: snapshot {} is not stored",
                    h.run, h.snapshot
                ))
            })?;
        let page = toolmark_observation::registry::parse_snapshot(&bytes)
            .map_err(RoleError::doing(format!("harvest {}: its snapshot", h.run)))?;
        let input = toolmark_index::RunInput {
            started_at: h.started_at.clone(),
            registry: h.registry.clone(),
            records: toolmark_observation::registry::latest_per_name(page.servers),
            harvest_complete: h.complete,
            delisted: h.delisted.clone(),
            allow_cleartext: h.allow_cleartext,
        };
        index
            .apply_listing(&input, h.seq)
            .map_err(RoleError::doing(format!("listing harvest {}", h.run)))?;
        tracing::info!("listed harvest {} ({} servers)", h.run, input.records.len());
    }
    Ok(harvests.len())
}

/// Most cluster runs one follow pass records ([`ended_runs`]).
pub const RUNS_PER_PASS: usize = 16;

/// A cluster crawl run that has ended ([`ended_runs`]): its harvest, what became of its jobs,
/// and its remote targets per status (their report lines', as one box's run report counts).
#[derive(Debug, Clone)]
pub struct EndedRun {
    /// The run's harvest, as the scheduler recorded it.
    pub harvest: toolmark_queue::Harvest,
    /// Its jobs.
    pub outcome: toolmark_queue::RunOutcome,
    /// Its finished jobs per the status of their report line.
    pub totals: std::collections::BTreeMap<String, u64>,
}

/// The cluster's crawl runs after the last one `index` recorded, whose listing it has applied,
/// whose jobs have all ended and whose entries are all committed to the log (in harvest
/// order, stopping at the first that has not; at most [`RUNS_PER_PASS`]). A run with no job
/// left in the queue (none were enqueued, or they were pruned: `cluster::PRUNE_AFTER`) counts
/// as ended once a later run's harvest is recorded and stamped. A run still open costs one
/// look at the queue's open jobs.
pub fn ended_runs(index: &Index, db: &Db) -> Result<Vec<EndedRun>, RoleError> {
    let reported = index
        .cluster_run_reported()
        .map_err(RoleError::doing("the index's runs"))?;
    let applied = index
        .listing_applied()
        .map_err(RoleError::doing("the index's listing"))?;
    let harvests = db
        .with(|q| q.harvests_before(reported, u64::MAX))
        .map_err(RoleError::doing("the cluster's harvests"))?;
    let mut ended = Vec::new();
    for (i, h) in harvests.iter().enumerate().take(RUNS_PER_PASS) {
        let doing = || RoleError::doing(format!("run {}", h.run));
        if h.seq > applied
            || db
                .with(|q| q.run_open(&h.run, crate::cluster::REMOTE))
                .map_err(doing())?
        {
            break;
        }
        let outcome = db
            .with(|q| q.run_outcome(&h.run, crate::cluster::REMOTE))
            .map_err(doing())?;
        let done = if outcome.jobs == 0 {
            i + 1 < harvests.len()
        } else {
            outcome.open == 0 && outcome.unlogged == 0
        };
        if !done {
            break;
        }
        // Ended: its results change no more (read once, when the run is recorded).
        let lines: Vec<toolmark_index::Recorded> = db
            .with(|q| q.run_results(&h.run, crate::cluster::REMOTE))
            .map_err(doing())?
            .iter()
            .filter_map(|r| match serde_json::from_str(r) {
                Ok(line) => Some(line),
                Err(e) => {
                    tracing::warn!("run {}: a job's report line: {e}", h.run);
                    None
                }
            })
            .collect();
        ended.push(EndedRun {
            harvest: h.clone(),
            outcome,
            totals: toolmark_ingest::pipeline::totals(&lines),
        });
    }
    Ok(ended)
}

/// Records in `index` (which follows the log to `size`) the `ended` runs ([`ended_runs`])
/// whose listing it has applied, in order: each a `crawl` run with the scheduler's part of its
/// report (harvest, servers, delisted) and the queue's (finished, totals per status of its
/// remote targets, its failed jobs as `abandoned`); `logSize` is `size`, the log this replica
/// had followed when it recorded the run (its entries included). Returns how many it recorded.
pub fn report_runs(index: &mut Index, ended: &[EndedRun], size: u64) -> Result<usize, RoleError> {
    let applied = index
        .listing_applied()
        .map_err(RoleError::doing("the index's listing"))?;
    let mut recorded = 0;
    for EndedRun {
        harvest: h,
        outcome,
        totals,
    } in ended.iter().take_while(|r| r.harvest.seq <= applied)
    {
        // A harvest recorded without a report (before reports were): what the row says.
        let mut report: toolmark_ingest::RunReport = serde_json::from_str(&h.report)
            .unwrap_or_else(|_| toolmark_ingest::RunReport {
                registry: h.registry.clone(),
                started_at: h.started_at.clone(),
                harvest: toolmark_ingest::HarvestReport {
                    mode: h.mode.clone(),
                    complete: h.complete,
                    ..Default::default()
                },
                delisted: h.delisted.clone(),
                ..Default::default()
            });
        let finished_at = outcome
            .finished
            .map_or_else(|| h.started_at.clone(), toolmark_observation::time::utc);
        report.finished_at = finished_at.clone();
        // From the first job enqueued (the harvest done) to the last finished.
        report.observe_seconds = outcome
            .started
            .zip(outcome.finished)
            .and_then(|(start, end)| end.duration_since(start).ok())
            .map_or(0.0, |d| d.as_secs_f64());
        report.abandoned = usize::try_from(outcome.failed).unwrap_or(usize::MAX);
        report.log_size = size;
        report.totals = totals.clone();
        let input = toolmark_index::RunInput {
            started_at: h.started_at.clone(),
            registry: h.registry.clone(),
            records: Vec::new(),
            harvest_complete: h.complete,
            delisted: Vec::new(),
            allow_cleartext: h.allow_cleartext,
        };
        let status = if outcome.failed == 0 {
            toolmark_index::RunStatus::Complete
        } else {
            toolmark_index::RunStatus::Failed
        };
        index
            .record_cluster_run(h.seq, &input, &finished_at, status, |id| {
                report.run = id;
                serde_json::to_string(&report)
            })
            .map_err(RoleError::doing(format!("recording run {}", h.run)))?;
        recorded += 1;
    }
    Ok(recorded)
}

/// The log's committed size as its head store has it (0: no log yet).
fn committed_size(dir: &DataDir) -> Result<u64, RoleError> {
    let mut stores = dir
        .log_stores()
        .map_err(RoleError::doing("the log's head store"))?;
    Ok(stores
        .head
        .head()
        .map_err(RoleError::doing("the log's head"))?
        .map_or(0, |h| h.size))
}

/// [`follow_once`], then a snapshot published if `policy` says one is due.
fn pass(
    dir: &DataDir,
    status: &FollowerStatus,
    policy: Option<&SnapshotPolicy>,
    listings: Option<&Db>,
) -> Result<u64, RoleError> {
    let (reader, _) = reader(dir, status)?;
    let blobs = dir.blobs().map_err(RoleError::doing("the documents"))?;
    let mut index =
        Index::open(&dir.index_path()).map_err(RoleError::doing("opening the index"))?;
    // The runs that had ended before the log is read, and the log's committed size then
    // (their entries are in it; a checkpoint that includes them may be published later, after
    // the witnesses' round): recorded once the pass has followed to that size.
    let ended = listings.map(|db| {
        let runs = ended_runs(&index, db)?;
        let committed = if runs.is_empty() {
            0
        } else {
            committed_size(dir)?
        };
        Ok::<_, RoleError>((runs, committed))
    });
    let followed = index
        .follow(&reader, &blobs)
        .map_err(RoleError::doing("following the log"))?;
    status.saw(followed.to);
    status.reached(followed.to);
    // The listing after the log: a harvest that cannot be listed (its snapshot missing, the
    // database down) fails the pass but leaves the follower's progress counted.
    let listed = match listings {
        Some(db) => apply_listings(&mut index, &blobs, db, followed.to)
            .and_then(|_| match ended.unwrap_or(Ok((Vec::new(), 0)))? {
                (runs, committed) if followed.to >= committed => {
                    report_runs(&mut index, &runs, followed.to)
                }
                // Not published that far yet: the next pass looks again.
                _ => Ok(0),
            })
            .map(|_| ()),
        None => Ok(()),
    };
    if let Some(policy) = policy {
        if let Err(e) = publish_if_due(dir, status, policy, &index, &followed.checkpoint) {
            // The index followed; only the snapshot failed (tried again after the next pass).
            tracing::warn!("index snapshot not published: {}", chain(&e));
        }
    }
    listed?;
    Ok(followed.to)
}

/// Publishes a snapshot of `index` (at `at`) when `policy` says one is due.
fn publish_if_due(
    dir: &DataDir,
    status: &FollowerStatus,
    policy: &SnapshotPolicy,
    index: &Index,
    at: &Signed,
) -> Result<(), RoleError> {
    let size = at.checkpoint.size;
    let objects = dir
        .storage()
        .objects_root(dir.root())
        .map_err(RoleError::doing("the object store"))?;
    let known = status.snapshot_size.lock().ok().and_then(|k| *k);
    let newest = match known {
        Some(k) => k,
        None => snapshot::newest(&objects)
            .ok()
            .flatten()
            .map_or(0, |m| m.tree_size),
    };
    let stale = status
        .snapshot_at
        .lock()
        .ok()
        .and_then(|t| *t)
        .is_none_or(|t| t.elapsed() >= policy.every);
    let grown = size.saturating_sub(newest);
    if size == 0 || grown == 0 || (grown < policy.every_entries && !stale) {
        if let Ok(mut k) = status.snapshot_size.lock() {
            *k = Some(newest);
        }
        return Ok(());
    }
    let started = Instant::now();
    let scratch = dir.root().join("index.snapshot.tmp");
    let published = snapshot::publish(index, at, &objects, &scratch)
        .map_err(RoleError::doing("publishing an index snapshot"))?;
    let newest = match published {
        Published::New(m) => {
            status.snapshots.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                "index snapshot published at {} entries ({} bytes, {} parts, sha256 {}) in {:?}",
                m.tree_size,
                m.bytes,
                m.parts.len(),
                m.sha256,
                started.elapsed()
            );
            m.tree_size
        }
        Published::NotNewer(n) => n,
    };
    if let Ok(mut k) = status.snapshot_size.lock() {
        *k = Some(newest);
    }
    if let Ok(mut t) = status.snapshot_at.lock() {
        *t = Some(Instant::now());
    }
    Ok(())
}

/// A replica with no index joins from the newest index snapshot in the bucket (checked as
/// [`toolmark_index::snapshot`] says). Returns the tree size joined at; `None` when there is
/// an index already, no snapshot, or a snapshot that was refused (logged; the first pass then
/// derives the index from the whole log).
pub fn join_from_snapshot(dir: &DataDir, status: &FollowerStatus) -> Option<u64> {
    let dest = dir.index_path();
    if dest.exists() {
        return None;
    }
    let started = Instant::now();
    let joined = (|| {
        let (reader, published) = reader(dir, status)?;
        let objects = dir
            .storage()
            .objects_root(dir.root())
            .map_err(RoleError::doing("the object store"))?;
        snapshot::join(&objects, &reader, &published, &dest)
            .map_err(RoleError::doing("joining from the index snapshot"))
    })();
    match joined {
        Ok(Some(m)) => {
            tracing::info!(
                "joined from the index snapshot at {} entries ({} bytes) in {:?}",
                m.tree_size,
                m.bytes,
                started.elapsed()
            );
            Some(m.tree_size)
        }
        Ok(None) => {
            tracing::info!("no index snapshot to join from: deriving the index from the log");
            None
        }
        Err(e) => {
            tracing::warn!(
                "index snapshot refused: {}; deriving the index from the log",
                chain(&e)
            );
            None
        }
    }
}

/// The log's verifier key as the head store records it: the trusted store (PostgreSQL in a
/// cluster, the log's own SQLite on one box), not the bucket's `public/vkey`, which a replica
/// must not take on trust.
fn trusted_vkey(dir: &DataDir) -> Result<String, RoleError> {
    let mut stores = dir
        .log_stores()
        .map_err(RoleError::doing("the log's head store"))?;
    stores
        .head
        .meta("vkey")
        .map_err(RoleError::doing("the log's verifier key"))?
        .map(|v| v.trim().to_owned())
        .ok_or_else(|| RoleError::Refused("the head store records no log key (no log yet)".into()))
}

/// Follows until `stop`: a pass every `interval` (each on a blocking thread); a failed pass is
/// logged, counted and tried again at the next interval (a tampered or unreachable bucket
/// stalls the replica's index, never corrupts it).
/// With `publish`, a snapshot follows a pass when one is due (see [`SnapshotPolicy`]); with
/// `listings` (the cluster's PostgreSQL), each pass applies the harvests stamped below the
/// size it reached ([`apply_listings`]).
pub async fn follow(
    dir: DataDir,
    status: Arc<FollowerStatus>,
    interval: Duration,
    publish: Option<SnapshotPolicy>,
    listings: Option<Arc<Db>>,
    stop: Stop,
) {
    loop {
        let (d, s, l) = (dir.clone(), status.clone(), listings.clone());
        match tokio::task::spawn_blocking(move || pass(&d, &s, publish.as_ref(), l.as_deref()))
            .await
        {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                let why = chain(&e);
                tracing::warn!("follower: {why}");
                status.failed(why);
            }
            Err(e) => {
                tracing::warn!("follower task: {e}");
                status.failed(e.to_string());
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
    }
}
