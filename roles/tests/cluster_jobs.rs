//! The cluster's runs as an API replica's job states (`toolmark_roles::api::cluster_jobs`, what
//! `/health` shows under `jobs`), read from the queue in a real PostgreSQL.

use std::sync::Arc;
use std::time::Duration;

use toolmark_queue::{NewJob, Queue};
use toolmark_roles::shared::Db;
use toolmark_schedules::RunStatus;

fn job(kind: &str, key: &str) -> NewJob {
    NewJob {
        kind: kind.into(),
        key: key.into(),
        payload: "{}".into(),
    }
}

#[test]
fn a_crawl_runs_while_jobs_are_open_and_is_ok_when_all_are_done() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let mut q = Queue::connect(db.url(), "worker@test").unwrap();
    q.enqueue("crawl-1", &[job("remote", "a"), job("remote", "b")])
        .unwrap();
    q.enqueue("webhooks-1", &[job("webhooks", "webhooks")])
        .unwrap();
    let lease = Duration::from_secs(30);
    for c in q.claim(&["remote", "webhooks"], 3, lease).unwrap() {
        if c.key != "b" {
            q.complete(&c, "done", None).unwrap();
        }
    }
    // Read through a fresh state each time (the states are kept for a few seconds).
    let states = |db: &str| {
        let read =
            toolmark_roles::api::cluster_jobs(Arc::new(Db::connect(db, "api@test").unwrap()));
        std::thread::scope(|s| s.spawn(|| read().unwrap()).join().unwrap())
    };
    let now = states(db.url());
    let crawl = now.iter().find(|s| s.job == "crawl").unwrap();
    assert_eq!(crawl.last.status, RunStatus::Running);
    assert!(crawl.last_finished.is_none() && crawl.last_success.is_none());
    assert!(
        crawl
            .last
            .detail
            .as_deref()
            .unwrap()
            .contains("crawl-1: 1 jobs open")
    );
    let hooks = now.iter().find(|s| s.job == "webhooks").unwrap();
    assert_eq!(hooks.last.status, RunStatus::Ok);
    assert!(hooks.last_success.is_some());

    let rest = q.claim(&["remote"], 1, lease);
    // `b` is claimed already: complete that claim through its holder's connection.
    assert!(rest.unwrap().is_empty());
    let mut c = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
    c.execute(
        "UPDATE queue_jobs SET state = 'done', finished_at = now() WHERE key = 'b'",
        &[],
    )
    .unwrap();
    let later = states(db.url());
    let crawl = later.iter().find(|s| s.job == "crawl").unwrap();
    assert_eq!(crawl.last.status, RunStatus::Ok);
    assert!(crawl.last.finished_at.is_some());
    assert_eq!(crawl.last_finished.as_ref().unwrap().status, RunStatus::Ok);
}

#[test]
fn the_scheduler_enqueues_a_popularity_refresh_on_its_schedule_one_at_a_time() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("toolmark-scheduler-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = toolmark_config::Config {
        data: dir.clone(),
        ..toolmark_config::Config::default()
    };
    config.storage.head = db.url().to_owned();
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.schedules.crawl = String::new();
    config.schedules.package_sweep = String::new();
    config.schedules.popularity = "* * * * * *".into();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let stop = toolmark_roles::Stop::new();
    let scheduler = runtime.spawn(toolmark_roles::cluster::run_scheduler(config, stop.clone()));
    let mut q = Queue::connect(db.url(), "test").unwrap();
    let popularity = |q: &mut Queue| q.open_keys("popularity").unwrap().len();
    let mut waited = 0;
    while popularity(&mut q) == 0 {
        assert!(waited < 300, "no popularity job within 30 s");
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    // Fire times go on every second; the open job is not enqueued again.
    std::thread::sleep(Duration::from_secs(3));
    let jobs: i64 = postgres::Client::connect(db.url(), postgres::NoTls)
        .unwrap()
        .query_one(
            "SELECT count(*) FROM queue_jobs WHERE kind = 'popularity'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(jobs, 1);
    stop.cancel();
    runtime.block_on(scheduler).unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
