//! Changes of the surface beyond `tools/list` (schema version 8): per-kind changes, the card
//! that disagrees with the served tools, and cloaking — recorded through the recorder from
//! real server-everything prompts and the filesystem server's tools (`surface_world`), each
//! made once per onset, reproduced by a rebuild, and the dangerous ones security events.

mod support;
#[path = "support/surface_world.rs"]
mod surface_world;

use serde_json::Value;
use surface_world::{GAMMA, POISONED, world};
use toolmark_index::EventQuery;
use toolmark_index::index::ChangeRow;
use toolmark_log::entry::KindEntry;
use toolmark_toolset::surface::Kind;

fn changes(env: &support::Env) -> Vec<ChangeRow> {
    env.index.changes(0, 1_000, None, None).unwrap()
}

fn of_kind<'a>(all: &'a [ChangeRow], kind: &str) -> Vec<&'a ChangeRow> {
    all.iter().filter(|c| c.kind == kind).collect()
}

fn json(text: &Option<String>) -> Value {
    serde_json::from_str(text.as_deref().unwrap()).unwrap()
}

/// The digest entry `i` of the log records for `kind`.
fn kind_digest(env: &support::Env, i: usize, kind: Kind) -> String {
    let entry = &env.entries()[i];
    match entry
        .surface
        .as_ref()
        .unwrap()
        .iter()
        .find(|(k, _)| *k == kind)
    {
        Some((_, KindEntry::Read { digest, .. })) => digest.to_string(),
        other => panic!("entry {i} has no read {kind:?}: {other:?}"),
    }
}

#[test]
fn a_poisoned_prompt_is_one_dangerous_prompts_change_with_its_signal() {
    let env = world("surface-prompts", 2);
    let all = changes(&env);
    let prompts = of_kind(&all, "prompts");
    assert_eq!(prompts.len(), 1);
    let c = prompts[0];
    assert_eq!((c.old_entry, c.new_entry), (0, 1));
    assert_eq!(c.endpoint, GAMMA);
    assert_eq!(c.class, "dangerous");
    assert_eq!((c.added, c.removed, c.modified), (0, 0, 1));
    // The kind's digests, as the two entries record them.
    assert_eq!(c.old_full, kind_digest(&env, 0, Kind::Prompts));
    assert_eq!(c.new_full, kind_digest(&env, 1, Kind::Prompts));
    let diff = json(&c.diff);
    assert_eq!(diff["kind"], "prompts");
    assert_eq!(diff["changed"][0]["key"], "args-prompt");
    let classification = json(&c.classification);
    assert_eq!(classification["kind"], "prompts");
    let block: Vec<&Value> = classification["signals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["rule"] == "pattern-block-added")
        .collect();
    assert!(!block.is_empty());
    assert_eq!(block[0]["item"], "args-prompt");
    assert_eq!(block[0]["class"], "dangerous");
    assert!(POISONED.contains("Ignore all previous instructions"));
    // The tools never changed.
    assert!(of_kind(&all, "tools").is_empty());
}

#[test]
fn an_unread_kind_is_no_change_and_the_next_read_is_compared_with_the_last_complete_one() {
    let env = world("surface-unread", 4);
    let all = changes(&env);
    let prompts: Vec<(u64, u64)> = of_kind(&all, "prompts")
        .iter()
        .map(|c| (c.old_entry, c.new_entry))
        .collect();
    // Day 2 did not read the prompts (timeout); day 3 is compared with day 1.
    assert_eq!(prompts, [(0, 1), (1, 3)]);
    let back = of_kind(&all, "prompts")[1];
    assert_eq!(back.new_full, kind_digest(&env, 0, Kind::Prompts));
}

#[test]
fn a_changed_card_is_a_card_change_whose_texts_the_rule_set_read() {
    let env = world("surface-card", 2);
    let all = changes(&env);
    let card = of_kind(&all, "card");
    assert_eq!(card.len(), 1);
    assert_eq!(card[0].old_full, kind_digest(&env, 0, Kind::Card));
    assert_eq!(card[0].new_full, kind_digest(&env, 1, Kind::Card));
    // One unkeyed document: unmatched, unsure.
    assert_eq!(card[0].class, "unsure");
    let c = json(&card[0].classification);
    assert_eq!(c["signals"][0]["rule"], "entry-unmatched");
    assert_eq!(json(&card[0].diff)["unmatchedChanged"], true);
}

#[test]
fn a_card_that_disagrees_with_the_served_tools_is_one_change_per_onset() {
    let env = world("surface-card-mismatch", 5);
    let all = changes(&env);
    let mismatches = of_kind(&all, "card-mismatch");
    // Day 1 starts it (a tool the endpoint does not serve), day 2 keeps it, day 3 ends it,
    // day 4 starts another (a served tool described otherwise on the card).
    assert_eq!(
        mismatches.iter().map(|c| c.new_entry).collect::<Vec<_>>(),
        [1, 4]
    );
    let (first, second) = (mismatches[0], mismatches[1]);
    assert_eq!(first.class, "unsure");
    assert_eq!(first.old_entry, first.new_entry);
    assert_eq!(first.old_full, kind_digest(&env, 1, Kind::Card));
    assert_eq!(first.new_full, env.entries()[1].full.unwrap().to_string());
    assert_eq!((first.added, first.removed, first.modified), (1, 0, 0));
    let diff = json(&first.diff);
    assert_eq!(diff["onlyCard"], serde_json::json!(["delete_everything"]));
    assert_eq!(diff["onlyServedTotal"], 0);
    assert!(first.classification.is_none());
    assert_eq!(second.class, "dangerous");
    assert_eq!((second.added, second.removed, second.modified), (0, 0, 1));
    assert_eq!(
        json(&second.diff)["differing"],
        serde_json::json!([{"tool": "read_file", "members": ["description"]}])
    );
}

/// Day 5's card is day 1's again: after day 4's other mismatch, day 1's pair is a new onset;
/// the second listing agrees again, which ends the cloaking (no change).
#[test]
fn a_mismatch_seen_before_is_a_new_onset_when_another_came_between() {
    let env = world("surface-card-again", 6);
    let all = changes(&env);
    let mismatches = of_kind(&all, "card-mismatch");
    assert_eq!(
        mismatches.iter().map(|c| c.new_entry).collect::<Vec<_>>(),
        [1, 4, 5]
    );
    assert_eq!(mismatches[2].old_full, mismatches[0].old_full);
    assert_eq!(
        of_kind(&all, "cloaking")
            .iter()
            .map(|c| c.new_entry)
            .collect::<Vec<_>>(),
        [1, 4]
    );
}

#[test]
fn a_second_identity_listed_other_tools_is_one_dangerous_cloaking_change_per_onset() {
    let env = world("surface-cloaking", 5);
    let all = changes(&env);
    let cloaking = of_kind(&all, "cloaking");
    assert_eq!(
        cloaking.iter().map(|c| c.new_entry).collect::<Vec<_>>(),
        [1, 4]
    );
    let entries = env.entries();
    for c in &cloaking {
        let e = &entries[c.new_entry as usize];
        assert_eq!(c.class, "dangerous");
        assert_eq!(c.old_entry, c.new_entry);
        assert_eq!(c.old_full, e.full.unwrap().to_string());
        match &e.second {
            Some(KindEntry::Read { digest, .. }) => assert_eq!(c.new_full, digest.to_string()),
            other => panic!("{other:?}"),
        }
        // The two listings' diff: the rug pull turned one `readOnlyHint` off.
        assert_eq!((c.added, c.removed, c.modified), (0, 0, 1));
        let classification = json(&c.classification);
        assert_eq!(classification["class"], "dangerous");
    }
}

#[test]
fn dangerous_surface_changes_and_every_cloaking_are_security_events() {
    let env = world("surface-events", 5);
    let all = changes(&env);
    let events = env
        .index
        .security_events(&EventQuery {
            after: Some(0),
            limit: 1_000,
            ..EventQuery::default()
        })
        .unwrap();
    let kinds: Vec<(&str, u64)> = events
        .iter()
        .map(|e| {
            let c = all.iter().find(|c| c.id == e.change_id).unwrap();
            (e.kind.as_str(), c.new_entry)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("prompts", 1),
            ("cloaking", 1),
            ("card-mismatch", 4),
            ("cloaking", 4)
        ]
    );
    // A surface change's evidence names the item each signal is about.
    let body: Value = serde_json::from_str(&events[0].body).unwrap();
    let signals = body["evidence"]["classification"]["signals"]
        .as_array()
        .unwrap();
    assert!(
        signals
            .iter()
            .any(|s| s["rule"] == "pattern-block-added" && s["item"] == "args-prompt")
    );
}

#[test]
fn a_rebuild_derives_the_same_surface_changes_and_events() {
    let mut env = world("surface-rebuild", 5);
    let before = changes(&env);
    let events = |env: &support::Env| {
        env.index
            .security_events(&EventQuery {
                after: Some(0),
                limit: 1_000,
                ..EventQuery::default()
            })
            .unwrap()
    };
    let events_before = events(&env);
    assert!(before.len() >= 9, "{}", before.len());
    env.index.rebuild(&env.log, &env.blobs).unwrap();
    assert_eq!(changes(&env), before);
    assert_eq!(events(&env), events_before);
}

/// An MCP Apps page (server-basic-vanillajs 2.0.3's `ui://get-time/mcp-app.html`, in the shape
/// `toolset/tests/surface_diff.rs` keeps) that starts loading a script from an outside origin:
/// one dangerous `appPages` change, and a security event.
#[test]
fn an_app_page_that_loads_an_outside_script_is_a_dangerous_app_pages_change() {
    use support::{day, day_str, ok, records};
    use toolmark_toolset::surface::{OK, RawRead, RawSurface};
    const APPS: &str = "https://apps.example.com/mcp";
    let page = |extra: &str| {
        serde_json::json!({"contents": [{
            "uri": "ui://get-time/mcp-app.html",
            "mimeType": "text/html;profile=mcp-app",
            "text": format!(concat!(
                "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"UTF-8\">",
                "<title>Get Time App</title></head><body><main class=\"main\">",
                "<button id=\"get-time-btn\">Get Server Time</button>{}</main></body></html>"
            ), extra),
        }]})
        .to_string()
    };
    let mut env = support::Env::new("surface-app-pages");
    let recs = records(serde_json::json!([
        {"name": "io.example/apps", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": APPS}]}
    ]));
    for (d, extra) in [
        (0, ""),
        (1, "<script src=\"https://cdn.evil.example/t.js\"></script>"),
    ] {
        let text = page(extra);
        env.run(&day_str(d, 0), &recs, &[], |_| {
            let mut obs = ok(day(d, 5), vec![support::corpus_page(support::FETCH)]);
            obs.surface = Some(RawSurface {
                app_pages: vec![RawRead {
                    uri: "ui://get-time/mcp-app.html".into(),
                    status: OK.into(),
                    detail: String::new(),
                    result: Some(text.clone()),
                }],
                ..RawSurface::default()
            });
            Some(obs)
        });
    }
    let all = changes(&env);
    let pages = of_kind(&all, "appPages");
    assert_eq!(pages.len(), 1);
    let c = pages[0];
    assert_eq!(
        (c.old_entry, c.new_entry, c.class.as_str()),
        (0, 1, "dangerous")
    );
    assert_eq!(c.new_full, kind_digest(&env, 1, Kind::AppPages));
    let rules: Vec<String> = json(&c.classification)["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["rule"].as_str().unwrap().to_owned())
        .collect();
    assert!(rules.contains(&"app-script-added".to_owned()), "{rules:?}");
    assert!(
        rules.contains(&"app-outside-origin-added".to_owned()),
        "{rules:?}"
    );
    let events = env
        .index
        .security_events(&EventQuery {
            after: Some(0),
            limit: 10,
            ..EventQuery::default()
        })
        .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, "appPages");
}
