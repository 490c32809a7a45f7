//! Re-scanning the demo's current tool sets when the rule set changes (issue #28's goal: the
//! whole demo's current sets in at most 2 s).
//!
//! The world: as many remotes as `toolmark demo` observes `ok` on its first day (348), each
//! serving one of the demo's seven real tool sets (`toolset/tests/fixtures/corpus/`: filesystem,
//! memory, fetch, puppeteer, cloudflare-docs, alfresco, okta's 108 tools), with server
//! instructions, recorded through the real recorder (log, blobs, index). Each iteration marks
//! every row as made by another rule set and runs `Index::rescan` over all of them: every
//! stored document read from the blobs and hashed, decoded, its tool set checked against its
//! digest, scanned by the rule set, its legs judged and the row written, in one transaction.
//!
//! `cargo bench -p toolmark-index --bench rescan`.

/// The allocator the `toolmark` binary ships with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use support::{Env, corpus_page, day, day_str, ok, records};
use toolmark_index::Index;

/// Remotes the demo observes `ok` on its first day.
const TARGETS: usize = 348;

const SETS: [&str; 7] = [
    "mcp-proxy-snapshots/server-filesystem.json",
    "mcp-proxy-snapshots/server-memory.json",
    "mcp-proxy-snapshots/mcp-server-fetch.json",
    "mcp-proxy-snapshots/server-puppeteer.json",
    "mcp-proxy-snapshots/cloudflare-docs.json",
    "docker-mcp-registry/alfresco.tools.json",
    "docker-mcp-registry/okta-mcp-server.tools.json",
];

fn world() -> Env {
    let mut env = Env::new("bench-rescan");
    let servers: Vec<serde_json::Value> = (0..TARGETS)
        .map(|i| {
            json!({"name": format!("io.example/s{i}"), "version": "1.0.0",
                   "remotes": [{"type": "streamable-http",
                                "url": format!("https://h{i}.example.com/mcp")}]})
        })
        .collect();
    let recs = records(json!(servers));
    let pages: Vec<String> = SETS.iter().map(|s| corpus_page(s)).collect();
    env.run(&day_str(0, 0), &recs, &[], |url| {
        let i: usize = url
            .trim_start_matches("https://h")
            .split('.')
            .next()?
            .parse()
            .ok()?;
        let mut obs = ok(day(0, 60), vec![pages[i % SETS.len()].clone()]);
        obs.initialize = Some(
            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "t", "version": "1"},
                   "instructions": "Use these tools to work with the service's documents; \
                                    ask the user before deleting anything."})
            .to_string(),
        );
        Some(obs)
    });
    env
}

fn rescan(c: &mut Criterion) {
    let mut env = world();
    let path = env.dir.join("index.sqlite");
    assert_eq!(env.index.scan_totals().unwrap().scanned, TARGETS as u64);
    let mut group = c.benchmark_group("rescan");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    group.bench_function("demo-348-targets", |b| {
        b.iter_batched(
            || {
                let db = rusqlite::Connection::open(&path).unwrap();
                db.execute_batch(
                    "UPDATE target_scans SET rules_digest = 'sha256-old';
                     DELETE FROM meta WHERE key = 'scan_rules';",
                )
                .unwrap();
            },
            |()| {
                let done = env.index.rescan(&env.blobs, usize::MAX).unwrap();
                assert_eq!((done.scanned, done.remaining), (TARGETS as u64, 0));
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
    drop(Index::open(&path).unwrap());
}

criterion_group!(benches, rescan);
criterion_main!(benches);
