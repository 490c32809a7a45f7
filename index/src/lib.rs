//! The queryable index and the content-addressed blob store, and the step that turns one crawl
//! into log entries, blobs, index rows and change records.
//!
//! What it does:
//! - [`datadir`]: the data directory's layout, the one place that knows it, and opening
//!   it for writing (creating the log and both keys).
//! - [`blobs`]: a content-addressed store (`sha256/<2 hex>/<64 hex>` under `blobs/` of the
//!   object store: a directory or an S3-compatible bucket), written create-only and durably,
//!   verified on every read: a corrupted blob is an error, never data.
//! - [`document`]: the observation document (`toolmark-observation/1`), the blob a log entry's
//!   `raw` names: everything one observation produced, the server's raw texts embedded as JSON
//!   strings so every byte is kept. Its module documentation is the format's definition.
//! - [`index`]: the SQLite index (WAL, `STRICT` tables): runs, servers, targets, observations
//!   and changes, split into [`schema`] (DDL, version in `meta`), [`rows`] (the typed rows),
//!   [`queries`] (every read: the one target search over a [`TargetFilter`], changes, counts,
//!   and a target's current tool set read and verified against the indexed full digest) and
//!   `derive` ([`Index::catch_up`] / [`Index::rebuild`], which derive the observation and change
//!   rows from the log and the blobs alone). Its SQLite connection is private: callers use
//!   typed functions, never SQL.
//! - [`contributions`]: the opt-in client reports of `/check` (`DATA/contributions.sqlite`):
//!   (target, digest, UTC day) → distinct clients, nothing else; bookkeeping beside the index,
//!   not derived from the log, bounded by named caps and a retention, read only at or above a
//!   minimum of clients.
//! - [`census`]: which targets' current tool sets hold tools the starter policy calls
//!   sensitive, per category (derived when a current tool set changes), and its summary.
//! - [`packages`]: what the sandbox saw of each package entry, in the answers' shape, and
//!   whether two versions behave differently.
//! - [`harvests`]: the registry's records as the last harvests left them (one item per server
//!   name, per registry) and the harvest bookkeeping a delta starts from ([`HarvestState`]).
//! - [`events`]: security events, derived from the changes a subscriber must hear about
//!   (behaviour, registry signals, authorization servers, dangerous tool-set changes), chained
//!   per target and read by a lossless cursor.
//! - [`stats`]: the counts behind the stats and the badges (targets by state, changes in a
//!   window, activity per day, the newest run of each kind, hosts by endpoints).
//! - [`record`]: [`Recorder`] records one crawl run: blobs first, then one `Log::append` per
//!   batch, then the index rows in one transaction, read back from the log.
//!
//! The DESIGN invariant it keeps: the index is derivable from the log and the blobs. Every
//! observation row is the entry at its `entry` index; every change row names the two entries it
//! compares and is recomputed from their documents (diff and classification are pure functions of
//! the two tool sets). What the log does not hold and the index does is registry metadata
//! (servers, listing dates, skip reasons of packages, the registry records deltas start from) and run bookkeeping (runs, `run_id`): those
//! are operational records, not facts an answer about a tool set relies on.
//!
//! What it does not do: dial anything (the crawler does), sign or sequence anything (the log
//! does), decide what a tool set is or how a change is judged (the toolset crate does), serve
//! HTTP (the api does), or observe packages (the sandbox does; the index derives what its
//! documents say, [`packages`]).

#![deny(missing_docs)]

pub mod blobs;
pub mod census;
pub mod contributions;
pub mod datadir;
mod derive;
pub mod events;
pub mod follow;
pub mod harvests;
pub mod index;
pub mod packages;
pub mod queries;
pub mod record;
pub mod rows;
pub mod scans;
pub mod schema;
pub mod snapshot;
pub mod stats;
pub mod surfacechanges;

// The observation document and the log's time format belong to the observation model.
pub use toolmark_observation::{document, time};

pub use blobs::{BlobError, Blobs};
pub use census::{CategoryCount, CensusSummary, SensitiveFilter, TargetCensus};
pub use contributions::{
    ClientReport, Contributions, ContributionsError, Counted, Day, DigestKind,
};
pub use datadir::{DataDir, DataError, Writer};
pub use document::{Document, DocumentError};
pub use events::{EventQuery, SecurityEventRow};
pub use harvests::{CompletedHarvest, HarvestKind, HarvestState, RegistryItem};
pub use index::{Index, IndexError};
pub use queries::{
    ChangeQuery, ScanSummary, TargetFilter, TargetState, ToolSetRef, VerifiedToolSet,
};
pub use record::{Recorded, Recorder, RunInput, RunStatus, TargetOutcome};
pub use scans::{BecameFlagged, ClassCount, Rescan, ScanTotals, TargetScan};
pub use stats::{BadgeFacts, ChangeCounts, DayCount, HostCount, HostCounts, TargetCounts};
