//! Client reports shared by every API replica (`"contribute": true` on `/check`): the counts
//! per (target, digest, UTC day), and the day's set of clients already counted, so a client is
//! counted once per target and day however many replicas it reaches — which is what keeps the
//! minimum of distinct clients below which nothing is shown a minimum of *clients*, not of
//! replicas a client happened to reach.
//!
//! What is kept, as on one box (`toolmark_index::contributions`, `toolmark_api::contribute`):
//! counts per (target, kind, digest, day) in `client_reports`; and, for the current day only,
//! a random key (`client_report_keys`, drawn by the first replica to count a report that day)
//! and the keyed hashes of (client, target) → (kind, digest) the replicas computed with it
//! (`client_report_seen`). Never an address, a client key, tool text or a user agent. The first
//! report of a new day deletes every older key and hash, so yesterday's hashes cannot be
//! recomputed. The replicas hash under the day key combined with a secret of theirs (derived
//! from the answer key), so this database's contents alone do not let anyone match addresses.
//! The key and the hashes are in `UNLOGGED` tables: not written to the WAL (so not
//! to a replica or a WAL archive), emptied by a crash, and left out of `pg_dump
//! --no-unlogged-table-data` (docs/operations.md, "Backups").
//!
//! This module stores and decides under one lock ([`REPORTS_LOCK`]), the same decision
//! `toolmark_api::contribute` makes on one box; the hashing is the caller's.

use crate::queue::{Queue, QueueError, db_of};

/// The advisory lock every report is counted under: reports are opt-in and rare, and one
/// order makes the caps exact across replicas.
pub const REPORTS_LOCK: i64 = 0x7265_706f_7274_7300;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS client_reports (
    target_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('mtl1', 'full')),
    digest TEXT NOT NULL,
    day INTEGER NOT NULL,
    clients BIGINT NOT NULL,
    PRIMARY KEY (target_id, kind, digest, day)
);
CREATE INDEX IF NOT EXISTS client_reports_by_day ON client_reports (day);
CREATE UNLOGGED TABLE IF NOT EXISTS client_report_keys (
    day INTEGER PRIMARY KEY,
    key BYTEA NOT NULL,
    clients BIGINT NOT NULL DEFAULT 0
);
CREATE UNLOGGED TABLE IF NOT EXISTS client_report_seen (
    who BYTEA PRIMARY KEY,
    what BYTEA NOT NULL,
    day INTEGER NOT NULL
);
";

/// The caps and retention of the shared store (the API's: `toolmark_index::contributions`'s
/// limits and `toolmark_api::contribute::MAX_CLIENTS_PER_DAY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportLimits {
    /// Days a count is kept (the day it counts for and the ones before it).
    pub retention_days: u32,
    /// Most distinct digests counted for one target on one day.
    pub max_digests_per_target_day: u32,
    /// Most count rows created on one day, over all targets.
    pub max_rows_per_day: u32,
    /// Most (client, target) pairs counted on one day.
    pub max_clients_per_day: u64,
}

/// What became of one report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reported {
    /// Counted now: one more client for its (target, digest, day).
    Counted,
    /// This client reported this digest for this target earlier today: counted then.
    Again,
    /// This client reported another digest for this target today: not counted.
    OtherToday,
    /// Today's clients are at [`ReportLimits::max_clients_per_day`]: not counted.
    ClientsFull,
    /// The target has [`ReportLimits::max_digests_per_target_day`] other digests today.
    TargetFull,
    /// Today's rows are at [`ReportLimits::max_rows_per_day`].
    DayFull,
}

/// One digest reported for a target by at least the minimum of clients on some day of a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    /// `mtl1` or `full`.
    pub kind: String,
    /// The digest's SRI text.
    pub digest: String,
    /// Client reports summed over the window's days on which they reached the minimum.
    pub reports: u64,
    /// The first such day (days since 1970-01-01).
    pub first_day: u32,
    /// The last such day.
    pub last_day: u32,
    /// The first day of the whole retention on which it reached the minimum.
    pub first_reached: u32,
}

/// The (client, target) and (kind, digest) hashes of one report under a day's key: the
/// caller's (`toolmark_api::contribute`), so this crate never sees a client.
pub type Pair<'a> = &'a dyn Fn(&[u8; 32]) -> ([u8; 16], [u8; 16]);

fn day_sql(day: u32) -> Result<i32, QueueError> {
    i32::try_from(day).map_err(|_| QueueError::Refused(format!("day {day} is out of range")))
}

fn day_of(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

impl Queue {
    /// Counts one client's report of `digest` (`kind`: `mtl1` or `full`) for `target_id` on
    /// `day` (or the newest day a replica counted, if later), once per client, target and day
    /// across every replica: `fresh_key` becomes the day's key if no replica drew one yet (and
    /// then older days' keys and hashes are deleted), `pair` hashes the report under the day's
    /// key. One transaction under [`REPORTS_LOCK`]; counts past the retention are deleted when
    /// a row is added.
    #[allow(clippy::too_many_arguments)]
    pub fn report(
        &mut self,
        day: u32,
        fresh_key: [u8; 32],
        pair: Pair<'_>,
        target_id: &str,
        kind: &str,
        digest: &str,
        limits: &ReportLimits,
    ) -> Result<Reported, QueueError> {
        let url = self.url().to_owned();
        let db = |e| db_of(&url, e);
        let mut tx = self.client().transaction().map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&REPORTS_LOCK])
            .map_err(db)?;
        // The day never goes back: a replica whose clock is behind the others' counts into
        // the newest day, so it cannot bring a forgotten day's key back (and count its
        // clients again).
        let newest: Option<i32> = tx
            .query_one("SELECT max(day) FROM client_report_keys", &[])
            .map_err(db)?
            .get(0);
        let d = day_sql(day)?.max(newest.unwrap_or(0));
        let retention = i32::try_from(limits.retention_days).unwrap_or(i32::MAX);
        let oldest = d.saturating_sub(retention.saturating_sub(1).max(0));
        let new_day = tx
            .execute(
                "INSERT INTO client_report_keys (day, key) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&d, &fresh_key.as_slice()],
            )
            .map_err(db)?
            == 1;
        if new_day {
            // The first report of a day forgets the days before it (only then: the set of
            // clients is large, and every report is counted under one lock).
            tx.execute("DELETE FROM client_report_keys WHERE day < $1", &[&d])
                .map_err(db)?;
            tx.execute("DELETE FROM client_report_seen WHERE day < $1", &[&d])
                .map_err(db)?;
        }
        let row = tx
            .query_one(
                "SELECT key, clients FROM client_report_keys WHERE day = $1",
                &[&d],
            )
            .map_err(db)?;
        let key: Vec<u8> = row.get(0);
        let clients: i64 = row.get(1);
        let key: [u8; 32] = key
            .try_into()
            .map_err(|_| QueueError::Refused("the day's report key is not 32 bytes".into()))?;
        let (who, what) = pair(&key);
        let seen = tx
            .query_opt(
                "SELECT what FROM client_report_seen WHERE who = $1",
                &[&who.as_slice()],
            )
            .map_err(db)?;
        if let Some(r) = seen {
            let earlier: Vec<u8> = r.get(0);
            return Ok(if earlier == what {
                Reported::Again
            } else {
                Reported::OtherToday
            });
        }
        if u64::try_from(clients).unwrap_or(0) >= limits.max_clients_per_day {
            return Ok(Reported::ClientsFull);
        }
        tx.execute("DELETE FROM client_reports WHERE day < $1", &[&oldest])
            .map_err(db)?;
        let updated = tx
            .execute(
                "UPDATE client_reports SET clients = clients + 1
                 WHERE target_id = $1 AND kind = $2 AND digest = $3 AND day = $4",
                &[&target_id, &kind, &digest, &d],
            )
            .map_err(db)?;
        if updated == 0 {
            let of_target: i64 = tx
                .query_one(
                    "SELECT count(*) FROM client_reports WHERE target_id = $1 AND day = $2",
                    &[&target_id, &d],
                )
                .map_err(db)?
                .get(0);
            if u64::try_from(of_target).unwrap_or(0) >= u64::from(limits.max_digests_per_target_day)
            {
                return Ok(Reported::TargetFull);
            }
            let of_day: i64 = tx
                .query_one("SELECT count(*) FROM client_reports WHERE day = $1", &[&d])
                .map_err(db)?
                .get(0);
            if u64::try_from(of_day).unwrap_or(0) >= u64::from(limits.max_rows_per_day) {
                return Ok(Reported::DayFull);
            }
            tx.execute(
                "INSERT INTO client_reports (target_id, kind, digest, day, clients)
                 VALUES ($1, $2, $3, $4, 1)",
                &[&target_id, &kind, &digest, &d],
            )
            .map_err(db)?;
        }
        tx.execute(
            "INSERT INTO client_report_seen (who, what, day) VALUES ($1, $2, $3)",
            &[&who.as_slice(), &what.as_slice(), &d],
        )
        .map_err(db)?;
        tx.execute(
            "UPDATE client_report_keys SET clients = clients + 1 WHERE day = $1",
            &[&d],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(Reported::Counted)
    }

    /// The digests reported for `target_id` by at least `minimum` clients on some day from
    /// `since` to `today`, summed over those days only; most reports first, then kind and
    /// digest. Rows below the minimum are never read.
    pub fn reports(
        &mut self,
        target_id: &str,
        since: u32,
        today: u32,
        minimum: u64,
    ) -> Result<Vec<ReportRow>, QueueError> {
        let url = self.url().to_owned();
        let db = |e| db_of(&url, e);
        let (since, today) = (day_sql(since)?, day_sql(today)?);
        let minimum = i64::try_from(minimum).unwrap_or(i64::MAX);
        let rows = self
            .client()
            .query(
                "SELECT r.kind, r.digest, sum(r.clients)::BIGINT, min(r.day), max(r.day),
                     (SELECT min(f.day) FROM client_reports f
                      WHERE f.target_id = $1 AND f.kind = r.kind AND f.digest = r.digest
                        AND f.clients >= $4 AND f.day <= $3)
                 FROM client_reports r
                 WHERE r.target_id = $1 AND r.day BETWEEN $2 AND $3 AND r.clients >= $4
                 GROUP BY r.kind, r.digest
                 ORDER BY sum(r.clients) DESC, r.kind, r.digest",
                &[&target_id, &since, &today, &minimum],
            )
            .map_err(db)?;
        Ok(rows
            .iter()
            .map(|r| {
                let first_day = day_of(r.get(3));
                ReportRow {
                    kind: r.get(0),
                    digest: r.get(1),
                    reports: u64::try_from(r.get::<_, i64>(2)).unwrap_or(0),
                    first_day,
                    last_day: day_of(r.get(4)),
                    first_reached: r.get::<_, Option<i32>>(5).map_or(first_day, day_of),
                }
            })
            .collect())
    }
}
