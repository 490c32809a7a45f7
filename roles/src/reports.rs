//! Client reports of a cluster's API replicas, kept in the PostgreSQL they share
//! (`toolmark_queue::reports`): the API's [`ReportStore`] over the queue database, so a client is
//! counted once per target and day whichever replica it reaches and every replica reads the
//! same counts.

use std::sync::Arc;

use crate::shared::Db;

use toolmark_api::contribute::{MAX_CLIENTS_PER_DAY, Outcome, Pair, ReportStore, StoreError};
use toolmark_index::contributions::{
    ClientReport, Day, DigestKind, Limits, MINIMUM_REPORTS, WINDOW_DAYS,
};
use toolmark_queue::{ReportLimits, ReportRow, Reported};
use toolmark_toolset::Sri;

/// The replicas' shared client reports, on a kept connection ([`Db`]). Its calls block (the API
/// makes them on its blocking threads, as it reads the index).
pub struct SharedReports {
    db: Arc<Db>,
    limits: ReportLimits,
}

impl SharedReports {
    /// Over `db` with the single box's limits (`toolmark_index::contributions::Limits::default`,
    /// [`MAX_CLIENTS_PER_DAY`]).
    pub fn new(db: Arc<Db>) -> SharedReports {
        let limits = Limits::default();
        SharedReports::with_limits(
            db,
            ReportLimits {
                retention_days: limits.retention_days,
                max_digests_per_target_day: limits.max_digests_per_target_day,
                max_rows_per_day: limits.max_rows_per_day,
                max_clients_per_day: MAX_CLIENTS_PER_DAY as u64,
            },
        )
    }

    /// [`SharedReports::new`] with `limits` (tests use small ones).
    pub fn with_limits(db: Arc<Db>, limits: ReportLimits) -> SharedReports {
        SharedReports { db, limits }
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&mut toolmark_queue::Queue) -> Result<T, toolmark_queue::QueueError>,
    ) -> Result<T, StoreError> {
        self.db.with(work).map_err(|e| StoreError(e.to_string()))
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
