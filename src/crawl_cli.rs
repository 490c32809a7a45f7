//! `toolmark crawl`: one crawl run — harvest the registry, observe every target, append one log
//! entry per remote, index it, and write a JSON report.
//!
//! Data directory layout (created on first use):
//!
//! ```text
//! DIR/log/          the verifiable log (toolmark-log FileStore; key in DIR/log/private/)
//! DIR/blobs/        content-addressed observation documents (raw responses)
//! DIR/index.sqlite  the queryable index (servers, targets, observations, changes, runs)
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;
use toolmark_crawler::crawl::{self, CrawlConfig, Outcome};
use toolmark_crawler::harvest::{self, HarvestConfig, Mode, Rate};
use toolmark_crawler::registry::{self, TargetKind};
use toolmark_index::blobs::Blobs;
use toolmark_index::index::Index;
use toolmark_index::record::{Recorded, Recorder, RunInput, RunStatus, TargetOutcome};
use toolmark_log::Log;

/// The official registry.
pub const OFFICIAL_REGISTRY: &str = "https://registry.modelcontextprotocol.io";

/// Outcomes recorded per log append: the sequencer is batch-optimised (one signature, one
/// fsync per batch), and a crash loses at most the observations of one unfinished batch.
const RECORD_BATCH: usize = 256;

/// Longest an outcome waits for its batch to fill before it is recorded anyway, so a slow
/// crawl still commits steadily. It also bounds how long the crawler's memory budget waits for
/// a batch: every outcome carries the budget grant its pages are accounted to, dropped once its
/// batch is recorded, and the recorder's wait for more outcomes is `recv_timeout`, so a batch
/// is recorded this long after its first outcome whatever the crawler does (the crawler never
/// waits for the recorder: the channel is unbounded). No cycle, so no deadlock.
const RECORD_LATENCY: Duration = Duration::from_secs(5);

/// A batch is recorded at once when the budget grants its outcomes carry reach this fraction
/// (1/4) of the crawl's memory budget, so observations waiting for budget held by pages in a
/// batch wait for one append, not for [`RECORD_LATENCY`]. Ordinary outcomes hold a few KiB
/// (their pages), so batches of small sets still fill to [`RECORD_BATCH`].
const RECORD_HELD_SHARE: usize = 4;

#[derive(Args)]
pub struct CrawlArgs {
    /// Base URL of the registry (the crawler requests `/v0.1/servers` under it).
    #[arg(long, default_value = OFFICIAL_REGISTRY)]
    pub registry: String,
    /// Data directory (log, blobs, index); created if missing.
    #[arg(long)]
    pub data: PathBuf,
    /// Allow http:// and loopback/private addresses (tests and demos only).
    #[arg(long)]
    pub allow_private: bool,
    /// Observe only the first N servers (by name) of the harvest.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Write the JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Harvest only entries updated since this RFC 3339 time (a delta; never delists).
    #[arg(long)]
    pub since: Option<String>,
    /// Resolve NAME to ADDR without DNS (`name=addr`; repeat for several). With --no-dns these
    /// are the only names that resolve; otherwise they are answered first and the system
    /// resolver handles the rest. The SSRF guard checks these addresses like any other.
    #[arg(long = "resolve", value_name = "NAME=ADDR")]
    pub resolve: Vec<String>,
    /// Use no DNS at all: names outside --resolve end as `dns` at once (offline tests and
    /// demos, where every outside lookup would only time out).
    #[arg(long)]
    pub no_dns: bool,
    /// Checkpoint origin for a log created by this run.
    #[arg(long, default_value = crate::log_cli::DEFAULT_ORIGIN)]
    pub origin: String,
}

/// Open (or create) the log, blobs and index under `data`.
pub fn open_data(data: &Path, origin: &str) -> Result<(Log, Blobs, Index)> {
    let log_dir = data.join("log");
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let log = if log_dir.join("private/log.key").exists() {
        Log::open(&log_dir)
    } else {
        Log::init(&log_dir, origin)
    }
    .with_context(|| format!("opening the log in {}", log_dir.display()))?;
    let blobs = Blobs::open(&data.join("blobs")).context("opening the blob store")?;
    let mut index = Index::open(&data.join("index.sqlite")).context("opening the index")?;
    index
        .catch_up(&log, &blobs)
        .context("bringing the index up to the log")?;
    Ok((log, blobs, index))
}

/// What earlier crawls learned: each remote's working transport and last duration.
fn hints(index: &Index) -> Result<std::collections::HashMap<String, crawl::Hint>> {
    Ok(index
        .crawl_hints()
        .context("reading crawl hints from the index")?
        .into_iter()
        .map(|(url, transport, ms)| {
            let hint = crawl::Hint {
                transport: transport
                    .as_deref()
                    .and_then(toolmark_crawler::observe::Transport::parse),
                expected: ms.map(Duration::from_millis),
            };
            (url, hint)
        })
        .collect())
}

/// The resolver `--resolve` and `--no-dns` ask for.
fn resolver(
    fixed: &[String],
    no_dns: bool,
) -> Result<std::sync::Arc<dyn toolmark_crawler::guard::Resolve>> {
    let mut table: std::collections::HashMap<String, Vec<std::net::IpAddr>> = Default::default();
    for entry in fixed {
        let (name, addr) = entry
            .split_once('=')
            .with_context(|| format!("--resolve {entry:?} is not NAME=ADDR"))?;
        let addr: std::net::IpAddr = addr
            .parse()
            .with_context(|| format!("--resolve {entry:?}: {addr:?} is not an IP address"))?;
        table
            .entry(name.to_ascii_lowercase())
            .or_default()
            .push(addr);
    }
    let fixed = toolmark_crawler::guard::StaticResolver(table);
    Ok(if no_dns {
        std::sync::Arc::new(fixed)
    } else {
        std::sync::Arc::new(toolmark_crawler::guard::FixedFirst(fixed))
    })
}

/// The crawl's memory budget, in MiB (`toolmark_crawler::limits::MEMORY_BUDGET`).
pub const DEFAULT_MEMORY_BUDGET_MIB: usize =
    toolmark_crawler::limits::MEMORY_BUDGET / (1024 * 1024);

/// Everything one crawl run needs, from `toolmark crawl`'s flags or `toolmark run`'s config.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Base URL of the registry.
    pub registry: String,
    /// Data directory (log, blobs, index).
    pub data: PathBuf,
    /// Checkpoint origin for a log created by this run.
    pub origin: String,
    /// Allow http:// and loopback/private addresses.
    pub allow_private: bool,
    /// Observe only the first N servers (by name).
    pub limit: Option<usize>,
    /// Harvest only entries updated since this time (a delta).
    pub since: Option<String>,
    /// `NAME=ADDR` pairs answered without DNS.
    pub resolve: Vec<String>,
    /// No DNS at all beyond `resolve`.
    pub no_dns: bool,
    /// Pacing of the registry requests.
    pub registry_rate: Rate,
    /// Observations in flight per host.
    pub per_host: usize,
    /// Observations in flight overall.
    pub concurrency: usize,
    /// MiB the observations in flight may hold together (pages and parse copies).
    pub memory_budget_mib: usize,
    /// Write the JSON report here.
    pub report: Option<PathBuf>,
    /// Show a progress bar on the terminal.
    pub progress: bool,
}

impl From<CrawlArgs> for CrawlOptions {
    fn from(args: CrawlArgs) -> CrawlOptions {
        let defaults = CrawlConfig::default();
        CrawlOptions {
            registry: args.registry,
            data: args.data,
            origin: args.origin,
            allow_private: args.allow_private,
            limit: args.limit,
            since: args.since,
            resolve: args.resolve,
            no_dns: args.no_dns,
            registry_rate: Rate::REGISTRY,
            per_host: defaults.per_host,
            concurrency: defaults.concurrency,
            memory_budget_mib: DEFAULT_MEMORY_BUDGET_MIB,
            report: args.report,
            progress: true,
        }
    }
}

/// What a finished crawl run did.
#[derive(Debug)]
pub struct CrawlSummary {
    /// The run's id in the index.
    pub run: i64,
    /// Targets with a report line.
    pub targets: usize,
    /// Log entries appended by this run.
    pub appended: u64,
    /// The log's size after the run.
    pub log_size: u64,
    /// Changes of a tool set this run recorded.
    pub changes: usize,
}

pub fn run(args: CrawlArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    runtime.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::warn!(
                "interrupted: finishing the observations in flight, then recording them"
            );
            flag.store(true, Ordering::Relaxed);
        }
    });
    crawl_once(runtime.handle(), &CrawlOptions::from(args), stop).map(|_| ())
}

/// One crawl run: harvest, observe, record, report. Blocks the calling thread (which must not be
/// one of `runtime`'s workers). Setting `stop` ends it early: no new targets are taken, the
/// observations in flight finish and everything observed is recorded, then it returns an error
/// saying how many targets were left.
pub fn crawl_once(
    runtime: &tokio::runtime::Handle,
    opts: &CrawlOptions,
    stop: Arc<AtomicBool>,
) -> Result<CrawlSummary> {
    let (mut log, blobs, mut index) = open_data(&opts.data, &opts.origin)?;
    let started = SystemTime::now();
    let clock = Instant::now();
    let size_before = log.head().size;

    // 1. Harvest.
    let mode = match &opts.since {
        Some(t) => Mode::Since(t.clone()),
        None => Mode::Full,
    };
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("building the registry client")?;
    let mut config = HarvestConfig::new(opts.registry.trim_end_matches('/'), mode.clone());
    config.rate = opts.registry_rate;
    tracing::info!(registry = %opts.registry, "harvesting the registry");
    // The harvest can take minutes at the registry's pace; a stop ends it (nothing is written
    // yet, so nothing is lost).
    let harvested = runtime.block_on(async {
        tokio::select! {
            h = harvest::harvest_partial(&http, &config) => Some(h),
            () = stopped(&stop) => None,
        }
    });
    let Some((harvest, harvest_error)) = harvested else {
        bail!("interrupted during the registry harvest: nothing was observed");
    };
    if let Some(e) = &harvest_error {
        if harvest.records.is_empty() {
            bail!("registry harvest failed: {e}");
        }
        tracing::warn!(
            "registry harvest incomplete ({e}); observing the {} records read, delisting nothing",
            harvest.records.len()
        );
    }
    let harvest_secs = clock.elapsed().as_secs_f64();
    let delisted = if matches!(mode, Mode::Full) {
        let known: std::collections::BTreeSet<String> = index
            .known_server_names()
            .context("reading known servers")?
            .into_iter()
            .collect();
        harvest::delisted(&known, &harvest)
    } else {
        Vec::new()
    };
    let mut latest = registry::latest_per_name(harvest.records.clone());
    if let Some(n) = opts.limit {
        latest.truncate(n);
    }
    let targets: Vec<_> = latest
        .iter()
        .flat_map(|r| registry::targets_with(r, opts.allow_private))
        .collect();
    let dialable = targets
        .iter()
        .filter(|t| t.skip.is_none() && matches!(t.kind, TargetKind::Remote { .. }))
        .count();
    tracing::info!(
        "{} servers, {} targets ({dialable} to dial), {} delisted",
        latest.len(),
        targets.len(),
        delisted.len()
    );

    // 2. Observe and record, batch by batch, on a recording thread.
    let started_at = toolmark_index::time::utc(started);
    let input = RunInput {
        started_at: started_at.clone(),
        registry: opts.registry.clone(),
        records: latest.clone(),
        harvest_complete: harvest.complete,
        delisted: delisted.clone(),
        allow_cleartext: opts.allow_private,
    };
    let crawl_hints = hints(&index)?;
    let mut recorder = Recorder::new(&mut log, &blobs, &mut index);
    let run_id = recorder
        .begin_run(&input)
        .context("starting the run in the index")?;

    let mut crawl_config = CrawlConfig {
        hints: Arc::new(crawl_hints),
        per_host: opts.per_host,
        concurrency: opts.concurrency,
        stop,
        ..CrawlConfig::default()
    };
    crawl_config.client.policy.allow_private = opts.allow_private;
    crawl_config.client.resolver = resolver(&opts.resolve, opts.no_dns)?;
    crawl_config.client.budget =
        toolmark_crawler::budget::Budget::new(opts.memory_budget_mib * 1024 * 1024);
    let progress = if opts.progress {
        indicatif::ProgressBar::new(dialable as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    progress.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} observed {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let crawl_clock = Instant::now();
    let (tx, rx) = mpsc::channel::<Outcome>();
    let (lines, abandoned, record_error) = std::thread::scope(|scope| {
        let held_limit = crawl_config.client.budget.bytes() / RECORD_HELD_SHARE;
        let writer = scope.spawn(move || record_all(&mut recorder, run_id, rx, held_limit));
        let abandoned = runtime.block_on(crawl::crawl(&crawl_config, targets, |outcome| {
            if outcome.observation.is_some() {
                progress.inc(1);
            }
            // The receiver only goes away if recording failed; that error is reported below.
            let _ = tx.send(outcome);
        }));
        drop(tx);
        progress.finish_and_clear();
        let (lines, error) = writer.join().unwrap_or_else(|_| {
            (
                Vec::new(),
                Some(anyhow::anyhow!("recording thread panicked")),
            )
        });
        (lines, abandoned, error)
    });
    let crawl_secs = crawl_clock.elapsed().as_secs_f64();

    // 3. Report.
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    for line in &lines {
        *totals.entry(line.status.clone()).or_default() += 1;
    }
    let finished_at = toolmark_index::time::utc(SystemTime::now());
    let report = json!({
        "run": run_id,
        "registry": opts.registry,
        "startedAt": started_at,
        "finishedAt": finished_at,
        "harvest": {
            "mode": match &mode { Mode::Full => "full".to_owned(), Mode::Since(t) => format!("since {t}") },
            "pages": harvest.pages,
            "requests": harvest.requests,
            "retries": harvest.retries,
            "records": harvest.records.len(),
            "rejected": harvest.rejected.len(),
            "complete": harvest.complete,
            "error": harvest_error.as_ref().map(|e| e.to_string()),
            "seconds": harvest_secs,
            "nextSince": harvest.complete.then(|| harvest.next_since.clone()),
        },
        "servers": latest.len(),
        "delisted": delisted,
        "observeSeconds": crawl_secs,
        "abandoned": abandoned,
        "logSize": log.head().size,
        "totals": totals,
    });
    let status = if record_error.is_none() && abandoned == 0 {
        RunStatus::Complete
    } else {
        RunStatus::Failed
    };
    Recorder::new(&mut log, &blobs, &mut index)
        .finish_run(run_id, &finished_at, status, &report)
        .context("finishing the run in the index")?;
    if let Some(path) = &opts.report {
        write_report(path, &report, &lines)?;
    }
    tracing::info!(
        "observed {} targets in {crawl_secs:.1} s (harvest {harvest_secs:.1} s); log size {}",
        lines.len(),
        log.head().size
    );
    for (status, n) in &totals {
        tracing::info!("  {status:>24} {n}");
    }
    if let Some(e) = record_error {
        return Err(e.context("recording observations"));
    }
    if abandoned > 0 {
        bail!("interrupted: {abandoned} targets were not observed (what was observed is recorded)");
    }
    Ok(CrawlSummary {
        run: run_id,
        targets: lines.len(),
        appended: log.head().size - size_before,
        log_size: log.head().size,
        changes: lines.iter().filter(|l| l.change_id.is_some()).count(),
    })
}

/// Resolves once `flag` is set (polled: the crawler's stop is a plain flag).
async fn stopped(flag: &AtomicBool) {
    while !flag.load(Ordering::Relaxed) {
        tokio::time::sleep(STOP_POLL).await;
    }
}

/// How often a harvest checks the stop flag: a shutdown waits at most this long for it.
const STOP_POLL: Duration = Duration::from_millis(200);

/// Write the report (the summary's members, then `targets`), streamed to the file: a 20,000-target
/// report is several megabytes and need not exist in memory as one JSON value.
fn write_report(path: &Path, summary: &serde_json::Value, lines: &[Recorded]) -> Result<()> {
    #[derive(serde::Serialize)]
    struct Report<'a> {
        #[serde(flatten)]
        summary: &'a serde_json::Value,
        targets: &'a [Recorded],
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    serde_json::to_writer_pretty(
        &mut out,
        &Report {
            summary,
            targets: lines,
        },
    )
    .with_context(|| format!("writing {}", path.display()))?;
    std::io::Write::flush(&mut out).with_context(|| format!("writing {}", path.display()))
}

/// Record outcomes as they arrive, in batches; stops at the first recording error (the crawl
/// keeps running but nothing more is acknowledged; later outcomes and their grants are dropped
/// on arrival). A batch is recorded when it has [`RECORD_BATCH`] outcomes, when its first is
/// [`RECORD_LATENCY`] old, or when the budget grants it holds reach `held_limit` bytes; the
/// grants are dropped (returned to the crawler's budget) once it is recorded.
fn record_all(
    recorder: &mut Recorder<'_>,
    run: i64,
    rx: mpsc::Receiver<Outcome>,
    held_limit: usize,
) -> (Vec<Recorded>, Option<anyhow::Error>) {
    let mut lines = Vec::new();
    let mut batch: Vec<TargetOutcome> = Vec::new();
    // The budget the batch's pages are accounted to, and its size in bytes.
    let mut grants: Vec<toolmark_crawler::budget::Grant> = Vec::new();
    let mut held = 0usize;
    let mut oldest: Option<Instant> = None;
    loop {
        let wait = oldest.map_or(RECORD_LATENCY, |t| {
            RECORD_LATENCY.saturating_sub(t.elapsed())
        });
        let received = rx.recv_timeout(wait);
        let closed = matches!(received, Err(mpsc::RecvTimeoutError::Disconnected));
        if let Ok(outcome) = received {
            oldest.get_or_insert_with(Instant::now);
            batch.push(TargetOutcome {
                target: outcome.target,
                observation: outcome.observation,
            });
            if let Some(grant) = outcome.grant {
                held = held.saturating_add(grant.bytes());
                grants.push(grant);
            }
        }
        let due = oldest.is_some_and(|t| t.elapsed() >= RECORD_LATENCY);
        let heavy = held >= held_limit;
        if !batch.is_empty() && (batch.len() >= RECORD_BATCH || due || heavy || closed) {
            let recorded = recorder.record(run, std::mem::take(&mut batch));
            // The pages are written (or the run failed): their budget goes back to the crawl.
            grants.clear();
            held = 0;
            match recorded {
                Ok(done) => lines.extend(done),
                Err(e) => return (lines, Some(e.into())),
            }
            oldest = None;
        }
        if closed {
            return (lines, None);
        }
    }
}
