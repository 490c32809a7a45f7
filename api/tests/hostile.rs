//! The API under hostile clients (issue 11, the route part): JSON errors on every API route,
//! duplicate member names refused, large tool sets read once and shown bounded, documents
//! served by content address (streamed, verified), the costly routes bounded and rate-limited,
//! strict proof parameters, clients keyed per IPv4 address and IPv6 /64.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use support::index_support::{Env, blob_stores, corpus_page, day, day_str, ok, records};
use support::*;
use toolmark_api::AppState;
use toolmark_api::documents::DOCUMENT_READ_BYTES;
use toolmark_api::ops::RateLimiter;
use toolmark_index::Blobs;
use toolmark_log::objects::Objects;
use toolmark_toolset::Sri;

const BIG_URL: &str = "https://big.example.com/mcp";
const BIG_NAME: &str = "io.example/big";

/// Tools in the big set, and bytes of description each: 2,000 × ~2 KiB, a 4 MiB page.
const BIG_TOOLS: usize = 2_000;
const BIG_DESCRIPTION: usize = 2_000;

/// The big set's `tools/list` page.
fn big_page() -> String {
    let tools: Vec<Value> = (0..BIG_TOOLS)
        .map(|i| {
            json!({
                "name": format!("tool_{i:05}"),
                "description": format!("tool {i}: {}", "lorem ipsum ".repeat(BIG_DESCRIPTION / 12)),
                "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            })
        })
        .collect();
    json!({ "tools": tools }).to_string()
}

/// A data directory whose one server's current tool set is [`big_page`].
fn big(tag: &str) -> (Env, Arc<AppState>) {
    let mut env = Env::new(&format!("api-hostile-big-{tag}"));
    let recs = records(json!([{
        "name": BIG_NAME, "description": "a server with a large tool set", "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": BIG_URL}],
    }]));
    let page = big_page();
    assert!(page.len() > 4_000_000, "{}", page.len());
    env.run(&day_str(0, 0), &recs, &[], |_| {
        Some(ok(day(0, 60), vec![page.clone()]))
    });
    let state = AppState::open(&env.dir, BASE).unwrap();
    (env, Arc::new(state))
}

fn target_id(state: &AppState, url: &str) -> String {
    state.index.get().find_target_by_key(url).unwrap()[0]
        .id
        .clone()
}

fn json_body(body: &[u8]) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(body)))
}

fn assert_json_error(headers: &axum::http::HeaderMap, body: &[u8], code: &str) -> Value {
    assert_eq!(headers["content-type"], "application/json");
    let v = json_body(body);
    assert_eq!(v["error"], code, "{v}");
    assert!(v["detail"].as_str().is_some_and(|d| !d.is_empty()), "{v}");
    v
}

/// A request from `peer` (as `axum::serve` with connect info would give it).
fn from_peer(mut request: Request<Body>, peer: &str) -> Request<Body> {
    let addr: SocketAddr = peer.parse().unwrap();
    request.extensions_mut().insert(ConnectInfo(addr));
    request
}

fn post(path: &str, body: Vec<u8>) -> Request<Body> {
    Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// JSON errors

#[tokio::test]
async fn check_over_2_mib_is_a_json_413() {
    let p = populated("hostile-413");
    let mut body = br#"{"endpoint":"https://memory.example.com/mcp","pad":""#.to_vec();
    let pad = toolmark_api::check::MAX_BODY_BYTES + 1 - body.len() - 2;
    body.extend(std::iter::repeat_n(b'x', pad));
    body.extend(b"\"}");
    assert_eq!(body.len(), 2 * 1024 * 1024 + 1);
    let (status, headers, body) = post_json(&p.state, "/api/v1/check", body).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let v = assert_json_error(&headers, &body, "payload-too-large");
    assert!(v["detail"].as_str().unwrap().contains("2097152"), "{v}");
}

#[tokio::test]
async fn check_with_bad_json_is_a_json_400() {
    let p = populated("hostile-400");
    let (status, headers, body) =
        post_json(&p.state, "/api/v1/check", b"{\"endpoint\":".to_vec()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_json_error(&headers, &body, "bad-request");
}

#[tokio::test]
async fn unknown_api_route_is_a_json_404() {
    let p = populated("hostile-404");
    for path in [
        "/api/v1/nothing",
        "/api/v2/servers",
        "/api/v1/servers/0123456789abcdef/x",
    ] {
        let (status, headers, body) = get(&p.state, path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_json_error(&headers, &body, "not-found");
    }
}

#[tokio::test]
async fn wrong_method_is_a_json_405_with_allow() {
    let p = populated("hostile-405");
    let (status, headers, body) = get(&p.state, "/api/v1/check").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_json_error(&headers, &body, "method-not-allowed");
    assert!(
        headers[header::ALLOW].to_str().unwrap().contains("POST"),
        "{headers:?}"
    );
    let (status, headers, body) = post_json(&p.state, "/api/v1/servers", b"{}".to_vec()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_json_error(&headers, &body, "method-not-allowed");
}

#[tokio::test]
async fn bad_query_string_on_desk_is_an_html_page() {
    let p = populated("hostile-desk");
    // axum's own rejection (a query string that does not decode) and an unknown path.
    for path in ["/changes?limit=%ff%fe", "/no/such/page"] {
        let (status, headers, body) = get(&p.state, path).await;
        assert!(status.is_client_error(), "{path}: {status}");
        assert_eq!(
            headers["content-type"], "text/html; charset=utf-8",
            "{path}"
        );
        assert!(headers.contains_key("content-security-policy"), "{path}");
        let html = String::from_utf8(body).unwrap();
        assert!(html.contains("<main"), "{path}: {html}");
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicate member names

#[tokio::test]
async fn check_refuses_duplicate_member_names() {
    let p = populated("hostile-dup-check");
    for body in [
        // The issue's tool: last-wins reads it as read_file, first-wins as delete_all.
        r#"{"endpoint":"https://memory.example.com/mcp","tools":[{"name":"delete_all","name":"read_file"}]}"#,
        // Deeper, spelled differently ("\u0074ype" is "type").
        r#"{"endpoint":"https://memory.example.com/mcp","tools":[{"name":"a","inputSchema":{"type":"object","\u0074ype":"string"}}]}"#,
        // At the top level.
        r#"{"endpoint":"https://memory.example.com/mcp","endpoint":"https://files.example.com/mcp"}"#,
    ] {
        let (status, headers, answer) =
            post_json(&p.state, "/api/v1/check", body.as_bytes().to_vec()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let v = assert_json_error(&headers, &answer, "bad-request");
        let detail = v["detail"].as_str().unwrap();
        assert!(
            detail.contains("repeats") && detail.contains("member name"),
            "{v}"
        );
    }
    // The same names in different objects are fine.
    let fine = r#"{"endpoint":"https://memory.example.com/mcp","tools":[{"name":"a"},{"name":"b","x":{"name":"c"}}]}"#;
    let (status, _, _) = post_json(&p.state, "/api/v1/check", fine.as_bytes().to_vec()).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn sensitive_refuses_duplicate_member_names() {
    let p = populated("hostile-dup-sensitive");
    let body = r#"{"tools":[{"name":"x"},{"name":"delete_all","name":"read_file"}],"patterns":["delete*"]}"#;
    let (status, headers, answer) =
        post_json(&p.state, "/api/v1/sensitive", body.as_bytes().to_vec()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let v = assert_json_error(&headers, &answer, "bad-request");
    assert!(
        v["detail"].as_str().unwrap().contains("\"tools\"[1]"),
        "{v}"
    );
}

// ---------------------------------------------------------------------------------------------
// Large tool sets

/// Largest `/api/v1/servers/{id}` body for the big set: the inline budget plus the summary,
/// timeline and links.
const MAX_DETAIL_BODY: usize = toolmark_api::documents::DEFAULT_INLINE_TOOL_BYTES + 64 * 1024;

/// Largest `scan` member of that body: 200 matches and 100 tools' legs of a 2,000-tool set.
const MAX_SCAN_JSON: usize = 96 * 1024;

#[tokio::test]
async fn big_set_server_json_is_bounded_with_count_and_document_link() {
    let (_env, state) = big("json");
    let id = target_id(&state, BIG_URL);
    let (status, _, body) = get(&state, &format!("/api/v1/servers/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let v = json_body(&body);
    // The scan is bounded apart: at most 200 matches and 100 tools' legs.
    let scan = v["scan"].to_string().len();
    assert!(scan < MAX_SCAN_JSON, "{scan} bytes of scan");
    assert!(body.len() - scan < MAX_DETAIL_BODY, "{} bytes", body.len());
    assert_eq!(v["scan"]["legs"].as_array().unwrap().len(), 100);
    assert!(v["scan"]["legsTruncated"].as_u64().unwrap() > 0);
    assert_eq!(v["toolCount"], BIG_TOOLS);
    let shown = v["tools"].as_array().unwrap().len();
    assert!(shown > 0 && shown < BIG_TOOLS, "{shown}");
    assert_eq!(v["toolsShown"], shown);
    assert_eq!(v["toolsOmitted"], BIG_TOOLS - shown);
    assert_eq!(v["tools"][0]["name"], "tool_00000", "in the server's order");
    let raw = state
        .index
        .get()
        .target(&id)
        .unwrap()
        .unwrap()
        .current_raw
        .unwrap();
    assert_eq!(v["document"]["sri"], raw);
    let url = v["document"]["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{BASE}/api/v1/documents/sha256-")),
        "{url}"
    );
    assert!(
        !url[BASE.len() + "/api/v1/documents/".len()..].contains('/'),
        "{url}"
    );
}

#[tokio::test]
async fn big_set_desk_page_is_bounded_with_count_and_document_link() {
    let (_env, state) = big("desk");
    let id = target_id(&state, BIG_URL);
    let (status, _, body) = get(&state, &format!("/s/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    // Names and descriptions of the inline tools, escaped, and the page around them.
    assert!(body.len() < 2 * MAX_DETAIL_BODY, "{} bytes", body.len());
    let html = String::from_utf8(body).unwrap();
    assert!(
        html.contains(&format!("{BIG_TOOLS} tools, from the observation")),
        "count"
    );
    assert!(
        html.contains("id=\"tools-omitted\""),
        "omitted tools are counted"
    );
    let raw = state
        .index
        .get()
        .target(&id)
        .unwrap()
        .unwrap()
        .current_raw
        .unwrap();
    let sri: toolmark_toolset::Sri = raw.parse().unwrap();
    let link = toolmark_api::documents::document_path(&sri);
    assert!(html.contains(&format!("href=\"{link}\"")), "document link");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_parses_a_big_set_once_for_32_concurrent_requests() {
    let (_env, state) = big("once");
    let id = target_id(&state, BIG_URL);
    let mut tasks = Vec::new();
    for i in 0..32 {
        let state = state.clone();
        let path = if i % 2 == 0 {
            format!("/api/v1/servers/{id}")
        } else {
            format!("/s/{id}")
        };
        tasks.push(tokio::spawn(async move { get(&state, &path).await.0 }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), StatusCode::OK);
    }
    assert_eq!(state.tool_sets.loads(), 1, "one read and parse for all 32");
    let (status, _, _) = get(
        &state,
        &format!("/api/v1/servers/{id}/sensitive?pattern=tool_0*"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        state.tool_sets.loads(),
        1,
        "the sensitive globs read the cached names"
    );
    let held = state.tool_sets.held_bytes();
    assert!(held > 0 && held <= state.tool_sets.budget(), "{held}");
}

/// Requests cancelled while the set loads (a reset stream, a closed connection, the request
/// deadline) neither cancel the load nor start another: 16 requests dropped a millisecond in,
/// then one that waits, make one load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_requests_neither_cancel_nor_repeat_a_load() {
    let (_env, state) = big("cancelled");
    let id = target_id(&state, BIG_URL);
    let path = format!("/api/v1/servers/{id}");
    for _ in 0..16 {
        let cancelled = tokio::time::timeout(Duration::from_millis(1), get(&state, &path)).await;
        assert!(
            cancelled.is_err(),
            "the load of a big set finished within 1 ms"
        );
    }
    assert_eq!(get(&state, &path).await.0, StatusCode::OK);
    assert_eq!(state.tool_sets.loads(), 1);
}

#[tokio::test]
async fn cache_keeps_nothing_over_its_budget() {
    let mut p = populated("hostile-budget");
    Arc::get_mut(&mut p.state).unwrap().tool_sets =
        toolmark_api::documents::ToolSetCache::new(1, 1024);
    let id = target_id(&p.state, MEMORY_URL);
    for _ in 0..2 {
        assert_eq!(
            get(&p.state, &format!("/api/v1/servers/{id}")).await.0,
            StatusCode::OK
        );
    }
    assert_eq!(p.state.tool_sets.held_bytes(), 0);
    assert_eq!(
        p.state.tool_sets.loads(),
        2,
        "an entry over the budget is not kept"
    );
}

#[tokio::test]
async fn cache_drops_the_least_recently_used_past_its_budget() {
    let mut p = populated("hostile-lru");
    let (memory, files) = (
        target_id(&p.state, MEMORY_URL),
        target_id(&p.state, FILES_URL),
    );
    let detail = |id: &str| format!("/api/v1/servers/{id}");
    // Each entry's size, from a cache that keeps both.
    get(&p.state, &detail(&memory)).await;
    let one = p.state.tool_sets.held_bytes();
    get(&p.state, &detail(&files)).await;
    let both = p.state.tool_sets.held_bytes();
    assert_eq!(p.state.tool_sets.loads(), 2);
    let budget = one.max(both - one);
    assert!(budget < both);
    Arc::get_mut(&mut p.state).unwrap().tool_sets =
        toolmark_api::documents::ToolSetCache::new(budget, 256 * 1024);
    for (id, loads) in [
        (&memory, 1),
        (&memory, 1),
        (&files, 2),
        (&files, 2),
        (&memory, 3),
    ] {
        assert_eq!(get(&p.state, &detail(id)).await.0, StatusCode::OK);
        assert_eq!(p.state.tool_sets.loads(), loads, "{id}");
        assert!(p.state.tool_sets.held_bytes() <= budget);
    }
}

#[tokio::test]
async fn document_route_serves_the_blob_bytes_with_immutable_caching() {
    let (_env, state) = big("doc");
    let id = target_id(&state, BIG_URL);
    let raw = state
        .index
        .get()
        .target(&id)
        .unwrap()
        .unwrap()
        .current_raw
        .unwrap();
    let sri: toolmark_toolset::Sri = raw.parse().unwrap();
    let stored = state.blobs.get(&sri).unwrap().unwrap();
    assert!(stored.len() > 4 * toolmark_api::documents::STREAM_CHUNK_BYTES);
    let (status, headers, body) = get(&state, &toolmark_api::documents::document_path(&sri)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["content-length"], stored.len().to_string().as_str());
    assert!(body == stored, "exactly the stored bytes");
    assert_eq!(
        toolmark_toolset::Sri::of(&body),
        sri,
        "the address verifies"
    );
}

/// Documents streamed at once are capped: a response nobody reads holds its place, the next
/// request gets 503 with `Retry-After`, and dropping the first frees the place.
#[tokio::test]
async fn document_streams_are_capped() {
    use tower::ServiceExt;
    let (_env, mut state) = big("doc-cap");
    Arc::get_mut(&mut state).unwrap().document_streams = Arc::new(tokio::sync::Semaphore::new(1));
    let id = target_id(&state, BIG_URL);
    let raw = state
        .index
        .get()
        .target(&id)
        .unwrap()
        .unwrap()
        .current_raw
        .unwrap();
    let path = toolmark_api::documents::document_path(&raw.parse().unwrap());
    let app = toolmark_api::router(state.clone());
    let request = || Request::get(&path).body(Body::empty()).unwrap();
    let unread = app.clone().oneshot(request()).await.unwrap();
    assert_eq!(unread.status(), StatusCode::OK);
    let (status, headers, answer) = get(&state, &path).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(headers["retry-after"], "5");
    assert_json_error(&headers, &answer, "service-unavailable");
    drop(unread);
    assert_eq!(get(&state, &path).await.0, StatusCode::OK);
}

#[tokio::test]
async fn document_route_unknown_is_404() {
    let p = populated("hostile-doc-404");
    let sri = toolmark_toolset::Sri::of(b"never stored");
    let (status, headers, body) =
        get(&p.state, &toolmark_api::documents::document_path(&sri)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_json_error(&headers, &body, "not-found");
}

#[tokio::test]
async fn document_route_malformed_sri_is_400() {
    let p = populated("hostile-doc-400");
    let good = toolmark_toolset::Sri::of(b"x").to_string();
    for bad in [
        "sha256-abc".to_owned(),
        good.replace("sha256-", "sha384-"),
        good.trim_end_matches('=').to_owned(),
        format!("{good}="),
        good.replace('+', "-").replace('/', "_"),
    ] {
        let path = format!(
            "/api/v1/documents/{}",
            bad.replace('/', "%2F").replace('+', "%2B")
        );
        let (status, headers, body) = get(&p.state, &path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert_json_error(&headers, &body, "bad-request");
    }
}

/// A data directory whose blobs live in `blobs` (a directory or a bucket prefix, as
/// `blob_stores` gives them), with one server whose current tool set is the memory set (one
/// read range) and one whose set is [`big_page`] (several); the state serves from that store.
fn on_store(tag: &str, blobs: Objects) -> (Env, Arc<AppState>, Sri, Sri) {
    let mut env = Env::with_blobs(&format!("api-hostile-store-{tag}"), Some(blobs));
    let recs = records(json!([
        server(MEMORY_NAME, MEMORY_URL),
        server(BIG_NAME, BIG_URL),
    ]));
    let big = big_page();
    env.run(&day_str(0, 0), &recs, &[], |url| {
        let page = if url == BIG_URL {
            big.clone()
        } else {
            corpus_page(index_support::MEMORY)
        };
        Some(ok(day(0, 60), vec![page]))
    });
    let mut state = AppState::open(&env.dir, BASE).unwrap();
    // The log and the index are the data directory's; the blobs are in `blobs` (the route reads
    // whatever `AppState::blobs` is; `DataDir::blobs` choosing it is the storage test below).
    state.blobs = env.blobs.clone();
    let state = Arc::new(state);
    let raw = |url| -> Sri {
        let id = target_id(&state, url);
        let t = state.index.get().target(&id).unwrap().unwrap();
        t.current_raw.unwrap().parse().unwrap()
    };
    let (small, large) = (raw(MEMORY_URL), raw(BIG_URL));
    let sizes = (
        state.blobs.size(&small).unwrap().unwrap(),
        state.blobs.size(&large).unwrap().unwrap(),
    );
    assert!(sizes.0 <= DOCUMENT_READ_BYTES, "{sizes:?}");
    assert!(sizes.1 > 3 * DOCUMENT_READ_BYTES, "{sizes:?}");
    (env, state, small, large)
}

const MEMORY_NAME: &str = "io.example/memory";

/// Overwrite the stored object of `sri` with its bytes, one flipped at `at` (a fraction of the
/// length).
fn corrupt(state: &AppState, sri: &Sri, at: f64) -> usize {
    let key = Blobs::key_of(sri);
    let mut bytes = state
        .blobs
        .objects()
        .get_bounded(&key, u64::MAX)
        .unwrap()
        .unwrap();
    let i = ((bytes.len() - 1) as f64 * at) as usize;
    bytes[i] ^= 0x01;
    state.blobs.objects().put(&key, &bytes).unwrap();
    bytes.len()
}

/// The response to GET the document `sri`: its status, and the body's bytes until it ended
/// (`Ok`) or failed (`Err` with what arrived before).
async fn fetch_document(
    state: &Arc<AppState>,
    sri: &Sri,
) -> (StatusCode, Result<Vec<u8>, Vec<u8>>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let response = toolmark_api::router(state.clone())
        .oneshot(
            Request::get(toolmark_api::documents::document_path(sri))
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status();
    let mut body = response.into_body();
    let mut got = Vec::new();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => got.extend_from_slice(f.data_ref().map_or(&[][..], |d| &d[..])),
            Err(_) => return (status, Err(got)),
        }
    }
    (status, Ok(got))
}

#[tokio::test]
async fn documents_are_served_exactly_from_every_store() {
    for (name, objects) in blob_stores("doc-serve") {
        let (_env, state, small, large) = on_store(&format!("serve-{name}"), objects);
        for sri in [small, large] {
            let stored = state.blobs.get(&sri).unwrap().unwrap();
            let (status, headers, body) =
                get(&state, &toolmark_api::documents::document_path(&sri)).await;
            assert_eq!(status, StatusCode::OK, "{name}");
            assert_eq!(
                headers["content-length"],
                stored.len().to_string().as_str(),
                "{name}"
            );
            assert_eq!(headers["etag"], format!("\"{sri}\"").as_str(), "{name}");
            assert!(body == stored, "{name}: exactly the stored bytes");
        }
    }
}

/// A corrupted document that fits one read range is verified before the response starts: a
/// 500 with a JSON error, never the bad bytes.
#[tokio::test]
async fn a_corrupted_document_of_one_range_is_a_500_on_every_store() {
    for (name, objects) in blob_stores("doc-corrupt-small") {
        let (_env, state, small, _) = on_store(&format!("small-{name}"), objects);
        corrupt(&state, &small, 0.5);
        let (status, headers, body) =
            get(&state, &toolmark_api::documents::document_path(&small)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{name}");
        assert_json_error(&headers, &body, "internal-server-error");
    }
}

/// A corrupted document of several ranges is streamed, and its body ends in an error before the
/// last chunk wherever the damage is (the first range, the middle, the very last byte).
#[tokio::test]
async fn a_corrupted_document_of_several_ranges_is_cut_on_every_store() {
    for (name, objects) in blob_stores("doc-corrupt-large") {
        let (_env, state, _, large) = on_store(&format!("large-{name}"), objects);
        let original = state.blobs.get(&large).unwrap().unwrap();
        for at in [0.0, 0.5, 1.0] {
            let len = corrupt(&state, &large, at);
            let (status, body) = fetch_document(&state, &large).await;
            assert_eq!(status, StatusCode::OK, "{name} {at}: the headers go first");
            match body {
                Err(sent) => assert!(sent.len() < len, "{name} {at}: {} of {len}", sent.len()),
                Ok(sent) => panic!("{name} {at}: a complete body of {} bytes", sent.len()),
            }
            state.blobs.put(&original).unwrap();
        }
        let (status, body) = fetch_document(&state, &large).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            body.is_ok_and(|b| b == original),
            "{name}: repaired, served whole"
        );
    }
}

/// A blob store that cannot be reached (a closed port) is a 500 before any response starts,
/// never an empty or cut 200.
#[tokio::test]
async fn a_failing_blob_store_is_a_500() {
    let (_env, state, small, large) = on_store("failing", blob_stores("failing").remove(0).1);
    let mut state = Arc::into_inner(state).unwrap();
    let closed = toolmark_log::objects::S3Options {
        endpoint: Some("http://127.0.0.1:1".into()),
        allow_http: true,
        ..Default::default()
    };
    let dead = Objects::s3("s3://nowhere/prefix", &closed).unwrap();
    state.blobs = Blobs::new(dead.sub("blobs")).unwrap();
    let state = Arc::new(state);
    for sri in [small, large] {
        let (status, headers, body) =
            get(&state, &toolmark_api::documents::document_path(&sri)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_json_error(&headers, &body, "internal-server-error");
    }
}

/// A data directory whose `[storage]` objects are elsewhere keeps its blobs there (`blobs/` of
/// that store, beside `log/`), and the API serves them from there: a directory always, and the
/// test bucket when the `AWS_*` variables `[storage]` reads point at it.
#[tokio::test]
async fn a_data_dir_on_other_storage_serves_its_documents() {
    let scratch = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("api-storage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let mut specs = vec![("dir", format!("file:{}", scratch.join("objects").display()))];
    // `[storage]` reaches a bucket as the `AWS_*` variables say, which a test cannot set (no
    // `unsafe` for `set_var`): the bucket is tried when they point at the test bucket's endpoint.
    let bucket = toolmark_standins::services::s3().expect("the test bucket");
    match (std::env::var("AWS_ENDPOINT_URL").ok(), bucket) {
        (Some(endpoint), Some(bucket)) if bucket.endpoint == endpoint => {
            specs.push((
                "bucket",
                format!("s3://{}/{}", bucket.bucket, bucket.prefix),
            ));
        }
        _ => eprintln!(
            "bucket storage skipped: AWS_ENDPOINT_URL (what [storage] reads) is not \
             TOOLMARK_TEST_S3"
        ),
    }
    for (name, objects) in specs {
        let root = scratch.join(name);
        let spec = toolmark_log::store::StorageSpec::parse("sqlite", &objects).unwrap();
        let data = toolmark_index::DataDir::with_storage(&root, spec);
        {
            let mut w = data.open_writer("toolmark.test/log").unwrap();
            let recs = records(json!([server(MEMORY_NAME, MEMORY_URL)]));
            let input = toolmark_index::RunInput {
                started_at: day_str(0, 0),
                registry: "https://registry.test".into(),
                records: recs.clone(),
                harvest_complete: true,
                delisted: vec![],
                allow_cleartext: false,
            };
            let mut rec = toolmark_index::Recorder::new(&mut w.log, &w.blobs, &mut w.index);
            let run = rec.begin_run(&input).unwrap();
            rec.record(
                run,
                index_support::outcomes(&recs, |_| {
                    Some(ok(day(0, 60), vec![corpus_page(index_support::MEMORY)]))
                }),
            )
            .unwrap();
        }
        let state = Arc::new(toolmark_api::AppState::open_dir(&data, BASE).unwrap());
        let id = target_id(&state, MEMORY_URL);
        let t = state.index.get().target(&id).unwrap().unwrap();
        let sri: Sri = t.current_raw.unwrap().parse().unwrap();
        let (status, _, body) = get(&state, &toolmark_api::documents::document_path(&sri)).await;
        assert_eq!(status, StatusCode::OK, "{name}");
        assert_eq!(Sri::of(&body), sri, "{name}");
        assert!(
            !data.blobs_dir().exists(),
            "{name}: nothing under DATA/blobs"
        );
        if name == "dir" {
            let file = scratch.join("objects/blobs").join(Blobs::key_of(&sri));
            assert_eq!(std::fs::read(file).unwrap(), body, "{name}");
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

// ---------------------------------------------------------------------------------------------
// Costly routes and query strings

#[tokio::test]
async fn proof_query_strings_are_strict() {
    let p = populated("hostile-strict");
    assert_eq!(
        get(&p.state, "/api/v1/proof/inclusion?index=7").await.0,
        StatusCode::OK
    );
    for path in [
        "/api/v1/proof/inclusion?index=%2B7",
        "/api/v1/proof/inclusion?index=0&index=7",
        "/api/v1/proof/inclusion?index=0007",
        "/api/v1/proof/inclusion?index=-1",
        "/api/v1/proof/inclusion?index=7&size=010",
        "/api/v1/proof/inclusion?index=%ff",
        "/api/v1/proof/consistency?old=01",
        "/api/v1/proof/consistency?old=1&old=2",
        "/api/v1/proof/consistency?old=1&new=+9",
    ] {
        let (status, headers, body) = get(&p.state, path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
        assert_json_error(&headers, &body, "bad-request");
    }
}

/// `index`, `size`, `old` and `new` equal to u64::MAX are well-formed (a log could have that
/// many entries): each is a 404 whose message says which bound it is outside, never "must be a
/// non-negative integer". One past u64::MAX is malformed: 400.
#[tokio::test]
async fn proof_parameters_at_u64_max_are_no_such_proof() {
    let p = populated("hostile-u64-max");
    let max = u64::MAX;
    for (path, reason) in [
        (
            format!("/api/v1/proof/inclusion?index={max}"),
            format!("index {max} is not below the tree size 10"),
        ),
        (
            format!("/api/v1/proof/inclusion?index=0&size={max}"),
            format!("size {max} is beyond the published tree size 10"),
        ),
        (
            format!("/api/v1/proof/consistency?old={max}"),
            format!("old {max} is larger than new 10"),
        ),
        (
            format!("/api/v1/proof/consistency?old=1&new={max}"),
            format!("new {max} is beyond the published tree size 10"),
        ),
    ] {
        let (status, headers, body) = get(&p.state, &path).await;
        let v = assert_json_error(&headers, &body, "not-found");
        let detail = v["detail"].as_str().unwrap();
        println!("{path}: {status} {detail}");
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(detail, format!("no such proof: {reason}"), "{path}");
    }
    let (status, headers, body) = get(
        &p.state,
        "/api/v1/proof/inclusion?index=18446744073709551616",
    )
    .await;
    let v = assert_json_error(&headers, &body, "bad-request");
    println!("index=u64::MAX+1: {status} {}", v["detail"]);
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn sensitive_is_rate_limited_with_retry_after() {
    let p = populated("hostile-sensitive-limit");
    let body = br#"{"tools":[{"name":"delete_all"}],"patterns":["delete*"]}"#.to_vec();
    let burst = toolmark_api::ops::SENSITIVE_BURST as usize;
    for _ in 0..burst {
        let (status, _, _) = post_json(&p.state, "/api/v1/sensitive", body.clone()).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, headers, answer) = post_json(&p.state, "/api/v1/sensitive", body).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        headers["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 1
    );
    let v = assert_json_error(&headers, &answer, "too-many-requests");
    assert!(
        v["detail"]
            .as_str()
            .unwrap()
            .contains("at most 30 sensitive-tool requests a minute"),
        "{v}"
    );
    let (_, _, metrics) = get(&p.state, "/metrics").await;
    assert!(
        String::from_utf8(metrics)
            .unwrap()
            .contains("toolmark_sensitive_rate_limited_total 1")
    );
}

/// `GET /api/v1/servers/{id}/sensitive` does the same matching work and shares the limiter.
#[tokio::test]
async fn server_sensitive_globs_share_the_sensitive_rate_limit() {
    let p = populated("hostile-server-sensitive-limit");
    let id = target_id(&p.state, MEMORY_URL);
    let path = format!("/api/v1/servers/{id}/sensitive?pattern=read_*");
    for _ in 0..toolmark_api::ops::SENSITIVE_BURST as usize {
        assert_eq!(get(&p.state, &path).await.0, StatusCode::OK);
    }
    let (status, headers, answer) = get(&p.state, &path).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_json_error(&headers, &answer, "too-many-requests");
}

#[tokio::test]
async fn sensitive_work_bound_counts_after_case_folding() {
    let mut p = populated("hostile-fold");
    without_rate_limits(&mut p);
    // U+0130 folds to two characters ("i" and a combining dot): counted before folding this
    // request is under the bound, the matcher's real work is four times it.
    let name = "\u{130}".repeat(4_900);
    let pattern = format!("*{}x", "\u{130}".repeat(198));
    assert_eq!(
        pattern.chars().count(),
        toolmark_api::servers::MAX_PATTERN_CHARS
    );
    let raw_work = (name.chars().count() as u64 + 1) * 100 * (pattern.chars().count() as u64 + 1);
    assert!(
        raw_work <= toolmark_api::servers::MAX_MATCH_WORK,
        "{raw_work}"
    );
    let body = serde_json::to_vec(&json!({
        "tools": [{"name": name}], "patterns": vec![pattern; 100],
    }))
    .unwrap();
    let (status, headers, answer) = post_json(&p.state, "/api/v1/sensitive", body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let v = assert_json_error(&headers, &answer, "bad-request");
    assert!(
        v["detail"].as_str().unwrap().contains("too much matching"),
        "{v}"
    );
    assert!(
        v["detail"].as_str().unwrap().contains("after case folding"),
        "{v}"
    );
}

/// A state without rate limits, and 5,000 tools of distinct 100-character names (505,000 name
/// characters with the matcher's one per name): what the star tests send.
fn long_names(tag: &str) -> (Populated, Vec<Value>) {
    let mut p = populated(tag);
    without_rate_limits(&mut p);
    let tools = (0..5_000)
        .map(|i| json!({"name": format!("{i:0>100}")}))
        .collect();
    (p, tools)
}

/// A run of `*` is read as one `*` before the work bound counts it: one pattern of 200 stars
/// against 5,000 names of 100 characters, which counted star by star would be 505,000 × 201 ≈
/// 1.02 × 10⁸ steps (over the bound), is 200 OK and marks every tool sensitive, as `*` does.
#[tokio::test]
async fn a_pattern_of_200_stars_matches_like_one_star() {
    let (p, tools) = long_names("hostile-stars");
    let bound = toolmark_api::servers::MAX_MATCH_WORK;
    let stars = "*".repeat(toolmark_api::servers::MAX_PATTERN_CHARS);
    let uncollapsed = 5_000 * 101 * (stars.len() as u64 + 1);
    let collapsed = 5_000 * 101 * 2;
    println!(
        "200 stars: {uncollapsed} steps counted star by star, {collapsed} collapsed; bound {bound}"
    );
    assert!(uncollapsed > bound && collapsed <= bound);
    let body = serde_json::to_vec(&json!({"tools": tools, "patterns": [stars]})).unwrap();
    let (status, _, answer) = post_json(&p.state, "/api/v1/sensitive", body).await;
    let v: Value = serde_json::from_slice(&answer).unwrap();
    println!("status {status}");
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["sensitive"].as_array().unwrap().len(), 5_000);
    assert_eq!(v["safe"], json!([]));
}

/// The bound still refuses a pattern that is really expensive: 100 star groups with a literal
/// between each (`*a*a…`, 200 characters, nothing to collapse) against the same names.
#[tokio::test]
async fn separate_star_groups_are_still_refused_by_the_work_bound() {
    let (p, tools) = long_names("hostile-star-groups");
    let bound = toolmark_api::servers::MAX_MATCH_WORK;
    let groups = "*a".repeat(toolmark_api::servers::MAX_PATTERN_CHARS / 2);
    let cost = 5_000 * 101 * (groups.len() as u64 + 1);
    println!("100 `*a` groups: {cost} steps; bound {bound}");
    assert!(cost > bound);
    let body = serde_json::to_vec(&json!({"tools": tools, "patterns": [groups]})).unwrap();
    let (status, headers, answer) = post_json(&p.state, "/api/v1/sensitive", body).await;
    println!("status {status}");
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let v = assert_json_error(&headers, &answer, "bad-request");
    let detail = v["detail"].as_str().unwrap();
    println!("{detail}");
    assert!(detail.contains(&format!("is {cost}, above {bound}")), "{v}");
}

#[tokio::test]
async fn rate_limit_text_names_the_configured_rate() {
    let mut p = populated("hostile-rate-text");
    Arc::get_mut(&mut p.state).unwrap().limiter = RateLimiter::new(10.0 / 60.0, 1.0);
    let body = json!({"endpoint": MEMORY_URL}).to_string().into_bytes();
    assert_eq!(
        post_json(&p.state, "/api/v1/check", body.clone()).await.0,
        StatusCode::OK
    );
    let (status, headers, answer) = post_json(&p.state, "/api/v1/check", body).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let v = assert_json_error(&headers, &answer, "too-many-requests");
    let detail = v["detail"].as_str().unwrap();
    assert!(detail.contains("at most 10 checks a minute"), "{detail}");
    assert!(!detail.contains("60"), "{detail}");
}

#[tokio::test]
async fn ipv6_clients_in_one_slash_64_share_a_bucket() {
    let mut p = populated("hostile-ipv6");
    Arc::get_mut(&mut p.state).unwrap().limiter = RateLimiter::new(1.0 / 60.0, 1.0);
    let body = json!({"endpoint": MEMORY_URL}).to_string().into_bytes();
    let check = |peer: &str| from_peer(post("/api/v1/check", body.clone()), peer);
    let (first, _, _) = send(&p.state, check("[2001:db8:1:2::1]:40000")).await;
    assert_eq!(first, StatusCode::OK);
    let (same_64, _, _) = send(&p.state, check("[2001:db8:1:2:ffff:ffff:ffff:fffe]:40001")).await;
    assert_eq!(
        same_64,
        StatusCode::TOO_MANY_REQUESTS,
        "another address of the same /64"
    );
    let (other_64, _, _) = send(&p.state, check("[2001:db8:1:3::1]:40002")).await;
    assert_eq!(other_64, StatusCode::OK, "the next /64 is another client");
    let (v4, _, _) = send(&p.state, check("192.0.2.1:40003")).await;
    assert_eq!(v4, StatusCode::OK);
}
