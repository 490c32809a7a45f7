//! `POST /api/v1/check`: every `match` value, bad input, and an answer verified end to end the
//! way a client would — the answer's signature, then the inclusion proof against the
//! checkpoint, then the checkpoint's own signature, then the entry's digest.

mod support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::*;
use toolmark_client::verify_answer;
use toolmark_log::entry::Entry;
use toolmark_log::proof::{decode_tlog_proof, verify_tlog_proof};

async fn check(p: &Populated, body: Value) -> Value {
    let (status, headers, bytes) =
        post_json(&p.state, "/api/v1/check", body.to_string().into_bytes()).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    assert_eq!(headers["cache-control"], "no-store");
    serde_json::from_slice(&bytes).unwrap()
}

async fn refused(p: &Populated, body: Vec<u8>) -> (StatusCode, String) {
    let (status, _, bytes) = post_json(&p.state, "/api/v1/check", body).await;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    assert!(
        v["detail"].is_string() || status == StatusCode::PAYLOAD_TOO_LARGE,
        "{text}"
    );
    (status, text)
}

/// What a client does with an answer: check the signature with the issuer key, then the proof
/// bundle against the log's key, then that the entry is the one the answer talks about.
/// The full digest a client computes from the tools it sends (toolset, not the server).
fn full_of(tools: &Value) -> String {
    let set = toolmark_toolset::ToolSet::parse(tools.to_string().as_bytes()).unwrap();
    toolmark_toolset::full::digest(&set).to_string()
}

/// `compared`: the digest the client computed and sent (or computed from the tools it sent).
async fn verify_as_a_client(p: &Populated, answer: &Value, compared: &str) -> Entry {
    // The issuer's key, as a client fetches it once.
    let (_, _, issuer) = get(&p.state, "/api/v1/issuer").await;
    let issuer: Value = serde_json::from_slice(&issuer).unwrap();
    let key = issuer["publicKeyHex"].as_str().unwrap();
    let vkey = p.state.log.vkey();
    let compared = compared.parse().unwrap();
    // Signature → inclusion proof → checkpoint note → entry (docs/api.md).
    let verified = verify_answer(answer, key, vkey, Some(&compared)).expect("the answer verifies");
    // Another digest than the one compared does not verify a same/previously-observed answer.
    let other_digest = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    assert!(
        verify_answer(answer, key, vkey, Some(&other_digest.parse().unwrap()))
            .unwrap_err()
            .to_string()
            .contains("digest")
    );
    assert_eq!(
        verified.checkpoint.size,
        answer["log"]["treeSize"].as_u64().unwrap()
    );
    assert_eq!(verified.entry.status, "ok");

    // A changed answer does not verify.
    let mut forged = answer.clone();
    forged["match"] = json!("same");
    forged["note"] = json!("forged");
    if forged != *answer {
        assert!(
            verify_answer(&forged, key, vkey, None)
                .unwrap_err()
                .to_string()
                .contains("signature")
        );
    }
    // A tampered entry does not verify (its proof fails before anything else is believed).
    let parsed = decode_tlog_proof(answer["proof"]["tlogProof"].as_str().unwrap()).unwrap();
    let mut tampered = answer["proof"]["entry"]
        .as_str()
        .unwrap()
        .as_bytes()
        .to_vec();
    let last = tampered.len() - 3;
    tampered[last] ^= 1;
    assert!(verify_tlog_proof(&parsed, &tampered, vkey).is_err());
    // A malformed key is refused; another log's key does not verify the proof.
    assert!(
        verify_answer(answer, &key[..62], vkey, None)
            .unwrap_err()
            .to_string()
            .contains("hex")
    );
    let other = toolmark_log::note::LogKey::generate("other.example/log").unwrap();
    assert!(
        verify_answer(answer, key, &other.vkey(), None)
            .unwrap_err()
            .to_string()
            .contains("proof")
    );
    verified.entry
}

#[tokio::test]
async fn same_with_a_proof_that_verifies() {
    let p = populated("check-same");
    let tools = tools_of(&page(MEMORY_SET));
    let a = check(&p, json!({"endpoint": MEMORY_URL, "tools": tools})).await;
    assert_eq!(a["match"], "same", "{a:#}");
    assert_eq!(a["type"], "toolmark.check/v1");
    assert_eq!(a["query"]["comparedBy"], "toolmark/1");
    assert_eq!(a["target"]["name"], "io.example/memory");
    assert_eq!(a["observed"]["observations"], 2);
    let entry = verify_as_a_client(&p, &a, &full_of(&tools)).await;
    assert_eq!(
        entry.full.map(|d| d.to_string()).as_deref(),
        a["query"]["fullDigest"].as_str()
    );
    assert_eq!(
        entry.observed_at,
        a["observed"]["lastObserved"].as_str().unwrap()
    );

    // HISTOR's form: only the MTL/1 digest, and a differently spelled endpoint.
    let mtl1 = a["query"]["toolSetDigest"].as_str().unwrap();
    let b = check(
        &p,
        json!({"endpoint": "HTTPS://u:p@Memory.Example.com:443/mcp/#top", "toolSetDigest": mtl1}),
    )
    .await;
    assert_eq!(b["match"], "same");
    assert_eq!(b["query"]["comparedBy"], "MTL/1");
    verify_as_a_client(&p, &b, mtl1).await;
    // By name only.
    let c = check(
        &p,
        json!({"name": "io.example/memory", "toolSetDigest": mtl1}),
    )
    .await;
    assert_eq!(c["match"], "same");
}

#[tokio::test]
async fn previously_observed_and_different() {
    let p = populated("check-prev");
    // Day 0's filesystem set; day 1 flipped a readOnlyHint.
    let old = tools_of(&page(FILES_SET));
    let a = check(&p, json!({"endpoint": FILES_URL, "tools": old})).await;
    assert_eq!(a["match"], "previously-observed", "{a:#}");
    assert_eq!(a["seenBefore"]["observations"], 1);
    let entry = verify_as_a_client(&p, &a, &full_of(&old)).await;
    assert!(entry.observed_at.as_str() < a["observed"]["lastObserved"].as_str().unwrap());
    // MTL/1 cannot see the flipped annotation: by MTL/1 the old set is the current one.
    let mtl1 = a["query"]["toolSetDigest"].as_str().unwrap();
    let b = check(&p, json!({"endpoint": FILES_URL, "toolSetDigest": mtl1})).await;
    assert_eq!(b["match"], "same");
    // The current set is `same`.
    let now = tools_of(&rug_pull());
    assert_eq!(
        check(&p, json!({"endpoint": FILES_URL, "tools": now})).await["match"],
        "same"
    );
    // A set never observed there.
    let other = tools_of(&page(MEMORY_SET));
    let d = check(&p, json!({"endpoint": FILES_URL, "tools": other})).await;
    assert_eq!(d["match"], "different");
    assert!(d.get("proof").is_none());
    // A timeout after a good day still compares with the last good observation, and says so.
    let f = check(
        &p,
        json!({"endpoint": FLAKY_URL, "tools": tools_of(&page(FETCH_SET))}),
    )
    .await;
    assert_eq!(f["match"], "same");
    assert!(f["note"].as_str().unwrap().contains("timeout"), "{f:#}");
}

#[tokio::test]
async fn not_listed_not_observed_no_digest() {
    let p = populated("check-misc");
    let a = check(
        &p,
        json!({"endpoint": "https://unknown.example.com/mcp", "tools": []}),
    )
    .await;
    assert_eq!(a["match"], "not-listed");
    let b = check(&p, json!({"endpoint": LOCKED_URL, "tools": []})).await;
    assert_eq!(b["match"], "not-observed");
    assert_eq!(b["target"]["lastStatus"], "auth-required");
    let c = check(&p, json!({"endpoint": KEYED_URL})).await;
    assert_eq!(c["match"], "not-observed");
    assert!(c["note"].as_str().unwrap().contains("header-required"));
    let d = check(&p, json!({"endpoint": MEMORY_URL})).await;
    assert_eq!(d["match"], "no-digest");
    assert!(d["observed"]["fullDigest"].is_string());
    // Every answer is signed, proofs or not.
    assert!(d["signature"]["value"].is_string());
}

#[tokio::test]
async fn undigestible_when_the_observed_set_has_no_mtl1() {
    use support::index_support::{Env, day, day_str, ok, records};
    let mut env = Env::new("api-undigestible");
    let recs = records(json!([{
        "name": "io.example/frac", "description": "d", "version": "1",
        "remotes": [{"type": "streamable-http", "url": "https://frac.example.com/mcp"}],
    }]));
    let page = r#"{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"x":{"type":"number","minimum":0.5}}}}]}"#;
    env.run(&day_str(0, 0), &recs, &[], |_| {
        Some(ok(day(0, 1), vec![page.into()]))
    });
    let state = std::sync::Arc::new(toolmark_api::AppState::open(&env.dir, BASE).unwrap());
    let p = Populated::wrap(env.dir.clone(), state);
    let digest = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";
    let a = check(
        &p,
        json!({"endpoint": "https://frac.example.com/mcp", "toolSetDigest": digest}),
    )
    .await;
    assert_eq!(a["match"], "undigestible", "{a:#}");
    assert!(a["note"].as_str().unwrap().contains("MTL-NUM-001"));
    // The full digest still compares it.
    let tools: Value = serde_json::from_str::<Value>(page).unwrap()["tools"].clone();
    let b = check(
        &p,
        json!({"endpoint": "https://frac.example.com/mcp", "tools": tools}),
    )
    .await;
    assert_eq!(b["match"], "same");
    assert_eq!(b["query"]["digestError"]["code"], "MTL-NUM-001");
    drop(env);
}

#[tokio::test]
async fn bad_requests_are_clear_4xx() {
    let p = populated("check-bad");
    let cases: Vec<(Vec<u8>, StatusCode, &str)> = vec![
        (b"not json".to_vec(), StatusCode::BAD_REQUEST, "body"),
        (b"[]".to_vec(), StatusCode::BAD_REQUEST, "object"),
        (b"\xff\xfe".to_vec(), StatusCode::BAD_REQUEST, "UTF-8"),
        (
            json!({"tools": []}).to_string().into_bytes(),
            StatusCode::BAD_REQUEST,
            "endpoint, package or name",
        ),
        (
            json!({"endpoint": 7}).to_string().into_bytes(),
            StatusCode::BAD_REQUEST,
            "string",
        ),
        (
            json!({"endpoint": ""}).to_string().into_bytes(),
            StatusCode::BAD_REQUEST,
            "characters",
        ),
        (
            json!({"endpoint": "x".repeat(2001)})
                .to_string()
                .into_bytes(),
            StatusCode::BAD_REQUEST,
            "characters",
        ),
        (
            json!({"endpoint": "a\u{0}b"}).to_string().into_bytes(),
            StatusCode::BAD_REQUEST,
            "NUL",
        ),
        (
            json!({"endpoint": MEMORY_URL, "tools": {}})
                .to_string()
                .into_bytes(),
            StatusCode::BAD_REQUEST,
            "array",
        ),
        (
            json!({"endpoint": MEMORY_URL, "toolSetDigest": "sha256-nope"})
                .to_string()
                .into_bytes(),
            StatusCode::BAD_REQUEST,
            "sha256",
        ),
        (
            json!({"endpoint": MEMORY_URL, "contribute": "yes"})
                .to_string()
                .into_bytes(),
            StatusCode::BAD_REQUEST,
            "boolean",
        ),
        (
            json!({"endpoint": MEMORY_URL, "tools": vec![json!({"name": "t"}); 5001]})
                .to_string()
                .into_bytes(),
            StatusCode::BAD_REQUEST,
            "5000",
        ),
        (
            format!(
                "{{\"endpoint\":\"{MEMORY_URL}\",\"tools\":[{}{}]}}",
                "[".repeat(10_000),
                "]".repeat(10_000)
            )
            .into_bytes(),
            StatusCode::BAD_REQUEST,
            "deep",
        ),
    ];
    for (body, want, needle) in cases {
        let (status, text) = refused(&p, body).await;
        assert_eq!(status, want, "{text}");
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
    // Over 2 MiB.
    let big = json!({"endpoint": MEMORY_URL, "pad": "x".repeat(2 * 1024 * 1024)}).to_string();
    let (status, _) = refused(&p, big.into_bytes()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn unchanged_since_is_the_first_observation_of_the_current_set() {
    use support::index_support::day_str;
    let p = populated("check-unchanged");
    // The memory set both days: unchanged since day 0.
    let a = check(
        &p,
        json!({"endpoint": MEMORY_URL, "tools": tools_of(&page(MEMORY_SET))}),
    )
    .await;
    assert_eq!(a["observed"]["unchangedSince"], day_str(0, 60));
    assert_eq!(a["observed"]["firstObserved"], day_str(0, 60));
    // Files changed on day 1: unchanged since day 1, whatever was asked.
    let b = check(
        &p,
        json!({"endpoint": FILES_URL, "tools": tools_of(&page(FILES_SET))}),
    )
    .await;
    assert_eq!(b["match"], "previously-observed");
    assert_eq!(b["observed"]["unchangedSince"], day_str(1, 60));
    // A timeout on day 1 does not end the run of day 0's set.
    let c = check(&p, json!({"endpoint": FLAKY_URL})).await;
    assert_eq!(c["observed"]["unchangedSince"], day_str(0, 60));
    // No current set, no member.
    let d = check(&p, json!({"endpoint": LOCKED_URL})).await;
    assert!(d.get("observed").is_none(), "{d:#}");
}

#[tokio::test]
async fn an_endpoint_asked_with_another_servers_name_is_not_listed_and_says_whose_it_is() {
    let p = populated("check-other-name");
    let tools = tools_of(&page(MEMORY_SET));
    let a = check(
        &p,
        json!({"endpoint": MEMORY_URL, "name": "io.example/files", "tools": tools}),
    )
    .await;
    assert_eq!(a["match"], "not-listed", "{a:#}");
    assert!(a.get("target").is_none() && a.get("observed").is_none());
    let note = a["note"].as_str().unwrap();
    assert!(
        note.contains("under io.example/memory, not under io.example/files"),
        "{note}"
    );
    // With its own name it is the memory server's.
    let b = check(
        &p,
        json!({"endpoint": MEMORY_URL, "name": "io.example/memory", "tools": tools}),
    )
    .await;
    assert_eq!(b["match"], "same");
}

const MULTI: &str = "io.example/multi";
const MULTI_A: &str = "https://a.multi.example.com/mcp";
const MULTI_B: &str = "https://b.multi.example.com/mcp";
const MULTI_C: &str = "https://c.multi.example.com/mcp";

/// One server with three remotes, each serving its own set: A memory, B fetch, C filesystem on
/// day 0 and its rug pull on day 1.
fn three_remotes(tag: &str) -> (support::index_support::Env, Populated) {
    use support::index_support::{Env, day, day_str, ok, records};
    let mut env = Env::new(tag);
    let recs = records(json!([{
        "name": MULTI, "description": "three remotes", "version": "1",
        "remotes": [{"type": "streamable-http", "url": MULTI_A},
                    {"type": "streamable-http", "url": MULTI_B},
                    {"type": "streamable-http", "url": MULTI_C}],
    }]));
    for d in 0..2u64 {
        env.run(&day_str(d, 0), &recs, &[], |url| {
            let t = day(d, 60);
            Some(match (url, d) {
                (MULTI_A, _) => ok(t, vec![page(MEMORY_SET)]),
                (MULTI_B, _) => ok(t, vec![page(FETCH_SET)]),
                (MULTI_C, 0) => ok(t, vec![page(FILES_SET)]),
                (MULTI_C, _) => ok(t, vec![rug_pull()]),
                _ => return None,
            })
        });
    }
    let state = std::sync::Arc::new(toolmark_api::AppState::open(&env.dir, BASE).unwrap());
    let p = Populated::wrap(env.dir.clone(), state);
    (env, p)
}

#[tokio::test]
async fn a_name_only_question_answers_for_the_remote_whose_current_set_matches() {
    let (env, p) = three_remotes("api-three-current");
    for (set, url) in [
        (page(MEMORY_SET), MULTI_A),
        (page(FETCH_SET), MULTI_B),
        (rug_pull(), MULTI_C),
    ] {
        let tools = tools_of(&set);
        let a = check(&p, json!({"name": MULTI, "tools": tools})).await;
        assert_eq!(a["match"], "same", "{url}: {a:#}");
        assert_eq!(a["target"]["endpoint"], url);
        let entry = verify_as_a_client(&p, &a, &full_of(&tools)).await;
        assert_eq!(entry.subject.target, url);
        // HISTOR's form (MTL/1 digest only) finds the same remote.
        let mtl1 = a["query"]["toolSetDigest"].as_str().unwrap();
        let b = check(&p, json!({"name": MULTI, "toolSetDigest": mtl1})).await;
        assert_eq!(
            (&b["match"], &b["target"]["endpoint"]),
            (&json!("same"), &json!(url))
        );
    }
    drop(env);
}

#[tokio::test]
async fn a_name_only_question_answers_for_the_remote_that_observed_the_set_before() {
    let (env, p) = three_remotes("api-three-before");
    let tools = tools_of(&page(FILES_SET));
    let a = check(&p, json!({"name": MULTI, "tools": tools})).await;
    assert_eq!(a["match"], "previously-observed", "{a:#}");
    assert_eq!(a["target"]["endpoint"], MULTI_C);
    verify_as_a_client(&p, &a, &full_of(&tools)).await;
    drop(env);
}

#[tokio::test]
async fn a_name_only_question_no_remote_matches_names_the_remotes_instead_of_picking_one() {
    let (env, p) = three_remotes("api-three-none");
    let other = tools_of(&page(support::index_support::ALFRESCO));
    let a = check(&p, json!({"name": MULTI, "tools": other})).await;
    assert_eq!(a["match"], "different", "{a:#}");
    assert!(a.get("target").is_none() && a.get("observed").is_none());
    let note = a["note"].as_str().unwrap();
    assert!(note.contains("3 remotes of io.example/multi"), "{note}");
    for url in [MULTI_A, MULTI_B, MULTI_C] {
        assert!(note.contains(url), "{url} not in {note}");
    }
    assert!(note.contains("ask with the endpoint"), "{note}");
    // Nothing to compare by: no remote is picked either.
    let b = check(&p, json!({"name": MULTI})).await;
    assert_eq!(b["match"], "no-digest", "{b:#}");
    assert!(b.get("target").is_none());
    assert!(b["note"].as_str().unwrap().contains(MULTI_B));
    // An endpoint still answers for its own remote.
    let c = check(
        &p,
        json!({"endpoint": MULTI_A, "name": MULTI, "tools": other}),
    )
    .await;
    assert_eq!(c["match"], "different");
    assert_eq!(c["target"]["endpoint"], MULTI_A);
    drop(env);
}

/// A remote dialled without its declared key: `/check` answers for what toolmark saw and says
/// that a client with the key may be served more.
#[tokio::test]
async fn an_answer_says_when_toolmark_observed_without_a_declared_header() {
    use support::index_support::{Env, MEMORY, corpus_page, day, day_str, ok, records};
    const OPEN: &str = "https://open.example.com/mcp";
    let mut env = Env::new("check-withheld");
    let recs = records(json!([
        {"name": "io.example/open", "description": "lists without a key", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": OPEN,
                      "headers": [{"name": "Authorization", "value": "Bearer {key}", "isSecret": true},
                                  {"name": "X-Tenant", "isRequired": true}]}]}
    ]));
    let page = corpus_page(MEMORY);
    env.run(&day_str(0, 0), &recs, &[], |_| {
        Some(ok(day(0, 5), vec![page.clone()]))
    });
    let state = std::sync::Arc::new(toolmark_api::AppState::open(&env.dir, BASE).unwrap());
    let p = Populated::wrap(env.dir.clone(), state);
    let a = check(&p, json!({"endpoint": OPEN, "tools": tools_of(&page)})).await;
    assert_eq!(a["match"], "same", "{a:#}");
    assert_eq!(
        a["target"]["withheldHeaders"],
        json!(["Authorization", "X-Tenant"])
    );
    let note = a["note"].as_str().unwrap();
    assert!(
        note.contains("without the declared header(s) Authorization, X-Tenant"),
        "{note}"
    );
    drop(env);
}

// ---- endpoint identity keeps the query (issue #25 §2) -----------------------------------------
//
// Hugging Face's real registry record lists `https://huggingface.co/mcp?login` and
// `https://huggingface.co/mcp`: two targets. Here `?login` serves the memory set on day 0 and
// the filesystem set on day 1, the plain one the fetch set both days.

use support::index_support::{HF_LOGIN, HF_PLAIN, HF_SERVER, huggingface};

fn hugging_face(tag: &str) -> (support::index_support::Env, Populated) {
    use support::index_support::{Env, day, day_str, ok};
    let mut env = Env::new(tag);
    let recs = huggingface();
    for d in 0..2u64 {
        env.run(&day_str(d, 0), &recs, &[], |url| {
            let t = day(d, 60);
            Some(match (url, d) {
                (HF_LOGIN, 0) => ok(t, vec![page(MEMORY_SET)]),
                (HF_LOGIN, _) => ok(t, vec![page(FILES_SET)]),
                _ => ok(t, vec![page(FETCH_SET)]),
            })
        });
    }
    let state = std::sync::Arc::new(toolmark_api::AppState::open(&env.dir, BASE).unwrap());
    let p = Populated::wrap(env.dir.clone(), state);
    (env, p)
}

#[tokio::test]
async fn an_endpoint_with_a_query_matches_the_target_with_that_query() {
    let (env, p) = hugging_face("api-hf-query");
    let tools = tools_of(&page(FILES_SET));
    let a = check(&p, json!({"endpoint": HF_LOGIN, "tools": tools})).await;
    assert_eq!(a["match"], "same", "{a:#}");
    assert_eq!(a["target"]["endpoint"], HF_LOGIN);
    let entry = verify_as_a_client(&p, &a, &full_of(&tools)).await;
    assert_eq!(entry.subject.target, HF_LOGIN);
    // The plain remote's set is not the `?login` target's: the query keeps them apart.
    let b = check(
        &p,
        json!({"endpoint": HF_LOGIN, "tools": tools_of(&page(FETCH_SET))}),
    )
    .await;
    assert_eq!(b["match"], "different", "{b:#}");
    assert_eq!(b["target"]["endpoint"], HF_LOGIN);
    drop(env);
}

#[tokio::test]
async fn an_endpoint_with_a_query_no_target_has_is_not_listed() {
    let (env, p) = hugging_face("api-hf-other-query");
    for endpoint in [
        "https://huggingface.co/mcp?logout",
        // The query is compared as written: its case counts.
        "https://huggingface.co/mcp?Login",
    ] {
        let a = check(
            &p,
            json!({"endpoint": endpoint, "tools": tools_of(&page(FETCH_SET))}),
        )
        .await;
        assert_eq!(a["match"], "not-listed", "{endpoint}: {a:#}");
        assert!(a.get("target").is_none());
    }
    drop(env);
}

#[tokio::test]
async fn an_endpoint_with_a_query_still_ignores_host_case_port_slash_userinfo_and_fragment() {
    let (env, p) = hugging_face("api-hf-normalised");
    let tools = tools_of(&page(FILES_SET));
    for endpoint in [
        "HTTPS://HuggingFace.CO:443/mcp/?login",
        "https://user:secret@huggingface.co/mcp?login#tools",
    ] {
        let a = check(&p, json!({"endpoint": endpoint, "tools": tools})).await;
        assert_eq!(
            (&a["match"], &a["target"]["endpoint"]),
            (&json!("same"), &json!(HF_LOGIN)),
            "{endpoint}"
        );
    }
    drop(env);
}

#[tokio::test]
async fn an_endpoint_without_a_query_is_same_when_its_own_target_matches() {
    let (env, p) = hugging_face("api-hf-plain-same");
    let tools = tools_of(&page(FETCH_SET));
    let a = check(&p, json!({"endpoint": HF_PLAIN, "tools": tools})).await;
    assert_eq!(a["match"], "same", "{a:#}");
    assert_eq!(a["target"]["endpoint"], HF_PLAIN);
    verify_as_a_client(&p, &a, &full_of(&tools)).await;
    drop(env);
}

/// WARDEN strips queries before it asks: a client of `?login` asks about the plain URL and is
/// compared with both targets; the answer rests on `?login`'s, names it and proves its entry.
#[tokio::test]
async fn an_endpoint_without_a_query_is_same_when_a_target_with_a_query_matches_and_names_it() {
    let (env, p) = hugging_face("api-hf-plain-login");
    let tools = tools_of(&page(FILES_SET));
    for ask in [
        json!({"endpoint": HF_PLAIN, "tools": tools}),
        json!({"endpoint": "https://huggingface.co/mcp?", "tools": tools}),
        json!({"endpoint": HF_PLAIN, "name": HF_SERVER, "tools": tools}),
    ] {
        let a = check(&p, ask.clone()).await;
        assert_eq!(a["match"], "same", "{ask}: {a:#}");
        assert_eq!(a["target"]["endpoint"], HF_LOGIN, "{ask}");
        let entry = verify_as_a_client(&p, &a, &full_of(&tools)).await;
        assert_eq!(entry.subject.target, HF_LOGIN);
        // HISTOR's form finds the same target.
        let mtl1 = a["query"]["toolSetDigest"].as_str().unwrap();
        let b = check(&p, json!({"endpoint": HF_PLAIN, "toolSetDigest": mtl1})).await;
        assert_eq!(
            (&b["match"], &b["target"]["endpoint"]),
            (&json!("same"), &json!(HF_LOGIN))
        );
    }
    drop(env);
}

#[tokio::test]
async fn an_endpoint_without_a_query_is_previously_observed_when_a_target_with_a_query_observed_it()
{
    let (env, p) = hugging_face("api-hf-plain-before");
    let tools = tools_of(&page(MEMORY_SET));
    let a = check(&p, json!({"endpoint": HF_PLAIN, "tools": tools})).await;
    assert_eq!(a["match"], "previously-observed", "{a:#}");
    assert_eq!(a["target"]["endpoint"], HF_LOGIN);
    let entry = verify_as_a_client(&p, &a, &full_of(&tools)).await;
    assert_eq!(entry.subject.target, HF_LOGIN);
    drop(env);
}

#[tokio::test]
async fn an_endpoint_without_a_query_no_target_matches_is_different_and_lists_them() {
    let (env, p) = hugging_face("api-hf-plain-different");
    let other = tools_of(&page(support::index_support::ALFRESCO));
    let a = check(&p, json!({"endpoint": HF_PLAIN, "tools": other})).await;
    assert_eq!(a["match"], "different", "{a:#}");
    assert!(a.get("target").is_none() && a.get("observed").is_none());
    assert!(a.get("proof").is_none());
    let note = a["note"].as_str().unwrap();
    println!("note: {note}");
    assert!(
        note.contains("any of the 2 remotes listed at https://huggingface.co/mcp"),
        "{note}"
    );
    assert!(note.contains(&format!("{HF_PLAIN}, {HF_LOGIN}")), "{note}");
    // Nothing to compare by: no target is picked either.
    let b = check(&p, json!({"endpoint": HF_PLAIN})).await;
    assert_eq!(b["match"], "no-digest", "{b:#}");
    assert!(b.get("target").is_none());
    assert!(b["note"].as_str().unwrap().contains(HF_LOGIN));
    drop(env);
}

/// More targets at one endpoint base than `/check` examines (`MAX_NAME_TARGETS`, 256): 300
/// servers with a remote `https://shared.example.com/mcp?<n>` (anyone can publish one), and
/// the named server's own remote sorting after all of them (its name and its query last).
/// Asked by that base and that name, the answer rests on the named server's target: the name
/// is applied before the row limit, never after it (before: `not-listed`, naming the others).
#[tokio::test]
async fn a_named_servers_target_is_found_behind_more_than_the_row_limit_of_others() {
    use support::index_support::{Env, day, day_str, ok, records};
    const BASE_URL: &str = "https://shared.example.com/mcp";
    const NAMED: &str = "io.example/zzz-last";
    let named_url = format!("{BASE_URL}?zzz");
    let mut env = Env::new("check-name-past-limit");
    let mut servers: Vec<Value> = (0..300)
        .map(|i| {
            json!({"name": format!("io.example/a{i:03}"), "description": "shares the base",
                   "version": "1", "remotes": [{"type": "streamable-http",
                   "url": format!("{BASE_URL}?a{i:03}")}]})
        })
        .collect();
    servers.push(
        json!({"name": NAMED, "description": "sorts last", "version": "1",
        "remotes": [{"type": "streamable-http", "url": named_url}]}),
    );
    let recs = records(Value::Array(servers));
    env.run(&day_str(0, 0), &recs, &[], |url| {
        let t = day(0, 60);
        Some(if url == named_url {
            ok(t, vec![page(MEMORY_SET)])
        } else {
            ok(t, vec![page(FETCH_SET)])
        })
    });
    let state = std::sync::Arc::new(toolmark_api::AppState::open(&env.dir, BASE).unwrap());
    let p = Populated::wrap(env.dir.clone(), state);
    let tools = tools_of(&page(MEMORY_SET));
    let a = check(
        &p,
        json!({"endpoint": BASE_URL, "name": NAMED, "tools": tools}),
    )
    .await;
    assert_eq!(a["match"], "same", "{a:#}");
    assert_eq!(a["target"]["endpoint"], named_url.as_str(), "{a:#}");
    verify_as_a_client(&p, &a, &full_of(&tools)).await;
    // A name none of them has is still told whose the endpoint is.
    let b = check(
        &p,
        json!({"endpoint": BASE_URL, "name": "io.example/nobody", "tools": tools}),
    )
    .await;
    assert_eq!(b["match"], "not-listed", "{b:#}");
    let note = b["note"].as_str().unwrap();
    assert!(note.contains("io.example/a000"), "{note}");
    drop(env);
}

/// `toolmark_checks_answered_total` from `/metrics`: (on the async worker, on a blocking
/// thread).
async fn answered(p: &Populated) -> (u64, u64) {
    let (_, _, text) = get(&p.state, "/metrics").await;
    let text = String::from_utf8(text).unwrap();
    let count = |on: &str| -> u64 {
        let line = format!("toolmark_checks_answered_total{{on=\"{on}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(line.as_str()))
            .unwrap_or_else(|| panic!("no {line} in {text}"))
            .parse()
            .unwrap()
    };
    (count("async-worker"), count("blocking-thread"))
}

/// A small question — an `endpoint` alone, with a digest or none, matched to at most one
/// target and not answered `different` (`check::Budget::Small`) — is answered on the async
/// worker that read it; `tools`, a `name`, a `different` answer (it reads the earlier entries)
/// and an endpoint several targets answer go to a blocking thread. Either way the answer is
/// the one the tests above check.
#[tokio::test]
async fn a_small_question_is_answered_on_the_async_worker_and_the_rest_on_a_blocking_thread() {
    let p = populated("check-where");
    let tools = tools_of(&page(MEMORY_SET));
    let a = check(&p, json!({"endpoint": MEMORY_URL, "tools": tools})).await;
    assert_eq!(a["match"], "same");
    assert_eq!(answered(&p).await, (0, 1));
    let mtl1 = a["query"]["toolSetDigest"].as_str().unwrap().to_owned();

    let b = check(&p, json!({"endpoint": MEMORY_URL, "toolSetDigest": mtl1})).await;
    assert_eq!(b["match"], "same", "{b:#}");
    assert_eq!(b["observed"]["observations"], 2);
    verify_as_a_client(&p, &b, &mtl1).await;
    assert_eq!(answered(&p).await, (1, 1));
    let none = check(&p, json!({"endpoint": MEMORY_URL})).await;
    assert_eq!(none["match"], "no-digest", "{none:#}");
    let unlisted = check(&p, json!({"endpoint": "https://nowhere.example/mcp"})).await;
    assert_eq!(unlisted["match"], "not-listed", "{unlisted:#}");
    assert_eq!(answered(&p).await, (3, 1));

    let named = check(
        &p,
        json!({"name": "io.example/memory", "toolSetDigest": mtl1}),
    )
    .await;
    assert_eq!(named["match"], "same");
    let both = json!({"endpoint": MEMORY_URL, "name": "io.example/memory", "toolSetDigest": mtl1});
    assert_eq!(check(&p, both).await["match"], "same");
    assert_eq!(answered(&p).await, (3, 3));
    let never = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    let other = check(&p, json!({"endpoint": MEMORY_URL, "toolSetDigest": never})).await;
    assert_eq!(other["match"], "different", "{other:#}");
    assert_eq!(answered(&p).await, (3, 4));

    let (env, hf) = hugging_face("api-check-where-hf");
    let mtl1 = check(
        &hf,
        json!({"endpoint": HF_LOGIN, "tools": tools_of(&page(FILES_SET))}),
    )
    .await["query"]["toolSetDigest"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(answered(&hf).await, (0, 1));
    let several = check(&hf, json!({"endpoint": HF_PLAIN, "toolSetDigest": mtl1})).await;
    assert_eq!(
        (&several["match"], &several["target"]["endpoint"]),
        (&json!("same"), &json!(HF_LOGIN))
    );
    assert_eq!(answered(&hf).await, (0, 2));
    let one = check(&hf, json!({"endpoint": HF_LOGIN, "toolSetDigest": mtl1})).await;
    assert_eq!(one["match"], "same");
    assert_eq!(answered(&hf).await, (1, 2));
    drop(env);
}
