//! Storage benchmark (issue #26): the single box (SQLite + a directory) and the cluster
//! (PostgreSQL + an S3-compatible bucket) side by side, in one process and one run, phase by
//! phase so both see the same machine load:
//!
//! 1. fill: `TOOLMARK_BENCH_ENTRIES` entries (default 1,000,000) in batches of `MAX_BATCH`;
//! 2. sustained appends on top of that, for each batch size of `TOOLMARK_BENCH_BATCHES`
//!    (default `1,64,1024`: a crawl commits in batches, one-entry batches are the worst case),
//!    for `TOOLMARK_BENCH_SECONDS` seconds each (default 10): appends/s, and p50/p99 of one
//!    `append` call (the commit latency a caller sees);
//! 3. inclusion proofs from a [`Reader`] over the published files (the directory; the bucket):
//!    `TOOLMARK_BENCH_PROOFS` random indices (default 2,000) at the final size, p50/p99/max,
//!    and as many GETs of one random full level-0 tile (what a proof reads at least);
//! 4. `verify::fsck` of the whole log from the directory and from the bucket.
//!
//! The cluster runs when `TOOLMARK_TEST_POSTGRES` and `TOOLMARK_TEST_S3` name the services
//! (`source` the test environment; bucket `TOOLMARK_TEST_S3_BUCKET`, credentials
//! `TOOLMARK_TEST_S3_ACCESS_KEY_ID` / `…_SECRET_ACCESS_KEY`); it gets a database and a key
//! prefix of its own, dropped afterwards (`TOOLMARK_BENCH_KEEP=1` keeps everything). Without
//! them it says so and runs the single box alone. The directory is under `TOOLMARK_BENCH_DIR`
//! (default: the system temp directory).
//!
//! `cargo bench -p toolmark-log --bench storage`

use std::path::PathBuf;
use std::time::{Duration, Instant};
use toolmark_log::Log;
use toolmark_log::head::postgres::PgHead;
use toolmark_log::note::LogKey;
use toolmark_log::objects::{Objects, S3Options};
use toolmark_log::reader::Reader;
use toolmark_log::sequencer::MAX_BATCH;
use toolmark_log::store::LogStores;

/// The allocator the `toolmark` binary ships with, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/entries.rs"]
mod entries;
use entries::entry;

const ORIGIN: &str = "bench.example/log";

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.replace('_', "")
                .parse()
                .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
        })
        .unwrap_or(default)
}

/// One backend under test: its writer, where its public files are, and how to clean up.
struct Side {
    name: &'static str,
    log: Log,
    public: Objects,
    /// Entries appended so far (the next `entry(i)`).
    next: u64,
    cleanup: Cleanup,
}

enum Cleanup {
    Dir(PathBuf),
    Cluster {
        db: toolmark_standins::services::Database,
        objects: Objects,
    },
}

/// Latencies in seconds: the value at quantile `q`.
fn pct(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

fn ms(s: f64) -> String {
    if s < 0.01 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

/// What one backend did at one batch size.
struct Run {
    batch: u64,
    entries: u64,
    secs: f64,
    lat: Vec<f64>,
}

impl Run {
    fn line(&self) -> String {
        let mut lat = self.lat.clone();
        lat.sort_by(f64::total_cmp);
        format!(
            "{:.0}/s | {} | {} | {} batches",
            self.entries as f64 / self.secs,
            ms(pct(&lat, 0.5)),
            ms(pct(&lat, 0.99)),
            lat.len()
        )
    }
}

/// Append batches of `batch` entries until `until` says stop; every call timed.
fn appends(side: &mut Side, batch: u64, until: impl Fn(u64, Duration) -> bool) -> Run {
    let started = Instant::now();
    let mut lat = Vec::new();
    let mut entries = 0;
    while !until(entries, started.elapsed()) {
        let batch_entries = (side.next..side.next + batch).map(entry).collect();
        let t = Instant::now();
        let a = side.log.append(batch_entries).expect("append");
        lat.push(t.elapsed().as_secs_f64());
        assert_eq!(a.indices.first(), Some(&side.next), "nothing deduplicated");
        side.next += batch;
        entries += batch;
    }
    Run {
        batch,
        entries,
        secs: started.elapsed().as_secs_f64(),
        lat,
    }
}

fn single_box(base: &std::path::Path) -> Side {
    let dir = base.join(format!("toolmark-bench-storage-{}", std::process::id()));
    let log = Log::init(&dir, ORIGIN).expect("init the single box");
    Side {
        name: "single box (SQLite + directory)",
        public: Objects::dir(&dir).expect("dir").sub("public"),
        log,
        next: 0,
        cleanup: Cleanup::Dir(dir),
    }
}

fn cluster() -> Option<Side> {
    // A fresh database of the test cluster and a fresh prefix of the test bucket (the same
    // helpers as the tests').
    let (Some(db), Some(bucket)) = (
        toolmark_standins::services::postgres().expect("the test PostgreSQL"),
        toolmark_standins::services::s3().expect("the test bucket"),
    ) else {
        println!(
            "cluster skipped: TOOLMARK_TEST_POSTGRES and TOOLMARK_TEST_S3 are not both set \
             (source the test services' environment)"
        );
        return None;
    };
    let opts = S3Options::at(
        &bucket.endpoint,
        &bucket.access_key_id,
        &bucket.secret_access_key,
    );
    let root = Objects::s3(&format!("s3://{}/{}", bucket.bucket, bucket.prefix), &opts)
        .expect("the test bucket");
    let url = db.url().to_owned();
    let objects = root.sub("log");
    let stores = LogStores {
        head: Box::new(PgHead::connect(&url).expect("the bench database")),
        objects: objects.clone(),
    };
    let key = LogKey::generate(ORIGIN).expect("key");
    let clock = Box::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    });
    let log = Log::create(stores, key, clock).expect("create the cluster log");
    Some(Side {
        name: "PostgreSQL + SeaweedFS",
        public: objects.sub("public"),
        log,
        next: 0,
        cleanup: Cleanup::Cluster { db, objects: root },
    })
}

fn main() {
    let fill = env_u64("TOOLMARK_BENCH_ENTRIES", 1_000_000);
    let seconds = env_u64("TOOLMARK_BENCH_SECONDS", 10);
    let proofs = env_u64("TOOLMARK_BENCH_PROOFS", 2_000).max(1);
    let batches: Vec<u64> = std::env::var("TOOLMARK_BENCH_BATCHES")
        .unwrap_or_else(|_| "1,64,1024".into())
        .split(',')
        .map(|b| {
            b.trim()
                .parse()
                .expect("TOOLMARK_BENCH_BATCHES: sizes, comma-separated")
        })
        .collect();
    assert!(
        batches.iter().all(|&b| (1..=MAX_BATCH as u64).contains(&b)),
        "batch sizes are 1..={MAX_BATCH}"
    );
    let base = std::env::var_os("TOOLMARK_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);

    let mut sides = vec![single_box(&base)];
    sides.extend(cluster());

    println!("## fill: {fill} entries in batches of {MAX_BATCH}");
    println!("| backend | appends/s | p50 batch | p99 batch | batches |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for side in &mut sides {
        let batch = MAX_BATCH as u64;
        let run = appends(side, batch, |n, _| n >= fill);
        println!("| {} | {} |", side.name, run.line());
    }

    println!("\n## sustained appends on top, {seconds} s per batch size");
    println!("| backend | batch | appends/s | p50 commit | p99 commit | batches |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let limit = Duration::from_secs(seconds);
    for &batch in &batches {
        for side in &mut sides {
            let run = appends(side, batch, |_, t| t >= limit);
            println!("| {} | {} | {} |", side.name, run.batch, run.line());
        }
    }

    println!(
        "\n## inclusion proofs from a Reader over the published files, {proofs} random indices"
    );
    println!("| backend | size | p50 | p99 | max | one tile GET p50 / p99 |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for side in &sides {
        let reader = Reader::new(side.public.clone(), &side.log.vkey());
        let at = reader.checkpoint().expect("published checkpoint");
        let size = at.checkpoint.size;
        let mut rng = 0x1234_5678_9abc_def0_u64;
        let mut lat = Vec::with_capacity(proofs as usize);
        for _ in 0..proofs {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let i = rng % size;
            let t = Instant::now();
            let p = reader.inclusion_proof(i, size, &at).expect("proof");
            lat.push(t.elapsed().as_secs_f64());
            std::hint::black_box(p);
        }
        lat.sort_by(f64::total_cmp);
        // What one proof's reads cost at least: one GET of a random level-0 tile.
        let mut get = Vec::with_capacity(proofs as usize);
        for _ in 0..proofs {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let tile = toolmark_log::tiles::TileId {
                level: 0,
                index: rng % (size / 256).max(1),
                width: 256,
            };
            let t = Instant::now();
            let bytes = side.public.get(&tile.path()).expect("tile");
            get.push(t.elapsed().as_secs_f64());
            std::hint::black_box(bytes);
        }
        get.sort_by(f64::total_cmp);
        println!(
            "| {} | {size} | {} | {} | {} | {} / {} |",
            side.name,
            ms(pct(&lat, 0.5)),
            ms(pct(&lat, 0.99)),
            ms(lat[lat.len() - 1]),
            ms(pct(&get, 0.5)),
            ms(pct(&get, 0.99))
        );
    }

    println!("\n## fsck (verify::fsck over the published files)");
    println!("| backend | size | time | entries/s |");
    println!("| --- | ---: | ---: | ---: |");
    for side in &sides {
        let t = Instant::now();
        let report = toolmark_log::verify::fsck(&side.public, &side.log.vkey()).expect("fsck");
        let secs = t.elapsed().as_secs_f64();
        let size = side.log.head().size;
        println!(
            "| {} | {size} | {secs:.1} s | {:.0} |",
            side.name,
            size as f64 / secs
        );
        std::hint::black_box(report);
    }

    if std::env::var_os("TOOLMARK_BENCH_KEEP").is_some() {
        for side in sides {
            if let Cleanup::Cluster { db, .. } = side.cleanup {
                println!("kept: database {}", db.name());
                std::mem::forget(db);
            }
        }
        return;
    }
    for side in sides {
        drop(side.log);
        match side.cleanup {
            Cleanup::Dir(dir) => {
                std::fs::remove_dir_all(&dir).ok();
            }
            Cleanup::Cluster { db, objects } => {
                drop(db);
                for p in objects.list("log", usize::MAX).unwrap_or_default() {
                    objects.delete(&p).ok();
                }
            }
        }
    }
}
