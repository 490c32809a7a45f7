//! The ingest pipeline: one run over a data directory — harvest the registry, list its
//! targets, observe them, and record every outcome (blobs, log entries, index rows, changes) in
//! batches, then close the run with a typed report.
//!
//! What it does:
//! - [`options`]: [`CrawlOptions`], the crawl's knobs (the `[crawl]` section of the service's
//!   configuration, serde), and [`CrawlFlags`], the same knobs as flags and environment
//!   variables (clap, flattened into `toolmark crawl` and `toolmark run`), applied over them.
//! - [`plan`]: which harvest a run makes ([`plan::plan_harvest`]: full, or a delta from the
//!   last complete harvest, with a full one every [`CrawlOptions::full_harvest_days`]) and how
//!   its records become the run's latest set (a delta merged into the registry records the index
//!   keeps, so a delta run observes the same latest set as a full one).
//! - [`pipeline`]: [`run_crawl`] — one crawl run; [`record_stream`], the batching recorder any
//!   observer feeds (the crawler's and the package sweep's).
//! - [`report`]: [`RunReport`], what a run did, stored with the run in the index and written
//!   by `toolmark crawl --report`.
//! - [`sweep`]: [`run_sweep`] — one package sweep: the npm and PyPI servers the stored
//!   registry records list, each version observed once in the sandbox (gVisor) and recorded
//!   through [`record_stream`] like the crawl's observations.
//! - [`package`]: [`package::observe_package`] — one package version observed in the sandbox on
//!   request (`toolmark package observe`), fetched and checked as the sweep fetches, not logged.
//! - [`Stop`] (tokio-util's `CancellationToken`): the one way a run is told to stop early; what
//!   was observed is recorded, nothing is lost.
//!
//! What it never does: parse flags for a binary of its own, install signal handlers, print to
//! the terminal (it reports progress through [`Progress`] and logs with `tracing`), or dial
//! anything itself (the crawler does, behind its SSRF guard), or run package code (the sandbox
//! does, in gVisor).

#![deny(missing_docs)]

pub mod options;
pub mod package;
pub mod pipeline;
pub mod plan;
pub mod report;
pub mod sweep;

pub use options::{CrawlFlags, CrawlOptions, DEFAULT_FULL_HARVEST_DAYS, HarvestPolicy};
pub use pipeline::{
    CrawlRun, IngestError, Progress, RECORD_BATCH, RECORD_HELD_SHARE, RECORD_LATENCY, RunSummary,
    WriteReportError, record_stream, resolver, run_crawl,
};
pub use report::{HarvestReport, RunReport};
pub use sweep::{SweepOptions, SweepReport, SweepRun, SweepSummary, run_sweep};
pub use toolmark_crawler::mcp::Trust;

/// The one stop signal of a run: cancel it (a signal handler, the scheduler's shutdown, a lost
/// lease) and the run takes no new targets, lets the observations in flight finish, records
/// everything observed and closes the run as failed.
pub type Stop = tokio_util::sync::CancellationToken;
