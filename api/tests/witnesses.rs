//! Witnessed checkpoints, read side: a real log directory (the API fixture) whose published
//! checkpoint is replaced by the same note with real `cosignature/v1` lines (`CosignerKey`),
//! served under a 2-of-3 witness policy. Checks `/api/v1/witnesses`, `/health` (with and
//! without the cosigner's status file, behind, garbage), `/metrics`, and the `/check` answer's
//! `log.cosignatures`, verified as a client does with `verify_answer_with`.

mod support;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::*;
use toolmark_client::{VerifyError, WitnessRequirement, verify_answer_with};
use toolmark_log::cosignature::{add_signature_lines, split_note};

/// The service's fixed clock: 2026-12-02T19:00:00Z.
const NOW: u64 = 1_796_238_000;

fn fixed_clock() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(NOW)
}

/// The fixture served with the witness policy (or none) and the fixed clock.
fn served(tag: &str, with_policy: bool) -> Populated {
    let mut p = populated(tag);
    let state = Arc::get_mut(&mut p.state).expect("the state is not shared yet");
    state.clock = fixed_clock;
    if with_policy {
        state.witnesses = Some(Arc::new(witness_policy()));
    }
    p
}

async fn json_of(p: &Populated, path: &str) -> (StatusCode, Value) {
    let (status, _, body) = get(&p.state, path).await;
    (status, serde_json::from_slice(&body).unwrap())
}

fn status_file(signed: u64, published: u64, met: bool, error: Option<&str>) -> String {
    json!({
        "v": "toolmark-witnessing/1", "policy": "2 of 3 witnesses", "quorumMet": met,
        "signedSize": signed, "publishedSize": published, "roundAt": "2026-12-02T18:59:00Z",
        "error": error,
        "witnesses": [
            {"name": "w1", "vkey": cosigner(1).witness_key().vkey(), "url": "https://witness1.example/",
             "size": signed, "cosignedAt": "2026-12-02T18:59:00Z", "error": null, "errorAt": null},
            {"name": "w2", "vkey": cosigner(2).witness_key().vkey(), "url": "https://witness2.example/",
             "size": null, "cosignedAt": null, "error": "HTTP 503", "errorAt": "2026-12-02T18:59:01Z"},
            {"name": "w3", "vkey": cosigner(3).witness_key().vkey(), "url": "https://witness3.example/",
             "size": published, "cosignedAt": "2026-12-02T18:00:00Z", "error": null, "errorAt": null},
        ],
    })
    .to_string()
}

#[tokio::test]
async fn without_a_policy_the_witnesses_route_is_empty_with_quorum_none() {
    let p = served("wit-none", false);
    let (status, w) = json_of(&p, "/api/v1/witnesses").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(w["quorum"], "none");
    assert_eq!(w["witnesses"], json!([]));
    assert_eq!(w["cosignatures"], json!([]));
    assert_eq!(w["cosignedAt"], Value::Null);
    assert_eq!(w["quorumMet"], true);
}

#[tokio::test]
async fn the_witnesses_route_lists_the_policy_and_who_cosigned_when() {
    let p = served("wit-route", true);
    publish_cosigned(&p.dir, &[(3, NOW - 600), (1, NOW - 60)]);
    let (status, w) = json_of(&p, "/api/v1/witnesses").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(w["quorum"], "2 of 3 witnesses");
    assert_eq!(w["witnesses"].as_array().unwrap().len(), 3);
    assert_eq!(w["witnesses"][1]["name"], "w2");
    assert_eq!(w["witnesses"][1]["vkey"], cosigner(2).witness_key().vkey());
    assert_eq!(w["witnesses"][1]["url"], "https://witness2.example/");
    assert_eq!(
        w["cosignatures"],
        json!([
            {"witness": "w1", "keyName": "witness1.example/w", "timestamp": "2026-12-02T18:59:00Z", "fresh": true},
            {"witness": "w3", "keyName": "witness3.example/w", "timestamp": "2026-12-02T18:50:00Z", "fresh": true},
        ])
    );
    assert_eq!(w["cosignedAt"], "2026-12-02T18:59:00Z");
    assert_eq!(w["quorumMet"], true);
    assert_eq!(w["error"], Value::Null);
}

#[tokio::test]
async fn a_heartbeat_with_new_cosignatures_on_the_same_tree_is_seen_at_once() {
    let p = served("wit-heartbeat", true);
    publish_cosigned(&p.dir, &[(1, NOW - 3600), (2, NOW - 3600)]);
    let (_, before) = json_of(&p, "/api/v1/witnesses").await;
    assert_eq!(before["cosignedAt"], "2026-12-02T18:00:00Z");
    // The same tree, cosigned again an hour later (a new file: the cache is re-verified).
    publish_cosigned(&p.dir, &[(1, NOW), (2, NOW - 5)]);
    let (_, after) = json_of(&p, "/api/v1/witnesses").await;
    assert_eq!(after["treeSize"], before["treeSize"]);
    assert_eq!(after["cosignedAt"], "2026-12-02T19:00:00Z");
}

#[tokio::test]
async fn a_forged_cosignature_on_the_published_checkpoint_is_reported_not_counted() {
    let p = served("wit-forged", true);
    let path = checkpoint_path(&p.dir);
    let note = std::fs::read(&path).unwrap();
    let (text, _) = split_note(&note).unwrap();
    let mut forged = cosigner(2).cosign(text, NOW).unwrap();
    forged.timestamp += 1;
    let lines = [
        cosigner(1).cosign(text, NOW).unwrap().to_line(),
        forged.to_line(),
    ];
    write_atomically(&path, &add_signature_lines(&note, &lines));
    let (_, w) = json_of(&p, "/api/v1/witnesses").await;
    assert_eq!(w["quorumMet"], false);
    assert!(
        w["error"].as_str().unwrap().contains("witness2.example/w"),
        "{w}"
    );
    let (status, h) = json_of(&p, "/health").await;
    assert_eq!(status, StatusCode::OK, "the log still serves: {h}");
    assert_eq!(h["witnessing"]["quorumMet"], false);
    assert!(h["witnessing"]["cosignaturesError"].is_string());
}

#[tokio::test]
async fn health_without_a_policy_or_status_file_has_no_witnessing() {
    let p = served("wit-health-none", false);
    let (status, h) = json_of(&p, "/health").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(h["witnessing"], Value::Null);
}

#[tokio::test]
async fn health_states_the_policy_cosigners_and_the_newest_cosigned_time_and_age() {
    let p = served("wit-health", true);
    publish_cosigned(&p.dir, &[(2, NOW - 120), (3, NOW - 300)]);
    let (status, h) = json_of(&p, "/health").await;
    assert_eq!(status, StatusCode::OK);
    let w = &h["witnessing"];
    assert_eq!(w["policy"], "2 of 3 witnesses");
    assert_eq!(w["publishedSize"], h["treeSize"]);
    assert_eq!(w["quorumMet"], true);
    assert_eq!(w["cosignedAt"], "2026-12-02T18:58:00Z");
    assert_eq!(w["cosignedAgeSeconds"], 120);
    let names: Vec<&str> = w["cosigners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["witness"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["w2", "w3"]);
    // No status file yet: no round to report, not behind.
    assert_eq!(w["cosigner"], Value::Null);
    assert_eq!(w["cosignerError"], Value::Null);
    assert_eq!(w["behind"], false);
}

#[tokio::test]
async fn health_says_the_published_checkpoint_is_behind_when_the_log_signed_more() {
    let p = served("wit-behind", true);
    publish_cosigned(&p.dir, &[(1, NOW - 60), (3, NOW - 60)]);
    let (_, h) = json_of(&p, "/health").await;
    let published = h["treeSize"].as_u64().unwrap();
    std::fs::write(
        p.dir.join("witnessing.json"),
        status_file(
            published + 2,
            published,
            false,
            Some("quorum not met: 1 of 2 witnesses cosigned"),
        ),
    )
    .unwrap();
    let (status, h) = json_of(&p, "/health").await;
    assert_eq!(status, StatusCode::OK);
    let w = &h["witnessing"];
    assert_eq!(w["behind"], true);
    assert_eq!(w["signedSize"], published + 2);
    assert_eq!(w["error"], "quorum not met: 1 of 2 witnesses cosigned");
    assert_eq!(w["cosigner"]["quorumMet"], false);
    assert_eq!(w["cosigner"]["witnesses"][1]["error"], "HTTP 503");
    // The previous checkpoint is still the published one, and still witnessed.
    assert_eq!(w["quorumMet"], true);
}

#[tokio::test]
async fn a_garbage_status_file_is_reported_and_health_stays_up() {
    let p = served("wit-garbage", true);
    std::fs::write(p.dir.join("witnessing.json"), b"{\"v\": 1, \xff").unwrap();
    let (status, h) = json_of(&p, "/health").await;
    assert_eq!(status, StatusCode::OK);
    assert!(h["witnessing"]["cosignerError"].is_string(), "{h}");
    assert_eq!(h["witnessing"]["cosigner"], Value::Null);
    // An oversized one is not read at all.
    let big = " ".repeat(toolmark_api::witnesses::MAX_STATUS_BYTES as usize + 1);
    std::fs::write(p.dir.join("witnessing.json"), big).unwrap();
    let (_, h) = json_of(&p, "/health").await;
    assert!(
        h["witnessing"]["cosignerError"]
            .as_str()
            .unwrap()
            .contains("larger than"),
        "{h}"
    );
}

#[tokio::test]
async fn metrics_carry_the_witness_gauges() {
    let p = served("wit-metrics", true);
    publish_cosigned(&p.dir, &[(1, NOW - 60), (3, NOW - 30)]);
    let (_, h) = json_of(&p, "/health").await;
    let published = h["treeSize"].as_u64().unwrap();
    std::fs::write(
        p.dir.join("witnessing.json"),
        status_file(published + 3, published, false, Some("quorum not met")),
    )
    .unwrap();
    let (status, _, body) = get(&p.state, "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    let m = String::from_utf8(body).unwrap();
    for line in [
        format!(
            "toolmark_checkpoint_cosigned_timestamp_seconds {}",
            NOW - 30
        ),
        "toolmark_checkpoint_cosignatures 2".to_owned(),
        // The round's time for w1 (18:59:00) is newer than its published cosignature.
        format!(
            "toolmark_witness_last_cosigned_timestamp_seconds{{witness=\"w1\"}} {}",
            NOW - 60
        ),
        format!(
            "toolmark_witness_last_cosigned_timestamp_seconds{{witness=\"w3\"}} {}",
            NOW - 30
        ),
        "toolmark_witnessing_behind 3".to_owned(),
        "toolmark_witness_quorum_met 0".to_owned(),
    ] {
        assert!(m.lines().any(|l| l == line), "missing {line:?} in\n{m}");
    }
    assert!(!m.contains("witness=\"w2\""), "w2 never cosigned:\n{m}");
}

#[tokio::test]
async fn metrics_without_witnesses_have_no_witness_gauges() {
    let p = served("wit-metrics-none", false);
    let (_, _, body) = get(&p.state, "/metrics").await;
    let m = String::from_utf8(body).unwrap();
    assert!(!m.contains("cosign") && !m.contains("witness"), "{m}");
}

async fn check_memory(p: &Populated) -> Value {
    let tools = tools_of(&page(MEMORY_SET));
    let (status, _, bytes) = post_json(
        &p.state,
        "/api/v1/check",
        json!({"endpoint": MEMORY_URL, "tools": tools})
            .to_string()
            .into_bytes(),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    serde_json::from_slice(&bytes).unwrap()
}

async fn issuer_key(p: &Populated) -> String {
    let (_, issuer) = json_of(p, "/api/v1/issuer").await;
    issuer["publicKeyHex"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_check_answer_states_the_cosignatures_of_its_checkpoint() {
    let p = served("wit-check", true);
    let note = publish_cosigned(&p.dir, &[(2, NOW - 10), (1, NOW - 20)]);
    let a = check_memory(&p).await;
    assert_eq!(a["match"], "same");
    assert_eq!(
        a["log"]["cosignatures"],
        json!([
            {"timestamp": "2026-12-02T18:59:40Z", "witness": "witness1.example/w"},
            {"timestamp": "2026-12-02T18:59:50Z", "witness": "witness2.example/w"},
        ])
    );
    assert_eq!(a["log"]["cosignedAt"], "2026-12-02T18:59:50Z");
    // The checkpoint the proof bundle carries is the cosigned note.
    assert!(
        a["proof"]["tlogProof"]
            .as_str()
            .unwrap()
            .ends_with(std::str::from_utf8(&note).unwrap())
    );
}

#[tokio::test]
async fn a_client_requiring_the_policy_verifies_the_answer_and_refuses_stale_cosignatures() {
    let p = served("wit-client", true);
    publish_cosigned(&p.dir, &[(1, NOW - 100), (3, NOW - 4000)]);
    let a = check_memory(&p).await;
    let key = issuer_key(&p).await;
    let vkey = p.state.log.vkey();
    let policy = witness_policy();
    let req = |max_age| WitnessRequirement {
        policy: &policy,
        now: NOW,
        max_age,
    };
    let v = verify_answer_with(&a, &key, vkey, None, &req(Some(7200))).unwrap();
    let w = v.witnessed.unwrap();
    assert!(w.satisfied);
    let who: Vec<(&str, u64)> = w
        .cosigned
        .iter()
        .map(|c| (c.witness.as_str(), c.timestamp))
        .collect();
    assert_eq!(who, [("w1", NOW - 100), ("w3", NOW - 4000)]);
    // An hour's maximum age: w3's cosignature no longer counts, and 1 of 2 is not enough.
    assert!(matches!(
        verify_answer_with(&a, &key, vkey, None, &req(Some(3600))),
        Err(VerifyError::CosignaturesTooOld { .. })
    ));
}

#[tokio::test]
async fn without_witnesses_the_answer_has_no_cosignature_members() {
    let p = served("wit-check-none", false);
    let a = check_memory(&p).await;
    let log = a["log"].as_object().unwrap();
    assert!(!log.contains_key("cosignatures") && !log.contains_key("cosignedAt"));
}
