//! A populated data directory for the API's tests: two crawl days recorded through the real
//! recorder (real log, blobs and index), with real corpus tool sets.
//!
//! Servers (registry names, one streamable-http remote each unless said):
//! - `io.example/files` at `https://files.example.com/mcp`: day 0 the filesystem set, day 1 the
//!   same set with one `readOnlyHint` turned off (a dangerous change);
//! - `io.example/memory` at `https://memory.example.com/mcp`: the memory set both days;
//! - `io.example/locked` at `https://locked.example.com/mcp`: 401 both days;
//! - `io.example/flaky` at `https://flaky.example.com/mcp`: the fetch set day 0, timeout day 1;
//! - `io.example/keyed` at `https://keyed.example.com/mcp`: skipped (`header-required`).
#![allow(dead_code)]

#[path = "../../../index/tests/support/mod.rs"]
pub mod index_support;

use std::path::PathBuf;
use std::sync::Arc;

use index_support::{
    Env, FETCH, FILESYSTEM, MEMORY, auth_required, corpus_page, day, day_str, failed,
    filesystem_rug_pull, ok, records,
};
use toolmark_api::AppState;
use toolmark_observation::observe::Status;

pub const BASE: &str = "https://toolmark.test";
pub const FILES_URL: &str = "https://files.example.com/mcp";
pub const MEMORY_URL: &str = "https://memory.example.com/mcp";
pub const LOCKED_URL: &str = "https://locked.example.com/mcp";
pub const FLAKY_URL: &str = "https://flaky.example.com/mcp";
pub const KEYED_URL: &str = "https://keyed.example.com/mcp";

/// The data directory and the state the router serves from it. The directory is removed when
/// this is dropped (unless a test panicked, to keep it for inspection).
pub struct Populated {
    pub dir: PathBuf,
    pub state: Arc<AppState>,
    env: Option<Env>,
}

impl Populated {
    /// A state over a directory another fixture owns (it cleans up).
    pub fn wrap(dir: PathBuf, state: Arc<AppState>) -> Populated {
        Populated {
            dir,
            state,
            env: None,
        }
    }

    /// A state over the directory `env` made (removed with it).
    pub fn wrap_env(dir: PathBuf, state: Arc<AppState>, env: Env) -> Populated {
        Populated {
            dir,
            state,
            env: Some(env),
        }
    }
}

impl Drop for Populated {
    fn drop(&mut self) {
        // Env's own Drop removes the directory.
        self.env.take();
    }
}

/// A registry server record with one streamable-http remote.
pub fn server(name: &str, url: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name, "description": "a test server", "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": url}],
    })
}

/// Build the two-day data directory (`tag` keeps parallel tests apart).
pub fn populated(tag: &str) -> Populated {
    let mut env = Env::new(&format!("api-{tag}"));
    let recs = records(serde_json::json!([
        server("io.example/files", FILES_URL),
        server("io.example/memory", MEMORY_URL),
        server("io.example/locked", LOCKED_URL),
        server("io.example/flaky", FLAKY_URL),
        {
            "name": "io.example/keyed", "description": "needs a key", "version": "1.0.0",
            "remotes": [{"type": "streamable-http", "url": KEYED_URL,
                         // A required fixed `Host` toolmark may not send: the one remote that stays
                         // `header-required` (a secret header alone is dialled without it).
                         "headers": [{"name": "Host", "value": "tenant.internal", "isRequired": true},
                                     {"name": "Authorization", "isRequired": true, "isSecret": true}]}],
        },
    ]));
    for d in 0..2u64 {
        env.run(&day_str(d, 0), &recs, &[], |url| {
            let t = day(d, 60);
            Some(match (url, d) {
                (FILES_URL, 0) => ok(t, vec![corpus_page(FILESYSTEM)]),
                (FILES_URL, _) => ok(t, vec![filesystem_rug_pull()]),
                (MEMORY_URL, _) => ok(t, vec![corpus_page(MEMORY)]),
                (LOCKED_URL, _) => auth_required(t),
                (FLAKY_URL, 0) => ok(t, vec![corpus_page(FETCH)]),
                (FLAKY_URL, _) => failed(t, Status::Timeout, "observation deadline of 90 s passed"),
                _ => return None,
            })
        });
    }
    let dir = env.dir.clone();
    let state = AppState::open(&dir, BASE).expect("open the populated data directory");
    Populated {
        dir,
        state: Arc::new(state),
        env: Some(env),
    }
}

/// Lift the per-client rate limits, for tests that send many requests from one address (the
/// limits themselves are tested in ops.rs).
pub fn without_rate_limits(p: &mut Populated) {
    let state = Arc::get_mut(&mut p.state).expect("the state is not shared yet");
    state.limiter = toolmark_api::ops::RateLimiter::unlimited();
    state.sensitive_limiter = toolmark_api::ops::RateLimiter::unlimited();
}

/// The tools array of a corpus set, as a client would send it in `/check`.
pub fn tools_of(page: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(page).unwrap();
    v["tools"].clone()
}

#[allow(unused_imports)]
pub use index_support::{corpus_page as page, filesystem_rug_pull as rug_pull};
pub const FILES_SET: &str = FILESYSTEM;
pub const MEMORY_SET: &str = MEMORY;
pub const FETCH_SET: &str = FETCH;

/// Send one request through the router (no sockets) and return status, headers and body.
pub async fn send(
    state: &Arc<AppState>,
    request: axum::http::Request<axum::body::Body>,
) -> (axum::http::StatusCode, axum::http::HeaderMap, Vec<u8>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let response = toolmark_api::router(state.clone())
        .oneshot(request)
        .await
        .expect("the router answers");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, headers, body)
}

/// GET `path`.
pub async fn get(
    state: &Arc<AppState>,
    path: &str,
) -> (axum::http::StatusCode, axum::http::HeaderMap, Vec<u8>) {
    send(
        state,
        axum::http::Request::get(path)
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await
}

/// POST `body` as JSON to `path`.
pub async fn post_json(
    state: &Arc<AppState>,
    path: &str,
    body: Vec<u8>,
) -> (axum::http::StatusCode, axum::http::HeaderMap, Vec<u8>) {
    send(
        state,
        axum::http::Request::post(path)
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body))
            .unwrap(),
    )
    .await
}

/// POST `body` to `/api/v1/check`: the status and the answer (`null` when it is not JSON).
pub async fn post_check(
    state: &Arc<AppState>,
    body: serde_json::Value,
) -> (axum::http::StatusCode, serde_json::Value) {
    let (status, _, bytes) = post_json(state, "/api/v1/check", body.to_string().into_bytes()).await;
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

// ---- witnesses (api/tests/witnesses.rs, the desk) ----------------------------------------

/// Test witness `i`'s cosigner key (fixed seed; key name `witness<i>.example/w`).
pub fn cosigner(i: u8) -> toolmark_log::cosignature::CosignerKey {
    toolmark_log::cosignature::CosignerKey::from_seed(
        &format!("witness{i}.example/w"),
        &[40 + i; 32],
    )
    .unwrap()
}

/// Witnesses 1, 2 and 3 (policy names w1…w3, with URLs), quorum 2.
pub fn witness_policy() -> toolmark_log::policy::WitnessPolicy {
    let ws = (1..=3)
        .map(|i| toolmark_log::policy::Witness {
            name: format!("w{i}"),
            key: cosigner(i).witness_key(),
            url: Some(format!("https://witness{i}.example/")),
        })
        .collect();
    toolmark_log::policy::WitnessPolicy::k_of(ws, 2).unwrap()
}

pub fn checkpoint_path(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("log/public/checkpoint")
}

/// Replaces the published checkpoint (atomically, as the cosigner does) by the log's note with
/// the cosignature lines of `cosigs` (witness, time) added; returns the note.
pub fn publish_cosigned(dir: &std::path::Path, cosigs: &[(u8, u64)]) -> Vec<u8> {
    let path = checkpoint_path(dir);
    let note = std::fs::read(&path).unwrap();
    let (text, lines) = toolmark_log::cosignature::split_note(&note).unwrap();
    // Only the log's own line: a heartbeat re-cosigns the bare note.
    let bare = format!("{text}\n{}\n", lines[0]).into_bytes();
    let text = text.to_owned();
    let added: Vec<String> = cosigs
        .iter()
        .map(|&(i, t)| cosigner(i).cosign(&text, t).unwrap().to_line())
        .collect();
    let cosigned = toolmark_log::cosignature::add_signature_lines(&bare, &added);
    write_atomically(&path, &cosigned);
    cosigned
}

pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}
