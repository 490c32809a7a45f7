//! Shared by the log's benchmarks: the realistic entries they append (`entries.rs`: every one
//! a distinct observation) and a bulk load.

use toolmark_log::Log;

#[path = "entries.rs"]
mod entries;
pub use entries::entry;

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
