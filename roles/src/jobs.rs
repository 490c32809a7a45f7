//! The scheduler's jobs, each a [`JobFn`] built from the configuration: the registry crawl, the
//! package sweep, the heartbeat (a witness round, or a re-signature), the popularity refresh
//! and webhook delivery; and the witnesses' cosigner the heartbeat and the watch share.

use std::sync::Arc;
use std::time::Duration;

use toolmark_config::Config;
use toolmark_index::DataDir;
use toolmark_ingest::{CrawlRun, IngestError, RunSummary, Stop, SweepSummary};
use toolmark_outbound::Outbound;
use toolmark_outbound::guard::Policy;
use toolmark_schedules::{JobContext, JobError, JobFn};
use toolmark_webhooks::{Deliverer, PassReport};

use crate::RoleError;
use crate::error::chain;

/// Serializes a process's log writers (the crawl, the sweep and the heartbeat): on one box the
/// log allows one writer at a time (a file lock), so the heartbeat waits for a crawl instead of
/// failing.
pub type LogWriter = Arc<tokio::sync::Mutex<()>>;

/// The data directory of `config`, its log and documents in the stores `[storage]` names
/// (validated when the configuration was loaded).
pub fn data_dir(config: &Config) -> DataDir {
    DataDir::with_storage(&config.data, config.storage.spec().unwrap_or_default())
}

/// One crawl run with its totals logged (one status a line), blocking the calling thread;
/// what `toolmark crawl` and the crawl job share.
pub fn crawl_once(
    runtime: &tokio::runtime::Handle,
    run: &CrawlRun<'_>,
    stop: &Stop,
    progress: &dyn toolmark_ingest::Progress,
) -> Result<RunSummary, IngestError> {
    let result = toolmark_ingest::run_crawl(runtime, run, stop, progress);
    match &result {
        Ok(s) => log_totals(s),
        Err(IngestError::Stopped { summary, .. }) => log_totals(summary),
        Err(_) => {}
    }
    result
}

/// Log a run's totals, one status a line.
pub fn log_totals(summary: &RunSummary) {
    for (status, n) in &summary.report.totals {
        tracing::info!("  {status:>24} {n}");
    }
}

/// One package sweep over `data`, blocking the calling thread (not one of `runtime`'s
/// workers): the observer of `options` (`SweepOptions::observer`), its cache created first.
pub fn sweep_once(
    runtime: &tokio::runtime::Handle,
    data: &DataDir,
    origin: &str,
    registry: &str,
    options: &toolmark_ingest::SweepOptions,
    stop: &Stop,
) -> Result<SweepSummary, RoleError> {
    std::fs::create_dir_all(&options.cache).map_err(RoleError::doing(format!(
        "{}: cannot create",
        options.cache.display()
    )))?;
    let observer = options.observer();
    let run = toolmark_ingest::SweepRun {
        data,
        origin,
        registry,
        options,
        observer: &observer,
        only: None,
    };
    toolmark_ingest::run_sweep(runtime, &run, stop).map_err(RoleError::doing("the sweep"))
}

/// What a job's blocking work returns: its message, or why it failed.
type Work = fn(&tokio::runtime::Handle, &Config, &Stop) -> Result<String, String>;

/// A job that writes the log: it takes this process's log writer, then runs `work` on a
/// blocking thread with the runtime's handle, the configuration and the job's stop signal
/// (shutdown or a lost lease stops it); `work`'s error is the job's.
fn writing_job(config: &Config, writer: LogWriter, what: &'static str, work: Work) -> JobFn {
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
                .map_err(JobError::new)
        })
    })
}

/// The registry crawl as a job: a delta from the last complete harvest, or a full one when due
/// or when none is stored (`crawl.harvest`, `crawl.full_harvest_days`).
pub fn crawl_job(config: &Config, writer: LogWriter) -> JobFn {
    writing_job(config, writer, "crawl", |handle, config, stop| {
        let data = data_dir(config);
        let run = CrawlRun {
            data: &data,
            origin: &config.origin,
            registry: &config.registry,
            since: None,
            options: &config.crawl,
            trust: config.crawl.trust()?,
        };
        let summary = crawl_once(handle, &run, stop, &()).map_err(|e| chain(&e))?;
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
pub fn sweep_job(config: &Config, writer: LogWriter) -> JobFn {
    writing_job(config, writer, "sweep", |handle, config, stop| {
        let data = data_dir(config);
        let summary = sweep_once(
            handle,
            &data,
            &config.origin,
            &config.registry,
            &config.packages,
            stop,
        )
        .map_err(|e| chain(&e))?;
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
            return Err(message);
        }
        Ok(message)
    })
}

/// Refresh the look-alike rules' download counts ([`crate::popularity::refresh`]): writes
/// `DATA/popularity/popularity-TODAY.txt` and has the API answer from it. It does not touch
/// the log.
pub fn popularity_job(config: &Config, names: Arc<toolmark_api::lookalike::Names>) -> JobFn {
    let data = config.data.clone();
    Arc::new(move |_ctx: JobContext| {
        let data = data.clone();
        let names = names.clone();
        Box::pin(async move {
            let handle = tokio::runtime::Handle::current();
            tokio::task::spawn_blocking(move || {
                let r = crate::popularity::refresh(
                    &handle,
                    &data,
                    crate::popularity::DEFAULT_REFRESH_NAMES,
                    &toolmark_crawler::popularity::CountSources::default(),
                    false,
                )
                .map_err(|e| JobError::new(chain(&e)))?;
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

/// The client settings of a request toolmark makes on its own behalf (a witness submission, a
/// webhook post): the crawl's SSRF policy and name resolution (`crawl.allow_private`, for tests
/// and demos only; `crawl.resolve` pins and `crawl.no_dns`), and a user agent saying `why`.
fn outbound_client(config: &Config, why: &str) -> Result<Outbound, RoleError> {
    Ok(Outbound {
        policy: Policy {
            allow_private: config.crawl.allow_private,
        },
        resolver: toolmark_ingest::resolver(&config.crawl)
            .map_err(RoleError::doing("crawl.resolve"))?,
        user_agent: format!("toolmark/{} ({why})", env!("CARGO_PKG_VERSION")),
        ..Outbound::default()
    })
}

/// The witnesses' cosigner, when `[witnessing]` configures any.
pub fn cosigner(config: &Config) -> Result<Option<Arc<toolmark_cosign::Cosigner>>, RoleError> {
    let Some(policy) = config
        .witness_policy()
        .map_err(RoleError::doing("the witness policy"))?
    else {
        return Ok(None);
    };
    let dir = data_dir(config);
    let client = outbound_client(config, "checkpoint cosigning, C2SP tlog-witness")?;
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
    let public = dir
        .log_public_objects()
        .map_err(RoleError::doing("the log's public objects"))?;
    let cosigner = toolmark_cosign::Cosigner::new(
        &dir.log_dir(),
        &config.data.join(toolmark_cosign::STATUS_FILE),
        policy,
        client,
        Duration::from_secs(config.witnessing.timeout_seconds),
        toolmark_cosign::system_clock(),
    )
    .map_err(RoleError::doing("the cosigner"))?
    .with_storage(dir.storage().clone(), public);
    Ok(Some(Arc::new(cosigner)))
}

/// Makes the log's publication wait for witnesses (or not), if the log can be opened for
/// writing now; otherwise the heartbeat does it when it next holds the log.
pub async fn set_publication(dir: &DataDir, witnessed: bool, writer: &LogWriter) {
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
pub fn heartbeat_job(
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

/// The deliverer of `config`'s subscriptions (`None` when it lists none): the answer key
/// signs, the events' issuer is `base`'s `/api/v1/issuer` (the public base the API serves
/// under, so a webhook's body is the document the API serves), and the client follows the
/// crawl's SSRF policy and name resolution.
pub fn deliverer(config: &Config, base: &str) -> Result<Option<Deliverer>, RoleError> {
    let subscriptions = config
        .subscriptions()
        .map_err(RoleError::doing("the webhooks"))?;
    if subscriptions.is_empty() {
        return Ok(None);
    }
    let data = DataDir::new(&config.data);
    let key = data
        .answer_key()
        .map_err(RoleError::doing("the answer key"))?;
    let issuer = format!("{base}/api/v1/issuer");
    let client = outbound_client(config, "security-event webhooks")?;
    Ok(Some(Deliverer::new(
        &data,
        key,
        issuer,
        subscriptions,
        client,
    )))
}

/// One line per subscription of a delivery pass.
pub fn pass_summary(report: &PassReport) -> String {
    let mut out = String::new();
    for s in &report.subscriptions {
        let state = match (&s.failure, s.waiting) {
            (Some(f), _) => format!("not delivered: {f}"),
            (None, true) => "backing off (not due yet)".to_owned(),
            (None, false) => "up to date".to_owned(),
        };
        out.push_str(&format!(
            "{}: {} delivered, cursor {}, {state}\n",
            s.id, s.delivered, s.cursor
        ));
    }
    out
}

/// The delivery pass as a job; it stops with the job's stop signal (shutdown or a lost lease).
/// A subscription that was not acknowledged fails the run (the scheduler logs it); the
/// subscription's own back-off decides when it is tried again.
pub fn webhooks_job(deliverer: Deliverer) -> JobFn {
    let deliverer = Arc::new(deliverer);
    Arc::new(move |ctx: JobContext| {
        let deliverer = deliverer.clone();
        Box::pin(async move {
            let report = deliverer
                .pass(&ctx.stop)
                .await
                .map_err(|e| JobError::new(e.to_string()))?;
            let text = pass_summary(&report).trim_end().replace('\n', "; ");
            if report.subscriptions.iter().any(|s| s.failure.is_some()) {
                return Err(JobError::new(text));
            }
            Ok(text)
        })
    })
}

/// Runs the witnesses' watch until `stop`: a round whenever the log signs a new checkpoint, at
/// most one per `witnessing.min_interval_seconds`.
pub fn spawn_watch(
    cosigner: Arc<toolmark_cosign::Cosigner>,
    config: &Config,
    stop: &crate::Stop,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(toolmark_cosign::watch(
        cosigner,
        toolmark_cosign::WATCH_POLL,
        Duration::from_secs(config.witnessing.min_interval_seconds),
        stop.clone(),
    ))
}
