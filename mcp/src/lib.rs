//! One MCP client session, whatever carries its messages.
//!
//! What it does:
//! - [`jsonrpc`]: the strict reader of JSON-RPC 2.0 messages on [`toolmark_toolset::json`]
//!   (results kept as their exact source text, repeated member names refused at any depth) and
//!   the builders of what a client sends.
//! - [`Transport`]: what a session needs from the wire — send one message, receive the messages
//!   that come back while an answer is awaited — with the transport's own outcomes (an HTTP
//!   status, an auth challenge, a timeout) passed through as its error type.
//! - [`Session`]: the session logic — `initialize` + `notifications/initialized`, or the
//!   2026-07-28 stateless `server/discover` — then every `tools/list` page under the named
//!   [`limits`] (page cap, repeated cursor, tool and byte caps), answers matched by id, and
//!   server→client requests answered (`ping`) or refused (anything else, -32601), at most
//!   [`limits::MAX_REPLIES`] of them. It keeps what it reads in a [`Listing`] as it reads it.
//! - [`Continuation`]: the one definition of a complete `tools/list`.
//! - [`surface`]: after a complete tool listing, in the same session, `prompts/list`,
//!   `resources/list` and `resources/templates/list` when the handshake declares them, and
//!   `resources/read` of the `ui://` pages the tools name, under [`SurfaceLimits`].
//!
//! What it never does: open a socket, spawn a process, read a clock or sleep (deadlines are the
//! caller's: drop the future), call a tool on its own (`Session::call_tool` is the sandbox's),
//! send anything but `initialize`, `notifications/initialized`, `server/discover`, `tools/list`,
//! the surface's lists and `ui://` reads, and replies to server requests,
//! or decide what a transport failure means (the crawler maps every [`Failure`] to its status).
//! The HTTP transports live in `toolmark-crawler`; a stdio transport will live with the
//! sandbox.

#![deny(missing_docs)]

pub mod jsonrpc;
pub mod limits;
pub mod session;
pub mod surface;
pub mod transport;

pub use session::{
    Answer, Continuation, Failure, Handshake, Identity, Limits, Listing, NotACursor,
    STATELESS_VERSION, Session, SessionError, SurfaceLimits,
};
pub use transport::{Delivery, Incoming, Transport};
