//! Streaming fsck benchmark (issue #26: "fsck at 10M entries: peak RSS ≤ 128 MB and ≥ 250,000
//! entries/s from files"). A bench binary, not criterion: one long run, throughput and memory.
//!
//! The log is `TOOLMARK_BENCH_LOG` if that directory already holds one; otherwise it is built
//! there (or, without the variable, under `TOOLMARK_BENCH_DIR`, default the temp directory, and
//! removed afterwards) with `TOOLMARK_BENCH_ENTRIES` (default 10,000,000) of append.rs's
//! entries, appended in batches of `MAX_BATCH` (~90 s at 10M). Then `verify::fsck` reads it
//! through a `DirSource` and the bench prints entries/s, wall and CPU time and the peak RSS
//! (`VmHWM` of /proc/self/status).
//!
//! The peak RSS is the fsck's own only in a process that did not build the log: run the bench
//! once with `TOOLMARK_BENCH_LOG=DIR` to build, then again with the same `DIR` to measure (the
//! line says which it is). `TOOLMARK_BENCH_SERIAL=1` reads the files on the verifier's thread
//! instead of through the prefetching workers; `TOOLMARK_BENCH_LATENCY_MS=N` makes every read
//! wait N ms first, as a remote store's round trip would (what the prefetching is for).
//!
//! `TOOLMARK_BENCH_S3=1` (with the test bucket's variables, scripts/seaweedfs) copies the log's
//! public files to a fresh prefix of the test bucket first, then verifies them from there
//! (`Objects`, as `toolmark log verify s3://…` does) instead of from the directory; the copy
//! is timed apart and not counted, and deleted afterwards.
//!
//! `TOOLMARK_BENCH_LOG=/var/tmp/fsck-log cargo bench -p toolmark-log --bench fsck` (twice).

use std::path::{Path, PathBuf};
use std::time::Instant;

/// The allocator the `toolmark` binary ships with, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use toolmark_log::Log;
use toolmark_log::objects::{Objects, S3Options};
use toolmark_log::verify::{self, DirSource, Source};

mod support;
use support::append_all;

/// A source read on the verifier's thread only (no prefetching workers).
struct Serial(Box<dyn Source>);

impl Source for Serial {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        self.0.get(path)
    }
}

/// A directory whose every read first waits `latency`, as a request to a remote store would;
/// still readable from several threads at once.
struct Distant {
    dir: DirSource,
    latency: std::time::Duration,
}

impl Source for Distant {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        std::thread::sleep(self.latency);
        self.dir.get(path)
    }

    fn concurrent(&self) -> Option<&(dyn Source + Sync)> {
        Some(self)
    }
}

/// The log's public files copied to a fresh prefix of the test bucket, as `Objects` there.
fn copy_to_bucket(public: &Path) -> Objects {
    let bucket = toolmark_standins::services::s3()
        .expect("the test bucket")
        .expect("TOOLMARK_BENCH_S3 needs the test bucket's variables (scripts/seaweedfs env)");
    let opts = S3Options::at(
        &bucket.endpoint,
        &bucket.access_key_id,
        &bucket.secret_access_key,
    );
    let to = Objects::s3(&format!("s3://{}/{}", bucket.bucket, bucket.prefix), &opts)
        .expect("the test bucket");
    let from = Objects::dir(public).expect("the public directory");
    let started = Instant::now();
    let mut stack = vec![public.to_path_buf()];
    let mut files = Vec::new();
    let mut copied = 0usize;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read the public directory") {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(public).expect("under public/");
            let rel = rel.to_str().expect("a UTF-8 path").to_owned();
            if rel.contains('#') {
                // A temporary file a crashed writer left: no object of the log.
                continue;
            }
            let bytes = from.get(&rel).expect("read").expect("present");
            files.push((rel, bytes));
            if files.len() == 1024 {
                to.put_create_all(&files).expect("copy to the bucket");
                copied += files.len();
                files.clear();
            }
        }
    }
    to.put_create_all(&files).expect("copy to the bucket");
    copied += files.len();
    println!(
        "copied {copied} files to {} in {:.1} s",
        to.label(),
        started.elapsed().as_secs_f64()
    );
    to
}

fn build(dir: &Path, total: u64) {
    let mut log = Log::init(dir, "bench.example/log").expect("init");
    let started = Instant::now();
    append_all(&mut log, total);
    println!(
        "built: {total} entries in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// A `kB` line of /proc/self/status, in MiB.
fn status_mib(key: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// User + system CPU seconds of this process (fields 14 and 15 of /proc/self/stat, in ticks of
/// 1/100 s on Linux).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name may hold spaces; the fields after it start behind its closing paren.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    // After the paren, field 3 (state) is index 0, so utime (14) is 11 and stime (15) is 12.
    match (ticks(11), ticks(12)) {
        (Some(u), Some(s)) => (u + s) / 100.0,
        _ => f64::NAN,
    }
}

fn main() {
    let total: u64 = std::env::var("TOOLMARK_BENCH_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let given = std::env::var_os("TOOLMARK_BENCH_LOG").map(PathBuf::from);
    let dir = given.clone().unwrap_or_else(|| {
        std::env::var_os("TOOLMARK_BENCH_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir)
            .join(format!("toolmark-bench-fsck-{}", std::process::id()))
    });
    let reused = dir.join("public/checkpoint").exists();
    if !reused {
        build(&dir, total);
    }
    let public = dir.join("public");
    let vkey = std::fs::read_to_string(public.join("vkey")).expect("public/vkey");
    let serial = std::env::var_os("TOOLMARK_BENCH_SERIAL").is_some();
    let bucket = std::env::var_os("TOOLMARK_BENCH_S3").map(|_| copy_to_bucket(&public));
    let rss_before = status_mib("VmRSS:");
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let latency_ms: u64 = std::env::var("TOOLMARK_BENCH_LATENCY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let dir_source = DirSource(public.clone());
    let distant = Distant {
        dir: DirSource(public.clone()),
        latency: std::time::Duration::from_millis(latency_ms),
    };
    let serial_source = Serial(if latency_ms > 0 {
        Box::new(distant) as Box<dyn Source>
    } else {
        Box::new(dir_source) as Box<dyn Source>
    });
    let source: &dyn Source = match (&bucket, serial) {
        (Some(objects), _) => objects,
        (None, true) => &serial_source,
        (None, false) => serial_source.0.as_ref(),
    };
    let report = verify::fsck(source, vkey.trim()).expect("fsck");
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    println!(
        "fsck ({}): {} entries, {} bundles, {} tiles, {} subjects in {secs:.1} s: {:.0} entries/s, \
         {cpu:.1} s CPU; at most {} tree hashes held",
        match (serial, latency_ms) {
            _ if bucket.is_some() => "prefetching reads from the test bucket".to_owned(),
            (true, 0) => "serial reads".to_owned(),
            (false, 0) => "prefetching reads".to_owned(),
            (true, ms) => format!("serial reads, {ms} ms each"),
            (false, ms) => format!("prefetching reads, {ms} ms each"),
        },
        report.entries,
        report.bundles,
        report.tiles,
        report.subjects,
        report.entries as f64 / secs,
        report.peak_hashes
    );
    println!(
        "peak RSS (VmHWM) {:.1} MiB{}; RSS before the fsck {rss_before:.1} MiB",
        status_mib("VmHWM:"),
        if reused {
            " (the fsck's own: this process did not build the log)"
        } else {
            " (includes building the log: run again with TOOLMARK_BENCH_LOG for the fsck's own)"
        }
    );
    if given.is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }
    if let Some(objects) = bucket {
        // The copy is gigabytes at 10M entries: the shared test bucket does not keep it.
        for p in objects.list("", usize::MAX).unwrap_or_default() {
            objects.delete(&p).ok();
        }
    }
}
