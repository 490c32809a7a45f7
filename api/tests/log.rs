//! The log routes: the tiles served through the router are a complete C2SP log (checked by our
//! fsck reading every file through the router), proofs verify, lookups are offline-checkable
//! bundles, and nothing outside the public directory can be read.

mod support;

use axum::http::StatusCode;
use serde_json::Value;
use support::*;
use toolmark_log::merkle::{self, Hash};
use toolmark_log::proof::{decode_tlog_proof, verify_tlog_proof};
use toolmark_log::verify::{self, Source};

/// A `Source` that reads every public file through the router.
struct Routed(std::sync::Arc<toolmark_api::AppState>);

impl Source for Routed {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        let state = self.0.clone();
        let path = format!("/{path}");
        let (status, _, body) = tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async { get(&state, &path).await })
        });
        match status {
            StatusCode::OK => Ok(Some(body)),
            StatusCode::NOT_FOUND => Ok(None),
            s => Err(format!("{path}: {s}")),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_tiles_are_a_verifiable_log() {
    let p = populated("log-fsck");
    let report = verify::fsck(&Routed(p.state.clone()), p.state.log.vkey())
        .expect("fsck through the router");
    assert_eq!(report.entries, 10);

    let (status, headers, body) = get(&p.state, "/checkpoint").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(headers["cache-control"], "no-cache");
    assert!(
        String::from_utf8(body)
            .unwrap()
            .starts_with("toolmark.test/log\n10\n")
    );
    // When it was published (a heartbeat moves it without changing the note).
    let published = httpdate::parse_http_date(headers["last-modified"].to_str().unwrap()).unwrap();
    let mtime = p
        .state
        .log
        .public()
        .stat("checkpoint")
        .unwrap()
        .unwrap()
        .modified;
    let secs =
        |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(secs(published), secs(mtime));
    // Ten entries: the only tiles are partial.
    let (status, headers, _) = get(&p.state, "/tile/0/000.p/10").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["cache-control"], "no-cache");
    let (status, _, _) = get(&p.state, "/tile/entries/000.p/10").await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, vkey) = get(&p.state, "/api/v1/log/vkey").await;
    assert_eq!(String::from_utf8(vkey).unwrap().trim(), p.state.log.vkey());
}

#[tokio::test]
async fn nothing_outside_the_public_tiles() {
    let p = populated("log-paths");
    for path in [
        "/tile/../private/log.key",
        "/tile/..%2F..%2Fprivate%2Flog.key",
        "/tile/0/x001",
        "/tile/0/000.p/0",
        "/tile/entries/001",
        "/tile/0/000",
        "/tile/64/000",
    ] {
        let (status, _, body) = get(&p.state, path).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{path}: {}",
            String::from_utf8_lossy(&body)
        );
    }
}

fn hashes(v: &Value) -> Vec<Hash> {
    v["proof"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| Hash::from_base64(h.as_str().unwrap()).unwrap())
        .collect()
}

#[tokio::test]
async fn proofs_and_lookups_verify() {
    let p = populated("log-proofs");
    let at = p.state.log.checkpoint().unwrap();
    let root = at.checkpoint.root;
    for index in [0u64, 4, 9] {
        let (status, _, body) =
            get(&p.state, &format!("/api/v1/proof/inclusion?index={index}")).await;
        assert_eq!(status, StatusCode::OK);
        let v: Value = serde_json::from_slice(&body).unwrap();
        let entry = p.state.log.entry(index, &at).unwrap();
        merkle::verify_inclusion(&hashes(&v), 10, &root, index, &merkle::leaf_hash(&entry))
            .unwrap();
    }
    let (_, _, body) = get(&p.state, "/api/v1/proof/consistency?old=5&new=10").await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    let five = {
        // The root at 5 from the entries themselves.
        let mut tree = merkle::MemoryHashes::new();
        for i in 0..5 {
            tree.append(merkle::leaf_hash(&p.state.log.entry(i, &at).unwrap()))
                .unwrap();
        }
        merkle::tree_hash(5, &tree).unwrap()
    };
    merkle::verify_consistency(&hashes(&v), 10, &root, 5, &five).unwrap();

    // The latest entry of the memory server, as an offline bundle.
    let id = {
        let index = p.state.index.get();
        index.find_target_by_key(MEMORY_URL).unwrap()[0].id.clone()
    };
    let (status, headers, body) = get(&p.state, &format!("/api/v1/lookup/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    let bundle = decode_tlog_proof(&String::from_utf8(body).unwrap()).unwrap();
    let entry = bundle.extra.clone().unwrap();
    verify_tlog_proof(&bundle, &entry, p.state.log.vkey()).unwrap();
    let decoded = toolmark_log::entry::Entry::decode(&entry).unwrap();
    assert_eq!(decoded.subject.id(), id);

    for (path, want) in [
        ("/api/v1/proof/inclusion", StatusCode::BAD_REQUEST),
        ("/api/v1/proof/inclusion?index=10", StatusCode::NOT_FOUND),
        ("/api/v1/proof/inclusion?index=-1", StatusCode::BAD_REQUEST),
        (
            "/api/v1/proof/inclusion?index=1&size=11",
            StatusCode::NOT_FOUND,
        ),
        ("/api/v1/proof/consistency?old=0", StatusCode::NOT_FOUND),
        (
            "/api/v1/proof/consistency?old=7&new=3",
            StatusCode::NOT_FOUND,
        ),
        ("/api/v1/proof/consistency?old=x", StatusCode::BAD_REQUEST),
        ("/api/v1/lookup/NOTHEX", StatusCode::BAD_REQUEST),
        ("/api/v1/lookup/0000000000000000", StatusCode::NOT_FOUND),
    ] {
        let (status, _, body) = get(&p.state, path).await;
        assert_eq!(status, want, "{path}: {}", String::from_utf8_lossy(&body));
    }
}
