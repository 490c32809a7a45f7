//! Every limit outbound HTTP runs under that is not one request's own choice, with the reason
//! for its value.
//!
//! The crawler re-exports these from `crawler::limits`, so every limit a crawl runs under is
//! named in one module there; the numbers are documented in `docs/crawler.md` ("Limits"), which
//! a test keeps in sync with this file. The timeouts and caps of the two POSTs are next to them
//! ([`crate::webhook`], [`crate::witness`]) and documented in `docs/operations.md`.

use std::time::Duration;

/// Time to establish a TCP connection (and TLS handshake): a healthy host answers within a
/// second; 10 s tolerates a slow network without letting dead hosts hold a worker.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest gap between two chunks of a body. A slowloris server dripping one byte at a time
/// is cut off after this much silence, and by the request's own timeout if it keeps dripping.
pub const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Highest ratio of decompressed to compressed bytes accepted once a body has decompressed
/// past [`RATIO_FLOOR`]. JSON tool sets compress 5–20× with gzip; a bomb reaches 1000×.
pub const MAX_COMPRESSION_RATIO: u64 = 100;

/// Bytes a body may decompress to before the ratio check applies (a tiny body can have a large
/// ratio honestly: 1 KiB of `{}` padding).
pub const RATIO_FLOOR: u64 = 1024 * 1024;

/// The most addresses one host name may resolve to; more is a sign of a broken or hostile DNS
/// answer and every one would have to be checked.
pub const MAX_ADDRESSES: usize = 32;
