//! One run: harvest → list targets → observe → record in batches → report.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use toolmark_crawler::budget::{Budget, Grant};
use toolmark_crawler::crawl::{self, CrawlConfig, Outcome};
use toolmark_crawler::guard::{FixedFirst, Resolve, StaticResolver};
use toolmark_crawler::harvest::{self, HarvestConfig, Mode};
use toolmark_crawler::mcp::Trust;
use toolmark_index::record::{Recorded, Recorder, RunInput, RunStatus, TargetOutcome};
use toolmark_index::{CompletedHarvest, DataDir, DataError, HarvestKind, Index, IndexError};
use toolmark_observation::observe::Transport;
use toolmark_observation::registry::TargetKind;

use crate::plan;
use crate::report::{HarvestReport, RunReport};
use crate::{CrawlOptions, Stop};

/// Outcomes recorded per log append: the sequencer is batch-optimised (one signature, one
/// fsync per batch), and a crash loses at most the observations of one unfinished batch.
pub const RECORD_BATCH: usize = 256;

/// Longest an outcome waits for its batch to fill before it is recorded anyway, so a slow
/// crawl still commits steadily. It also bounds how long the crawler's memory budget waits for
/// a batch: every outcome carries the budget grant its pages are accounted to, dropped once its
/// batch is recorded, and the recorder's wait for more outcomes is `recv_timeout`, so a batch
/// is recorded this long after its first outcome whatever the observer does (the observer never
/// waits for the recorder: the channel is unbounded). No cycle, so no deadlock.
pub const RECORD_LATENCY: Duration = Duration::from_secs(5);

/// A batch is recorded at once when the budget grants its outcomes carry reach this fraction
/// (1/4) of the crawl's memory budget, so observations waiting for budget held by pages in a
/// batch wait for one append, not for [`RECORD_LATENCY`]. Ordinary outcomes hold a few KiB
/// (their pages), so batches of small sets still fill to [`RECORD_BATCH`].
pub const RECORD_HELD_SHARE: usize = 4;

/// Why a run failed. A run that recorded anything is closed in the index before one of
/// these is returned.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The data directory could not be opened.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The options cannot work.
    #[error("{0}")]
    Options(String),
    /// The registry could not be read at all.
    #[error("registry harvest failed: {0}")]
    Harvest(#[from] harvest::HarvestError),
    /// Stopped during the harvest: nothing was observed or written.
    #[error("interrupted during the registry harvest: nothing was observed")]
    StoppedInHarvest,
    /// The index refused a write.
    #[error("{what}: {source}")]
    Index {
        /// What was being done.
        what: &'static str,
        /// Why.
        source: IndexError,
    },
    /// Recording observations failed midway; what was recorded before stays.
    #[error("recording observations: {0}")]
    Record(String),
    /// Stopped before every target was observed; everything observed is recorded.
    #[error("interrupted: {abandoned} targets were not observed (what was observed is recorded)")]
    Stopped {
        /// Targets left unobserved.
        abandoned: usize,
        /// What the run did record.
        summary: Box<RunSummary>,
    },
}

impl IngestError {
    /// What a run that was stopped early recorded (`None` for every other error).
    pub fn summary(&self) -> Option<&RunSummary> {
        match self {
            IngestError::Stopped { summary, .. } => Some(summary),
            _ => None,
        }
    }
}

fn index_err(what: &'static str) -> impl Fn(IndexError) -> IngestError {
    move |source| IngestError::Index { what, source }
}

/// What a finished run did.
#[derive(Debug)]
pub struct RunSummary {
    /// The run's report (also stored with the run in the index).
    pub report: RunReport,
    /// One line per target, in the order recorded.
    pub lines: Vec<Recorded>,
    /// Log entries appended by this run.
    pub appended: u64,
}

impl RunSummary {
    /// Changes of a tool set this run recorded.
    pub fn changes(&self) -> usize {
        self.lines.iter().filter(|l| l.change_id.is_some()).count()
    }

    /// Write the report to `path` (`toolmark crawl --report`): the report's members, then
    /// `targets`, one per line recorded, streamed to the file (a 20,000-target report is
    /// several megabytes and need not exist in memory as one JSON value).
    ///
    /// # Errors
    ///
    /// [`WriteReportError`] naming the file.
    pub fn write_report(&self, path: &std::path::Path) -> Result<(), WriteReportError> {
        #[derive(serde::Serialize)]
        struct Report<'a> {
            #[serde(flatten)]
            summary: serde_json::Value,
            targets: &'a [Recorded],
        }
        let failed = |source| WriteReportError {
            path: path.to_owned(),
            source,
        };
        // The members as a JSON object first: their order in the file is that object's.
        let summary = serde_json::to_value(&self.report).map_err(|e| failed(e.into()))?;
        let file = std::fs::File::create(path).map_err(failed)?;
        let mut out = std::io::BufWriter::new(file);
        let report = Report {
            summary,
            targets: &self.lines,
        };
        serde_json::to_writer_pretty(&mut out, &report).map_err(|e| failed(e.into()))?;
        std::io::Write::flush(&mut out).map_err(failed)
    }
}

/// A run's report could not be written ([`RunSummary::write_report`]).
#[derive(Debug, thiserror::Error)]
#[error("writing {}", .path.display())]
pub struct WriteReportError {
    /// The report's file.
    pub path: std::path::PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// Told how a run advances (a terminal progress bar, or nothing: `()`).
pub trait Progress: Sync {
    /// `dialable` targets are about to be observed.
    fn begin(&self, dialable: u64) {
        let _ = dialable;
    }
    /// One target was observed.
    fn observed(&self) {}
    /// Observing is over.
    fn end(&self) {}
}

impl Progress for () {}

/// What one crawl run reads and writes.
#[derive(Debug, Clone)]
pub struct CrawlRun<'a> {
    /// The data directory written.
    pub data: &'a DataDir,
    /// The checkpoint origin of a log this run creates.
    pub origin: &'a str,
    /// The registry's base URL (`/v0.1/servers` is requested under it).
    pub registry: &'a str,
    /// Harvest only entries updated since this RFC 3339 time (a delta; never delists),
    /// whatever `options.harvest` says. Merged into the stored registry records when there are
    /// any (then the whole latest set is observed), but it never becomes the last complete
    /// harvest; without stored records only what it returns is observed.
    pub since: Option<&'a str>,
    /// The knobs.
    pub options: &'a CrawlOptions,
    /// Which server certificates observations accept: [`Trust::platform`] for every real
    /// crawl; the demo's crawl trusts only its stand-ins' throwaway CA.
    pub trust: Trust,
}

/// The resolver `resolve` and `no_dns` ask for (the crawl's, and webhook delivery's in
/// `toolmark run`).
pub fn resolver(options: &CrawlOptions) -> Result<Arc<dyn Resolve>, IngestError> {
    let mut table: HashMap<String, Vec<SocketAddr>> = HashMap::new();
    for entry in &options.resolve {
        let (name, addr) = crate::options::parse_pin(entry)
            .map_err(|e| IngestError::Options(format!("--resolve {e}")))?;
        table.entry(name).or_default().push(addr);
    }
    let fixed = StaticResolver(table);
    Ok(if options.no_dns {
        Arc::new(fixed)
    } else {
        Arc::new(FixedFirst(fixed))
    })
}

/// What earlier crawls learned: each remote's working transport and last duration.
fn hints(index: &Index) -> Result<HashMap<String, crawl::Hint>, IngestError> {
    Ok(index
        .crawl_hints()
        .map_err(index_err("reading crawl hints from the index"))?
        .into_iter()
        .map(|(url, transport, ms, surface_read)| {
            let hint = crawl::Hint {
                transport: transport.as_deref().and_then(Transport::parse),
                expected: ms.map(Duration::from_millis),
                surface_read,
            };
            (url, hint)
        })
        .collect())
}

/// One crawl run: harvest, observe, record, report. Blocks the calling thread (which must not
/// be one of `runtime`'s workers). Cancelling `stop` ends it early: no new targets are taken,
/// the observations in flight finish and everything observed is recorded, then it returns
/// [`IngestError::Stopped`] saying how many targets were left.
pub fn run_crawl(
    runtime: &tokio::runtime::Handle,
    run: &CrawlRun<'_>,
    stop: &Stop,
    progress: &dyn Progress,
) -> Result<RunSummary, IngestError> {
    let opts = run.options;
    if let Some(problem) = opts.problem() {
        return Err(IngestError::Options(problem));
    }
    let crawl_resolver = resolver(opts)?;
    let mut writer = run.data.open_writer(run.origin)?;
    let started = SystemTime::now();
    let clock = Instant::now();
    let size_before = writer.log.head().size;

    // 1. Harvest. It can take minutes at the registry's pace; a stop ends it (nothing is
    // written yet, so nothing is lost). Full, or a delta from the last complete harvest merged
    // into the records the index keeps (`plan`).
    let registry_key = run.registry.trim_end_matches('/');
    let state = writer
        .index
        .harvest_state(registry_key)
        .map_err(index_err("reading the harvest state"))?;
    let stored = writer
        .index
        .registry_items(registry_key)
        .map_err(index_err("reading the stored registry records"))?;
    let held_count = stored.len();
    let held = match plan::parse_stored(stored) {
        Ok(held) => Some(held),
        Err(e) => {
            tracing::warn!("{e}; harvesting in full");
            None
        }
    };
    let base_usable = held.as_ref().is_some_and(|h| !h.is_empty());
    let plan = plan::plan_harvest(opts, run.since, state.as_ref(), base_usable, started);
    let mode = plan.mode.clone();
    let http = harvest::registry_client()?;
    let mut config = HarvestConfig::new(registry_key, mode.clone());
    config.rate = opts.rate();
    tracing::info!(registry = %run.registry, "harvesting the registry: {}", plan.reason);
    let harvested = runtime.block_on(async {
        tokio::select! {
            h = harvest::harvest_partial(&http, &config) => Some(h),
            () = stop.cancelled() => None,
        }
    });
    let (mut harvest, harvest_error) = harvested.ok_or(IngestError::StoppedInHarvest)?;
    if harvest.records.is_empty() && !plan.merge {
        if let Some(e) = harvest_error {
            return Err(IngestError::Harvest(e));
        }
    }
    if let Some(e) = &harvest_error {
        tracing::warn!(
            "registry harvest incomplete ({e}); observing the {} records read{}, delisting nothing, keeping the stored records",
            harvest.records.len(),
            if plan.merge {
                " over the stored ones"
            } else {
                ""
            }
        );
    }
    let harvest_secs = clock.elapsed().as_secs_f64();
    let delisted = if matches!(mode, Mode::Full) {
        let known: BTreeSet<String> = writer
            .index
            .known_server_names()
            .map_err(index_err("reading known servers"))?
            .into_iter()
            .collect();
        harvest::delisted(&known, &harvest)
    } else {
        Vec::new()
    };
    let held = if plan.merge {
        held.unwrap_or_default()
    } else {
        Vec::new()
    };
    let (mut latest, items): (Vec<_>, Vec<_>) = plan::latest_set(held, &mut harvest, plan.merge)
        .into_iter()
        .unzip();
    // A complete harvest's latest set is what the registry lists: kept for the next delta. An
    // incomplete one changes nothing stored (its records are still observed).
    if harvest.complete && (plan.merge || matches!(mode, Mode::Full)) {
        let completed = plan.advances.then(|| CompletedHarvest {
            kind: if matches!(mode, Mode::Full) {
                HarvestKind::Full
            } else {
                HarvestKind::Delta
            },
            started_at: &harvest.started_at,
            next_since: &harvest.next_since,
        });
        writer
            .index
            .store_registry_items(registry_key, &items, completed)
            .map_err(index_err("storing the registry records"))?;
    }
    drop(items);
    if opts.limit > 0 {
        latest.truncate(opts.limit);
    }
    let started_at = toolmark_observation::time::utc(started);
    let input = RunInput {
        started_at: started_at.clone(),
        registry: run.registry.to_owned(),
        records: latest,
        harvest_complete: harvest.complete,
        delisted,
        allow_cleartext: opts.allow_private,
    };
    let targets = input.targets();
    let dialable = targets
        .iter()
        .filter(|t| t.skip.is_none() && matches!(t.kind, TargetKind::Remote { .. }))
        .count();
    tracing::info!(
        "{} servers, {} targets ({dialable} to dial), {} delisted",
        input.records.len(),
        targets.len(),
        input.delisted.len()
    );

    // 2. Observe and record, batch by batch, on a recording thread.
    let crawl_hints = hints(&writer.index)?;
    let mut recorder = Recorder::new(&mut writer.log, &writer.blobs, &mut writer.index);
    let run_id = recorder
        .begin_run(&input)
        .map_err(index_err("starting the run in the index"))?;
    let mut crawl_config = CrawlConfig {
        hints: Arc::new(crawl_hints),
        per_host: opts.per_host,
        concurrency: opts.concurrency,
        stop: stop.clone(),
        surface_days: opts.surface_days,
        second_look_days: opts.second_look_days,
        ..CrawlConfig::default()
    };
    crawl_config.client.policy.allow_private = opts.allow_private;
    crawl_config.client.resolver = crawl_resolver;
    crawl_config.client.trust = run.trust.clone();
    crawl_config.client.budget = Budget::new(opts.memory_budget_mib * 1024 * 1024);
    crawl_config.client.limits.surface = opts.surface;
    opts.apply_second_look(&mut crawl_config.client)
        .map_err(IngestError::Options)?;
    progress.begin(dialable as u64);
    let crawl_clock = Instant::now();
    let held_limit = crawl_config.client.budget.bytes() / RECORD_HELD_SHARE;
    let (lines, abandoned, record_error) =
        record_stream(&mut recorder, run_id, held_limit, |sink| {
            runtime.block_on(crawl::crawl(&crawl_config, targets, |outcome: Outcome| {
                if outcome.observation.is_some() {
                    progress.observed();
                }
                let item = TargetOutcome {
                    target: outcome.target,
                    observation: outcome.observation,
                };
                // The receiver only goes away if recording failed; that error is reported below.
                let _ = sink.send((item, outcome.grant));
            }))
        });
    progress.end();
    let observe_seconds = crawl_clock.elapsed().as_secs_f64();

    // 3. Report.
    let totals = totals(&lines);
    let finished_at = toolmark_observation::time::now();
    let report = RunReport {
        run: run_id,
        registry: run.registry.to_owned(),
        started_at,
        finished_at: finished_at.clone(),
        harvest: HarvestReport {
            reason: plan.reason.clone(),
            held: plan.merge.then_some(held_count),
            ..HarvestReport::new(
                &harvest,
                &mode,
                harvest_error.as_ref().map(|e| e.to_string()),
                harvest_secs,
            )
        },
        servers: input.records.len(),
        delisted: input.delisted.clone(),
        observe_seconds,
        abandoned,
        log_size: writer.log.head().size,
        totals,
    };
    close_run(
        &mut writer,
        run_id,
        &finished_at,
        &report,
        record_error.is_none() && abandoned == 0,
    )?;
    tracing::info!(
        "observed {} targets in {observe_seconds:.1} s (harvest {harvest_secs:.1} s); log size {}",
        lines.len(),
        report.log_size
    );
    if let Some(e) = record_error {
        return Err(IngestError::Record(e.to_string()));
    }
    let summary = RunSummary {
        appended: report.log_size - size_before,
        report,
        lines,
    };
    if abandoned > 0 {
        return Err(IngestError::Stopped {
            abandoned,
            summary: Box::new(summary),
        });
    }
    Ok(summary)
}

/// Recorded lines per status (a run's `totals`).
/// The run report's `totals`: `lines` per status.
pub fn totals(lines: &[Recorded]) -> BTreeMap<String, u64> {
    let mut totals = BTreeMap::new();
    for line in lines {
        *totals.entry(line.status.clone()).or_default() += 1;
    }
    totals
}

/// Close run `run` in the index: its end time, `complete` when `whole` (every batch recorded,
/// nothing abandoned) else `failed`, and its report stored as a JSON value (so its members are
/// in sorted order, as they always were).
pub(crate) fn close_run(
    writer: &mut toolmark_index::Writer,
    run: i64,
    finished_at: &str,
    report: &impl serde::Serialize,
    whole: bool,
) -> Result<(), IngestError> {
    let status = if whole {
        RunStatus::Complete
    } else {
        RunStatus::Failed
    };
    let stored = serde_json::to_value(report).map_err(|e| IngestError::Record(e.to_string()))?;
    Recorder::new(&mut writer.log, &writer.blobs, &mut writer.index)
        .finish_run(run, finished_at, status, &stored)
        .map_err(index_err("finishing the run in the index"))
}

/// Records outcomes as an observer produces them, in batches, on a thread of its own while
/// `observe` runs on the calling thread; returns the lines recorded, what `observe` returned
/// and the first recording error. `observe` sends each outcome with the budget grant its
/// pages are accounted to (`None` when it holds none).
///
/// A batch is recorded when it has [`RECORD_BATCH`] outcomes, when its first is
/// [`RECORD_LATENCY`] old, or when the grants it holds reach `held_limit` bytes; the grants are
/// dropped (returned to the observer's budget) once it is recorded. After a recording error
/// nothing more is acknowledged: later outcomes and their grants are dropped on arrival.
pub fn record_stream<T: Send>(
    recorder: &mut Recorder<'_>,
    run: i64,
    held_limit: usize,
    observe: impl FnOnce(&mpsc::Sender<(TargetOutcome, Option<Grant>)>) -> T,
) -> (Vec<Recorded>, T, Option<IndexError>) {
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || record_batches(recorder, run, rx, held_limit));
        let observed = observe(&tx);
        drop(tx);
        let (lines, error) = writer.join().unwrap_or_else(|_| {
            (
                Vec::new(),
                Some(IndexError::Invalid("recording thread panicked".into())),
            )
        });
        (lines, observed, error)
    })
}

fn record_batches(
    recorder: &mut Recorder<'_>,
    run: i64,
    rx: mpsc::Receiver<(TargetOutcome, Option<Grant>)>,
    held_limit: usize,
) -> (Vec<Recorded>, Option<IndexError>) {
    let mut lines = Vec::new();
    let mut batch: Vec<TargetOutcome> = Vec::new();
    // The budget the batch's pages are accounted to, and its size in bytes.
    let mut grants: Vec<Grant> = Vec::new();
    let mut held = 0usize;
    let mut oldest: Option<Instant> = None;
    loop {
        let wait = oldest.map_or(RECORD_LATENCY, |t| {
            RECORD_LATENCY.saturating_sub(t.elapsed())
        });
        let received = rx.recv_timeout(wait);
        let closed = matches!(received, Err(mpsc::RecvTimeoutError::Disconnected));
        if let Ok((outcome, grant)) = received {
            oldest.get_or_insert_with(Instant::now);
            batch.push(outcome);
            if let Some(grant) = grant {
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
                Err(e) => return (lines, Some(e)),
            }
            oldest = None;
        }
        if closed {
            return (lines, None);
        }
    }
}
