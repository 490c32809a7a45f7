//! Log benchmark (a bench binary, not criterion: it reports throughput and latency percentiles).
//!
//! Entries are distinct observations (`support/entries.rs`), so the writer's dedup drops none.
//!
//! * batched appends per second, tiles, bundles, signed checkpoint and fsyncs included, in
//!   batches of `MAX_BATCH` (100,000) entries, until the log holds `TOOLMARK_BENCH_ENTRIES`
//!   (default 10,000,000);
//! * the time of one 20,000-entry batch (a day's crawl) on top of that;
//! * inclusion-proof latency at that size: 20,000 proofs of random indices, p50/p99/max.
//!
//! `cargo bench -p toolmark-log --bench append`; the log is written under
//! `TOOLMARK_BENCH_DIR` (default: the system temp directory) and removed afterwards.

use std::time::Instant;

/// The allocator the `toolmark` binary ships with, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use toolmark_log::Log;

mod support;
use support::{append_all, entry};

fn main() {
    let total: u64 = std::env::var("TOOLMARK_BENCH_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let base = std::env::var_os("TOOLMARK_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("toolmark-bench-{}", std::process::id()));
    let mut log = Log::init(&dir, "bench.example/log").expect("init");
    let batch = toolmark_log::sequencer::MAX_BATCH as u64;

    let started = Instant::now();
    append_all(&mut log, total);
    let secs = started.elapsed().as_secs_f64();
    println!(
        "append: {total} entries in batches of {batch}: {secs:.1} s, {:.0} entries/s",
        total as f64 / secs
    );

    let t = Instant::now();
    log.append((total..total + 20_000).map(entry).collect())
        .expect("daily batch");
    println!(
        "daily batch: 20000 entries on top of {total}: {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    let size = log.head().size;
    let mut rng = 0x1234_5678_9abc_def0_u64;
    let mut lat = Vec::with_capacity(20_000);
    for _ in 0..20_000 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let i = rng % size;
        let t = Instant::now();
        let p = log.inclusion_proof(i, size).expect("proof");
        lat.push(t.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(p);
    }
    lat.sort_by(f64::total_cmp);
    let pct = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize];
    println!(
        "inclusion proof at size {size}: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs ({} proofs)",
        pct(0.5),
        pct(0.99),
        lat[lat.len() - 1],
        lat.len()
    );
    drop(log);
    std::fs::remove_dir_all(&dir).ok();
}
