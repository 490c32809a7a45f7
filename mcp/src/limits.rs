//! The limits of one MCP session, with the reason for each value.
//!
//! A hostile server controls every message it sends; each constant caps one dimension of a
//! listing, and each cap ends the session with a named [`crate::Failure`] instead of unbounded
//! work or memory. [`crate::Limits::default`] takes every configurable one from here. The
//! crawler re-exports them from `toolmark_crawler::limits`, and `docs/crawler.md` lists them
//! with the crawler's own limits (a test keeps the two in sync).

/// Most bytes all `tools/list` pages of one session may add up to. HISTOR stops at 3 MiB;
/// 16 MiB is four times the largest plausible set and twice one HTTP response
/// (`toolmark_crawler::limits::MAX_RESPONSE_BYTES`).
pub const MAX_TOOLSET_BYTES: usize = 16 * 1024 * 1024;

/// Most tools in one session. The spec sets no limit; HISTOR stops at 5,000; the largest
/// real server seen lists 108. A set that reaches the cap ends as `too-large`.
pub const MAX_TOOLS: usize = 5_000;

/// Most `tools/list` pages followed. Real servers send one page; a server that keeps handing
/// out fresh cursors ends as `partial` here.
pub const MAX_PAGES: usize = 50;

/// Most replies one session sends to server→client requests (`ping`, or -32601 for
/// anything else). A real server pings once in a while; a JSON-RPC batch of 20,000 `ping`s in
/// one SSE event must not become 20,000 POSTs. Requests past the cap go unanswered and the
/// session goes on waiting for its own answer.
pub const MAX_REPLIES: usize = 32;

/// Longest `protocolVersion` accepted from a server (dates are 10 characters; HISTOR: 40).
pub const MAX_PROTOCOL_VERSION: usize = 40;

/// Longest excerpt of an unusable body (an HTML error page, a JSON-RPC error) kept in a detail.
pub const MAX_DETAIL_EXCERPT: usize = 300;

/// Most pages of one surface list (`prompts/list`, `resources/list`,
/// `resources/templates/list`) followed. Lists past it end as `partial`: a server listing every
/// file it can reach as a resource is not a surface a model reads whole.
pub const MAX_SURFACE_PAGES: usize = 20;

/// Most entries of one surface list. Real servers list a handful of prompts and resources
/// (server-everything: 3 prompts, 10 resources a page); a list past it ends as `too-large`.
pub const MAX_SURFACE_ITEMS: usize = 2_000;

/// Most bytes of one surface list's pages, and of all `ui://` reads together: a quarter of
/// [`MAX_TOOLSET_BYTES`], since the surface adds to the tool set in the observation's memory.
pub const MAX_SURFACE_BYTES: usize = 4 * 1024 * 1024;

/// Most `ui://` resources read (`resources/read`) of those the tools name: an MCP Apps server
/// names one page per tool that has a UI; more are named than read, and the rest are recorded
/// as `skipped`.
pub const MAX_APP_PAGES: usize = 32;

/// Most bytes of one `resources/read` result kept. An app page is one HTML document (the
/// official examples' bundled pages are ~0.3–0.5 MiB); a larger result ends as `too-large`
/// and its text is not kept.
pub const MAX_APP_PAGE_BYTES: usize = 1024 * 1024;
