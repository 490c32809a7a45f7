//! The cluster's schedule leases and run history (`toolmark_schedules::ScheduleStore`'s
//! contract, in PostgreSQL): every scheduler of a cluster takes a job's lease and records its
//! runs here, so one runs each job at a time, a run one scheduler finished serves the fire time
//! for every other, and a standby catches up from the cluster's last success, not its own.
//!
//! Times are unix seconds from the caller's clock, as in the single box's SQLite store. Each
//! decision is one transaction holding the job's lease row (`FOR UPDATE`).

use toolmark_schedules::store::{interrupted_detail, lost_lease_detail, ttl_secs};
use toolmark_schedules::{Acquire, RunStart, RunStatus};

use crate::queue::{Queue, QueueError, db_of};

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS schedule_leases (
    job TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    run_id BIGINT,
    expires_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS schedule_runs (
    id BIGSERIAL PRIMARY KEY,
    job TEXT NOT NULL,
    holder TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    scheduled_for BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    status TEXT NOT NULL
        CHECK (status IN ('running', 'ok', 'failed', 'interrupted', 'stopped')),
    detail TEXT
);
CREATE INDEX IF NOT EXISTS schedule_runs_by_job ON schedule_runs (job, id);
";

type Time = chrono::DateTime<chrono::Utc>;

fn from_secs(s: i64) -> Result<Time, QueueError> {
    chrono::DateTime::from_timestamp(s, 0)
        .ok_or_else(|| QueueError::Refused(format!("timestamp {s} out of range")))
}

impl Queue {
    /// `toolmark_schedules::ScheduleStore::try_acquire`, for every scheduler of the cluster.
    pub fn schedule_try_acquire(
        &mut self,
        job: &str,
        holder: &str,
        now: Time,
        ttl: std::time::Duration,
        start: RunStart,
    ) -> Result<Acquire, QueueError> {
        let u = self.url().to_owned();
        let db = |e| db_of(&u, e);
        let mut tx = self.client().transaction().map_err(db)?;
        // The row exists before it is locked, so two first acquisitions serialise on it.
        tx.execute(
            "INSERT INTO schedule_leases (job, holder, run_id, expires_at) VALUES ($1, '', NULL, 0)
             ON CONFLICT (job) DO NOTHING",
            &[&job],
        )
        .map_err(db)?;
        let lease = tx
            .query_one(
                "SELECT holder, run_id, expires_at FROM schedule_leases WHERE job = $1 FOR UPDATE",
                &[&job],
            )
            .map_err(db)?;
        let (old_holder, old_run, expires_at): (String, Option<i64>, i64) =
            (lease.get(0), lease.get(1), lease.get(2));
        if expires_at > now.timestamp() {
            return Ok(Acquire::Held {
                holder: old_holder,
                expires_at: from_secs(expires_at)?,
            });
        }
        if start.attempt == 1 {
            let served: Option<i64> = tx
                .query_one(
                    "SELECT max(finished_at) FROM schedule_runs
                     WHERE job = $1 AND status = 'ok' AND finished_at >= $2",
                    &[&job, &start.scheduled_for.timestamp()],
                )
                .map_err(db)?
                .get(0);
            if let Some(finished_at) = served {
                return Ok(Acquire::AlreadyServed {
                    finished_at: from_secs(finished_at)?,
                });
            }
        }
        if let Some(old_run) = old_run {
            tx.execute(
                "UPDATE schedule_runs SET status = 'interrupted', finished_at = $2, detail = $3
                 WHERE id = $1 AND status = 'running'",
                &[
                    &old_run,
                    &now.timestamp(),
                    &interrupted_detail(&old_holder, from_secs(expires_at)?, holder),
                ],
            )
            .map_err(db)?;
        }
        let attempt = i32::try_from(start.attempt).unwrap_or(i32::MAX);
        let run_id: i64 = tx
            .query_one(
                "INSERT INTO schedule_runs (job, holder, attempt, scheduled_for, started_at, status)
                 VALUES ($1, $2, $3, $4, $5, 'running') RETURNING id",
                &[
                    &job,
                    &holder,
                    &attempt,
                    &start.scheduled_for.timestamp(),
                    &now.timestamp(),
                ],
            )
            .map_err(db)?
            .get(0);
        tx.execute(
            "UPDATE schedule_leases SET holder = $2, run_id = $3, expires_at = $4 WHERE job = $1",
            &[&job, &holder, &run_id, &(now.timestamp() + ttl_secs(ttl))],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(Acquire::Acquired { run_id })
    }

    /// `toolmark_schedules::ScheduleStore::renew`, for every scheduler of the cluster.
    pub fn schedule_renew(
        &mut self,
        job: &str,
        holder: &str,
        run_id: i64,
        now: Time,
        ttl: std::time::Duration,
    ) -> Result<bool, QueueError> {
        let u = self.url().to_owned();
        let n = self
            .client()
            .execute(
                "UPDATE schedule_leases SET expires_at = $4
                 WHERE job = $1 AND holder = $2 AND run_id = $3",
                &[&job, &holder, &run_id, &(now.timestamp() + ttl_secs(ttl))],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(n == 1)
    }

    /// `toolmark_schedules::ScheduleStore::finish`, for every scheduler of the cluster.
    pub fn schedule_finish(
        &mut self,
        job: &str,
        holder: &str,
        run_id: i64,
        now: Time,
        (status, detail): (RunStatus, &str),
    ) -> Result<bool, QueueError> {
        let u = self.url().to_owned();
        let db = |e| db_of(&u, e);
        let mut tx = self.client().transaction().map_err(db)?;
        // The lease row stays (its run is cleared): it is what later acquisitions lock.
        let released = tx
            .execute(
                "UPDATE schedule_leases SET holder = '', run_id = NULL, expires_at = 0
                 WHERE job = $1 AND holder = $2 AND run_id = $3",
                &[&job, &holder, &run_id],
            )
            .map_err(db)?
            == 1;
        let detail = if released {
            detail.to_owned()
        } else {
            lost_lease_detail(detail)
        };
        tx.execute(
            "UPDATE schedule_runs SET status = $2, finished_at = $3, detail = $4 WHERE id = $1",
            &[&run_id, &status.as_str(), &now.timestamp(), &detail],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(released)
    }

    /// `toolmark_schedules::ScheduleStore::last_success` (with `finished`:
    /// `ScheduleStore::last_success_finished`),
    /// over every scheduler's runs.
    pub fn schedule_last_success(
        &mut self,
        job: &str,
        finished: bool,
    ) -> Result<Option<Time>, QueueError> {
        let u = self.url().to_owned();
        let column = if finished {
            "finished_at"
        } else {
            "started_at"
        };
        let last: Option<i64> = self
            .client()
            .query_one(
                &format!(
                    "SELECT max({column}) FROM schedule_runs WHERE job = $1 AND status = 'ok'"
                ),
                &[&job],
            )
            .map_err(|e| db_of(&u, e))?
            .get(0);
        last.map(from_secs).transpose()
    }
}
