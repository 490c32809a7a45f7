//! The log's stores failing for real under a writer: the shared SeaweedFS paused briefly (a
//! stalled bucket) and past the request timeout (a dead one), and the shared PostgreSQL stopped
//! (`pg_ctlcluster … stop -m immediate`),
//! each while batches are being appended. Every append either succeeds or fails with an error
//! (no hang past the documented timeouts); after the service is back, reopening recovers, every
//! acknowledged entry is in the log exactly once, and the log verifies.
//!
//! It stops and restarts the shared test services (`scripts/postgres`, `scripts/seaweedfs`), so
//! it is one test in a binary of its own (cargo runs test binaries one after another).
#![allow(clippy::disallowed_methods)] // kill, pg_ctlcluster and the services' scripts

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use toolmark_log::entry::{Entry, Status, Subject};
use toolmark_log::head::postgres::PgHead;
use toolmark_log::note::LogKey;
use toolmark_log::objects::{Objects, S3Options};
use toolmark_log::store::LogStores;
use toolmark_log::{Log, verify};

/// What an outage does to the services, then undoes.
type Outage = Box<dyn Fn()>;

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn entry(n: usize) -> Entry {
    Entry {
        subject: Subject {
            server: format!("io.example/s{}", n % 11),
            target: format!("https://s{}.example.com/mcp", n % 11),
            package: None,
        },
        observed_at: "2026-12-06T12:00:00Z".into(),
        status: Status::ok(),
        detail: Some(format!("n{n}")),
        mtl1: None,
        full: None,
        tools: Some(n as u64),
        tool_index: None,
        surface: None,
        second: None,
        raw: None,
        prev: None,
    }
}

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn weed_pid() -> String {
    std::fs::read_to_string(repository().join("target/seaweedfs/weed.pid"))
        .expect("scripts/seaweedfs's pid file")
        .trim()
        .to_owned()
}

/// Appends batches of 8 from a thread until `stop`; reopens the log after every failure.
/// Returns what was acknowledged (detail → index) and how many appends failed.
fn appender(
    open: impl Fn() -> Result<Log, toolmark_log::LogError> + Send + 'static,
    first: usize,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(HashMap<String, u64>, usize)> {
    std::thread::spawn(move || {
        let mut acked = HashMap::new();
        let mut failures = 0;
        let mut log = None;
        let mut n = first;
        while !stop.load(Ordering::Relaxed) {
            if log.is_none() {
                match open() {
                    Ok(l) => log = Some(l),
                    Err(e) => {
                        eprintln!("open failed: {e}");
                        failures += 1;
                        std::thread::sleep(Duration::from_millis(200));
                        continue;
                    }
                }
            }
            let batch: Vec<Entry> = (n..n + 8).map(entry).collect();
            let started = Instant::now();
            match log.as_mut().unwrap().append(batch) {
                Ok(a) => {
                    for (i, idx) in a.indices.iter().enumerate() {
                        acked.insert(format!("n{}", n + i), *idx);
                    }
                    n += 8;
                }
                Err(e) => {
                    failures += 1;
                    eprintln!("append failed after {:?}: {e}", started.elapsed());
                    log = None;
                    // The same batch again: what was committed is not logged twice.
                }
            }
            // Never longer than the bucket's retry bound plus a statement's.
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "an append hung"
            );
        }
        (acked, failures)
    })
}

#[test]
fn the_writer_survives_a_stalled_or_dead_bucket_and_a_stopped_database() {
    let (Some(db), Some(bucket)) = (
        toolmark_standins::services::postgres().unwrap(),
        toolmark_standins::services::s3().unwrap(),
    ) else {
        return;
    };
    let url = db.url().to_owned();
    let objects = format!("s3://{}/{}", bucket.bucket, bucket.prefix);
    let opts = S3Options::at(
        &bucket.endpoint,
        &bucket.access_key_id,
        &bucket.secret_access_key,
    );
    let seed = [9u8; 32];
    let stores = {
        let (url, objects, opts) = (url.clone(), objects.clone(), opts.clone());
        move || -> Result<LogStores, toolmark_log::store::StoreError> {
            Ok(LogStores {
                head: Box::new(PgHead::connect(&url)?),
                objects: Objects::s3(&objects, &opts)?.sub("log"),
            })
        }
    };
    let clock = || -> toolmark_log::sequencer::Clock {
        Box::new(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
        })
    };
    Log::create(
        stores().unwrap(),
        LogKey::from_seed("outage.example/log", &seed).unwrap(),
        clock(),
    )
    .unwrap();
    let open = {
        let stores = stores.clone();
        move || {
            Log::open_with(
                stores()?,
                LogKey::from_seed("outage.example/log", &seed).unwrap(),
                clock(),
            )
        }
    };

    let mut all: HashMap<String, u64> = HashMap::new();
    let mut failures = 0;
    let phases: [(&str, Outage); 3] = [
        (
            "bucket stalled 6 s",
            Box::new(|| {
                let pid = weed_pid();
                sh(Command::new("kill").args(["-STOP", &pid]));
                std::thread::sleep(Duration::from_secs(6));
                sh(Command::new("kill").args(["-CONT", &pid]));
            }),
        ),
        (
            "database stopped",
            Box::new(|| {
                sh(Command::new("pg_ctlcluster").args([
                    "15",
                    "toolmark_test",
                    "stop",
                    "-m",
                    "immediate",
                ]));
                std::thread::sleep(Duration::from_secs(3));
                sh(&mut Command::new(repository().join("scripts/postgres")));
            }),
        ),
        (
            "bucket dead past the request timeout",
            Box::new(|| {
                // Frozen for longer than `S3_REQUEST_TIMEOUT`: every request in flight fails
                // (a stopped or killed `weed mini` cannot stand in for a dead bucket: its
                // default filer store loses writes it acknowledged, which no object store may
                // do, and the log then refuses to open over the missing tiles).
                let pid = weed_pid();
                sh(Command::new("kill").args(["-STOP", &pid]));
                std::thread::sleep(
                    toolmark_log::objects::S3_REQUEST_TIMEOUT + Duration::from_secs(5),
                );
                sh(Command::new("kill").args(["-CONT", &pid]));
            }),
        ),
    ];
    let mut first = 0;
    for (name, outage) in phases.iter() {
        let stop = Arc::new(AtomicBool::new(false));
        let writer = appender(open.clone(), first, stop.clone());
        std::thread::sleep(Duration::from_secs(2));
        outage();
        std::thread::sleep(Duration::from_secs(4));
        stop.store(true, Ordering::Relaxed);
        let (acked, failed) = writer.join().expect("the writer thread");
        eprintln!(
            "{name}: {} acknowledged, {failed} failed appends",
            acked.len()
        );
        assert!(!acked.is_empty(), "{name}: nothing was appended");
        failures += failed;
        first += 1_000_000;
        all.extend(acked);
    }
    assert!(failures > 0, "no outage was felt");
    // Reopening recovers; every acknowledged entry is there once, where it was acknowledged.
    let log = open().unwrap();
    let size = log.head().size;
    let mut seen: HashMap<String, u64> = HashMap::new();
    for i in 0..size {
        let e = Entry::decode(&log.entry(i).unwrap()).unwrap();
        let d = e.detail.unwrap();
        assert!(seen.insert(d.clone(), i).is_none(), "{d} logged twice");
    }
    for (d, i) in &all {
        assert_eq!(seen.get(d), Some(i), "{d} acknowledged at {i}");
    }
    let public = Objects::s3(&objects, &opts).unwrap().sub("log/public");
    let report = verify::fsck(&public, &log.vkey()).unwrap();
    assert_eq!(report.entries, size);
}
