//! The entries the log benchmarks append: realistic observation records (~390 bytes: subject,
//! time, status, three digests, tool count), 20,000 subjects crawled once a day.
//!
//! Every `entry(i)` is a distinct observation: the writer drops an entry already logged (its
//! dedup key ignores `prev`), so entries repeating after 20,000 would measure dedup, not appends.
//! Entry `i` is subject `i % 20,000` on crawl day `i / 20,000`, observed `i % 20,000` seconds
//! into that day.

use toolmark_log::entry::{Entry, MtlResult, Status, Subject};

/// The `i`-th benchmark entry.
pub fn entry(i: u64) -> Entry {
    Entry {
        subject: Subject {
            server: format!("io.github.example-{}/server", i % 20_000),
            target: format!("https://mcp{}.example.com/mcp", i % 20_000),
            package: None,
        },
        observed_at: observed_at(i),
        status: Status::ok(),
        detail: None,
        mtl1: Some(MtlResult::Digest(
            "sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c="
                .parse()
                .unwrap(),
        )),
        full: Some(
            "sha256-9+Gp1Oq15KPBAAGmFucoVwSQ/PUzwLt1CRxesSUvX5c="
                .parse()
                .unwrap(),
        ),
        tools: Some(i % 40),
        tool_index: None,
        surface: None,
        second: None,
        raw: Some(
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
                .parse()
                .unwrap(),
        ),
        prev: None,
    }
}

/// A valid RFC 3339 UTC time, distinct for every `i` (28-day months keep every date valid;
/// the calendar does not matter to the log).
fn observed_at(i: u64) -> String {
    let day = i / 20_000;
    let secs = i % 20_000;
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        2026 + day / (12 * 28),
        day / 28 % 12 + 1,
        day % 28 + 1,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}
