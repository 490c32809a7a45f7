//! The API role: the runtime it runs on, its state over a data directory, and serving it
//! (`toolmark serve`, and the API half of `toolmark run`).

use std::sync::Arc;

use toolmark_api::{ApiOptions, AppState, JobStates};
use toolmark_index::DataDir;
use toolmark_schedules::LeaseStore;

use crate::RoleError;

/// The async runtime every serving role uses (`toolmark_api::runtime`: blocking pool capped).
pub fn runtime() -> Result<tokio::runtime::Runtime, RoleError> {
    toolmark_api::runtime().map_err(RoleError::doing("starting the async runtime"))
}

/// The API's state over `dir` (which must hold a log), with its rate limits and cache, and the
/// jobs of a `toolmark run` that keeps its schedules in `dir` ([`schedules_in`]). An index of an
/// older schema is migrated first (the readers query the current one's tables); an index that
/// does not exist yet is left for the first crawl to create.
pub fn open_state(dir: &DataDir, base: &str, options: &ApiOptions) -> Result<AppState, RoleError> {
    let index = dir.index_path();
    if index.exists() {
        toolmark_index::Index::open(&index).map_err(RoleError::doing(format!(
            "opening {} to migrate it",
            index.display()
        )))?;
    }
    let mut state =
        AppState::open_dir_with(dir, base, options).map_err(RoleError::doing(format!(
            "opening {} (log in {})",
            dir.root().display(),
            dir.storage().describe()
        )))?;
    state.jobs = Some(schedules_in(dir));
    Ok(state)
}

/// The latest runs in `dir`'s schedules database, read at each call (another process's
/// `toolmark run` writes it); none while there is none.
pub fn schedules_in(dir: &DataDir) -> JobStates {
    let path = dir.schedules_path();
    Arc::new(move || {
        if !path.exists() {
            return Ok(Vec::new());
        }
        LeaseStore::open(&path)
            .and_then(|s| s.jobs())
            .map_err(|e| e.to_string())
    })
}

/// Runs of each kind of cluster job read for the job states ([`cluster_jobs`]).
const CLUSTER_RUNS_READ: usize = 20;
/// How long the cluster's job states are reused before the queue is asked again (`/health` may
/// be probed often; summing the queue's jobs is not free at the registry's size).
const CLUSTER_JOBS_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// The cluster's runs as an API replica's job states (`/health`'s `jobs`), from the queue in
/// PostgreSQL: per job — `crawl` (remote jobs), `sweep` (package jobs), `webhooks`,
/// `popularity` — its latest run (`running` while jobs are open, `ok` when every job is done,
/// `failed` when one failed or was abandoned), latest finished run and latest success. Read at
/// most once per [`CLUSTER_JOBS_TTL`].
pub fn cluster_jobs(db: Arc<crate::shared::Db>) -> JobStates {
    type Cached = Option<(
        std::time::Instant,
        Result<Vec<toolmark_schedules::JobState>, String>,
    )>;
    let cache: Arc<std::sync::Mutex<Cached>> = Arc::default();
    Arc::new(move || {
        let mut cached = cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, states)) = cached.as_ref() {
            if at.elapsed() < CLUSTER_JOBS_TTL {
                return states.clone();
            }
        }
        // A failure is kept as long as an answer: probes of a replica whose database is down
        // do not each wait for it.
        let states = db
            .with(|q| q.runs(CLUSTER_RUNS_READ))
            .map(|runs| job_states(&runs))
            .map_err(|e| e.to_string());
        *cached = Some((std::time::Instant::now(), states.clone()));
        states
    })
}

/// The job states of `runs` ([`toolmark_queue::Queue::runs`]: newest first per kind).
fn job_states(runs: &[toolmark_queue::RunSummary]) -> Vec<toolmark_schedules::JobState> {
    use toolmark_schedules::{JobState, RunRecord, RunStatus};
    let job_of = |kind: &str| match kind {
        "remote" => "crawl".to_owned(),
        "package" => "sweep".to_owned(),
        other => other.to_owned(),
    };
    let record = |(i, r): (usize, &toolmark_queue::RunSummary)| {
        let started = chrono::DateTime::<chrono::Utc>::from(r.started);
        let status = if r.open > 0 {
            RunStatus::Running
        } else if r.failed > 0 {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        };
        RunRecord {
            id: i64::try_from(i).unwrap_or(i64::MAX),
            job: job_of(&r.kind),
            holder: "cluster".into(),
            attempt: 1,
            scheduled_for: started,
            started_at: started,
            finished_at: (r.open == 0)
                .then(|| r.finished.map(chrono::DateTime::from))
                .flatten(),
            status,
            detail: Some(format!(
                "run {}: {} jobs open, {} failed",
                r.run, r.open, r.failed
            )),
        }
    };
    let mut states: Vec<JobState> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let job = job_of(&r.kind);
        let rec = record((i, r));
        match states.iter_mut().find(|s| s.job == job) {
            None => states.push(JobState {
                job,
                last_finished: (r.open == 0).then(|| rec.clone()),
                last_success: (rec.status == RunStatus::Ok).then_some(rec.started_at),
                last: rec,
            }),
            Some(s) => {
                if s.last_finished.is_none() && r.open == 0 {
                    s.last_finished = Some(rec.clone());
                }
                if s.last_success.is_none() && rec.status == RunStatus::Ok {
                    s.last_success = Some(rec.started_at);
                }
            }
        }
    }
    states
}

/// The latest runs of the scheduler holding `store`.
pub fn schedules_of(store: Arc<LeaseStore>) -> JobStates {
    Arc::new(move || store.jobs().map_err(|e| e.to_string()))
}

/// `toolmark serve`: the API over `dir` (which `toolmark crawl` fills) on `listen` until `stop`
/// fires; the public base is `base_url`, else the bound address (`127.0.0.1:0` gets a real
/// port).
pub async fn serve_dir(
    dir: &DataDir,
    listen: std::net::SocketAddr,
    base_url: Option<String>,
    options: &ApiOptions,
    limits: toolmark_server::Limits,
    stop: crate::Stop,
) -> Result<(), RoleError> {
    let (listener, bound) = bind(listen).await?;
    let base = base_url.unwrap_or_else(|| format!("http://{bound}"));
    let state = open_state(dir, &base, options)?;
    tracing::info!(
        "toolmark serving {} on http://{bound} (public base {base})",
        dir.root().display(),
    );
    toolmark_api::serve(listener, state, limits, stop.cancelled_owned())
        .await
        .map_err(RoleError::doing("serving"))
}

/// The API's listener on `config.listen`, the address it bound and the public base URL
/// (`base_url`, else the bound address: `127.0.0.1:0` gets a real port).
pub async fn listen(
    config: &toolmark_config::Config,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr, String), RoleError> {
    let (listener, bound) = bind(config.listen).await?;
    let base = config.public_base(bound);
    Ok((listener, bound, base))
}

/// A listener on `listen` (`toolmark_server::bind`) and the address it bound.
pub async fn bind(
    listen: std::net::SocketAddr,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr), RoleError> {
    let listener = toolmark_server::bind(listen)
        .await
        .map_err(RoleError::doing(format!("listening on {listen}")))?;
    let bound = listener
        .local_addr()
        .map_err(RoleError::doing("the bound address"))?;
    Ok((listener, bound))
}
