//! Webhook delivery state shared by a cluster's API replicas: per subscription, the cursor of
//! the last event its receiver acknowledged and its back-off (`toolmark_webhooks`, which keeps
//! the same in `DATA/webhooks.sqlite` on one box). Any replica may make the next pass: events
//! are numbered alike on every replica, so a cursor means the same event on each.
//!
//! A pass is exclusive through the named lease [`WEBHOOKS_LEASE`] ([`Queue::hold`]).

use crate::queue::{Queue, QueueError, db_of};

/// The named lease a webhook pass holds while it delivers.
pub const WEBHOOKS_LEASE: &str = "webhooks";

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS webhook_state (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    cursor BIGINT NOT NULL DEFAULT 0,
    last_id TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms BIGINT NOT NULL DEFAULT 0,
    last_outcome TEXT,
    last_attempt_ms BIGINT,
    delivered BIGINT NOT NULL DEFAULT 0
);
";

/// One subscription's delivery state (as `toolmark_webhooks::SubscriptionState`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookState {
    /// The subscription's id.
    pub id: String,
    /// The URL it was last delivered to.
    pub url: String,
    /// The `seq` of the last event acknowledged (0: none).
    pub cursor: u64,
    /// The id of the last event acknowledged.
    pub last_id: Option<String>,
    /// Failed attempts since the last acknowledged event.
    pub attempts: u32,
    /// When it is due again (Unix milliseconds; 0: now).
    pub next_attempt_ms: u64,
    /// The last attempt's outcome, as text.
    pub last_outcome: Option<String>,
    /// When the last attempt was made (Unix milliseconds).
    pub last_attempt_ms: Option<u64>,
    /// Events acknowledged in all.
    pub delivered: u64,
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl Queue {
    /// The state of subscription `id` delivering to `url`, created (cursor 0) when it has none;
    /// a changed URL is recorded and its back-off reset.
    pub fn webhook_state(&mut self, id: &str, url: &str) -> Result<WebhookState, QueueError> {
        let u = self.url().to_owned();
        self.client()
            .execute(
                "INSERT INTO webhook_state (id, url) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE
                     SET url = excluded.url, attempts = 0, next_attempt_ms = 0
                     WHERE webhook_state.url <> excluded.url",
                &[&id, &url],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(self.webhook(id)?.unwrap_or_default())
    }

    /// The state of subscription `id`, if it has one.
    pub fn webhook(&mut self, id: &str) -> Result<Option<WebhookState>, QueueError> {
        let u = self.url().to_owned();
        let row = self
            .client()
            .query_opt(
                "SELECT id, url, cursor, attempts, next_attempt_ms, last_outcome,
                     last_attempt_ms, delivered, last_id FROM webhook_state WHERE id = $1",
                &[&id],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(row.map(|r| WebhookState {
            id: r.get(0),
            url: r.get(1),
            cursor: unsigned(r.get(2)),
            attempts: u32::try_from(r.get::<_, i32>(3)).unwrap_or(0),
            next_attempt_ms: unsigned(r.get(4)),
            last_outcome: r.get(5),
            last_attempt_ms: r.get::<_, Option<i64>>(6).map(unsigned),
            delivered: unsigned(r.get(7)),
            last_id: r.get(8),
        }))
    }

    /// Event `seq` (id `event`) was acknowledged at `now_ms`: the cursor moves to it (never
    /// back), the attempts and back-off are cleared.
    pub fn webhook_acknowledged(
        &mut self,
        id: &str,
        (seq, event): (u64, &str),
        outcome: &str,
        now_ms: u64,
    ) -> Result<(), QueueError> {
        let u = self.url().to_owned();
        self.client()
            .execute(
                "UPDATE webhook_state SET cursor = $2, last_id = $5, attempts = 0,
                     next_attempt_ms = 0, last_outcome = $3, last_attempt_ms = $4,
                     delivered = delivered + 1 WHERE id = $1 AND cursor <= $2",
                &[&id, &int(seq), &outcome, &int(now_ms), &event],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(())
    }

    /// Subscription `id`'s cursor moves to `seq`, where its last acknowledged event now stands.
    pub fn webhook_moved(&mut self, id: &str, seq: u64) -> Result<(), QueueError> {
        let u = self.url().to_owned();
        self.client()
            .execute(
                "UPDATE webhook_state SET cursor = $2 WHERE id = $1",
                &[&id, &int(seq)],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(())
    }

    /// A failed attempt at `now_ms`: one more attempt, due again at `next_ms`.
    pub fn webhook_failed(
        &mut self,
        id: &str,
        outcome: &str,
        now_ms: u64,
        next_ms: u64,
    ) -> Result<(), QueueError> {
        let u = self.url().to_owned();
        self.client()
            .execute(
                "UPDATE webhook_state SET attempts = attempts + 1, next_attempt_ms = $3,
                     last_outcome = $2, last_attempt_ms = $4 WHERE id = $1",
                &[&id, &outcome, &int(next_ms), &int(now_ms)],
            )
            .map_err(|e| db_of(&u, e))?;
        Ok(())
    }
}
