//! The surface's changes as every surface shows them: the change JSON, the three feeds (their
//! text the one renderer's, `toolmark_toolset::surface::diff::render`), the security-event
//! stream and the desk's change page — for the index's surface world (a poisoned prompt, a
//! card that disagrees with the served tools, a cloaking server), and a tool-set change whose
//! tools were renamed (server-everything 2025.9.25 → 2026.8.31) shown as renames. The feed
//! items' text is a golden file: `tests/fixtures/surface-feed-golden.txt` (`TOOLMARK_BLESS=1`
//! writes it).

#[path = "support/mod.rs"]
mod api_support;
/// The index's test support, where the shared surface world looks for it.
mod support {
    pub use crate::api_support::index_support::*;
}
#[path = "../../index/tests/support/surface_world.rs"]
mod surface_world;

use std::sync::Arc;

use api_support::{BASE, get};
use axum::http::StatusCode;
use serde_json::{Value, json};
use support::Env;
use toolmark_api::AppState;
use toolmark_index::index::ChangeRow;
use toolmark_toolset::surface::diff::{KindClassification, KindDiff, render};

const GOLDEN: &str = "tests/fixtures/surface-feed-golden.txt";

fn open(env: &Env) -> Arc<AppState> {
    Arc::new(AppState::open(&env.dir, BASE).unwrap())
}

fn rows(state: &AppState) -> Vec<ChangeRow> {
    state.index.get().changes(0, 1_000, None, None).unwrap()
}

fn one<'a>(rows: &'a [ChangeRow], kind: &str, entry: u64) -> &'a ChangeRow {
    rows.iter()
        .find(|c| c.kind == kind && c.new_entry == entry)
        .unwrap_or_else(|| panic!("no {kind} change at entry {entry}"))
}

async fn get_json(state: &Arc<AppState>, path: &str) -> Value {
    let (status, _, body) = get(state, path).await;
    assert_eq!(status, StatusCode::OK, "{path}");
    serde_json::from_slice(&body).unwrap()
}

async fn get_text(state: &Arc<AppState>, path: &str) -> String {
    let (status, _, body) = get(state, path).await;
    let text = String::from_utf8(body).unwrap();
    assert_eq!(status, StatusCode::OK, "{path}: {text}");
    text
}

#[tokio::test]
async fn a_prompts_change_is_served_with_its_kind_diff_and_signals() {
    let env = surface_world::world("api-surface-json", 2);
    let state = open(&env);
    let all = rows(&state);
    let c = one(&all, "prompts", 1);
    let v = get_json(&state, &format!("/api/v1/changes/{}", c.id)).await;
    assert_eq!(v["kind"], "prompts");
    assert_eq!(v["class"], "dangerous");
    assert_eq!(v["analysed"], true);
    assert_eq!(
        v["surface"],
        json!({"kind": "prompts", "class": "dangerous"})
    );
    // The stored diff and classification, as stored.
    let stored = |t: &Option<String>| serde_json::from_str::<Value>(t.as_deref().unwrap()).unwrap();
    assert_eq!(v["diff"], stored(&c.diff));
    assert_eq!(v["classification"], stored(&c.classification));
    let block = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["rule"] == "pattern-block-added")
        .unwrap();
    assert_eq!(block["item"], "args-prompt");
    assert!(
        block["message"].as_str().unwrap().len() > 10,
        "{}",
        block["message"]
    );
    assert_eq!(
        v["signalsTotal"].as_u64().unwrap() as usize,
        v["signals"].as_array().unwrap().len()
    );
    // In a list: the kind and its signals, not the diff.
    let list = get_json(&state, "/api/v1/changes").await;
    let item = list["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == c.id)
        .unwrap();
    assert_eq!(item["surface"]["kind"], "prompts");
    assert!(item.get("diff").is_none());
}

#[tokio::test]
async fn a_card_mismatch_and_cloaking_are_served_with_their_facts() {
    let env = surface_world::world("api-surface-card", 5);
    let state = open(&env);
    let all = rows(&state);
    let m = one(&all, "card-mismatch", 4);
    let v = get_json(&state, &format!("/api/v1/changes/{}", m.id)).await;
    assert_eq!(v["class"], "dangerous");
    assert_eq!(
        v["cardMismatch"],
        json!({"onlyCard": [], "onlyCardTotal": 0, "onlyServed": [], "onlyServedTotal": 0,
               "differing": [{"tool": "read_file", "members": ["description"]}],
               "differingTotal": 1})
    );
    let c = one(&all, "cloaking", 1);
    let v = get_json(&state, &format!("/api/v1/changes/{}", c.id)).await;
    assert_eq!(v["kind"], "cloaking");
    assert_eq!(v["class"], "dangerous");
    assert_eq!(v["analysed"], true);
    // The diff of the first listing to the second identity's.
    assert_eq!(v["diff"]["modifiedTotal"], 1);
    assert_eq!(v["oldFull"], c.old_full.as_str());
    assert_eq!(v["newFull"], c.new_full.as_str());
}

/// Each feed item's text, oldest change first, `---`-separated (the golden file's form).
async fn feed_texts(state: &Arc<AppState>) -> (Vec<Value>, String) {
    let feed = get_json(state, "/feed.json").await;
    let mut items = feed["items"].as_array().unwrap().clone();
    items.reverse();
    let text = items
        .iter()
        .map(|i| {
            format!(
                "{}\n{}",
                i["title"].as_str().unwrap(),
                i["content_text"].as_str().unwrap()
            )
        })
        .collect::<Vec<_>>()
        .join("---\n");
    (items, text)
}

#[tokio::test]
async fn feeds_say_per_kind_what_changed_with_the_one_renderer() {
    let env = surface_world::world("api-surface-feeds", 5);
    let state = open(&env);
    let all = rows(&state);
    let (items, text) = feed_texts(&state).await;
    assert_eq!(items.len(), all.len());
    // The prompts change's text is the surface renderer's, whole.
    let c = one(&all, "prompts", 1);
    let d: KindDiff = serde_json::from_str(c.diff.as_deref().unwrap()).unwrap();
    let k: KindClassification = serde_json::from_str(c.classification.as_deref().unwrap()).unwrap();
    let rendered = render(&d, &k);
    let item = items
        .iter()
        .find(|i| i["id"] == format!("{BASE}/changes/{}", c.id))
        .unwrap();
    assert_eq!(
        item["title"],
        "io.example/gamma: prompts changed (dangerous)"
    );
    assert!(
        item["content_text"].as_str().unwrap().contains(&rendered),
        "{}\n{rendered}",
        item["content_text"]
    );
    assert!(rendered.starts_with("prompts: dangerous\n"));
    // Atom and RSS carry the same items.
    for path in ["/feed.xml", "/feed.rss"] {
        let body = get_text(&state, path).await;
        let feed = feed_rs::parser::parse(body.as_bytes()).unwrap();
        assert_eq!(feed.entries.len(), all.len(), "{path}");
        assert!(
            body.contains("server card disagrees with the tools served"),
            "{path}"
        );
        assert!(body.contains("another client was listed other tools (cloaking)"));
        assert!(
            body.contains("Only on the card (1): delete_everything"),
            "{path}"
        );
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    if std::env::var_os("TOOLMARK_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (TOOLMARK_BLESS=1 writes it)", path.display()));
    assert_eq!(text, golden);
}

#[tokio::test]
async fn the_security_event_stream_carries_the_surface_kinds() {
    let env = surface_world::world("api-surface-events", 5);
    let state = open(&env);
    let page = get_json(&state, "/api/v1/security-events?after=0&limit=100").await;
    let kinds: Vec<&str> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["prompts", "cloaking", "card-mismatch", "cloaking"]);
    let feed = get_text(&state, "/security-feed.xml").await;
    assert!(feed.contains("cloaking: io.example/gamma"), "{feed}");
}

#[tokio::test]
async fn the_desk_shows_the_kind_its_diff_the_card_and_cloaking() {
    let env = surface_world::world("api-surface-desk", 5);
    let state = open(&env);
    let all = rows(&state);
    let c = one(&all, "prompts", 1);
    let page = get_text(&state, &format!("/changes/{}", c.id)).await;
    assert!(page.contains("prompts changed"), "{page}");
    assert!(page.contains("id=\"surface-diff\""));
    assert!(page.contains("pattern-block-added"));
    assert!(page.contains("args-prompt"));
    let m = one(&all, "card-mismatch", 1);
    let page = get_text(&state, &format!("/changes/{}", m.id)).await;
    assert!(page.contains("Only on the card"), "{page}");
    assert!(page.contains("delete_everything"));
    let x = one(&all, "cloaking", 4);
    let page = get_text(&state, &format!("/changes/{}", x.id)).await;
    assert!(page.contains("id=\"cloaking\""), "{page}");
    assert!(page.contains("readOnlyHint"));
    // The list of changes names each kind.
    let list = get_text(&state, "/changes").await;
    assert!(list.contains("server card disagrees with the tools served"));
}

/// server-everything's two real versions (`toolset/tests/fixtures/renames`): the tool-set change
/// lists its renames as renames, in the change JSON, the feeds and the desk.
#[tokio::test]
async fn renamed_tools_are_shown_as_renames() {
    use support::{day, day_str, ok, records};
    const EVERYTHING: &str = "https://everything.example.com/mcp";
    let fixture = |v: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
                "../toolset/tests/fixtures/renames/server-everything-{v}.json"
            )),
        )
        .unwrap()
    };
    let mut env = Env::new("api-renames");
    let recs = records(json!([
        {"name": "io.example/everything", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": EVERYTHING}]}
    ]));
    for (d, v) in [(0, "2025.9.25"), (1, "2026.8.31")] {
        let page = fixture(v);
        env.run(&day_str(d, 0), &recs, &[], |_| {
            Some(ok(day(d, 5), vec![page.clone()]))
        });
    }
    let state = open(&env);
    let all = rows(&state);
    assert_eq!(all.len(), 1);
    let c = &all[0];
    let v = get_json(&state, &format!("/api/v1/changes/{}", c.id)).await;
    let renamed = v["names"]["renamed"].as_array().unwrap();
    assert!(
        renamed.contains(&json!({"from": "printEnv", "to": "get-env"})),
        "{renamed:?}"
    );
    let total = v["renamed"].as_u64().unwrap();
    assert_eq!(total as usize, renamed.len());
    // Neither added nor removed.
    let names = |k: &str| v["names"][k].as_array().unwrap().clone();
    assert!(!names("removed").contains(&json!("printEnv")));
    assert!(!names("added").contains(&json!("get-env")));
    let feed = get_json(&state, "/feed.json").await;
    let text = feed["items"][0]["content_text"].as_str().unwrap();
    assert!(
        text.contains(&format!("Renamed ({total}): ")) && text.contains("printEnv → get-env"),
        "{text}"
    );
    let page = get_text(&state, &format!("/changes/{}", c.id)).await;
    assert!(page.contains("id=\"renames\""), "{page}");
    assert!(page.contains("<code>printEnv</code> → <code>get-env</code>"));
}

#[tokio::test]
async fn the_server_json_says_whether_cloaking_is_in_force() {
    let id = toolmark_log::entry::TargetId::of("io.example/gamma", surface_world::GAMMA);
    // Day 4's second look listed the rug pull: in force.
    let env = surface_world::world("api-surface-cloaking-on", 5);
    let state = open(&env);
    let v = get_json(&state, &format!("/api/v1/servers/{id}")).await;
    let c = one(&rows(&state), "cloaking", 4).id;
    assert_eq!(v["cloaking"]["signal"], true, "{}", v["cloaking"]);
    assert_eq!(v["cloaking"]["secondLook"]["change"], c);
    assert_eq!(v["cloaking"]["secondLook"]["entry"], 4);
    assert_eq!(v["cloaking"]["clientReports"], 0);
    // Day 3's second look listed the same tools again: none in force, no client reports.
    let env = surface_world::world("api-surface-cloaking-off", 4);
    let state = open(&env);
    let v = get_json(&state, &format!("/api/v1/servers/{id}")).await;
    assert_eq!(
        v["cloaking"],
        json!({"signal": false, "secondLook": null, "clientReports": 0})
    );
}
