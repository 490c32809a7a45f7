//! A replica's listing of the registry from the cluster's harvests
//! (`toolmark_roles::follower::apply_listings`, over a real PostgreSQL): a harvest is listed
//! only once the index follows the log past the size the sequencer stamped on it, each once,
//! in order; its servers carry their titles and their targets the runs' listing times; a
//! server a later complete harvest no longer lists is delisted, as on one box.

use serde_json::json;
use toolmark_index::{DataDir, Index};
use toolmark_queue::{Harvest, Queue};
use toolmark_roles::follower::apply_listings;

fn item(name: &str, title: &str, url: &str) -> serde_json::Value {
    json!({
        "server": {"name": name, "title": title, "description": "d", "version": "1.0.0",
            "remotes": [{"type": "streamable-http", "url": url}]},
        "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active",
            "publishedAt": "2025-12-17T00:00:00Z", "updatedAt": "2025-12-17T00:00:00Z",
            "isLatest": true}},
    })
}

/// A replica's empty index and document store in a fresh directory named after `name`.
fn replica_index(name: &str) -> (std::path::PathBuf, toolmark_index::Blobs, Index) {
    let root = std::env::temp_dir().join(format!("toolmark-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let data = DataDir::new(&root);
    let index = Index::open(&data.index_path()).unwrap();
    (root, data.blobs().unwrap(), index)
}

#[test]
fn harvests_are_listed_past_their_stamp_once_in_order_and_delist_what_left() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let (root, blobs, mut index) = replica_index("listings");
    let snapshot = |items: serde_json::Value| blobs.put(items.to_string().as_bytes()).unwrap();
    let day1 = snapshot(json!([
        item("io.example/a", "A", "https://a.example/mcp"),
        item("io.example/b", "B", "https://b.example/mcp"),
    ]));
    let day2 = snapshot(json!([item(
        "io.example/a",
        "A again",
        "https://a.example/mcp"
    )]));
    let harvest =
        |run: &str, at: &str, snapshot: &toolmark_toolset::Sri, delisted: &[&str]| Harvest {
            seq: 0,
            run: run.into(),
            started_at: at.into(),
            registry: "https://registry.example".into(),
            snapshot: snapshot.to_string(),
            complete: true,
            allow_cleartext: false,
            delisted: delisted.iter().map(|s| (*s).to_owned()).collect(),
            mode: "full".into(),
            next_since: String::new(),
            log_size: None,
            report: String::new(),
        };
    let mut q = Queue::connect(db.url(), "scheduler@test").unwrap();
    let shared = toolmark_roles::shared::Db::connect(db.url(), "api@test").unwrap();
    q.record_harvest(&harvest("crawl-1", "2026-12-05T10:00:00Z", &day1, &[]))
        .unwrap();
    assert_eq!(
        apply_listings(&mut index, &blobs, &shared, 100).unwrap(),
        0,
        "not stamped"
    );
    q.stamp_harvests(0).unwrap();
    assert_eq!(
        apply_listings(&mut index, &blobs, &shared, 0).unwrap(),
        0,
        "at the stamp"
    );
    assert_eq!(apply_listings(&mut index, &blobs, &shared, 2).unwrap(), 1);
    assert_eq!(
        apply_listings(&mut index, &blobs, &shared, 2).unwrap(),
        0,
        "once"
    );
    let a = index.server("io.example/a").unwrap().unwrap();
    assert_eq!(a.title.as_deref(), Some("A"));
    let b_targets = index.targets_of("io.example/b").unwrap();
    assert_eq!(b_targets.len(), 1);
    assert_eq!(
        b_targets[0].first_listed.as_deref(),
        Some("2026-12-05T10:00:00Z")
    );

    q.record_harvest(&harvest(
        "crawl-2",
        "2026-12-06T10:00:00Z",
        &day2,
        &["io.example/b"],
    ))
    .unwrap();
    q.stamp_harvests(2).unwrap();
    assert_eq!(apply_listings(&mut index, &blobs, &shared, 3).unwrap(), 1);
    let a = index.server("io.example/a").unwrap().unwrap();
    assert_eq!(a.title.as_deref(), Some("A again"));
    let a_targets = index.targets_of("io.example/a").unwrap();
    assert_eq!(
        a_targets[0].first_listed.as_deref(),
        Some("2026-12-05T10:00:00Z")
    );
    assert_eq!(
        a_targets[0].last_listed.as_deref(),
        Some("2026-12-06T10:00:00Z")
    );
    let b = index.server("io.example/b").unwrap().unwrap();
    assert_eq!(b.delisted_at.as_deref(), Some("2026-12-06T10:00:00Z"));
    let b_targets = index.targets_of("io.example/b").unwrap();
    assert_eq!(
        b_targets[0].delisted_at.as_deref(),
        Some("2026-12-06T10:00:00Z")
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A replica records a cluster crawl run (`follower::ended_runs`, `follower::report_runs`)
/// once every job of it has ended and every entry it handed on is logged, after its listing:
/// the scheduler's part of the report (harvest, servers) with the queue's (totals per status,
/// failed jobs as abandoned), once.
#[test]
fn a_run_is_recorded_once_its_jobs_have_ended_and_their_entries_are_logged() {
    use toolmark_roles::follower::{ended_runs, report_runs};
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let (root, blobs, mut index) = replica_index("run-reports");
    let snapshot = blobs
        .put(
            json!([item("io.example/a", "A", "https://a.example/mcp")])
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    let scheduler_part = toolmark_ingest::RunReport {
        registry: "https://registry.example".into(),
        started_at: "2026-12-05T10:00:00Z".into(),
        harvest: toolmark_ingest::HarvestReport {
            mode: "full".into(),
            pages: 3,
            records: 1,
            complete: true,
            ..Default::default()
        },
        servers: 1,
        ..Default::default()
    };
    let mut q = Queue::connect(db.url(), "scheduler@test").unwrap();
    let shared = toolmark_roles::shared::Db::connect(db.url(), "api@test").unwrap();
    q.record_harvest(&Harvest {
        seq: 0,
        run: "crawl-1".into(),
        started_at: "2026-12-05T10:00:00Z".into(),
        registry: "https://registry.example".into(),
        snapshot: snapshot.to_string(),
        complete: true,
        allow_cleartext: false,
        delisted: Vec::new(),
        mode: "full".into(),
        next_since: String::new(),
        log_size: None,
        report: serde_json::to_string(&scheduler_part).unwrap(),
    })
    .unwrap();
    let jobs: Vec<toolmark_queue::NewJob> = ["t1", "t2", "t3"]
        .iter()
        .map(|k| toolmark_queue::NewJob {
            kind: "remote".into(),
            key: (*k).into(),
            payload: "{}".into(),
        })
        .collect();
    q.enqueue("crawl-1", &jobs).unwrap();
    q.stamp_harvests(0).unwrap();
    assert_eq!(apply_listings(&mut index, &blobs, &shared, 2).unwrap(), 1);
    let minute = std::time::Duration::from_secs(60);
    // A worker's report line for a target observed with `status`.
    let line = |status: &str| {
        serde_json::to_string(&toolmark_index::Recorded {
            server: "io.example/a".into(),
            endpoint: "https://a.example/mcp".into(),
            transport: None,
            status: status.into(),
            detail: String::new(),
            mtl1: None,
            mtl1_error: None,
            full: None,
            tools: None,
            entry_index: None,
            change_id: None,
        })
        .unwrap()
    };
    let claims = q.claim(&["remote"], 3, minute).unwrap();
    q.complete(&claims[0], &line("ok"), Some(b"a")).unwrap();
    q.complete(&claims[1], &line("timeout"), Some(b"b"))
        .unwrap();
    assert!(
        ended_runs(&index, &shared).unwrap().is_empty(),
        "a job still open"
    );
    q.complete(&claims[2], &line("ok"), None).unwrap();
    assert!(
        ended_runs(&index, &shared).unwrap().is_empty(),
        "entries not logged yet"
    );
    let seqs: Vec<i64> = q.handoffs(10).unwrap().iter().map(|h| h.seq).collect();
    q.taken(&seqs).unwrap();
    let (other_root, _, other) = replica_index("run-reports-other");
    assert!(
        ended_runs(&other, &shared).unwrap().is_empty(),
        "an index that has not applied its listing"
    );
    let _ = std::fs::remove_dir_all(&other_root);
    let ended = ended_runs(&index, &shared).unwrap();
    assert_eq!(ended.len(), 1);
    assert_eq!(report_runs(&mut index, &ended, 2).unwrap(), 1);
    let run = index.last_run().unwrap().expect("the run recorded");
    assert_eq!(run.status, "complete");
    assert_eq!(run.started_at, "2026-12-05T10:00:00Z");
    let report: toolmark_ingest::RunReport =
        serde_json::from_str(run.report.as_deref().unwrap()).unwrap();
    assert_eq!(report.run, run.id);
    assert_eq!(report.harvest.pages, 3, "the scheduler's part");
    assert_eq!(report.servers, 1);
    assert_eq!(
        report.totals,
        [("ok".to_owned(), 2), ("timeout".to_owned(), 1)].into()
    );
    assert_eq!((report.abandoned, report.log_size), (0, 2));
    assert!(
        ended_runs(&index, &shared).unwrap().is_empty(),
        "recorded once"
    );
    let _ = std::fs::remove_dir_all(&root);
}
