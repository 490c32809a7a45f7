//! `toolmark crawl`: one crawl run (`toolmark_ingest::run_crawl`) from the command line, with a
//! progress bar, Ctrl-C as its stop, and the JSON report written to a file.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use toolmark_index::DataDir;
use toolmark_ingest::{CrawlFlags, CrawlOptions, CrawlRun, IngestError, Stop};

#[derive(Args)]
pub struct CrawlArgs {
    /// Base URL of the registry (the crawler requests `/v0.1/servers` under it).
    #[arg(long, default_value = toolmark_config::OFFICIAL_REGISTRY)]
    pub registry: String,
    /// Data directory (log, blobs, index); created if missing.
    #[arg(long)]
    pub data: PathBuf,
    /// Write the JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Harvest only entries updated since this RFC 3339 time (a delta; never delists), whatever
    /// --harvest says: merged into the stored registry records when there are any, so the whole
    /// latest set is observed, but it does not move the next delta's start. `--harvest full`
    /// forces a full harvest instead.
    #[arg(long)]
    pub since: Option<String>,
    /// Checkpoint origin for a log created by this run.
    #[arg(long, default_value = toolmark_config::DEFAULT_ORIGIN)]
    pub origin: String,
    /// The crawl's knobs.
    #[command(flatten)]
    pub crawl: CrawlFlags,
    /// Where the log and the documents are stored (`[storage]`).
    #[command(flatten)]
    pub storage: toolmark_config::StorageFlags,
}

/// A terminal progress bar over the targets dialled.
struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new() -> Bar {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} observed {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        Bar(bar)
    }
}

impl toolmark_ingest::Progress for Bar {
    fn begin(&self, dialable: u64) {
        self.0.set_length(dialable);
    }
    fn observed(&self) {
        self.0.inc(1);
    }
    fn end(&self) {
        self.0.finish_and_clear();
    }
}

pub fn run(args: CrawlArgs) -> Result<()> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let stop = Stop::new();
    let on_signal = stop.clone();
    runtime.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::warn!(
                "interrupted: finishing the observations in flight, then recording them"
            );
            on_signal.cancel();
        }
    });
    let mut options = CrawlOptions::default();
    args.crawl.apply(&mut options);
    let data = DataDir::with_storage(&args.data, args.storage.spec()?);
    let run = CrawlRun {
        data: &data,
        origin: &args.origin,
        registry: &args.registry,
        since: args.since.as_deref(),
        options: &options,
        trust: options.trust().map_err(anyhow::Error::msg)?,
    };
    let result = toolmark_roles::jobs::crawl_once(runtime.handle(), &run, &stop, &Bar::new());
    if let Some(path) = &args.report {
        // A run stopped early still reports what it recorded.
        if let Some(s) = result.as_ref().map_or_else(IngestError::summary, Some) {
            s.write_report(path)?;
        }
    }
    result.map(drop).map_err(anyhow::Error::from)
}
