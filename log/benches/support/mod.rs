//! Shared by the log's benchmarks: the realistic entries they append.

use toolmark_log::Log;
use toolmark_log::entry::{Entry, MtlResult, Status, Subject};

/// Entry `i` of a benchmark log: an `ok` observation (~390 bytes encoded) of one of 20,000
/// subjects, with three digests and a tool count, as a daily crawl records them.
pub fn entry(i: u64) -> Entry {
    Entry {
        subject: Subject {
            server: format!("io.github.example-{}/server", i % 20_000),
            target: format!("https://mcp{}.example.com/mcp", i % 20_000),
            package: None,
        },
        observed_at: "2026-11-30T14:00:00Z".into(),
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
        raw: Some(
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
                .parse()
                .unwrap(),
        ),
        prev: None,
    }
}

/// Appends entries `0..total` to `log` in batches of `MAX_BATCH`, as a bulk load would.
pub fn append_all(log: &mut Log, total: u64) {
    let batch = toolmark_log::sequencer::MAX_BATCH as u64;
    let mut appended = 0;
    while appended < total {
        let n = batch.min(total - appended);
        log.append((appended..appended + n).map(entry).collect())
            .expect("append");
        appended += n;
    }
}
