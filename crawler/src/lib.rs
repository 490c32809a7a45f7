//! The crawler: the only part of toolmark that talks to untrusted hosts.
//!
//! What it does:
//! - [`registry`]: parse pages of the official MCP registry's `/v0.1/servers` list into bounded
//!   records, keep one record per server name, and turn each into crawl targets (every remote,
//!   every package) with a reason when a target must not be dialled.
//! - [`harvest`]: page through a registry politely (rate limit, `Retry-After` back-off, page cap,
//!   repeated-cursor abort), full or as an `updated_since` delta.
//! - [`guard`], [`body`]: the SSRF guard and the capped body reads of `toolmark-outbound`, the
//!   one place toolmark's own HTTP is made (re-exported: every request here goes through them).
//! - [`mcp`]: a read-only MCP client (2026-07-28 stateless, streamable HTTP, legacy HTTP+SSE)
//!   that keeps every response's raw JSON: the HTTP transports of the session core in
//!   `toolmark_mcp` (which owns the handshake, `tools/list` paging, answer matching and the
//!   JSON-RPC reader); [`sse`] is the event-stream parser they read with.
//! - [`resource`]: one bounded, unauthenticated `GET` of an `auth-required` remote's
//!   protected-resource metadata (RFC 9728), through the same guard.
//! - [`crawl`]: observe many targets at once with per-host and per-address politeness and one
//!   deadline each, under one memory [`budget`] shared by every observation in flight.
//!
//! Every limit is a named constant in [`limits`]; every outcome is an [`observe::Status`].
//!
//! What it does not do: it never calls a tool, never sends credentials, never follows a
//! redirect, never writes the log or the index (callers do, from the [`observe::Observation`]s
//! it returns), builds no HTTP client of its own (`toolmark_outbound::client` does, with its
//! rules) and serves no HTTP.

#![deny(missing_docs)]

// The observation model and the registry parser live in the network-free
// `toolmark-observation` crate; re-exported so the crawler's paths stay short.
pub use toolmark_observation::{observe, registry};
// Its HTTP clients, guard and body reads are `toolmark-outbound`'s; re-exported so the
// crawler's paths stay as they were.
pub use toolmark_outbound::{body, error_chain, guard};

pub mod budget;
pub mod card;
pub mod crawl;
pub mod harvest;
pub mod limits;
pub mod mcp;
pub mod packages;
pub mod popularity;
pub mod remote_log;
pub mod resource;
pub mod sse;
