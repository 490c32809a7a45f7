//! The crawler (issue #4), partly built.
//!
//! Today it holds [`registry`]: parsing pages of the official MCP registry's `/v0.1/servers`
//! list (and bare-array snapshots of it) into bounded records, choosing one record per server
//! name, and turning a record into crawl targets with a reason when a target must be skipped.
//!
//! Not built yet: the HTTP client (registry harvest and the MCP client for streamable HTTP and
//! legacy HTTP+SSE), the SSRF guard with DNS pinning, and the harvest loop. This crate does no
//! network I/O today; it will not serve HTTP or sign anything.

#![deny(missing_docs)]

pub mod registry;
