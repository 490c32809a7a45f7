//! The crawler (not built yet: issue #4).
//!
//! The only crate that will talk to untrusted hosts: harvesting the official MCP registry, the MCP
//! client for streamable HTTP, legacy HTTP+SSE and the stateless 2026-07-28 protocol, the SSRF
//! guard with DNS pinning, and the named limits that bound what a hostile server can cost. It will
//! produce observations for the log; it will not serve HTTP or sign anything.
//!
//! Today it contains no code.
