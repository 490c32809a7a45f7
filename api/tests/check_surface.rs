//! `/check` about one kind of the surface (`prompts`, `resources`, `resourceTemplates`): the
//! verdicts, each proved by the entry that carries the kind's digest, and verified as a client
//! does; requests comparing two things are refused.

mod support;

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::index_support::{Env, MEMORY, corpus_page, day, day_str, ok, records};
use support::{BASE, Populated, get, server};
use toolmark_api::AppState;
use toolmark_toolset::surface::{OK, RawList, RawSurface};

const URL: &str = "https://prompts.example.com/mcp";
const OLD_URL: &str = "https://old.example.com/mcp";

fn prompts(names: &[&str]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|n| json!({"name": n, "description": format!("The {n} prompt.")}))
            .collect(),
    )
}

fn surface(prompts: &Value) -> RawSurface {
    let list = |member: &str, v: &Value| {
        Some(RawList {
            status: OK.into(),
            detail: String::new(),
            pages: vec![json!({ member: v }).to_string()],
        })
    };
    // The prompts list says it is private to this caller (MCP 2026-07-28's cache hints).
    let mut private = list("prompts", prompts).unwrap();
    private.pages =
        vec![json!({"prompts": prompts, "cacheScope": "private", "ttlMs": 60000}).to_string()];
    RawSurface {
        prompts: Some(private),
        resources: list("resources", &json!([])),
        resource_templates: None,
        app_pages: Vec::new(),
        // A kind whose name sorts before the others: the entry holds them in name order.
        card: Some(toolmark_toolset::surface::RawCard {
            url: "https://prompts.example.com/.well-known/mcp/server-card.json".into(),
            status: "absent".into(),
            detail: "HTTP 404".into(),
            body: None,
        }),
    }
}

/// Three days: day 0 serves prompts `a`, day 1 prompts `a` and `b`, and on day 2 its tools
/// are observed without the surface (a day off its `crawl.surface_days` rotation), so the
/// surface it has now is day 1's; a second server observed without its surface (as before
/// toolmark read it).
fn populated(tag: &str) -> Populated {
    let mut env = Env::new(&format!("api-check-surface-{tag}"));
    let recs = records(json!([
        server("io.example/prompts", URL),
        server("io.example/old", OLD_URL),
    ]));
    for d in 0..3u64 {
        env.run(&day_str(d, 0), &recs, &[], |url| {
            let mut obs = ok(day(d, 60), vec![corpus_page(MEMORY)]);
            match url {
                URL if d == 2 => {}
                URL => {
                    let p = if d == 0 {
                        prompts(&["a"])
                    } else {
                        prompts(&["a", "b"])
                    };
                    obs.surface = Some(surface(&p));
                }
                // Its tools/list says it is private to this caller.
                OLD_URL => {
                    let page = corpus_page(MEMORY);
                    let body = page.trim().strip_prefix('{').expect("an object");
                    obs.pages = vec![format!("{{\"cacheScope\":\"private\",{body}")];
                }
                _ => return None,
            }
            Some(obs)
        });
    }
    let dir = env.dir.clone();
    let state = AppState::open(&dir, BASE).expect("open");
    Populated::wrap_env(dir, Arc::new(state), env)
}

async fn check(p: &Populated, body: Value) -> (StatusCode, Value) {
    support::post_check(&p.state, body).await
}

/// The per-kind digest a client computes of what it received: toolmark's one definition.
fn digest_of(member: &str, entries: &Value) -> String {
    let kind = toolmark_toolset::surface::Kind::from_name(member).unwrap();
    let list = RawList {
        status: OK.into(),
        detail: String::new(),
        pages: vec![json!({ member: entries }).to_string()],
    };
    toolmark_toolset::surface::items::Items::of_list(kind, &list)
        .unwrap()
        .digest()
        .to_string()
}

async fn verify(p: &Populated, answer: &Value, compared: &str) -> toolmark_log::entry::Entry {
    let (_, _, issuer) = get(&p.state, "/api/v1/issuer").await;
    let issuer: Value = serde_json::from_slice(&issuer).unwrap();
    let key = issuer["publicKeyHex"].as_str().unwrap();
    let verified = toolmark_client::verify_answer(
        answer,
        key,
        p.state.log.vkey(),
        Some(&compared.parse().unwrap()),
    )
    .expect("the answer verifies");
    verified.entry
}

#[tokio::test]
async fn the_latest_prompts_are_same_and_proved_by_the_entry_carrying_their_digest() {
    let p = populated("the_latest_prompts_are_s");
    let sent = prompts(&["b", "a"]);
    let (status, a) = check(&p, json!({"endpoint": URL, "prompts": sent})).await;
    assert_eq!(status, StatusCode::OK, "{a}");
    assert_eq!(a["match"], "same", "{a}");
    assert_eq!(a["query"]["comparedBy"], "prompts");
    let digest = digest_of("prompts", &sent);
    assert_eq!(a["query"]["surfaceDigest"], digest.as_str());
    assert!(a["note"].as_str().unwrap().starts_with("the prompts equal"));
    let entry = verify(&p, &a, &digest).await;
    assert_eq!(entry.observed_at, day_str(1, 60));
}

#[tokio::test]
async fn earlier_prompts_are_previously_observed_and_unknown_ones_different() {
    let p = populated("earlier_prompts_are_prev");
    let sent = prompts(&["a"]);
    let (_, a) = check(&p, json!({"endpoint": URL, "prompts": sent})).await;
    assert_eq!(a["match"], "previously-observed", "{a}");
    let entry = verify(&p, &a, &digest_of("prompts", &sent)).await;
    assert_eq!(entry.observed_at, day_str(0, 60));
    let (_, a) = check(&p, json!({"endpoint": URL, "prompts": prompts(&["c"])})).await;
    assert_eq!(a["match"], "different", "{a}");
    assert!(a.get("proof").is_none());
}

#[tokio::test]
async fn a_kind_with_the_same_entries_as_another_is_proved_only_as_itself() {
    let p = populated("a_kind_with_the_same_ent");
    // The resources are `[]`; so would be prompts `[]`, with the same digest: an answer about
    // resources proves resources, and a client checks the kind the answer names.
    let (_, a) = check(&p, json!({"endpoint": URL, "resources": []})).await;
    assert_eq!(a["match"], "same", "{a}");
    assert_eq!(a["query"]["comparedBy"], "resources");
    verify(&p, &a, &digest_of("resources", &json!([]))).await;
    let (_, none) = check(&p, json!({"endpoint": URL, "prompts": []})).await;
    assert_eq!(none["match"], "different", "{none}");
    // The server declared no templates.
    let (_, t) = check(&p, json!({"endpoint": URL, "resourceTemplates": []})).await;
    assert_eq!(t["match"], "different", "{t}");
    assert!(
        t["note"]
            .as_str()
            .unwrap()
            .contains("declared no resource templates"),
        "{t}"
    );
}

#[tokio::test]
async fn a_target_observed_without_its_surface_is_not_observed_for_a_kind() {
    let p = populated("a_target_observed_withou");
    let (_, a) = check(&p, json!({"endpoint": OLD_URL, "prompts": []})).await;
    assert_eq!(a["match"], "not-observed", "{a}");
    assert!(
        a["note"]
            .as_str()
            .unwrap()
            .contains("did not read the prompts"),
        "{a}"
    );
}

#[tokio::test]
async fn comparing_two_things_at_once_is_refused() {
    let p = populated("comparing_two_things_at_");
    for body in [
        json!({"endpoint": URL, "prompts": [], "resources": []}),
        json!({"endpoint": URL, "prompts": [], "tools": []}),
        json!({"endpoint": URL, "resources": [], "fullDigest": "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}),
        json!({"endpoint": URL, "prompts": {}}),
    ] {
        let (status, v) = check(&p, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
    }
}

#[tokio::test]
async fn the_server_json_shows_each_kind_digest_and_count_of_the_latest_observation_that_read_them()
{
    let p = populated("server-json");
    let id = toolmark_log::entry::TargetId::of("io.example/prompts", URL);
    let (status, _, bytes) = get(&p.state, &format!("/api/v1/servers/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let s = &v["surface"];
    let prompts = prompts(&["a", "b"]);
    assert_eq!(
        s["kinds"],
        json!([
            {"kind": "card", "status": "absent"},
            {"kind": "prompts", "digest": digest_of("prompts", &prompts), "count": 2,
             "cacheScope": "private", "ttlMs": 60000},
            {"kind": "resources", "digest": digest_of("resources", &json!([])), "count": 0},
        ]),
        "{s}"
    );
    // The kinds are day 1's (day 2 listed tools only), the tool index the latest entry's.
    assert!(
        s["kindsEntry"].as_u64().unwrap() < s["entry"].as_u64().unwrap(),
        "{s}"
    );
    // Its tools/list sent no cache hints.
    assert_eq!(s["toolsCache"], json!({"cacheScope": null, "ttlMs": null}));
    let set = toolmark_toolset::ToolSet::parse(corpus_page(MEMORY).as_bytes()).unwrap();
    assert_eq!(
        s["toolIndex"],
        toolmark_toolset::full::ToolIndex::of(&set)
            .digest
            .to_string()
            .as_str()
    );
    // Observed without its surface: no kinds.
    let old = toolmark_log::entry::TargetId::of("io.example/old", OLD_URL);
    let (_, _, bytes) = get(&p.state, &format!("/api/v1/servers/{old}")).await;
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["surface"]["kinds"], json!([]));
    assert_eq!(
        v["surface"]["toolsCache"],
        json!({"cacheScope": "private", "ttlMs": null})
    );
}

#[tokio::test]
async fn the_server_page_shows_each_kind_of_the_latest_observation_that_read_them() {
    let p = populated("server-page");
    let id = toolmark_log::entry::TargetId::of("io.example/prompts", URL);
    let (status, _, bytes) = get(&p.state, &format!("/s/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(bytes.to_vec()).unwrap();
    let section = &page[page.find("id=\"surface-h\"").expect("a surface section")..];
    let section = &section[..section.find("</section>").unwrap()];
    let prompts = digest_of("prompts", &prompts(&["a", "b"]));
    assert!(section.contains(&prompts), "{section}");
    assert!(section.contains("not read: absent"), "{section}");
    assert!(section.contains("<strong>private</strong>"), "{section}");
    // Observed without its surface: said so.
    let old = toolmark_log::entry::TargetId::of("io.example/old", OLD_URL);
    let (_, _, bytes) = get(&p.state, &format!("/s/{old}")).await;
    let page = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(page.contains("No prompts, resources, app pages or card have been read"));
}
