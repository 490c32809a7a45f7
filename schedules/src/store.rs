//! The single-run lock (a lease per job) and the run history, in one SQLite file.
//!
//! Several processes may open the same file; every change that decides who runs a job is made
//! in one `BEGIN IMMEDIATE` transaction, which SQLite serialises across connections and
//! processes, so two holders can never both hold a job's lease.
//!
//! Times are stored as unix seconds, always taken from the caller (the scheduler's injected
//! [`Clock`](crate::clock::Clock)); this module never reads the system time.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::ScheduleError;

/// How long a connection waits for another connection's write lock before giving up with
/// `SQLITE_BUSY`. Lease transactions are a few statements long, so a wait this long only
/// happens when a process is stuck; failing then is better than hanging a scheduler task.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The file name the binary is expected to use inside its data directory.
pub const DEFAULT_FILE_NAME: &str = "schedules.sqlite";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS leases (
    job        TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    run_id     INTEGER,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id            INTEGER PRIMARY KEY,
    job           TEXT NOT NULL,
    holder        TEXT NOT NULL,
    attempt       INTEGER NOT NULL,
    scheduled_for INTEGER NOT NULL,
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER,
    status        TEXT NOT NULL
        CHECK (status IN ('running', 'ok', 'failed', 'interrupted', 'stopped')),
    detail        TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_job ON runs (job, id);
";

/// The state of one row of `runs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// Started and not finished (or its holder died and nobody has taken the lease yet).
    Running,
    /// The job returned `Ok`.
    Ok,
    /// The job returned `Err` or panicked.
    Failed,
    /// The holder's lease expired while the run was `running`: the holder died or stalled.
    /// Set by the next holder that takes the lease.
    Interrupted,
    /// The job was asked to stop (shutdown or lost lease) and returned `Err`.
    Stopped,
}

impl RunStatus {
    /// The text stored in `runs.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Stopped => "stopped",
        }
    }

    fn parse(s: &str) -> Result<Self, ScheduleError> {
        Ok(match s {
            "running" => RunStatus::Running,
            "ok" => RunStatus::Ok,
            "failed" => RunStatus::Failed,
            "interrupted" => RunStatus::Interrupted,
            "stopped" => RunStatus::Stopped,
            other => {
                return Err(ScheduleError::Corrupt(format!(
                    "unknown run status {other:?}"
                )));
            }
        })
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of `runs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRecord {
    /// The row's id, increasing with each run inserted into this store.
    pub id: i64,
    /// The job's name.
    pub job: String,
    /// The holder name of the scheduler that took the lease for this run.
    pub holder: String,
    /// 1 for a scheduled or catch-up run, 2.. for its retries.
    pub attempt: u32,
    /// The time this attempt was planned for (a fire time, the catch-up time or a retry time).
    pub scheduled_for: DateTime<Utc>,
    /// When the lease was taken and the run row inserted.
    pub started_at: DateTime<Utc>,
    /// When the run ended, or when the next holder marked it `interrupted`; `None` while
    /// `running`.
    pub finished_at: Option<DateTime<Utc>>,
    /// Where the run stands.
    pub status: RunStatus,
    /// The job's `Ok` detail or `Err` message, or why the run was interrupted or not started;
    /// `None` while `running`.
    pub detail: Option<String>,
}

/// One job's latest run and latest success (for health checks and metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobState {
    /// The job's name.
    pub job: String,
    /// The latest run (any status).
    pub last: RunRecord,
    /// The latest run that ended (not `running`), among the last few.
    pub last_finished: Option<RunRecord>,
    /// When its latest `ok` run started, if any.
    pub last_success: Option<DateTime<Utc>>,
}

/// What the run row inserted on acquisition says about the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunStart {
    /// 1 for a scheduled or catch-up run, 2.. for retries; only attempt 1 is checked for
    /// [`Acquire::AlreadyServed`].
    pub attempt: u32,
    /// When the attempt was planned to start (a first attempt is served by an `ok` run that
    /// finished at or after it).
    pub scheduled_for: DateTime<Utc>,
}

/// The answer of [`ScheduleStore::try_acquire`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquire {
    /// The lease is ours; a `running` row with this id was inserted.
    Acquired {
        /// The new run row's id, to pass to [`ScheduleStore::renew`] and [`ScheduleStore::finish`].
        run_id: i64,
    },
    /// Another holder (or this same holder name, for another run) has an unexpired lease.
    Held {
        /// The holder name that has the lease.
        holder: String,
        /// When that lease expires unless renewed.
        expires_at: DateTime<Utc>,
    },
    /// A first attempt whose planned time a run already served: a run of the job succeeded
    /// (ended `ok`) at or after it. Nothing was inserted.
    AlreadyServed {
        /// When the latest such `ok` run finished.
        finished_at: DateTime<Utc>,
    },
}

/// Where a [`crate::Scheduler`] takes its jobs' leases and records their runs: the single
/// box's SQLite file ([`LeaseStore`]), or a store schedulers on several machines share (a
/// cluster's PostgreSQL: `toolmark_roles`). Every method keeps [`LeaseStore`]'s contract;
/// the scheduler calls them on a thread of its own (they may block).
pub trait ScheduleStore: Send + Sync {
    /// Takes `job`'s lease for `holder` until `now + ttl` if nobody holds it or the holder's
    /// lease has expired, and inserts a `running` run row. If an expired lease's run is still
    /// `running`, that run is marked `interrupted`.
    ///
    /// # Errors
    ///
    /// The store failed.
    fn try_acquire(
        &self,
        job: &str,
        holder: &str,
        now: DateTime<Utc>,
        ttl: Duration,
        start: RunStart,
    ) -> Result<Acquire, ScheduleError>;

    /// Extends `holder`'s lease on `job` (for run `run_id`) to `now + ttl`. `Ok(false)` means
    /// the lease is no longer ours: another holder took it after it expired, or it was
    /// released.
    ///
    /// # Errors
    ///
    /// The store failed.
    fn renew(
        &self,
        job: &str,
        holder: &str,
        run_id: i64,
        now: DateTime<Utc>,
        ttl: Duration,
    ) -> Result<bool, ScheduleError>;

    /// Records the end of run `run_id` and releases `job`'s lease if it is still this run's.
    /// Returns whether the lease was still ours. If it was not (another holder took it over
    /// and marked this run `interrupted`), the run's real outcome is still recorded, with a
    /// note in its detail.
    ///
    /// # Errors
    ///
    /// The store failed.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        job: &str,
        holder: &str,
        run_id: i64,
        now: DateTime<Utc>,
        status: RunStatus,
        detail: &str,
    ) -> Result<bool, ScheduleError>;

    /// The `started_at` of `job`'s latest `ok` run. The start, not the end or the planned
    /// time, because what a run saw is at least as fresh as its start; catch-up asks whether a
    /// fire time has passed since it.
    ///
    /// # Errors
    ///
    /// The store failed.
    fn last_success(&self, job: &str) -> Result<Option<DateTime<Utc>>, ScheduleError>;

    /// When `job`'s latest `ok` run finished (by any holder), if it ever succeeded.
    ///
    /// # Errors
    ///
    /// The store failed.
    fn last_success_finished(&self, job: &str) -> Result<Option<DateTime<Utc>>, ScheduleError>;
}

/// The detail a new holder writes on a run it found `running` under an expired lease.
pub fn interrupted_detail(old_holder: &str, expired_at: DateTime<Utc>, holder: &str) -> String {
    format!(
        "interrupted: the lease of {old_holder:?} expired at {} while this run was \
         still running (the holder died or stalled); taken over by {holder:?}",
        expired_at.to_rfc3339()
    )
}

/// A finished run's detail when its holder had lost the lease before it finished.
pub fn lost_lease_detail(detail: &str) -> String {
    format!("{detail} (the lease had been lost before this run finished)")
}

/// The leases and run history of all jobs, on one SQLite connection.
#[derive(Debug)]
pub struct LeaseStore {
    conn: Mutex<Connection>,
}

fn secs(t: DateTime<Utc>) -> i64 {
    t.timestamp()
}

fn time(s: i64) -> Result<DateTime<Utc>, ScheduleError> {
    DateTime::from_timestamp(s, 0)
        .ok_or_else(|| ScheduleError::Corrupt(format!("timestamp {s} out of range")))
}

/// A lease length in whole seconds, rounded up and at least one, so a lease never expires at
/// the instant it is taken.
pub fn ttl_secs(ttl: Duration) -> i64 {
    let s = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    i64::try_from(s.max(1)).unwrap_or(i64::MAX / 2)
}

impl LeaseStore {
    /// Opens (creating if needed) the store at `path`, in WAL mode.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ScheduleError> {
        let path = path.as_ref();
        let open_err = |source| ScheduleError::Open {
            path: path.display().to_string(),
            source,
        };
        // SQLite answers a journal-mode switch or a schema change that races another
        // connection's (processes started together on a fresh file) with SQLITE_BUSY at once,
        // without calling the busy handler; such an open is retried until BUSY_TIMEOUT.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match Self::connect(path) {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(open_err(e)),
                Ok(conn) => {
                    return Ok(Self {
                        conn: Mutex::new(conn),
                    });
                }
            }
        }
    }

    fn connect(path: &Path) -> rusqlite::Result<Connection> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // WAL lets readers (e.g. `runs` for a status page) proceed while a holder writes.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(conn)
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a transaction open (rusqlite rolls back
        // on drop), so the connection is still usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The latest `column` (a time column) of `job`'s `ok` runs.
    fn latest_ok(
        &self,
        job: &str,
        column: &'static str,
    ) -> Result<Option<DateTime<Utc>>, ScheduleError> {
        let conn = self.conn();
        let s: Option<i64> = conn
            .query_row(
                &format!("SELECT MAX({column}) FROM runs WHERE job = ?1 AND status = 'ok'"),
                [job],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        s.map(time).transpose()
    }

    /// Every job that ever ran: its latest run and latest success, by job name.
    pub fn jobs(&self) -> Result<Vec<JobState>, ScheduleError> {
        let names: Vec<String> = {
            let conn = self.conn();
            let mut q = conn.prepare("SELECT DISTINCT job FROM runs ORDER BY job")?;
            q.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?
        };
        let mut out = Vec::with_capacity(names.len());
        for job in names {
            // At most one run is `running` at a time, plus perhaps a dead holder's not yet
            // marked interrupted: the latest ended run is among the latest three.
            let recent = self.runs(&job, 3)?;
            let Some(last) = recent.first().cloned() else {
                continue;
            };
            out.push(JobState {
                last_success: self.last_success(&job)?,
                last_finished: recent.into_iter().find(|r| r.status != RunStatus::Running),
                job,
                last,
            });
        }
        Ok(out)
    }

    /// `job`'s latest `limit` runs, newest first.
    pub fn runs(&self, job: &str, limit: usize) -> Result<Vec<RunRecord>, ScheduleError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, job, holder, attempt, scheduled_for, started_at, finished_at, status,
                    detail
             FROM runs WHERE job = ?1 ORDER BY id DESC LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![job, limit], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, u32>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, Option<i64>>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, Option<String>>(8)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, job, holder, attempt, sched, started, finished, status, detail) = row?;
            out.push(RunRecord {
                id,
                job,
                holder,
                attempt,
                scheduled_for: time(sched)?,
                started_at: time(started)?,
                finished_at: finished.map(time).transpose()?,
                status: RunStatus::parse(&status)?,
                detail,
            });
        }
        Ok(out)
    }

    /// The current holder of `job`'s lease and when it expires, expired or not.
    pub fn lease(&self, job: &str) -> Result<Option<(String, DateTime<Utc>)>, ScheduleError> {
        let conn = self.conn();
        let row: Option<(String, i64)> = conn
            .query_row(
                "SELECT holder, expires_at FROM leases WHERE job = ?1",
                [job],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        row.map(|(h, e)| Ok((h, time(e)?))).transpose()
    }
}

impl ScheduleStore for LeaseStore {
    fn try_acquire(
        &self,
        job: &str,
        holder: &str,
        now: DateTime<Utc>,
        ttl: Duration,
        start: RunStart,
    ) -> Result<Acquire, ScheduleError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: Option<(String, Option<i64>, i64)> = tx
            .query_row(
                "SELECT holder, run_id, expires_at FROM leases WHERE job = ?1",
                [job],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        if let Some((old_holder, _, expires_at)) = &current {
            if *expires_at > secs(now) {
                return Ok(Acquire::Held {
                    holder: old_holder.clone(),
                    expires_at: time(*expires_at)?,
                });
            }
        }
        if start.attempt == 1 {
            let served: Option<i64> = tx.query_row(
                "SELECT MAX(finished_at) FROM runs
                 WHERE job = ?1 AND status = 'ok' AND finished_at >= ?2",
                params![job, secs(start.scheduled_for)],
                |r| r.get(0),
            )?;
            if let Some(finished_at) = served {
                return Ok(Acquire::AlreadyServed {
                    finished_at: time(finished_at)?,
                });
            }
        }
        if let Some((old_holder, Some(old_run), expires_at)) = current {
            let detail = interrupted_detail(&old_holder, time(expires_at)?, holder);
            tx.execute(
                "UPDATE runs SET status = 'interrupted', finished_at = ?2, detail = ?3
                 WHERE id = ?1 AND status = 'running'",
                params![old_run, secs(now), detail],
            )?;
        }
        tx.execute(
            "INSERT INTO runs (job, holder, attempt, scheduled_for, started_at, status)
             VALUES (?1, ?2, ?3, ?4, ?5, 'running')",
            params![
                job,
                holder,
                start.attempt,
                secs(start.scheduled_for),
                secs(now)
            ],
        )?;
        let run_id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO leases (job, holder, run_id, expires_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (job) DO UPDATE SET
                 holder = excluded.holder, run_id = excluded.run_id,
                 expires_at = excluded.expires_at",
            params![job, holder, run_id, secs(now) + ttl_secs(ttl)],
        )?;
        tx.commit()?;
        Ok(Acquire::Acquired { run_id })
    }

    fn renew(
        &self,
        job: &str,
        holder: &str,
        run_id: i64,
        now: DateTime<Utc>,
        ttl: Duration,
    ) -> Result<bool, ScheduleError> {
        let conn = self.conn();
        let n = conn.execute(
            "UPDATE leases SET expires_at = ?4 WHERE job = ?1 AND holder = ?2 AND run_id = ?3",
            params![job, holder, run_id, secs(now) + ttl_secs(ttl)],
        )?;
        Ok(n == 1)
    }

    fn finish(
        &self,
        job: &str,
        holder: &str,
        run_id: i64,
        now: DateTime<Utc>,
        status: RunStatus,
        detail: &str,
    ) -> Result<bool, ScheduleError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let released = tx.execute(
            "DELETE FROM leases WHERE job = ?1 AND holder = ?2 AND run_id = ?3",
            params![job, holder, run_id],
        )? == 1;
        let detail = if released {
            detail.to_owned()
        } else {
            lost_lease_detail(detail)
        };
        tx.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3, detail = ?4 WHERE id = ?1",
            params![run_id, status.as_str(), secs(now), detail],
        )?;
        tx.commit()?;
        Ok(released)
    }

    fn last_success(&self, job: &str) -> Result<Option<DateTime<Utc>>, ScheduleError> {
        self.latest_ok(job, "started_at")
    }

    fn last_success_finished(&self, job: &str) -> Result<Option<DateTime<Utc>>, ScheduleError> {
        self.latest_ok(job, "finished_at")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn start(at: DateTime<Utc>) -> RunStart {
        RunStart {
            attempt: 1,
            scheduled_for: at,
        }
    }

    fn temp_db(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolmark-schedules-unit-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(DEFAULT_FILE_NAME)
    }

    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn two_connections_never_both_hold_and_expiry_interrupts_the_old_run() {
        let path = temp_db("two-conns");
        let a = LeaseStore::open(&path).unwrap();
        let b = LeaseStore::open(&path).unwrap();
        let Acquire::Acquired { run_id: ra } =
            a.try_acquire("j", "a", t(0), TTL, start(t(0))).unwrap()
        else {
            panic!("a should acquire a free lease")
        };
        assert_eq!(
            b.try_acquire("j", "b", t(30), TTL, start(t(30))).unwrap(),
            Acquire::Held {
                holder: "a".into(),
                expires_at: t(60)
            }
        );
        // Same holder name for a second run: still held.
        assert!(matches!(
            a.try_acquire("j", "a", t(30), TTL, start(t(30))).unwrap(),
            Acquire::Held { .. }
        ));
        assert!(a.renew("j", "a", ra, t(50), TTL).unwrap());
        assert!(matches!(
            b.try_acquire("j", "b", t(100), TTL, start(t(100))).unwrap(),
            Acquire::Held { .. }
        ));
        // a stops renewing; b takes over after expiry (t(110)).
        let Acquire::Acquired { run_id: rb } =
            b.try_acquire("j", "b", t(110), TTL, start(t(110))).unwrap()
        else {
            panic!("b should take an expired lease")
        };
        assert!(
            !a.renew("j", "a", ra, t(111), TTL).unwrap(),
            "a's lease is lost"
        );
        let runs = b.runs("j", 10).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].id, ra);
        assert_eq!(runs[1].status, RunStatus::Interrupted);
        assert!(runs[1].detail.as_deref().unwrap().contains("expired"));
        assert_eq!(runs[0].id, rb);
        assert_eq!(runs[0].status, RunStatus::Running);

        // a finishing late does not release b's lease, but records what happened.
        assert!(
            !a.finish("j", "a", ra, t(120), RunStatus::Ok, "done")
                .unwrap()
        );
        assert_eq!(a.lease("j").unwrap().unwrap().0, "b");
        assert!(
            b.finish("j", "b", rb, t(130), RunStatus::Ok, "done")
                .unwrap()
        );
        assert_eq!(a.lease("j").unwrap(), None);
        assert_eq!(a.last_success("j").unwrap(), Some(t(110)));
        assert!(matches!(
            a.try_acquire("j", "a", t(131), TTL, start(t(131))).unwrap(),
            Acquire::Acquired { .. }
        ));
    }

    #[test]
    fn last_success_ignores_failed_runs_and_other_jobs() {
        let path = temp_db("last-success");
        let s = LeaseStore::open(&path).unwrap();
        assert_eq!(s.last_success("j").unwrap(), None);
        let Acquire::Acquired { run_id } = s.try_acquire("j", "h", t(0), TTL, start(t(0))).unwrap()
        else {
            panic!()
        };
        s.finish("j", "h", run_id, t(1), RunStatus::Ok, "").unwrap();
        let Acquire::Acquired { run_id } =
            s.try_acquire("j", "h", t(10), TTL, start(t(10))).unwrap()
        else {
            panic!()
        };
        s.finish("j", "h", run_id, t(11), RunStatus::Failed, "boom")
            .unwrap();
        let Acquire::Acquired { run_id } =
            s.try_acquire("k", "h", t(20), TTL, start(t(20))).unwrap()
        else {
            panic!()
        };
        s.finish("k", "h", run_id, t(21), RunStatus::Ok, "")
            .unwrap();
        assert_eq!(s.last_success("j").unwrap(), Some(t(0)));
        let runs = s.runs("j", 1).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].status, RunStatus::Failed);
        assert_eq!(runs[0].detail.as_deref(), Some("boom"));
        assert_eq!(runs[0].finished_at, Some(t(11)));
        assert_eq!(s.last_success_finished("j").unwrap(), Some(t(1)));
        // Per job: the latest run (failed here) and the latest success.
        let jobs = s.jobs().unwrap();
        let summary: Vec<_> = jobs
            .iter()
            .map(|j| (j.job.as_str(), j.last.status, j.last_success))
            .collect();
        assert_eq!(
            summary,
            [
                ("j", RunStatus::Failed, Some(t(0))),
                ("k", RunStatus::Ok, Some(t(20)))
            ]
        );
        // A first attempt planned at or before an ok run's end was served by that run (another
        // holder's, typically); a retry, or a later plan, is not.
        assert_eq!(
            s.try_acquire("k", "h2", t(30), TTL, start(t(21))).unwrap(),
            Acquire::AlreadyServed { finished_at: t(21) }
        );
        let retry = RunStart {
            attempt: 2,
            scheduled_for: t(21),
        };
        assert!(matches!(
            s.try_acquire("k", "h2", t(30), TTL, retry).unwrap(),
            Acquire::Acquired { .. }
        ));
    }
}
