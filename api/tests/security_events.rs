//! Security events over HTTP: the lossless cursor API (also while events are being appended),
//! one event by id, the security feeds read with feed-rs, and every served event checked with
//! the client crate (`verify_event`, `verify_chain`), tampered ones refused.

#[path = "support/mod.rs"]
mod api_support;
/// The index's test support, where the shared events world looks for it.
mod support {
    pub use crate::api_support::index_support::*;
}
#[path = "../../index/tests/support/events_world.rs"]
mod events_world;

use std::sync::Arc;

use api_support::{BASE, get};
use axum::http::StatusCode;
use events_world::{record_day, world as event_world};
use serde_json::Value;
use support::Env;
use toolmark_api::AppState;
use toolmark_client::{EventError, verify_chain, verify_event};

fn open(env: &Env) -> Arc<AppState> {
    Arc::new(AppState::open(&env.dir, BASE).unwrap())
}

fn key_hex(state: &AppState) -> String {
    toolmark_toolset::hex::encode(&state.answer_key.verifying_key().to_bytes())
}

async fn get_json(state: &Arc<AppState>, path: &str) -> (StatusCode, Value) {
    let (status, _, body) = get(state, path).await;
    let v = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{path}: {e}: {}", String::from_utf8_lossy(&body)));
    (status, v)
}

/// Every event, paging by `nextCursor` with pages of `limit`.
async fn read_all(state: &Arc<AppState>, limit: u32) -> Vec<(u64, Value)> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let (status, page) = get_json(
            state,
            &format!("/api/v1/security-events?after={after}&limit={limit}"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let events = page["events"].as_array().unwrap();
        if events.is_empty() {
            assert_eq!(page["nextCursor"], after, "an empty page keeps the cursor");
            return out;
        }
        assert!(events.len() <= limit as usize);
        for e in events {
            out.push((e["cursor"].as_u64().unwrap(), e["event"].clone()));
        }
        assert_eq!(page["nextCursor"], out.last().unwrap().0);
        after = out.last().unwrap().0;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cursor_api_serves_every_event_once_in_order_as_a_verified_chain() {
    let env = event_world("api-events-all", 5);
    let state = open(&env);
    let all = read_all(&state, 3).await;
    let stored = env
        .index
        .security_events(&toolmark_index::EventQuery {
            after: Some(0),
            limit: 1_000,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        all.iter()
            .map(|(c, e)| (*c, e["id"].as_str().unwrap().to_owned()))
            .collect::<Vec<_>>(),
        stored
            .iter()
            .map(|r| (r.seq, r.id.clone()))
            .collect::<Vec<_>>()
    );
    let docs: Vec<Value> = all.iter().map(|(_, e)| e.clone()).collect();
    let events = verify_chain(&docs, &key_hex(&state)).unwrap();
    assert!(
        events
            .iter()
            .all(|e| e.issuer == format!("{BASE}/api/v1/issuer"))
    );
    // The issuer's key document names the key that signed them.
    let (_, issuer) = get_json(&state, "/api/v1/issuer").await;
    assert_eq!(issuer["publicKeyHex"], key_hex(&state));
    assert_eq!(
        docs[0]["signature"]["keyId"], issuer["keyId"],
        "events carry the answer key's id"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn paging_is_lossless_while_events_are_appended() {
    let env = event_world("api-events-live", 2);
    let state = open(&env);
    // The writer records five more days on its own thread while the reader pages one event at
    // a time.
    let writer = std::thread::spawn(move || {
        let mut env = env;
        for d in 2..7 {
            record_day(&mut env, d);
        }
        env
    });
    let mut seen: Vec<(u64, Value)> = Vec::new();
    let mut after = 0;
    let mut writer = Some(writer);
    let mut env = None;
    loop {
        let (status, page) = get_json(
            &state,
            &format!("/api/v1/security-events?after={after}&limit=1"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let events = page["events"].as_array().unwrap().clone();
        for e in &events {
            seen.push((e["cursor"].as_u64().unwrap(), e["event"].clone()));
        }
        after = page["nextCursor"].as_u64().unwrap();
        if events.is_empty() {
            match writer.take() {
                Some(w) if w.is_finished() => env = Some(w.join().unwrap()),
                Some(w) => {
                    writer = Some(w);
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                // The writer had finished before this empty page was read: done.
                None => break,
            }
        }
    }
    let env = env.unwrap();
    let stored = env
        .index
        .security_events(&toolmark_index::EventQuery {
            after: Some(0),
            limit: 1_000,
            ..Default::default()
        })
        .unwrap();
    assert!(stored.len() >= 10, "{}", stored.len());
    assert_eq!(
        seen.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        stored.iter().map(|r| r.seq).collect::<Vec<_>>(),
        "every event once, in order"
    );
    let docs: Vec<Value> = seen.into_iter().map(|(_, e)| e).collect();
    verify_chain(&docs, &key_hex(&state)).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_event_is_served_by_its_id_and_signed_the_same_every_time() {
    let env = event_world("api-events-one", 3);
    let state = open(&env);
    let all = read_all(&state, 200).await;
    let (_, first) = &all[0];
    let id = first["id"].as_str().unwrap();
    let path = format!(
        "/api/v1/security-events/{}",
        id.replace('+', "%2B")
            .replace('/', "%2F")
            .replace('=', "%3D")
    );
    let (status, _, a) = get(&state, &path).await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, b) = get(&state, &path).await;
    assert_eq!(a, b, "Ed25519 is deterministic: one event, one document");
    let served: Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(&served, first);
    verify_event(&served, &key_hex(&state)).unwrap();
    let unknown = format!("/api/v1/security-events/sha256-{}%3D", "A".repeat(43));
    assert_eq!(get(&state, &unknown).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        get(&state, "/api/v1/security-events/nope").await.0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tampered_event_or_a_broken_chain_is_refused() {
    let env = event_world("api-events-tamper", 4);
    let state = open(&env);
    let docs: Vec<Value> = read_all(&state, 200)
        .await
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let key = key_hex(&state);
    // Evidence changed after signing: the signature fails.
    let mut changed = docs[0].clone();
    changed["evidence"]["class"] = "benign".into();
    assert!(matches!(
        verify_event(&changed, &key),
        Err(EventError::BadSignature)
    ));
    // Re-signed by the key but with the old id: the id is not the body's digest.
    let mut body = changed.as_object().unwrap().clone();
    body.remove("signature");
    body.remove("issuer");
    let resigned = toolmark_client::sign_event(
        &Value::Object(body).to_string(),
        &format!("{BASE}/api/v1/issuer"),
        &state.answer_key,
    )
    .unwrap();
    assert!(matches!(
        verify_event(&resigned, &key),
        Err(EventError::Id { .. })
    ));
    // Another key.
    let other = toolmark_toolset::hex::encode(
        &ed25519_dalek::SigningKey::from_bytes(&[9; 32])
            .verifying_key()
            .to_bytes(),
    );
    assert!(matches!(
        verify_event(&docs[0], &other),
        Err(EventError::BadSignature)
    ));
    // An event left out of the chain: the next one about its target does not link.
    let linked = docs.iter().position(|d| !d["previous"].is_null()).unwrap();
    let target = docs[linked]["target"]["id"].clone();
    let mut gap = docs.clone();
    gap.retain(|d| d["id"] != docs[linked]["previous"]);
    assert_eq!(gap.len(), docs.len() - 1);
    assert!(matches!(
        verify_chain(&gap, &key),
        Err(EventError::Previous { .. })
    ));
    // And reordered.
    let mut swapped = docs.clone();
    let later = swapped
        .iter()
        .rposition(|d| d["target"]["id"] == target)
        .unwrap();
    swapped.swap(0, later);
    assert!(verify_chain(&swapped, &key).is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_security_feeds_list_the_newest_events_and_parse_as_feeds() {
    let env = event_world("api-events-feeds", 5);
    let state = open(&env);
    let mut all = read_all(&state, 200).await;
    all.reverse();
    let urn = |e: &Value| {
        let sri: toolmark_toolset::Sri = e["id"].as_str().unwrap().parse().unwrap();
        format!("urn:sha256:{}", toolmark_toolset::hex::encode(&sri.0))
    };
    for (path, content_type) in [
        ("/security-feed.xml", "application/atom+xml; charset=utf-8"),
        ("/security-feed.rss", "application/rss+xml; charset=utf-8"),
        ("/security-feed.json", "application/feed+json"),
    ] {
        let (status, headers, body) = get(&state, path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(headers["content-type"], content_type, "{path}");
        let feed = feed_rs::parser::parse(&body[..])
            .unwrap_or_else(|e| panic!("{path}: {e}: {}", String::from_utf8_lossy(&body)));
        let ids: Vec<String> = feed.entries.iter().map(|e| e.id.clone()).collect();
        let expected: Vec<String> = all.iter().map(|(_, e)| urn(e)).collect();
        assert_eq!(ids, expected, "{path}: newest first");
        let first = &feed.entries[0];
        assert_eq!(
            first.title.as_ref().unwrap().content,
            format!(
                "{}: {} ({})",
                all[0].1["kind"].as_str().unwrap(),
                all[0].1["target"]["name"].as_str().unwrap(),
                all[0].1["target"]["endpoint"].as_str().unwrap()
            )
        );
        // Watching one target lists only its events.
        let target = all[0].1["target"]["id"].as_str().unwrap();
        let (status, _, body) = get(&state, &format!("{path}?watch={target}")).await;
        assert_eq!(status, StatusCode::OK);
        let watched = feed_rs::parser::parse(&body[..]).unwrap();
        let expected: Vec<String> = all
            .iter()
            .filter(|(_, e)| e["target"]["id"] == target)
            .map(|(_, e)| urn(e))
            .collect();
        assert_eq!(
            watched
                .entries
                .iter()
                .map(|e| e.id.clone())
                .collect::<Vec<_>>(),
            expected
        );
        // A refusal is a JSON error, as on every API path (not the desk's HTML page).
        let (status, headers, _) = get(&state, &format!("{path}?watch=xyz")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(headers["content-type"], "application/json", "{path}");
    }
    // The JSON feed carries each signed event, which verifies.
    let (_, feed) = get_json(&state, "/security-feed.json").await;
    for item in feed["items"].as_array().unwrap() {
        verify_event(&item["_toolmark"]["event"], &key_hex(&state)).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_cursor_queries_are_refused() {
    let env = event_world("api-events-bad", 1);
    let state = open(&env);
    for q in [
        "limit=0",
        "limit=201",
        "after=-1",
        "after=01",
        "after=x",
        "watch=ABCDEF0123456789",
        "after=1&after=2",
    ] {
        let (status, _, _) = get(&state, &format!("/api/v1/security-events?{q}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{q}");
    }
    let (status, page) = get_json(&state, "/api/v1/security-events?limit=200").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        page["events"],
        Value::Array(vec![]),
        "one day has no change"
    );
    assert_eq!(page["nextCursor"], 0);
}
