//! Client reports of a cluster's API replicas, kept in the PostgreSQL they share
//! (`toolmark_queue::reports`): the API's [`ReportStore`] over the queue database, so a client is
//! counted once per target and day whichever replica it reaches and every replica reads the
//! same counts.

use std::sync::Mutex;

use toolmark_api::contribute::{MAX_CLIENTS_PER_DAY, Outcome, Pair, ReportStore, StoreError};
use toolmark_index::contributions::{
    ClientReport, Day, DigestKind, Limits, MINIMUM_REPORTS, WINDOW_DAYS,
};
use toolmark_queue::{Queue, QueueError, ReportLimits, ReportRow, Reported};
use toolmark_toolset::Sri;

/// The replicas' shared client reports: one connection, opened again after a failure. Its
/// calls block (the API makes them on its blocking threads, as it reads the index).
pub struct SharedReports {
    url: String,
    holder: String,
    limits: ReportLimits,
    queue: Mutex<Option<Queue>>,
}

impl SharedReports {
    /// Over the queue database at `url` with the single box's limits
    /// (`toolmark_index::contributions::Limits::default`, [`MAX_CLIENTS_PER_DAY`]); connects
    /// now, so a replica that cannot reach its database says so when it starts.
    ///
    /// # Errors
    ///
    /// The database could not be reached or its tables created.
    pub fn connect(url: &str, holder: &str) -> Result<SharedReports, QueueError> {
        let limits = Limits::default();
        SharedReports::with_limits(
            url,
            holder,
            ReportLimits {
                retention_days: limits.retention_days,
                max_digests_per_target_day: limits.max_digests_per_target_day,
                max_rows_per_day: limits.max_rows_per_day,
                max_clients_per_day: MAX_CLIENTS_PER_DAY as u64,
            },
        )
    }

    /// [`SharedReports::connect`] with `limits` (tests use small ones).
    ///
    /// # Errors
    ///
    /// As [`SharedReports::connect`].
    pub fn with_limits(
        url: &str,
        holder: &str,
        limits: ReportLimits,
    ) -> Result<SharedReports, QueueError> {
        let queue = Queue::connect(url, holder)?;
        Ok(SharedReports {
            url: url.to_owned(),
            holder: holder.to_owned(),
            limits,
            queue: Mutex::new(Some(queue)),
        })
    }

    /// `work` on the connection (opened again if the last one failed); a database error drops
    /// the connection, so the next call starts on a fresh one.
    fn with<T>(
        &self,
        work: impl FnOnce(&mut Queue) -> Result<T, QueueError>,
    ) -> Result<T, StoreError> {
        let mut slot = self
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(
                Queue::connect(&self.url, &self.holder).map_err(|e| StoreError(e.to_string()))?,
            );
        }
        let queue = slot.as_mut().expect("connected above");
        work(queue).map_err(|e| {
            if matches!(e, QueueError::Postgres { .. }) {
                *slot = None;
            }
            StoreError(e.to_string())
        })
    }
}

impl Drop for SharedReports {
    /// The database client's own drop blocks on a runtime of its own, which panics on an async
    /// worker thread (where a serving API drops its state): it is dropped on a thread of its own.
    fn drop(&mut self) {
        let queue = self
            .queue
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(queue) = queue {
            std::thread::spawn(move || drop(queue));
        }
    }
}

fn report_of(row: ReportRow) -> Result<ClientReport, StoreError> {
    Ok(ClientReport {
        kind: DigestKind::parse(&row.kind).map_err(|e| StoreError(e.to_string()))?,
        digest: row
            .digest
            .parse()
            .map_err(|_| StoreError(format!("a stored digest {:?}", row.digest)))?,
        reports: row.reports,
        first_day: Day(row.first_day),
        last_day: Day(row.last_day),
        first_reached: Day(row.first_reached),
    })
}

impl ReportStore for SharedReports {
    fn report(
        &self,
        day: Day,
        fresh_key: [u8; 32],
        pair: Pair<'_>,
        target_id: &str,
        kind: DigestKind,
        digest: &Sri,
    ) -> Result<Outcome, StoreError> {
        let digest = digest.to_string();
        let reported = self.with(|q| {
            q.report(
                day.0,
                fresh_key,
                pair,
                target_id,
                kind.as_str(),
                &digest,
                &self.limits,
            )
        })?;
        Ok(match reported {
            Reported::Counted => Outcome::Counted,
            Reported::Again => Outcome::Again,
            Reported::OtherToday => Outcome::OtherToday,
            Reported::ClientsFull => Outcome::ClientsFull,
            Reported::TargetFull => Outcome::TargetFull,
            Reported::DayFull => Outcome::DayFull,
        })
    }

    fn reports(&self, target_id: &str, today: Day) -> Result<Vec<ClientReport>, StoreError> {
        let since = today.minus(WINDOW_DAYS - 1);
        self.with(|q| q.reports(target_id, since.0, today.0, MINIMUM_REPORTS))?
            .into_iter()
            .map(report_of)
            .collect()
    }
}
