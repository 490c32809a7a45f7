//! `/check` answers byte for byte: a fixed log (fixed log key, fixed observation times), a fixed
//! answer key and a fixed clock, and a table of requests covering every `match` value and every
//! refusal. The status, `content-type` and body bytes of each answer are compared with
//! `tests/fixtures/check-golden.json`; with `TOOLMARK_BLESS=1` the test writes that file
//! instead (only when the wire format is meant to change).

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use support::index_support::{
    Env, FETCH, FILESYSTEM, MEMORY, auth_required, corpus_page, day, day_str, failed,
    filesystem_rug_pull, ok, records,
};
use support::{
    BASE, FILES_URL, FLAKY_URL, KEYED_URL, LOCKED_URL, MEMORY_URL, post_json, server, tools_of,
};
use toolmark_api::AppState;
use toolmark_observation::observe::Status;
use toolmark_toolset::{ToolSet, full, mtl1};

const GOLDEN: &str = "tests/fixtures/check-golden.json";
const FRAC_URL: &str = "https://frac.example.com/mcp";
const GONE_URL: &str = "https://gone.example.com/mcp";
/// A tool set MTL/1 cannot digest (a fractional `minimum`), observed at [`FRAC_URL`].
const FRAC_PAGE: &str = r#"{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"x":{"type":"number","minimum":0.5}}}}]}"#;

/// The instant every answer is dated by: day 2 of the fixture, 10:00:00Z.
fn fixed_clock() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(day(2, 36_000))
}

/// Two crawl days through the real recorder, the log signed by a fixed key: the API test
/// fixture's five servers, plus one whose set MTL/1 cannot digest, one npm package (listed,
/// never observed) and one server delisted on day 1.
fn fixture() -> (Env, Arc<AppState>) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("api-check-golden-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let key = toolmark_log::note::LogKey::from_seed("toolmark.test/log", &[11; 32]).unwrap();
    let mut env = Env {
        log: toolmark_log::Log::init_with_key(&dir.join("log"), key).unwrap(),
        blobs: toolmark_index::Blobs::open(&dir.join("blobs")).unwrap(),
        index: toolmark_index::Index::open(&dir.join("index.sqlite")).unwrap(),
        dir,
    };
    let servers = vec![
        server("io.example/files", FILES_URL),
        server("io.example/memory", MEMORY_URL),
        server("io.example/locked", LOCKED_URL),
        server("io.example/flaky", FLAKY_URL),
        json!({
            "name": "io.example/keyed", "description": "needs a key", "version": "1.0.0",
            "remotes": [{"type": "streamable-http", "url": KEYED_URL,
                         // A required fixed `Host` toolmark may not send: the one remote that stays
                         // `header-required` (a secret header alone is dialled without it).
                         "headers": [{"name": "Host", "value": "tenant.internal", "isRequired": true},
                                     {"name": "Authorization", "isRequired": true, "isSecret": true}]}],
        }),
        server("io.example/frac", FRAC_URL),
        json!({
            "name": "io.example/pkg", "description": "a package", "version": "1.2.3",
            "packages": [{"registryType": "npm", "identifier": "@acme/pkg", "version": "1.2.3",
                          "transport": {"type": "stdio"}}],
        }),
    ];
    let with_gone = {
        let mut s = servers.clone();
        s.push(server("io.example/gone", GONE_URL));
        s
    };
    for d in 0..2u64 {
        let (recs, delisted): (_, &[&str]) = if d == 0 {
            (records(json!(with_gone)), &[])
        } else {
            (records(json!(servers)), &["io.example/gone"])
        };
        env.run(&day_str(d, 0), &recs, delisted, |url| {
            let t = day(d, 60);
            Some(match (url, d) {
                (FILES_URL, 0) => ok(t, vec![corpus_page(FILESYSTEM)]),
                (FILES_URL, _) => ok(t, vec![filesystem_rug_pull()]),
                (MEMORY_URL, _) | (GONE_URL, _) => ok(t, vec![corpus_page(MEMORY)]),
                (LOCKED_URL, _) => auth_required(t),
                (FLAKY_URL, 0) => ok(t, vec![corpus_page(FETCH)]),
                (FLAKY_URL, _) => failed(t, Status::Timeout, "observation deadline of 90 s passed"),
                (FRAC_URL, _) => ok(t, vec![FRAC_PAGE.into()]),
                _ => return None,
            })
        });
    }
    // The answer key, as `AppState::open` reads it (a hex seed).
    let answer_key = toolmark_index::DataDir::new(&env.dir).answer_key_path();
    std::fs::create_dir_all(answer_key.parent().unwrap()).unwrap();
    std::fs::write(&answer_key, "22".repeat(32)).unwrap();
    let mut state = AppState::open(&env.dir, BASE).unwrap();
    state.clock = fixed_clock;
    state.limiter = toolmark_api::ops::RateLimiter::unlimited();
    (env, Arc::new(state))
}

fn set_of(page: &str) -> ToolSet {
    ToolSet::parse(page.as_bytes()).unwrap()
}

fn mtl1_of(page: &str) -> String {
    mtl1::tool_set_digest(&set_of(page)).unwrap().to_string()
}

fn full_of(page: &str) -> String {
    full::digest(&set_of(page)).to_string()
}

/// Every request of the table, named.
fn requests() -> Vec<(&'static str, Vec<u8>)> {
    let memory = corpus_page(MEMORY);
    let files_old = corpus_page(FILESYSTEM);
    let files_now = filesystem_rug_pull();
    let never = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    let body = |v: Value| v.to_string().into_bytes();
    vec![
        // same
        (
            "same-by-tools",
            body(json!({"endpoint": MEMORY_URL, "tools": tools_of(&memory)})),
        ),
        (
            "same-by-mtl1-normalised-endpoint",
            body(
                json!({"endpoint": "HTTPS://u:p@Memory.Example.com:443/mcp/#top", "toolSetDigest": mtl1_of(&memory)}),
            ),
        ),
        (
            "same-by-full-digest",
            body(json!({"endpoint": MEMORY_URL, "fullDigest": full_of(&memory)})),
        ),
        (
            "same-by-name",
            body(json!({"name": "io.example/memory", "toolSetDigest": mtl1_of(&memory)})),
        ),
        (
            "same-by-name-and-endpoint-with-contribute",
            body(
                json!({"name": "io.example/memory", "endpoint": MEMORY_URL, "fullDigest": full_of(&memory), "contribute": true}),
            ),
        ),
        (
            "same-current-after-a-change",
            body(json!({"endpoint": FILES_URL, "tools": tools_of(&files_now)})),
        ),
        (
            "same-by-mtl1-blind-to-the-annotation",
            body(json!({"endpoint": FILES_URL, "toolSetDigest": mtl1_of(&files_old)})),
        ),
        (
            "same-after-a-timeout",
            body(json!({"endpoint": FLAKY_URL, "tools": tools_of(&corpus_page(FETCH))})),
        ),
        (
            "same-with-a-digest-error-in-the-query",
            body(json!({"endpoint": FRAC_URL, "tools": tools_of(FRAC_PAGE)})),
        ),
        (
            "same-at-a-delisted-server",
            body(json!({"endpoint": GONE_URL, "tools": tools_of(&memory)})),
        ),
        // previously-observed
        (
            "previously-observed-by-tools",
            body(json!({"endpoint": FILES_URL, "tools": tools_of(&files_old)})),
        ),
        (
            "previously-observed-by-full-digest",
            body(json!({"endpoint": FILES_URL, "fullDigest": full_of(&files_old)})),
        ),
        // different
        (
            "different-by-tools",
            body(json!({"endpoint": FILES_URL, "tools": tools_of(&memory)})),
        ),
        (
            "different-by-mtl1",
            body(json!({"endpoint": MEMORY_URL, "toolSetDigest": never})),
        ),
        (
            "different-by-full-digest",
            body(json!({"endpoint": MEMORY_URL, "fullDigest": never})),
        ),
        (
            "different-empty-tools",
            body(json!({"endpoint": MEMORY_URL, "tools": []})),
        ),
        // Elements that are not tools still digest (as a set no server has).
        (
            "different-tools-that-are-not-tools",
            body(json!({"endpoint": MEMORY_URL, "tools": [1, "two", null]})),
        ),
        // not-listed, not-observed, no-digest, undigestible
        (
            "not-listed",
            body(json!({"endpoint": "https://unknown.example.com/mcp", "tools": []})),
        ),
        (
            "not-listed-by-name",
            body(json!({"name": "io.example/nobody", "toolSetDigest": never})),
        ),
        (
            "not-listed-endpoint-under-another-name",
            body(
                json!({"endpoint": MEMORY_URL, "name": "io.example/files", "toolSetDigest": mtl1_of(&memory)}),
            ),
        ),
        (
            "not-observed-auth-required",
            body(json!({"endpoint": LOCKED_URL, "tools": []})),
        ),
        ("not-observed-skipped", body(json!({"endpoint": KEYED_URL}))),
        (
            "not-observed-package",
            body(json!({"package": "npm:@acme/pkg", "toolSetDigest": never})),
        ),
        ("no-digest", body(json!({"endpoint": MEMORY_URL}))),
        (
            "undigestible-observed-set-has-no-mtl1",
            body(json!({"endpoint": FRAC_URL, "toolSetDigest": never})),
        ),
        // refusals
        ("refused-not-json", b"not json".to_vec()),
        ("refused-not-an-object", b"[]".to_vec()),
        ("refused-not-utf8", b"\xff\xfe".to_vec()),
        ("refused-no-subject", body(json!({"tools": []}))),
        (
            "refused-endpoint-not-a-string",
            body(json!({"endpoint": 7})),
        ),
        ("refused-endpoint-empty", body(json!({"endpoint": ""}))),
        (
            "refused-endpoint-too-long",
            body(json!({"endpoint": "x".repeat(2001)})),
        ),
        ("refused-endpoint-nul", body(json!({"endpoint": "a\u{0}b"}))),
        ("refused-package-not-a-string", body(json!({"package": []}))),
        ("refused-name-empty", body(json!({"name": ""}))),
        (
            "refused-tools-not-an-array",
            body(json!({"endpoint": MEMORY_URL, "tools": {}})),
        ),
        (
            "refused-bad-digest",
            body(json!({"endpoint": MEMORY_URL, "toolSetDigest": "sha256-nope"})),
        ),
        (
            "refused-digest-with-stray-bits",
            body(
                json!({"endpoint": MEMORY_URL, "fullDigest": "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFV="}),
            ),
        ),
        (
            "refused-digest-not-a-string",
            body(json!({"endpoint": MEMORY_URL, "fullDigest": 1})),
        ),
        (
            "refused-contribute-not-a-boolean",
            body(json!({"endpoint": MEMORY_URL, "contribute": "yes"})),
        ),
        (
            "refused-too-many-tools",
            body(json!({"endpoint": MEMORY_URL, "tools": vec![json!({"name": "t"}); 5001]})),
        ),
        (
            "refused-too-deep",
            format!(
                "{{\"endpoint\":\"{MEMORY_URL}\",\"tools\":[{}{}]}}",
                "[".repeat(10_000),
                "]".repeat(10_000)
            )
            .into_bytes(),
        ),
        (
            "refused-duplicate-member",
            format!("{{\"endpoint\":\"{MEMORY_URL}\",\"endpoint\":\"{FILES_URL}\"}}").into_bytes(),
        ),
        (
            "refused-over-2-mib",
            body(json!({"endpoint": MEMORY_URL, "pad": "x".repeat(2 * 1024 * 1024)})),
        ),
    ]
}

/// One answer as the fixture holds it.
fn recorded(name: &str, status: u16, content_type: &str, body: &[u8]) -> Value {
    json!({
        "name": name,
        "status": status,
        "contentType": content_type,
        "body": String::from_utf8(body.to_vec()).expect("answers are UTF-8"),
    })
}

#[tokio::test]
async fn check_answers_are_byte_identical_to_the_golden_file() {
    let (env, state) = fixture();
    let mut got = Vec::new();
    for (name, body) in requests() {
        let (status, headers, bytes) = post_json(&state, "/api/v1/check", body).await;
        let content_type = headers
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        got.push(recorded(name, status.as_u16(), &content_type, &bytes));
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    if std::env::var_os("TOOLMARK_BLESS").is_some_and(|v| v == "1") {
        let mut text = serde_json::to_string_pretty(&got).unwrap();
        text.push('\n');
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    } else {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (TOOLMARK_BLESS=1 writes it)", path.display()));
        let want: Vec<Value> = serde_json::from_str(&text).unwrap();
        let names = |v: &[Value]| -> Vec<String> {
            v.iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names(&got), names(&want), "the request table changed");
        for (g, w) in got.iter().zip(&want) {
            let name = &w["name"];
            assert_eq!(g["status"], w["status"], "{name}: status");
            assert_eq!(g["contentType"], w["contentType"], "{name}: content-type");
            assert_eq!(g["body"].as_str(), w["body"].as_str(), "{name}: body bytes");
        }
    }
    drop(env);
}

/// The bytes a golden answer's signature covers (the answer without `signature`) are
/// serde_json's text of it as it is: already RFC 8785 (`canon::is_canonical` says so, so
/// `toolmark_client::canonical` takes no second pass), and equal to what parsing that text and
/// writing it canonically gives, the way every answer was signed before.
#[test]
fn every_golden_answers_signed_bytes_are_its_serde_json_text() {
    use toolmark_toolset::canon;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    let want: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut answers = 0;
    for w in want.iter().filter(|w| w["status"] == 200) {
        let name = &w["name"];
        let mut answer: toolmark_client::answer::Answer =
            serde_json::from_str(w["body"].as_str().unwrap()).unwrap();
        answer.signature = None;
        let text = serde_json::to_string(&answer).unwrap();
        assert!(canon::is_canonical(&text), "{name}: {text}");
        let parsed = toolmark_toolset::json::parse(&text).unwrap();
        assert_eq!(
            toolmark_client::canonical(&answer).unwrap(),
            canon::to_vec(&parsed, canon::Numbers::Ecmascript).unwrap(),
            "{name}"
        );
        answers += 1;
    }
    assert_eq!(answers, 25);
}
