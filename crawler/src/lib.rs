//! The crawler: the only part of toolmark that talks to untrusted hosts.
//!
//! What it does:
//! - [`registry`]: parse pages of the official MCP registry's `/v0.1/servers` list into bounded
//!   records, keep one record per server name, and turn each into crawl targets (every remote,
//!   every package) with a reason when a target must not be dialled.
//! - [`harvest`]: page through a registry politely (rate limit, `Retry-After` back-off, page cap,
//!   repeated-cursor abort), full or as an `updated_since` delta.
//! - [`guard`]: the SSRF guard — resolve a host once, require every address to be global, pin
//!   the connection to the checked address.
//! - [`mcp`]: a read-only MCP client (2026-07-28 stateless, streamable HTTP, legacy HTTP+SSE)
//!   that keeps every response's raw JSON: the HTTP transports of the session core in
//!   `toolmark_mcp` (which owns the handshake, `tools/list` paging, answer matching and the
//!   JSON-RPC reader); [`sse`] is the event-stream parser they read with.
//! - [`resource`]: one bounded, unauthenticated `GET` of an `auth-required` remote's
//!   protected-resource metadata (RFC 9728), through the same guard.
//! - [`crawl`]: observe many targets at once with per-host and per-address politeness and one
//!   deadline each, under one memory [`budget`] shared by every observation in flight.
//!
//! - [`webhook`]: one `POST` of a signed security event to a subscriber, through the same guard
//!   (no redirect followed, a timeout, the response body capped).
//! - [`witness`]: one C2SP `tlog-witness` `add-checkpoint` submission to a witness, through the
//!   same guard and rules.
//!
//! Every limit is a named constant in [`limits`]; every outcome is an [`observe::Status`].
//!
//! What it does not do: it never calls a tool, never sends credentials, never follows a
//! redirect, never writes the log or the index (callers do, from the [`observe::Observation`]s
//! it returns), and it serves no HTTP.

#![deny(missing_docs)]
// The crawler is the one crate that builds HTTP clients (clippy.toml forbids it elsewhere).
#![allow(clippy::disallowed_methods)]

// The observation model and the registry parser live in the network-free
// `toolmark-observation` crate; re-exported so the crawler's paths stay short.
pub use toolmark_observation::{observe, registry};

pub mod body;
pub mod budget;
pub mod crawl;
pub mod guard;
pub mod harvest;
pub mod limits;
pub mod mcp;
pub mod packages;
pub mod popularity;
pub mod remote_log;
pub mod resource;
pub mod sse;
pub mod webhook;
pub mod witness;

/// An error and its sources on one line (`a: b: c`), for details.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
