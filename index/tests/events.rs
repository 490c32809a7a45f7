//! Security events derived from the changes: which changes make one, their chain per target,
//! their ids, and that a rebuild derives the same events in the same order.

#[path = "support/events_world.rs"]
mod events_world;
mod support;

use events_world::{ALPHA, BETA, record_day, world};
use serde_json::Value;
use toolmark_index::events::is_event;
use toolmark_index::{EventQuery, SecurityEventRow};

fn all(env: &support::Env) -> Vec<SecurityEventRow> {
    events_of(&env.index)
}

fn events_of(index: &toolmark_index::Index) -> Vec<SecurityEventRow> {
    index
        .security_events(&EventQuery {
            after: Some(0),
            limit: 1_000,
            ..EventQuery::default()
        })
        .unwrap()
}

#[test]
fn every_signal_change_and_every_dangerous_tool_change_is_one_event_in_change_order() {
    let env = world("events-which", 5);
    let changes = env.index.changes(0, 1_000, None, None).unwrap();
    let expected: Vec<i64> = changes
        .iter()
        .filter(|c| is_event(&c.kind, &c.class))
        .map(|c| c.id)
        .collect();
    let events = all(&env);
    assert_eq!(
        events.iter().map(|e| e.change_id).collect::<Vec<_>>(),
        expected
    );
    // Beta's authorization server changed on days 1–4; alpha's set flipped on days 1–4 (a
    // `readOnlyHint` turned off, then on again: dangerous both ways).
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            let c = changes.iter().find(|c| c.id == e.change_id).unwrap();
            (e.kind.as_str(), c.endpoint.as_str())
        })
        .collect();
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == ("authorization", BETA))
            .count(),
        4
    );
    assert_eq!(kinds.iter().filter(|k| **k == ("tools", ALPHA)).count(), 4);
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
}

#[test]
fn an_event_carries_its_changes_evidence_and_links_to_the_previous_event_of_its_target() {
    let env = world("events-chain", 4);
    let events = all(&env);
    let mut last: std::collections::HashMap<String, String> = Default::default();
    for e in &events {
        let body: Value = serde_json::from_str(&e.body).unwrap();
        assert_eq!(body["type"], "toolmark.security-event/v1");
        assert_eq!(body["id"], e.id.as_str());
        assert_eq!(body["kind"], e.kind.as_str());
        assert_eq!(body["target"]["id"], e.target_id.as_str());
        assert_eq!(body["observedAt"], e.observed_at.as_str());
        assert_eq!(
            body["previous"].as_str(),
            last.get(&e.target_id).map(String::as_str)
        );
        last.insert(e.target_id.clone(), e.id.clone());
        // The id is what a client recomputes.
        assert_eq!(toolmark_client::event_id(&body).unwrap(), e.id);
        let change = env.index.change(e.change_id).unwrap().unwrap();
        let ev = &body["evidence"];
        assert_eq!(ev["change"], change.id);
        assert_eq!(ev["oldEntry"], change.old_entry);
        assert_eq!(ev["newEntry"], change.new_entry);
        assert_eq!(ev["class"], change.class.as_str());
        match e.kind.as_str() {
            "authorization" => {
                assert_eq!(body["target"]["endpoint"], BETA);
                let old: Value = serde_json::from_str(change.old_auth.as_deref().unwrap()).unwrap();
                let new: Value = serde_json::from_str(change.new_auth.as_deref().unwrap()).unwrap();
                assert_eq!((&ev["oldAuth"], &ev["newAuth"]), (&old, &new));
                assert!(ev.get("diff").is_none());
            }
            "tools" => {
                assert_eq!(body["target"]["endpoint"], ALPHA);
                assert_eq!(body["target"]["name"], "io.example/alpha");
                assert_eq!(ev["newFull"], change.new_full.as_str());
                let classification: Value =
                    serde_json::from_str(change.classification.as_deref().unwrap()).unwrap();
                // The classification's class and each signal's rule, class, tool and path;
                // not the values a server chose, nor the diff (both behind the change's URL).
                let ours = &ev["classification"];
                assert_eq!(ours["class"], classification["class"]);
                let signals = classification["signals"].as_array().unwrap();
                assert!(!signals.is_empty());
                assert_eq!(ours["signals"].as_array().unwrap().len(), signals.len());
                for (mine, theirs) in ours["signals"].as_array().unwrap().iter().zip(signals) {
                    for k in ["rule", "class", "tool", "path"] {
                        assert_eq!(mine.get(k), theirs.get(k), "{k}");
                    }
                    assert!(mine.get("old").is_none() && mine.get("new").is_none());
                }
                assert_eq!(ours["signalsLeftOut"], 0);
                assert!(ev.get("diff").is_none());
            }
            other => panic!("unexpected kind {other}"),
        }
    }
    assert_eq!(last.len(), 2, "both targets have events");
}

#[test]
fn a_rebuild_derives_the_same_events_in_the_same_order() {
    let mut env = world("events-rebuild", 5);
    let before = all(&env);
    assert!(before.len() >= 6);
    env.index.rebuild(&env.log, &env.blobs).unwrap();
    assert_eq!(all(&env), before);
    // And the next day's events follow on, chained to the rebuilt ones.
    record_day(&mut env, 5);
    let after = all(&env);
    assert_eq!(&after[..before.len()], &before[..]);
    assert!(after.len() > before.len());
    assert_eq!(
        env.index.last_security_event_seq().unwrap(),
        after.len() as u64
    );
}

/// A replica following the published files derives the writer's events, the same and in the
/// same order: its entries that make no change skip the events query, those that make one do
/// not.
#[test]
fn a_follower_derives_the_writers_events() {
    let env = world("events-follow", 5);
    let before = all(&env);
    assert!(before.len() >= 6);
    let reader = toolmark_log::reader::Reader::new(
        toolmark_log::objects::Objects::dir(&env.dir.join("log/public")).unwrap(),
        &env.log.vkey(),
    );
    let mut replica = toolmark_index::Index::open(&env.dir.join("replica.sqlite")).unwrap();
    replica.follow(&reader, &env.blobs).unwrap();
    assert_eq!(events_of(&replica), before);
}

#[test]
fn the_cursor_reads_forwards_by_target_and_an_event_by_id() {
    let env = world("events-cursor", 5);
    let events = all(&env);
    let page = env
        .index
        .security_events(&EventQuery {
            after: Some(2),
            limit: 2,
            ..EventQuery::default()
        })
        .unwrap();
    assert_eq!(page, events[2..4].to_vec());
    let beta: Vec<String> = vec![
        events
            .iter()
            .find(|e| e.kind == "authorization")
            .unwrap()
            .target_id
            .clone(),
    ];
    let watched = env
        .index
        .security_events(&EventQuery {
            after: Some(0),
            targets: Some(&beta),
            limit: 100,
            ..EventQuery::default()
        })
        .unwrap();
    assert!(watched.iter().all(|e| e.kind == "authorization"));
    assert_eq!(watched.len(), 4);
    let newest = env
        .index
        .security_events(&EventQuery {
            limit: 1,
            ..EventQuery::default()
        })
        .unwrap();
    assert_eq!(newest, vec![events.last().unwrap().clone()]);
    assert_eq!(
        env.index.security_event(&events[0].id).unwrap().as_ref(),
        Some(&events[0])
    );
    assert_eq!(env.index.security_event("sha256-nothing").unwrap(), None);
}

#[test]
fn migrating_a_version_4_index_derives_the_events_a_rebuild_would() {
    let env = world("events-migrate", 5);
    let before = all(&env);
    let path = env.dir.join("index.sqlite");

    {
        // The same index as version 4 had it: no events table, no registry columns, none of
        // version 7's surface or version 8's onset columns (its
        // `changes` had no registry changes, so version 5's rebuild of it copies them all).
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE security_events;
             ALTER TABLE package_observations DROP COLUMN registry;
             ALTER TABLE package_observations DROP COLUMN registry_previous;
             ALTER TABLE package_observations DROP COLUMN registry_comparison;
             DROP TABLE observation_kinds;
             ALTER TABLE observations DROP COLUMN tool_index;
             ALTER TABLE observations DROP COLUMN cache_scope;
             ALTER TABLE observations DROP COLUMN ttl_ms;
             ALTER TABLE targets DROP COLUMN card_mismatch;
             ALTER TABLE targets DROP COLUMN cloaking;
             UPDATE meta SET value = '4' WHERE key = 'schema_version';",
        )
        .unwrap();
    }
    let index = toolmark_index::Index::open(&path).unwrap();
    let after = index
        .security_events(&EventQuery {
            after: Some(0),
            limit: 1_000,
            ..EventQuery::default()
        })
        .unwrap();
    assert_eq!(after, before);
}
