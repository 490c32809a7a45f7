//! Fire times and catch-up, on a `ManualClock`.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use tokio::sync::oneshot;
use toolmark_schedules::{
    Event, JobSpec, LeaseStore, ManualClock, RunStatus, ScheduleError, ScheduleStore, Scheduler,
    job_fn,
};

const JOB: &str = "daily";

fn counting_scheduler(
    store: &Arc<LeaseStore>,
    clock: &Arc<ManualClock>,
) -> (Scheduler, Arc<Mutex<Vec<chrono::DateTime<chrono::Utc>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut s = Scheduler::new(store.clone(), clock.clone(), "a".into());
    let (c, sn) = (clock.clone(), seen.clone());
    s.add(
        JobSpec::new(JOB, "0 3 * * *").unwrap(),
        job_fn(move |_ctx| {
            sn.lock().unwrap().push(c.now());
            async { Ok("crawled".to_owned()) }
        }),
    )
    .unwrap();
    (s, seen)
}

#[tokio::test]
async fn daily_job_fires_once_per_simulated_day_and_not_at_start_when_recent() {
    let start = t(2026, 3, 1, 12, 0, 0);
    let clock = Arc::new(ManualClock::new(start));
    let store = Arc::new(LeaseStore::open(temp_db("daily")).unwrap());
    seed_success(&store, JOB, t(2026, 3, 1, 3, 0, 0)); // this morning's run
    let (s, seen) = counting_scheduler(&store, &clock);
    let first = t(2026, 3, 2, 3, 0, 0);
    assert_eq!(s.next_runs().unwrap(), vec![(JOB.to_owned(), first, false)]);
    let mut ev = s.subscribe();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(s.run(async move {
        let _ = stopped.await;
    }));

    assert_eq!(
        next_event(&mut ev).await,
        Event::NextRun {
            job: JOB.into(),
            at: first
        }
    );
    // Ten simulated days in 6-hour steps: a run exactly when a step crosses 03:00.
    let mut fires = Vec::new();
    for _ in 0..40 {
        parked(&clock, 1).await;
        let deadline = clock.next_deadline().unwrap();
        clock.advance(Duration::from_secs(6 * 3600));
        if clock.now() < deadline {
            continue;
        }
        match next_event(&mut ev).await {
            Event::Started {
                scheduled_for,
                attempt: 1,
                ..
            } => assert_eq!(scheduled_for, deadline),
            e => panic!("expected Started, got {e:?}"),
        }
        assert!(matches!(
            next_event(&mut ev).await,
            Event::Finished {
                status: RunStatus::Ok,
                ..
            }
        ));
        assert_eq!(
            next_event(&mut ev).await,
            Event::NextRun {
                job: JOB.into(),
                at: deadline + chrono::Duration::days(1)
            }
        );
        fires.push(deadline);
    }
    stop.send(()).unwrap();
    let summary = task.await.unwrap();
    assert!(drain(&mut ev).is_empty(), "no events beyond the ten runs");
    assert_eq!(summary.started, 10);
    assert_eq!(summary.ok, 10);
    let expected: Vec<_> = (0..10).map(|d| first + chrono::Duration::days(d)).collect();
    assert_eq!(fires, expected);
    assert_eq!(seen.lock().unwrap().len(), 10);
    let runs = store.runs(JOB, 100).unwrap();
    assert_eq!(runs.len(), 11, "ten runs plus the seeded one");
    assert!(runs.iter().all(|r| r.status == RunStatus::Ok));
    assert_eq!(store.lease(JOB).unwrap(), None, "lease released");
}

#[tokio::test]
async fn catch_up_after_a_week_down_runs_once_then_resumes_daily() {
    let start = t(2026, 3, 8, 12, 0, 0);
    let clock = Arc::new(ManualClock::new(start));
    let store = Arc::new(LeaseStore::open(temp_db("catch-up")).unwrap());
    seed_success(&store, JOB, t(2026, 3, 1, 3, 0, 0)); // 7 days (and 7 fire times) ago
    let (s, seen) = counting_scheduler(&store, &clock);
    assert_eq!(s.next_runs().unwrap(), vec![(JOB.to_owned(), start, true)]);
    let mut ev = s.subscribe();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(s.run(async move {
        let _ = stopped.await;
    }));

    let tomorrow = t(2026, 3, 9, 3, 0, 0);
    let mut got = Vec::new();
    loop {
        let e = next_event(&mut ev).await;
        let done = e
            == Event::NextRun {
                job: JOB.into(),
                at: tomorrow,
            };
        got.push(e);
        if done {
            break;
        }
    }
    let started: Vec<_> = got
        .iter()
        .filter_map(|e| match e {
            Event::Started { scheduled_for, .. } => Some(*scheduled_for),
            _ => None,
        })
        .collect();
    assert_eq!(started, vec![start], "one catch-up run, at once: {got:?}");

    for day in 0..3 {
        parked(&clock, 1).await;
        let fire = tomorrow + chrono::Duration::days(day);
        assert_eq!(clock.advance_to_next_deadline(), Some(fire));
        assert!(
            matches!(next_event(&mut ev).await, Event::Started { scheduled_for, .. } if scheduled_for == fire)
        );
        assert!(matches!(
            next_event(&mut ev).await,
            Event::Finished {
                status: RunStatus::Ok,
                ..
            }
        ));
        assert!(matches!(next_event(&mut ev).await, Event::NextRun { .. }));
    }
    stop.send(()).unwrap();
    assert_eq!(task.await.unwrap().started, 4);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            start,
            tomorrow,
            tomorrow + chrono::Duration::days(1),
            tomorrow + chrono::Duration::days(2)
        ]
    );
    assert_eq!(store.runs(JOB, 100).unwrap().len(), 5);
    assert_eq!(
        store.last_success(JOB).unwrap(),
        Some(tomorrow + chrono::Duration::days(2))
    );
}

#[test]
fn bad_cron_expression_is_a_clear_error() {
    for expr in ["0 61 * * *", "every day", "", "0 0 3 * * * * *"] {
        let err = JobSpec::new("crawl", expr).unwrap_err();
        assert!(
            matches!(err, ScheduleError::BadCron { .. }),
            "{expr:?}: {err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains("\"crawl\""), "names the job: {msg}");
        assert!(
            msg.contains(&format!("{expr:?}")),
            "quotes the expression: {msg}"
        );
        assert!(msg.contains("sec min hour"), "says what is expected: {msg}");
    }
}
