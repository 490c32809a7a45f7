//! What toolmark observes, with no network in sight: the model every observer produces and
//! every reader consumes.
//!
//! What it does:
//! - [`registry`]: parse pages of the official MCP registry's `/v0.1/servers` list into bounded
//!   records, keep one record per server name, and turn each into targets (every remote, every
//!   package) with a reason when a target must not be observed.
//! - [`observe`]: one observation of one target — a core every observer fills (times, named
//!   status, detail, raw `initialize` result, raw `tools/list` pages, digests) and what was
//!   particular to how it was made ([`observe::Via`]: a remote dialled over HTTP, or a package
//!   run in the sandbox).
//! - [`registry_facts`]: what a package registry says of one version (provenance, publisher,
//!   install scripts, dependencies, …; every field known or unknown) and the flags between two
//!   observed versions.
//! - [`document`]: the stored observation document (`toolmark-observation/1`), the blob a log
//!   entry's `raw` names; old documents still read.
//! - [`behaviour`]: what the package sandbox saw a version do, in the shape answers show it.
//! - [`sandbox`]: the package sandbox's facts about one run (the document's `package.sandbox`),
//!   one type for the sandbox that reports them and the index that reads them.
//! - [`event`]: a security event's body and its id, one type for the index that derives it and
//!   the readers that sign, serve and deliver it.
//! - [`time`]: UTC timestamps in the log's format.
//!
//! What it never does: I/O of any kind (no sockets, files, processes or clocks other than
//! [`observe::Observation::start`] and [`time::now`] reading the system time), and it never
//! decides what a tool set is (the `toolset` crate does) or records anything (the index does).
//! `cargo tree -p toolmark-observation` has no tokio, reqwest, hyper or rustls, and neither do the
//! crates that read observations (`index`, `api`).

#![deny(missing_docs)]

pub mod behaviour;
pub mod document;
pub mod event;
pub mod observe;
pub mod registry;
pub mod registry_facts;
pub mod sandbox;
pub mod time;

pub use document::{Document, DocumentError};
pub use observe::{Observation, Status};
