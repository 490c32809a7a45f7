//! Stats and badges through the router, on the populated fixture (two crawl days; see
//! `support`): each badge state parsed as SVG, the shields.io answers, the stats' numbers, the
//! hosts and their limit.

mod support;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use support::index_support::day;
use support::*;
use toolmark_api::AppState;

/// Day 1 of the fixture, 01:00Z: an hour after the files server changed.
fn day1() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(day(1, 3600))
}

/// Day 10, 01:00Z: nine days after the change.
fn day10() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(day(10, 3600))
}

fn fixture(tag: &str, clock: fn() -> SystemTime) -> Populated {
    let mut p = populated(tag);
    Arc::get_mut(&mut p.state).unwrap().clock = clock;
    p
}

fn id_of(state: &AppState, url: &str) -> String {
    state.index.get().find_target_by_key(url).unwrap()[0]
        .id
        .clone()
}

/// A badge's SVG parsed as XML: its `<title>`, its two texts, and its declared width.
struct Svg {
    title: String,
    texts: Vec<String>,
    width: f64,
    fills: Vec<String>,
}

fn parse_svg(body: &[u8]) -> Svg {
    let text = std::str::from_utf8(body).expect("UTF-8");
    let doc = roxmltree::Document::parse(text).expect("the badge is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    assert_eq!(root.attribute("height"), Some("20"));
    let width: f64 = root.attribute("width").unwrap().parse().unwrap();
    let title = root
        .children()
        .find(|n| n.has_tag_name("title"))
        .and_then(|n| n.text())
        .unwrap_or_default()
        .to_owned();
    let texts = root
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().to_owned())
        .collect();
    // The message's box is the whole badge, the label's its left part.
    let rects: Vec<_> = root
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .collect();
    let attr = |i: usize, a: &str| rects[i].attribute(a).unwrap().to_owned();
    assert_eq!(attr(0, "width").parse::<f64>().unwrap(), width);
    let label_width: f64 = attr(1, "width").parse().unwrap();
    assert!(label_width > 0.0 && label_width < width);
    let fills = vec![attr(1, "fill"), attr(0, "fill")];
    Svg {
        title,
        texts,
        width,
        fills,
    }
}

/// GET `/badge/{id}.svg`: 200, an SVG, cached an hour; its parsed contents.
async fn svg_badge(state: &Arc<AppState>, id: &str) -> Svg {
    let (status, headers, body) = get(state, &format!("/badge/{id}.svg")).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        headers[header::CONTENT_TYPE],
        "image/svg+xml; charset=utf-8"
    );
    assert_eq!(headers[header::CACHE_CONTROL], "public, max-age=3600");
    assert_eq!(
        headers[header::CONTENT_SECURITY_POLICY],
        "default-src 'none'"
    );
    parse_svg(&body)
}

async fn json_of(state: &Arc<AppState>, path: &str) -> (StatusCode, Value) {
    let (status, _, body) = get(state, path).await;
    (status, serde_json::from_slice(&body).expect("a JSON body"))
}

#[tokio::test]
async fn a_target_never_changed_is_pinned_since_its_first_ok_observation() {
    let p = fixture("badge-pinned", day1);
    let svg = svg_badge(&p.state, &id_of(&p.state, MEMORY_URL)).await;
    assert_eq!(svg.texts, ["toolmark", "pinned 2026-11-30"]);
    assert_eq!(svg.title, "toolmark: pinned 2026-11-30");
    assert_eq!(svg.fills, ["#555", "#4c1"]);
    // A target whose newest observation failed keeps its pinned tool set.
    let flaky = svg_badge(&p.state, &id_of(&p.state, FLAKY_URL)).await;
    assert_eq!(flaky.texts[1], "pinned 2026-11-30");
}

#[tokio::test]
async fn a_target_changed_within_seven_days_says_changed_and_its_date() {
    let p = fixture("badge-changed", day1);
    let svg = svg_badge(&p.state, &id_of(&p.state, FILES_URL)).await;
    assert_eq!(svg.texts, ["toolmark", "changed 2026-12-01"]);
    assert_eq!(svg.fills[1], "#fe7d37");
}

#[tokio::test]
async fn a_target_changed_longer_ago_says_unchanged_for_whole_days() {
    let p = fixture("badge-unchanged", day10);
    let svg = svg_badge(&p.state, &id_of(&p.state, FILES_URL)).await;
    // Changed at day 1, 00:01; now is day 10, 01:00.
    assert_eq!(svg.texts, ["toolmark", "unchanged 9d"]);
    assert_eq!(svg.fills[1], "#97ca00");
}

#[tokio::test]
async fn targets_never_observed_ok_are_not_observed() {
    let p = fixture("badge-unobserved", day1);
    for url in [LOCKED_URL, KEYED_URL] {
        let svg = svg_badge(&p.state, &id_of(&p.state, url)).await;
        assert_eq!(svg.texts, ["toolmark", "not observed"], "{url}");
        assert_eq!(svg.fills[1], "#9f9f9f");
    }
}

#[tokio::test]
async fn unknown_and_delisted_targets_are_not_listed() {
    let p = fixture("badge-not-listed", day1);
    let svg = svg_badge(&p.state, "0123456789abcdef").await;
    assert_eq!(svg.texts, ["toolmark", "not listed"]);
    assert_eq!(svg.fills[1], "#e05d44");
    // The memory server leaves the registry.
    let memory = id_of(&p.state, MEMORY_URL);
    let db = rusqlite::Connection::open(p.dir.join("index.sqlite")).unwrap();
    db.execute(
        "UPDATE servers SET delisted_at = '2026-12-01T00:00:00Z' WHERE name = 'io.example/memory'",
        [],
    )
    .unwrap();
    let svg = svg_badge(&p.state, &memory).await;
    assert_eq!(svg.texts, ["toolmark", "not listed"]);
}

#[tokio::test]
async fn a_malformed_badge_id_is_404_and_the_shields_route_400() {
    let p = fixture("badge-malformed", day1);
    for path in [
        "/badge/XYZ.svg",
        "/badge/0123456789abcdef",
        "/badge/0123456789abcde.svg",
    ] {
        let (status, _, _) = get(&p.state, path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
    let (status, body) = json_of(&p.state, "/api/v1/badges/nothex").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "bad-request");
}

#[tokio::test]
async fn the_shields_answer_is_the_same_badge() {
    let p = fixture("badge-shields", day1);
    let id = id_of(&p.state, FILES_URL);
    let (status, headers, body) = get(&p.state, &format!("/api/v1/badges/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CACHE_CONTROL], "public, max-age=3600");
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        v,
        json!({"schemaVersion": 1, "label": "toolmark", "message": "changed 2026-12-01",
               "color": "orange", "cacheSeconds": 3600})
    );
    let (_, v) = json_of(&p.state, "/api/v1/badges/0123456789abcdef").await;
    assert_eq!(
        (v["message"].as_str(), v["color"].as_str()),
        (Some("not listed"), Some("red"))
    );
}

#[tokio::test]
async fn badges_answer_cross_origin_reads() {
    let p = fixture("badge-cors", day1);
    let id = id_of(&p.state, MEMORY_URL);
    for path in [format!("/badge/{id}.svg"), format!("/api/v1/badges/{id}")] {
        let (status, headers, _) = send(
            &p.state,
            Request::get(path.as_str())
                .header(header::ORIGIN, "https://github.com")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*", "{path}");
    }
}

#[tokio::test]
async fn the_global_badges_count_the_log_pins_and_changes() {
    let p = fixture("badge-global", day1);
    let cases = [
        ("log", "toolmark log", "10 entries"),
        ("pinned", "tool sets pinned", "3 of 5"),
        ("changes", "changes (7 days)", "1"),
    ];
    for (name, label, message) in cases {
        let (status, v) = json_of(&p.state, &format!("/api/v1/badges/{name}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(v["schemaVersion"], 1);
        assert_eq!(
            (v["label"].as_str(), v["message"].as_str()),
            (Some(label), Some(message))
        );
    }
}

#[tokio::test]
async fn the_checkpoint_badge_gives_its_age_and_is_green_while_fresh() {
    // The real clock: the checkpoint was written moments ago.
    let p = populated("badge-checkpoint");
    let (_, v) = json_of(&p.state, "/api/v1/badges/checkpoint").await;
    assert_eq!(v["label"], "checkpoint");
    let m = v["message"].as_str().unwrap();
    assert!(m.ends_with("s ago") || m.ends_with("m ago"), "{m}");
    assert_eq!(v["color"], "brightgreen");
}

#[tokio::test]
async fn stats_count_targets_by_state() {
    let p = fixture("stats-targets", day1);
    let (status, s) = json_of(&p.state, "/api/v1/stats").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        s["targets"],
        json!({
            "total": 5, "listed": 5, "delisted": 0, "remotes": 5, "packages": 0,
            // files and memory answered ok last.
            "observed": 2,
            // files, memory and flaky have a tool set; memory and flaky never changed.
            "pinned": 3, "neverChanged": 2, "changed": 1,
            // locked (401) and keyed (skipped).
            "unobserved": 2,
            // locked and flaky were dialled and did not answer ok last.
            "failing": 2,
            "skipped": {"header-required": 1},
            "lastStatus": s["targets"]["lastStatus"].clone(),
        })
    );
    let last: u64 = s["targets"]["lastStatus"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(last, 5);
    assert_eq!(s["targets"]["lastStatus"]["ok"], 2);
    assert_eq!(s["generatedAt"], "2026-12-01T01:00:00Z");
}

#[tokio::test]
async fn stats_count_changes_in_each_window() {
    let p = fixture("stats-changes", day1);
    let (_, s) = json_of(&p.state, "/api/v1/stats").await;
    let c = &s["changes"];
    assert_eq!(
        (&c["last24h"], &c["last7d"], &c["last30d"], &c["total"]),
        (&json!(1), &json!(1), &json!(1), &json!(1))
    );
    assert_eq!(
        c["windows"]["last24h"],
        json!({"total": 1, "byKind": {"tools": 1}, "byClass": {"dangerous": 1}})
    );
    // Nine days on, the change has left the last 24 hours and the last 7 days.
    let p = fixture("stats-changes-later", day10);
    let (_, s) = json_of(&p.state, "/api/v1/stats").await;
    let c = &s["changes"];
    assert_eq!(
        (&c["last24h"], &c["last7d"], &c["last30d"]),
        (&json!(0), &json!(0), &json!(1))
    );
}

#[tokio::test]
async fn stats_give_thirty_days_of_activity_with_every_day_present() {
    let p = fixture("stats-daily", day1);
    let (_, s) = json_of(&p.state, "/api/v1/stats").await;
    let days = s["daily"].as_array().unwrap();
    assert_eq!(days.len(), 30);
    assert_eq!(days[0]["day"], "2026-11-02");
    assert_eq!(
        days[29],
        json!({"day": "2026-12-01", "observations": 5, "changes": 1})
    );
    assert_eq!(
        days[28],
        json!({"day": "2026-11-30", "observations": 5, "changes": 0})
    );
    let rest: u64 = days[..28]
        .iter()
        .map(|d| d["observations"].as_u64().unwrap() + d["changes"].as_u64().unwrap())
        .sum();
    assert_eq!(rest, 0);
}

#[tokio::test]
async fn stats_give_a_running_crawl_without_counts() {
    // The fixture's recorder leaves its runs open, as a crawl in progress is.
    let p = fixture("stats-running", day1);
    let (_, s) = json_of(&p.state, "/api/v1/stats").await;
    let run = &s["lastRun"];
    assert_eq!(run["kind"], "crawl");
    assert_eq!(run["status"], "running");
    assert_eq!(run["finishedAt"], Value::Null);
    assert_eq!(run["statuses"], json!({}));
    assert_eq!(run["observed"], 0);
    // No package sweep ran.
    assert_eq!(s["lastSweep"], Value::Null);
}

#[tokio::test]
async fn stats_give_the_last_crawl_and_sweep_with_their_report_counts() {
    let p = fixture("stats-runs", day1);
    // Close the newest crawl and add a finished sweep, with reports of the shape `ingest`
    // stores (`RunReport`, `SweepReport`: camelCase members, `totals` by status).
    let db = rusqlite::Connection::open(p.dir.join("index.sqlite")).unwrap();
    let crawl: i64 = db
        .query_row("SELECT max(id) FROM runs WHERE kind = 'crawl'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let report = json!({"run": crawl, "servers": 5, "abandoned": 0, "logSize": 10,
                        "totals": {"ok": 2, "auth-required": 1, "timeout": 1, "header-required": 1}});
    db.execute(
        "UPDATE runs SET status = 'complete', finished_at = '2026-12-01T00:05:00Z', report = ?1
         WHERE id = ?2",
        rusqlite::params![report.to_string(), crawl],
    )
    .unwrap();
    let sweep = json!({"kind": "sweep", "packages": 3, "abandoned": 1, "logSize": 12,
                       "chosen": {"new": 2}, "totals": {"ok": 1, "install-failed": 1}});
    db.execute(
        "INSERT INTO runs (kind, started_at, finished_at, status, registry, harvest_complete, report)
         VALUES ('sweep', '2026-12-01T00:10:00Z', '2026-12-01T00:20:00Z', 'failed', 'r', 1, ?1)",
        [sweep.to_string()],
    )
    .unwrap();
    // A state of its own: the fixture's has its stats cached.
    let state = Arc::new(AppState::open(&p.dir, BASE).unwrap());
    let (_, s) = json_of(&state, "/api/v1/stats").await;
    let run = &s["lastRun"];
    assert_eq!(run["id"], crawl);
    assert_eq!(run["status"], "complete");
    assert_eq!(run["finishedAt"], "2026-12-01T00:05:00Z");
    assert_eq!(run["statuses"], report["totals"]);
    assert_eq!(run["observed"], 5);
    assert_eq!(
        (&run["servers"], &run["abandoned"], &run["logSize"]),
        (&json!(5), &json!(0), &json!(10))
    );
    assert!(run.get("packages").is_none());
    let sw = &s["lastSweep"];
    assert_eq!(
        (sw["kind"].as_str(), sw["status"].as_str()),
        (Some("sweep"), Some("failed"))
    );
    assert_eq!(sw["statuses"], sweep["totals"]);
    assert_eq!(sw["observed"], 2);
    assert_eq!((&sw["packages"], &sw["abandoned"]), (&json!(3), &json!(1)));
    assert!(sw.get("servers").is_none());
}

#[tokio::test]
async fn stats_give_the_log() {
    let p = fixture("stats-log", day1);
    let (_, s) = json_of(&p.state, "/api/v1/stats").await;
    let cp = p.state.checkpoint().unwrap();
    assert_eq!(s["log"]["treeSize"], 10);
    assert_eq!(s["log"]["indexedEntries"], 10);
    assert_eq!(s["log"]["rootHash"], cp.checkpoint.root.to_base64());
    assert_eq!(s["log"]["origin"], cp.checkpoint.origin);
    assert!(s["log"]["checkpointWrittenAt"].is_string());
}

#[tokio::test]
async fn stats_are_reused_for_a_minute() {
    let p = fixture("stats-cached", day1);
    let (_, first) = json_of(&p.state, "/api/v1/stats").await;
    let db = rusqlite::Connection::open(p.dir.join("index.sqlite")).unwrap();
    db.execute("DELETE FROM changes", []).unwrap();
    let (status, headers, body) = get(&p.state, "/api/v1/stats").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CACHE_CONTROL], "public, max-age=60");
    let again: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(again, first, "the cached stats, not a recount");
    assert_eq!(again["cacheSeconds"], 60);
}

#[tokio::test]
async fn hosts_are_ranked_by_endpoints() {
    let p = fixture("stats-hosts", day1);
    let (status, h) = json_of(&p.state, "/api/v1/stats/hosts").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(h["distinctHosts"], 5);
    let hosts: Vec<&str> = h["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["host"].as_str().unwrap())
        .collect();
    // One endpoint each: ties by host name.
    assert_eq!(
        hosts,
        [
            "files.example.com",
            "flaky.example.com",
            "keyed.example.com",
            "locked.example.com",
            "memory.example.com"
        ]
    );
    let (_, h) = json_of(&p.state, "/api/v1/stats/hosts?limit=2").await;
    assert_eq!(
        h,
        json!({"hosts": [{"host": "files.example.com", "endpoints": 1},
                         {"host": "flaky.example.com", "endpoints": 1}],
               "distinctHosts": 5})
    );
}

#[tokio::test]
async fn hosts_refuse_a_limit_outside_one_to_fifty() {
    let p = fixture("stats-hosts-limit", day1);
    for limit in ["0", "51", "-1", "x", "01", ""] {
        let (status, body) = json_of(&p.state, &format!("/api/v1/stats/hosts?limit={limit}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "limit={limit}");
        assert_eq!(body["detail"], "limit must be an integer from 1 to 50");
    }
    for limit in ["1", "50"] {
        let (status, _) = json_of(&p.state, &format!("/api/v1/stats/hosts?limit={limit}")).await;
        assert_eq!(status, StatusCode::OK, "limit={limit}");
    }
}

#[test]
fn a_badge_escapes_what_it_is_given() {
    let badge = toolmark_api::stats::badge::Badge {
        label: "<script>&\"'".into(),
        message: "a</text><text>b".into(),
        color: toolmark_api::stats::badge::Color::Blue,
        state: "test",
    };
    let svg = parse_svg(badge.svg().as_bytes());
    assert_eq!(svg.texts, ["<script>&\"'", "a</text><text>b"]);
    assert!(svg.width > 100.0);
}
