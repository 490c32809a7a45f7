//! The single-run lock: two schedulers, two processes, and a holder that dies mid-run.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::*;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::oneshot;
use toolmark_schedules::{
    Acquire, Clock, Event, JobSpec, LeaseStore, ManualClock, Retry, RunStart, RunStatus,
    ScheduleStore, Scheduler, SystemClock, job_fn,
};

const JOB: &str = "crawl";

type Intervals = Arc<Mutex<Vec<(String, DateTime<Utc>, DateTime<Utc>)>>>;

/// A job that takes ten simulated minutes and records its interval.
fn ten_minute_scheduler(
    path: &std::path::Path,
    clock: &Arc<ManualClock>,
    holder: &str,
    log: &Intervals,
) -> Scheduler {
    let store = Arc::new(LeaseStore::open(path).unwrap());
    let mut s = Scheduler::new(store, clock.clone(), holder.into());
    let (c, l, h) = (clock.clone(), log.clone(), holder.to_owned());
    let spec = JobSpec::new(JOB, "0 0 * * * *")
        .unwrap()
        .with_lease(Duration::from_secs(3600));
    s.add(
        spec,
        job_fn(move |_ctx| {
            let (c, l, h) = (c.clone(), l.clone(), h.clone());
            async move {
                let start = c.now();
                c.sleep_until(start + mins(10)).await;
                l.lock().unwrap().push((h, start, c.now()));
                Ok(String::new())
            }
        }),
    )
    .unwrap();
    s
}

/// The next Started-or-Skipped event of one scheduler (NextRun events before it are skipped).
async fn started_or_skipped(rx: &mut UnboundedReceiver<Event>) -> Event {
    loop {
        match next_event(rx).await {
            Event::NextRun { .. } => continue,
            e @ (Event::Started { .. } | Event::Skipped { .. }) => return e,
            e => panic!("unexpected {e:?}"),
        }
    }
}

#[tokio::test]
async fn two_schedulers_on_one_file_never_run_the_job_at_once() {
    let path = temp_db("two-schedulers");
    let t0 = t(2026, 3, 1, 12, 0, 0);
    let clock = Arc::new(ManualClock::new(t0));
    let log: Intervals = Arc::default();
    let a = ten_minute_scheduler(&path, &clock, "a", &log);
    let b = ten_minute_scheduler(&path, &clock, "b", &log);
    let mut evs = [a.subscribe(), b.subscribe()];
    let (stop_a, sa) = oneshot::channel::<()>();
    let (stop_b, sb) = oneshot::channel::<()>();
    let ta = tokio::spawn(a.run(async move {
        let _ = sa.await;
    }));
    let tb = tokio::spawn(b.run(async move {
        let _ = sb.await;
    }));

    const ROUNDS: usize = 12;
    let mut skipped = 0;
    // Round 0 is the catch-up (neither has ever succeeded); then one round per hourly fire.
    for round in 0..ROUNDS {
        if round > 0 {
            parked(&clock, 2).await; // both waiting for the fire time
            clock.advance_to_next_deadline().unwrap();
        }
        let ea = started_or_skipped(&mut evs[0]).await;
        let eb = started_or_skipped(&mut evs[1]).await;
        let runner = match (&ea, &eb) {
            (Event::Started { .. }, Event::Skipped { held_by, .. }) => {
                assert_eq!(held_by, "a");
                0
            }
            (Event::Skipped { held_by, .. }, Event::Started { .. }) => {
                assert_eq!(held_by, "b");
                1
            }
            _ => panic!("round {round}: expected one Started and one Skipped: {ea:?} {eb:?}"),
        };
        skipped += 1;
        // The skipper waits for the next fire; the runner's job sleeps ten minutes and its
        // lease renewal waits too.
        assert!(matches!(
            next_event(&mut evs[1 - runner]).await,
            Event::NextRun { .. }
        ));
        parked(&clock, 3).await;
        let end = clock.now() + mins(10);
        clock.set(end);
        assert!(matches!(
            next_event(&mut evs[runner]).await,
            Event::Finished {
                status: RunStatus::Ok,
                ..
            }
        ));
        assert!(matches!(
            next_event(&mut evs[runner]).await,
            Event::NextRun { .. }
        ));
    }
    stop_a.send(()).unwrap();
    stop_b.send(()).unwrap();
    let (sa, sb) = (ta.await.unwrap(), tb.await.unwrap());
    assert_eq!(sa.started + sb.started, ROUNDS as u64);
    assert_eq!(sa.skipped + sb.skipped, skipped as u64);

    let iv = log.lock().unwrap().clone();
    assert_eq!(iv.len(), ROUNDS);
    assert_disjoint(&mut iv.iter().map(|(_, s, e)| (*s, *e)).collect::<Vec<_>>());
    let store = LeaseStore::open(&path).unwrap();
    let runs = store.runs(JOB, 100).unwrap();
    assert_eq!(runs.len(), ROUNDS);
    assert!(runs.iter().all(|r| r.status == RunStatus::Ok));
}

#[test]
fn a_run_killed_midway_is_interrupted_and_the_next_run_is_clean() {
    let path = temp_db("killed");
    let t0 = t(2026, 3, 1, 12, 0, 30);
    let clock = Arc::new(ManualClock::new(t0));

    // The doomed process: its own runtime, a job that never finishes.
    let doomed_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut doomed = Scheduler::new(
        Arc::new(LeaseStore::open(&path).unwrap()),
        clock.clone(),
        "doomed".into(),
    );
    doomed
        .add(
            JobSpec::new(JOB, "0 0 * * * *").unwrap(),
            job_fn(|_ctx| std::future::pending()),
        )
        .unwrap();
    let mut doomed_ev = doomed.subscribe();
    doomed_rt.spawn(doomed.run(std::future::pending()));

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dead_run = rt.block_on(async {
        loop {
            if let Event::Started { run_id, .. } = next_event(&mut doomed_ev).await {
                break run_id;
            }
        }
    });
    // Kill it: every task is dropped where it stands; nothing is finished or released.
    doomed_rt.shutdown_background();

    let store = Arc::new(LeaseStore::open(&path).unwrap());
    let runs = store.runs(JOB, 10).unwrap();
    assert_eq!(runs[0].id, dead_run);
    assert_eq!(runs[0].status, RunStatus::Running);
    let (holder, expires) = store.lease(JOB).unwrap().unwrap();
    assert_eq!(holder, "doomed");

    rt.block_on(async {
        let mut next = Scheduler::new(store.clone(), clock.clone(), "next".into());
        next.add(
            JobSpec::new(JOB, "0 0 * * * *").unwrap(),
            job_fn(|_ctx| async { Ok("clean".to_owned()) }),
        )
        .unwrap();
        let mut ev = next.subscribe();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(next.run(async move {
            let _ = stopped.await;
        }));
        // Never succeeded, so it wants to catch up at once, but the dead lease still holds.
        assert!(matches!(next_event(&mut ev).await, Event::NextRun { at, .. } if at == t0));
        assert_eq!(
            next_event(&mut ev).await,
            Event::Skipped {
                job: JOB.into(),
                held_by: "doomed".into(),
                until: expires
            }
        );
        // It looks again when the dead holder's lease lapses (one second after), long before
        // the next fire time, and runs the job then.
        let fire = t(2026, 3, 1, 13, 0, 0);
        let recheck = expires + chrono::Duration::seconds(1);
        assert!(fire > recheck);
        assert!(matches!(next_event(&mut ev).await, Event::NextRun { at, .. } if at == recheck));
        parked(&clock, 1).await;
        assert_eq!(clock.advance_to_next_deadline(), Some(recheck));
        let Event::Started { run_id, .. } = next_event(&mut ev).await else {
            panic!("expected Started")
        };
        assert!(matches!(next_event(&mut ev).await, Event::Finished { status: RunStatus::Ok, run_id: r, .. } if r == run_id));
        stop.send(()).unwrap();
        task.await.unwrap();
    });

    let runs = store.runs(JOB, 10).unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].holder, "next");
    assert_eq!(runs[0].status, RunStatus::Ok);
    assert_eq!(runs[1].id, dead_run);
    assert_eq!(runs[1].status, RunStatus::Interrupted);
    let detail = runs[1].detail.as_deref().unwrap();
    assert!(
        detail.contains("expired") && detail.contains("doomed"),
        "{detail}"
    );
    assert_eq!(store.lease(JOB).unwrap(), None);
}

// ---- two OS processes -------------------------------------------------------------------

const CHILD_DB: &str = "TOOLMARK_SCHEDULES_TEST_CHILD_DB";
const CHILD_LOG: &str = "TOOLMARK_SCHEDULES_TEST_CHILD_LOG";
const CHILD_HOLDER: &str = "TOOLMARK_SCHEDULES_TEST_CHILD_HOLDER";
const CHILD_START_MS: &str = "TOOLMARK_SCHEDULES_TEST_CHILD_START_MS";
const CHILD_STOP_MS: &str = "TOOLMARK_SCHEDULES_TEST_CHILD_STOP_MS";
/// Each run of the children's job takes this long, so that a contender arriving at the same
/// fire time finds the lease held.
const CHILD_JOB_MS: i64 = 300;
/// The window in which the children run: whole seconds, so it holds this many fire times.
const CHILD_WINDOW_SECS: i64 = 2;
/// How far ahead both children are told to start: time to exec and open the store even on a
/// loaded CI machine.
const CHILD_STARTUP_MS: i64 = 2000;
/// The parent kills the children if they are not done by then.
const CHILD_LIMIT: Duration = Duration::from_secs(30);

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// Run by `two_processes_never_run_the_job_at_once` in its child processes; does nothing
/// when run by hand.
#[test]
#[ignore = "a child process of two_processes_never_run_the_job_at_once"]
fn child_contender() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return;
    };
    let env = |k: &str| std::env::var(k).unwrap();
    let log_path = env(CHILD_LOG);
    let holder = env(CHILD_HOLDER);
    let at = |k: &str| DateTime::from_timestamp_millis(env(k).parse().unwrap()).unwrap();
    let (start_at, stop_at) = (at(CHILD_START_MS), at(CHILD_STOP_MS));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let clock = Arc::new(SystemClock);
        let mut s = Scheduler::new(
            Arc::new(LeaseStore::open(&db).unwrap()),
            clock.clone(),
            holder.clone(),
        );
        let spec = JobSpec::new(JOB, "* * * * * *")
            .unwrap()
            .with_retry(Retry::NONE)
            .with_lease(Duration::from_secs(5));
        let h = holder.clone();
        s.add(
            spec,
            job_fn(move |ctx| {
                let (h, log_path) = (h.clone(), log_path.clone());
                async move {
                    let clock = SystemClock;
                    let start = clock.now();
                    clock
                        .sleep_until(start + chrono::Duration::milliseconds(CHILD_JOB_MS))
                        .await;
                    let end = clock.now();
                    let line = format!("{h} {} {} {}\n", ms(start), ms(end), ms(ctx.scheduled_for));
                    let mut f = std::fs::OpenOptions::new()
                        .append(true)
                        .create(true)
                        .open(&log_path)
                        .unwrap();
                    f.write_all(line.as_bytes()).unwrap(); // one small O_APPEND write
                    Ok(String::new())
                }
            }),
        )
        .unwrap();
        clock.sleep_until(start_at).await; // both children start together
        let summary = s.run(clock.sleep_until(stop_at)).await;
        println!(
            "CHILD-SUMMARY {holder} started={} skipped={} ok={}",
            summary.started, summary.skipped, summary.ok
        );
    });
}

#[test]
fn two_processes_never_run_the_job_at_once() {
    let dir = temp_dir("two-processes");
    let db = dir.join("schedules.sqlite");
    let log = dir.join("runs.log");
    // Start half a second past a whole second (at least CHILD_STARTUP_MS from now, for the
    // children to get going on a loaded machine): the catch-up run ends before the first fire
    // time.
    let now = SystemClock.now();
    let mut start_ms = (ms(now) / 1000 + 1) * 1000 + 500;
    while start_ms - ms(now) < CHILD_STARTUP_MS {
        start_ms += 1000;
    }
    let stop_ms = start_ms + CHILD_WINDOW_SECS * 1000;
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = ["p1", "p2"]
        .iter()
        .map(|holder| {
            Command::new(&exe)
                .args(["--exact", "child_contender", "--nocapture", "--ignored"])
                .env(CHILD_DB, &db)
                .env(CHILD_LOG, &log)
                .env(CHILD_HOLDER, holder)
                .env(CHILD_START_MS, start_ms.to_string())
                .env(CHILD_STOP_MS, stop_ms.to_string())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let began = Instant::now();
    while children.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        if began.elapsed() > CHILD_LIMIT {
            for c in &mut children {
                let _ = c.kill();
            }
            panic!("child processes did not finish within {CHILD_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50)); // polling the OS, not timing the test
    }
    let mut skipped = 0;
    let mut started = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "child failed: {out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find(|l| l.starts_with("CHILD-SUMMARY"))
            .unwrap_or_else(|| panic!("no summary from child: {stdout}"));
        let field = |k: &str| -> u64 {
            line.split(' ')
                .find_map(|w| w.strip_prefix(k))
                .unwrap()
                .parse()
                .unwrap()
        };
        skipped += field("skipped=");
        started += field("started=");
    }

    let text = std::fs::read_to_string(&log).unwrap();
    let iv: Vec<(String, i64, i64, i64)> = text
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (
                w[0].to_owned(),
                w[1].parse().unwrap(),
                w[2].parse().unwrap(),
                w[3].parse().unwrap(),
            )
        })
        .collect();
    assert_disjoint(&mut iv.iter().map(|r| (r.1, r.2)).collect::<Vec<_>>());
    // One catch-up run at the start plus one per fire time in the window; on a starved
    // machine a late run may collapse a fire time (fewer runs), never add one.
    let expected = 1 + CHILD_WINDOW_SECS as usize;
    assert!((2..=expected).contains(&iv.len()), "runs: {iv:?}");
    assert_eq!(started, iv.len() as u64);
    assert!(skipped >= 1, "the processes never contended: {iv:?}");
    let store = LeaseStore::open(&db).unwrap();
    let runs = store.runs(JOB, 100).unwrap();
    assert_eq!(runs.len(), iv.len());
    assert!(runs.iter().all(|r| r.status == RunStatus::Ok), "{runs:?}");
    assert_eq!(store.lease(JOB).unwrap(), None);
    // And the store itself: a third party can take the lease at once (for a time no run has
    // served yet).
    let start = RunStart {
        attempt: 1,
        scheduled_for: SystemClock.now() + chrono::Duration::seconds(60),
    };
    assert!(matches!(
        store
            .try_acquire(JOB, "p3", SystemClock.now(), Duration::from_secs(1), start)
            .unwrap(),
        Acquire::Acquired { .. }
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Processes started together all open a fresh store at once; SQLite refuses a journal-mode
/// switch or schema creation that races another connection's with `SQLITE_BUSY` without
/// waiting, and opening must not fail because of that.
#[test]
fn many_connections_opening_a_fresh_store_at_once_all_succeed() {
    for round in 0..20 {
        let path = temp_db(&format!("open-race-{round}"));
        let barrier = Arc::new(std::sync::Barrier::new(8));
        let opens: Vec<_> = (0..8)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    LeaseStore::open(&path).map(|_| ())
                })
            })
            .collect();
        for open in opens {
            open.join().unwrap().unwrap();
        }
    }
}
