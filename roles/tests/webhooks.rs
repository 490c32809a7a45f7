//! Webhook passes in a cluster (`toolmark_roles::cluster::webhooks`) over a real PostgreSQL:
//! the scheduler enqueues one pass at a time; a replica claims it, makes it with the delivery
//! state in the database and completes it; a pass another replica is making completes the job
//! without delivering twice. (Delivery itself over the shared state — the cursor, the back-off,
//! the lease — is tested against a real HTTPS receiver in webhooks/tests/delivery.rs.)

use std::time::Duration;

use toolmark_queue::{Queue, WEBHOOKS_LEASE};
use toolmark_roles::cluster::webhooks::{Deliveries, WEBHOOKS, enqueue_pass};
use toolmark_webhooks::{Deliverer, Subscription};

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolmark-webhooks-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A replica's passes over an index with no events yet, one subscription.
fn deliveries(db: &str, tag: &str) -> Deliveries {
    let data = toolmark_index::DataDir::new(scratch(tag));
    toolmark_index::Index::open(&data.index_path()).unwrap();
    let deliverer = Deliverer::new(
        &data,
        ed25519_dalek::SigningKey::from_bytes(&[7; 32]),
        "https://toolmark.test/api/v1/issuer".into(),
        vec![Subscription {
            id: "soc".into(),
            url: "https://receiver.example/hook".into(),
            secret: vec![1; 32],
            watch: None,
        }],
        toolmark_outbound::Outbound::default(),
    );
    Deliveries::new(
        db,
        &format!("api@{tag}"),
        deliverer,
        Duration::from_secs(30),
    )
}

fn states(db: &str) -> Vec<(String, String)> {
    let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
    c.query(
        "SELECT run, state FROM queue_jobs WHERE kind = 'webhooks' ORDER BY id",
        &[],
    )
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect()
}

#[test]
fn a_pass_is_enqueued_once_while_one_is_open_and_a_replica_makes_it() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let mut queue = Queue::connect(db.url(), "scheduler@test").unwrap();
    assert_eq!(enqueue_pass(&mut queue, "webhooks-10:00").unwrap(), 1);
    assert_eq!(
        enqueue_pass(&mut queue, "webhooks-10:01").unwrap(),
        0,
        "a pass is still waiting"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let replica = deliveries(db.url(), "a");
    let stop = toolmark_roles::Stop::new();
    let mut mine = Queue::connect(db.url(), "api@a").unwrap();
    assert!(
        replica
            .pass_once(&mut mine, runtime.handle(), &stop)
            .unwrap()
    );
    assert!(
        !replica
            .pass_once(&mut mine, runtime.handle(), &stop)
            .unwrap(),
        "none left"
    );
    assert_eq!(
        states(db.url()),
        vec![("webhooks-10:00".into(), "done".into())]
    );
    // The subscription's state is in the database, and the pass gave its lease back.
    let state = queue.webhook("soc").unwrap().unwrap();
    assert_eq!(state.cursor, 0);
    assert!(queue.hold(WEBHOOKS_LEASE, Duration::from_secs(5)).unwrap());
    queue.release(WEBHOOKS_LEASE).unwrap();
    assert_eq!(enqueue_pass(&mut queue, "webhooks-10:02").unwrap(), 1);
    assert_eq!(WEBHOOKS, "webhooks");
}

#[test]
fn a_pass_while_another_replica_delivers_completes_without_delivering() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let mut other = Queue::connect(db.url(), "api@other").unwrap();
    assert!(other.hold(WEBHOOKS_LEASE, Duration::from_secs(60)).unwrap());
    let mut queue = Queue::connect(db.url(), "scheduler@test").unwrap();
    enqueue_pass(&mut queue, "webhooks-10:00").unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let replica = deliveries(db.url(), "b");
    let mut mine = Queue::connect(db.url(), "api@b").unwrap();
    assert!(
        replica
            .pass_once(&mut mine, runtime.handle(), &toolmark_roles::Stop::new())
            .unwrap()
    );
    assert_eq!(
        states(db.url()),
        vec![("webhooks-10:00".into(), "done".into())]
    );
    assert!(
        queue.webhook("soc").unwrap().is_none(),
        "the refused pass touched no subscription"
    );
    let result: String = postgres::Client::connect(db.url(), postgres::NoTls)
        .unwrap()
        .query_one("SELECT result FROM queue_jobs WHERE kind = 'webhooks'", &[])
        .unwrap()
        .get(0);
    assert!(
        result.starts_with("another replica is delivering"),
        "{result}"
    );
}
