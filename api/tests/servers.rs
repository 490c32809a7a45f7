//! The server, change and sensitive-glob routes, through the router, against the populated
//! two-day fixture (and a many-changes one for paging): every answer checked against what the
//! fixture recorded, every kind of bad input refused with a JSON error.

mod support;

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::index_support::{self, Env};
use support::*;
use toolmark_api::AppState;
use toolmark_toolset::ToolSet;

/// HISTOR's target id: `sha256(name + "\n" + endpoint)[:16]`.
fn id(name: &str, endpoint: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(format!("{name}\n{endpoint}"));
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

fn files_id() -> String {
    id("io.example/files", FILES_URL)
}

async fn get_json(state: &Arc<AppState>, path: &str) -> (StatusCode, Value) {
    let (status, headers, body) = get(state, path).await;
    assert_eq!(
        headers["content-type"], "application/json",
        "{path}: every answer, errors too, is JSON"
    );
    let v = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{path}: {e}: {}", String::from_utf8_lossy(&body)));
    (status, v)
}

/// A 400 with the JSON error shape.
async fn assert_bad(state: &Arc<AppState>, path: &str) {
    let (status, v) = get_json(state, path).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {v}");
    assert_eq!(v["error"], "bad-request", "{path}");
    assert!(
        v["detail"].as_str().is_some_and(|d| !d.is_empty()),
        "{path}"
    );
}

/// The `key` of every listed server, in order.
fn listed(v: &Value, key: &str) -> Vec<String> {
    v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[key].as_str().unwrap().to_owned())
        .collect()
}

fn names(v: &Value) -> Vec<String> {
    listed(v, "name")
}

#[tokio::test]
async fn servers_list_every_target_with_its_state() {
    let p = populated("servers-list");
    let (status, v) = get_json(&p.state, "/api/v1/servers").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["total"], 5);
    assert_eq!(v["offset"], 0);
    assert_eq!(v["limit"], 50);
    assert_eq!(
        names(&v),
        [
            "io.example/files",
            "io.example/flaky",
            "io.example/keyed",
            "io.example/locked",
            "io.example/memory"
        ]
    );
    let index = p.state.index.get();
    for s in v["servers"].as_array().unwrap() {
        let t = index.target(s["id"].as_str().unwrap()).unwrap().unwrap();
        assert_eq!(s["id"], id(&t.server, &t.target));
        assert_eq!(s["name"], t.server);
        assert_eq!(s["endpoint"], t.target);
        assert_eq!(s["kind"], "remote");
        assert_eq!(s["transport"], "streamable-http");
        assert_eq!(s["lastStatus"], json!(t.last_status));
        assert_eq!(s["lastEntry"], json!(t.last_entry));
        assert_eq!(s["lastObserved"], json!(t.last_observed_at));
        assert_eq!(s["currentEntry"], json!(t.last_ok_entry));
        assert_eq!(s["full"], json!(t.current_full));
        assert_eq!(s["mtl1"], json!(t.current_mtl1));
        assert_eq!(s["toolCount"], json!(t.current_tools));
        assert_eq!(s["delisted"], false);
        assert_eq!(s["page"], format!("{BASE}/s/{}", t.id));
    }
    let by = |name: &str| {
        v["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    let files = by("io.example/files");
    assert_eq!(files["lastStatus"], "ok");
    assert_eq!(files["changes"], 1);
    assert_eq!(files["toolCount"], 14);
    assert_eq!(by("io.example/memory")["changes"], 0);
    assert_eq!(by("io.example/memory")["toolCount"], 9);
    let locked = by("io.example/locked");
    assert_eq!(locked["lastStatus"], "auth-required");
    assert_eq!(locked["full"], Value::Null);
    assert_eq!(locked["toolCount"], Value::Null);
    let flaky = by("io.example/flaky");
    assert_eq!(flaky["lastStatus"], "timeout");
    assert_eq!(flaky["toolCount"], 1, "the day-0 tool set is still current");
    assert!(flaky["currentEntry"].as_i64() < flaky["lastEntry"].as_i64());
    let keyed = by("io.example/keyed");
    assert_eq!(keyed["skipReason"], "header-required");
    assert_eq!(keyed["skipDetail"], "Host");
    assert_eq!(keyed["full"], Value::Null);
}

#[tokio::test]
async fn servers_filter_search_and_page() {
    let p = populated("servers-filter");
    for (state, expected) in [
        ("all", &["files", "flaky", "keyed", "locked", "memory"][..]),
        // As on the desk: the last observation is ok (flaky timed out on day 1).
        ("observed", &["files", "memory"]),
        ("changed", &["files"]),
        ("failing", &["flaky", "locked"]),
        ("skipped", &["keyed"]),
        ("delisted", &[]),
    ] {
        let (status, v) = get_json(&p.state, &format!("/api/v1/servers?state={state}")).await;
        assert_eq!(status, StatusCode::OK);
        let expected: Vec<String> = expected.iter().map(|n| format!("io.example/{n}")).collect();
        assert_eq!(names(&v), expected, "state={state}");
        assert_eq!(v["total"], expected.len(), "state={state}");
    }
    // Case-insensitive, on the name or the endpoint; LIKE's wildcards are literal.
    for (q, expected) in [
        ("FILES", &["files"][..]),
        ("flaky.example.COM", &["flaky"]),
        (
            "io.example/",
            &["files", "flaky", "keyed", "locked", "memory"],
        ),
        ("%", &[]),
        ("_", &[]),
        ("nothing-like-this", &[]),
    ] {
        let (status, v) = get_json(&p.state, &format!("/api/v1/servers?q={}", urlencode(q))).await;
        assert_eq!(status, StatusCode::OK);
        let expected: Vec<String> = expected.iter().map(|n| format!("io.example/{n}")).collect();
        assert_eq!(names(&v), expected, "q={q}");
    }
    let (_, v) = get_json(&p.state, "/api/v1/servers?q=example&state=failing&limit=1").await;
    assert_eq!(v["total"], 2);
    assert_eq!(names(&v), ["io.example/flaky"]);
    let (_, v) = get_json(&p.state, "/api/v1/servers?limit=2&offset=4").await;
    assert_eq!(
        (v["total"].as_i64(), v["offset"].as_i64()),
        (Some(5), Some(4))
    );
    assert_eq!(names(&v), ["io.example/memory"]);
    let (_, v) = get_json(&p.state, "/api/v1/servers?offset=10").await;
    assert_eq!(v["total"], 5);
    assert!(names(&v).is_empty());
    let (_, v) = get_json(&p.state, "/api/v1/servers?limit=200&q=").await;
    assert_eq!(v["total"], 5);
}

/// The target ids a desk page links to (`href="/s/{id}"`), in page order.
fn desk_ids(html: &str) -> Vec<String> {
    html.split("href=\"/s/")
        .skip(1)
        .filter_map(|rest| rest.get(..16))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_api_and_the_desk_find_the_same_targets_for_the_same_q() {
    let p = populated("servers-same-q");
    for q in [
        "",
        "FILES",
        "flaky.example.COM",
        "io.example/",
        "needs a key",
        "A TEST SERVER",
        "  files ",
        "%",
        "_",
        "\\",
        "nothing-like-this",
    ] {
        let (status, v) = get_json(&p.state, &format!("/api/v1/servers?q={}", urlencode(q))).await;
        assert_eq!(status, StatusCode::OK);
        let api = listed(&v, "id");
        let (status, _, body) = get(&p.state, &format!("/?q={}", urlencode(q))).await;
        assert_eq!(status, StatusCode::OK);
        let desk = desk_ids(std::str::from_utf8(&body).unwrap());
        assert_eq!(api, desk, "q={q}");
    }
    // The description is searched through both ("needs a key" is only in one).
    let (_, v) = get_json(&p.state, "/api/v1/servers?q=needs%20a%20key").await;
    assert_eq!(names(&v), ["io.example/keyed"]);
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[tokio::test]
async fn servers_refuse_bad_parameters() {
    let p = populated("servers-bad");
    let long_q = "a".repeat(201);
    for path in [
        "/api/v1/servers?limit=0",
        "/api/v1/servers?limit=201",
        "/api/v1/servers?limit=1000",
        "/api/v1/servers?limit=x",
        "/api/v1/servers?limit=-1",
        "/api/v1/servers?limit=%2B5",
        "/api/v1/servers?limit=",
        "/api/v1/servers?limit=1&limit=2",
        "/api/v1/servers?offset=x",
        "/api/v1/servers?offset=-3",
        "/api/v1/servers?offset=99999999999999999999",
        &format!("/api/v1/servers?q={long_q}"),
        "/api/v1/servers?state=pinned",
        "/api/v1/servers?state=",
    ] {
        assert_bad(&p.state, path).await;
    }
    // 200 characters is the limit, not 200 bytes.
    let (status, _) = get_json(
        &p.state,
        &format!("/api/v1/servers?q={}", urlencode(&"é".repeat(200))),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn server_detail_has_timeline_tools_and_changes() {
    let p = populated("servers-detail");
    let fid = files_id();
    let (status, headers, body) = get(&p.state, &format!("/api/v1/servers/{fid}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["server"]["id"], fid);
    assert_eq!(v["server"]["name"], "io.example/files");
    assert_eq!(v["server"]["changes"], 1);
    assert_eq!(v["registry"]["name"], "io.example/files");
    assert_eq!(v["registry"]["description"], "a test server");
    assert_eq!(v["targets"].as_array().unwrap().len(), 1);
    assert_eq!(v["targets"][0]["id"], fid);

    let index = p.state.index.get();
    let observations = index.observations_of(&fid, 100, None).unwrap();
    let change = &index.changes(0, 10, None, None).unwrap()[0];
    let timeline = v["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 2);
    for (t, o) in timeline.iter().zip(&observations) {
        assert_eq!(t["entry"], o.entry, "newest first");
        assert_eq!(t["observedAt"], o.observed_at);
        assert_eq!(t["status"], "ok");
        assert_eq!(t["full"], json!(o.full));
        assert_eq!(t["mtl1"], json!(o.mtl1));
        assert_eq!(t["toolCount"], 14);
        assert_eq!(t["transport"], "streamable-http");
        assert_eq!(t["protocolVersion"], "2025-06-18");
    }
    assert_eq!(timeline[0]["change"], change.id, "day 1 brought the change");
    assert_eq!(timeline[1]["change"], Value::Null);

    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["id"], change.id);
    assert_eq!(changes[0]["class"], "dangerous");

    // The current tools are day 1's, every entry's text as the server sent it.
    let page = rug_pull();
    let set = ToolSet::parse(page.as_bytes()).unwrap();
    let text = String::from_utf8(body.clone()).unwrap();
    for tool in &set.tools {
        assert!(text.contains(&*tool.raw), "raw tool text spliced in");
    }
    let sent: Value = serde_json::from_str(&page).unwrap();
    assert_eq!(v["tools"], sent["tools"]);
    assert_eq!(v["toolsEntry"], observations[0].entry);
}

#[tokio::test]
async fn server_detail_of_failing_and_skipped_targets() {
    let p = populated("servers-detail-failing");
    // flaky: the timeout is the newest observation, the tools are still day 0's.
    let (status, v) = get_json(
        &p.state,
        &format!("/api/v1/servers/{}", id("io.example/flaky", FLAKY_URL)),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let statuses: Vec<&str> = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["timeout", "ok"]);
    assert_eq!(
        v["timeline"][0]["detail"],
        "observation deadline of 90 s passed"
    );
    let fetch: Value = serde_json::from_str(&page(FETCH_SET)).unwrap();
    assert_eq!(v["tools"], fetch["tools"]);
    assert_eq!(v["toolsEntry"], v["timeline"][1]["entry"]);
    assert!(v["changes"].as_array().unwrap().is_empty());

    for (name, url, status) in [
        ("io.example/locked", LOCKED_URL, "auth-required"),
        ("io.example/keyed", KEYED_URL, "header-required"),
    ] {
        let (code, v) = get_json(&p.state, &format!("/api/v1/servers/{}", id(name, url))).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(v["tools"], Value::Null, "{name}");
        assert_eq!(v["toolsEntry"], Value::Null, "{name}");
        let timeline = v["timeline"].as_array().unwrap();
        assert_eq!(timeline.len(), 2, "{name}");
        assert!(timeline.iter().all(|t| t["status"] == status), "{name}");
    }
}

#[tokio::test]
async fn server_ids_are_checked() {
    let p = populated("servers-ids");
    for bad in [
        "xyz",
        "0123456789ABCDEF",
        "0123456789abcde",
        "0123456789abcdef0",
        "0123456789abcdeg",
        "%20123456789abcdef",
    ] {
        assert_bad(&p.state, &format!("/api/v1/servers/{bad}")).await;
        assert_bad(&p.state, &format!("/api/v1/servers/{bad}/sensitive")).await;
    }
    for path in [
        "/api/v1/servers/0000000000000000",
        "/api/v1/servers/0000000000000000/sensitive?pattern=*",
    ] {
        let (status, v) = get_json(&p.state, path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(v["error"], "not-found");
    }
}

#[tokio::test]
async fn changes_list_and_detail_match_the_index() {
    let p = populated("changes-list");
    let row = p.state.index.get().changes(0, 10, None, None).unwrap()[0].clone();
    let (status, v) = get_json(&p.state, "/api/v1/changes").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["nextCursor"], Value::Null);
    assert_eq!(v["hasMore"], false);
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    let c = &changes[0];
    assert_eq!(c["id"], row.id);
    assert_eq!(c["targetId"], files_id());
    assert_eq!(c["server"], "io.example/files");
    assert_eq!(c["endpoint"], FILES_URL);
    assert_eq!(c["observedAt"], row.observed_at);
    assert_eq!(c["oldEntry"], row.old_entry);
    assert_eq!(c["newEntry"], row.new_entry);
    assert_eq!(c["oldFull"], row.old_full);
    assert_eq!(c["newFull"], row.new_full);
    assert_eq!(c["oldMtl1"], json!(row.old_mtl1));
    assert_eq!(c["newMtl1"], json!(row.new_mtl1));
    assert_eq!(c["class"], "dangerous");
    assert_eq!(c["analysed"], true);
    assert_eq!(
        (c["added"].as_u64(), c["removed"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(c["modified"], 1);
    // The first readOnlyHint of the filesystem set is read_file's.
    assert_eq!(c["names"]["modified"], json!(["read_file"]));
    assert_eq!(c["names"]["added"], json!([]));
    let signal = &c["signals"][0];
    assert_eq!(signal["rule"], "hint-changed");
    assert_eq!(signal["class"], "dangerous");
    assert_eq!(signal["tool"], "read_file");
    assert_eq!(signal["message"], "A hint's effective value changed.");
    assert_eq!(c["signalsTotal"], c["signals"].as_array().unwrap().len());
    assert_eq!(c["links"]["change"], format!("{BASE}/changes/{}", row.id));
    assert_eq!(c["links"]["server"], format!("{BASE}/s/{}", files_id()));
    assert!(c.get("diff").is_none(), "lists carry no diff");

    let (status, d) = get_json(&p.state, &format!("/api/v1/changes/{}", row.id)).await;
    assert_eq!(status, StatusCode::OK);
    for k in [
        "id", "targetId", "class", "oldFull", "newFull", "names", "signals",
    ] {
        assert_eq!(d[k], c[k], "{k}");
    }
    let diff: Value = serde_json::from_str(row.diff.as_deref().unwrap()).unwrap();
    let classification: Value =
        serde_json::from_str(row.classification.as_deref().unwrap()).unwrap();
    assert_eq!(d["diff"], diff);
    assert_eq!(d["classification"], classification);
    assert_eq!(d["diff"]["modified"][0]["name"], "read_file");
    assert_eq!(d["classification"]["class"], "dangerous");
}

#[tokio::test]
async fn changes_filter_by_server_target_and_class() {
    let p = populated("changes-filter");
    let memory = id("io.example/memory", MEMORY_URL);
    for (query, n) in [
        ("class=dangerous", 1),
        ("class=unsure", 0),
        ("class=benign", 0),
        ("server=io.example%2Ffiles", 1),
        ("server=io.example/memory", 0),
        ("server=io.example/nothing", 0),
        (&format!("target={}", files_id()), 1),
        (&format!("target={memory}"), 0),
        ("target=0000000000000000", 0),
        (
            &format!(
                "target={}&class=dangerous&server=io.example/files",
                files_id()
            ),
            1,
        ),
        (
            &format!("target={}&server=io.example/memory", files_id()),
            0,
        ),
    ] {
        let (status, v) = get_json(&p.state, &format!("/api/v1/changes?{query}")).await;
        assert_eq!(status, StatusCode::OK, "{query}");
        assert_eq!(v["changes"].as_array().unwrap().len(), n, "{query}");
    }
    let long = "a".repeat(201);
    for path in [
        "/api/v1/changes?class=scary",
        "/api/v1/changes?class=",
        "/api/v1/changes?class=Dangerous",
        "/api/v1/changes?target=XYZ",
        "/api/v1/changes?target=0123456789ABCDEF",
        "/api/v1/changes?limit=0",
        "/api/v1/changes?limit=1000",
        "/api/v1/changes?limit=x",
        "/api/v1/changes?after=-1",
        "/api/v1/changes?after=1.5",
        "/api/v1/changes?before=abc",
        "/api/v1/changes?server=",
        &format!("/api/v1/changes?server={long}"),
        "/api/v1/changes?class=benign&class=unsure",
    ] {
        assert_bad(&p.state, path).await;
    }
    for bad in ["abc", "-1", "1.0", "99999999999999999999", "%20"] {
        assert_bad(&p.state, &format!("/api/v1/changes/{bad}")).await;
    }
    let (status, v) = get_json(&p.state, "/api/v1/changes/999").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(v["error"], "not-found");
}

/// A data directory where two servers flip between two tool sets every day: `2 × (days - 1)`
/// changes, alternating between the servers, of more than one class.
pub struct Flipping {
    /// The populated data directory.
    pub p: Populated,
    _env: Env,
}

/// [`Flipping`] over `days` days.
pub fn flipping(tag: &str, days: u64) -> Flipping {
    use index_support::{ALFRESCO, FILESYSTEM, MEMORY, corpus_page, day, day_str, ok, records};
    let mut env = Env::new(&format!("api-{tag}"));
    let server = |name: &str, url: &str| {
        json!({"name": name, "description": "flips", "version": "1.0.0",
               "remotes": [{"type": "streamable-http", "url": url}]})
    };
    let recs = records(json!([
        server("io.example/files", FILES_URL),
        server("io.example/memory", MEMORY_URL),
    ]));
    for d in 0..days {
        env.run(&day_str(d, 0), &recs, &[], |url| {
            let t = day(d, 60);
            let even = d % 2 == 0;
            Some(match url {
                FILES_URL if even => ok(t, vec![corpus_page(FILESYSTEM)]),
                FILES_URL => ok(t, vec![rug_pull()]),
                MEMORY_URL if even => ok(t, vec![corpus_page(MEMORY)]),
                MEMORY_URL => ok(t, vec![corpus_page(ALFRESCO)]),
                _ => return None,
            })
        });
    }
    let state = AppState::open(&env.dir, BASE).unwrap();
    Flipping {
        p: Populated::wrap(env.dir.clone(), Arc::new(state)),
        _env: env,
    }
}

fn ids(v: &Value) -> Vec<i64> {
    v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn change_cursors_are_lossless_both_ways() {
    let f = flipping("changes-paging", 6);
    let state = &f.p.state;
    let all: Vec<i64> = state
        .index
        .get()
        .changes(0, 1000, None, None)
        .unwrap()
        .iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(all.len(), 10);

    // Backwards from the newest, following `next` until there is none.
    let mut seen = Vec::new();
    let mut path = "/api/v1/changes?limit=3".to_owned();
    loop {
        let (status, v) = get_json(state, &path).await;
        assert_eq!(status, StatusCode::OK);
        seen.extend(ids(&v));
        match v["next"].as_str() {
            Some(next) => {
                assert_eq!(v["hasMore"], true);
                assert_eq!(
                    v["nextCursor"].as_i64(),
                    ids(&v).last().copied(),
                    "the cursor is the last id"
                );
                path = next.strip_prefix(BASE).unwrap().to_owned();
            }
            None => break,
        }
    }
    let mut newest_first = all.clone();
    newest_first.reverse();
    assert_eq!(seen, newest_first);

    // Forwards from 0, as a consumer that stores the cursor would.
    let mut seen = Vec::new();
    let mut cursor = 0;
    for _ in 0..10 {
        let (_, v) = get_json(state, &format!("/api/v1/changes?after={cursor}&limit=4")).await;
        seen.extend(ids(&v));
        let next = v["nextCursor"].as_i64().unwrap();
        if ids(&v).is_empty() {
            assert_eq!(next, cursor, "nothing new: the cursor stays");
            assert_eq!(v["hasMore"], false);
            break;
        }
        cursor = next;
    }
    assert_eq!(seen, all);

    // A window, and filters with the cursor.
    let (_, v) = get_json(
        state,
        &format!("/api/v1/changes?after={}&before={}", all[2], all[6]),
    )
    .await;
    assert_eq!(ids(&v), &all[3..6]);
    let (_, v) = get_json(state, "/api/v1/changes?server=io.example/memory&limit=2").await;
    assert!(
        v["next"]
            .as_str()
            .unwrap()
            .contains("server=io.example%2Fmemory")
    );
    assert!(v["next"].as_str().unwrap().contains("limit=2"));
    let memory: Vec<i64> = state
        .index
        .get()
        .changes(0, 1000, Some("io.example/memory"), None)
        .unwrap()
        .iter()
        .rev()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids(&v), &memory[..2]);
    for class in ["benign", "unsure", "dangerous"] {
        let (_, v) = get_json(state, &format!("/api/v1/changes?class={class}&limit=200")).await;
        let expected: Vec<i64> = state
            .index
            .get()
            .latest_changes(None, 200, None, Some(class))
            .unwrap()
            .iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(ids(&v), expected, "{class}");
    }
}

fn sensitive_body(tools: &Value, patterns: &[&str], server: Option<&str>) -> Vec<u8> {
    let mut body = json!({"tools": tools, "patterns": patterns});
    if let Some(s) = server {
        body["server"] = json!(s);
    }
    serde_json::to_vec(&body).unwrap()
}

async fn post(state: &Arc<AppState>, body: Vec<u8>) -> (StatusCode, Value) {
    let (status, headers, body) = post_json(state, "/api/v1/sensitive", body).await;
    assert_eq!(headers["content-type"], "application/json");
    (status, serde_json::from_slice(&body).unwrap())
}

#[tokio::test]
async fn sensitive_globs_split_the_tools() {
    let mut p = populated("sensitive");
    without_rate_limits(&mut p);
    let tools = tools_of(&page(FILES_SET));
    let (status, v) = post(
        &p.state,
        sensitive_body(&tools, &["*write*", "MOVE_*"], None),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["sensitive"], json!(["write_file", "move_file"]));
    assert_eq!(v["safe"].as_array().unwrap().len(), 12);
    assert_eq!(v["safe"][0], "read_file");

    // Qualified patterns need the server; unnamed entries are in neither list.
    let mut with_odd = tools.clone();
    with_odd
        .as_array_mut()
        .unwrap()
        .push(json!({"nameless": true}));
    with_odd.as_array_mut().unwrap().push(json!(3));
    let body = sensitive_body(&with_odd, &["io.example/files/read_*"], None);
    let (_, v) = post(&p.state, body).await;
    assert_eq!(v["sensitive"], json!([]));
    assert_eq!(v["safe"].as_array().unwrap().len(), 14);
    let body = sensitive_body(
        &with_odd,
        &["io.example/files/read_*"],
        Some("io.example/files"),
    );
    let (_, v) = post(&p.state, body).await;
    assert_eq!(
        v["sensitive"],
        json!([
            "read_file",
            "read_text_file",
            "read_media_file",
            "read_multiple_files"
        ])
    );
    let (_, v) = post(&p.state, sensitive_body(&tools, &[], None)).await;
    assert_eq!(v["sensitive"], json!([]));
    let (status, _) = post(
        &p.state,
        br#"{"tools":[],"patterns":[],"server":null}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // The same on the observed set of a server (day 1's), qualified by its name.
    let (status, v) = get_json(
        &p.state,
        &format!(
            "/api/v1/servers/{}/sensitive?pattern=*write*&pattern=io.example%2Ffiles%2Fmove_*",
            files_id()
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["sensitive"], json!(["write_file", "move_file"]));
    assert_eq!(v["name"], "io.example/files");
    assert_eq!(v["id"], files_id());
    let t = p.state.index.get().target(&files_id()).unwrap().unwrap();
    assert_eq!(v["entry"], json!(t.last_ok_entry));
    assert_eq!(v["full"], json!(t.current_full));
    let (_, v) = get_json(
        &p.state,
        &format!("/api/v1/servers/{}/sensitive", files_id()),
    )
    .await;
    assert_eq!(v["sensitive"], json!([]));
    assert_eq!(v["safe"].as_array().unwrap().len(), 14);
    // Nothing observed: nothing to split.
    let (status, v) = get_json(
        &p.state,
        &format!(
            "/api/v1/servers/{}/sensitive?pattern=*",
            id("io.example/locked", LOCKED_URL)
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(v["error"], "not-found");
}

#[tokio::test]
async fn sensitive_refuses_bad_bodies() {
    let mut p = populated("sensitive-bad");
    without_rate_limits(&mut p);
    let tools = tools_of(&page(FILES_SET));
    let many_tools: Vec<Value> = (0..5_001)
        .map(|i| json!({"name": format!("t{i}")}))
        .collect();
    let many_patterns: Vec<String> = (0..101).map(|i| format!("p{i}")).collect();
    let deep = format!(
        "{{\"tools\":[{{\"name\":\"x\",\"inputSchema\":{}1{}}}],\"patterns\":[]}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("not JSON", b"tools please".to_vec()),
        ("empty", Vec::new()),
        (
            "not UTF-8",
            b"{\"tools\":[],\"patterns\":[\"\xff\"]}".to_vec(),
        ),
        ("an array", b"[]".to_vec()),
        ("trailing", b"{\"tools\":[],\"patterns\":[]} {}".to_vec()),
        ("no tools", br#"{"patterns":["*"]}"#.to_vec()),
        ("no patterns", br#"{"tools":[]}"#.to_vec()),
        (
            "tools not an array",
            br#"{"tools":{"a":1},"patterns":[]}"#.to_vec(),
        ),
        (
            "tools a string",
            br#"{"tools":"[]","patterns":[]}"#.to_vec(),
        ),
        (
            "patterns a string",
            br#"{"tools":[],"patterns":"*"}"#.to_vec(),
        ),
        (
            "a pattern a number",
            br#"{"tools":[],"patterns":["*",1]}"#.to_vec(),
        ),
        (
            "server a number",
            br#"{"tools":[],"patterns":[],"server":7}"#.to_vec(),
        ),
        (
            "server empty",
            br#"{"tools":[],"patterns":[],"server":""}"#.to_vec(),
        ),
        (
            "server too long",
            sensitive_body(&json!([]), &[], Some(&"s".repeat(201))),
        ),
        (
            "tools twice",
            br#"{"tools":[],"tools":[],"patterns":[]}"#.to_vec(),
        ),
        ("deep", deep.into_bytes()),
        ("5,001 tools", sensitive_body(&json!(many_tools), &[], None)),
        (
            "101 patterns",
            serde_json::to_vec(&json!({"tools": tools, "patterns": many_patterns})).unwrap(),
        ),
        (
            "a long pattern",
            sensitive_body(&tools, &[&"*".repeat(201)], None),
        ),
    ];
    for (what, body) in cases {
        let (status, v) = post(&p.state, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {v}");
        assert_eq!(v["error"], "bad-request", "{what}");
    }
    // 200 characters and 100 patterns are allowed.
    let ok_patterns: Vec<String> = (0..100)
        .map(|i| format!("*{}{i}", "x".repeat(190)))
        .collect();
    let body = serde_json::to_vec(&json!({"tools": tools, "patterns": ok_patterns})).unwrap();
    let (status, _) = post(&p.state, body).await;
    assert_eq!(status, StatusCode::OK);

    // Worst-case matching work is bounded: long names against many long patterns.
    let long_names: Vec<Value> = (0..5_000)
        .map(|i| json!({"name": format!("{}{i}", "a".repeat(300))}))
        .collect();
    let heavy: Vec<String> = (0..100).map(|_| format!("*{}b", "a".repeat(198))).collect();
    let body = serde_json::to_vec(&json!({"tools": long_names, "patterns": heavy})).unwrap();
    let (status, v) = post(&p.state, body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(v["detail"].as_str().unwrap().contains("too much matching"));

    // Larger than 2 MiB: 413, still JSON.
    let mut big = br#"{"tools":[],"patterns":[],"pad":""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 2 * 1024 * 1024));
    big.extend(b"\"}");
    let (status, v) = post(&p.state, big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(v["error"], "payload-too-large");

    // The GET form: pattern limits apply too.
    let fid = files_id();
    let many: String = (0..101).map(|i| format!("&pattern=p{i}")).collect();
    assert_bad(
        &p.state,
        &format!("/api/v1/servers/{fid}/sensitive?x=1{many}"),
    )
    .await;
    assert_bad(
        &p.state,
        &format!(
            "/api/v1/servers/{fid}/sensitive?pattern={}",
            "a".repeat(201)
        ),
    )
    .await;
    let (status, _, _) = send(
        &p.state,
        axum::http::Request::get("/api/v1/sensitive")
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}
