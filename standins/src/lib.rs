//! Loopback stand-ins of the outside services toolmark talks to, for tests, `toolmark demo`
//! (serving bundled data offline) and benchmarks.
//!
//! What it does:
//! - [`registry`]: a stand-in of the official MCP registry's list endpoint
//!   (`GET /v0.1/servers`, and `/v0/servers`) that re-pages any array of `ServerResponse`
//!   items (for example a mirrored snapshot read with [`registry::load_snapshot`]) with the real
//!   registry's query parameters and cursor format, can swap or mutate its data at run time, can
//!   inject faults (rate limiting, 429/503 answers, repeated or endless cursors, latency,
//!   garbage), and records every request it answered.
//! - [`fleet`]: a fleet of stand-in MCP servers (session-era streamable HTTP) on distinct loopback
//!   addresses, each endpoint answering every request after its own seeded latency, with the
//!   registry items that list it and the schedule bound a crawler is measured against
//!   (`standin-fleet` runs one with a registry stand-in, for `bench/crawl.sh`); or, for
//!   `toolmark demo`, one https stand-in per real host name ([`fleet::Fleet::start_sites`]).
//!   Any endpoint can also serve a surface beyond its tools ([`fleet::surface`]: prompts,
//!   resources, MCP Apps pages, a Server Card, cache hints, deprecation headers, cloaking, and
//!   hostile variants of each), for what no real server shows.
//! - [`packages`]: a stand-in of the npm registry and of a PyPI simple index serving real
//!   package files of this machine (the demo's package sweep fetches from it, through the
//!   crawler as from the real registries).
//! - [`tls`]: the throwaway certificate authority and TLS listener those https stand-ins use.
//! - `services` (feature `services`, tests only): not a stand-in but the client side of the
//!   real PostgreSQL and S3 bucket the tests share (scripts/postgres, scripts/seaweedfs), one
//!   isolated database or key prefix per test.
//!
//! What it does not do: it binds loopback addresses only (`127.0.0.1`, and `127.1.x.y` for the
//! fleet) and is never reachable from another host; it is not part of the production service
//! and makes no attempt at the real registry's performance, authentication, publishing or admin
//! endpoints; it never makes outgoing requests (`services` connects only to the test services
//! its variables name, which the scripts start on loopback).

#![deny(missing_docs)]

pub mod fleet;
pub mod packages;
pub mod registry;
#[cfg(feature = "services")]
pub mod services;
mod serving;
pub mod tls;
