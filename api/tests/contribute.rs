//! Client reports (`"contribute": true` on `/check`): counted once per client, target and day;
//! shown on `/api/v1/servers/{id}`, the desk and the watched change feeds only at or above the
//! minimum of clients and only for digests toolmark never observed there; bounded by caps that
//! answer `contributed: false`; and nothing of the client kept.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use support::*;
use toolmark_api::contribute::ClientReports;
use toolmark_index::contributions::{Contributions, Limits, MINIMUM_REPORTS};

/// The memory set with its first tool's description changed: a set toolmark never observed.
fn other_memory_tools(n: u32) -> Value {
    let mut tools = tools_of(&page(MEMORY_SET));
    tools[0]["description"] = json!(format!("served to some clients only ({n})"));
    tools
}

/// `/check` from `peer` (as `toolmark_server` gives it: `ConnectInfo`).
async fn check_from(p: &Populated, peer: &str, body: Value) -> Value {
    let addr: SocketAddr = peer.parse().unwrap();
    let mut request = Request::post("/api/v1/check")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    request.extensions_mut().insert(ConnectInfo(addr));
    let (status, _, bytes) = send(&p.state, request).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    serde_json::from_slice(&bytes).unwrap()
}

fn report(tools: &Value) -> Value {
    json!({"endpoint": MEMORY_URL, "tools": tools, "contribute": true})
}

/// Every row of the store: (target, kind, digest, day, clients).
fn rows(p: &Populated) -> Vec<(String, String, String, i64, i64)> {
    let path = toolmark_index::DataDir::new(&p.dir).contributions_path();
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn
        .prepare("SELECT target_id, kind, digest, day, clients FROM client_reports ORDER BY digest")
        .unwrap();
    st.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn clients(p: &Populated) -> Vec<i64> {
    rows(p).into_iter().map(|r| r.4).collect()
}

async fn detail(p: &Populated, id: &str) -> Value {
    let (status, _, bytes) = get(&p.state, &format!("/api/v1/servers/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    serde_json::from_slice(&bytes).unwrap()
}

fn with_limits(p: &mut Populated, limits: Limits, max_clients: usize) {
    let path = toolmark_index::DataDir::new(&p.dir).contributions_path();
    let state = Arc::get_mut(&mut p.state).expect("the state is not shared yet");
    state.client_reports = ClientReports::new(
        Contributions::open_with(&path, limits).unwrap(),
        max_clients,
    );
}

#[tokio::test]
async fn a_client_is_counted_once_per_target_and_day() {
    let mut p = populated("contribute-once");
    without_rate_limits(&mut p);
    let tools = other_memory_tools(1);
    let a = check_from(&p, "192.0.2.1:4000", report(&tools)).await;
    assert_eq!(a["contributed"], true, "{a}");
    assert_eq!(a["match"], "different");
    // The same client again (another port), the same answer: still one.
    let again = check_from(&p, "192.0.2.1:4001", report(&tools)).await;
    assert_eq!(again["contributed"], true);
    assert_eq!(clients(&p), [1]);
    // A second client: two.
    check_from(&p, "192.0.2.2:4000", report(&tools)).await;
    assert_eq!(clients(&p), [2]);
    // IPv6 clients are their /64, as in the rate limits.
    check_from(&p, "[2001:db8:1:2::1]:4000", report(&tools)).await;
    check_from(&p, "[2001:db8:1:2::ffff]:4000", report(&tools)).await;
    assert_eq!(clients(&p), [3]);
}

#[tokio::test]
async fn a_contributed_answer_is_signed_and_verifies() {
    let mut p = populated("contribute-signed");
    without_rate_limits(&mut p);
    let tools = tools_of(&page(MEMORY_SET));
    let answer = check_from(&p, "192.0.2.1:4000", report(&tools)).await;
    assert_eq!(answer["match"], "same");
    assert_eq!(answer["contributed"], true);
    let (_, _, issuer) = get(&p.state, "/api/v1/issuer").await;
    let issuer: Value = serde_json::from_slice(&issuer).unwrap();
    let key = issuer["publicKeyHex"].as_str().unwrap();
    let compared = answer["query"]["fullDigest"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    toolmark_client::verify_answer(&answer, key, p.state.log.vkey(), Some(&compared))
        .expect("the contributed answer verifies");
    let mut forged = answer.clone();
    forged["contributed"] = json!(false);
    assert!(toolmark_client::verify_answer(&forged, key, p.state.log.vkey(), None).is_err());
}

#[tokio::test]
async fn without_contribute_nothing_is_counted_and_the_answer_has_no_contributed() {
    let mut p = populated("contribute-absent");
    without_rate_limits(&mut p);
    let tools = other_memory_tools(1);
    let plain = check_from(
        &p,
        "192.0.2.1:4000",
        json!({"endpoint": MEMORY_URL, "tools": tools}),
    )
    .await;
    assert!(plain.get("contributed").is_none(), "{plain}");
    let declined = check_from(
        &p,
        "192.0.2.1:4000",
        json!({"endpoint": MEMORY_URL, "tools": tools, "contribute": false}),
    )
    .await;
    assert!(declined.get("contributed").is_none(), "{declined}");
    assert!(rows(&p).is_empty());
}

#[tokio::test]
async fn not_listed_and_digestless_requests_are_not_counted() {
    let mut p = populated("contribute-not-listed");
    without_rate_limits(&mut p);
    let tools = other_memory_tools(1);
    let unlisted = check_from(
        &p,
        "192.0.2.1:4000",
        json!({"endpoint": "https://nobody.example.com/mcp", "tools": tools, "contribute": true}),
    )
    .await;
    assert_eq!(unlisted["match"], "not-listed");
    assert_eq!(unlisted["contributed"], false);
    assert!(unlisted["note"].as_str().unwrap().contains("not counted"));
    let digestless = check_from(
        &p,
        "192.0.2.1:4000",
        json!({"endpoint": MEMORY_URL, "contribute": true}),
    )
    .await;
    assert_eq!(digestless["match"], "no-digest");
    assert_eq!(digestless["contributed"], false);
    assert!(rows(&p).is_empty());
}

#[tokio::test]
async fn nothing_is_shown_below_the_minimum_and_it_is_shown_at_it() {
    let mut p = populated("contribute-minimum");
    without_rate_limits(&mut p);
    let tools = other_memory_tools(1);
    let mut id = String::new();
    for n in 1..MINIMUM_REPORTS {
        let a = check_from(&p, &format!("192.0.2.{n}:4000"), report(&tools)).await;
        id = a["target"]["id"].as_str().unwrap().to_owned();
    }
    let below = detail(&p, &id).await;
    assert_eq!(
        below["clientReports"]["otherToolSets"], 0,
        "{}",
        below["clientReports"]
    );
    assert_eq!(below["clientReports"]["toolSets"], json!([]));
    assert_eq!(below["clientReports"]["minimumReports"], MINIMUM_REPORTS);
    assert_eq!(below["clientReports"]["window"], "7d");
    let (_, _, page) = get(&p.state, &format!("/s/{id}")).await;
    assert!(!String::from_utf8_lossy(&page).contains("Clients were served"));

    let last = check_from(&p, "198.51.100.1:4000", report(&tools)).await;
    let at = detail(&p, &id).await;
    let shown = &at["clientReports"];
    assert_eq!(shown["otherToolSets"], 1, "{shown}");
    assert_eq!(shown["toolSets"][0]["kind"], "full");
    assert_eq!(shown["toolSets"][0]["digest"], last["query"]["fullDigest"]);
    assert_eq!(shown["toolSets"][0]["reports"], MINIMUM_REPORTS);
    assert_eq!(shown["toolSets"][0]["firstDay"], shown["until"]);
    assert_eq!(shown["toolSets"][0]["lastDay"], shown["until"]);
    let (_, _, page) = get(&p.state, &format!("/s/{id}")).await;
    let page = String::from_utf8_lossy(&page);
    assert!(
        page.contains("Clients were served <strong>1</strong> other tool set this week"),
        "{page}"
    );
}

#[tokio::test]
async fn a_digest_toolmark_observed_is_not_another_tool_set() {
    let mut p = populated("contribute-observed");
    without_rate_limits(&mut p);
    // The memory set as observed (`same`), and the files set of day 0, observed then replaced
    // (`previously-observed`), each reported by enough clients.
    let same = tools_of(&page(MEMORY_SET));
    let earlier = tools_of(&page(FILES_SET));
    let mut memory_id = String::new();
    let mut files_id = String::new();
    for n in 0..MINIMUM_REPORTS {
        let peer = format!("192.0.2.{}:4000", n + 1);
        let a = check_from(&p, &peer, report(&same)).await;
        assert_eq!(a["match"], "same");
        memory_id = a["target"]["id"].as_str().unwrap().to_owned();
        let b = check_from(
            &p,
            &peer,
            json!({"endpoint": FILES_URL, "tools": earlier, "contribute": true}),
        )
        .await;
        assert_eq!(b["match"], "previously-observed");
        files_id = b["target"]["id"].as_str().unwrap().to_owned();
    }
    // Counted...
    assert_eq!(clients(&p), [MINIMUM_REPORTS as i64; 2]);
    // ... but not other tool sets.
    for id in [&memory_id, &files_id] {
        assert_eq!(detail(&p, id).await["clientReports"]["otherToolSets"], 0);
    }
}

#[tokio::test]
async fn a_second_tool_set_from_the_same_client_on_the_same_day_is_not_counted() {
    let mut p = populated("contribute-second");
    without_rate_limits(&mut p);
    check_from(&p, "192.0.2.1:4000", report(&other_memory_tools(1))).await;
    let second = check_from(&p, "192.0.2.1:4000", report(&other_memory_tools(2))).await;
    assert_eq!(second["contributed"], false);
    assert!(
        second["note"]
            .as_str()
            .unwrap()
            .contains("once per target and day"),
        "{second}"
    );
    assert_eq!(clients(&p), [1]);
}

#[tokio::test]
async fn the_caps_refuse_past_their_limit_and_contributed_false_says_so() {
    let mut p = populated("contribute-caps");
    without_rate_limits(&mut p);
    with_limits(
        &mut p,
        Limits {
            max_digests_per_target_day: 1,
            ..Limits::default()
        },
        3,
    );
    // The target's cap of digests a day: one.
    let first = check_from(&p, "192.0.2.1:4000", report(&other_memory_tools(1))).await;
    assert_eq!(first["contributed"], true);
    let refused = check_from(&p, "192.0.2.2:4000", report(&other_memory_tools(2))).await;
    assert_eq!(refused["contributed"], false);
    assert!(
        refused["note"]
            .as_str()
            .unwrap()
            .contains("as many distinct reported tool sets today"),
        "{refused}"
    );
    // The cap of clients a day: three pairs of (client, target), then no new client.
    check_from(&p, "192.0.2.3:4000", report(&other_memory_tools(1))).await;
    check_from(&p, "192.0.2.4:4000", report(&other_memory_tools(1))).await;
    assert_eq!(clients(&p), [3]);
    let past = check_from(&p, "192.0.2.5:4000", report(&other_memory_tools(1))).await;
    assert_eq!(past["contributed"], false);
    assert!(
        past["note"].as_str().unwrap().contains("at their cap"),
        "{past}"
    );
    assert_eq!(clients(&p), [3]);
    // A client already counted is still answered `true`.
    let known = check_from(&p, "192.0.2.1:4000", report(&other_memory_tools(1))).await;
    assert_eq!(known["contributed"], true);
}

fn report_items(feed: &Value) -> Vec<Value> {
    feed["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["tags"] == json!(["client-report"]))
        .cloned()
        .collect()
}

#[tokio::test]
async fn the_feed_item_appears_once_at_the_minimum_with_a_stable_id() {
    let mut p = populated("contribute-feed");
    without_rate_limits(&mut p);
    let tools = other_memory_tools(1);
    let mut id = String::new();
    let feed_of = |id: &str| format!("/feed.json?watch={id}");
    for n in 1..MINIMUM_REPORTS {
        let a = check_from(&p, &format!("192.0.2.{n}:4000"), report(&tools)).await;
        id = a["target"]["id"].as_str().unwrap().to_owned();
    }
    let (_, _, before) = get(&p.state, &feed_of(&id)).await;
    assert!(report_items(&serde_json::from_slice(&before).unwrap()).is_empty());

    let a = check_from(&p, "198.51.100.1:4000", report(&tools)).await;
    let digest: toolmark_toolset::Sri = a["query"]["fullDigest"].as_str().unwrap().parse().unwrap();
    let (_, _, at) = get(&p.state, &feed_of(&id)).await;
    let at: Value = serde_json::from_slice(&at).unwrap();
    let items = report_items(&at);
    assert_eq!(items.len(), 1, "{at}");
    let item = &items[0];
    assert_eq!(
        item["title"],
        "io.example/memory: clients reported a tool set toolmark never observed"
    );
    let day = item["_toolmark"]["firstReached"].as_str().unwrap();
    assert_eq!(
        item["id"],
        format!("{BASE}/s/{id}#client-report-{day}-full-{}", digest.hex())
    );
    assert_eq!(item["date_published"], format!("{day}T00:00:00Z"));
    // More clients: still one item, the same id.
    check_from(&p, "198.51.100.2:4000", report(&tools)).await;
    let (_, _, later) = get(&p.state, &feed_of(&id)).await;
    let later = report_items(&serde_json::from_slice(&later).unwrap());
    assert_eq!(later.len(), 1);
    assert_eq!(later[0]["id"], item["id"]);
    // The Atom feed carries it too, as a feed reader reads it; the unwatched feed does not.
    let (_, _, atom) = get(&p.state, &format!("/feed.xml?watch={id}")).await;
    let atom = feed_rs::parser::parse(&atom[..]).unwrap();
    assert_eq!(
        atom.entries
            .iter()
            .filter(|e| e.id == item["id"].as_str().unwrap())
            .count(),
        1
    );
    let (_, _, all) = get(&p.state, "/feed.json").await;
    assert!(report_items(&serde_json::from_slice(&all).unwrap()).is_empty());
}

#[tokio::test]
async fn the_stored_counts_hold_no_address() {
    let mut p = populated("contribute-no-address");
    without_rate_limits(&mut p);
    let tools = other_memory_tools(1);
    for peer in ["203.0.113.77:4000", "[2001:db8:77::1]:4000"] {
        check_from(&p, peer, report(&tools)).await;
    }
    let path = toolmark_index::DataDir::new(&p.dir).contributions_path();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('client_reports') ORDER BY cid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(columns, ["target_id", "kind", "digest", "day", "clients"]);
    let all = rows(&p);
    assert_eq!(all.len(), 1);
    let (target, kind, digest, _, clients) = &all[0];
    assert_eq!((kind.as_str(), *clients), ("full", 2));
    assert_eq!(target.len(), 16);
    assert!(digest.starts_with("sha256-"));
    drop(conn);
    // Nor anywhere in the files (the database and its write-ahead log).
    for name in ["contributions.sqlite", "contributions.sqlite-wal"] {
        let Ok(bytes) = std::fs::read(p.dir.join(name)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for needle in ["203.0.113", "2001:db8", "served to some clients"] {
            assert!(!text.contains(needle), "{name} holds {needle}");
        }
    }
}
