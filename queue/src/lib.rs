//! The cluster's shared work state, in the operator's PostgreSQL 15: what the scheduler
//! enqueues and the workers claim, and the client reports and webhook cursors the API replicas share (issue #27).
//!
//! - [`Queue::enqueue`]: jobs of a run, each once per `(run, key)` — a scheduler that enqueues
//!   a run again after a failover adds nothing.
//! - [`Queue::claim`]: up to `n` jobs, `FOR UPDATE SKIP LOCKED`, each under a lease; a claim is
//!   `(job, seq)`, `seq` counting every claim of the job. A job whose lease ran out (its worker died or stalled) is claimed again
//!   with the next attempt, up to [`MAX_ATTEMPTS`]; then it is `abandoned`.
//! - [`Queue::complete`]: the job's result and whatever the caller writes in the same
//!   transaction (the observation handed to the sequencer) commit together, and only while the
//!   claim is still the job's current one: a late result of a worker that lost its lease is
//!   refused ([`QueueError::Lost`]) and its writes roll back. [`Queue::fail`] gives a job back
//!   for a later attempt, or fails it for good; [`Queue::defer`] gives it back without counting
//!   an attempt (its host was busy).
//! - [`Queue::hold`]: a named lease (one active scheduler, one active sequencer).
//! - [`Queue::prune`]: finished jobs and taken hand-offs removed once old enough.
//! - [`Queue::acquire_host`]: a place under a per-host limit that holds across every worker
//!   (leased: a dead worker's places lapse); [`Queue::take_token`]: a request rate (a token
//!   bucket) shared by every worker, e.g. the registry's.
//!
//! - [`Queue::report`], [`Queue::reports`]: the API replicas' client reports (`contribute`),
//!   counted once per client, target and day across every replica ([`reports`]).
//! - [`Queue::record_harvest`], [`Queue::stamp_harvests`], [`Queue::harvests_before`]: each
//!   crawl run's harvest, stamped with the log size it takes effect at, so every API replica
//!   lists the registry's servers alike at one tree size ([`harvests`]).
//! - [`Queue::webhook_state`] and the rest of [`webhooks`]: the webhook subscriptions' cursors
//!   and back-off, so any API replica can make the next delivery pass.
//!
//! Every time is the database's (`now()`), so the workers' clocks never matter. Every statement
//! is bounded by [`STATEMENT_TIMEOUT`].
//!
//! It never runs a job, dials anything but the operator's PostgreSQL, or decides what a job
//! means: kinds, keys and payloads are the callers'.
#![deny(missing_docs)]

pub mod harvests;
mod queue;
pub mod reports;
pub mod schedules;
pub mod webhooks;

pub use harvests::Harvest;
pub use queue::{
    CONNECT_TIMEOUT, Claim, Counts, Failed, Handoff, HostSlot, MAX_ATTEMPTS, MAX_CLAIM,
    MAX_PAYLOAD_BYTES, NewJob, Overview, Queue, QueueError, RunOutcome, RunSummary,
    STATEMENT_TIMEOUT,
};
pub use reports::{ReportLimits, ReportRow, Reported};
pub use webhooks::{WEBHOOKS_LEASE, WebhookState};
