//! Jobs, their cron schedules, and the loop that runs them (rules: see the crate docs).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::str::FromStr;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tracing::{error, info, warn};

use crate::ScheduleError;
use crate::clock::Clock;
use crate::store::{Acquire, RunStart, RunStatus, ScheduleStore};

/// Default lease length. A process that dies mid-run blocks the job for at most this long
/// (then another holder takes over and marks the run `interrupted`); a live process renews
/// every third of it, so it has two renewals' worth of slack against a stalled disk or a
/// busy machine before it could lose the lease.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(5 * 60);

/// A running job's lease is renewed this many times per lease length.
pub const RENEWALS_PER_LEASE: u32 = 3;

/// The shortest renewal period, whatever the lease: lease expiry is stored in whole
/// seconds, so renewing more often than this would only add writes.
pub const MIN_RENEW_EVERY: Duration = Duration::from_secs(1);

/// Default back-off: the first retry a minute after the failure (long enough for a blip in
/// the network or a restarting upstream to pass), doubling, at most half an hour apart, and
/// at most three retries, after which the job waits for its next fire time.
pub const DEFAULT_RETRY: Retry = Retry {
    first: Duration::from_secs(60),
    max: Duration::from_secs(30 * 60),
    attempts: 3,
};

/// Exponential back-off after a failed run. Retry `k` (1-based) comes `first * 2^(k-1)`
/// (capped at `max`) after the failed run ended; there are at most `attempts` retries, and a
/// retry that would come at or after the job's next fire time is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// The delay before the first retry; each later retry waits twice the one before.
    pub first: Duration,
    /// The longest delay between a failed run and its retry.
    pub max: Duration,
    /// How many retries follow one scheduled (or catch-up) run at most; 0 means none.
    pub attempts: u32,
}

impl Retry {
    /// No retries: a failed run waits for the next fire time.
    pub const NONE: Retry = Retry {
        first: Duration::ZERO,
        max: Duration::ZERO,
        attempts: 0,
    };

    /// The delay before retry `k` (1-based).
    pub fn delay(&self, k: u32) -> Duration {
        let factor = 2u32.saturating_pow(k.saturating_sub(1));
        self.first.saturating_mul(factor).min(self.max)
    }
}

impl Default for Retry {
    fn default() -> Self {
        DEFAULT_RETRY
    }
}

/// A job's name and schedule.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// The job's unique name: it keys the job's lease and run history in the store.
    pub name: String,
    /// When the job fires, in UTC (see [`parse_cron`]).
    pub schedule: cron::Schedule,
    /// The back-off after a failed run.
    pub retry: Retry,
    /// How long a taken lease lasts unrenewed; a running job's lease is renewed every third
    /// of it (at most once a second).
    pub lease: Duration,
}

/// Parses a cron expression the way [`JobSpec::new`] does (see the crate docs for the syntax).
pub fn parse_cron(expr: &str) -> Result<cron::Schedule, cron::error::Error> {
    let trimmed = expr.trim();
    // Standard 5-field cron (no seconds field): fire at second 0.
    if !trimmed.starts_with('@') && trimmed.split_whitespace().count() == 5 {
        cron::Schedule::from_str(&format!("0 {trimmed}"))
    } else {
        cron::Schedule::from_str(trimmed)
    }
}

impl JobSpec {
    /// A job named `name` firing on `cron_expr`, with [`DEFAULT_RETRY`] and [`DEFAULT_LEASE`].
    pub fn new(name: impl Into<String>, cron_expr: &str) -> Result<Self, ScheduleError> {
        let name = name.into();
        let schedule = parse_cron(cron_expr).map_err(|e| ScheduleError::BadCron {
            job: name.clone(),
            expr: cron_expr.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            name,
            schedule,
            retry: DEFAULT_RETRY,
            lease: DEFAULT_LEASE,
        })
    }

    /// The same job with `retry` as its back-off instead of [`DEFAULT_RETRY`].
    pub fn with_retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }

    /// The same job with `lease` as its lease length instead of [`DEFAULT_LEASE`].
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The first fire time strictly after `t`.
    pub fn next_fire_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.schedule.after(&t).next()
    }

    /// Whether the job must run at start: it never succeeded, or a fire time has passed since
    /// its last success started (however many: it runs once). Measured against the schedule
    /// itself, not a fixed interval, so a late success does not hide the next missed fire
    /// time and a weekday-only job does not catch up on a Saturday.
    pub fn catch_up_due(&self, last_success: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
        match last_success {
            None => true,
            Some(t) => self.next_fire_after(t).is_some_and(|fire| fire <= now),
        }
    }

    fn renew_every(&self) -> chrono::Duration {
        let d = (self.lease / RENEWALS_PER_LEASE).max(MIN_RENEW_EVERY);
        chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
    }
}

/// A job's failure: a message (the binary formats its `anyhow` errors with `{:#}`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct JobError {
    /// What went wrong; recorded as the run's detail and sent in [`Event::Finished`].
    pub message: String,
}

impl JobError {
    /// A failure saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl From<String> for JobError {
    fn from(message: String) -> Self {
        Self { message }
    }
}

impl From<&str> for JobError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

/// Tells a running job to stop early (shutdown, or its lease was lost): tokio-util's
/// cancellation token, the one stop signal the crawl, the service and the demo share. Cloneable;
/// a job may hand it (or a child token) straight to the ingest pipeline.
pub type StopSignal = tokio_util::sync::CancellationToken;

/// What a job body is given.
#[derive(Debug, Clone)]
pub struct JobContext {
    /// The name of the job being run ([`JobSpec::name`]).
    pub job: String,
    /// 1 for a scheduled or catch-up run, 2.. for retries.
    pub attempt: u32,
    /// When this attempt was planned to start: a fire time, the scheduler's start (catch-up),
    /// a retry time, or a second look once another holder's lease lapsed.
    pub scheduled_for: DateTime<Utc>,
    /// Cancelled when the job should stop early: the scheduler is shutting down, or the
    /// job's lease was lost or could not be renewed.
    pub stop: StopSignal,
}

/// A job body: `Ok(detail)` on success.
pub type JobFn = Arc<
    dyn Fn(JobContext) -> Pin<Box<dyn Future<Output = Result<String, JobError>> + Send>>
        + Send
        + Sync,
>;

/// Wraps an async closure as a [`JobFn`].
pub fn job_fn<F, Fut>(f: F) -> JobFn
where
    F: Fn(JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, JobError>> + Send + 'static,
{
    Arc::new(move |ctx| Box::pin(f(ctx)))
}

/// What the scheduler did, as it happens. Each is also logged with `tracing`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// This process took the job's lease and called the job.
    Started {
        /// The job's name.
        job: String,
        /// The id of the run's row in the store's history ([`crate::RunRecord::id`]).
        run_id: i64,
        /// 1 for a scheduled or catch-up run, 2.. for retries.
        attempt: u32,
        /// When this attempt was planned to start ([`JobContext::scheduled_for`]).
        scheduled_for: DateTime<Utc>,
    },
    /// A run this process started has ended and its outcome was recorded (or recording it
    /// failed, which a [`Event::StoreError`] before this one says).
    Finished {
        /// The job's name.
        job: String,
        /// The id of the run's row in the store's history.
        run_id: i64,
        /// `Ok`, `Failed` (an `Err` or a panic) or `Stopped` (an `Err` after the stop signal).
        status: RunStatus,
        /// `Ok(detail)` or `Err(message)`.
        outcome: Result<String, String>,
        /// When the run ended, by the scheduler's clock.
        at: DateTime<Utc>,
    },
    /// Another holder had the lease at a fire time; the job looks again when that lease
    /// lapses (or at its next fire time, if sooner).
    Skipped {
        /// The job's name.
        job: String,
        /// The holder name of the process that has the lease.
        held_by: String,
        /// When that holder's lease expires unless it renews it.
        until: DateTime<Utc>,
    },
    /// A failed run (or a failed try at taking the lease) will be retried.
    RetryScheduled {
        /// The job's name.
        job: String,
        /// When the retry will run.
        at: DateTime<Utc>,
        /// The retry's attempt number (2 for the first retry).
        attempt: u32,
    },
    /// A retry was due at `would_be`, at or after the next fire time; it was dropped.
    RetryDropped {
        /// The job's name.
        job: String,
        /// When the dropped retry would have run.
        would_be: DateTime<Utc>,
        /// The fire time the job waits for instead.
        next_fire: DateTime<Utc>,
    },
    /// The job's next scheduled (or catch-up) run.
    NextRun {
        /// The job's name.
        job: String,
        /// When that run is due (the scheduler's start, for a catch-up).
        at: DateTime<Utc>,
    },
    /// A store call failed. If it was taking the lease, that is retried like a failed run;
    /// recording a run's end is retried a few times; otherwise the job carries on.
    StoreError {
        /// The job's name.
        job: String,
        /// The store's error (prefixed with the try number when recording a run's end).
        message: String,
    },
}

/// Counts over one [`Scheduler::run`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Runs this process started (took the lease and called the job), retries included.
    pub started: u64,
    /// Started runs that returned `Ok`.
    pub ok: u64,
    /// Started runs that panicked, or returned `Err` without being asked to stop.
    pub failed: u64,
    /// Started runs that returned `Err` after their stop signal.
    pub stopped: u64,
    /// Times a run was due but another holder had the job's lease ([`Event::Skipped`]).
    pub skipped: u64,
}

impl RunSummary {
    fn merge(&mut self, o: RunSummary) {
        self.started += o.started;
        self.ok += o.ok;
        self.failed += o.failed;
        self.stopped += o.stopped;
        self.skipped += o.skipped;
    }
}

/// A call the store thread runs.
type StoreCall = Box<dyn FnOnce(&dyn ScheduleStore) + Send>;

struct Inner {
    store: Arc<dyn ScheduleStore>,
    /// Calls for the store thread (it ends when this sender is dropped).
    calls: Mutex<std::sync::mpsc::Sender<StoreCall>>,
    clock: Arc<dyn Clock>,
    holder: String,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<Event>>>,
}

impl Inner {
    fn emit(&self, ev: Event) {
        match &ev {
            Event::Started {
                job,
                run_id,
                attempt,
                scheduled_for,
            } => info!(job, run_id, attempt, %scheduled_for, holder = %self.holder, "job started"),
            Event::Finished {
                job,
                run_id,
                status,
                outcome,
                at,
            } => match outcome {
                Ok(detail) => info!(job, run_id, %status, %at, detail, "job finished"),
                Err(message) if *status == RunStatus::Stopped => {
                    warn!(job, run_id, %status, %at, message, "job stopped")
                }
                Err(message) => error!(job, run_id, %status, %at, message, "job failed"),
            },
            Event::Skipped {
                job,
                held_by,
                until,
            } => info!(job, held_by, %until, "job skipped: another holder has its lease"),
            Event::RetryScheduled { job, at, attempt } => {
                info!(job, %at, attempt, "job retry scheduled")
            }
            Event::RetryDropped {
                job,
                would_be,
                next_fire,
            } => {
                info!(job, %would_be, %next_fire, "job retry dropped: the next fire time comes first")
            }
            Event::NextRun { job, at } => info!(job, %at, "job next run"),
            Event::StoreError { job, message } => error!(job, message, "schedule store error"),
        }
        let mut subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subs.retain(|s| s.send(ev.clone()).is_ok());
    }

    /// Runs a store call on the scheduler's own thread (SQLite may wait up to the busy
    /// timeout): not on tokio's blocking pool, which the API and DNS lookups share and can
    /// fill, and a lease renewal must not queue behind them.
    async fn store<T, F>(&self, f: F) -> Result<T, ScheduleError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn ScheduleStore) -> Result<T, ScheduleError> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let call: StoreCall = Box::new(move |store| {
            let _ = tx.send(f(store));
        });
        let sent = self
            .calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .send(call);
        if sent.is_err() {
            return Err(ScheduleError::Internal("the store thread is gone".into()));
        }
        rx.await
            .unwrap_or_else(|_| Err(ScheduleError::Internal("the store call panicked".into())))
    }
}

/// Runs jobs on their cron schedules under a per-job lease (see the crate docs).
pub struct Scheduler {
    inner: Inner,
    jobs: Vec<(JobSpec, JobFn)>,
}

#[derive(Debug, Clone, Copy)]
struct Plan {
    at: DateTime<Utc>,
    attempt: u32,
    /// Set when this is a second look after another holder had the lease at the fire time
    /// `.0`: the run is needless if a run of the job succeeded after that fire time.
    after_held: Option<DateTime<Utc>>,
}

impl Plan {
    fn fire(at: DateTime<Utc>) -> Plan {
        Plan {
            at,
            attempt: 1,
            after_held: None,
        }
    }
}

/// Tries at recording a run's end before giving up (the next holder then marks it
/// interrupted), and the wait between them.
const FINISH_ATTEMPTS: u32 = 5;
const FINISH_RETRY: Duration = Duration::from_secs(2);

/// How long after another holder's lease expires the scheduler looks again (so a renewal
/// landing exactly at the expiry is seen).
const RECHECK_SLACK: Duration = Duration::from_secs(1);

async fn wait_shutdown(rx: &mut watch::Receiver<bool>) {
    // An error means the sender is gone, which only happens when `run` is being dropped.
    let _ = rx.wait_for(|s| *s).await;
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_owned()
    }
}

impl Scheduler {
    /// A scheduler taking leases as `holder`, which must be unique among the processes that
    /// share the store (e.g. `hostname:pid`).
    pub fn new(store: Arc<dyn ScheduleStore>, clock: Arc<dyn Clock>, holder: String) -> Self {
        let (calls, queue) = std::sync::mpsc::channel::<StoreCall>();
        let on_thread = store.clone();
        // If the thread cannot start, every store call reports that the thread is gone.
        let _ = std::thread::Builder::new()
            .name("schedules-store".into())
            .spawn(move || {
                for call in queue {
                    // A panicking call drops its reply sender; the caller sees the error.
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| call(on_thread.as_ref())));
                }
            });
        Self {
            inner: Inner {
                store,
                calls: Mutex::new(calls),
                clock,
                holder,
                subscribers: Mutex::new(Vec::new()),
            },
            jobs: Vec::new(),
        }
    }

    /// Adds a job. Names must be unique (they key the lease and the run history).
    pub fn add(&mut self, spec: JobSpec, f: JobFn) -> Result<(), ScheduleError> {
        if self.jobs.iter().any(|(s, _)| s.name == spec.name) {
            return Err(ScheduleError::DuplicateJob(spec.name));
        }
        self.jobs.push((spec, f));
        Ok(())
    }

    /// A receiver of every [`Event`] from now on.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.inner
            .subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tx);
        rx
    }

    /// For each job: its name, when it will first run if [`Scheduler::run`] starts now, and
    /// whether that is a catch-up run due at once. A job with no future fire time and no
    /// catch-up is left out. Asks the store on the calling thread (not the scheduler's store
    /// thread): call it where blocking is allowed.
    pub fn next_runs(&self) -> Result<Vec<(String, DateTime<Utc>, bool)>, ScheduleError> {
        let now = self.inner.clock.now();
        let mut out = Vec::new();
        for (spec, _) in &self.jobs {
            let last = self.inner.store.last_success(&spec.name)?;
            if spec.catch_up_due(last, now) {
                out.push((spec.name.clone(), now, true));
            } else if let Some(at) = spec.next_fire_after(now) {
                out.push((spec.name.clone(), at, false));
            }
        }
        Ok(out)
    }

    /// Runs every job until `shutdown` completes, then stops the running ones, waits for
    /// them, records their outcome, releases their leases and returns.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> RunSummary {
        let inner = Arc::new(self.inner);
        let (tx, rx) = watch::channel(false);
        let mut set = JoinSet::new();
        for (spec, f) in self.jobs {
            set.spawn(job_loop(inner.clone(), spec, f, rx.clone()));
        }
        let mut shutdown = std::pin::pin!(shutdown);
        let mut shutting = false;
        let mut summary = RunSummary::default();
        loop {
            tokio::select! {
                () = &mut shutdown, if !shutting => {
                    info!(holder = %inner.holder, "scheduler shutting down");
                    shutting = true;
                    tx.send_replace(true);
                }
                r = set.join_next() => match r {
                    Some(Ok(t)) => summary.merge(t),
                    Some(Err(e)) => error!("a scheduler job task failed: {e}"),
                    None => {
                        if !shutting {
                            shutdown.as_mut().await;
                        }
                        break;
                    }
                }
            }
        }
        info!(holder = %inner.holder, ?summary, "scheduler stopped");
        summary
    }
}

async fn job_loop(
    inner: Arc<Inner>,
    spec: JobSpec,
    f: JobFn,
    mut shutdown: watch::Receiver<bool>,
) -> RunSummary {
    let mut tally = RunSummary::default();
    let name = spec.name.clone();
    let now = inner.clock.now();
    let job = name.clone();
    let due = match inner.store(move |s| s.last_success(&job)).await {
        Ok(last) => spec.catch_up_due(last, now),
        Err(e) => {
            // Try at once: if the store is really broken, acquiring fails too and the job
            // waits for its next fire time.
            inner.emit(Event::StoreError {
                job: name.clone(),
                message: e.to_string(),
            });
            true
        }
    };
    let mut plan = if due {
        Some(now)
    } else {
        spec.next_fire_after(now)
    }
    .map(Plan::fire);

    loop {
        let Some(p) = plan else {
            warn!(job = name, "job has no future fire time; it stays idle");
            wait_shutdown(&mut shutdown).await;
            return tally;
        };
        if p.attempt == 1 {
            inner.emit(Event::NextRun {
                job: name.clone(),
                at: p.at,
            });
        }
        tokio::select! {
            biased;
            () = wait_shutdown(&mut shutdown) => return tally,
            () = inner.clock.sleep_until(p.at) => {}
        }
        if *shutdown.borrow() {
            return tally;
        }

        let now = inner.clock.now();
        if let Some(fire) = p.after_held {
            // Another holder had the lease at `fire`. If a run succeeded since, that fire time
            // was served (or collapsed into a run in progress); else the holder died or
            // failed, and this process runs the job now.
            let job = name.clone();
            match inner.store(move |s| s.last_success_finished(&job)).await {
                Ok(Some(done)) if done >= fire => {
                    plan = spec.next_fire_after(now).map(Plan::fire);
                    continue;
                }
                Ok(_) => {}
                Err(e) => inner.emit(Event::StoreError {
                    job: name.clone(),
                    message: e.to_string(),
                }),
            }
        }
        let (job, holder, lease) = (name.clone(), inner.holder.clone(), spec.lease);
        let start = RunStart {
            attempt: p.attempt,
            scheduled_for: p.at,
        };
        let acquired = inner
            .store(move |s| s.try_acquire(&job, &holder, now, lease, start))
            .await;
        let run_id = match acquired {
            Ok(Acquire::Acquired { run_id }) => run_id,
            Ok(Acquire::Held { holder, expires_at }) => {
                tally.skipped += 1;
                inner.emit(Event::Skipped {
                    job: name.clone(),
                    held_by: holder,
                    until: expires_at,
                });
                // Look again when that lease lapses (a live holder renews it; a dead one
                // does not), unless the next fire time comes first.
                let fire = p.after_held.unwrap_or(p.at);
                let recheck = expires_at
                    .checked_add_signed(
                        chrono::Duration::from_std(RECHECK_SLACK).unwrap_or_default(),
                    )
                    .unwrap_or(expires_at);
                plan = match spec.next_fire_after(now) {
                    Some(next) if next <= recheck => Some(Plan::fire(next)),
                    _ => Some(Plan {
                        at: recheck,
                        attempt: p.attempt,
                        after_held: Some(fire),
                    }),
                };
                continue;
            }
            Ok(Acquire::AlreadyServed { finished_at }) => {
                // Another holder's run succeeded after this plan's fire time: it is served.
                info!(job = name, %finished_at, "job already served by another holder's run");
                plan = spec.next_fire_after(now).map(Plan::fire);
                continue;
            }
            Err(e) => {
                // The store is unavailable (e.g. locked past the busy timeout): retried with
                // back-off like a failed run, never past the next fire time.
                inner.emit(Event::StoreError {
                    job: name.clone(),
                    message: e.to_string(),
                });
                plan = retry_or_next(&inner, &spec, p, now);
                continue;
            }
        };
        if *shutdown.borrow() {
            // The signal came while the lease was being taken: give it back unrun.
            let (job, holder, end) = (name.clone(), inner.holder.clone(), inner.clock.now());
            let _ = inner
                .store(move |s| {
                    s.finish(
                        &job,
                        &holder,
                        run_id,
                        end,
                        RunStatus::Stopped,
                        "not started: the scheduler is shutting down",
                    )
                })
                .await;
            return tally;
        }

        tally.started += 1;
        inner.emit(Event::Started {
            job: name.clone(),
            run_id,
            attempt: p.attempt,
            scheduled_for: p.at,
        });
        let (status, outcome) = run_once(&inner, &spec, &f, run_id, p, &mut shutdown).await;
        match status {
            RunStatus::Ok => tally.ok += 1,
            RunStatus::Stopped => tally.stopped += 1,
            _ => tally.failed += 1,
        }
        let end = inner.clock.now();
        let detail = match &outcome {
            Ok(d) => d.clone(),
            Err(m) => m.clone(),
        };
        // The run's record (and the lease's release) matters: a run left `running` would
        // later read as interrupted and cause a needless catch-up. Retried a few times.
        for attempt in 1..=FINISH_ATTEMPTS {
            let (job, holder, detail) = (name.clone(), inner.holder.clone(), detail.clone());
            match inner
                .store(move |s| s.finish(&job, &holder, run_id, end, status, &detail))
                .await
            {
                Ok(true) => break,
                Ok(false) => {
                    warn!(
                        job = name,
                        run_id, "the run's lease had been lost before it finished"
                    );
                    break;
                }
                Err(e) => {
                    inner.emit(Event::StoreError {
                        job: name.clone(),
                        message: format!("recording the run's end (try {attempt}): {e}"),
                    });
                    if attempt < FINISH_ATTEMPTS {
                        tokio::time::sleep(FINISH_RETRY).await;
                    }
                }
            }
        }
        inner.emit(Event::Finished {
            job: name.clone(),
            run_id,
            status,
            outcome,
            at: end,
        });
        if *shutdown.borrow() {
            return tally;
        }

        plan = if status == RunStatus::Failed {
            retry_or_next(&inner, &spec, p, end)
        } else {
            spec.next_fire_after(end).map(Plan::fire)
        };
    }
}

/// After a failed attempt `p` that ended at `end`: its retry with back-off, unless retries are
/// used up or the retry would come at or after the next fire time (then that fire time).
fn retry_or_next(inner: &Inner, spec: &JobSpec, p: Plan, end: DateTime<Utc>) -> Option<Plan> {
    let next_fire = spec.next_fire_after(end);
    if p.attempt > spec.retry.attempts {
        return next_fire.map(Plan::fire);
    }
    let delay =
        chrono::Duration::from_std(spec.retry.delay(p.attempt)).unwrap_or(chrono::Duration::MAX);
    let at = end.checked_add_signed(delay);
    match (at, next_fire) {
        (Some(at), next) if next.is_none_or(|n| at < n) => {
            let attempt = p.attempt + 1;
            inner.emit(Event::RetryScheduled {
                job: spec.name.clone(),
                at,
                attempt,
            });
            Some(Plan {
                at,
                attempt,
                after_held: p.after_held,
            })
        }
        (at, Some(next_fire)) => {
            inner.emit(Event::RetryDropped {
                job: spec.name.clone(),
                would_be: at.unwrap_or(DateTime::<Utc>::MAX_UTC),
                next_fire,
            });
            Some(Plan::fire(next_fire))
        }
        (_, None) => None,
    }
}

/// Runs one attempt in its own task (so a panic is caught), renewing the lease meanwhile and
/// passing on a shutdown or a lost lease as the job's stop signal.
async fn run_once(
    inner: &Arc<Inner>,
    spec: &JobSpec,
    f: &JobFn,
    run_id: i64,
    p: Plan,
    shutdown: &mut watch::Receiver<bool>,
) -> (RunStatus, Result<String, String>) {
    let stop = StopSignal::new();
    let stop_handle = stop.clone();
    let ctx = JobContext {
        job: spec.name.clone(),
        attempt: p.attempt,
        scheduled_for: p.at,
        stop,
    };
    let fut = match catch_unwind(AssertUnwindSafe(|| f(ctx))) {
        Ok(fut) => fut,
        Err(panic) => {
            return (
                RunStatus::Failed,
                Err(format!("the job panicked: {}", panic_message(&*panic))),
            );
        }
    };
    let mut handle = tokio::spawn(fut);
    let renew_every = spec.renew_every();
    let mut next_renew = inner.clock.now() + renew_every;
    // The lease runs out `spec.lease` after the last renewal that reached the store; if
    // renewals keep failing, the holder must assume another may take it by then.
    let lease_span = chrono::Duration::from_std(spec.lease).unwrap_or(chrono::Duration::MAX);
    let mut renewed_at = inner.clock.now();
    let mut lease_lost = false;
    let mut stop_reason: Option<&'static str> = None;
    let joined = loop {
        tokio::select! {
            r = &mut handle => break r,
            () = inner.clock.sleep_until(next_renew), if !lease_lost => {
                let now = inner.clock.now();
                let (job, holder, lease) = (spec.name.clone(), inner.holder.clone(), spec.lease);
                match inner.store(move |s| s.renew(&job, &holder, run_id, now, lease)).await {
                    Ok(true) => renewed_at = now,
                    Ok(false) => {
                        error!(job = spec.name, run_id, "lease lost while running; stopping the job");
                        lease_lost = true;
                        stop_reason.get_or_insert("its lease was lost");
                        stop_handle.cancel();
                    }
                    // Retried at the next renewal; the lease has slack for a few misses, but
                    // not past its end: then it may already be another holder's.
                    Err(e) if inner.clock.now() >= renewed_at + lease_span - renew_every => {
                        error!(job = spec.name, run_id, "lease renewals failing ({e}); the lease may lapse, stopping the job");
                        lease_lost = true;
                        stop_reason.get_or_insert("its lease could not be renewed");
                        stop_handle.cancel();
                    }
                    Err(e) => warn!(job = spec.name, run_id, "lease renewal failed: {e}"),
                }
                next_renew = inner.clock.now() + renew_every;
            }
            () = wait_shutdown(shutdown), if stop_reason.is_none() => {
                info!(job = spec.name, run_id, "asking the running job to stop");
                stop_reason = Some("the scheduler is shutting down");
                stop_handle.cancel();
            }
        }
    };
    match joined {
        Ok(Ok(detail)) => (RunStatus::Ok, Ok(detail)),
        Ok(Err(e)) => match stop_reason {
            Some(why) => (
                RunStatus::Stopped,
                Err(format!("stopped because {why}: {}", e.message)),
            ),
            None => (RunStatus::Failed, Err(e.message)),
        },
        Err(e) if e.is_panic() => (
            RunStatus::Failed,
            Err(format!(
                "the job panicked: {}",
                panic_message(&*e.into_panic())
            )),
        ),
        Err(e) => (RunStatus::Failed, Err(format!("the job task ended: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_field_cron_gets_a_seconds_field() {
        let a = JobSpec::new("a", "0 3 * * *").unwrap();
        let b = JobSpec::new("b", "0 0 3 * * *").unwrap();
        let t = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert_eq!(a.next_fire_after(t), b.next_fire_after(t));
        let first = a.next_fire_after(t).unwrap();
        assert_eq!(
            a.next_fire_after(first),
            Some(first + chrono::Duration::days(1))
        );
        assert!(JobSpec::new("c", "@daily").is_ok());
    }

    #[test]
    fn catch_up_follows_the_schedule_not_a_fixed_interval() {
        let at = |d: u32, h: u32, m: u32| {
            chrono::NaiveDate::from_ymd_opt(2026, 3, d)
                .unwrap()
                .and_hms_opt(h, m, 0)
                .unwrap()
                .and_utc()
        };
        let daily = JobSpec::new("crawl", "0 3 * * *").unwrap();
        assert!(daily.catch_up_due(None, at(2, 12, 0)), "never succeeded");
        // A retry succeeded late (03:41); down over the next 03:00: that fire was missed,
        // although less than a day has passed.
        assert!(daily.catch_up_due(Some(at(2, 3, 41)), at(3, 3, 20)));
        assert!(!daily.catch_up_due(Some(at(2, 3, 41)), at(3, 2, 59)));
        // Weekdays only (2026-03-06 is a Friday): nothing is missed over the weekend.
        let weekdays = JobSpec::new("crawl", "0 3 * * Mon-Fri").unwrap();
        assert!(!weekdays.catch_up_due(Some(at(6, 3, 0)), at(7, 10, 0)));
        assert!(weekdays.catch_up_due(Some(at(6, 3, 0)), at(9, 3, 1)));
    }

    #[test]
    fn retry_delays_double_up_to_max() {
        let r = Retry {
            first: Duration::from_secs(10),
            max: Duration::from_secs(35),
            attempts: 5,
        };
        let d: Vec<u64> = (1..=4).map(|k| r.delay(k).as_secs()).collect();
        assert_eq!(d, [10, 20, 35, 35]);
    }
}
