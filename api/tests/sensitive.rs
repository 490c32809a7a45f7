//! Sensitive tools as NullRun and WARDEN write them, through the router: the `mcp://` form and
//! the names a server answers to, malformed patterns refused, the starter policy on request,
//! the census (`/api/v1/census`) and the `sensitive=` filter of `/api/v1/servers`.

mod support;

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::index_support::{Env, FILESYSTEM, corpus_page, day, day_str, ok, records};
use support::*;
use toolmark_api::AppState;

const FS_NAME: &str = "io.github.modelcontextprotocol/filesystem";

/// HISTOR's target id: `sha256(name + "\n" + endpoint)[:16]`.
fn id(name: &str, endpoint: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(format!("{name}\n{endpoint}"));
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

async fn get_json(state: &Arc<AppState>, path: &str) -> (StatusCode, Value) {
    let (status, headers, body) = get(state, path).await;
    assert_eq!(headers["content-type"], "application/json", "{path}");
    let v = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{path}: {e}: {}", String::from_utf8_lossy(&body)));
    (status, v)
}

async fn post(state: &Arc<AppState>, body: Value) -> (StatusCode, Value) {
    let (status, _, body) = post_json(
        state,
        "/api/v1/sensitive",
        serde_json::to_vec(&body).unwrap(),
    )
    .await;
    (status, serde_json::from_slice(&body).unwrap())
}

/// A data directory with the reference filesystem server under its real registry name and a
/// title, and its state with no rate limits (the env owns the directory).
fn filesystem_fixture(tag: &str) -> (Env, Arc<AppState>) {
    let mut env = Env::new(&format!("api-sensitive-{tag}"));
    let recs = records(json!([{
        "name": FS_NAME, "title": "Secure Filesystem", "description": "files", "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": FILES_URL}],
    }]));
    env.run(&day_str(0, 0), &recs, &[], |_| {
        Some(ok(day(0, 60), vec![corpus_page(FILESYSTEM)]))
    });
    let mut state = AppState::open(&env.dir, BASE).unwrap();
    state.limiter = toolmark_api::ops::RateLimiter::unlimited();
    state.sensitive_limiter = toolmark_api::ops::RateLimiter::unlimited();
    (env, Arc::new(state))
}

fn sensitive_of(v: &Value) -> Vec<String> {
    v["sensitive"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn mcp_filesystem_write_matches_the_observed_filesystem_server() {
    let (_env, state) = filesystem_fixture("mcp");
    let fid = id(FS_NAME, FILES_URL);
    let at = |q: &str| format!("/api/v1/servers/{fid}/sensitive?{q}");
    // Before this change `mcp://filesystem/write*` matched nothing: now the registry name's
    // last segment is a name the server answers to.
    let (status, v) = get_json(&state, &at("pattern=mcp%3A%2F%2Ffilesystem%2Fwrite*")).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(sensitive_of(&v), ["write_file"]);
    assert_eq!(
        v["serverNames"],
        json!([FS_NAME, "filesystem", "Secure Filesystem"])
    );
    // Its title, case-insensitively.
    let (_, v) = get_json(&state, &at("pattern=mcp://SECURE%20filesystem/edit_*")).await;
    assert_eq!(sensitive_of(&v), ["edit_file"]);
    // An alias only when the caller gives it.
    let (_, v) = get_json(&state, &at("pattern=mcp://fs/move_*")).await;
    assert!(sensitive_of(&v).is_empty());
    let (_, v) = get_json(&state, &at("pattern=mcp://fs/move_*&server=fs&server=disk")).await;
    assert_eq!(sensitive_of(&v), ["move_file"]);
    assert_eq!(
        v["serverNames"],
        json!([FS_NAME, "filesystem", "Secure Filesystem", "fs", "disk"])
    );
    // Any server; and the qualified form with the full registry name still works.
    let (_, v) = get_json(
        &state,
        &at("pattern=mcp://*/create_directory&pattern=io.github.modelcontextprotocol%2Ffilesystem%2Fread_file"),
    )
    .await;
    assert_eq!(sensitive_of(&v), ["read_file", "create_directory"]);
    // Too many aliases, an empty one, a long one: 400.
    let nine: String = (0..9).map(|i| format!("&server=a{i}")).collect();
    for q in [
        nine,
        "server=".into(),
        format!("server={}", "s".repeat(201)),
    ] {
        let (status, v) = get_json(&state, &at(&q)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{q}: {v}");
    }
}

#[tokio::test]
async fn malformed_mcp_patterns_are_a_400_on_both_routes() {
    let (_env, state) = filesystem_fixture("malformed");
    let fid = id(FS_NAME, FILES_URL);
    let tools = tools_of(&corpus_page(FILESYSTEM));
    for p in [
        "mcp://payments",
        "mcp:///delete",
        "mcp://payments/",
        "mcp://host:80/x",
        "mcp:payments/refund",
    ] {
        let (status, v) = post(&state, json!({"tools": tools, "patterns": ["*", p]})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{p}: {v}");
        let detail = v["detail"].as_str().unwrap();
        assert!(detail.contains(p) && detail.contains("mcp:"), "{detail}");
        let q = p.replace('/', "%2F").replace(':', "%3A");
        let (status, v) = get_json(
            &state,
            &format!("/api/v1/servers/{fid}/sensitive?pattern={q}"),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{p}: {v}");
        assert_eq!(v["error"], "bad-request");
    }
}

#[tokio::test]
async fn post_reads_the_mcp_forms_and_a_list_of_server_names() {
    let (_env, state) = filesystem_fixture("post");
    let tools = json!([
        {"name": "refund_order"}, {"name": "list_refunds"}, {"name": "delete"},
        {"name": "undelete"}
    ]);
    let patterns = json!(["mcp://payments/refund*", "mcp://*/delete"]);
    // Without a server, only `mcp://*/…` applies.
    let (status, v) = post(&state, json!({"tools": tools, "patterns": patterns})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(sensitive_of(&v), ["delete"]);
    for server in [
        json!("com.example/payments"),
        json!(["billing", "Payments"]),
    ] {
        let (status, v) = post(
            &state,
            json!({"tools": tools, "patterns": patterns, "server": server}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(sensitive_of(&v), ["refund_order", "delete"], "{server}");
    }
    let nine: Vec<String> = (0..9).map(|i| format!("s{i}")).collect();
    for server in [json!(nine), json!(["a", 1]), json!([""]), json!({})] {
        let (status, v) = post(
            &state,
            json!({"tools": tools, "patterns": patterns, "server": server}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{server}: {v}");
    }
}

#[tokio::test]
async fn the_starter_policy_is_applied_only_when_asked_for() {
    let (_env, state) = filesystem_fixture("starter");
    let fid = id(FS_NAME, FILES_URL);
    let tools = tools_of(&corpus_page(FILESYSTEM));
    let expected = ["write_file", "edit_file", "create_directory", "move_file"];
    // No patterns and no policy: every tool safe (WARDEN's rule).
    let (_, v) = post(&state, json!({"tools": tools, "patterns": []})).await;
    assert!(sensitive_of(&v).is_empty());
    assert!(v.get("policy").is_none() && v.get("categories").is_none());
    // Asked for: `patterns` may be left out; each sensitive tool says its category.
    for name in ["starter", "starter/1"] {
        let (status, v) = post(&state, json!({"tools": tools, "policy": name})).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(sensitive_of(&v), expected);
        assert_eq!(v["policy"], "starter/1");
        assert_eq!(v["categories"]["write_file"], json!(["files-and-storage"]));
        assert_eq!(v["categories"].as_object().unwrap().len(), 4);
        assert!(v["safe"].as_array().unwrap().contains(&json!("read_file")));
    }
    let (status, v) = get_json(
        &state,
        &format!("/api/v1/servers/{fid}/sensitive?policy=starter"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(sensitive_of(&v), expected);
    assert_eq!(v["categories"]["move_file"], json!(["files-and-storage"]));
    // Unknown policies, a non-string policy, a policy given twice: 400.
    for body in [
        json!({"tools": tools, "policy": "strict"}),
        json!({"tools": tools, "policy": 1}),
    ] {
        let (status, _) = post(&state, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }
    for q in ["policy=Starter", "policy=starter&policy=starter"] {
        let (status, _) = get_json(&state, &format!("/api/v1/servers/{fid}/sensitive?{q}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{q}");
    }
    // The policy's globs count in the matching-work bound.
    let long_names: Vec<Value> = (0..5_000)
        .map(|i| json!({"name": format!("{}{i}", "a".repeat(300))}))
        .collect();
    let (status, v) = post(&state, json!({"tools": long_names, "patterns": []})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let (status, v) = post(&state, json!({"tools": long_names, "policy": "starter"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(v["detail"].as_str().unwrap().contains("too much matching"));
}

#[tokio::test]
async fn the_census_counts_targets_per_category_and_filters_the_servers() {
    let mut p = populated("census");
    without_rate_limits(&mut p);
    let (status, v) = get_json(&p.state, "/api/v1/census").await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["policy"], "starter/1");
    // files, memory and flaky (the fetch set, still current after its timeout) have sets.
    assert_eq!(v["observedTargets"], 3);
    assert_eq!(v["any"]["targets"], 2);
    assert_eq!(v["any"]["servers"], 2);
    let counts: Vec<(String, u64)> = v["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["category"].as_str().unwrap().to_owned(),
                c["targets"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            ("money".to_owned(), 0),
            ("email-and-messaging".to_owned(), 0),
            ("destructive-database".to_owned(), 1),
            ("external-writes".to_owned(), 0),
            ("files-and-storage".to_owned(), 1),
            ("admin".to_owned(), 0),
        ]
    );
    assert_eq!(
        v["categories"][4]["list"],
        format!("{BASE}/api/v1/servers?sensitive=files-and-storage")
    );
    let names = |v: &Value| -> Vec<String> {
        v["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, v) = get_json(&p.state, "/api/v1/servers?sensitive=any").await;
    assert_eq!(names(&v), ["io.example/files", "io.example/memory"]);
    assert_eq!(v["total"], 2);
    assert_eq!(v["servers"][0]["sensitive"], json!(["files-and-storage"]));
    let (_, v) = get_json(&p.state, "/api/v1/servers?sensitive=destructive-database").await;
    assert_eq!(names(&v), ["io.example/memory"]);
    let (_, v) = get_json(&p.state, "/api/v1/servers?sensitive=money&q=files").await;
    assert_eq!(v["total"], 0);
    let (_, v) = get_json(&p.state, "/api/v1/servers?q=flaky").await;
    assert_eq!(v["servers"][0]["sensitive"], json!([]));
    // A server's detail lists its census with the tools.
    let mid = id("io.example/memory", MEMORY_URL);
    let (_, v) = get_json(&p.state, &format!("/api/v1/servers/{mid}")).await;
    assert_eq!(v["census"]["policy"], "starter/1");
    assert_eq!(
        v["census"]["categories"],
        // The entry is the first `ok` entry of the current set (day 0's; day 1 kept it).
        json!([{"category": "destructive-database",
                "entry": v["timeline"].as_array().unwrap().last().unwrap()["entry"],
                "toolCount": 3,
                "tools": ["delete_entities", "delete_observations", "delete_relations"]}])
    );
    for q in [
        "sensitive=Money",
        "sensitive=",
        "sensitive=any&sensitive=any",
    ] {
        let (status, v) = get_json(&p.state, &format!("/api/v1/servers?{q}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{q}: {v}");
    }
}

#[tokio::test]
async fn a_tool_renamed_into_send_email_is_shown_as_newly_sensitive_everywhere() {
    let mut env = Env::new("api-sensitive-signal");
    let recs = records(json!([{
        "name": FS_NAME, "description": "files", "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": FILES_URL}],
    }]));
    let day0 = r#"{"tools":[{"name":"notes_sync","description":"Sync notes."},
        {"name":"read_note","description":"Read a note."}]}"#;
    let day1 = r#"{"tools":[{"name":"send_email","description":"Sync notes."},
        {"name":"read_note","description":"Read a note."}]}"#;
    for (d, page) in [(0, day0), (1, day1)] {
        env.run(&day_str(d, 0), &recs, &[], |_| {
            Some(ok(day(d, 60), vec![page.to_owned()]))
        });
    }
    let state = Arc::new(AppState::open(&env.dir, BASE).unwrap());
    let (_, list) = get_json(&state, "/api/v1/changes").await;
    let change = &list["changes"][0];
    let cid = change["id"].as_i64().unwrap();
    assert_eq!(change["class"], "unsure");
    let (_, v) = get_json(&state, &format!("/api/v1/changes/{cid}")).await;
    let signal = v["classification"]["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["rule"] == "newly-sensitive")
        .unwrap_or_else(|| panic!("{v}"))
        .clone();
    assert_eq!(signal["tool"], "send_email");
    assert_eq!(signal["new"], "email-and-messaging");
    assert_eq!(signal["class"], "unsure");
    // The census follows the new set.
    let (_, c) = get_json(&state, "/api/v1/census").await;
    assert_eq!(c["categories"][1]["targets"], 1);
    // The desk's change page and the feeds name it with its meaning and categories.
    let (status, _, html) = get(&state, &format!("/changes/{cid}")).await;
    assert_eq!(status, StatusCode::OK);
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("newly-sensitive"), "desk");
    assert!(
        html.contains("starter-policy category"),
        "desk: the meaning"
    );
    assert!(html.contains("email-and-messaging"), "desk: the categories");
    for feed in ["/feed.xml", "/feed.json"] {
        let (status, _, body) = get(&state, feed).await;
        assert_eq!(status, StatusCode::OK);
        let body = String::from_utf8(body).unwrap();
        assert!(
            body.contains("newly-sensitive (send_email)") && body.contains("[email-and-messaging]"),
            "{feed}: {body}"
        );
    }
}

#[tokio::test]
async fn the_desk_lists_servers_by_the_census() {
    let p = populated("census-desk");
    let html = |body: Vec<u8>| String::from_utf8(body).unwrap();
    let (status, _, body) = get(&p.state, "/?sensitive=files-and-storage").await;
    assert_eq!(status, StatusCode::OK);
    let body = html(body);
    assert!(body.contains("io.example/files") && !body.contains("io.example/memory"));
    assert!(
        body.contains("<option value=\"files-and-storage\" selected>"),
        "{body}"
    );
    let (_, _, body) = get(&p.state, "/?sensitive=any&limit=1").await;
    let body = html(body);
    assert!(
        body.contains("href=\"/?q=&amp;state=all&amp;sensitive=any&amp;limit=1&amp;offset=1\""),
        "the pager keeps the filter: {body}"
    );
    let (status, _, _) = get(&p.state, "/?sensitive=lots").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_stats_carry_the_census() {
    let p = populated("census-stats");
    let (status, v) = get_json(&p.state, "/api/v1/stats").await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let (_, census) = get_json(&p.state, "/api/v1/census").await;
    assert_eq!(v["sensitive"]["policy"], "starter/1");
    assert_eq!(v["sensitive"]["any"]["targets"], census["any"]["targets"]);
    for (i, c) in census["categories"].as_array().unwrap().iter().enumerate() {
        assert_eq!(v["sensitive"]["categories"][i]["category"], c["category"]);
        assert_eq!(v["sensitive"]["categories"][i]["targets"], c["targets"]);
    }
    let (status, _, html) = get(&p.state, "/stats").await;
    assert_eq!(status, StatusCode::OK);
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("id=\"sensitive-h\""), "the section");
    assert!(
        html.contains("href=\"/?sensitive=files-and-storage\""),
        "a category links the list"
    );
}
