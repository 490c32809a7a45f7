//! The package sweep in the cluster: the scheduler chooses the versions to observe and enqueues
//! one [`PACKAGE`] job per version ([`enqueue_sweep`]); a worker with gVisor claims them, observes
//! each in the sandbox and completes it with its log entry as the hand-off
//! ([`PackageWorker::work_once`]), as remote jobs are.
//!
//! The choice is the single box's (`ingest::sweep::choose`, at most `packages.cap` per run)
//! over the packages of the latest harvest (the snapshot the last crawl noted in the queue) and
//! what the log holds of them: the scheduler keeps its own index as a follower of the published
//! log ([`crate::follower::follow_once`]) and reads each package's observations there. One job
//! per (package target, version): a server listing one package twice has it observed once.

use std::collections::HashMap;
use std::sync::Arc;

use toolmark_config::Config;
use toolmark_index::record::{Prepared, prepare, target_id};
use toolmark_index::{Blobs, DataDir, IndexError, TargetOutcome};
use toolmark_ingest::sweep::{self, Chosen, PackageSource};
use toolmark_observation::registry;
use toolmark_queue::{Claim, NewJob, Queue};
use toolmark_sandbox::observe::Observer;
use toolmark_toolset::Sri;

use super::{
    Enqueued, FAILED_RETRY, PACKAGE, PackageJob, Snapshots, Unreadable, complete, holder,
    lost_is_fine, note, queue_url, snapshot_note, worker_lease,
};
use crate::health::RoleStatus;
use crate::{RoleError, Stop};

/// A package job's key: its target and version (`latest` when the registry lists none).
fn job_key(target: &str, version: Option<&str>) -> String {
    format!("{target}@{}", version.unwrap_or("latest"))
}

/// The package targets of a snapshot's items, by target id.
fn package_targets(bytes: &[u8]) -> Result<HashMap<String, Chosen>, String> {
    let page = registry::parse_snapshot(bytes).map_err(|e| e.to_string())?;
    let records = registry::latest_per_name(page.servers);
    Ok(sweep::package_targets(&records)
        .into_iter()
        .map(|c| (target_id(&c.target), c))
        .collect())
}

/// One sweep run's jobs: the versions `ingest::sweep::choose` picks (at most `packages.cap`)
/// among the packages of the latest harvest of `config.registry`, weighed by what the log
/// holds of them (this data directory's index follows the published log first), in the run
/// `run` (default `sweep-<start>`). Blocks the calling thread.
pub fn enqueue_sweep(
    config: &Config,
    dir: &DataDir,
    blobs: &Blobs,
    queue: &mut Queue,
    run: Option<String>,
) -> Result<Enqueued, RoleError> {
    let registry_key = config.registry.trim_end_matches('/');
    let started_at = toolmark_observation::time::utc(std::time::SystemTime::now());
    let snapshot = queue
        .note(&snapshot_note(registry_key))
        .map_err(RoleError::doing("reading the latest harvest"))?
        .ok_or_else(|| {
            RoleError::Refused(format!(
                "no crawl of {registry_key} has stored a harvest yet: the sweep lists its packages from it"
            ))
        })?;
    let sri: Sri = snapshot
        .parse()
        .map_err(|e| RoleError::Refused(format!("the noted harvest {snapshot}: {e}")))?;
    let bytes = blobs
        .get(&sri)
        .map_err(RoleError::doing("reading the harvest"))?
        .ok_or_else(|| RoleError::Refused(format!("the harvest {snapshot} is not stored")))?;
    let page = registry::parse_snapshot(&bytes)
        .map_err(|e| RoleError::Refused(format!("the harvest {snapshot}: {e}")))?;
    let records = registry::latest_per_name(page.servers);
    // What the log holds of each package, as of its published checkpoint.
    std::fs::create_dir_all(dir.root()).map_err(RoleError::doing("the data directory"))?;
    let followed =
        crate::follower::follow_once(dir, &crate::follower::FollowerStatus::default(), None)?;
    let index = toolmark_index::Index::open(&dir.index_path())
        .map_err(RoleError::doing("opening the scheduler's index"))?;
    let (listed, candidates) = sweep::candidates(&index, &records, None)
        .map_err(RoleError::doing("the sweep's candidates"))?;
    // A version still waiting from an earlier run (no worker with gVisor took it yet, or one is
    // observing it) is not enqueued again: the log cannot say yet that it was observed.
    let open = queue
        .open_keys(PACKAGE)
        .map_err(RoleError::doing("reading the open package jobs"))?;
    let candidates: Vec<sweep::Candidate> = candidates
        .into_iter()
        .filter(|c| {
            !open.contains(&job_key(
                &target_id(&c.chosen.target),
                c.chosen.version.as_deref(),
            ))
        })
        .collect();
    let chosen = sweep::choose(candidates, config.packages.cap);
    tracing::info!(
        "sweep: {listed} packages listed, {} versions chosen (log at {followed} entries)",
        chosen.len()
    );
    let jobs: Vec<NewJob> = chosen
        .iter()
        .map(|c| {
            let job = PackageJob {
                snapshot: snapshot.clone(),
                started_at: started_at.clone(),
                registry: config.registry.clone(),
                target: target_id(&c.target),
                version: c.version.clone(),
                why: c.why.to_owned(),
            };
            NewJob {
                kind: PACKAGE.to_owned(),
                key: job_key(&job.target, job.version.as_deref()),
                payload: serde_json::to_string(&job).unwrap_or_default(),
            }
        })
        .collect();
    let run = run.unwrap_or_else(|| format!("sweep-{started_at}"));
    let added = queue
        .enqueue(&run, &jobs)
        .map_err(RoleError::doing("enqueueing the sweep"))?;
    Ok(Enqueued {
        run,
        snapshot,
        targets: listed,
        added,
        complete: true,
    })
}

/// A worker's package half: its own queue connection, the package registries and the sandbox.
pub struct PackageWorker {
    queue: Queue,
    blobs: Blobs,
    source: PackageSource,
    observer: Observer,
    concurrency: usize,
    /// Its claims' lease ([`worker_lease`]), renewed every third of it while a batch runs.
    lease: std::time::Duration,
    snapshots: Snapshots<HashMap<String, Chosen>>,
    status: Arc<RoleStatus>,
}

impl PackageWorker {
    /// The package half of a worker over `config`'s queue, stores and `[packages]` settings;
    /// `None` where gVisor (`runsc`) is not installed: such a worker takes no package job.
    pub fn new(
        config: &Config,
        dir: &DataDir,
        status: Arc<RoleStatus>,
    ) -> Result<Option<PackageWorker>, RoleError> {
        let observer = config.packages.observer();
        if observer.runsc.is_none() {
            return Ok(None);
        }
        if let Some(problem) = config.packages.problem() {
            return Err(RoleError::Refused(problem));
        }
        std::fs::create_dir_all(&observer.work).map_err(RoleError::doing(format!(
            "the sandbox's work directory {}",
            observer.work.display()
        )))?;
        let queue = Queue::connect(&queue_url(config)?, &holder("worker-packages"))
            .map_err(RoleError::doing("the queue"))?;
        Ok(Some(PackageWorker {
            queue,
            blobs: dir.blobs().map_err(RoleError::doing("the documents"))?,
            source: PackageSource::new(&config.packages),
            observer,
            concurrency: config.packages.concurrency,
            lease: worker_lease(config),
            snapshots: Snapshots::default(),
            status,
        }))
    }

    /// The version `job` names, from its snapshot (read once per snapshot).
    fn chosen(&mut self, job: &PackageJob) -> Result<Chosen, Unreadable> {
        let targets = self
            .snapshots
            .get(&self.blobs, &job.snapshot, package_targets)?;
        let mut chosen = targets.get(&job.target).cloned().ok_or_else(|| {
            Unreadable::Job(format!(
                "package target {} is not in snapshot {}",
                job.target, job.snapshot
            ))
        })?;
        chosen.version.clone_from(&job.version);
        Ok(chosen)
    }

    /// One batch: claims up to `packages.concurrency` package jobs, observes them at once in
    /// the sandbox and completes each with its entry. Blocks the calling thread. Returns how
    /// many it completed (0: none was waiting); a job whose result cannot be stored is failed
    /// for a later attempt, and the batch's first error returned after that.
    pub fn work_once(&mut self, runtime: &tokio::runtime::Handle) -> Result<usize, RoleError> {
        let claims = self
            .queue
            .claim(&[PACKAGE], self.concurrency, self.lease)
            .map_err(RoleError::doing("claiming package jobs"))?;
        let mut first_error = None;
        let mut work = Vec::new();
        for claim in claims {
            let chosen = serde_json::from_str::<PackageJob>(&claim.payload)
                .map_err(|e| Unreadable::Job(format!("unreadable job: {e}")))
                .and_then(|job| self.chosen(&job).map(|c| (job, c)));
            match chosen {
                Ok((job, chosen)) => work.push((claim, job, chosen)),
                Err(Unreadable::Store(why)) => {
                    tracing::warn!("job {} ({}): {why}", claim.id, claim.key);
                    note(
                        &mut first_error,
                        lost_is_fine(self.queue.defer(&claim, FAILED_RETRY)),
                    );
                }
                Err(Unreadable::Job(why)) => {
                    tracing::warn!("job {} ({}): {why}", claim.id, claim.key);
                    self.status.count("jobs_failed", 1);
                    note(
                        &mut first_error,
                        lost_is_fine(self.queue.fail(&claim, &why, FAILED_RETRY).map(drop)),
                    );
                }
            }
        }
        if work.is_empty() {
            return first_error.map_or(Ok(0), Err);
        }
        let (source, observer, lease) = (&self.source, &self.observer, self.lease);
        let mut claims: Vec<Claim> = work.iter().map(|(c, _, _)| c.clone()).collect();
        let queue = &mut self.queue;
        let observing = std::sync::atomic::AtomicBool::new(true);
        let observed = std::thread::scope(|scope| {
            // The claims stay this worker's while the sandboxes run, however long they take.
            scope.spawn(|| {
                let step = std::time::Duration::from_millis(200);
                let mut waited = std::time::Duration::ZERO;
                while observing.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(step);
                    waited += step;
                    if waited >= lease / 3 {
                        waited = std::time::Duration::ZERO;
                        for c in &mut claims {
                            if let Err(e) = queue.renew(c, lease) {
                                tracing::warn!("job {}: renewing its claim: {e}", c.id);
                            }
                        }
                    }
                }
            });
            let observed = runtime.block_on(futures_util::future::join_all(work.iter().map(
                |(claim, _, chosen)| {
                    // The claim's id is unique among the observations this process runs at
                    // once.
                    let slot = usize::try_from(claim.id).unwrap_or_default();
                    source.observe(observer, slot, chosen)
                },
            )));
            observing.store(false, std::sync::atomic::Ordering::Relaxed);
            observed
        });
        let mut done = 0;
        for ((claim, job, chosen), observation) in work.into_iter().zip(observed) {
            tracing::info!("{} ({}): {}", claim.key, job.why, observation.status.name());
            let item = TargetOutcome {
                target: chosen.target,
                observation: Some(observation),
            };
            let prepared: Result<Prepared, IndexError> = prepare(&item, &job.started_at);
            let stored = super::store(&self.blobs, prepared);
            match stored.and_then(|s| complete(&mut self.queue, &claim, s)) {
                Ok(true) => done += 1,
                Ok(false) => self.status.count("claims_lost", 1),
                Err(e) => {
                    let why = crate::chain(&e);
                    tracing::warn!("job {} ({}): {why}", claim.id, claim.key);
                    self.status.count("jobs_failed", 1);
                    note(
                        &mut first_error,
                        lost_is_fine(self.queue.fail(&claim, &why, FAILED_RETRY).map(drop)),
                    );
                    note(&mut first_error, Err(e));
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }
}

/// The package half of `toolmark worker`: package jobs until `stop` (the batch in hand is
/// observed and completed first).
pub(super) async fn run(mut worker: PackageWorker, stop: Stop) {
    let status = worker.status.clone();
    loop {
        if stop.is_cancelled() {
            break;
        }
        let handle = tokio::runtime::Handle::current();
        let joined = tokio::task::spawn_blocking(move || {
            let done = worker.work_once(&handle);
            (worker, done)
        })
        .await;
        let Ok((back, done)) = joined else {
            tracing::error!("worker: the package task panicked; no more package jobs here");
            return;
        };
        worker = back;
        let idle = match done {
            Ok(0) => true,
            Ok(n) => {
                status.count("package_jobs_done", n as u64);
                false
            }
            Err(e) => {
                let why = crate::chain(&e);
                status.pass_failed(&why);
                tracing::warn!("worker (packages): {why}");
                true
            }
        };
        if idle && super::pause(&stop, super::POLL).await {
            break;
        }
    }
    let _ = tokio::task::spawn_blocking(move || drop(worker)).await;
}
