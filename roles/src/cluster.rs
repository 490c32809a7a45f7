//! The cluster's scheduler, worker and sequencer roles over the job queue in PostgreSQL
//! (`toolmark-queue`) and the log's stores (issue #27).
//!
//! - The **scheduler** harvests the registry (it alone asks the registry, so its pace holds
//!   for the whole cluster), stores the harvest's items as one document in the blob store
//!   (the snapshot every worker reads its targets from) and enqueues one [`REMOTE`] job per
//!   remote target of the run ([`enqueue_crawl`]).
//! - A **worker** claims jobs, takes a place under its host's limit across every worker
//!   ([`toolmark_queue::Queue::acquire_host`]; a job whose host is full waits in the worker,
//!   claimed, without counting an attempt), observes the remote (the crawler's own `crawl`, one
//!   task per job, `crawl.concurrency` at once, more jobs claimed as they end), stores the
//!   observation document, and completes the job with the log entry as its hand-off, in one
//!   transaction fenced by the claim ([`Worker::work_once`]). It never touches the tree.
//! - The **sequencer** appends the hand-offs to the log in the order the queue gives them (by
//!   run and key) and marks them taken ([`sequence_once`]); one is active at a time (a lease),
//!   and the head store's compare-and-swap fences any other. An entry handed on twice (a
//!   sequencer that died between its append and marking the hand-off taken) is logged once:
//!   the log drops an observation it holds already.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolmark_config::Config;
use toolmark_crawler::crawl::{self, CrawlConfig, Outcome, Refusals, host_key};
use toolmark_crawler::harvest::{self, HarvestConfig, Mode};
use toolmark_index::record::{Prepared, prepare, target_id};
use toolmark_index::{Blobs, DataDir, IndexError, RunInput, TargetOutcome};
use toolmark_log::Log;
use toolmark_log::entry::Entry;
use toolmark_log::store::HeadSpec;
use toolmark_observation::registry::{self, Target, TargetKind};
use toolmark_queue::{Claim, NewJob, Queue, QueueError};
use toolmark_toolset::Sri;

use crate::{RoleError, Stop};

pub mod packages;
pub mod polling;
pub mod popularity;
pub mod webhooks;

/// The kind of a job observing one remote target.
pub const REMOTE: &str = "remote";
/// The kind of a job observing one package version in the sandbox.
pub const PACKAGE: &str = "package";
/// The shortest lease a worker takes on its claims and host places, whatever
/// `schedules.lease_seconds` says.
pub const MIN_LEASE: Duration = Duration::from_secs(3);
/// How long a worker's claims and host places last (`schedules.lease_seconds`, at least
/// [`MIN_LEASE`]): renewed every third of it while the worker holds them, so only a dead or
/// stalled worker lets them lapse, and its jobs return to the queue that long after.
pub fn worker_lease(config: &Config) -> Duration {
    Duration::from_secs(config.schedules.lease_seconds).max(MIN_LEASE)
}
/// Jobs a worker claims in one request at most (it keeps `crawl.concurrency` observations
/// running, claiming more as they end).
pub const WORKER_BATCH: usize = 32;
/// How long a worker waits before it asks again for a place on a host that was full (sooner
/// when one of its own observations on that host ends). The job waits in the worker, claimed.
pub const HOST_BUSY_DELAY: Duration = Duration::from_millis(250);
/// Jobs a worker holds claimed while they wait for their host's place, at most (a few hundred
/// bytes each; every one is renewed each third of the lease). The busiest hosts' jobs wait
/// here while the worker goes on with other hosts'.
pub const MAX_WAITING: usize = 16_384;
/// How long a job whose result could not be stored (the bucket or the database failed) waits
/// before another attempt.
pub const FAILED_RETRY: Duration = Duration::from_secs(30);
/// Hand-offs a sequencer appends in one batch.
pub const SEQUENCER_BATCH: usize = 1000;
/// The sequencer's and the scheduler's lease: a standby takes over this long after the active
/// one stops renewing it.
pub const ROLE_LEASE: Duration = Duration::from_secs(15);
/// Snapshots a worker keeps parsed (each run has one).
const SNAPSHOTS_KEPT: usize = 4;

/// A remote job's payload: which target of which harvest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoteJob {
    /// The harvest's items (a JSON array, in the blob store).
    pub snapshot: String,
    /// When the run started (RFC 3339): a skipped target's entry is dated so.
    pub started_at: String,
    /// The registry harvested.
    pub registry: String,
    /// Whether `http://` remotes are dialled (`crawl.allow_private`: tests and demos only).
    pub allow_cleartext: bool,
    /// The target's key in the run ([`remote_jobs`]).
    pub target: String,
}

/// A package job's payload: which version of which package target of which harvest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackageJob {
    /// The harvest's items the package is listed in (a JSON array, in the blob store).
    pub snapshot: String,
    /// When the sweep run started (RFC 3339).
    pub started_at: String,
    /// The registry harvested.
    pub registry: String,
    /// The package target (`index::record::target_id`).
    pub target: String,
    /// The version to observe (`None`: the package registry's latest).
    pub version: Option<String>,
    /// Why it was chosen (`ingest::sweep::choose`: `new-version`, `never-observed`, `retry`).
    pub why: String,
}

/// The name of the note ([`Queue::note`]) holding the latest harvest's snapshot of `registry`.
fn snapshot_note(registry: &str) -> String {
    format!("snapshot {}", registry.trim_end_matches('/'))
}

/// The PostgreSQL URL the cluster's roles share: the log's head store (`[storage] head`).
pub fn queue_url(config: &Config) -> Result<String, RoleError> {
    let spec = config
        .storage
        .spec()
        .map_err(RoleError::doing("[storage]"))?;
    match spec.head {
        HeadSpec::Postgres(url) => Ok(url),
        HeadSpec::Sqlite => Err(RoleError::Refused(
            "the cluster's roles share PostgreSQL: set [storage] head (--head, \
             TOOLMARK_STORAGE_HEAD) to a postgres:// URL"
                .into(),
        )),
    }
}

/// Who a role of this process is in the queue: `role@host:pid:start`, the start time in
/// nanoseconds making it unique where host names and pids repeat (containers run as pid 1).
pub fn holder(role: &str) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{role}@{}:{}:{start:x}", host.trim(), std::process::id())
}

/// What [`enqueue_crawl`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enqueued {
    /// The run (`crawl-<started>`).
    pub run: String,
    /// The harvest's snapshot in the blob store.
    pub snapshot: String,
    /// Remote targets listed.
    pub targets: usize,
    /// Jobs added (a run enqueued again adds none).
    pub added: u64,
    /// Whether the harvest reached the registry's last page.
    pub complete: bool,
}

impl Enqueued {
    /// What was enqueued, for people: `run R: N targets, M jobs added (snapshot S, harvest
    /// complete|incomplete)`.
    pub fn text(&self) -> String {
        format!(
            "run {}: {} targets, {} jobs added (snapshot {}, harvest {})",
            self.run,
            self.targets,
            self.added,
            self.snapshot,
            if self.complete {
                "complete"
            } else {
                "incomplete"
            }
        )
    }
}

/// One crawl run's jobs: a harvest of `config.registry` (a stop ends it before anything is
/// written) — with `crawl.harvest = "delta"` (the default) a delta since the last complete
/// harvest merged into its records, a full one when none is recorded or the last full one is
/// `crawl.full_harvest_days` old — the run's whole latest set stored as one snapshot document
/// and recorded for the replicas with what it delists (`toolmark_queue::harvests`), one [`REMOTE`] job per remote
/// target (the hosts with the most targets first), in the run `run` (default `crawl-<harvest start>`): a run enqueued again — by a
/// second scheduler, or a retry — adds no job it has. Blocks the calling thread (not one of
/// `runtime`'s workers).
pub fn enqueue_crawl(
    runtime: &tokio::runtime::Handle,
    config: &Config,
    blobs: &Blobs,
    queue: &mut Queue,
    run: Option<String>,
    stop: &Stop,
) -> Result<Enqueued, RoleError> {
    let registry_key = config.registry.trim_end_matches('/');
    // The run's time, as entries are dated (whole seconds): a skipped target's entry has it.
    let started_at = toolmark_observation::time::utc(std::time::SystemTime::now());
    // A delta since the last complete harvest, merged into its records, unless the crawl
    // harvests in full, none is recorded, or the last full one is `crawl.full_harvest_days`
    // old (as a crawl on one box does).
    let basis = queue
        .latest_harvest(&config.registry, true)
        .map_err(RoleError::doing("the last complete harvest"))?;
    let last_full = queue
        .last_full_harvest(&config.registry)
        .map_err(RoleError::doing("the last full harvest"))?;
    let full_due = last_full.is_none_or(|at| {
        chrono::DateTime::parse_from_rfc3339(&at).map_or(true, |at| {
            chrono::Utc::now().signed_duration_since(at)
                >= chrono::Duration::days(i64::from(config.crawl.full_harvest_days))
        })
    });
    let mode = match (&basis, config.crawl.harvest) {
        (Some(b), toolmark_ingest::HarvestPolicy::Delta)
            if !full_due && !b.next_since.is_empty() =>
        {
            Mode::Since(b.next_since.clone())
        }
        _ => Mode::Full,
    };
    let http = harvest::registry_client().map_err(RoleError::doing("the registry client"))?;
    let mut hc = HarvestConfig::new(registry_key, mode.clone());
    hc.rate = config.crawl.rate();
    let harvest_clock = std::time::Instant::now();
    let harvested = runtime.block_on(async {
        tokio::select! {
            h = harvest::harvest_partial(&http, &hc) => Some(h),
            () = stop.cancelled() => None,
        }
    });
    let (harvest, error) =
        harvested.ok_or_else(|| RoleError::Refused("stopped while harvesting".into()))?;
    if harvest.records.is_empty() && matches!(mode, Mode::Full) {
        if let Some(e) = error {
            return Err(RoleError::doing("harvesting the registry")(e));
        }
    }
    if let Some(e) = &error {
        tracing::warn!(
            "registry harvest incomplete ({e}); enqueueing the {} records read",
            harvest.records.len()
        );
    }
    // The run's whole latest set (a delta merged into its basis's) and what it delists.
    let (records, items, delisted) = match (&mode, &basis) {
        (Mode::Since(_), Some(b)) => merged(blobs, b, &harvest)?,
        _ => {
            // What the registry is known to list: the last complete harvest and the
            // incomplete ones since (one box's index knows every name it was shown).
            let mut known = std::collections::BTreeSet::new();
            for h in queue
                .harvests_since_complete(&config.registry)
                .map_err(RoleError::doing("the previous harvests"))?
            {
                known.extend(
                    snapshot_page(blobs, &h.snapshot)?
                        .servers
                        .into_iter()
                        .map(|r| r.name),
                );
            }
            let delisted = harvest::delisted(&known, &harvest);
            (
                registry::latest_per_name(harvest.records.clone()),
                harvest.items.clone(),
                delisted,
            )
        }
    };
    // The run's report as far as this scheduler knows it; a replica completes it once the
    // run's jobs have ended (`follower::report_runs`).
    let report = toolmark_ingest::RunReport {
        run: 0,
        registry: config.registry.clone(),
        started_at: started_at.clone(),
        finished_at: String::new(),
        harvest: toolmark_ingest::HarvestReport {
            reason: if matches!(mode, Mode::Since(_)) {
                "a delta since the last complete harvest"
            } else if matches!(config.crawl.harvest, toolmark_ingest::HarvestPolicy::Full) {
                "crawl.harvest = full"
            } else if basis.is_none() {
                "no complete harvest recorded"
            } else if full_due {
                "a full harvest is due (crawl.full_harvest_days)"
            } else {
                "the last complete harvest gives no time to ask a delta from"
            }
            .into(),
            ..toolmark_ingest::HarvestReport::new(
                &harvest,
                &mode,
                error.as_ref().map(ToString::to_string),
                harvest_clock.elapsed().as_secs_f64(),
            )
        },
        servers: records.len(),
        delisted: delisted.clone(),
        observe_seconds: 0.0,
        abandoned: 0,
        log_size: 0,
        totals: std::collections::BTreeMap::new(),
    };
    let snapshot = format!("[{}]", items.join(","));
    let sri = blobs
        .put(snapshot.as_bytes())
        .map_err(RoleError::doing("storing the harvest"))?;
    // The package sweep lists its packages from the latest harvest (a partial one too: what it
    // read is what the registry lists as far as anyone knows).
    queue
        .set_note(&snapshot_note(registry_key), &sri.to_string())
        .map_err(RoleError::doing("noting the harvest"))?;
    let input = RunInput {
        started_at,
        registry: config.registry.clone(),
        records,
        harvest_complete: harvest.complete,
        delisted: Vec::new(),
        allow_cleartext: config.crawl.allow_private,
    };
    let run = run.unwrap_or_else(|| format!("crawl-{}", input.started_at));
    // The replicas list the harvest's servers from the log size the sequencer stamps on it.
    queue
        .record_harvest(&toolmark_queue::Harvest {
            seq: 0,
            run: run.clone(),
            started_at: input.started_at.clone(),
            registry: input.registry.clone(),
            snapshot: sri.to_string(),
            complete: harvest.complete,
            allow_cleartext: input.allow_cleartext,
            delisted,
            mode: if matches!(mode, Mode::Full) {
                "full"
            } else {
                "delta"
            }
            .into(),
            // An incomplete harvest leaves the next delta where its basis left it.
            next_since: if harvest.complete {
                harvest.next_since.clone()
            } else {
                basis.map(|b| b.next_since).unwrap_or_default()
            },
            log_size: None,
            report: serde_json::to_string(&report).unwrap_or_default(),
        })
        .map_err(RoleError::doing("recording the harvest"))?;
    // The busiest hosts' jobs first (claims go in enqueue order): their places are the floor of
    // the run, so they start at once while the workers fill the rest with other hosts' jobs
    // (the single-box crawl's "most targets left first").
    let mut remotes: Vec<(String, String)> = remote_jobs(input.targets())
        .into_iter()
        .map(|(key, t)| match (&t.kind, &t.skip) {
            (TargetKind::Remote { url, declared, .. }, None) => {
                (host_key(&declared.dial_url(url)), key)
            }
            // Nothing to dial: no host.
            _ => (String::new(), key),
        })
        .collect();
    let mut per_host: HashMap<String, usize> = HashMap::new();
    for (host, _) in &remotes {
        *per_host.entry(host.clone()).or_default() += 1;
    }
    remotes.sort_by_key(|(host, _)| {
        (
            std::cmp::Reverse(if host.is_empty() { 0 } else { per_host[host] }),
            host.clone(),
        )
    });
    let jobs: Vec<NewJob> = remotes
        .into_iter()
        .map(|(_, key)| {
            let job = RemoteJob {
                snapshot: sri.to_string(),
                started_at: input.started_at.clone(),
                registry: input.registry.clone(),
                allow_cleartext: input.allow_cleartext,
                target: key,
            };
            NewJob {
                kind: REMOTE.to_owned(),
                key: job.target.clone(),
                payload: serde_json::to_string(&job).unwrap_or_default(),
            }
        })
        .collect();
    let added = queue
        .enqueue(&run, &jobs)
        .map_err(RoleError::doing("enqueueing the run"))?;
    Ok(Enqueued {
        run,
        snapshot: sri.to_string(),
        targets: jobs.len(),
        added,
        complete: harvest.complete,
    })
}

/// A stored harvest snapshot's records, with each one's item as JSON text
/// (`Page::items`); an item that does not parse is left out.
fn snapshot_page(blobs: &Blobs, snapshot: &str) -> Result<registry::Page, RoleError> {
    let sri: Sri = snapshot
        .parse()
        .map_err(|e| RoleError::Refused(format!("snapshot {snapshot}: {e}")))?;
    let bytes = blobs
        .get(&sri)
        .map_err(RoleError::doing(format!("snapshot {snapshot}")))?
        .ok_or_else(|| RoleError::Refused(format!("snapshot {snapshot} is not stored")))?;
    registry::parse_snapshot_with_items(&bytes)
        .map_err(RoleError::doing(format!("snapshot {snapshot}")))
}

/// A run's whole latest set, each record's item text, and the server names it delists.
type Merged = (
    Vec<toolmark_observation::registry::Record>,
    Vec<String>,
    Vec<String>,
);

/// A delta merged into its basis (the last complete harvest's snapshot): the whole latest
/// set (`harvest::apply_delta`), each record's item (the delta's where it has one), and the
/// names the basis listed that the merged set no longer does (deleted in the delta).
fn merged(
    blobs: &Blobs,
    basis: &toolmark_queue::Harvest,
    delta: &harvest::Harvest,
) -> Result<Merged, RoleError> {
    let held = snapshot_page(blobs, &basis.snapshot)?;
    let mut item_of: HashMap<(String, String), String> = HashMap::new();
    for (r, item) in held
        .servers
        .iter()
        .zip(held.items)
        .chain(delta.records.iter().zip(delta.items.iter().cloned()))
    {
        item_of.insert((r.name.clone(), r.version.clone()), item);
    }
    let before: std::collections::BTreeSet<String> =
        held.servers.iter().map(|r| r.name.clone()).collect();
    let records = harvest::apply_delta(held.servers, delta);
    let items = records
        .iter()
        .filter_map(|r| item_of.get(&(r.name.clone(), r.version.clone())).cloned())
        .collect();
    let after: std::collections::BTreeSet<&str> = records.iter().map(|r| r.name.as_str()).collect();
    let delisted = before
        .into_iter()
        .filter(|n| !after.contains(n.as_str()))
        .collect();
    Ok((records, items, delisted))
}

/// A run's remote targets, each with its job key: its target id (`index::record::target_id`),
/// and for a further target with the same id (a server listing one URL twice) `#2`, `#3`, … in
/// the order the run lists them, so that every target a crawl on one box observes is one job.
pub fn remote_jobs(targets: Vec<Target>) -> Vec<(String, Target)> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    targets
        .into_iter()
        .filter(|t| matches!(t.kind, TargetKind::Remote { .. }))
        .map(|t| {
            let id = target_id(&t);
            let n = seen.entry(id.clone()).or_default();
            *n += 1;
            let key = if *n == 1 { id } else { format!("{id}#{n}") };
            (key, t)
        })
        .collect()
}

/// A worker: its queue connection, the stores documents go to, and the snapshots it has read.
pub struct Worker {
    queue: Queue,
    holder: String,
    blobs: Blobs,
    crawl: CrawlConfig,
    /// Places per host across every worker.
    per_host: u32,
    /// Observations running at once: the crawl's concurrency.
    batch: usize,
    /// Its claims' and host places' lease ([`worker_lease`]).
    lease: Duration,
    snapshots: Snapshots<RunTargets>,
    /// Its `/health` and `/metrics`.
    status: std::sync::Arc<crate::health::RoleStatus>,
}

/// A job being observed: its claim, its payload and, for a target to dial, its host place.
type Held = (Claim, RemoteJob, Option<toolmark_queue::HostSlot>);

/// A job waiting in the worker for its host's place: its claim, payload, target, and its run's
/// memory of the origins that refused the `server/discover` probe.
type Waiting = (Claim, RemoteJob, Target, Arc<Refusals>);

/// The jobs a worker holds waiting for a place, per host (`""`: nothing to dial), in claim
/// order.
#[derive(Default)]
struct WaitingJobs {
    by_host: HashMap<String, std::collections::VecDeque<Waiting>>,
    count: usize,
}

impl WaitingJobs {
    fn push(&mut self, host: String, job: Waiting) {
        self.by_host.entry(host).or_default().push_back(job);
        self.count += 1;
    }

    /// The host's first waiting job, taken out.
    fn pop(&mut self, host: &str) -> Option<Waiting> {
        let q = self.by_host.get_mut(host)?;
        let next = q.pop_front();
        if q.is_empty() {
            self.by_host.remove(host);
        }
        self.count -= usize::from(next.is_some());
        next
    }

    fn has(&self, host: &str) -> bool {
        self.by_host.contains_key(host)
    }
}

/// What a worker keeps of one run's snapshot: the targets by key ([`remote_jobs`]), and the
/// origins that refused the `server/discover` probe, learned by this worker's crawls of the
/// run's jobs (each job is a crawl of one target; sharing this, an origin that refused the
/// probe is probed about once per worker and run, as in a single-box crawl). It holds at most
/// an origin and an implementation per target of the run, and goes with the snapshot
/// (`SNAPSHOTS_KEPT`).
struct RunTargets {
    targets: HashMap<String, Target>,
    refusals: Arc<Refusals>,
}

/// What an observation's task tells the worker's thread, by the job's token.
enum Ended {
    /// The observation's crawl returned (its session's `DELETE` done): its host place goes to
    /// this worker's next job on that host, or back (before the document is stored, which
    /// does not touch the host); handed on once.
    Dialled(u64),
    /// The outcome, its document stored (`None`: stopped before it was observed).
    Finished(u64, Option<Result<Stored, RoleError>>),
}

impl Worker {
    /// A worker over `config`'s queue and stores, with the crawl's settings (`[crawl]`:
    /// concurrency, per-host limit, memory budget, private addresses, name resolution).
    pub fn new(config: &Config, dir: &DataDir, stop: &Stop) -> Result<Worker, RoleError> {
        let me = holder("worker");
        let queue =
            Queue::connect(&queue_url(config)?, &me).map_err(RoleError::doing("the queue"))?;
        let blobs = dir.blobs().map_err(RoleError::doing("the documents"))?;
        let mut crawl = CrawlConfig {
            per_host: config.crawl.per_host,
            concurrency: config.crawl.concurrency,
            stop: stop.clone(),
            // The cluster's workers keep no hints (each job is one target): every remote reads
            // its surface and takes its second look on every observation.
            surface_days: config.crawl.surface_days,
            second_look_days: config.crawl.second_look_days,
            ..CrawlConfig::default()
        };
        crawl.client.policy.allow_private = config.crawl.allow_private;
        crawl.client.resolver =
            toolmark_ingest::resolver(&config.crawl).map_err(RoleError::doing("crawl.resolve"))?;
        crawl.client.trust = config.crawl.trust().map_err(RoleError::Refused)?;
        crawl.client.budget =
            toolmark_crawler::budget::Budget::new(config.crawl.memory_budget_mib * 1024 * 1024);
        crawl.client.limits.surface = config.crawl.surface;
        config
            .crawl
            .apply_second_look(&mut crawl.client)
            .map_err(RoleError::Refused)?;
        Ok(Worker {
            queue,
            holder: me,
            blobs,
            per_host: u32::try_from(config.crawl.per_host).unwrap_or(u32::MAX),
            batch: config.crawl.concurrency.max(1),
            lease: worker_lease(config),
            crawl,
            snapshots: Snapshots::default(),
            status: crate::health::RoleStatus::new("worker"),
        })
    }

    /// What this worker says on `/health` and `/metrics`.
    pub fn status(&self) -> &std::sync::Arc<crate::health::RoleStatus> {
        &self.status
    }

    /// The target `job` names, from its run's snapshot (read once per run), and the run's
    /// memory of refused probes.
    fn target(&mut self, job: &RemoteJob) -> Result<(Target, Arc<Refusals>), Unreadable> {
        let targets = self.snapshots.get(&self.blobs, &job.snapshot, |bytes| {
            let page = registry::parse_snapshot(bytes).map_err(|e| e.to_string())?;
            let input = RunInput {
                started_at: job.started_at.clone(),
                registry: job.registry.clone(),
                records: registry::latest_per_name(page.servers),
                harvest_complete: true,
                delisted: Vec::new(),
                allow_cleartext: job.allow_cleartext,
            };
            Ok(RunTargets {
                targets: remote_jobs(input.targets()).into_iter().collect(),
                refusals: Arc::default(),
            })
        })?;
        let target = targets.targets.get(&job.target).cloned().ok_or_else(|| {
            Unreadable::Job(format!(
                "target {} is not in snapshot {}",
                job.target, job.snapshot
            ))
        })?;
        Ok((target, targets.refusals.clone()))
    }

    /// One pass: claims jobs and keeps up to `crawl.concurrency` observations running until no
    /// job is left to claim and every job it holds is completed (or `stop` fires: nothing new
    /// starts, the observations running finish and are completed, the jobs still waiting go
    /// back to the queue). Blocks the calling thread (not one of `runtime`'s workers). Returns
    /// how many jobs it completed (0: none was waiting).
    ///
    /// Each job is observed in a task of its own as soon as its host has a place (across every
    /// worker: [`toolmark_queue::Queue::acquire_host`]); a job whose host is full waits in the
    /// worker, claimed, and the place is asked for again when one of this worker's observations
    /// on that host ends, or after [`HOST_BUSY_DELAY`]. As soon as an observation's crawl
    /// returns (its session's `DELETE` included, so the place bounds every request of the
    /// cluster's at the host), its place goes straight to this worker's next job waiting for
    /// the same host, without a round trip to the queue (`host_places_handed_on`), or back
    /// when none waits; its end completes its job (its document stored in its own task, then
    /// the entry handed on by this thread), and a new job is claimed to keep the observations
    /// in flight: one slow remote holds up only its own place. The jobs of one run share what
    /// their crawls learn of origins that refuse the `server/discover` probe (`RunTargets`).
    /// At most [`MAX_WAITING`] jobs wait for a place. The claims held are renewed every third
    /// of their lease in one statement, and the places one by one. Whatever fails, every place
    /// is given back and every job not finished goes back to the queue (a job whose result
    /// could not be stored is failed, so it is tried again later); the first error is returned
    /// after that.
    pub fn work_once(&mut self, runtime: &tokio::runtime::Handle) -> Result<usize, RoleError> {
        let (tx, rx) = std::sync::mpsc::channel::<Ended>();
        let crawl = std::sync::Arc::new(self.crawl.clone());
        let mut first_error = None;
        // Jobs waiting for a place, and the observations running.
        let mut waiting = WaitingJobs::default();
        let mut running: HashMap<u64, Held> = HashMap::new();
        // Hosts found full, and when to ask again.
        let mut full: HashMap<String, std::time::Instant> = HashMap::new();
        let mut next_token = 0u64;
        let mut done = 0usize;
        let mut drained = false;
        let mut renewed = std::time::Instant::now();
        loop {
            let stopping = self.crawl.stop.is_cancelled();
            // Claim while observations could start: room in flight, and not too many waiting.
            if !stopping && !drained && running.len() < self.batch && waiting.count < MAX_WAITING {
                let want = (self.batch - running.len()).min(MAX_WAITING - waiting.count);
                let claims = match self
                    .queue
                    .claim(&[REMOTE], want.min(WORKER_BATCH), self.lease)
                {
                    Ok(c) => c,
                    Err(e) => {
                        note(&mut first_error, Err(RoleError::doing("claiming jobs")(e)));
                        Vec::new()
                    }
                };
                // Nothing to claim (or the claim failed): ask again once something ends.
                drained = claims.len() < want.min(WORKER_BATCH);
                for claim in claims {
                    if let Some((job, target, refusals)) =
                        self.readable(claim.clone(), &mut first_error)
                    {
                        let host = match (&target.kind, &target.skip) {
                            (TargetKind::Remote { url, declared, .. }, None) => {
                                host_key(&declared.dial_url(url))
                            }
                            // Nothing to dial: no place needed.
                            _ => String::new(),
                        };
                        waiting.push(host, (claim, job, target, refusals));
                    }
                }
            }
            // Start what has a place.
            if !stopping {
                let now = std::time::Instant::now();
                let hosts: Vec<String> = waiting
                    .by_host
                    .keys()
                    .filter(|h| full.get(*h).is_none_or(|t| *t <= now))
                    .cloned()
                    .collect();
                for host in hosts {
                    while running.len() < self.batch && waiting.has(&host) {
                        let place = if host.is_empty() {
                            None
                        } else {
                            match self.queue.acquire_host(&host, self.per_host, self.lease) {
                                Ok(Some(p)) => Some(p),
                                Ok(None) => {
                                    self.status.count("host_busy", 1);
                                    full.insert(host.clone(), now + HOST_BUSY_DELAY);
                                    break;
                                }
                                Err(e) => {
                                    note(
                                        &mut first_error,
                                        Err(RoleError::doing("a host place")(e)),
                                    );
                                    full.insert(host.clone(), now + HOST_BUSY_DELAY);
                                    break;
                                }
                            }
                        };
                        let Some(next) = waiting.pop(&host) else {
                            break;
                        };
                        full.remove(&host);
                        self.observe(
                            runtime,
                            (&crawl, &tx),
                            &mut next_token,
                            &mut running,
                            next,
                            place,
                        );
                    }
                }
            }
            if running.is_empty() && (stopping || (drained && waiting.count == 0)) {
                break;
            }
            // Wait for an observation to end (briefly when a full host is due to be asked
            // again or more jobs could be claimed).
            let wait = if !stopping
                && !drained
                && running.len() < self.batch
                && waiting.count < MAX_WAITING
            {
                Duration::ZERO
            } else if !full.is_empty() || running.is_empty() {
                Duration::from_millis(100)
            } else {
                Duration::from_secs(1)
            };
            let mut ended = Vec::new();
            match rx.recv_timeout(wait) {
                Ok(f) => ended.push(f),
                Err(_) if !running.is_empty() || !drained => {}
                // Nothing running, nothing claimable, jobs waiting for a full host: poll.
                Err(_) => drained = false,
            }
            ended.extend(rx.try_iter());
            for event in ended {
                let (token, stored) = match event {
                    Ended::Dialled(token) => {
                        let Some(place) = running.get_mut(&token).and_then(|(_, _, p)| p.take())
                        else {
                            continue;
                        };
                        // The place goes straight to this worker's next job waiting for the
                        // same host, if any (no round trip to the queue): the job that freed it
                        // no longer dials, so the observations dialling stay within
                        // `crawl.concurrency`.
                        let next = if self.crawl.stop.is_cancelled() {
                            None
                        } else {
                            waiting.pop(&place.host)
                        };
                        match next {
                            Some(next) => {
                                self.status.count("host_places_handed_on", 1);
                                self.observe(
                                    runtime,
                                    (&crawl, &tx),
                                    &mut next_token,
                                    &mut running,
                                    next,
                                    Some(place),
                                );
                            }
                            None => {
                                // This worker's own place on the host is free: ask for it
                                // again at once.
                                full.remove(&place.host);
                                self.release(Some(place));
                            }
                        }
                        continue;
                    }
                    Ended::Finished(token, stored) => (token, stored),
                };
                let Some((claim, _, place)) = running.remove(&token) else {
                    continue;
                };
                drained = false;
                match stored {
                    Some(stored) => {
                        match stored.and_then(|s| complete(&mut self.queue, &claim, s)) {
                            Ok(true) => done += 1,
                            Ok(false) => self.status.count("claims_lost", 1),
                            Err(e) => {
                                self.status.count("jobs_failed", 1);
                                // Its document or its completion could not be written: tried
                                // again later.
                                let why = crate::chain(&e);
                                tracing::warn!("job {} ({}): {why}", claim.id, claim.key);
                                note(
                                    &mut first_error,
                                    lost_is_fine(
                                        self.queue.fail(&claim, &why, FAILED_RETRY).map(drop),
                                    ),
                                );
                                note(&mut first_error, Err(e));
                            }
                        }
                    }
                    None => {
                        if let Err(e) = lost_is_fine(self.queue.defer(&claim, Duration::ZERO)) {
                            tracing::warn!(
                                "job {}: giving it back: {}",
                                claim.id,
                                crate::chain(&e)
                            );
                        }
                    }
                }
                if let Some(p) = &place {
                    // This worker's own place on the host is free: ask for it again at once.
                    full.remove(&p.host);
                }
                self.release(place);
            }
            if renewed.elapsed() >= self.lease / 3 {
                self.renew_all(&mut waiting, &mut running);
                renewed = std::time::Instant::now();
            }
        }
        // Jobs that never got a place: back to the queue, not an attempt.
        for (claim, ..) in waiting.by_host.into_values().flatten() {
            if let Err(e) = lost_is_fine(self.queue.defer(&claim, Duration::ZERO)) {
                tracing::warn!("job {}: giving it back: {}", claim.id, crate::chain(&e));
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }

    /// Starts observing a job that has its host place (`None`: nothing to dial) in a task of
    /// its own, by the token `next_token` gives: the crawl of its one target, sharing its run's
    /// memory of refused probes. The task sends [`Ended::Dialled`] when the crawl returns (its
    /// session's `DELETE` done: a host never has more than `crawl.per_host` requests of the
    /// cluster's at once), then stores the document and sends [`Ended::Finished`].
    fn observe(
        &self,
        runtime: &tokio::runtime::Handle,
        (crawl, tx): (&Arc<CrawlConfig>, &std::sync::mpsc::Sender<Ended>),
        next_token: &mut u64,
        running: &mut HashMap<u64, Held>,
        (claim, job, target, refusals): Waiting,
        place: Option<toolmark_queue::HostSlot>,
    ) {
        let token = *next_token;
        *next_token += 1;
        let started_at = job.started_at.clone();
        running.insert(token, (claim, job, place));
        let (crawl, tx, blobs) = (crawl.clone(), tx.clone(), self.blobs.clone());
        runtime.spawn(async move {
            let mut prepared = None;
            crawl::crawl_with(
                &crawl,
                vec![target],
                &refusals,
                |o: Outcome| {
                    let item = TargetOutcome {
                        target: o.target,
                        observation: o.observation,
                    };
                    // The document is made here and the observation (and its share of the
                    // crawl's memory budget) dropped at once.
                    prepared = Some(prepare(&item, &started_at));
                    drop(item);
                    drop(o.grant);
                },
                // The cluster's place covers the whole observation, its session's `DELETE`
                // included: a single-box crawl sends the `DELETE` outside its place under a
                // closing permit of its own per address, which one job's crawl cannot share
                // with the other jobs on the host (across workers), so the place is given back
                // (or handed on) only when the crawl returns.
                |_| {},
            )
            .await;
            let _ = tx.send(Ended::Dialled(token));
            // `None`: stopped before it was observed, the job goes back.
            let stored = match prepared {
                Some(p) => Some(
                    tokio::task::spawn_blocking(move || store(&blobs, p))
                        .await
                        .unwrap_or_else(|e| Err(RoleError::Refused(format!("storing: {e}")))),
                ),
                None => None,
            };
            let _ = tx.send(Ended::Finished(token, stored));
        });
    }

    /// The job and target of `claim`; `None` when it cannot be worked now (failed, or deferred
    /// when the store failed).
    fn readable(
        &mut self,
        claim: Claim,
        first_error: &mut Option<RoleError>,
    ) -> Option<(RemoteJob, Target, Arc<Refusals>)> {
        let job: RemoteJob = match serde_json::from_str(&claim.payload) {
            Ok(j) => j,
            Err(e) => {
                note(
                    first_error,
                    self.give_up(&claim, &format!("unreadable job: {e}")),
                );
                return None;
            }
        };
        match self.target(&job) {
            Ok((t, refusals)) => Some((job, t, refusals)),
            Err(Unreadable::Job(why)) => {
                note(first_error, self.give_up(&claim, &why));
                None
            }
            Err(Unreadable::Store(why)) => {
                tracing::warn!("job {} ({}): the snapshot: {why}", claim.id, claim.key);
                note(
                    first_error,
                    lost_is_fine(self.queue.defer(&claim, FAILED_RETRY)),
                );
                None
            }
        }
    }

    /// Extends the leases of every job held (waiting or running), in one statement
    /// ([`Queue::renew_many`]), and of the places running.
    fn renew_all(&mut self, waiting: &mut WaitingJobs, running: &mut HashMap<u64, Held>) {
        let claims = waiting
            .by_host
            .values_mut()
            .flatten()
            .map(|(c, ..)| c)
            .chain(running.values_mut().map(|(c, ..)| c));
        match self.queue.renew_many(claims, self.lease) {
            // A lost claim's job is another worker's now: its completion is refused (and
            // counted as `claims_lost`) when it comes.
            Ok(lost) => {
                for job in lost {
                    tracing::warn!("job {job}: its claim was lost before it was renewed");
                }
            }
            Err(e) => tracing::warn!("renewing the claims held: {e}"),
        }
        for p in running.values().filter_map(|(_, _, p)| p.as_ref()) {
            match self.queue.renew_host(p, self.lease) {
                Ok(true) => {}
                Ok(false) => tracing::warn!("the place on {} lapsed before it was renewed", p.host),
                Err(e) => tracing::warn!("renewing the place on {}: {e}", p.host),
            }
        }
    }

    fn release(&mut self, place: Option<toolmark_queue::HostSlot>) {
        if let Some(p) = place {
            if let Err(e) = self.queue.release_host(p) {
                tracing::warn!("giving a host place back (it lapses with its lease): {e}");
            }
        }
    }

    /// Fails a job that cannot be worked (its payload or its snapshot is unreadable): retried
    /// as any failure, then failed for good.
    fn give_up(&mut self, claim: &Claim, why: &str) -> Result<(), RoleError> {
        tracing::warn!("job {} ({}): {why}", claim.id, claim.key);
        self.status.count("jobs_failed", 1);
        lost_is_fine(self.queue.fail(claim, why, FAILED_RETRY).map(drop))
    }

    /// Who this worker is in the queue.
    pub fn queue_holder(&self) -> &str {
        &self.holder
    }
}

/// The harvests' snapshots a worker has read, each as what it makes of them (`SNAPSHOTS_KEPT`
/// at most: each run has one).
struct Snapshots<T> {
    kept: Vec<(String, T)>,
}

impl<T> Default for Snapshots<T> {
    fn default() -> Self {
        Snapshots { kept: Vec::new() }
    }
}

impl<T> Snapshots<T> {
    /// The snapshot `sri` made into a `T` by `make` (read from `blobs` and made once).
    fn get(
        &mut self,
        blobs: &Blobs,
        sri: &str,
        make: impl FnOnce(&[u8]) -> Result<T, String>,
    ) -> Result<&T, Unreadable> {
        if let Some(i) = self.kept.iter().position(|(s, _)| s == sri) {
            return Ok(&self.kept[i].1);
        }
        let parsed: Sri = sri
            .parse()
            .map_err(|e| Unreadable::Job(format!("snapshot {sri}: {e}")))?;
        // The store failing is not the job's fault: the job waits (a deferral).
        let bytes = blobs
            .get(&parsed)
            .map_err(|e| Unreadable::Store(format!("snapshot {sri}: {e}")))?
            .ok_or_else(|| Unreadable::Job(format!("snapshot {sri} is not stored")))?;
        let made = make(&bytes).map_err(|e| Unreadable::Job(format!("snapshot {sri}: {e}")))?;
        if self.kept.len() == SNAPSHOTS_KEPT {
            self.kept.remove(0);
        }
        self.kept.push((sri.to_owned(), made));
        Ok(&self.kept[self.kept.len() - 1].1)
    }
}

/// Why a job's target could not be had.
enum Unreadable {
    /// The job itself is wrong (a snapshot that is not one, a target it does not hold): an
    /// attempt, failed.
    Job(String),
    /// The blob store failed: not the job's fault, it waits.
    Store(String),
}

/// What completing a job needs once its document is stored: the report line (JSON) and the
/// encoded entry to hand on (`None`: nothing is logged).
type Stored = (String, Option<Vec<u8>>);

/// Stores a prepared outcome's document (durable before the entry naming it can be
/// committed). Blocks: run it off the runtime's workers; observations' documents are stored
/// side by side, each in its observation's task.
fn store(blobs: &Blobs, prepared: Result<Prepared, IndexError>) -> Result<Stored, RoleError> {
    let Prepared { line, logged } = prepared.map_err(RoleError::doing("the observation"))?;
    let handoff = match logged {
        Some((entry, document)) => {
            if let Some(doc) = document {
                blobs
                    .put(&doc)
                    .map_err(RoleError::doing("storing the observation document"))?;
            }
            Some(
                entry
                    .encode()
                    .map_err(RoleError::doing("encoding the entry"))?,
            )
        }
        None => None,
    };
    let result = serde_json::to_string(&line).map_err(RoleError::doing("the report line"))?;
    Ok((result, handoff))
}

/// Completes a job with its stored outcome; `false` when the claim was lost meanwhile
/// (another worker has the job: nothing of this one is kept).
fn complete(queue: &mut Queue, claim: &Claim, stored: Stored) -> Result<bool, RoleError> {
    let (result, handoff) = stored;
    match queue.complete(claim, &result, handoff.as_deref()) {
        Ok(()) => Ok(true),
        Err(QueueError::Lost { .. }) => {
            tracing::warn!(
                "job {} ({}): claim lost; its result dropped",
                claim.id,
                claim.key
            );
            Ok(false)
        }
        Err(e) => Err(RoleError::doing("completing a job")(e)),
    }
}

/// Keeps the first error of a batch.
fn note(first: &mut Option<RoleError>, r: Result<(), RoleError>) {
    if let Err(e) = r {
        first.get_or_insert(e);
    }
}

/// A lost claim is someone else's job now: nothing to do.
fn lost_is_fine(r: Result<(), QueueError>) -> Result<(), RoleError> {
    match r {
        Ok(()) | Err(QueueError::Lost { .. }) => Ok(()),
        Err(e) => Err(RoleError::doing("the queue")(e)),
    }
}

/// One sequencer batch: up to [`SEQUENCER_BATCH`] hand-offs appended to `log` as one batch,
/// then marked taken. Returns how many it took (0: none was waiting).
pub fn sequence_once(queue: &mut Queue, log: &mut Log) -> Result<usize, RoleError> {
    let handoffs = queue
        .handoffs(SEQUENCER_BATCH)
        .map_err(RoleError::doing("reading hand-offs"))?;
    if handoffs.is_empty() {
        return Ok(0);
    }
    let mut entries = Vec::with_capacity(handoffs.len());
    for h in &handoffs {
        match Entry::decode(&h.body) {
            Ok(e) => entries.push(e),
            // Not an entry (a broken worker): it can never be logged, and must not stall the
            // log. It is set aside (taken) and said.
            Err(e) => tracing::error!(
                "hand-off {} ({} of run {}) is not an entry and is dropped: {e}",
                h.seq,
                h.key,
                h.run
            ),
        }
    }
    if !entries.is_empty() {
        // Harvests recorded since the last batch take effect at this size: stamped before
        // any checkpoint beyond it is published (`toolmark_queue::harvests`).
        // The head as the store has it now (a standby's may be as old as its start).
        log.refresh()
            .map_err(RoleError::doing("reading the log's head"))?;
        queue
            .stamp_harvests(log.head().size)
            .map_err(RoleError::doing("stamping the harvests"))?;
        log.append(entries)
            .map_err(RoleError::doing("appending to the log"))?;
    }
    let seqs: Vec<i64> = handoffs.iter().map(|h| h.seq).collect();
    queue
        .taken(&seqs)
        .map_err(RoleError::doing("marking hand-offs taken"))?;
    Ok(seqs.len())
}

/// How long finished jobs (their results are the runs' report lines) and taken hand-offs stay
/// in the queue before the scheduler prunes them.
pub const PRUNE_AFTER: Duration = Duration::from_secs(7 * 86_400);

/// How long an idle worker or sequencer waits before it looks at the queue again, and how long
/// a role waits after a failed pass (a database or bucket outage stalls it, nothing more).
pub const POLL: Duration = Duration::from_secs(1);

/// Waits `d`, or less when `stop` fires; whether it fired.
async fn pause(stop: &Stop, d: Duration) -> bool {
    tokio::select! {
        () = stop.cancelled() => true,
        () = tokio::time::sleep(d) => false,
    }
}

/// `toolmark worker`: claims and works jobs until `stop` (the batch in hand finishes and is
/// completed; jobs it did not start go back to the queue).
pub async fn run_worker(config: Config, stop: Stop) -> Result<(), RoleError> {
    let dir = crate::jobs::data_dir(&config);
    let s = stop.clone();
    let config_for_health = config.clone();
    let mut worker = tokio::task::spawn_blocking(move || Worker::new(&config, &dir, &s))
        .await
        .map_err(RoleError::doing("starting the worker"))??;
    let status = worker.status().clone();
    status.set_holder(worker.queue_holder());
    status.set_active(true);
    crate::health::serve(&config_for_health, status.clone(), &stop).await?;
    // The popularity refreshes the scheduler enqueues: a thread of their own.
    {
        let (config, stop) = (config_for_health.clone(), stop.clone());
        let (url, holder) = (queue_url(&config)?, worker.queue_holder().to_owned());
        let runtime = tokio::runtime::Handle::current();
        std::thread::Builder::new()
            .name("popularity refreshes".into())
            .spawn(move || popularity::run_refreshes(&url, &holder, &runtime, &config, &stop))
            .map_err(RoleError::doing("starting the popularity refreshes"))?;
    }
    // The package half, where gVisor is installed: a loop of its own, so that long sandbox
    // runs never hold up the remote jobs.
    let package_half = {
        let (config, dir, status) = (
            config_for_health.clone(),
            crate::jobs::data_dir(&config_for_health),
            status.clone(),
        );
        tokio::task::spawn_blocking(move || packages::PackageWorker::new(&config, &dir, status))
            .await
            .map_err(RoleError::doing("starting the worker's package half"))??
    };
    let package_loop = match package_half {
        Some(p) => {
            tracing::info!(
                "worker {} claiming {PACKAGE} jobs too",
                worker.queue_holder()
            );
            Some(tokio::spawn(packages::run(p, stop.clone())))
        }
        None => {
            tracing::info!("worker: no gVisor (runsc) here: it takes no {PACKAGE} job");
            None
        }
    };
    tracing::info!("worker {} claiming {REMOTE} jobs", worker.queue_holder());
    loop {
        if stop.is_cancelled() {
            break;
        }
        let handle = tokio::runtime::Handle::current();
        let (back, done) = tokio::task::spawn_blocking(move || {
            let done = worker.work_once(&handle);
            (worker, done)
        })
        .await
        .map_err(RoleError::doing("the worker's task"))?;
        worker = back;
        let idle = match done {
            Ok(0) => {
                status.pass_ok();
                true
            }
            Ok(n) => {
                status.pass_ok();
                status.count("jobs_done", n as u64);
                tracing::info!("worker: {n} jobs done");
                false
            }
            Err(e) => {
                let why = crate::chain(&e);
                status.pass_failed(&why);
                tracing::warn!("worker: {why}");
                true
            }
        };
        if idle && pause(&stop, POLL).await {
            break;
        }
    }
    // Its database connection is closed off the runtime's threads (the client blocks).
    let _ = tokio::task::spawn_blocking(move || drop(worker)).await;
    if let Some(l) = package_loop {
        let _ = l.await;
    }
    Ok(())
}

/// `toolmark sequencer`: while it holds the sequencer lease, appends hand-offs to the log
/// (created in the configured stores on first start, with this data directory's key); a
/// standby waits for the lease. With witnesses configured, runs their rounds as `run` does.
pub async fn run_sequencer(config: Config, stop: Stop) -> Result<(), RoleError> {
    let dir = crate::jobs::data_dir(&config);
    let url = queue_url(&config)?;
    let origin = config.origin.clone();
    let cosigner = crate::jobs::cosigner(&config)?;
    let witnessed = cosigner.is_some();
    let holder = holder("sequencer");
    let me = holder.clone();
    let (mut queue, mut log) = tokio::task::spawn_blocking(move || {
        let queue = Queue::connect(&url, &me).map_err(RoleError::doing("the queue"))?;
        let mut log = dir
            .open_log(&origin)
            .map_err(RoleError::doing("opening the log"))?;
        // With witnesses, a checkpoint is published only once they cosigned it.
        log.set_witnessed(witnessed)
            .map_err(RoleError::doing("setting the log's publication"))?;
        Ok::<_, RoleError>((queue, log))
    })
    .await
    .map_err(RoleError::doing("starting the sequencer"))??;
    if let Some(cosigner) = cosigner {
        crate::jobs::spawn_watch(cosigner, &config, &stop);
    }
    let status = crate::health::RoleStatus::new("sequencer");
    status.set_holder(&holder);
    status.set_log_size(log.head().size);
    crate::health::serve(&config, status.clone(), &stop).await?;
    tracing::info!("sequencer: log {} at size {}", log.vkey(), log.head().size);
    // The heartbeat (`schedules.heartbeat`): the active sequencer re-signs an idle log's head
    // so that its publication time shows the log is alive. With witnesses, their watch's
    // rounds do that instead.
    let heartbeat = match config.schedules.heartbeat.trim() {
        "" => None,
        _ if witnessed => None,
        cron => Some(
            toolmark_schedules::JobSpec::new("heartbeat", cron)
                .map_err(RoleError::doing("the heartbeat schedule"))?,
        ),
    };
    let clock = toolmark_schedules::SystemClock;
    let mut next_beat = heartbeat
        .as_ref()
        .and_then(|h| h.next_fire_after(toolmark_schedules::Clock::now(&clock)));
    let mut active = false;
    loop {
        if stop.is_cancelled() {
            break;
        }
        let beat = next_beat.is_some_and(|t| toolmark_schedules::Clock::now(&clock) >= t);
        let beats = status.clone();
        let (q, l, outcome) = tokio::task::spawn_blocking(move || {
            let outcome = match queue.hold("sequencer", ROLE_LEASE) {
                Ok(true) => sequence_once(&mut queue, &mut log).and_then(|n| {
                    if n == 0 && beat {
                        let size = log
                            .resign()
                            .map_err(RoleError::doing("re-signing the head (heartbeat)"))?
                            .size;
                        beats.count("heartbeats", 1);
                        tracing::info!("sequencer: heartbeat: checkpoint of size {size} re-signed");
                    }
                    Ok(Some(n))
                }),
                Ok(false) => Ok(None),
                Err(e) => Err(RoleError::doing("the sequencer lease")(e)),
            };
            (queue, log, outcome)
        })
        .await
        .map_err(RoleError::doing("the sequencer's task"))?;
        (queue, log) = (q, l);
        if let Ok(o) = &outcome {
            status.pass_ok();
            status.set_active(o.is_some());
            status.set_log_size(log.head().size);
            // A heartbeat due is done once a pass of this sequencer ran (entries appended
            // re-sign the head too); a standby's is the active one's to do.
            if beat {
                next_beat = heartbeat
                    .as_ref()
                    .and_then(|h| h.next_fire_after(toolmark_schedules::Clock::now(&clock)));
            }
        }
        let idle = match outcome {
            Ok(Some(0)) => {
                active = true;
                true
            }
            Ok(Some(n)) => {
                active = true;
                status.count("entries_sequenced", n as u64);
                tracing::info!(
                    "sequencer: {n} entries appended, log size {}",
                    log.head().size
                );
                false
            }
            Ok(None) => {
                if active {
                    tracing::warn!("sequencer: another sequencer holds the lease; standing by");
                }
                active = false;
                true
            }
            Err(e) => {
                let why = crate::chain(&e);
                status.pass_failed(&why);
                tracing::warn!("sequencer: {why}");
                // A failed append poisons the log: reopen it (recovery) before the next pass.
                let d = crate::jobs::data_dir(&config);
                let o = config.origin.clone();
                let reopen = move || {
                    let mut l = d.open_log(&o)?;
                    l.set_witnessed(witnessed)?;
                    Ok::<_, toolmark_log::LogError>(l)
                };
                match tokio::task::spawn_blocking(reopen).await {
                    Ok(Ok(reopened)) => log = reopened,
                    Ok(Err(e)) => tracing::warn!("sequencer: reopening the log: {e}"),
                    Err(e) => tracing::warn!("sequencer: reopening the log: {e}"),
                }
                true
            }
        };
        if idle && pause(&stop, POLL).await {
            break;
        }
    }
    // The lease is given up for a standby, and the connections closed off the runtime's
    // threads (the clients block).
    let _ = tokio::task::spawn_blocking(move || {
        let _ = queue.release("sequencer");
        drop(log);
    })
    .await;
    Ok(())
}

/// Which run [`enqueue_now`] enqueues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// A crawl, named as given (default `crawl-<harvest start>`).
    Crawl(Option<String>),
    /// A package sweep, named as given (default `sweep-<start>`).
    Sweep(Option<String>),
}

impl Run {
    /// `sweep`: a package sweep; anything else: a crawl (default names).
    pub fn named(what: &str) -> Run {
        match what {
            "sweep" => Run::Sweep(None),
            _ => Run::Crawl(None),
        }
    }
}

/// [`enqueue_now`] off the async runtime's workers (`toolmark scheduler --enqueue-now`).
pub async fn enqueue(config: Config, what: Run, stop: Stop) -> Result<Option<Enqueued>, RoleError> {
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || enqueue_now(&handle, &config, what, &stop))
        .await
        .map_err(RoleError::doing("the enqueueing task"))?
}

/// One crawl run enqueued by whoever holds the scheduler lease (`toolmark scheduler
/// --enqueue-now`, and the scheduler's cron job, which names the run by its fire time's UTC
/// hour so that two schedulers firing for it share one run): `None` when another scheduler is
/// enqueueing.
pub fn enqueue_now(
    runtime: &tokio::runtime::Handle,
    config: &Config,
    what: Run,
    stop: &Stop,
) -> Result<Option<Enqueued>, RoleError> {
    let dir = crate::jobs::data_dir(config);
    let url = queue_url(config)?;
    let me = holder("scheduler");
    let mut queue = Queue::connect(&url, &me).map_err(RoleError::doing("the queue"))?;
    if !queue
        .hold("scheduler", ROLE_LEASE)
        .map_err(RoleError::doing("the scheduler lease"))?
    {
        return Ok(None);
    }
    let blobs = dir.blobs().map_err(RoleError::doing("the documents"))?;
    // The lease is renewed while the harvest runs (minutes at the registry's pace), on a
    // connection of its own.
    let finished = std::sync::atomic::AtomicBool::new(false);
    let enqueued = std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut renewer = match Queue::connect(&url, &me) {
                Ok(q) => q,
                Err(e) => {
                    tracing::warn!("scheduler: no connection to renew its lease: {e}");
                    return;
                }
            };
            let step = Duration::from_millis(200);
            let mut waited = Duration::ZERO;
            while !finished.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(step);
                waited += step;
                if waited >= ROLE_LEASE / 3 {
                    waited = Duration::ZERO;
                    match renewer.hold("scheduler", ROLE_LEASE) {
                        Ok(true) => {}
                        Ok(false) => tracing::warn!("scheduler: the lease went to another"),
                        Err(e) => tracing::warn!("scheduler: renewing the lease: {e}"),
                    }
                }
            }
        });
        let r = match what {
            Run::Crawl(run) => enqueue_crawl(runtime, config, &blobs, &mut queue, run, stop),
            Run::Sweep(run) => packages::enqueue_sweep(config, &dir, &blobs, &mut queue, run),
        };
        finished.store(true, std::sync::atomic::Ordering::Relaxed);
        r
    });
    // The lease is given back whatever happened: a failed run must not hold another
    // scheduler (or this one's next job) off for a lease.
    let enqueued = match enqueued {
        Ok(e) => e,
        Err(e) => {
            if let Err(r) = queue.release("scheduler") {
                tracing::warn!("scheduler: giving the lease back: {r}");
            }
            return Err(e);
        }
    };
    match queue.prune(PRUNE_AFTER) {
        Ok((0, 0)) => {}
        Ok((jobs, handoffs)) => {
            tracing::info!("scheduler: pruned {jobs} finished jobs and {handoffs} taken hand-offs");
        }
        Err(e) => tracing::warn!("scheduler: pruning the queue: {e}"),
    }
    queue
        .release("scheduler")
        .map_err(RoleError::doing("the scheduler lease"))?;
    Ok(Some(enqueued))
}

/// What one fire time of a scheduler job enqueued: its message and the jobs added, and whether
/// it was a run of the crawl or the sweep (counted as `runs_enqueued`).
struct Fired {
    text: String,
    jobs: u64,
    run: bool,
}

impl Fired {
    fn run(e: Enqueued) -> Fired {
        Fired {
            text: e.text(),
            jobs: e.added,
            run: true,
        }
    }
}

/// A scheduler job's work for one fire time (its run's name given), blocking: `None` when
/// another scheduler holds the lease (the fire time is tried again; a retry that finds the run
/// enqueued adds nothing).
type Enqueue =
    fn(&tokio::runtime::Handle, &Config, String, &Stop) -> Result<Option<Fired>, RoleError>;

/// One job of `kind` enqueued in `run` unless one is open ([`polling::enqueue_one`]).
fn small_job(config: &Config, kind: &str, run: &str) -> Result<Option<Fired>, RoleError> {
    let mut queue = Queue::connect(&queue_url(config)?, &holder("scheduler"))
        .map_err(RoleError::doing("the queue"))?;
    let jobs = polling::enqueue_one(&mut queue, kind, run)?;
    Ok(Some(Fired {
        text: if jobs == 0 {
            format!("{run}: a {kind} job is still waiting or running")
        } else {
            format!("{run}: a {kind} job enqueued")
        },
        jobs,
        run: false,
    }))
}

/// The scheduler job `name`: each fire time runs `enqueue` on a blocking thread, for the run
/// `name-<fire time as run_format>`, and counts what it did in `status`.
fn enqueuing_job(
    config: std::sync::Arc<Config>,
    status: std::sync::Arc<crate::health::RoleStatus>,
    name: &'static str,
    run_format: &'static str,
    enqueue: Enqueue,
) -> toolmark_schedules::JobFn {
    use toolmark_schedules::{JobContext, JobError};
    std::sync::Arc::new(move |ctx: JobContext| {
        let (config, status) = (config.clone(), status.clone());
        Box::pin(async move {
            let run = format!("{name}-{}", ctx.scheduled_for.format(run_format));
            let handle = tokio::runtime::Handle::current();
            let stop: Stop = ctx.stop.clone();
            let fired = tokio::task::spawn_blocking(move || enqueue(&handle, &config, run, &stop))
                .await
                .map_err(|e| JobError::new(format!("the {name} task: {e}")))?
                .map_err(|e| {
                    let why = crate::chain(&e);
                    status.pass_failed(&why);
                    JobError::new(why)
                })?;
            status.pass_ok();
            status.set_active(fired.is_some());
            match fired {
                Some(f) => {
                    if f.run {
                        status.count("runs_enqueued", 1);
                    }
                    status.count("jobs_enqueued", f.jobs);
                    Ok(f.text)
                }
                None => Err(JobError::new(
                    "another scheduler holds the lease; this run is tried again",
                )),
            }
        })
    })
}

/// `toolmark scheduler`: the crawl on its cron schedule (`schedules.crawl`) and the package
/// sweep (`schedules.package_sweep`), each fire time enqueued as one run ([`enqueue_now`]), and
/// with `[[webhooks]]` a webhook pass per fire time of `schedules.webhooks` (made by an API
/// replica, [`webhooks`]) and a popularity refresh per fire time of `schedules.popularity` (made
/// by a worker, [`popularity`]); the schedules' leases and run history are the cluster's, in
/// PostgreSQL ([`crate::schedules::SharedSchedules`]: the schedulers' clocks must agree within
/// a few seconds, as their leases are timed by them). Until `stop`.
pub async fn run_scheduler(config: Config, stop: Stop) -> Result<(), RoleError> {
    use std::sync::Arc;
    use toolmark_schedules::{Clock, JobSpec, Scheduler, SystemClock};
    let url = queue_url(&config)?;
    let dir = crate::jobs::data_dir(&config);
    std::fs::create_dir_all(dir.root()).map_err(RoleError::doing("the data directory"))?;
    // The jobs' leases and run history are the cluster's, in PostgreSQL (every scheduler
    // shares them); the database client blocks, so it connects off the async workers.
    let db = tokio::task::spawn_blocking(move || {
        crate::shared::Db::connect(&url, &holder("scheduler-schedules"))
    })
    .await
    .map_err(RoleError::doing("connecting to the cluster's database"))?
    .map_err(RoleError::doing("the cluster's database"))?;
    let store = Arc::new(crate::schedules::SharedSchedules::new(Arc::new(db)));
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let me = holder("scheduler");
    let status = crate::health::RoleStatus::new("scheduler");
    status.set_holder(&me);
    crate::health::serve(&config, status.clone(), &stop).await?;
    let mut scheduler = Scheduler::new(store, clock, me);
    let config = Arc::new(config);
    // Each fire time is one run, named by its UTC hour (crawls and sweeps) or minute (the
    // small jobs, one open at a time: webhook passes made by API replicas with `[[webhooks]]`,
    // popularity refreshes made by workers): two schedulers firing for it share it.
    let delivers = !config
        .subscriptions()
        .map_err(RoleError::doing("the webhooks"))?
        .is_empty();
    let jobs: [(&'static str, &String, &'static str, Enqueue); 4] = [
        (
            "crawl",
            &config.schedules.crawl,
            "%Y-%m-%dT%H",
            |h, c, run, stop| {
                enqueue_now(h, c, Run::Crawl(Some(run)), stop).map(|e| e.map(Fired::run))
            },
        ),
        (
            "sweep",
            &config.schedules.package_sweep,
            "%Y-%m-%dT%H",
            |h, c, run, stop| {
                enqueue_now(h, c, Run::Sweep(Some(run)), stop).map(|e| e.map(Fired::run))
            },
        ),
        (
            webhooks::WEBHOOKS,
            &config.schedules.webhooks,
            "%Y-%m-%dT%H:%M",
            |_, c, run, _| small_job(c, webhooks::WEBHOOKS, &run),
        ),
        (
            popularity::POPULARITY,
            &config.schedules.popularity,
            "%Y-%m-%dT%H:%M",
            |_, c, run, _| small_job(c, popularity::POPULARITY, &run),
        ),
    ];
    for (name, schedule, run_format, enqueue) in jobs {
        if schedule.trim().is_empty() || (name == webhooks::WEBHOOKS && !delivers) {
            continue;
        }
        let spec = JobSpec::new(name, schedule)
            .map_err(RoleError::doing(format!("the {name} schedule")))?
            .with_lease(Duration::from_secs(config.schedules.lease_seconds));
        let job = enqueuing_job(config.clone(), status.clone(), name, run_format, enqueue);
        scheduler
            .add(spec, job)
            .map_err(RoleError::doing(format!("adding the {name}")))?;
    }
    let summary = scheduler.run(stop.cancelled_owned()).await;
    tracing::info!("scheduler stopped: {summary:?}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolmark_observation::registry::{Declared, Ecosystem};

    fn remote(server: &str, url: &str, transport: &str) -> Target {
        Target {
            server: server.into(),
            version: "1.0.0".into(),
            kind: TargetKind::Remote {
                transport: transport.into(),
                url: url.into(),
                declared: Declared::default(),
            },
            skip: None,
        }
    }

    #[test]
    fn a_url_listed_twice_by_one_server_is_two_jobs_and_packages_are_none() {
        let package = Target {
            kind: TargetKind::Package {
                ecosystem: Ecosystem::Npm,
                name: "@acme/pkg".into(),
                version: Some("1.0.0".into()),
                transport: "stdio".into(),
            },
            ..remote("io.example/pkg", "", "")
        };
        let jobs = remote_jobs(vec![
            remote("io.example/a", "https://a.example/mcp", "streamable-http"),
            package,
            remote("io.example/a", "https://a.example/mcp", "sse"),
            remote("io.example/b", "https://a.example/mcp", "sse"),
        ]);
        let id = target_id(&jobs[0].1);
        let keys: Vec<&str> = jobs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys.len(), 3);
        assert_eq!(keys[0], id);
        assert_eq!(keys[1], format!("{id}#2"));
        assert_ne!(keys[2], id, "another server's target is its own");
    }
}
