//! The cluster scheduler's schedule store: its jobs' leases and run history in the cluster's
//! PostgreSQL (`toolmark_queue::schedules`), over one kept connection ([`crate::shared::Db`]),
//! so schedulers on several machines run each job once per fire time and a standby catches up
//! from the cluster's last success.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use toolmark_queue::QueueError;
use toolmark_schedules::{Acquire, RunStart, RunStatus, ScheduleError, ScheduleStore};

use crate::shared::Db;

/// The schedule store every scheduler of a cluster shares.
pub struct SharedSchedules {
    db: Arc<Db>,
}

impl SharedSchedules {
    /// Over `db` (its drop takes the connection off the caller's thread).
    pub fn new(db: Arc<Db>) -> SharedSchedules {
        SharedSchedules { db }
    }
}

fn shared(e: QueueError) -> ScheduleError {
    ScheduleError::Shared(e.to_string())
}

impl ScheduleStore for SharedSchedules {
    fn try_acquire(
        &self,
        job: &str,
        holder: &str,
        now: DateTime<Utc>,
        ttl: Duration,
        start: RunStart,
    ) -> Result<Acquire, ScheduleError> {
        self.db
            .with(|q| q.schedule_try_acquire(job, holder, now, ttl, start))
            .map_err(shared)
    }

    fn renew(
        &self,
        job: &str,
        holder: &str,
        run_id: i64,
        now: DateTime<Utc>,
        ttl: Duration,
    ) -> Result<bool, ScheduleError> {
        self.db
            .with(|q| q.schedule_renew(job, holder, run_id, now, ttl))
            .map_err(shared)
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
        self.db
            .with(|q| q.schedule_finish(job, holder, run_id, now, (status, detail)))
            .map_err(shared)
    }

    fn last_success(&self, job: &str) -> Result<Option<DateTime<Utc>>, ScheduleError> {
        self.db
            .with(|q| q.schedule_last_success(job, false))
            .map_err(shared)
    }

    fn last_success_finished(&self, job: &str) -> Result<Option<DateTime<Utc>>, ScheduleError> {
        self.db
            .with(|q| q.schedule_last_success(job, true))
            .map_err(shared)
    }
}
