//! Helpers shared by the integration tests. Every wait here is bounded by a real-time
//! timeout only so that a broken scheduler fails the test instead of hanging it; the
//! simulated time itself only moves when a test moves the `ManualClock`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use tokio::sync::mpsc::UnboundedReceiver;
use toolmark_schedules::{
    Acquire, Event, LeaseStore, ManualClock, RunStart, RunStatus, ScheduleStore,
};

/// How long a test waits for an event or a parked sleeper before failing. Real time, and
/// far above what the scheduler needs (microseconds): only a hang reaches it.
pub const WAIT_LIMIT: Duration = Duration::from_secs(10);

pub fn t(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
}

pub fn mins(n: i64) -> chrono::Duration {
    chrono::Duration::minutes(n)
}

/// A fresh directory under the system temp dir, unique per process and call.
pub fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "toolmark-schedules-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn temp_db(name: &str) -> PathBuf {
    temp_dir(name).join("schedules.sqlite")
}

/// Records a successful run of `job` that started at `at`, as a past process would have.
pub fn seed_success(store: &LeaseStore, job: &str, at: DateTime<Utc>) {
    let start = RunStart {
        attempt: 1,
        scheduled_for: at,
    };
    let Acquire::Acquired { run_id } = store
        .try_acquire(job, "seed", at, Duration::from_secs(60), start)
        .unwrap()
    else {
        panic!("seeding: lease held")
    };
    store
        .finish(job, "seed", run_id, at, RunStatus::Ok, "seeded")
        .unwrap();
}

pub async fn next_event(rx: &mut UnboundedReceiver<Event>) -> Event {
    tokio::time::timeout(WAIT_LIMIT, rx.recv())
        .await
        .expect("no scheduler event within WAIT_LIMIT")
        .expect("event channel closed")
}

pub async fn parked(clock: &ManualClock, n: usize) {
    tokio::time::timeout(WAIT_LIMIT, clock.sleepers_at_least(n))
        .await
        .unwrap_or_else(|_| panic!("fewer than {n} tasks parked on the clock within WAIT_LIMIT"));
}

pub fn drain(rx: &mut UnboundedReceiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

/// Asserts that no two `(start, end, …)` intervals overlap (sorting them by start).
pub fn assert_disjoint<T: Ord + Copy + std::fmt::Debug>(intervals: &mut [(T, T)]) {
    intervals.sort();
    for w in intervals.windows(2) {
        assert!(
            w[1].0 >= w[0].1,
            "overlapping runs: {:?} and {:?}",
            w[0],
            w[1]
        );
    }
}
