//! The worker against the real test PostgreSQL (the queue), a registry stand-in and a fleet of
//! stand-in MCP servers on loopback: a job whose host is full waits in the worker, claimed,
//! instead of going back to the queue, a place one job is done with goes to the host's next
//! job in the worker, and every job is observed and completed in one pass.

use std::time::Duration;

use toolmark_config::Config;
use toolmark_queue::Queue;
use toolmark_roles::Stop;
use toolmark_roles::cluster::{Worker, enqueue_crawl};
use toolmark_standins::fleet::{Fleet, FleetSpec};
use toolmark_standins::registry::RegistryStandIn;

/// A fresh data directory named `tag` and the configuration of a cluster over the queue at
/// `db`, crawling `registry`.
fn config(tag: &str, registry: &str, db: &str) -> (std::path::PathBuf, Config) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = Config {
        data: dir.clone(),
        registry: registry.to_owned(),
        ..Config::default()
    };
    config.storage.head = db.to_owned();
    (dir, config)
}

/// A registry item of one server with one streamable-HTTP remote, published 2025-12-17.
fn item(name: &str, url: &str) -> serde_json::Value {
    serde_json::json!({
        "server": {"name": name, "description": "t", "version": "1.0.0",
            "remotes": [{"type": "streamable-http", "url": url}]},
        "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active",
            "publishedAt": "2025-12-17T00:00:00Z", "updatedAt": "2025-12-17T00:00:00Z",
            "isLatest": true}},
    })
}

/// A fleet of `hosts` × `endpoints` stand-ins (each request `latency_ms`), the registry
/// listing them, and one crawl run of them enqueued under `per_host` places a host: what the
/// worker tests observe.
struct FleetRun {
    runtime: tokio::runtime::Runtime,
    fleet: Fleet,
    dir: std::path::PathBuf,
    config: Config,
    data: toolmark_index::DataDir,
    stop: Stop,
    targets: usize,
    _registry: RegistryStandIn,
}

impl FleetRun {
    fn start(
        db: &str,
        tag: &str,
        (hosts, endpoints): (usize, usize),
        latency_ms: u64,
        per_host: usize,
    ) -> FleetRun {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let fleet = runtime
            .block_on(Fleet::start(FleetSpec {
                hosts,
                endpoints_per_host: endpoints,
                latency: (
                    Duration::from_millis(latency_ms),
                    Duration::from_millis(latency_ms),
                ),
                seed: 1,
                tool_sets: vec![r#"{"tools": []}"#.into()],
            }))
            .unwrap();
        let registry = runtime
            .block_on(RegistryStandIn::start(fleet.registry_items(1)))
            .unwrap();
        let (dir, mut config) = config(tag, &registry.url(), db);
        config.crawl.allow_private = true;
        config.crawl.per_host = per_host;
        let data = toolmark_roles::jobs::data_dir(&config);
        std::fs::create_dir_all(data.root()).unwrap();
        let stop = Stop::new();
        let mut queue = Queue::connect(db, "test-scheduler").unwrap();
        let blobs = data.blobs().unwrap();
        let targets = enqueue_crawl(
            runtime.handle(),
            &config,
            &blobs,
            &mut queue,
            Some("run-1".into()),
            &stop,
        )
        .unwrap()
        .targets;
        FleetRun {
            runtime,
            fleet,
            dir,
            config,
            data,
            stop,
            targets,
            _registry: registry,
        }
    }

    fn end(self) {
        self.runtime
            .block_on(self.fleet.shutdown(Duration::from_secs(2)));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_job_whose_host_is_full_waits_in_the_worker_and_is_claimed_once() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    // Three hosts of four endpoints: with two places a host, half of each host's jobs find it
    // full when the worker first claims them.
    let run = FleetRun::start(db.url(), "worker", (3, 4), 100, 2);
    assert_eq!(run.targets, 12);

    let mut worker = Worker::new(&run.config, &run.data, &run.stop).unwrap();
    let done = worker.work_once(run.runtime.handle()).unwrap();
    assert_eq!(done, 12, "one pass observes and completes every job");
    assert_eq!(worker.work_once(run.runtime.handle()).unwrap(), 0);
    let mut client = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
    let rows = client
        .query(
            "SELECT state, claims, count(*) FROM queue_jobs GROUP BY state, claims",
            &[],
        )
        .unwrap();
    let states: Vec<(String, i32, i64)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(
        states,
        [("done".to_owned(), 1, 12)],
        "every job done on its first claim (none given back while its host was full)"
    );
    // Each listed twice: its listing and the second look.
    assert_eq!(run.fleet.requests().tools_list, 24);
    drop(client);
    run.end();
}

/// One host of five endpoints and one place on it: the worker takes the place from the queue
/// once, and each observation that is done with it hands it straight to the host's next job
/// waiting in the worker (no `acquire_host` between them); at the end it is given back.
#[test]
fn a_place_freed_by_a_job_goes_to_the_same_hosts_next_waiting_job_without_a_round_trip() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let run = FleetRun::start(db.url(), "worker-handoff", (1, 5), 50, 1);
    assert_eq!(run.targets, 5);

    let mut worker = Worker::new(&run.config, &run.data, &run.stop).unwrap();
    assert_eq!(worker.work_once(run.runtime.handle()).unwrap(), 5);
    let mut client = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
    // Every place ever taken from the queue has an id from this sequence.
    let taken: i64 = client
        .query_one(
            "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM queue_host_slots_id_seq",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        taken, 1,
        "the one place was taken once and handed on four times"
    );
    let held: i64 = client
        .query_one("SELECT count(*) FROM queue_host_slots", &[])
        .unwrap()
        .get(0);
    assert_eq!(held, 0, "and given back at the end");
    // Two sessions each (the listing's and the second look's), each ended.
    assert_eq!(run.fleet.requests().tools_list, 10);
    assert_eq!(run.fleet.requests().closed, 10);
    drop(client);
    run.end();
}

#[test]
fn the_busiest_hosts_jobs_are_enqueued_first() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Hosts of 1, 3 and 2 remotes, listed in name order a, b, c.
    let urls = [
        "https://a.example/mcp",
        "https://b.example/mcp/0",
        "https://b.example/mcp/1",
        "https://b.example/mcp/2",
        "https://c.example/mcp/0",
        "https://c.example/mcp/1",
    ];
    let items: Vec<serde_json::Value> = urls
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let host = &u[8..9];
            serde_json::json!({
                "server": {"name": format!("test.{host}/server-{i}"), "description": "t",
                    "version": "1.0.0", "remotes": [{"type": "streamable-http", "url": u}]},
                "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active",
                    "publishedAt": "2025-12-17T00:00:00Z", "updatedAt": "2025-12-17T00:00:00Z",
                    "isLatest": true}},
            })
        })
        .collect();
    let registry = runtime
        .block_on(RegistryStandIn::start(items.clone()))
        .unwrap();
    let (dir, config) = config("worker-order", &registry.url(), db.url());
    let data = toolmark_roles::jobs::data_dir(&config);
    std::fs::create_dir_all(data.root()).unwrap();
    let mut queue = Queue::connect(db.url(), "test-scheduler").unwrap();
    let blobs = data.blobs().unwrap();
    enqueue_crawl(
        runtime.handle(),
        &config,
        &blobs,
        &mut queue,
        Some("run-1".into()),
        &Stop::new(),
    )
    .unwrap();
    // Which host each job's target is on, by the targets the snapshot gives.
    let page = toolmark_observation::registry::parse_snapshot(
        serde_json::to_string(&items).unwrap().as_bytes(),
    )
    .unwrap();
    let input = toolmark_index::RunInput {
        started_at: "2026-12-06T00:00:00Z".into(),
        registry: registry.url(),
        records: toolmark_observation::registry::latest_per_name(page.servers),
        harvest_complete: true,
        delisted: Vec::new(),
        allow_cleartext: false,
    };
    let host_of: std::collections::HashMap<String, String> = input
        .targets()
        .iter()
        .map(|t| {
            let host = t
                .server
                .split('/')
                .next()
                .unwrap()
                .trim_start_matches("test.");
            (toolmark_index::record::target_id(t), host.to_owned())
        })
        .collect();
    let claimed: Vec<String> = queue
        .claim(&["remote"], 10, Duration::from_secs(60))
        .unwrap()
        .iter()
        .map(|c| host_of[&c.key].clone())
        .collect();
    assert_eq!(claimed, ["b", "b", "b", "c", "c", "a"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_delta_harvest_is_merged_into_the_last_complete_one_and_delists_what_was_deleted() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = runtime
        .block_on(RegistryStandIn::start(vec![
            item("test.a/server", "https://a.example/mcp"),
            item("test.b/server", "https://b.example/mcp"),
        ]))
        .unwrap();
    let (_dir, config) = config("worker-delta", &registry.url(), db.url());
    let data = toolmark_roles::jobs::data_dir(&config);
    std::fs::create_dir_all(data.root()).unwrap();
    let blobs = data.blobs().unwrap();
    let mut queue = Queue::connect(db.url(), "test-scheduler").unwrap();
    let enqueue = |queue: &mut Queue, run: &str| {
        enqueue_crawl(
            runtime.handle(),
            &config,
            &blobs,
            queue,
            Some(run.into()),
            &Stop::new(),
        )
        .unwrap()
    };
    let first = enqueue(&mut queue, "run-1");
    assert_eq!(first.added, 2);
    // The registry changes: a new server, one deleted.
    registry.publish(item("test.c/server", "https://c.example/mcp"));
    assert_eq!(registry.set_status("test.b/server", "deleted"), 1);
    registry.clear_requests();
    let second = enqueue(&mut queue, "run-2");
    let asked: Vec<String> = registry
        .requests()
        .iter()
        .map(|r| r.path_and_query.clone())
        .collect();
    assert!(
        asked.iter().all(|q| q.contains("updated_since=")),
        "a delta, not a full harvest: {asked:?}"
    );
    assert_eq!(second.added, 2, "a and c");
    let harvest = queue
        .latest_harvest(&config.registry, true)
        .unwrap()
        .unwrap();
    assert_eq!(harvest.mode, "delta");
    assert_eq!(harvest.delisted, ["test.b/server"]);
    let page = toolmark_observation::registry::parse_snapshot(
        &blobs
            .get(&harvest.snapshot.parse().unwrap())
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    let names: Vec<String> = page.servers.into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["test.a/server", "test.c/server"]);
}

#[test]
fn a_full_harvest_delists_the_servers_the_registry_no_longer_lists() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = runtime
        .block_on(RegistryStandIn::start(vec![
            item("test.a/server", "https://a.example/mcp"),
            item("test.b/server", "https://b.example/mcp"),
        ]))
        .unwrap();
    let (_dir, mut config) = config("worker-full", &registry.url(), db.url());
    config.crawl.harvest = toolmark_ingest::HarvestPolicy::Full;
    let data = toolmark_roles::jobs::data_dir(&config);
    std::fs::create_dir_all(data.root()).unwrap();
    let blobs = data.blobs().unwrap();
    let mut queue = Queue::connect(db.url(), "test-scheduler").unwrap();
    for (run, listed) in [("run-1", 2), ("run-2", 1)] {
        if run == "run-2" {
            registry.modify(|items| {
                items.retain(|i| i["server"]["name"] != "test.b/server");
            });
        }
        let e = enqueue_crawl(
            runtime.handle(),
            &config,
            &blobs,
            &mut queue,
            Some(run.into()),
            &Stop::new(),
        )
        .unwrap();
        assert_eq!(e.targets, listed);
    }
    let harvest = queue
        .latest_harvest(&config.registry, true)
        .unwrap()
        .unwrap();
    assert_eq!(harvest.mode, "full");
    assert_eq!(harvest.delisted, ["test.b/server"]);
}
