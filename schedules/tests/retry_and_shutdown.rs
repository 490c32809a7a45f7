//! Retries with back-off, panicking jobs, and graceful shutdown, on a `ManualClock`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use common::*;
use tokio::sync::oneshot;
use toolmark_schedules::{
    Acquire, Event, JobError, JobSpec, LeaseStore, ManualClock, Retry, RunStart, RunStatus,
    ScheduleStore, Scheduler, job_fn,
};

const JOB: &str = "crawl";

fn hourly(retry: Retry) -> JobSpec {
    JobSpec::new(JOB, "0 0 * * * *").unwrap().with_retry(retry)
}

struct Running {
    ev: tokio::sync::mpsc::UnboundedReceiver<Event>,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<toolmark_schedules::RunSummary>,
}

fn start(s: Scheduler) -> Running {
    let ev = s.subscribe();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(s.run(async move {
        let _ = stopped.await;
    }));
    Running { ev, stop, task }
}

async fn expect_started(
    ev: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
) -> (u32, chrono::DateTime<chrono::Utc>) {
    loop {
        match next_event(ev).await {
            Event::NextRun { .. } => continue,
            Event::Started {
                attempt,
                scheduled_for,
                ..
            } => return (attempt, scheduled_for),
            e => panic!("expected Started, got {e:?}"),
        }
    }
}

async fn expect_finished(
    ev: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
) -> (RunStatus, Result<String, String>) {
    match next_event(ev).await {
        Event::Finished {
            status, outcome, ..
        } => (status, outcome),
        e => panic!("expected Finished, got {e:?}"),
    }
}

/// The retry sequence: `RetryScheduled { at, attempt }`, then (the clock moved to `at`) the
/// retry starts; returns how it finished.
async fn expect_retry_runs(
    r: &mut Running,
    clock: &ManualClock,
    at: chrono::DateTime<chrono::Utc>,
    attempt: u32,
) -> (RunStatus, Result<String, String>) {
    assert_eq!(
        next_event(&mut r.ev).await,
        Event::RetryScheduled {
            job: JOB.into(),
            at,
            attempt
        }
    );
    parked(clock, 1).await;
    assert_eq!(clock.advance_to_next_deadline(), Some(at));
    assert_eq!(expect_started(&mut r.ev).await, (attempt, at));
    expect_finished(&mut r.ev).await
}

#[tokio::test]
async fn failing_twice_then_succeeding_retries_with_doubling_back_off() {
    let t0 = t(2026, 3, 1, 12, 0, 30);
    let clock = Arc::new(ManualClock::new(t0));
    let store = Arc::new(LeaseStore::open(temp_db("retry")).unwrap());
    let mut s = Scheduler::new(store.clone(), clock.clone(), "a".into());
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let retry = Retry {
        first: Duration::from_secs(60),
        max: Duration::from_secs(3600),
        attempts: 3,
    };
    s.add(
        hourly(retry),
        job_fn(move |_| {
            let n = c.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                if n <= 2 {
                    Err(JobError::new(format!("upstream down ({n})")))
                } else {
                    Ok("done".into())
                }
            }
        }),
    )
    .unwrap();
    let mut r = start(s);

    // Catch-up at t0 fails; retry 1 after `first`, retry 2 after 2*first.
    assert_eq!(expect_started(&mut r.ev).await, (1, t0));
    assert_eq!(
        expect_finished(&mut r.ev).await,
        (RunStatus::Failed, Err("upstream down (1)".into()))
    );
    let r1 = t0 + mins(1);
    assert_eq!(
        expect_retry_runs(&mut r, &clock, r1, 2).await.0,
        RunStatus::Failed
    );
    let r2 = r1 + mins(2);
    assert_eq!(
        expect_retry_runs(&mut r, &clock, r2, 3).await,
        (RunStatus::Ok, Ok("done".into()))
    );
    assert_eq!(
        next_event(&mut r.ev).await,
        Event::NextRun {
            job: JOB.into(),
            at: t(2026, 3, 1, 13, 0, 0)
        }
    );

    r.stop.send(()).unwrap();
    let summary = r.task.await.unwrap();
    assert_eq!((summary.started, summary.failed, summary.ok), (3, 2, 1));
    let runs = store.runs(JOB, 10).unwrap();
    let got: Vec<_> = runs
        .iter()
        .rev()
        .map(|r| (r.attempt, r.started_at, r.status))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, t0, RunStatus::Failed),
            (2, r1, RunStatus::Failed),
            (3, r2, RunStatus::Ok)
        ]
    );
    assert_eq!(runs[2].detail.as_deref(), Some("upstream down (1)"));
}

#[tokio::test]
async fn a_retry_past_the_next_fire_time_is_dropped_and_the_fire_still_happens() {
    let t0 = t(2026, 3, 1, 12, 0, 30);
    let clock = Arc::new(ManualClock::new(t0));
    let store = Arc::new(LeaseStore::open(temp_db("retry-dropped")).unwrap());
    let mut s = Scheduler::new(store.clone(), clock.clone(), "a".into());
    let retry = Retry {
        first: Duration::from_secs(40 * 60),
        max: Duration::from_secs(6 * 3600),
        attempts: 5,
    };
    s.add(
        hourly(retry),
        job_fn(|_| async { Err(JobError::new("still down")) }),
    )
    .unwrap();
    let mut r = start(s);

    assert_eq!(expect_started(&mut r.ev).await, (1, t0));
    assert_eq!(
        expect_finished(&mut r.ev).await,
        (RunStatus::Failed, Err("still down".into()))
    );
    let r1 = t0 + mins(40); // 12:40:30, before 13:00: kept
    assert_eq!(
        expect_retry_runs(&mut r, &clock, r1, 2).await,
        (RunStatus::Failed, Err("still down".into()))
    );
    // The next retry would be 80 minutes later, 14:00:30: past the 13:00 fire, so dropped.
    let fire = t(2026, 3, 1, 13, 0, 0);
    assert_eq!(
        next_event(&mut r.ev).await,
        Event::RetryDropped {
            job: JOB.into(),
            would_be: r1 + mins(80),
            next_fire: fire
        }
    );
    assert_eq!(
        next_event(&mut r.ev).await,
        Event::NextRun {
            job: JOB.into(),
            at: fire
        }
    );
    parked(&clock, 1).await;
    assert_eq!(clock.advance_to_next_deadline(), Some(fire));
    assert_eq!(
        expect_started(&mut r.ev).await,
        (1, fire),
        "attempts start again at the fire time"
    );
    assert_eq!(
        expect_finished(&mut r.ev).await,
        (RunStatus::Failed, Err("still down".into()))
    );
    r.stop.send(()).unwrap();
    r.task.await.unwrap();
    assert_eq!(store.runs(JOB, 10).unwrap().len(), 3);
}

#[tokio::test]
async fn a_panicking_job_is_recorded_failed_and_the_scheduler_goes_on() {
    let t0 = t(2026, 3, 1, 12, 0, 30);
    let clock = Arc::new(ManualClock::new(t0));
    let store = Arc::new(LeaseStore::open(temp_db("panic")).unwrap());
    let mut s = Scheduler::new(store.clone(), clock.clone(), "a".into());
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    s.add(
        hourly(Retry::NONE),
        job_fn(move |_| {
            let n = c.fetch_add(1, Ordering::SeqCst) + 1;
            assert!(n != 2, "kaboom before the future");
            async move {
                assert!(n != 1, "kaboom inside the future");
                Ok(format!("call {n}"))
            }
        }),
    )
    .unwrap();
    let mut r = start(s);

    let mut fires = vec![t0];
    for h in 13..=14 {
        fires.push(t(2026, 3, 1, h, 0, 0));
    }
    let mut outcomes = Vec::new();
    for (i, fire) in fires.iter().enumerate() {
        if i > 0 {
            parked(&clock, 1).await;
            assert_eq!(clock.advance_to_next_deadline(), Some(*fire));
        }
        assert_eq!(expect_started(&mut r.ev).await, (1, *fire));
        outcomes.push(expect_finished(&mut r.ev).await);
    }
    r.stop.send(()).unwrap();
    r.task.await.unwrap();
    assert_eq!(outcomes[0].0, RunStatus::Failed);
    assert!(
        outcomes[0]
            .1
            .as_ref()
            .unwrap_err()
            .contains("panicked: kaboom inside the future"),
        "{outcomes:?}"
    );
    assert_eq!(outcomes[1].0, RunStatus::Failed);
    assert!(
        outcomes[1]
            .1
            .as_ref()
            .unwrap_err()
            .contains("panicked: kaboom before the future"),
        "{outcomes:?}"
    );
    assert_eq!(outcomes[2], (RunStatus::Ok, Ok("call 3".into())));
    let statuses: Vec<_> = store
        .runs(JOB, 10)
        .unwrap()
        .iter()
        .rev()
        .map(|r| r.status)
        .collect();
    assert_eq!(
        statuses,
        [RunStatus::Failed, RunStatus::Failed, RunStatus::Ok]
    );
}

#[tokio::test]
async fn shutdown_stops_running_jobs_waits_for_them_and_releases_the_leases() {
    let t0 = t(2026, 3, 1, 12, 0, 30);
    let clock = Arc::new(ManualClock::new(t0));
    let path = temp_db("shutdown");
    let store = Arc::new(LeaseStore::open(&path).unwrap());
    let mut s = Scheduler::new(store.clone(), clock.clone(), "a".into());
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    // Job 1 sets a flag when told to stop and gives up with Err.
    s.add(
        hourly(Retry::default()),
        job_fn(move |ctx| {
            let f = f.clone();
            async move {
                ctx.stop.cancelled().await;
                f.store(true, Ordering::SeqCst);
                assert!(f.load(Ordering::SeqCst));
                Err(JobError::new("interrupted after committing 2 items"))
            }
        }),
    )
    .unwrap();
    // Job 2 finishes its work cleanly when asked to stop.
    s.add(
        JobSpec::new("heartbeat", "0 */5 * * * *").unwrap(),
        job_fn(|ctx| async move {
            ctx.stop.cancelled().await;
            Ok("checkpoint written".to_owned())
        }),
    )
    .unwrap();
    let mut r = start(s);
    let mut started = 0;
    while started < 2 {
        if let Event::Started { .. } = next_event(&mut r.ev).await {
            started += 1;
        }
    }
    // Both running: two lease renewals parked on the clock.
    parked(&clock, 2).await;
    assert!(!flag.load(Ordering::SeqCst));
    r.stop.send(()).unwrap();
    let summary = r.task.await.unwrap();
    assert_eq!((summary.started, summary.stopped, summary.ok), (2, 1, 1));
    assert!(flag.load(Ordering::SeqCst));
    let mut finished = Vec::new();
    for e in drain(&mut r.ev) {
        if let Event::Finished {
            job,
            status,
            outcome,
            ..
        } = e
        {
            finished.push((job, status, outcome));
        } else {
            assert!(
                !matches!(e, Event::Started { .. } | Event::RetryScheduled { .. }),
                "nothing new after shutdown: {e:?}"
            );
        }
    }
    finished.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(finished.len(), 2);
    assert_eq!(finished[0].0, JOB);
    assert_eq!(finished[0].1, RunStatus::Stopped);
    let msg = finished[0].2.as_ref().unwrap_err();
    assert!(
        msg.contains("shutting down") && msg.contains("committing 2 items"),
        "{msg}"
    );
    assert_eq!(
        finished[1],
        (
            "heartbeat".into(),
            RunStatus::Ok,
            Ok("checkpoint written".into())
        )
    );

    assert_eq!(store.runs(JOB, 1).unwrap()[0].status, RunStatus::Stopped);
    assert_eq!(store.runs("heartbeat", 1).unwrap()[0].status, RunStatus::Ok);
    // Another holder, on its own connection, can take both leases at once (for its next
    // hour: the heartbeat's run just served t0).
    let other = LeaseStore::open(&path).unwrap();
    for job in [JOB, "heartbeat"] {
        let start = RunStart {
            attempt: 1,
            scheduled_for: t0 + mins(60),
        };
        assert!(matches!(
            other
                .try_acquire(job, "b", t0, Duration::from_secs(60), start)
                .unwrap(),
            Acquire::Acquired { .. }
        ));
    }
}

#[tokio::test]
async fn shutdown_while_waiting_returns_without_running() {
    let t0 = t(2026, 3, 1, 12, 0, 30);
    let clock = Arc::new(ManualClock::new(t0));
    let store = Arc::new(LeaseStore::open(temp_db("idle-shutdown")).unwrap());
    seed_success(&store, JOB, t(2026, 3, 1, 12, 0, 0));
    let mut s = Scheduler::new(store.clone(), clock.clone(), "a".into());
    s.add(hourly(Retry::NONE), job_fn(|_| async { Ok(String::new()) }))
        .unwrap();
    let mut r = start(s);
    assert_eq!(
        next_event(&mut r.ev).await,
        Event::NextRun {
            job: JOB.into(),
            at: t(2026, 3, 1, 13, 0, 0)
        }
    );
    parked(&clock, 1).await;
    r.stop.send(()).unwrap();
    assert_eq!(r.task.await.unwrap().started, 0);
    assert_eq!(store.runs(JOB, 10).unwrap().len(), 1, "only the seeded run");
}

#[tokio::test]
async fn a_lost_lease_stops_the_running_job() {
    let t0 = t(2026, 3, 1, 12, 0, 30);
    let clock = Arc::new(ManualClock::new(t0));
    let path = temp_db("lease-lost");
    let store = Arc::new(LeaseStore::open(&path).unwrap());
    let mut s = Scheduler::new(store.clone(), clock.clone(), "a".into());
    let lease = Duration::from_secs(60);
    s.add(
        hourly(Retry::NONE).with_lease(lease),
        job_fn(|ctx| async move {
            ctx.stop.cancelled().await;
            Err(JobError::new("gave up"))
        }),
    )
    .unwrap();
    let mut r = start(s);
    expect_started(&mut r.ev).await;
    parked(&clock, 1).await; // the renewal, due at t0 + 20 s
    // Another holder takes the lease, as if "a" had stalled past its expiry.
    let thief = LeaseStore::open(&path).unwrap();
    let later = t0 + chrono::Duration::seconds(61);
    let start_thief = RunStart {
        attempt: 1,
        scheduled_for: later,
    };
    assert!(matches!(
        thief
            .try_acquire(JOB, "b", later, lease, start_thief)
            .unwrap(),
        Acquire::Acquired { .. }
    ));
    assert_eq!(
        clock.advance_to_next_deadline(),
        Some(t0 + chrono::Duration::seconds(20))
    );
    let (status, outcome) = expect_finished(&mut r.ev).await;
    assert_eq!(status, RunStatus::Stopped);
    assert!(outcome.unwrap_err().contains("lease was lost"));
    r.stop.send(()).unwrap();
    r.task.await.unwrap();
    assert_eq!(
        store.lease(JOB).unwrap().unwrap().0,
        "b",
        "b's lease untouched"
    );
    let runs = store.runs(JOB, 10).unwrap();
    assert_eq!(runs[1].holder, "a");
    assert_eq!(runs[1].status, RunStatus::Stopped);
    assert!(
        runs[1]
            .detail
            .as_deref()
            .unwrap()
            .contains("lease had been lost")
    );
}

/// The store locked past its busy timeout (an operator's `sqlite3` session holding a write
/// transaction) when a run is due: the attempt is retried with back-off, not skipped until
/// the next fire time.
#[tokio::test]
async fn a_locked_store_is_retried_not_skipped_to_the_next_fire_time() {
    let t0 = t(2026, 3, 1, 12, 0, 30);
    let clock = Arc::new(ManualClock::new(t0));
    let path = temp_db("locked");
    let store = Arc::new(LeaseStore::open(&path).unwrap());
    let blocker = rusqlite::Connection::open(&path).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut s = Scheduler::new(store.clone(), clock.clone(), "a".into());
    let retry = Retry {
        first: Duration::from_secs(60),
        max: Duration::from_secs(3600),
        attempts: 3,
    };
    s.add(hourly(retry), job_fn(|_| async { Ok("ran".to_owned()) }))
        .unwrap();
    let mut r = start(s);
    // The catch-up at t0 cannot take the lease (the store waits its busy timeout, then errs).
    loop {
        match next_event(&mut r.ev).await {
            Event::NextRun { .. } => {}
            Event::StoreError { .. } => break,
            e => panic!("expected a store error, got {e:?}"),
        }
    }
    blocker.execute_batch("COMMIT").unwrap();
    let r1 = t0 + mins(1);
    assert_eq!(
        expect_retry_runs(&mut r, &clock, r1, 2).await,
        (RunStatus::Ok, Ok("ran".into()))
    );
    r.stop.send(()).unwrap();
    r.task.await.unwrap();
    assert_eq!(store.runs(JOB, 10).unwrap().len(), 1);
}
