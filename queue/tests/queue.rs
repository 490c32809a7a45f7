//! The queue against the real test PostgreSQL (scripts/postgres; skipped when
//! `TOOLMARK_TEST_POSTGRES` is not set outside CI): each test has a database of its own.

use std::collections::BTreeSet;
use std::time::Duration;

use toolmark_queue::{Failed, MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, NewJob, Queue, QueueError};
use toolmark_standins::services::Database;

const MINUTE: Duration = Duration::from_secs(60);

fn database() -> Option<Database> {
    toolmark_standins::services::postgres().expect("the test PostgreSQL")
}

fn jobs(keys: impl IntoIterator<Item = String>) -> Vec<NewJob> {
    keys.into_iter()
        .map(|key| NewJob {
            kind: "remote".into(),
            payload: format!("{{\"target\":\"{key}\"}}"),
            key,
        })
        .collect()
}

fn lost(r: Result<impl std::fmt::Debug, QueueError>) -> bool {
    matches!(r, Err(QueueError::Lost { .. }))
}

#[test]
fn a_job_is_enqueued_once_per_run_and_key() {
    let Some(db) = database() else { return };
    let mut q = Queue::connect(db.url(), "scheduler-1").unwrap();
    let first = jobs((0..5).map(|i| format!("t{i}")));
    assert_eq!(q.enqueue("run-1", &first).unwrap(), 5);
    // A second scheduler enqueueing the same run after a failover adds only what is new.
    let again = jobs((3..8).map(|i| format!("t{i}")));
    assert_eq!(q.enqueue("run-1", &again).unwrap(), 3);
    // The same key in another run is another job.
    assert_eq!(q.enqueue("run-2", &first[..1]).unwrap(), 1);
    assert_eq!(q.counts("run-1").unwrap().queued, 8);
    assert_eq!(q.counts("run-2").unwrap().queued, 1);
}

#[test]
fn concurrent_claimers_never_get_the_same_job() {
    let Some(db) = database() else { return };
    let mut q = Queue::connect(db.url(), "scheduler").unwrap();
    q.enqueue("run", &jobs((0..300).map(|i| format!("t{i:03}"))))
        .unwrap();
    let url = db.url().to_owned();
    let claimed: Vec<Vec<String>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let url = url.clone();
                s.spawn(move || {
                    let mut q = Queue::connect(&url, &format!("worker-{w}")).unwrap();
                    let mut mine = Vec::new();
                    // Bounded: 300 jobs in batches of 7 take at most 43 rounds per worker.
                    for _ in 0..100 {
                        let batch = q.claim(&["remote"], 7, MINUTE).unwrap();
                        if batch.is_empty() {
                            break;
                        }
                        for c in batch {
                            assert_eq!(c.attempt, 1);
                            q.complete(&c, "ok", None).unwrap();
                            mine.push(c.key);
                        }
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let all: Vec<&String> = claimed.iter().flatten().collect();
    let distinct: BTreeSet<&String> = all.iter().copied().collect();
    assert_eq!(all.len(), 300, "every job claimed once");
    assert_eq!(distinct.len(), 300, "no job claimed twice");
    assert_eq!(q.counts("run").unwrap().done, 300);
}

#[test]
fn a_lapsed_lease_returns_the_job_and_the_late_result_is_refused_with_its_handoff() {
    let Some(db) = database() else { return };
    let mut slow = Queue::connect(db.url(), "worker-slow").unwrap();
    let mut other = Queue::connect(db.url(), "worker-other").unwrap();
    slow.enqueue("run", &jobs(["t".to_owned()])).unwrap();
    // A lease of zero has lapsed by the next statement: the worker stalled past it.
    let stalled = slow
        .claim(&["remote"], 1, Duration::ZERO)
        .unwrap()
        .remove(0);
    assert_eq!(other.counts("run").unwrap().lapsed, 1);
    let taken = other.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    assert_eq!((taken.id, taken.attempt), (stalled.id, 2));
    // The stalled worker wakes and reports: refused, and its hand-off is not written.
    assert!(lost(slow.complete(
        &stalled,
        "late",
        Some(b"late observation")
    )));
    assert!(other.handoffs(10).unwrap().is_empty());
    other
        .complete(&taken, "ok", Some(b"the observation"))
        .unwrap();
    let handed = other.handoffs(10).unwrap();
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].body, b"the observation");
    // Nor can the stalled worker give the job back or renew it.
    assert!(lost(slow.fail(&stalled, "late", Duration::ZERO)));
    let mut stalled = stalled;
    assert!(lost(slow.renew(&mut stalled, MINUTE)));
}

#[test]
fn a_renewed_claim_stays_its_workers() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker-1").unwrap();
    let mut other = Queue::connect(db.url(), "worker-2").unwrap();
    w.enqueue("run", &jobs(["t".to_owned()])).unwrap();
    let mut c = w.claim(&["remote"], 1, Duration::ZERO).unwrap().remove(0);
    let lapsed_at = c.lease_until;
    w.renew(&mut c, MINUTE).unwrap();
    assert!(c.lease_until > lapsed_at);
    assert!(other.claim(&["remote"], 1, MINUTE).unwrap().is_empty());
    w.complete(&c, "ok", None).unwrap();
}

/// One statement renews every claim still current; a claim lost meanwhile (its lease lapsed
/// and another worker took the job) is named and left as it was.
#[test]
fn renewing_many_claims_at_once_keeps_the_current_ones_and_names_the_lost() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker-1").unwrap();
    let mut other = Queue::connect(db.url(), "worker-2").unwrap();
    w.enqueue("run", &jobs((0..4).map(|i| format!("t{i}"))))
        .unwrap();
    // Leases of zero: every claim has lapsed by the next statement.
    let mut held = w.claim(&["remote"], 4, Duration::ZERO).unwrap();
    assert_eq!(held.len(), 4);
    // Another worker takes one of the lapsed jobs before the renewal.
    let taken = other.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    let before: Vec<_> = held.iter().map(|c| c.lease_until).collect();
    let lost_jobs = w.renew_many(held.iter_mut(), MINUTE).unwrap();
    assert_eq!(lost_jobs, [taken.id]);
    for (c, at) in held.iter().zip(before) {
        if c.id == taken.id {
            assert_eq!(c.lease_until, at, "a lost claim is left as it was");
        } else {
            assert!(c.lease_until > at, "job {} renewed", c.id);
        }
    }
    // The renewed ones are this worker's: nobody else can claim them.
    assert!(other.claim(&["remote"], 4, MINUTE).unwrap().is_empty());
    for c in held.iter().filter(|c| c.id != taken.id) {
        w.complete(c, "ok", None).unwrap();
    }
    assert!(w.renew_many(std::iter::empty(), MINUTE).unwrap().is_empty());
}

#[test]
fn a_failed_job_is_retried_until_its_last_attempt() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    w.enqueue("run", &jobs(["t".to_owned()])).unwrap();
    for attempt in 1..=MAX_ATTEMPTS {
        let c = w.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
        assert_eq!(c.attempt, attempt);
        let expected = if attempt < MAX_ATTEMPTS {
            Failed::Retried
        } else {
            Failed::Failed
        };
        assert_eq!(
            w.fail(&c, "connection refused", Duration::ZERO).unwrap(),
            expected
        );
    }
    assert!(w.claim(&["remote"], 1, MINUTE).unwrap().is_empty());
    assert_eq!(w.counts("run").unwrap().failed, 1);
}

#[test]
fn a_retry_waits_for_its_delay() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    w.enqueue("run", &jobs(["t".to_owned()])).unwrap();
    let c = w.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    w.fail(&c, "429", MINUTE).unwrap();
    assert!(w.claim(&["remote"], 1, MINUTE).unwrap().is_empty());
    assert_eq!(w.counts("run").unwrap().queued, 1);
}

#[test]
fn a_job_whose_worker_dies_on_every_attempt_is_abandoned() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    w.enqueue("run", &jobs(["t".to_owned()])).unwrap();
    for attempt in 1..=MAX_ATTEMPTS {
        let c = w.claim(&["remote"], 1, Duration::ZERO).unwrap();
        assert_eq!(c[0].attempt, attempt);
    }
    assert!(w.claim(&["remote"], 1, MINUTE).unwrap().is_empty());
    let counts = w.counts("run").unwrap();
    assert_eq!((counts.abandoned, counts.lapsed), (1, 0));
}

#[test]
fn workers_claim_only_the_kinds_they_do() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    let mut mixed = jobs(["remote-1".to_owned()]);
    mixed.push(NewJob {
        kind: "package".into(),
        key: "npm:x@1".into(),
        payload: "{}".into(),
    });
    w.enqueue("run", &mixed).unwrap();
    let packages = w.claim(&["package"], 10, MINUTE).unwrap();
    assert_eq!(packages.len(), 1);
    assert_eq!(packages[0].key, "npm:x@1");
    assert_eq!(w.claim(&["remote"], 10, MINUTE).unwrap().len(), 1);
}

#[test]
fn handoffs_come_in_run_and_key_order_until_taken() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    w.enqueue("run", &jobs(["b", "a", "c"].map(str::to_owned)))
        .unwrap();
    // Finished in another order than their keys'.
    let mut claims = w.claim(&["remote"], 3, MINUTE).unwrap();
    claims.reverse();
    for c in &claims {
        w.complete(c, "ok", Some(c.key.as_bytes())).unwrap();
    }
    let handed = w.handoffs(10).unwrap();
    let keys: Vec<&str> = handed.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(keys, ["a", "b", "c"]);
    w.taken(&[handed[0].seq]).unwrap();
    assert_eq!(w.handoffs(10).unwrap().len(), 2);
}

#[test]
fn the_host_limit_holds_across_connections_and_lapsed_places_free_up() {
    let Some(db) = database() else { return };
    let mut w1 = Queue::connect(db.url(), "worker-1").unwrap();
    let mut w2 = Queue::connect(db.url(), "worker-2").unwrap();
    let a = w1.acquire_host("mcp.example", 2, MINUTE).unwrap().unwrap();
    let _b = w2.acquire_host("mcp.example", 2, MINUTE).unwrap().unwrap();
    assert!(w1.acquire_host("mcp.example", 2, MINUTE).unwrap().is_none());
    assert!(
        w2.acquire_host("other.example", 2, MINUTE)
            .unwrap()
            .is_some()
    );
    w1.release_host(a).unwrap();
    // A worker that dies holding a place: its lease lapses and the place is free again.
    let _dead = w2
        .acquire_host("mcp.example", 2, Duration::ZERO)
        .unwrap()
        .unwrap();
    assert!(w1.acquire_host("mcp.example", 2, MINUTE).unwrap().is_some());
    assert!(w1.acquire_host("mcp.example", 2, MINUTE).unwrap().is_none());
}

#[test]
fn the_host_limit_holds_under_concurrent_workers() {
    let Some(db) = database() else { return };
    let url = db.url().to_owned();
    let granted: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..6)
            .map(|w| {
                let url = url.clone();
                s.spawn(move || {
                    let mut q = Queue::connect(&url, &format!("worker-{w}")).unwrap();
                    (0..5)
                        .filter(|_| q.acquire_host("busy.example", 4, MINUTE).unwrap().is_some())
                        .count()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    assert_eq!(granted, 4, "30 asks, 4 places, none released");
}

#[test]
fn a_shared_rate_gives_its_burst_then_makes_every_caller_wait() {
    let Some(db) = database() else { return };
    let mut w1 = Queue::connect(db.url(), "worker-1").unwrap();
    let mut w2 = Queue::connect(db.url(), "worker-2").unwrap();
    // One request every 1,000 s, bursts of 3: the test never waits for a refill.
    let rate = 0.001;
    for _ in 0..2 {
        assert_eq!(w1.take_token("registry", rate, 3.0).unwrap(), None);
    }
    assert_eq!(w2.take_token("registry", rate, 3.0).unwrap(), None);
    let wait = w2.take_token("registry", rate, 3.0).unwrap().unwrap();
    assert!(wait > Duration::from_secs(900), "{wait:?}");
    assert!(w1.take_token("registry", rate, 3.0).unwrap().is_some());
    assert!(matches!(
        w1.take_token("registry", 0.0, 3.0),
        Err(QueueError::Refused(_))
    ));
}

#[test]
fn oversized_payloads_and_empty_claims_are_refused() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    let big = NewJob {
        kind: "remote".into(),
        key: "t".into(),
        payload: "x".repeat(MAX_PAYLOAD_BYTES + 1),
    };
    assert!(matches!(
        w.enqueue("run", &[big]),
        Err(QueueError::Refused(_))
    ));
    assert_eq!(w.counts("run").unwrap(), Default::default());
    assert!(matches!(
        w.claim(&["remote"], 0, MINUTE),
        Err(QueueError::Refused(_))
    ));
    w.enqueue("run", &jobs(["t".to_owned()])).unwrap();
    let c = w.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    let huge = vec![0u8; MAX_PAYLOAD_BYTES + 1];
    assert!(matches!(
        w.complete(&c, "ok", Some(&huge)),
        Err(QueueError::Refused(_))
    ));
    w.complete(&c, "ok", None).unwrap();
}

#[test]
fn a_database_that_is_not_there_is_a_named_error() {
    // Port 1 on loopback: nothing listens there.
    match Queue::connect("postgres://toolmark@127.0.0.1:1/none", "worker") {
        Err(QueueError::Postgres { url, .. }) => {
            assert_eq!(url, "postgres://toolmark@127.0.0.1:1/none")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("connected to nothing"),
    }
}

#[test]
fn a_deferred_job_is_not_an_attempt() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    w.enqueue("run", &jobs(["t".to_owned()])).unwrap();
    let c = w.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    w.defer(&c, Duration::ZERO).unwrap();
    let again = w.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    assert_eq!(again.attempt, 1);
    assert!(lost(w.defer(&c, Duration::ZERO)));
    let mut other = Queue::connect(db.url(), "other").unwrap();
    w.defer(&again, MINUTE).unwrap();
    assert!(other.claim(&["remote"], 1, MINUTE).unwrap().is_empty());
}

#[test]
fn one_holder_has_a_lease_until_it_lapses_or_is_released() {
    let Some(db) = database() else { return };
    let mut a = Queue::connect(db.url(), "sequencer-a").unwrap();
    let mut b = Queue::connect(db.url(), "sequencer-b").unwrap();
    assert!(a.hold("sequencer", MINUTE).unwrap());
    assert!(
        a.hold("sequencer", MINUTE).unwrap(),
        "renewed by its holder"
    );
    assert!(!b.hold("sequencer", MINUTE).unwrap());
    a.release("sequencer").unwrap();
    assert!(b.hold("sequencer", Duration::ZERO).unwrap());
    // b's lease has lapsed: a takes it over.
    assert!(a.hold("sequencer", MINUTE).unwrap());
    assert!(!b.hold("sequencer", MINUTE).unwrap());
    b.release("sequencer").unwrap();
    assert!(
        !b.hold("sequencer", MINUTE).unwrap(),
        "releasing another's lease does nothing"
    );
}

#[test]
fn pruning_removes_finished_jobs_and_taken_handoffs_but_keeps_what_is_still_owed() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    w.enqueue("run", &jobs(["a", "b", "c"].map(str::to_owned)))
        .unwrap();
    let claims = w.claim(&["remote"], 3, MINUTE).unwrap();
    // a: done, its hand-off taken; b: done, its hand-off not taken yet; c: still claimed.
    w.complete(&claims[0], "ok", Some(b"a")).unwrap();
    w.complete(&claims[1], "ok", Some(b"b")).unwrap();
    let taken: Vec<i64> = w
        .handoffs(10)
        .unwrap()
        .iter()
        .filter(|h| h.key == "a")
        .map(|h| h.seq)
        .collect();
    w.taken(&taken).unwrap();
    // Nothing is old enough yet.
    assert_eq!(w.prune(MINUTE).unwrap(), (0, 0));
    assert_eq!(w.prune(Duration::ZERO).unwrap(), (1, 1));
    let counts = w.counts("run").unwrap();
    assert_eq!((counts.done, counts.claimed), (1, 1));
    assert_eq!(w.handoffs(10).unwrap().len(), 1);
}

#[test]
fn the_overview_counts_jobs_by_state_lease_expiries_handoffs_and_host_places() {
    let Some(db) = database() else { return };
    let mut q = Queue::connect(db.url(), "worker").unwrap();
    q.enqueue("run", &jobs((0..3).map(|i| format!("t{i}"))))
        .unwrap();
    // One claim lapses (its worker stalled) and is claimed again: one lease expiry.
    let stalled = q.claim(&["remote"], 1, Duration::ZERO).unwrap().remove(0);
    let again = q.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    assert_eq!(again.id, stalled.id);
    q.complete(&again, "ok", Some(b"entry")).unwrap();
    let _held = q.acquire_host("mcp.example", 2, MINUTE).unwrap().unwrap();
    let o = q.overview().unwrap();
    assert_eq!(
        o.jobs,
        [
            ("remote".to_owned(), "done".to_owned(), 1),
            ("remote".to_owned(), "queued".to_owned(), 2),
        ]
    );
    assert_eq!(o.lease_expiries, [("remote".to_owned(), 1)]);
    assert_eq!((o.handoffs_waiting, o.host_places), (1, 1));
}

#[test]
fn a_note_is_kept_replaced_and_read_by_another_connection() {
    let Some(db) = database() else { return };
    let mut scheduler = Queue::connect(db.url(), "scheduler").unwrap();
    let mut worker = Queue::connect(db.url(), "worker").unwrap();
    assert_eq!(worker.note("snapshot").unwrap(), None);
    scheduler.set_note("snapshot", "sha256-a").unwrap();
    scheduler.set_note("snapshot", "sha256-b").unwrap();
    assert_eq!(
        worker.note("snapshot").unwrap().as_deref(),
        Some("sha256-b")
    );
    let huge = "x".repeat(MAX_PAYLOAD_BYTES + 1);
    assert!(matches!(
        scheduler.set_note("snapshot", &huge),
        Err(QueueError::Refused(_))
    ));
}

#[test]
fn open_keys_are_those_queued_or_claimed_in_any_run() {
    let Some(db) = database() else { return };
    let mut q = Queue::connect(db.url(), "scheduler").unwrap();
    q.enqueue("run-1", &jobs(["a".to_owned(), "b".to_owned()]))
        .unwrap();
    q.enqueue("run-2", &jobs(["c".to_owned()])).unwrap();
    let first = q.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    q.complete(&first, "ok", None).unwrap();
    let second = q.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
    assert_eq!((first.key.as_str(), second.key.as_str()), ("a", "b"));
    let open: Vec<String> = q.open_keys("remote").unwrap().into_iter().collect();
    assert_eq!(open, ["b", "c"]);
    assert!(q.open_keys("package").unwrap().is_empty());
}

/// A complete full harvest of `run`, recorded at 10:00 and delisting one server.
fn harvest(run: &str) -> toolmark_queue::Harvest {
    toolmark_queue::Harvest {
        seq: 0,
        run: run.into(),
        started_at: "2026-12-06T10:00:00Z".into(),
        registry: "https://registry.example".into(),
        snapshot: "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=".into(),
        complete: true,
        allow_cleartext: false,
        delisted: vec!["io.example/gone".into()],
        mode: "full".into(),
        next_since: "2026-12-06T09:55:00.000Z".into(),
        log_size: None,
        report: r#"{"servers":2}"#.into(),
    }
}

#[test]
fn a_harvest_takes_effect_below_the_size_the_sequencer_stamps_on_it() {
    let Some(db) = database() else { return };
    let mut q = Queue::connect(db.url(), "scheduler@test").unwrap();
    q.record_harvest(&harvest("crawl-1")).unwrap();
    q.record_harvest(&harvest("crawl-1")).unwrap();
    assert!(
        q.harvests_before(0, u64::MAX).unwrap().is_empty(),
        "not stamped yet: no size lists it"
    );
    assert_eq!(q.stamp_harvests(40).unwrap(), 1, "recorded once");
    assert!(
        q.harvests_before(0, 40).unwrap().is_empty(),
        "not at the stamped size itself"
    );
    let listed = q.harvests_before(0, 41).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].log_size, Some(40));
    assert_eq!(
        listed[0].report, r#"{"servers":2}"#,
        "the scheduler's report kept"
    );
    q.record_harvest(&harvest("crawl-2")).unwrap();
    assert_eq!(q.stamp_harvests(90).unwrap(), 1, "a stamp is never moved");
    let all = q.harvests_before(0, 91).unwrap();
    assert_eq!(
        all.iter().map(|h| h.run.as_str()).collect::<Vec<_>>(),
        ["crawl-1", "crawl-2"]
    );
    assert_eq!(
        q.harvests_before(all[0].seq, 91).unwrap().len(),
        1,
        "after the one applied"
    );
    assert_eq!(all[0].delisted, ["io.example/gone"]);
    let latest = q
        .latest_harvest("https://registry.example", true)
        .unwrap()
        .unwrap();
    assert_eq!(latest.run, "crawl-2");
    assert_eq!(latest.next_since, "2026-12-06T09:55:00.000Z");
    assert!(
        q.latest_harvest("https://other.example", false)
            .unwrap()
            .is_none()
    );
    assert_eq!(
        q.last_full_harvest("https://registry.example")
            .unwrap()
            .as_deref(),
        Some("2026-12-06T10:00:00Z")
    );
}

#[test]
fn a_harvest_stamped_below_an_older_one_waits_for_it() {
    let Some(db) = database() else { return };
    let mut q = Queue::connect(db.url(), "scheduler@test").unwrap();
    q.record_harvest(&harvest("crawl-1")).unwrap();
    q.stamp_harvests(50).unwrap();
    q.record_harvest(&harvest("crawl-2")).unwrap();
    // A sequencer whose head was behind stamps the newer harvest lower.
    q.stamp_harvests(40).unwrap();
    assert!(
        q.harvests_before(0, 45).unwrap().is_empty(),
        "the newer harvest is not listed before the older one"
    );
    let runs: Vec<String> = q
        .harvests_before(0, 51)
        .unwrap()
        .into_iter()
        .map(|h| h.run)
        .collect();
    assert_eq!(runs, ["crawl-1", "crawl-2"]);
}

#[test]
fn a_runs_outcome_counts_its_open_failed_and_unlogged_jobs_and_gives_its_results() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    w.enqueue("run", &jobs(["a", "b", "c", "d"].map(str::to_owned)))
        .unwrap();
    let mut claims = w.claim(&["remote"], 4, MINUTE).unwrap();
    let open = claims.pop().unwrap();
    let status = |s: &str| format!(r#"{{"server":"x","status":"{s}"}}"#);
    w.complete(&claims[0], &status("ok"), Some(b"entry a"))
        .unwrap();
    w.complete(&claims[1], &status("ok"), None).unwrap();
    w.complete(&claims[2], &status("timeout"), Some(b"entry c"))
        .unwrap();
    let outcome = w.run_outcome("run", "remote").unwrap();
    assert_eq!(
        (outcome.jobs, outcome.open, outcome.failed, outcome.unlogged),
        (4, 1, 0, 2)
    );
    assert_eq!(
        w.run_results("run", "remote").unwrap(),
        [status("ok"), status("ok"), status("timeout")],
        "the finished jobs' results, in job order"
    );
    assert!(outcome.finished.is_some() && outcome.started <= outcome.finished);
    assert!(w.run_open("run", "remote").unwrap());
    w.fail(&open, "refused", Duration::ZERO).unwrap();
    for _ in 2..=MAX_ATTEMPTS {
        let c = w.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
        w.fail(&c, "refused", Duration::ZERO).unwrap();
    }
    let seqs: Vec<i64> = w.handoffs(10).unwrap().iter().map(|h| h.seq).collect();
    w.taken(&seqs).unwrap();
    let ended = w.run_outcome("run", "remote").unwrap();
    assert_eq!((ended.open, ended.failed, ended.unlogged), (0, 1, 0));
    assert!(!w.run_open("run", "remote").unwrap());
    assert_eq!(
        w.run_outcome("run", "package").unwrap().jobs,
        0,
        "another kind"
    );
}

#[test]
fn runs_are_listed_newest_first_with_their_open_and_failed_jobs_and_reopen_when_jobs_are_added() {
    let Some(db) = database() else { return };
    let mut w = Queue::connect(db.url(), "worker").unwrap();
    w.enqueue("run-1", &jobs(["a", "b"].map(str::to_owned)))
        .unwrap();
    for c in w.claim(&["remote"], 2, MINUTE).unwrap() {
        w.complete(&c, "ok", None).unwrap();
    }
    std::thread::sleep(Duration::from_millis(20));
    w.enqueue("run-2", &jobs(["a".to_owned()])).unwrap();
    let runs = w.runs(10).unwrap();
    let seen: Vec<(&str, u64, u64, bool)> = runs
        .iter()
        .map(|r| (r.run.as_str(), r.open, r.failed, r.finished.is_some()))
        .collect();
    assert_eq!(seen, [("run-2", 1, 0, false), ("run-1", 0, 0, true)]);
    // Read again: run-1's summary is the one kept.
    assert_eq!(w.runs(10).unwrap()[1].finished, runs[1].finished);
    assert_eq!(w.runs(1).unwrap().len(), 1, "at most per_kind of a kind");
    // A job added to the ended run opens it again.
    w.enqueue("run-1", &jobs(["c".to_owned()])).unwrap();
    let again = w.runs(10).unwrap();
    assert_eq!((again[1].run.as_str(), again[1].open), ("run-1", 1));
    // Claims come oldest first: run-1's new job is after run-2's.
    let claims = w.claim(&["remote"], 2, MINUTE).unwrap();
    assert_eq!(claims.len(), 2);
    for c in claims {
        if c.key == "c" {
            w.complete(&c, "ok", None).unwrap();
        } else {
            let mut c = c;
            loop {
                if w.fail(&c, "refused", Duration::ZERO).unwrap() == Failed::Failed {
                    break;
                }
                c = w.claim(&["remote"], 1, MINUTE).unwrap().remove(0);
            }
        }
    }
    let ended = w.runs(10).unwrap();
    let seen: Vec<(&str, u64, u64)> = ended
        .iter()
        .map(|r| (r.run.as_str(), r.open, r.failed))
        .collect();
    assert_eq!(seen, [("run-2", 0, 1), ("run-1", 0, 0)]);
    assert!(
        ended[1].finished > runs[1].finished,
        "run-1 counted again when it ended again"
    );
}
