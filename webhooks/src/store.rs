//! The delivery bookkeeping in `DATA/webhooks.sqlite`: one row per subscription id.
//!
//! `webhook_state(id, url, cursor, attempts, next_attempt_ms, last_outcome, last_attempt_ms,
//! delivered)`: `cursor` is the `seq` of the last event the subscriber acknowledged with a 2xx
//! (0: none yet, so a new subscription receives every event from the first); `attempts` the
//! failed attempts since the last success; `next_attempt_ms` (Unix milliseconds) when the
//! subscription is due again (0: now); `delivered` how many events it acknowledged. A
//! subscription whose `url` changes keeps its cursor (the subscriber is the id) and starts its
//! back-off afresh.
//!
//! A cluster's API replicas keep the same in their shared PostgreSQL instead
//! (`toolmark_queue::webhooks`, [`crate::Bookkeeping::Shared`]).
//!
//! This is bookkeeping, not a fact derived from the log: the index can be rebuilt without it,
//! and losing it re-delivers from the first event (at least once, never lost).

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

/// Why the store could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("webhooks store: {0}")]
    Sql(#[from] rusqlite::Error),
    /// The cluster's database failed.
    #[error("webhooks store: {0}")]
    Shared(#[from] toolmark_queue::QueueError),
    /// Another replica took the pass's lease over (this one stalled past it): this pass stops.
    #[error("webhooks store: another replica took the delivery pass over")]
    LeaseLost,
}

/// A subscription's delivery state (one type for both stores: the cluster's is
/// `toolmark_queue::webhooks`).
pub use toolmark_queue::WebhookState as SubscriptionState;

/// The open store.
pub struct Store {
    conn: Connection,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS webhook_state (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    cursor INTEGER NOT NULL DEFAULT 0,
    last_id TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms INTEGER NOT NULL DEFAULT 0,
    last_outcome TEXT,
    last_attempt_ms INTEGER,
    delivered INTEGER NOT NULL DEFAULT 0
) STRICT;
";

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl Store {
    /// Open (creating if needed) the store at `path`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sql`] when the file cannot be opened or created.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store { conn })
    }

    /// The state of subscription `id` delivering to `url`, created (cursor 0) when it has none;
    /// a changed URL is recorded and its back-off reset.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sql`].
    pub fn state(&self, id: &str, url: &str) -> Result<SubscriptionState, StoreError> {
        self.conn.execute(
            "INSERT INTO webhook_state (id, url) VALUES (?1, ?2) ON CONFLICT (id) DO UPDATE
                 SET url = excluded.url, attempts = 0, next_attempt_ms = 0
                 WHERE webhook_state.url <> excluded.url",
            params![id, url],
        )?;
        Ok(self.get(id)?.unwrap_or_default())
    }

    /// The state of subscription `id`, if it has one.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sql`].
    pub fn get(&self, id: &str) -> Result<Option<SubscriptionState>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, url, cursor, attempts, next_attempt_ms, last_outcome,
                     last_attempt_ms, delivered, last_id FROM webhook_state WHERE id = ?1",
                [id],
                |r| {
                    Ok(SubscriptionState {
                        id: r.get(0)?,
                        url: r.get(1)?,
                        cursor: unsigned(r.get(2)?),
                        attempts: u32::try_from(r.get::<_, i64>(3)?).unwrap_or(u32::MAX),
                        next_attempt_ms: unsigned(r.get(4)?),
                        last_outcome: r.get(5)?,
                        last_attempt_ms: r.get::<_, Option<i64>>(6)?.map(unsigned),
                        delivered: unsigned(r.get(7)?),
                        last_id: r.get(8)?,
                    })
                },
            )
            .optional()?)
    }

    /// Record that event `seq` (id `event`) was acknowledged at `now_ms`: the cursor moves to
    /// it, the attempts and back-off are cleared. Durable when it returns (`synchronous = FULL`).
    ///
    /// # Errors
    ///
    /// [`StoreError::Sql`].
    pub fn acknowledged(
        &self,
        id: &str,
        (seq, event): (u64, &str),
        outcome: &str,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE webhook_state SET cursor = ?2, last_id = ?5, attempts = 0,
                 next_attempt_ms = 0, last_outcome = ?3, last_attempt_ms = ?4,
                 delivered = delivered + 1 WHERE id = ?1 AND cursor <= ?2",
            params![id, int(seq), outcome, int(now_ms), event],
        )?;
        Ok(())
    }

    /// Move subscription `id`'s cursor to `seq`, where its last acknowledged event now stands
    /// (the index numbered the events otherwise since).
    ///
    /// # Errors
    ///
    /// [`StoreError::Sql`].
    pub fn moved(&self, id: &str, seq: u64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE webhook_state SET cursor = ?2 WHERE id = ?1",
            params![id, int(seq)],
        )?;
        Ok(())
    }

    /// Record a failed attempt at `now_ms`: one more attempt, due again at `next_ms`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sql`].
    pub fn failed(
        &self,
        id: &str,
        outcome: &str,
        now_ms: u64,
        next_ms: u64,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE webhook_state SET attempts = attempts + 1, next_attempt_ms = ?3,
                 last_outcome = ?2, last_attempt_ms = ?4 WHERE id = ?1",
            params![id, outcome, int(next_ms), int(now_ms)],
        )?;
        Ok(())
    }
}
