//! Every limit the crawler puts on what a remote host can cost, with the reason for its value.
//!
//! A hostile server controls every byte and every delay of its answers; each constant below caps
//! one dimension of that, and each cap ends an observation with a named status (see
//! [`crate::observe::Status`]) instead of a crash, a hang or unbounded memory. The numbers are
//! documented in `docs/crawler.md`, which a test keeps in sync with this file.

use std::time::Duration;

/// The limits of the MCP session itself (pages, tools, tool-set bytes, replies, protocol
/// version, detail excerpts) belong to the transport-independent session core in
/// `toolmark-mcp`; they are re-exported here so every limit the crawler runs under is named in
/// one module.
pub use toolmark_mcp::limits::{
    MAX_APP_PAGE_BYTES, MAX_APP_PAGES, MAX_DETAIL_EXCERPT, MAX_PAGES, MAX_PROTOCOL_VERSION,
    MAX_REPLIES, MAX_SURFACE_BYTES, MAX_SURFACE_ITEMS, MAX_SURFACE_PAGES, MAX_TOOLS,
    MAX_TOOLSET_BYTES,
};

/// The limits of every outbound request (connecting, resolving, reading a body) belong to
/// `toolmark-outbound`, the one place toolmark's own HTTP is made; re-exported here for the
/// same reason.
pub use toolmark_outbound::limits::{
    CONNECT_TIMEOUT, MAX_ADDRESSES, MAX_COMPRESSION_RATIO, RATIO_FLOOR, READ_IDLE_TIMEOUT,
};

/// Most bytes one HTTP response may decompress to. The largest real tool set in the corpus
/// (okta, 108 tools) is 0.10 MB; HISTOR allows 4 MiB. 8 MiB leaves room for servers with
/// hundreds of richly documented tools and still bounds one response.
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;

/// Deepest JSON nesting accepted in any response; the same as the tool-set parser's
/// (`toolmark_toolset::json`), which in turn matches serde_json's default recursion limit.
pub const MAX_JSON_DEPTH: usize = 128;

/// Longest SSE line. One `data:` line normally carries one whole JSON-RPC message, so this is
/// the response cap; longer lines end as `too-large`.
pub const MAX_SSE_LINE: usize = MAX_RESPONSE_BYTES;

/// Largest SSE event (all its `data:` lines joined): one message, so the response cap again.
pub const MAX_SSE_EVENT: usize = MAX_RESPONSE_BYTES;

/// Most SSE events read while waiting for one response. Servers may send notifications,
/// progress and server→client requests before the answer; a thousand is far beyond any real
/// exchange and stops a stream of empty or unrelated events.
pub const MAX_SSE_EVENTS: usize = 1_000;

/// Longest one HTTP request may take, headers and body. HISTOR uses 20 s; real servers answer
/// `tools/list` in well under a second.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// The `DELETE` that ends a session after the listing: answered within this or given up (best
/// effort: the observation's outcome does not depend on it). The official clients send one per
/// session; a stateful gateway otherwise keeps a whole server process per observation.
pub const SESSION_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// One deadline for a whole observation: every transport tried, every request and page.
/// HISTOR uses max(3 × 20 s, 60 s); we try up to three transports, so 90 s.
pub const OBSERVATION_DEADLINE: Duration = Duration::from_secs(90);

/// The surface after a complete listing (prompts, resources, templates, `ui://` pages; the
/// Server Card has [`CARD_TIMEOUT`] per location of its own): a server that answered `tools/list` answers these as quickly, and a
/// slow one costs the observation this much more at most. Never past the observation's own
/// deadline (less [`SESSION_CLOSE_TIMEOUT`]): what is not read by then is recorded as
/// unfinished (`timeout`), and the tools' outcome stands.
pub const SURFACE_DEADLINE: Duration = Duration::from_secs(30);

/// The second look after a complete listing ([`crate::mcp`], "Cloaking: the second look" in
/// `docs/crawler.md`): a separate session from another client identity listing the tools only,
/// three or four requests that a server which has just listed its tools answers in a second or
/// two. 20 s (one `REQUEST_TIMEOUT`) bounds what a slow or stalling second session adds to the
/// observation and to the time it holds its place in the per-host limit; never past the
/// observation's own deadline (less [`SESSION_CLOSE_TIMEOUT`]). A second look cut off is
/// recorded as `timeout`, and the first listing's outcome stands.
pub const SECOND_LOOK_DEADLINE: Duration = Duration::from_secs(20);

/// One Server Card request ([`crate::card`]), headers and body: a static JSON document.
pub const CARD_TIMEOUT: Duration = Duration::from_secs(5);

/// Most bytes of a Server Card read. The draft's examples are a few kilobytes; a card that
/// lists every tool in full is about the size of its tool set (the largest real one 0.10 MB).
pub const MAX_CARD_BYTES: usize = 256 * 1024;

/// Requests in flight to one host at a time. HISTOR uses 2; a registry remote is typically one
/// small service, and several registry servers share a host (212 on server.smithery.ai).
pub const PER_HOST_CONCURRENCY: usize = 2;

/// Observations that may wait, each holding a global slot, at one address that already has
/// [`PER_HOST_CONCURRENCY`] observations running. One waiting starts the moment a running one
/// ends (no DNS round trip); any more are set aside by the scheduler, holding no slot, until
/// the address has room. Without this cap many names on one shared address (a CDN's) fill
/// every global slot with waiters and the whole crawl runs two at a time.
pub const MAX_WAITING_PER_ADDRESS: usize = 2;

/// Days between two `server/discover` probes of a remote whose own hint (the transport that
/// answered it in an earlier crawl) is an older one: on one day in this many (which day depends
/// on its URL, so the probes spread over the days) it is probed afresh, so a server that gained
/// 2026-07-28 is recorded with it within a week of daily crawls, at the cost of one request in
/// seven crawls.
pub const REPROBE_DAYS: u64 = 7;

/// Days between two reads of a remote's surface beyond `tools/list` and its Server Card, once
/// one crawl has read them (`crawl.surface_days`): each read costs an observation 4–6 more
/// round trips inside its host's place, which on every crawl took a daily run to 1.9–2.3× the
/// tools-only run (docs/benchmarks.md); one day in seven, rotating by URL, costs a seventh of
/// that. A surface that changes is seen within a week; a new remote's at once.
pub const SURFACE_DAYS: u64 = 7;

/// Days between two second looks (cloaking) at a remote, once it has been observed
/// (`crawl.second_look_days`): a second look is a whole second session (4 requests), as dear
/// as the surface; a server that cloaks keeps doing it, so a weekly look finds it.
pub const SECOND_LOOK_DAYS: u64 = 7;

/// Observations in flight at once across all hosts. Each costs a few kilobytes of state plus
/// its buffered responses; 256 keeps a 20,000-target crawl within memory goals while keeping
/// far more hosts busy than HISTOR's 12 workers.
pub const MAX_CONCURRENT_OBSERVATIONS: usize = 256;

/// Longest `Mcp-Session-Id` accepted. The spec requires visible ASCII and sets no length;
/// HISTOR accepts 256. Real ids are UUIDs (36) or hex (64); a longer one ends as `protocol`.
pub const MAX_SESSION_ID: usize = 256;

/// Longest `WWW-Authenticate` challenge kept, and longest `Location` kept in a `redirect`
/// detail: a few kilobytes tell everything a reader needs.
pub const MAX_HEADER_KEPT: usize = 4 * 1024;

/// Bytes all observations in flight may hold at once (pages, bodies being read, parse trees),
/// across the whole crawl: see [`crate::budget`]. A cap-sized set (two 7.7 MiB pages) is
/// charged about 47 MiB, so 192 MiB runs four such observations at once while thousands of
/// ordinary ones (charged well under [`OBSERVATION_GRANT`]) run beside them, and keeps the
/// crawler near 300 MiB however many hosts serve cap-sized sets.
pub const MEMORY_BUDGET: usize = 192 * 1024 * 1024;

/// What each observation is granted from [`MEMORY_BUDGET`] when it starts. The largest real
/// tool set (0.10 MB) is charged under 0.5 MiB, so 512 KiB covers every real server without
/// asking again (a larger one grows its grant without waiting while the budget has room), and
/// [`MAX_CONCURRENT_OBSERVATIONS`] × 512 KiB = 128 MiB leaves a third of the budget for the
/// few large ones: the global slots, not the budget, bound an ordinary crawl's concurrency.
pub const OBSERVATION_GRANT: usize = 512 * 1024;

/// The whole of the one unauthenticated `GET` of an `auth-required` remote's protected-resource
/// metadata (RFC 9728), from resolving its host to its last byte ([`crate::resource`]). It runs
/// after the listing, inside the observation's deadline.
pub const RESOURCE_METADATA_TIMEOUT: Duration = Duration::from_secs(5);

/// Most bytes of protected-resource metadata read (after decompression). Real documents are a
/// few hundred bytes; 64 KiB leaves room for long scope lists and stays small next to
/// [`OBSERVATION_GRANT`], so it is not charged to the memory budget.
pub const MAX_RESOURCE_METADATA_BYTES: usize = 64 * 1024;

/// Most entries kept of each list of the protected-resource metadata (`authorization_servers`,
/// `scopes_supported`, `bearer_methods_supported`); what is beyond, and any entry longer than
/// [`crate::registry::MAX_URL_LEN`] (an identity is dropped, never cut), is not kept, and
/// `resource` is kept only within that length too. A real server lists one or two
/// authorization servers.
pub const MAX_RESOURCE_METADATA_ENTRIES: usize = 32;

/// Largest package metadata read (an npm packument, a PyPI project JSON;
/// [`crate::packages`]). The mirror reachable here trims packuments (9.6 KB
/// for server-memory's 8 versions); the public registry's full packuments of busy packages run
/// to a few megabytes.
pub const MAX_PACKUMENT_BYTES: usize = 32 * 1024 * 1024;

/// Largest package artifact (npm tarball or wheel) downloaded ([`crate::packages`]). The real MCP servers' are well
/// under 1 MB (server-everything 2026.8.31: 57 KB); 64 MiB leaves room for bundled binaries.
pub const MAX_ARTIFACT_BYTES: usize = 64 * 1024 * 1024;

/// Longest one package-registry request may take, headers and body ([`crate::packages`]).
pub const PACKAGE_FETCH_TIMEOUT: Duration = Duration::from_secs(60);
