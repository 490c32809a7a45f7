//! `toolmark run`: the whole service in one process — the API, feeds and desk, and the
//! schedules (the registry crawl, the package sweep, the checkpoint heartbeat, webhook delivery)
//! — over one data directory.
//!
//! Shutdown (SIGTERM or SIGINT): the scheduler signals the running jobs; a crawl stops taking
//! targets, lets the observations in flight finish and records them (its last batch is signed
//! and committed like any other), the heartbeat finishes its signature; the API finishes the
//! requests in flight; then the process exits 0. A second signal exits at once (130): what was
//! committed is safe, the batch in progress is not acknowledged and the next run closes it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use toolmark_schedules::{
    Clock, JobContext, JobError, JobFn, JobSpec, LeaseStore, Scheduler, SystemClock,
};

use toolmark_index::DataDir;
use toolmark_ingest::{CrawlRun, Stop};

use toolmark_config::{Config, RunFlags};

/// Serializes this process's log writers (the crawl and the heartbeat): the log allows one
/// writer at a time (a file lock), so the heartbeat waits for a crawl instead of failing.
type LogWriter = Arc<tokio::sync::Mutex<()>>;

pub fn run(args: RunFlags) -> Result<bool> {
    let config = match Config::load(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toolmark run: bad configuration: {e:#}");
            std::process::exit(2);
        }
    };
    if args.print_config {
        print!("{}", config.to_toml()?);
        return Ok(true);
    }
    let runtime = crate::serve_cli::runtime()?;
    runtime.block_on(service(config))?;
    Ok(true)
}

async fn service(config: Config) -> Result<()> {
    // The data directory: the log is created on first start (a crawl catches the index up on
    // every run). An existing log is not opened for writing here: another process's crawl may
    // hold it, and that is fine for serving.
    let data = &config.data;
    let dir = data_dir(&config);
    let key = dir.log_key();
    if !key.exists() {
        let created = tokio::task::block_in_place(|| dir.open_writer(&config.origin).map(drop));
        // Two services started at once over a new directory: one creates the log, the other
        // finds it created (or locked) and goes on.
        if let Err(e) = created {
            if !key.exists() {
                return Err(e.into());
            }
            tracing::info!("the log was created by another process meanwhile ({e:#})");
        }
    }
    let vkey = dir.vkey()?;
    let listener = toolmark_server::bind(config.listen).await?;
    let bound = listener.local_addr()?;
    let base = config.public_base(bound);
    let state = crate::serve_cli::open_state(&dir, &base, &config.api_options())?;
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
    let store =
        Arc::new(LeaseStore::open(dir.schedules_path()).context("opening the schedules database")?);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let holder = format!("{}:{}", host.trim(), std::process::id());
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let mut scheduler = Scheduler::new(store, clock, holder);
    let writer: LogWriter = Arc::default();
    let lease = Duration::from_secs(config.schedules.lease_seconds);
    let crawl = JobSpec::new("crawl", &config.schedules.crawl)?.with_lease(lease);
    scheduler.add(crawl, crawl_job(&config, writer.clone()))?;
    if !config.schedules.package_sweep.is_empty() {
        let sweep =
            JobSpec::new("package-sweep", &config.schedules.package_sweep)?.with_lease(lease);
        scheduler.add(sweep, sweep_job(&config, writer.clone()))?;
    }
    if !config.schedules.popularity.is_empty() {
        let popularity =
            JobSpec::new("popularity", &config.schedules.popularity)?.with_lease(lease);
        scheduler.add(popularity, popularity_job(&config, state.names.clone()))?;
    }
    // Witnesses: a round whenever the log signs a new checkpoint, and on every heartbeat.
    let cosigner = cosigner(&config)?;
    set_publication(&dir, cosigner.is_some(), &writer).await;
    let heartbeat = JobSpec::new("heartbeat", &config.schedules.heartbeat)?.with_lease(lease);
    scheduler.add(heartbeat, heartbeat_job(&config, writer, cosigner.clone()))?;
    // Webhooks: a delivery pass on its schedule, only when subscriptions are configured.
    if let Some(deliverer) = crate::webhooks_cli::deliverer(&config, &base)? {
        let webhooks = JobSpec::new("webhooks", &config.schedules.webhooks)?.with_lease(lease);
        scheduler.add(webhooks, crate::webhooks_cli::job(deliverer))?;
    }
    let crons = [
        ("crawl", &config.schedules.crawl),
        ("package-sweep", &config.schedules.package_sweep),
        ("popularity", &config.schedules.popularity),
        ("heartbeat", &config.schedules.heartbeat),
        ("webhooks", &config.schedules.webhooks),
    ];
    for (job, at, due) in scheduler.next_runs()? {
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

    // Run until SIGTERM/SIGINT; a second signal exits at once.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        crate::serve_cli::terminated().await;
        tracing::info!(
            "shutting down: jobs finish and commit what they did; a second signal exits at once"
        );
        let _ = stop_tx.send(true);
        crate::serve_cli::terminated().await;
        tracing::warn!("second signal: exiting now");
        std::process::exit(130);
    });
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    if let Some(cosigner) = cosigner {
        let token = tokio_util::sync::CancellationToken::new();
        let cancel = token.clone();
        let stop = stopped();
        tokio::spawn(async move {
            stop.await;
            cancel.cancel();
        });
        tokio::spawn(toolmark_cosign::watch(
            cosigner,
            toolmark_cosign::WATCH_POLL,
            Duration::from_secs(config.witnessing.min_interval_seconds),
            token,
        ));
    }
    let schedules = tokio::spawn(scheduler.run(stopped()));
    let served = toolmark_api::serve(listener, state, config.http.limits(), stopped())
        .await
        .context("serving");
    let summary = schedules.await.context("the scheduler task")?;
    tracing::info!("stopped: {summary:?}");
    served
}

/// A job that writes the log: it takes this process's log writer, then runs `work` on a
/// blocking thread with the runtime's handle, the configuration and the job's stop signal
/// (shutdown or a lost lease stops it); `work`'s error is the job's.
fn writing_job(
    config: &Config,
    writer: LogWriter,
    what: &'static str,
    work: fn(&tokio::runtime::Handle, &Config, &Stop) -> Result<String>,
) -> JobFn {
    let config = Arc::new(config.clone());
    Arc::new(move |ctx: JobContext| {
        let config = config.clone();
        let writer = writer.clone();
        Box::pin(async move {
            let _writing = writer.lock().await;
            let stop: Stop = ctx.stop.clone();
            let handle = tokio::runtime::Handle::current();
            tokio::task::spawn_blocking(move || work(&handle, &config, &stop))
                .await
                .map_err(|e| JobError::new(format!("the {what} task: {e}")))?
                .map_err(|e| JobError::new(format!("{e:#}")))
        })
    })
}

/// The registry crawl as a job.
fn crawl_job(config: &Config, writer: LogWriter) -> JobFn {
    writing_job(config, writer, "crawl", |handle, config, stop| {
        let data = data_dir(config);
        // A delta from the last complete harvest, or a full one when due or when none is
        // stored (`crawl.harvest`, `crawl.full_harvest_days`).
        let run = CrawlRun {
            data: &data,
            origin: &config.origin,
            registry: &config.registry,
            since: None,
            options: &config.crawl,
            trust: toolmark_ingest::Trust::platform(),
        };
        let summary = crate::crawl_cli::crawl_once(handle, &run, stop)?;
        Ok(format!(
            "run {} (harvest {}): {} targets, {} entries appended, {} changes, log size {}",
            summary.report.run,
            summary.report.harvest.mode,
            summary.lines.len(),
            summary.appended,
            summary.changes(),
            summary.report.log_size
        ))
    })
}

/// The package sweep as a job: it holds the log for its run, as the crawl does; versions left
/// when it was stopped make it fail (so the next fire time takes them).
fn sweep_job(config: &Config, writer: LogWriter) -> JobFn {
    writing_job(config, writer, "sweep", |handle, config, stop| {
        let data = data_dir(config);
        let summary = crate::package_cli::sweep_once(
            handle,
            &data,
            &config.origin,
            &config.registry,
            &config.packages,
            stop,
        )?;
        let r = &summary.report;
        let message = format!(
            "sweep run {}: {} packages listed, {} versions observed, {} abandoned, log size {}",
            r.run,
            r.packages,
            summary.lines.len(),
            r.abandoned,
            r.log_size
        );
        if r.abandoned > 0 {
            anyhow::bail!(message);
        }
        Ok(message)
    })
}

/// Refresh the look-alike rules' download counts (`toolmark package popularity --refresh`):
/// writes `DATA/popularity/popularity-TODAY.txt` and has the API answer from it. It does not
/// touch the log.
fn popularity_job(config: &Config, names: Arc<toolmark_api::lookalike::Names>) -> JobFn {
    let data = config.data.clone();
    Arc::new(move |_ctx: JobContext| {
        let data = data.clone();
        let names = names.clone();
        Box::pin(async move {
            let handle = tokio::runtime::Handle::current();
            tokio::task::spawn_blocking(move || {
                let r = crate::names_cli::refresh(
                    &handle,
                    &data,
                    crate::names_cli::DEFAULT_REFRESH_NAMES,
                    &toolmark_crawler::popularity::CountSources::default(),
                    false,
                )
                .map_err(|e| JobError::new(format!("{e:#}")))?;
                names
                    .reload(&data)
                    .map_err(|e| JobError::new(format!("reading the new snapshot: {e}")))?;
                Ok(format!(
                    "popularity snapshot {} written and in use: {} counts, {} names failed (older counts kept)",
                    r.path.display(),
                    r.counted,
                    r.failed_count
                ))
            })
            .await
            .map_err(|e| JobError::new(format!("the popularity task: {e}")))?
        })
    })
}

/// The witnesses' cosigner, when `[witnessing]` configures any.
fn cosigner(config: &Config) -> Result<Option<Arc<toolmark_cosign::Cosigner>>> {
    let Some(policy) = config.witness_policy()? else {
        return Ok(None);
    };
    let dir = data_dir(config);
    let client = toolmark_crawler::mcp::ClientConfig {
        policy: toolmark_crawler::guard::Policy {
            allow_private: config.crawl.allow_private,
        },
        resolver: toolmark_ingest::resolver(&config.crawl)?,
        user_agent: format!(
            "toolmark/{} (checkpoint cosigning, C2SP tlog-witness)",
            env!("CARGO_PKG_VERSION")
        ),
        ..toolmark_crawler::mcp::ClientConfig::default()
    };
    tracing::info!(
        "witnesses: {} ({}); checkpoints are published once cosigned",
        policy
            .witnesses()
            .iter()
            .map(|w| w.key.vkey())
            .collect::<Vec<_>>()
            .join(", "),
        policy.describe()
    );
    let cosigner = toolmark_cosign::Cosigner::new(
        &dir.log_dir(),
        &config.data.join(toolmark_cosign::STATUS_FILE),
        policy,
        client,
        Duration::from_secs(config.witnessing.timeout_seconds),
        toolmark_cosign::system_clock(),
    )?
    .with_storage(dir.storage().clone(), dir.log_public_objects()?);
    Ok(Some(Arc::new(cosigner)))
}

/// Makes the log's publication wait for witnesses (or not), if the log can be opened for
/// writing now; otherwise the heartbeat does it when it next holds the log.
async fn set_publication(dir: &DataDir, witnessed: bool, writer: &LogWriter) {
    let _writing = writer.lock().await;
    let dir = dir.clone();
    let done = tokio::task::spawn_blocking(move || {
        dir.log().and_then(|mut log| log.set_witnessed(witnessed))
    })
    .await;
    match done {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(
            "the log's publication mode is set at the next heartbeat (the log is busy: {e})"
        ),
        Err(e) => tracing::warn!("setting the log's publication mode: {e}"),
    }
}

/// The heartbeat: with witnesses, a round on the current tree (their cosignatures' times move,
/// which is signed freshness); without, re-sign the current checkpoint (its publication time is
/// the log's heartbeat).
fn heartbeat_job(
    config: &Config,
    writer: LogWriter,
    cosigner: Option<Arc<toolmark_cosign::Cosigner>>,
) -> JobFn {
    let dir = data_dir(config);
    Arc::new(move |_ctx: JobContext| {
        let dir = dir.clone();
        let writer = writer.clone();
        let cosigner = cosigner.clone();
        Box::pin(async move {
            if let Some(cosigner) = cosigner {
                set_publication(&dir, true, &writer).await;
                let round = cosigner
                    .round()
                    .await
                    .map_err(|e| JobError::new(format!("witness round: {e}")))?;
                let cosigned = round.witnesses.iter().filter(|(_, r)| r.is_ok()).count();
                return if round.published {
                    Ok(format!(
                        "checkpoint of size {} cosigned by {cosigned} of {} witnesses and published",
                        round.size,
                        round.witnesses.len()
                    ))
                } else {
                    Err(JobError::new(
                        round
                            .status
                            .error
                            .unwrap_or_else(|| "not published".to_owned()),
                    ))
                };
            }
            let _writing = writer.lock().await;
            tokio::task::spawn_blocking(move || {
                let mut log = dir
                    .log()
                    .map_err(|e| JobError::new(format!("opening the log: {e}")))?;
                let head = log
                    .resign()
                    .map_err(|e| JobError::new(format!("re-signing: {e}")))?;
                Ok(format!("checkpoint of size {} re-signed", head.size))
            })
            .await
            .map_err(|e| JobError::new(format!("the heartbeat task: {e}")))?
        })
    })
}

/// The data directory of `config`, its log and documents in the stores `[storage]` names
/// (validated when the configuration was loaded).
fn data_dir(config: &Config) -> DataDir {
    DataDir::with_storage(&config.data, config.storage.spec().unwrap_or_default())
}
