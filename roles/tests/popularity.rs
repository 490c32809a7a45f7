//! The popularity refresh as a cluster job (`toolmark_roles::cluster::popularity`), over a real
//! PostgreSQL and a count API stand-in on loopback (npm's downloads API and pypistats are not
//! reachable here): a worker claims the job, refreshes the cluster's snapshot, stores it in the
//! bucket and names it; a replica installs the named snapshot once and answers from it.

use std::time::Duration;

use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use toolmark_crawler::popularity::CountSources;
use toolmark_index::DataDir;
use toolmark_queue::Queue;
use toolmark_roles::cluster::polling::enqueue_one;
use toolmark_roles::cluster::popularity::{NOTE, POPULARITY, install_current, refresh_once};

const WEEKLY: u64 = 4242;

fn point(name: &str) -> String {
    format!(
        r#"{{"downloads":{WEEKLY},"start":"2026-11-29","end":"2026-12-05","package":"{name}"}}"#
    )
}

/// npm's bulk and scoped points and pypistats' recent counts: every package has [`WEEKLY`].
async fn counts(uri: Uri) -> Response {
    let path = uri.path();
    if let Some(rest) = path.strip_prefix("/downloads/point/last-week/") {
        if rest.starts_with('@') {
            return point(rest).into_response();
        }
        let all: Vec<String> = rest
            .split(',')
            .map(|n| format!("\"{n}\":{}", point(n)))
            .collect();
        return format!("{{{}}}", all.join(",")).into_response();
    }
    if let Some(name) = path
        .strip_prefix("/api/packages/")
        .and_then(|r| r.strip_suffix("/recent"))
    {
        return format!(
            r#"{{"data":{{"last_day":1,"last_month":1,"last_week":{WEEKLY}}},"package":"{name}","type":"recent_downloads"}}"#
        )
        .into_response();
    }
    StatusCode::NOT_FOUND.into_response()
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("toolmark-popularity-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_worker_refreshes_the_clusters_snapshot_and_a_replica_installs_it_once() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let base = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            axum::serve(listener, axum::Router::new().fallback(counts))
                .await
                .unwrap();
        });
        base
    });
    let sources = CountSources {
        npm: base.clone(),
        pypistats: base,
        pypistats_pause: Duration::ZERO,
    };
    // The bucket of this test: the worker's and the replica's documents are one store.
    let shared = scratch("bucket");
    let worker_data = scratch("worker");
    let blobs = DataDir::new(&shared).blobs().unwrap();
    let mut queue = Queue::connect(db.url(), "worker@test").unwrap();
    let lease = Duration::from_secs(30);
    let refresh = |queue: &mut Queue| {
        refresh_once(
            queue,
            runtime.handle(),
            &blobs,
            &worker_data,
            &sources,
            40,
            true,
            lease,
        )
        .unwrap()
    };
    assert!(!refresh(&mut queue), "no job, no refresh");
    assert_eq!(
        enqueue_one(&mut queue, POPULARITY, "popularity-1").unwrap(),
        1
    );
    assert!(refresh(&mut queue));
    let sri = queue.note(NOTE).unwrap().expect("the snapshot is named");
    let text = String::from_utf8(blobs.get(&sri.parse().unwrap()).unwrap().unwrap()).unwrap();
    let snapshot = toolmark_names::snapshot::Snapshot::parse(&text).unwrap();
    assert!(
        snapshot.counts.values().any(|c| c.weekly == WEEKLY),
        "the refreshed counts are in the stored snapshot"
    );

    // A replica installs it once and answers from it.
    let replica = scratch("replica");
    assert_eq!(
        install_current(&mut queue, &blobs, &replica).unwrap(),
        Some(sri.clone())
    );
    assert_eq!(install_current(&mut queue, &blobs, &replica).unwrap(), None);
    let installed = DataDir::new(&replica)
        .popularity_dir()
        .join(format!("popularity-{}.txt", snapshot.date));
    assert_eq!(std::fs::read_to_string(installed).unwrap(), text);
    toolmark_api::lookalike::Names::load(&replica).unwrap();

    // The next refresh starts from the cluster's snapshot, not the bundled one: a worker
    // whose count APIs answer nothing still has installed it (its refresh then fails, and
    // the job is tried again later).
    assert_eq!(
        enqueue_one(&mut queue, POPULARITY, "popularity-2").unwrap(),
        1
    );
    let second_worker = scratch("worker-2");
    let nowhere = CountSources {
        npm: "http://127.0.0.1:9".into(),
        pypistats: "http://127.0.0.1:9".into(),
        pypistats_pause: Duration::ZERO,
    };
    assert!(
        refresh_once(
            &mut queue,
            runtime.handle(),
            &blobs,
            &second_worker,
            &nowhere,
            40,
            true,
            lease,
        )
        .unwrap()
    );
    let installed = DataDir::new(&second_worker)
        .popularity_dir()
        .join(format!("popularity-{}.txt", snapshot.date));
    assert_eq!(
        std::fs::read_to_string(installed).unwrap(),
        text,
        "the cluster's snapshot was installed before the refresh"
    );
    assert_eq!(
        queue.note(NOTE).unwrap(),
        Some(sri),
        "a failed refresh names nothing"
    );
}
