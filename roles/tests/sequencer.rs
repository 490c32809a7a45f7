//! The sequencer's batch against the real test PostgreSQL (the queue) and a log: hand-offs are
//! logged in run and key order, an entry handed on again (a sequencer that died between its
//! append and marking the hand-offs taken) is logged once, and a hand-off that is not an entry
//! is dropped without stalling the rest.

use std::time::Duration;

use toolmark_log::Log;
use toolmark_log::entry::{Entry, Status, Subject};
use toolmark_queue::{NewJob, Queue};
use toolmark_roles::cluster::sequence_once;

fn entry(target: &str) -> Entry {
    Entry {
        subject: Subject {
            server: "io.example/server".into(),
            target: target.into(),
            package: None,
        },
        observed_at: "2026-12-06T05:00:00Z".into(),
        status: Status::new("connect").unwrap(),
        detail: Some("connection refused".into()),
        mtl1: None,
        full: None,
        tools: None,
        tool_index: None,
        surface: None,
        second: None,
        raw: None,
        prev: None,
    }
}

/// A queue of `keys` jobs of `run`, each completed with `body(key)` as its hand-off.
fn completed(db: &str, run: &str, keys: &[&str], body: impl Fn(&str) -> Vec<u8>) -> Queue {
    let mut q = Queue::connect(db, "worker").unwrap();
    let jobs: Vec<NewJob> = keys
        .iter()
        .map(|k| NewJob {
            kind: "remote".into(),
            key: (*k).into(),
            payload: "{}".into(),
        })
        .collect();
    q.enqueue(run, &jobs).unwrap();
    for c in q.claim(&["remote"], 10, Duration::from_secs(60)).unwrap() {
        q.complete(&c, "ok", Some(&body(&c.key))).unwrap();
    }
    q
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sequencer-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn handoffs_are_logged_in_key_order_and_an_entry_handed_on_again_is_logged_once() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let url = |k: &str| format!("https://{k}.example.com/mcp");
    let body = |k: &str| entry(&url(k)).encode().unwrap();
    let mut queue = completed(db.url(), "run-1", &["c", "a", "b"], body);
    let dir = scratch("once");
    let mut log = Log::init(&dir, "toolmark.test/log").unwrap();
    assert_eq!(sequence_once(&mut queue, &mut log).unwrap(), 3);
    let targets: Vec<String> = (0..3)
        .map(|i| {
            Entry::decode(&log.entry(i).unwrap())
                .unwrap()
                .subject
                .target
        })
        .collect();
    assert_eq!(targets, [url("a"), url("b"), url("c")]);
    // The same entries handed on again (a sequencer appended them and died before marking
    // them taken; here, jobs of another run carrying them): logged once.
    let mut again = completed(db.url(), "run-2", &["a", "b", "c"], body);
    assert_eq!(sequence_once(&mut again, &mut log).unwrap(), 3);
    assert_eq!(log.head().size, 3);
    assert!(again.handoffs(10).unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_handoff_that_is_not_an_entry_does_not_stall_the_log() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let mut queue = completed(db.url(), "run", &["bad", "good"], |k| match k {
        "bad" => b"not an entry".to_vec(),
        k => entry(&format!("https://{k}.example.com/mcp"))
            .encode()
            .unwrap(),
    });
    let dir = scratch("bad");
    let mut log = Log::init(&dir, "toolmark.test/log").unwrap();
    assert_eq!(sequence_once(&mut queue, &mut log).unwrap(), 2);
    assert_eq!(log.head().size, 1);
    assert!(queue.handoffs(10).unwrap().is_empty());
    assert_eq!(sequence_once(&mut queue, &mut log).unwrap(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The value of `metric` in the `/metrics` at `base` (0 when absent).
fn metric(base: &str, metric: &str) -> f64 {
    let text = ureq::get(&format!("{base}/metrics"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{metric} ")))
        .map_or(0.0, |v| v.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_active_sequencer_re_signs_an_idle_log_on_the_heartbeat() {
    let Some(db) = toolmark_standins::services::postgres().unwrap() else {
        return;
    };
    let data = scratch("heartbeat");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = toolmark_config::Config {
        data: data.clone(),
        listen: format!("127.0.0.1:{port}").parse().unwrap(),
        ..Default::default()
    };
    config.storage.head = db.url().to_owned();
    config.schedules.heartbeat = "* * * * * *".into();
    let stop = toolmark_roles::Stop::new();
    let sequencer = tokio::spawn(toolmark_roles::cluster::run_sequencer(config, stop.clone()));
    let base = format!("http://127.0.0.1:{port}");
    let beats = "toolmark_role_events_total{role=\"sequencer\",event=\"heartbeats\"}";
    let mut counted = 0.0;
    // Bounded: 100 looks over at most about 10 s; one beat a second.
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let b = base.clone();
        counted = tokio::task::spawn_blocking(move || {
            std::panic::catch_unwind(|| metric(&b, beats)).unwrap_or(0.0)
        })
        .await
        .unwrap();
        if counted >= 2.0 {
            break;
        }
    }
    stop.cancel();
    sequencer.await.unwrap().unwrap();
    assert!(counted >= 2.0, "{counted} heartbeats");
}
