//! Client reports: the opt-in counts of the tool sets `/check` clients say they were served
//! (`"contribute": true`), in `DATA/contributions.sqlite`.
//!
//! One row per (target, digest, UTC day): how many distinct clients reported that digest for
//! that target that day. **Nothing else is kept**: no address, no client key or hash of one, no
//! tool text, no user agent, no time finer than the day. Which client was already counted today
//! is the API's business and lives only in its memory (`toolmark_api::contribute`); this store
//! never sees a client.
//!
//! ```text
//! client_reports(target_id, kind, digest, day, clients)   PRIMARY KEY (target_id, kind, digest, day)
//! ```
//!
//! `kind` is the digest's kind as compared by `/check` (`mtl1`: MTL/1, `full`: `toolmark/1`),
//! `digest` its SRI text, `day` the UTC day as days since 1970-01-01.
//!
//! This is bookkeeping, not a fact derived from the log: `Index::rebuild` does not (and cannot)
//! reproduce it, so it lives beside the index, never in it, and losing it loses only the
//! counts. It is bounded on every write ([`Limits`]): rows older than [`RETENTION_DAYS`] are
//! pruned, a target takes at most [`MAX_DIGESTS_PER_TARGET_DAY`] distinct digests a day and the
//! whole store at most [`MAX_ROWS_PER_DAY`] rows a day; past a cap the report is not counted
//! ([`Counted`] says which cap).
//!
//! Reads never show a row below [`MINIMUM_REPORTS`] distinct clients: a (target, digest, day)
//! reported by fewer clients is not returned at all, so no single client's report can be read
//! back.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use toolmark_toolset::Sri;

/// Days a row is kept (the day it counts for and the 34 before it): the 7-day window shown
/// plus four weeks in which "the first day a digest reached the threshold" stays known, so a
/// feed item's id does not move while the item can be shown.
pub const RETENTION_DAYS: u32 = 35;

/// Most distinct digests counted for one target on one day; a report of another digest past
/// it is not counted. A server serving its clients more than a handful of tool sets a day is
/// news at 64 already; the cap keeps a client inventing digests from growing the store.
pub const MAX_DIGESTS_PER_TARGET_DAY: u32 = 64;

/// Most rows created on one day, over all targets (about 150 bytes each: 3 MB a day, about
/// 100 MB over [`RETENTION_DAYS`] at worst); past it, reports needing a new row are not
/// counted that day (reports adding to an existing row still are).
pub const MAX_ROWS_PER_DAY: u32 = 20_000;

/// Distinct clients a (target, digest, day) needs before anything about it is shown: below it
/// the row is never returned by a read.
pub const MINIMUM_REPORTS: u64 = 3;

/// The days shown (`clientReports`, the change feeds' items): the current UTC day and the six
/// before it.
pub const WINDOW_DAYS: u32 = 7;

/// Why the store could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ContributionsError {
    /// SQLite failed.
    #[error("contributions store: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A stored value is not of its type (the file was altered by hand).
    #[error("contributions store: {0}")]
    Corrupt(String),
}

/// A UTC day, as days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(pub u32);

impl Day {
    /// The UTC day of `t` (1970-01-01 for anything before it).
    pub fn of(t: SystemTime) -> Day {
        let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Day(u32::try_from(secs / 86_400).unwrap_or(u32::MAX))
    }

    /// The day `n` days before this one (1970-01-01 at the earliest).
    pub fn minus(self, n: u32) -> Day {
        Day(self.0.saturating_sub(n))
    }

    /// `YYYY-MM-DD`.
    pub fn date(self) -> String {
        let t = UNIX_EPOCH + Duration::from_secs(u64::from(self.0) * 86_400);
        let mut s = humantime::format_rfc3339_seconds(t).to_string();
        s.truncate(10);
        s
    }

    /// `YYYY-MM-DDT00:00:00Z`, the day's first second (the time a day-dated item carries).
    pub fn start(self) -> String {
        format!("{}T00:00:00Z", self.date())
    }
}

/// The kind of a reported digest: the digest `/check` compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DigestKind {
    /// MTL/1 (`toolSetDigest`).
    Mtl1,
    /// `toolmark/1`, the full digest (`fullDigest`, or computed from `tools`).
    Full,
}

impl DigestKind {
    /// `mtl1` or `full`, as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            DigestKind::Mtl1 => "mtl1",
            DigestKind::Full => "full",
        }
    }

    /// The kind `s` names (`mtl1` or `full`, as [`DigestKind::as_str`] writes it).
    ///
    /// # Errors
    ///
    /// [`ContributionsError::Corrupt`] for any other text.
    pub fn parse(s: &str) -> Result<DigestKind, ContributionsError> {
        match s {
            "mtl1" => Ok(DigestKind::Mtl1),
            "full" => Ok(DigestKind::Full),
            other => Err(ContributionsError::Corrupt(format!(
                "digest kind {other:?}"
            ))),
        }
    }
}

/// The store's caps and retention ([`Limits::default`]: the named constants; tests use small
/// ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// [`RETENTION_DAYS`].
    pub retention_days: u32,
    /// [`MAX_DIGESTS_PER_TARGET_DAY`].
    pub max_digests_per_target_day: u32,
    /// [`MAX_ROWS_PER_DAY`].
    pub max_rows_per_day: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            retention_days: RETENTION_DAYS,
            max_digests_per_target_day: MAX_DIGESTS_PER_TARGET_DAY,
            max_rows_per_day: MAX_ROWS_PER_DAY,
        }
    }
}

/// What became of one report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// Counted: one more client for its (target, digest, day).
    Counted,
    /// Not counted: the target has [`Limits::max_digests_per_target_day`] other digests today.
    TargetFull,
    /// Not counted: the store created [`Limits::max_rows_per_day`] rows today.
    DayFull,
}

/// One digest reported for a target by at least [`MINIMUM_REPORTS`] clients on at least one
/// day of the window, summed over those days only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientReport {
    /// The digest's kind.
    pub kind: DigestKind,
    /// The digest.
    pub digest: Sri,
    /// Client reports summed over the window's days on which they reached the minimum (a
    /// client reporting on two days counts twice).
    pub reports: u64,
    /// The first such day in the window.
    pub first_day: Day,
    /// The last such day in the window.
    pub last_day: Day,
    /// The first day of the whole retention on which it reached the minimum: the day a feed
    /// item about it is dated by (on or before `first_day`).
    pub first_reached: Day,
}

/// The open store.
pub struct Contributions {
    conn: Connection,
    limits: Limits,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS client_reports (
    target_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('mtl1', 'full')),
    digest TEXT NOT NULL,
    day INTEGER NOT NULL,
    clients INTEGER NOT NULL,
    PRIMARY KEY (target_id, kind, digest, day)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS client_reports_by_day ON client_reports (day);
";

fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn day_of(n: i64) -> Day {
    Day(u32::try_from(n).unwrap_or(0))
}

impl Contributions {
    /// Open (creating if needed) the store at `path` with the default [`Limits`].
    ///
    /// # Errors
    ///
    /// [`ContributionsError::Sql`] when the file cannot be opened or created.
    pub fn open(path: &Path) -> Result<Contributions, ContributionsError> {
        Contributions::open_with(path, Limits::default())
    }

    /// [`Contributions::open`] with `limits`.
    ///
    /// # Errors
    ///
    /// [`ContributionsError::Sql`].
    pub fn open_with(path: &Path, limits: Limits) -> Result<Contributions, ContributionsError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        // Counts, not facts: a crash may lose the last few (no fsync per report).
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Contributions { conn, limits })
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Count one client's report of `digest` (of `kind`) for `target_id` on `day`, after
    /// pruning the rows older than the retention. The caller counts each client once per
    /// (target, day); this store cannot tell clients apart.
    ///
    /// # Errors
    ///
    /// [`ContributionsError::Sql`].
    pub fn count(
        &mut self,
        target_id: &str,
        kind: DigestKind,
        digest: &Sri,
        day: Day,
    ) -> Result<Counted, ContributionsError> {
        let limits = self.limits;
        let tx = self.conn.transaction()?;
        let oldest = day.minus(limits.retention_days.saturating_sub(1));
        tx.execute(
            "DELETE FROM client_reports WHERE day < ?1",
            params![oldest.0],
        )?;
        let digest = digest.to_string();
        let updated = tx.execute(
            "UPDATE client_reports SET clients = clients + 1
             WHERE target_id = ?1 AND kind = ?2 AND digest = ?3 AND day = ?4",
            params![target_id, kind.as_str(), digest, day.0],
        )?;
        if updated == 0 {
            let of_target: i64 = tx.query_row(
                "SELECT count(*) FROM client_reports WHERE target_id = ?1 AND day = ?2",
                params![target_id, day.0],
                |r| r.get(0),
            )?;
            if unsigned(of_target) >= u64::from(limits.max_digests_per_target_day) {
                return Ok(Counted::TargetFull);
            }
            let of_day: i64 = tx.query_row(
                "SELECT count(*) FROM client_reports WHERE day = ?1",
                params![day.0],
                |r| r.get(0),
            )?;
            if unsigned(of_day) >= u64::from(limits.max_rows_per_day) {
                return Ok(Counted::DayFull);
            }
            tx.execute(
                "INSERT INTO client_reports (target_id, kind, digest, day, clients)
                 VALUES (?1, ?2, ?3, ?4, 1)",
                params![target_id, kind.as_str(), digest, day.0],
            )?;
        }
        tx.commit()?;
        Ok(Counted::Counted)
    }

    /// The digests reported for `target_id` by at least [`MINIMUM_REPORTS`] clients on some
    /// day of the [`WINDOW_DAYS`] ending with `today`, summed over those days only; sorted by
    /// reports (most first), then kind and digest. Rows below the minimum are never read.
    ///
    /// # Errors
    ///
    /// [`ContributionsError::Sql`], [`ContributionsError::Corrupt`].
    pub fn reports(
        &self,
        target_id: &str,
        today: Day,
    ) -> Result<Vec<ClientReport>, ContributionsError> {
        let since = today.minus(WINDOW_DAYS - 1);
        let mut st = self.conn.prepare_cached(
            "SELECT kind, digest, sum(clients), min(day), max(day) FROM client_reports
             WHERE target_id = ?1 AND day BETWEEN ?2 AND ?3 AND clients >= ?4
             GROUP BY kind, digest
             ORDER BY sum(clients) DESC, kind, digest",
        )?;
        let minimum = i64::try_from(MINIMUM_REPORTS).unwrap_or(i64::MAX);
        let rows = st.query_map(params![target_id, since.0, today.0, minimum], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })?;
        let mut first = self.conn.prepare_cached(
            "SELECT min(day) FROM client_reports
             WHERE target_id = ?1 AND kind = ?2 AND digest = ?3 AND clients >= ?4 AND day <= ?5",
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (kind, digest, reports, first_day, last_day) = row?;
            let first_reached: Option<i64> = first
                .query_row(params![target_id, kind, digest, minimum, today.0], |r| {
                    r.get(0)
                })
                .optional()?
                .flatten();
            let first_day = day_of(first_day);
            out.push(ClientReport {
                kind: DigestKind::parse(&kind)?,
                digest: digest
                    .parse()
                    .map_err(|_| ContributionsError::Corrupt(format!("digest {digest:?}")))?,
                reports: unsigned(reports),
                first_day,
                last_day: day_of(last_day),
                first_reached: first_reached.map_or(first_day, day_of),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_dates() {
        assert_eq!(Day(0).date(), "1970-01-01");
        assert_eq!(Day(20_424).date(), "2025-12-02");
        assert_eq!(Day(20_424).start(), "2025-12-02T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(20_424 * 86_400 + 86_399);
        assert_eq!(Day::of(t), Day(20_424));
        assert_eq!(Day(3).minus(5), Day(0));
    }
}
