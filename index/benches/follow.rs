//! A follower's catch-up and a new replica's join from an index snapshot (issue #27), on a
//! synthetic log (a bench binary, not criterion: one run of each step, timed).
//!
//! The log: `TOOLMARK_BENCH_TARGETS` remote targets (default 20,000, one server each, on
//! `TARGETS / 8` hosts) crawled once a day until the log holds `TOOLMARK_BENCH_ENTRIES` entries
//! (default 1,000,000), recorded by the real `Recorder` (a document per observation in the
//! blobs, the log, the writer's index): nine in ten observations `ok` with one of four real
//! corpus tool sets (a target's set changes every 50 days, so a fiftieth change a day), one in
//! ten a timeout. It is written once under `TOOLMARK_BENCH_DIR` (default: the system temp
//! directory) as `follow-<ENTRIES>/` (a data directory: `log/`, `blobs/`, `index.sqlite`) and
//! kept for the next run (delete it yourself).
//!
//! Then, each timed:
//! 1. catch-up: a fresh index follows the whole log from its public files (`Index::follow`: a
//!    `Reader` on the directory, the checkpoint verified, every entry hashed and proven, every
//!    document read and checked) — entries/s;
//! 2. publish: `snapshot::publish` of that index into an object store (`TOOLMARK_BENCH_OBJECTS`:
//!    `s3://BUCKET/PREFIX` with the `AWS_*` variables, default a directory beside the log);
//! 3. join: `snapshot::join` into a new file (every check), then `Index::follow` (nothing left);
//!    the snapshot is deleted afterwards.
//!
//! `cargo bench -p toolmark-index --bench follow`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, UNIX_EPOCH};

use toolmark_index::snapshot;
use toolmark_index::{Blobs, Index, Recorder, RunInput, RunStatus, TargetOutcome};
use toolmark_log::Log;
use toolmark_log::objects::{Objects, S3Options};
use toolmark_log::reader::Reader;
use toolmark_observation::observe::{Dialled, Observation, Status, Transport, Via};
use toolmark_observation::registry::{Record, TargetKind};

/// The allocator the `toolmark` binary ships with, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CORPUS: [&str; 4] = [
    "mcp-proxy-snapshots/server-filesystem.json",
    "mcp-proxy-snapshots/server-memory.json",
    "docker-mcp-registry/alfresco.tools.json",
    "mcp-proxy-snapshots/mcp-server-fetch.json",
];

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn page(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../toolset/tests/fixtures/corpus")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    if text.trim_start().starts_with('[') {
        format!("{{\"tools\":{text}}}")
    } else {
        text
    }
}

/// The registry: one server per target, each with one streamable-HTTP remote.
fn records(targets: u64) -> Vec<Record> {
    let items: Vec<serde_json::Value> = (0..targets)
        .map(|t| {
            serde_json::json!({
                "server": {
                    "name": format!("io.example.bench/s{t}"), "description": "bench",
                    "version": "1.0.0",
                    "remotes": [{"type": "streamable-http",
                        "url": format!("https://h{}.example.com/mcp/{t}", t % (targets / 8).max(1))}],
                },
                "_meta": {"io.modelcontextprotocol.registry/official": {
                    "status": "active", "isLatest": true,
                    "publishedAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z"
                }}
            })
        })
        .collect();
    // A registry page holds at most 1,000 items.
    items
        .chunks(1_000)
        .flat_map(|chunk| {
            let page = serde_json::json!({"servers": chunk, "metadata": {"count": chunk.len()}});
            toolmark_observation::registry::parse_page(page.to_string().as_bytes())
                .unwrap()
                .servers
        })
        .collect()
}

/// Target `t`'s observation on day `d`, started `secs` after the epoch.
fn observation(t: u64, d: u64, secs: u64, pages: &[String]) -> Observation {
    let remote = Via::Remote(Dialled {
        transport: Some(Transport::StreamableHttp),
        session: true,
        requests: 3,
        address: Some("203.0.113.7:443".parse().unwrap()),
        ..Dialled::default()
    });
    let started = UNIX_EPOCH + Duration::from_secs(secs);
    if (t + d) % 10 == 9 {
        return Observation {
            started,
            elapsed: Duration::from_secs(20),
            status: Status::Timeout,
            detail: "no answer within 20 s".into(),
            via: remote,
            ..Observation::remote()
        };
    }
    let set = &pages[((t + d / 50) % pages.len() as u64) as usize];
    Observation {
        started,
        elapsed: Duration::from_millis(100 + (t * 7 + d) % 900),
        status: Status::Ok,
        protocol_version: Some("2025-06-18".into()),
        initialize: Some(
            "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},\
             \"serverInfo\":{\"name\":\"bench\",\"version\":\"1\"}}"
                .into(),
        ),
        via: remote,
        pages: vec![set.clone()],
        ..Observation::remote()
    }
}

/// The log of `entries` entries under `dir` (written unless `dir/done` says it is complete).
fn generate(dir: &Path, entries: u64, targets: u64) {
    if dir.join("done").exists() {
        println!("log: reusing {}", dir.display());
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let started = Instant::now();
    let mut log = Log::init(&dir.join("log"), "bench.example/log").unwrap();
    let blobs = Blobs::open(&dir.join("blobs")).unwrap();
    let mut index = Index::open(&dir.join("index.sqlite")).unwrap();
    let records = records(targets);
    let pages: Vec<String> = CORPUS.iter().map(|c| page(c)).collect();
    let base = 1_767_225_600; // 2026-01-01
    let mut d = 0;
    while log.head().size < entries {
        let day = base + d * 86_400;
        let input = RunInput {
            started_at: toolmark_index::time::from_unix(day),
            registry: "https://registry.bench".into(),
            records: records.clone(),
            harvest_complete: true,
            delisted: Vec::new(),
            allow_cleartext: false,
        };
        let left = entries - log.head().size;
        let mut rec = Recorder::new(&mut log, &blobs, &mut index);
        let run = rec.begin_run(&input).unwrap();
        let outcomes: Vec<TargetOutcome> = records
            .iter()
            .flat_map(toolmark_observation::registry::targets)
            .filter(|t| matches!(t.kind, TargetKind::Remote { .. }))
            .take(usize::try_from(left).unwrap())
            .enumerate()
            .map(|(t, target)| TargetOutcome {
                target,
                observation: Some(observation(t as u64, d, day + t as u64 % 80_000, &pages)),
            })
            .collect();
        for batch in outcomes.chunks(5_000) {
            rec.record(run, batch.to_vec()).unwrap();
        }
        rec.finish_run(
            run,
            &toolmark_index::time::from_unix(day + 3_600),
            RunStatus::Complete,
            &serde_json::json!({}),
        )
        .unwrap();
        d += 1;
        eprintln!(
            "log: day {d}, {} entries, {:.0} s",
            log.head().size,
            started.elapsed().as_secs_f64()
        );
    }
    std::fs::write(dir.join("done"), b"").unwrap();
    println!(
        "log: {} entries written (recorder) in {:.1} s",
        log.head().size,
        started.elapsed().as_secs_f64()
    );
}

fn du(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn main() {
    let entries = env("TOOLMARK_BENCH_ENTRIES", 1_000_000);
    let targets = env("TOOLMARK_BENCH_TARGETS", 20_000);
    let base = std::env::var_os("TOOLMARK_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("follow-{entries}"));
    generate(&dir, entries, targets);

    let public = Objects::dir(&dir.join("log/public")).unwrap();
    let vkey = std::fs::read_to_string(dir.join("log/public/vkey")).unwrap();
    let reader = Reader::new(public, &vkey);
    let blobs = Blobs::open(&dir.join("blobs")).unwrap();
    let scratch = dir.join("scratch");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();

    // 1. Catch-up from nothing.
    let follower = scratch.join("follower.sqlite");
    let mut index = Index::open(&follower).unwrap();
    let started = Instant::now();
    let followed = index.follow(&reader, &blobs).unwrap();
    let secs = started.elapsed().as_secs_f64();
    println!(
        "catch-up: {} entries in {secs:.1} s, {:.0} entries/s (index {} MB)",
        followed.to,
        followed.to as f64 / secs,
        du(&follower) >> 20
    );

    // 2. Publish a snapshot.
    let objects = match std::env::var("TOOLMARK_BENCH_OBJECTS") {
        Ok(url) if url.starts_with("s3://") => Objects::s3(&url, &S3Options::from_env()).unwrap(),
        _ => Objects::dir(&scratch.join("objects")).unwrap(),
    };
    let started = Instant::now();
    let published = snapshot::publish(
        &index,
        &followed.checkpoint,
        &objects,
        &scratch.join("snapshot.tmp"),
    )
    .unwrap();
    let snapshot::Published::New(m) = published else {
        panic!("not published: {published:?}");
    };
    println!(
        "publish: {} bytes in {} parts to {} in {:.1} s",
        m.bytes,
        m.parts.len(),
        objects.label(),
        started.elapsed().as_secs_f64()
    );
    drop(index);

    // 3. A new replica joins from it, then follows (nothing left to follow).
    let joined = scratch.join("joined.sqlite");
    let started = Instant::now();
    let at = reader.checkpoint().unwrap();
    let m = snapshot::join(&objects, &reader, &at, &joined)
        .unwrap()
        .unwrap();
    let download = started.elapsed().as_secs_f64();
    let mut index = Index::open(&joined).unwrap();
    let f = index.follow(&reader, &blobs).unwrap();
    println!(
        "join: snapshot of {} entries checked and written in {download:.1} s; serving after {:.1} s (followed to {})",
        m.tree_size,
        started.elapsed().as_secs_f64(),
        f.to
    );
    drop(index);
    // What was published (a bucket's objects; a directory goes with the scratch).
    for part in &m.parts {
        let _ = objects.delete(&format!("{}/parts/{}", snapshot::SNAPSHOT_DIR, part.sha256));
    }
    let _ = objects.delete(&snapshot::manifest_path());
    let _ = std::fs::remove_dir_all(&scratch);
}
