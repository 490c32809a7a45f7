//! Webhooks: deliver toolmark's signed security events to the subscribers an operator
//! configured, at least once, in order.
//!
//! What it does:
//! - [`config`]: a subscription as the configuration file writes it ([`WebhookConfig`]: `id`,
//!   `url`, `secret` or `secret_env`, `watch`), validated into a [`Subscription`] (https only,
//!   a secret of at least [`MIN_SECRET_BYTES`] bytes) with errors that name the key.
//! - [`store`]: the bookkeeping in `DATA/webhooks.sqlite` (per subscription: the cursor, the
//!   attempts since the last success, the time of the next attempt, the last outcome). It is
//!   not derived from the log: losing it means re-delivering from the start (at least once).
//! - [`deliver`]: one pass ([`Deliverer::pass`]): for each subscription that is due, the events
//!   after its cursor (of its watched targets), oldest first, each signed with the answer key
//!   and posted by `toolmark_outbound::webhook` (the SSRF guard, no redirect followed, a timeout,
//!   the response body capped) with its id, a timestamp and an HMAC-SHA256 signature
//!   ([`signature`]) in headers. The cursor advances past an event only after a 2xx answer to
//!   it, and is stored before the next event is sent; any other outcome (an error, a timeout, a
//!   3xx, 4xx or 5xx) stops the subscription's pass and sets its next attempt after a capped
//!   exponential back-off ([`Backoff`]). A pass holds an exclusive lock on
//!   `DATA/webhooks.sqlite.lock`, so two processes never deliver at once. In a cluster
//!   ([`Bookkeeping::Shared`]) the state is in the PostgreSQL the API replicas share and a pass
//!   holds the queue's `webhooks` lease instead: any replica may make the next pass.
//!
//! What it does not do: build an HTTP client (`toolmark-outbound` does), write the index or the log,
//! read events other than through the index's typed queries, follow a redirect, or decide
//! what an event is (the index derives them).

#![deny(missing_docs)]

pub mod config;
pub mod deliver;
pub mod store;

pub use config::{
    ConfigError, MAX_SECRET_BYTES, MAX_SUBSCRIPTIONS, MIN_SECRET_BYTES, Subscription,
    WebhookConfig, validate,
};
pub use deliver::{
    Backoff, Bookkeeping, Deliverer, DeliveryError, EVENTS_PER_PASS, HEADER_EVENT_CURSOR,
    HEADER_EVENT_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, PassReport, SHARED_PASS_LEASE,
    SubscriptionReport, signature,
};
pub use store::{Store, StoreError, SubscriptionState};
