//! The only crate that spawns processes.
//!
//! What it does today:
//! - [`local`]: run a trusted MCP server (the demo's real `server-everything`) as a child
//!   process on a loopback port, wait until it listens, and kill it when dropped. It is not a
//!   sandbox: it is only for software this project installs itself.
//!
//! - [`runsc`]: one gVisor sandbox — an OCI bundle (read-only root of mount points, host `/usr`
//!   read-only, no capabilities, host cgroup limits) run by `runsc run --network=none` with the
//!   server's stdin and stdout as pipes; killed and deleted when dropped.
//! - [`stdio`]: MCP's stdio transport (newline-delimited JSON-RPC over a child's pipes) for the
//!   `toolmark_mcp` session core, under named limits.
//!
//! - [`trace`]: gVisor's syscall trace (`runsc --strace`) read into typed events and decoded
//!   calls (files opened, connections, programs started, processes spawned) under named limits;
//!   what cannot be read exactly is counted, never guessed.
//!
//! - [`behaviour`]: what a trace shows a run did — programs started, connections attempted,
//!   decoys opened, suspicious writes, each attributed to its process — and whether the trace
//!   let all of it be known (`complete`, with reasons).
//!
//! - [`canary`]: the run's canary searched for in what left the sandbox, as written or
//!   encoded (hex, base64, base32, URL, string escapes, split over DNS labels), bounded.
//! - [`home`]: the decoy HOME's persistence paths as a manifest taken on the host before and
//!   after each sandbox: a second witness of persistence beside the trace.
//!
//! - [`decoys`]: a per-run canary, the decoy HOME (every `behaviour::DECOY_PATHS` file and a
//!   `.env`) and decoy tokens for the environment, all carrying it.
//!
//! - [`prepare`]: a package's tree made on the host without running its code — an npm package's
//!   by npm with every script disabled, a wheel's by pip with wheels only — and the install-time
//!   code it holds (npm's scripts; `.pth` lines, `sitecustomize` and console scripts).
//! - [`arguments`]: canary arguments for one call of a tool, from its `inputSchema`.
//! - [`findings`]: the codes a package's behaviour earns, per phase.
//! - [`observe`]: one npm package or PyPI wheel observed end to end — install-time code traced
//!   in one sandbox, the server started, listed and each tool called once in another — into a
//!   report with status, tools, calls, behaviour per phase and findings.
//!
//! - [`traps`]: what the probe (`toolmark-probe`, the sandbox's pid 1: DNS sink and
//!   HTTP/HTTPS/SMTP/SMTPS and raw TCP traps) recorded, read into types.
//!
//! The package sweep (`toolmark-ingest`) and `toolmark package observe` call the observer.
//!
//! What it never does: talk to the log or the index, or decide what a tool set is.

#![deny(missing_docs)]
// The sandbox is the one crate that spawns processes (clippy.toml forbids it elsewhere).
#![allow(clippy::disallowed_methods)]

pub mod arguments;
pub mod behaviour;
pub mod canary;
pub mod decoys;
pub mod findings;
pub mod home;
pub mod local;
pub mod observe;
pub mod prepare;
pub mod runsc;
pub mod stdio;
pub mod trace;
pub mod traps;
