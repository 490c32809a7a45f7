//! Prints what building the look-alike index over the bundled snapshot costs (time, the
//! one-edit index's bytes, the process's peak resident memory) and how long a check takes:
//! the figures quoted in names/data/SOURCES. `cargo run --release -p toolmark-names --example
//! index_figures`.
use std::time::Instant;

use toolmark_names::packages::{LookalikeIndex, PackageKey};
use toolmark_names::servers::ServerNames;
use toolmark_names::snapshot::Snapshot;

fn peak_rss_kib() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_owned())
        })
        .unwrap_or_else(|| "?".into())
}

fn main() {
    println!("peak RSS before: {}", peak_rss_kib());
    let t = Instant::now();
    let snapshot = Snapshot::parse(toolmark_names::BUNDLED_SNAPSHOT).unwrap();
    let parsed = t.elapsed();
    let t = Instant::now();
    let index = LookalikeIndex::new(&snapshot);
    let built = t.elapsed();
    println!(
        "{} packages: parsed in {parsed:?}, indexed in {built:?}, one-edit indexes {} bytes, peak RSS {}",
        index.len(),
        index.edit_index_bytes(),
        peak_rss_kib()
    );
    let keys: Vec<PackageKey> = snapshot
        .counts
        .keys()
        .map(|k| PackageKey::parse(k).unwrap())
        .collect();
    let t = Instant::now();
    let hits: Vec<_> = keys
        .iter()
        .filter_map(|k| Some((k.key(), index.check(k)?)))
        .collect();
    let found = hits.len();
    println!(
        "checked every listed package in {:?} ({:?} each): {found} look-alikes",
        t.elapsed(),
        t.elapsed() / keys.len() as u32
    );
    if std::env::args().any(|a| a == "--list") {
        for (key, l) in &hits {
            println!(
                "{key} -> {} ({}; {} vs {:?})",
                l.of,
                l.how,
                l.weekly.as_ref().unwrap().count,
                l.own_weekly
            );
        }
    }
    // Server names of registry length, as many as the official registry lists and more.
    let names: Vec<String> = (0..50_000)
        .map(|i| format!("io.github.owner{i}/mcp-server-{}", i * 7919 % 100_003))
        .collect();
    let t = Instant::now();
    let servers = ServerNames::new(names.iter().map(String::as_str));
    println!(
        "50,000 server names indexed in {:?}, one-edit index {} bytes, peak RSS {}",
        t.elapsed(),
        servers.edit_index_bytes(),
        peak_rss_kib()
    );
}
