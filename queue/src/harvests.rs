//! The registry harvests of a cluster's crawl runs, for the API replicas: the scheduler records
//! each run's harvest (its snapshot document in the bucket) when it enqueues the run
//! ([`Queue::record_harvest`]); the active sequencer, before it appends the first batch after
//! that, stamps the harvest with the log's size ([`Queue::stamp_harvests`]); a replica whose
//! index follows the log past that size applies the harvest's listing (servers, their
//! targets, listing times) to its index ([`Queue::harvests_before`]). The stamp is written
//! before any checkpoint beyond it is published, so every replica at one tree size has applied
//! the same harvests: those stamped below it.

use crate::queue::{Queue, QueueError, db_of};

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS cluster_harvests (
    seq BIGSERIAL PRIMARY KEY,
    run TEXT NOT NULL UNIQUE,
    started_at TEXT NOT NULL,
    registry TEXT NOT NULL,
    snapshot TEXT NOT NULL,
    complete BOOLEAN NOT NULL,
    allow_cleartext BOOLEAN NOT NULL,
    delisted TEXT[] NOT NULL DEFAULT '{}',
    mode TEXT NOT NULL DEFAULT 'full' CHECK (mode IN ('full', 'delta')),
    next_since TEXT NOT NULL DEFAULT '',
    log_size BIGINT
);
ALTER TABLE cluster_harvests ADD COLUMN IF NOT EXISTS mode TEXT NOT NULL DEFAULT 'full'
    CHECK (mode IN ('full', 'delta'));
ALTER TABLE cluster_harvests ADD COLUMN IF NOT EXISTS next_since TEXT NOT NULL DEFAULT '';
ALTER TABLE cluster_harvests ADD COLUMN IF NOT EXISTS report TEXT NOT NULL DEFAULT '';
";

/// One run's harvest, as the scheduler recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Harvest {
    /// Its place in the order harvests were recorded.
    pub seq: i64,
    /// The run.
    pub run: String,
    /// When the run started (`YYYY-MM-DDTHH:MM:SSZ`): the listing time of what it lists.
    pub started_at: String,
    /// The registry harvested.
    pub registry: String,
    /// The snapshot document (SRI of the JSON array of the harvest's items).
    pub snapshot: String,
    /// Whether the harvest reached the registry's last page.
    pub complete: bool,
    /// Whether `http://` remotes were listed as dialable.
    pub allow_cleartext: bool,
    /// `full` (the whole latest set) or `delta` (what changed since the last complete
    /// harvest, merged into its records: the snapshot is the whole set either way).
    pub mode: String,
    /// The `updated_since` the next delta asks for (after a complete harvest: its start less
    /// the clock-skew allowance; after an incomplete one: its basis's).
    pub next_since: String,
    /// Server names the harvest delists (listed by the previous harvest, absent from this
    /// complete one).
    pub delisted: Vec<String>,
    /// The log's size before the first batch appended after it (`None`: not yet).
    pub log_size: Option<u64>,
    /// The run's report as far as the scheduler knows it (JSON: `toolmark_ingest::RunReport`
    /// with its harvest, servers and delisted names; the replicas fill in the rest when the
    /// run has ended); empty when recorded before reports were.
    pub report: String,
}

impl Queue {
    /// Records `h`'s harvest (its `seq` and `log_size` are ignored); a run recorded before
    /// (a scheduler enqueueing it again) is left as it was.
    pub fn record_harvest(&mut self, h: &Harvest) -> Result<(), QueueError> {
        let u = self.url().to_owned();
        self.client()
            .execute(
                "INSERT INTO cluster_harvests
                     (run, started_at, registry, snapshot, complete, allow_cleartext, delisted,
                      mode, next_since, report)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (run) DO NOTHING",
                &[
                    &h.run,
                    &h.started_at,
                    &h.registry,
                    &h.snapshot,
                    &h.complete,
                    &h.allow_cleartext,
                    &h.delisted,
                    &h.mode,
                    &h.next_since,
                    &h.report,
                ],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(())
    }

    /// Stamps every harvest not stamped yet with `size`, the log's size before the batch the
    /// caller is about to append (the sequencer, before it appends and publishes).
    pub fn stamp_harvests(&mut self, size: u64) -> Result<u64, QueueError> {
        let u = self.url().to_owned();
        let size = i64::try_from(size).unwrap_or(i64::MAX);
        self.client()
            .execute(
                "UPDATE cluster_harvests SET log_size = $1 WHERE log_size IS NULL",
                &[&size],
            )
            .map_err(|e| db_of(&u, e))
    }

    /// The harvests after `after` (a `seq`) stamped below `size`, in order and without a gap
    /// (the first one unstamped or stamped at `size` or above ends the list): what an index
    /// that follows the log to `size` lists.
    pub fn harvests_before(&mut self, after: i64, size: u64) -> Result<Vec<Harvest>, QueueError> {
        let u = self.url().to_owned();
        let rows = self
            .client()
            .query(
                &format!("SELECT {COLUMNS} FROM cluster_harvests WHERE seq > $1 ORDER BY seq"),
                &[&after],
            )
            .map_err(|e| db_of(&u, e))?;
        // Only the prefix in order: a harvest recorded earlier but stamped later (a stamp
        // taken by a sequencer whose head was behind) waits, and so does every one after it.
        let mut out = Vec::new();
        for r in &rows {
            let h = harvest_of(r);
            if h.log_size.is_none_or(|n| n >= size) {
                break;
            }
            out.push(h);
        }
        Ok(out)
    }

    /// The harvest recorded last for `registry`, if any (the one the next is compared with);
    /// with `complete`, the last complete one (a delta's basis).
    pub fn latest_harvest(
        &mut self,
        registry: &str,
        complete: bool,
    ) -> Result<Option<Harvest>, QueueError> {
        let u = self.url().to_owned();
        let row = self
            .client()
            .query_opt(
                &format!(
                    "SELECT {COLUMNS} FROM cluster_harvests
                     WHERE registry = $1 AND (complete OR NOT $2)
                     ORDER BY seq DESC LIMIT 1"
                ),
                &[&registry, &complete],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(row.as_ref().map(harvest_of))
    }

    /// The last complete harvest of `registry` and every one recorded after it, in order: what
    /// the registry is known to list (a full harvest delists what they listed and it does not).
    pub fn harvests_since_complete(&mut self, registry: &str) -> Result<Vec<Harvest>, QueueError> {
        let u = self.url().to_owned();
        let rows = self
            .client()
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM cluster_harvests WHERE registry = $1 AND seq >= coalesce(
                         (SELECT max(seq) FROM cluster_harvests WHERE registry = $1 AND complete), 0)
                     ORDER BY seq"
                ),
                &[&registry],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(rows.iter().map(harvest_of).collect())
    }

    /// When the last complete full harvest of `registry` started, if any (deltas run until
    /// one is too old).
    pub fn last_full_harvest(&mut self, registry: &str) -> Result<Option<String>, QueueError> {
        let u = self.url().to_owned();
        let row = self
            .client()
            .query_opt(
                "SELECT started_at FROM cluster_harvests
                 WHERE registry = $1 AND complete AND mode = 'full'
                 ORDER BY seq DESC LIMIT 1",
                &[&registry],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(row.map(|r| r.get(0)))
    }
}

const COLUMNS: &str = "seq, run, started_at, registry, snapshot, complete, allow_cleartext, delisted, log_size, \
     mode, next_since, report";

fn harvest_of(r: &postgres::Row) -> Harvest {
    Harvest {
        seq: r.get(0),
        run: r.get(1),
        started_at: r.get(2),
        registry: r.get(3),
        snapshot: r.get(4),
        complete: r.get(5),
        allow_cleartext: r.get(6),
        delisted: r.get(7),
        log_size: r
            .get::<_, Option<i64>>(8)
            .and_then(|n| u64::try_from(n).ok()),
        mode: r.get(9),
        next_since: r.get(10),
        report: r.get(11),
    }
}
