//! `toolmark run`: the whole service in one process — the API role (API, feeds and desk) and
//! the scheduler role (the registry crawl, the package sweep, the checkpoint heartbeat, the
//! witnesses' watch, webhook delivery, the popularity refresh) — over one data directory.
//!
//! Shutdown is one [`Stop`]: when it fires the scheduler signals the running jobs (a crawl stops
//! taking targets, lets the observations in flight finish and records them; the heartbeat
//! finishes its signature), the witnesses' watch ends, and the API finishes the requests in
//! flight within its shutdown deadline; then [`run`] returns.

use std::sync::Arc;
use std::time::Duration;

use toolmark_config::Config;
use toolmark_schedules::{Clock, JobSpec, LeaseStore, Scheduler, SystemClock};

use crate::jobs::{self, LogWriter, data_dir};
use crate::{RoleError, Stop};

/// Runs the API and the scheduler over `config`'s data directory until `stop` fires. The log
/// is created on first start (a crawl catches the index up on every run); an existing log is
/// not opened for writing here: another process's crawl may hold it, and that is fine for
/// serving.
pub async fn run(config: Config, stop: Stop) -> Result<(), RoleError> {
    let data = &config.data;
    let dir = data_dir(&config);
    let key = dir.log_key();
    if !key.exists() {
        let created = tokio::task::block_in_place(|| dir.open_writer(&config.origin).map(drop));
        // Two services started at once over a new directory: one creates the log, the other
        // finds it created (or locked) and goes on.
        if let Err(e) = created {
            if !key.exists() {
                return Err(RoleError::doing("creating the log")(e));
            }
            tracing::info!("the log was created by another process meanwhile ({e})");
        }
    }
    let vkey = dir
        .vkey()
        .map_err(RoleError::doing("the log's verifier key"))?;
    let (listener, bound, base) = crate::api::listen(&config).await?;
    let mut state = crate::api::open_state(&dir, &base, &config.api_options())?;
    tracing::info!(
        "toolmark {} serving http://{bound}/ (public base {base})",
        env!("CARGO_PKG_VERSION")
    );
    tracing::info!(
        "data {} — log verifier key {} (signing key {}), answer key {}",
        data.display(),
        vkey.trim(),
        key.display(),
        dir.answer_key_path().display()
    );
    tracing::info!("registry {}", config.registry);

    // The schedules.
    let store = Arc::new(
        LeaseStore::open(dir.schedules_path())
            .map_err(RoleError::doing("opening the schedules database"))?,
    );
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let holder = format!("{}:{}", host.trim(), std::process::id());
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    state.jobs = Some(crate::api::schedules_of(store.clone()));
    let mut scheduler = Scheduler::new(store, clock, holder);
    let writer: LogWriter = Arc::default();
    let lease = Duration::from_secs(config.schedules.lease_seconds);
    let spec = |name: &str, cron: &str| {
        JobSpec::new(name, cron)
            .map(|s| s.with_lease(lease))
            .map_err(RoleError::doing(format!("the {name} schedule")))
    };
    let crawl = spec("crawl", &config.schedules.crawl)?;
    scheduler
        .add(crawl, jobs::crawl_job(&config, writer.clone()))
        .map_err(RoleError::doing("adding the crawl"))?;
    if !config.schedules.package_sweep.is_empty() {
        let sweep = spec("package-sweep", &config.schedules.package_sweep)?;
        scheduler
            .add(sweep, jobs::sweep_job(&config, writer.clone()))
            .map_err(RoleError::doing("adding the sweep"))?;
    }
    if !config.schedules.popularity.is_empty() {
        let popularity = spec("popularity", &config.schedules.popularity)?;
        scheduler
            .add(
                popularity,
                jobs::popularity_job(&config, state.names.clone()),
            )
            .map_err(RoleError::doing("adding the popularity refresh"))?;
    }
    // Witnesses: a round whenever the log signs a new checkpoint, and on every heartbeat.
    let cosigner = jobs::cosigner(&config)?;
    jobs::set_publication(&dir, cosigner.is_some(), &writer).await;
    let heartbeat = spec("heartbeat", &config.schedules.heartbeat)?;
    scheduler
        .add(
            heartbeat,
            jobs::heartbeat_job(&config, writer, cosigner.clone()),
        )
        .map_err(RoleError::doing("adding the heartbeat"))?;
    // Webhooks: a delivery pass on its schedule, only when subscriptions are configured.
    if let Some(deliverer) = jobs::deliverer(&config, &base)? {
        let webhooks = spec("webhooks", &config.schedules.webhooks)?;
        scheduler
            .add(webhooks, jobs::webhooks_job(deliverer))
            .map_err(RoleError::doing("adding webhook delivery"))?;
    }
    log_next_runs(&config, &scheduler)?;

    if let Some(cosigner) = cosigner {
        jobs::spawn_watch(cosigner, &config, &stop);
    }
    let schedules = tokio::spawn(scheduler.run(stop.clone().cancelled_owned()));
    let served = toolmark_api::serve(
        listener,
        state,
        config.http.limits(),
        stop.cancelled_owned(),
    )
    .await
    .map_err(RoleError::doing("serving"));
    let summary = schedules
        .await
        .map_err(RoleError::doing("the scheduler task"))?;
    tracing::info!("stopped: {summary:?}");
    served
}

/// Logs when each job runs next (or that it runs now, catching up).
fn log_next_runs(config: &Config, scheduler: &Scheduler) -> Result<(), RoleError> {
    let crons = [
        ("crawl", &config.schedules.crawl),
        ("package-sweep", &config.schedules.package_sweep),
        ("popularity", &config.schedules.popularity),
        ("heartbeat", &config.schedules.heartbeat),
        ("webhooks", &config.schedules.webhooks),
    ];
    let next = scheduler
        .next_runs()
        .map_err(RoleError::doing("the next runs"))?;
    for (job, at, due) in next {
        let cron = crons
            .iter()
            .find(|(name, _)| *name == job)
            .map_or("", |(_, c)| c.as_str());
        let at = at.format("%Y-%m-%dT%H:%M:%SZ");
        if due {
            tracing::info!(
                "job {job} ({cron}): runs now, catching up (never succeeded, or a scheduled time passed since its last success)"
            );
        } else {
            tracing::info!("job {job} ({cron}): next run at {at}");
        }
    }
    Ok(())
}
