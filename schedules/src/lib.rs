//! Cron-driven jobs for toolmark (daily crawl, checkpoint heartbeat, later the package sweep
//! and witness rounds) with a single-run lock shared across processes, catch-up after
//! downtime, retries with back-off and graceful shutdown.
//!
//! What it does not do: it knows nothing about what the jobs do (the binary hands it
//! closures), it does not parse configuration files, it does not install signal handlers
//! (the binary passes a shutdown future), it has no time zones (every schedule is in UTC),
//! and it does not kill a job that ignores its stop signal: shutdown waits for it.
//!
//! # Parts
//! - [`clock`]: every time the crate uses comes from an injected [`Clock`]:
//!   [`SystemClock`] in production, [`ManualClock`] in tests.
//! - [`store`]: the per-job lease (the lock) and the run history, in a SQLite file
//!   ([`store::DEFAULT_FILE_NAME`] in the data directory) that several processes may share.
//! - [`scheduler`]: [`JobSpec`], [`Scheduler`] and the rules below.
//!
//! # Cron syntax
//! The `cron` crate's, in UTC: `sec min hour day-of-month month day-of-week [year]`, with
//! `*`, lists `a,b`, ranges `a-b`, steps `*/n`, month and weekday names (`Jan`, `Mon-Fri`;
//! prefer names for weekdays, as that crate numbers them 1 = Sunday … 7 = Saturday), and the
//! shorthands `@yearly @monthly @weekly @daily @hourly`. A standard 5-field expression
//! (`min hour day-of-month month day-of-week`) is also accepted and fires at second 0:
//! `0 3 * * *` means the same as `0 0 3 * * *`, daily at 03:00 UTC.
//!
//! # Rules
//! - **Catch-up.** When [`Scheduler::run`] starts, a job that never succeeded, or for which
//!   a fire time has passed since its last successful run *started*
//!   ([`ScheduleStore::last_success`]), runs at once: once, however many fire times were
//!   missed. Otherwise it waits for its next fire time.
//! - **Schedule.** Then it runs at each fire time. Fire times that pass while a run is going
//!   collapse: the next run is the first fire time after the run ends.
//! - **One run at a time, across processes.** Before each run the scheduler takes the job's
//!   lease in the store (one `IMMEDIATE` transaction). If another holder has it, the run is
//!   skipped ([`Event::Skipped`]) and the job looks again when that lease lapses (or at its
//!   next fire time, if sooner): a live holder renews its lease, so the job keeps waiting;
//!   once the lease is free, the job runs unless a run succeeded after the skipped fire time
//!   (the other holder served it, or the fire time collapsed into its run). So a holder that
//!   dies is replaced one lease later, not a day later. While running, the lease is renewed
//!   every lease/3; if a renewal finds it lost, the job's [`StopSignal`] is cancelled and an
//!   error logged. A holder that dies leaves its lease to expire; the next holder to take it
//!   marks the dead run `interrupted`.
//! - **Served is served.** A first attempt is not run when a run of the job (by any holder)
//!   succeeded at or after its planned time ([`Acquire::AlreadyServed`], checked in the same
//!   transaction that takes the lease): two processes never both serve one fire time.
//! - **Store trouble.** The store runs on the scheduler's own thread (not tokio's blocking
//!   pool, which a busy API can fill). If taking a lease fails (the file locked past the busy
//!   timeout), that is retried like a failed run; a run's end is recorded with a few retries;
//!   a holder whose renewals keep failing stops its job before its lease can lapse.
//! - **Retries.** A failed run (`Err`, or a panic in the job, which is caught) is recorded
//!   `failed` and retried after `first`, `2*first`, `4*first`… (capped at `max`, at most
//!   `attempts` retries). A retry never delays or replaces the next fire time: one that
//!   would come at or after it is dropped ([`Event::RetryDropped`]) and the job waits for
//!   the fire time, where the attempt count starts again at 1.
//! - **Shutdown.** When the shutdown future completes no new run starts; each running job
//!   gets its stop signal, the scheduler waits for it to return, records its outcome
//!   (`stopped` if it returned `Err` after the signal, else `ok` or `failed`), releases the
//!   lease, and [`Scheduler::run`] returns.
//!
//! Every event is sent to [`Scheduler::subscribe`] receivers and logged with `tracing`.

#![deny(missing_docs)]

pub mod clock;
pub mod scheduler;
pub mod store;

pub use clock::{Clock, ManualClock, SystemClock};
pub use scheduler::{
    DEFAULT_LEASE, DEFAULT_RETRY, Event, JobContext, JobError, JobFn, JobSpec, Retry, RunSummary,
    Scheduler, StopSignal, job_fn, parse_cron,
};
pub use store::{Acquire, JobState, LeaseStore, RunRecord, RunStart, RunStatus, ScheduleStore};

/// Everything that can go wrong in this crate (a job's own failure is a [`JobError`]).
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// [`JobSpec::new`] was given a cron expression the `cron` crate rejects.
    #[error(
        "job {job:?}: bad cron expression {expr:?}: {reason} (expected 6 or 7 fields \
         `sec min hour day-of-month month day-of-week [year]`, 5 standard fields \
         `min hour day-of-month month day-of-week`, or @daily/@hourly/…)"
    )]
    BadCron {
        /// The name of the job the expression was for.
        job: String,
        /// The expression as given.
        expr: String,
        /// The `cron` crate's error message.
        reason: String,
    },
    /// [`Scheduler::add`] was given a job whose name is already taken (the name keys the
    /// lease and the run history).
    #[error("job {0:?} is added twice")]
    DuplicateJob(String),
    /// [`LeaseStore::open`] could not open the file, set its pragmas or create its schema.
    #[error("opening the schedule store {path}: {source}")]
    Open {
        /// The store file's path, as displayed.
        path: String,
        /// SQLite's error (a busy file is retried for [`store::BUSY_TIMEOUT`] first).
        #[source]
        source: rusqlite::Error,
    },
    /// A query on an open store failed (e.g. the file stayed locked past
    /// [`store::BUSY_TIMEOUT`]).
    #[error("schedule store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A row holds what this crate never writes: an unknown run status or an out-of-range
    /// timestamp.
    #[error("schedule store holds an invalid value: {0}")]
    Corrupt(String),
    /// The scheduler's store thread is gone or a call on it panicked, so a store call got no
    /// answer.
    #[error("schedule store: {0}")]
    Internal(String),
    /// A store shared by several machines' schedulers (a cluster's PostgreSQL) failed.
    #[error("shared schedule store: {0}")]
    Shared(String),
}
