//! The stats queries (`toolmark_index::stats`) on a large synthetic index (a bench binary, not
//! criterion: each query is slow enough to time on its own; it prints the median of 5 runs).
//!
//! The index: `TOOLMARK_BENCH_TARGETS` targets (default 20,000: four times the official
//! registry's remotes and packages today), two per server, a tenth of them packages, one in
//! twenty delisted, one in ten skipped, on `TARGETS / 8` hosts; one observation per target per
//! day for `TOOLMARK_BENCH_DAYS` days (default 180: 3.6 million rows); a change for one target in
//! fifty each day. The rows are written with SQL straight into a schema-5 index (the shape the
//! recorder writes; no log behind them: the queries read the index only).
//!
//! `cargo bench -p toolmark-index --bench stats`; the index is written under
//! `TOOLMARK_BENCH_DIR` (default: the system temp directory) and removed afterwards.

use std::time::{Duration, Instant};

use toolmark_index::Index;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of day `d` after 2026-06-01, at second `s`.
fn time(d: u64, s: u64) -> String {
    toolmark_index::time::from_unix(1_780_272_000 + d * 86_400 + s)
}

fn fill(path: &std::path::Path, targets: u64, days: u64) {
    drop(Index::open(path).unwrap());
    let mut db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;")
        .unwrap();
    let tx = db.transaction().unwrap();
    {
        let mut server = tx
            .prepare(
                "INSERT INTO servers (name, version, status, first_listed, last_listed, delisted_at)
                 VALUES (?1, '1', 'active', ?2, ?2, ?3)",
            )
            .unwrap();
        for s in 0..targets / 2 {
            let delisted = (s % 20 == 0).then(|| time(days, 0));
            server
                .execute(rusqlite::params![
                    format!("io.example/s{s}"),
                    time(0, 0),
                    delisted
                ])
                .unwrap();
        }
        let mut target = tx
            .prepare(
                "INSERT INTO targets (id, server, target, kind, skip_reason, last_status,
                     last_entry, last_observed_at, last_ok_entry, current_full, endpoint_key)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .unwrap();
        for t in 0..targets {
            let package = t % 10 == 9;
            let url = if package {
                format!("npm:pkg-{t}")
            } else {
                format!("https://h{}.example.com/mcp/{t}", t % (targets / 8).max(1))
            };
            let skipped = (t % 10 == 3).then_some("header-required");
            let ok = skipped.is_none() && t % 7 != 0;
            let last = (days - 1) * targets + t;
            target
                .execute(rusqlite::params![
                    format!("{t:016x}"),
                    format!("io.example/s{}", t / 2),
                    url,
                    if package { "package" } else { "remote" },
                    skipped,
                    Some(if ok { "ok" } else { "timeout" }),
                    last as i64,
                    time(days - 1, t % 86_400),
                    ok.then_some(last as i64),
                    ok.then(|| format!("sha256-{t}")),
                    url,
                ])
                .unwrap();
        }
        let mut obs = tx
            .prepare(
                "INSERT INTO observations (entry, target_id, observed_at, status, full, tools)
                 VALUES (?1, ?2, ?3, ?4, ?5, 3)",
            )
            .unwrap();
        let mut change = tx
            .prepare(
                "INSERT INTO changes (target_id, server, endpoint, observed_at, old_entry,
                     new_entry, old_full, new_full, class, added, removed, modified)
                 VALUES (?1, 's', 'e', ?2, ?3, ?4, 'a', 'b', ?5, 1, 0, 0)",
            )
            .unwrap();
        for d in 0..days {
            for t in 0..targets {
                let entry = d * targets + t;
                let id = format!("{t:016x}");
                obs.execute(rusqlite::params![
                    entry as i64,
                    id,
                    time(d, t % 86_400),
                    if t % 7 == 0 { "timeout" } else { "ok" },
                    format!("sha256-{t}"),
                ])
                .unwrap();
                if (t + d) % 50 == 0 && d > 0 {
                    change
                        .execute(rusqlite::params![
                            id,
                            time(d, t % 86_400),
                            (entry - targets) as i64,
                            entry as i64,
                            ["benign", "unsure", "dangerous"][(t % 3) as usize],
                        ])
                        .unwrap();
                }
            }
        }
    }
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'log_size_indexed'",
        [(days * targets).to_string()],
    )
    .unwrap();
    tx.commit().unwrap();
    db.execute_batch("ANALYZE").unwrap();
}

/// One query to time.
type Query<'a> = Box<dyn Fn() + 'a>;

fn median(mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[2]
}

fn main() {
    let targets = env("TOOLMARK_BENCH_TARGETS", 20_000);
    let days = env("TOOLMARK_BENCH_DAYS", 180);
    let dir = std::env::var_os("TOOLMARK_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("toolmark-bench-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("index.sqlite");
    let t = Instant::now();
    fill(&path, targets, days);
    println!(
        "filled: {targets} targets, {} observations over {days} days, in {:.1} s",
        targets * days,
        t.elapsed().as_secs_f64()
    );
    // The version-5 migration on an index of this size: a version-4 index (without the two
    // indexes) opened by the writer.
    {
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch(
            "DROP INDEX observations_observed_at; DROP INDEX changes_observed_at;
             UPDATE meta SET value = '4' WHERE key = 'schema_version';",
        )
        .unwrap();
    }
    let t = Instant::now();
    drop(Index::open(&path).unwrap());
    println!(
        "migration 4 -> 5 (two indexes): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let index = Index::open_read_only(&path).unwrap();
    let now = 1_780_272_000 + days * 86_400;
    let since = |h: u64| toolmark_index::time::from_unix(now - h * 3600);
    let last30: Vec<String> = (0..30)
        .map(|d| toolmark_index::time::from_unix(now - (29 - d) * 86_400)[..10].to_owned())
        .collect();
    let rows: [(&str, Query); 7] = [
        (
            "target_counts_by_state",
            Box::new(|| drop(index.target_counts_by_state().unwrap())),
        ),
        (
            "change_counts_since (24 h)",
            Box::new(|| drop(index.change_counts_since(&since(24)).unwrap())),
        ),
        (
            "change_counts_since (30 d)",
            Box::new(|| drop(index.change_counts_since(&since(720)).unwrap())),
        ),
        (
            "daily_activity (30 days)",
            Box::new(|| drop(index.daily_activity(&last30).unwrap())),
        ),
        (
            "hosts_by_endpoints (50)",
            Box::new(|| drop(index.hosts_by_endpoints(50).unwrap())),
        ),
        (
            "last_run_of_kind",
            Box::new(|| drop(index.last_run_of_kind("crawl").unwrap())),
        ),
        (
            "badge_facts (one target)",
            Box::new(|| drop(index.badge_facts(&format!("{:016x}", 12)).unwrap())),
        ),
    ];
    let mut total = Duration::ZERO;
    for (name, f) in &rows {
        let m = median(f);
        total += m;
        println!("{name:<30} {:>9.2} ms", m.as_secs_f64() * 1e3);
    }
    println!(
        "{:<30} {:>9.2} ms (one stats computation, approximately)",
        "sum",
        total.as_secs_f64() * 1e3
    );
    drop(rows);
    drop(index);
    let _ = std::fs::remove_dir_all(&dir);
}
