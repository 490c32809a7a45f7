//! toolmark's roles as composition roots: each role is one function that builds its parts from
//! the configuration and runs them until the [`Stop`] it is handed fires.
//!
//! - [`service::run`] is `toolmark run`: the API role and the scheduler role in one process over
//!   one data directory (SQLite and files by default, `[storage]` otherwise).
//! - [`api`]: the API role's runtime, state and serving path (also `toolmark serve`'s).
//! - [`replica`] is `toolmark api`: the API role as a replica, serving from its own index that
//!   [`follower`] keeps a verified view of the published log, with the client reports every
//!   replica shares in PostgreSQL ([`reports`]).
//! - [`jobs`]: the scheduler's jobs — crawl, package sweep, heartbeat (with the witnesses'
//!   rounds), popularity refresh, webhook delivery — and the witnesses' cosigner.
//! - [`monitor`]: the log monitor of `toolmark log verify` (source, trusted key, audit, witnesses).
//! - [`popularity`]: the download-count refresh pipeline behind the `popularity` job and
//!   `toolmark package popularity --refresh`.
//! - [`witness`]: `toolmark witness`, the C2SP tlog-witness for other logs, served.
//! - [`cluster`]: the cluster's scheduler, worker and sequencer over the job queue, each with
//!   its `/health` and `/metrics` ([`health`]).
//!
//! It never parses a binary's flags, installs a signal handler, prints to the terminal or
//! exits the process: the binary does those and hands a role a [`Stop`]. It holds no logic of
//! the parts it composes (crawling, recording, serving, scheduling and cosigning live in their
//! crates); it only wires them.
#![deny(missing_docs)]

pub mod api;
pub mod cluster;
mod error;
pub mod follower;
pub mod health;
pub mod jobs;
pub mod monitor;
pub mod popularity;
pub mod replica;
pub mod reports;
pub mod schedules;
pub mod service;
pub mod shared;
pub mod witness;

pub use error::{RoleError, chain};
pub use toolmark_ingest::Stop;
