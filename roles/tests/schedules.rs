//! The cluster's schedule store (`toolmark_roles::schedules::SharedSchedules` over
//! `toolmark_queue::schedules`, a real PostgreSQL) keeps the single box's lease contract across
//! schedulers on different connections: one holds a job's lease at a time, a run one finished
//! serves the fire time for the others, an expired holder's run is marked interrupted and its
//! late renewal and finish are refused, and concurrent first acquisitions give one lease.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use toolmark_roles::schedules::SharedSchedules;
use toolmark_roles::shared::Db;
use toolmark_schedules::{Acquire, RunStart, RunStatus, ScheduleStore};

const LEASE: Duration = Duration::from_secs(10);

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
}

fn first(scheduled_for: DateTime<Utc>) -> RunStart {
    RunStart {
        attempt: 1,
        scheduled_for,
    }
}

fn store(url: &str, who: &str) -> SharedSchedules {
    SharedSchedules::new(Arc::new(Db::connect(url, who).unwrap()))
}

fn run_id(a: Acquire) -> i64 {
    match a {
        Acquire::Acquired { run_id } => run_id,
        other => panic!("not acquired: {other:?}"),
    }
}

#[test]
fn schedulers_share_one_lease_and_one_run_history_per_job() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let (a, b) = (store(db.url(), "sched-a"), store(db.url(), "sched-b"));
    let run = run_id(
        a.try_acquire("crawl", "a", at(0), LEASE, first(at(0)))
            .unwrap(),
    );
    assert_eq!(
        b.try_acquire("crawl", "b", at(1), LEASE, first(at(0)))
            .unwrap(),
        Acquire::Held {
            holder: "a".into(),
            expires_at: at(10)
        }
    );
    assert!(a.renew("crawl", "a", run, at(5), LEASE).unwrap());
    assert!(
        a.finish(
            "crawl",
            "a",
            run,
            at(8),
            RunStatus::Ok,
            "run crawl-1: 3 targets"
        )
        .unwrap()
    );
    // The fire time a's run served is served for b too; b's catch-up sees a's success.
    assert_eq!(
        b.try_acquire("crawl", "b", at(9), LEASE, first(at(0)))
            .unwrap(),
        Acquire::AlreadyServed { finished_at: at(8) }
    );
    assert_eq!(b.last_success("crawl").unwrap(), Some(at(0)));
    assert_eq!(b.last_success_finished("crawl").unwrap(), Some(at(8)));
    // The next fire time is b's to take; another job's lease is another's.
    run_id(
        b.try_acquire("crawl", "b", at(60), LEASE, first(at(60)))
            .unwrap(),
    );
    run_id(
        a.try_acquire("sweep", "a", at(60), LEASE, first(at(60)))
            .unwrap(),
    );
}

#[test]
fn an_expired_holders_run_is_interrupted_and_its_late_calls_refused() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let (a, b) = (store(db.url(), "sched-a"), store(db.url(), "sched-b"));
    let dead = run_id(
        a.try_acquire("crawl", "a", at(0), LEASE, first(at(0)))
            .unwrap(),
    );
    // a stalls past its lease: b takes the job over.
    let taken = run_id(
        b.try_acquire("crawl", "b", at(20), LEASE, first(at(0)))
            .unwrap(),
    );
    assert_ne!(dead, taken);
    let mut sql = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
    let status = |sql: &mut postgres::Client| -> (String, String) {
        let row = sql
            .query_one(
                "SELECT status, detail FROM schedule_runs WHERE id = $1",
                &[&dead],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    let (interrupted, why) = status(&mut sql);
    assert_eq!(interrupted, "interrupted");
    assert!(why.contains("taken over by \"b\""), "{why}");
    assert!(!a.renew("crawl", "a", dead, at(21), LEASE).unwrap());
    assert!(
        !a.finish("crawl", "a", dead, at(22), RunStatus::Ok, "late")
            .unwrap()
    );
    // The late finish records what really happened, saying the lease had been lost.
    let (late, why) = status(&mut sql);
    assert_eq!(late, "ok");
    assert!(why.contains("lease had been lost"), "{why}");
    assert!(
        b.finish("crawl", "b", taken, at(25), RunStatus::Failed, "boom")
            .unwrap()
    );
    assert_eq!(b.last_success("crawl").unwrap(), Some(at(0)), "a's late ok");
}

#[test]
fn concurrent_first_acquisitions_give_one_lease() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let url = db.url().to_owned();
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let (url, barrier) = (url.clone(), barrier.clone());
            std::thread::spawn(move || {
                let s = store(&url, &format!("sched-{i}"));
                barrier.wait();
                s.try_acquire("crawl", &format!("h{i}"), at(0), LEASE, first(at(0)))
                    .unwrap()
            })
        })
        .collect();
    let answers: Vec<Acquire> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let acquired = answers
        .iter()
        .filter(|a| matches!(a, Acquire::Acquired { .. }))
        .count();
    assert_eq!(acquired, 1, "{answers:?}");
}
