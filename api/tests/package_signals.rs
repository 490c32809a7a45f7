//! A package's registry signals through every surface: `/check`'s `target.packageSignals`
//! (HISTOR's members: `provenance`, `publisher`, `previousPublisher`, `installScripts`,
//! `newDependencies`, `flags`), the `registry` change in the JSON change endpoints and the
//! feeds, and the desk's target page. Two versions of one npm package recorded through the real
//! recorder, the second losing provenance, changing publisher and adding a postinstall script.

mod support;

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::index_support::{Env, FILESYSTEM, corpus_page, day, day_str, ok, records};
use support::*;
use toolmark_index::record::{RunInput, TargetOutcome};
use toolmark_observation::observe::{Observation, Sandboxed, Via};
use toolmark_observation::registry::TargetKind;
use toolmark_observation::registry_facts::RegistryFacts;
use toolmark_toolset::Sri;

const PACKAGE: &str = "npm:@acme/pkg";

fn facts(v: Value) -> RegistryFacts {
    serde_json::from_value(v).unwrap()
}

/// The data directory: `@acme/pkg` 1.0.0 (attested, trusted publisher) then 1.1.0 (no
/// provenance, an account, a postinstall, a new dependency).
fn two_versions(tag: &str) -> (Env, Arc<toolmark_api::AppState>, String) {
    versions(tag, Between::Nothing)
}

/// What is observed between 1.0.0 and 1.1.0.
#[derive(Clone, Copy, PartialEq)]
enum Between {
    Nothing,
    /// 1.0.5, whose registry metadata was not read.
    Unread,
}

fn versions(tag: &str, between: Between) -> (Env, Arc<toolmark_api::AppState>, String) {
    let mut env = Env::new(&format!("api-signals-{tag}"));
    let recs = records(json!([{
        "name": "io.example/pkg", "description": "a package", "version": "1.1.0",
        "packages": [{"registryType": "npm", "identifier": "@acme/pkg", "version": "1.1.0",
                      "transport": {"type": "stdio"}}],
    }]));
    let target = toolmark_observation::registry::targets(&recs[0])
        .into_iter()
        .find(|t| matches!(t.kind, TargetKind::Package { .. }))
        .unwrap();
    let at_version = |version: &str| {
        let mut t = target.clone();
        if let TargetKind::Package { version: v, .. } = &mut t.kind {
            *v = Some(version.to_owned());
        }
        t
    };
    let sandbox = json!({
        "observer": "toolmark-sandbox/1", "runsc": "runsc version test", "complete": true,
        "installScripts": [], "calls": [], "behaviour": [], "findings": [],
    });
    let observed = |version: &str, registry: Option<RegistryFacts>, minute: u64| Observation {
        via: Via::Package(Sandboxed {
            package: format!("{PACKAGE}@{version}"),
            artifact: Some(Sri::of(version.as_bytes())),
            sandbox: Some(sandbox.clone()),
            registry,
        }),
        ..ok(day(0, minute), vec![corpus_page(FILESYSTEM)])
    };
    let before = facts(json!({
        "ecosystem": "npm",
        "provenance": {"present": true, "kind": "https://slsa.dev/provenance/v1"},
        "publisher": {"trusted": true, "id": "github", "name": "GitHub Actions"},
        "installScripts": {}, "dependencies": {"zod": "^3.23.8"}, "maintainers": ["alice"],
        "repository": "git+https://github.com/acme/pkg.git", "bins": {"pkg": "cli.js"},
        "deprecated": null
    }));
    let after = facts(json!({
        "ecosystem": "npm",
        "provenance": {"present": false},
        "publisher": {"trusted": false, "name": "mallory"},
        "installScripts": {"postinstall": "node setup.js"},
        "dependencies": {"zod": "^3.23.8", "plain-crypto-js": "^4.2.1"}, "maintainers": ["alice"],
        "repository": "git+https://github.com/acme/pkg.git", "bins": {"pkg": "cli.js"},
        "deprecated": null
    }));
    {
        let input = RunInput {
            started_at: day_str(0, 0),
            registry: "https://registry.test".into(),
            records: recs.clone(),
            harvest_complete: true,
            delisted: Vec::new(),
            allow_cleartext: false,
        };
        let mut rec = env.recorder();
        let run = rec.begin_run(&input).unwrap();
        let mut list = vec![("1.0.0", Some(before), 20)];
        if between == Between::Unread {
            list.push(("1.0.5", None, 25));
        }
        list.push(("1.1.0", Some(after), 30));
        for (version, registry, minute) in list {
            rec.record(
                run,
                vec![TargetOutcome {
                    target: at_version(version),
                    observation: Some(observed(version, registry, minute)),
                }],
            )
            .unwrap();
        }
    }
    let id = toolmark_index::record::target_id(&target);
    let state = toolmark_api::AppState::open(&env.dir, BASE).unwrap();
    (env, Arc::new(state), id)
}

#[tokio::test]
async fn check_answers_the_versions_registry_signals_in_historss_shape() {
    let (_env, state, _) = two_versions("check");
    let body = json!({"package": PACKAGE, "tools": tools_of(&corpus_page(FILESYSTEM))});
    let (status, _, bytes) =
        post_json(&state, "/api/v1/check", body.to_string().into_bytes()).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    let s = &answer["target"]["packageSignals"];
    assert_eq!(s["version"], "1.1.0");
    assert_eq!(s["previousVersion"], "1.0.0");
    assert_eq!(s["provenance"], false);
    assert_eq!(s["publisher"], "mallory");
    assert_eq!(s["previousPublisher"], "trusted publisher: github");
    assert_eq!(s["installScripts"], json!(["postinstall"]));
    assert_eq!(s["newDependencies"], json!(["plain-crypto-js"]));
    assert_eq!(
        s["flags"],
        json!([
            "provenance-lost",
            "publisher-changed",
            "install-scripts-added",
            "new-dependencies",
            "install-scripts"
        ])
    );
    assert_eq!(s["repository"], "git+https://github.com/acme/pkg.git");
    assert_eq!(s["maintainers"], json!(["alice"]));
    assert_eq!(s["bins"], json!(["pkg"]));
    assert!(s.get("deprecated").is_none() && s.get("yanked").is_none());
    // The wire type reads it back, and the members are in RFC 8785 order.
    let typed: toolmark_client::answer::PackageSignals = serde_json::from_value(s.clone()).unwrap();
    let keys: Vec<String> = serde_json::to_value(&typed)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

#[tokio::test]
async fn the_registry_change_is_served_in_json_feeds_and_the_desk() {
    let (_env, state, id) = two_versions("surfaces");
    let (status, _, bytes) = get(&state, "/api/v1/changes").await;
    assert_eq!(status, StatusCode::OK);
    let changes: Value = serde_json::from_slice(&bytes).unwrap();
    let list = changes["changes"].as_array().unwrap();
    let registry = list.iter().find(|c| c["kind"] == "registry").unwrap();
    assert_eq!(registry["class"], "dangerous");
    assert_eq!(registry["registry"]["oldVersion"], "1.0.0");
    assert_eq!(registry["registry"]["newVersion"], "1.1.0");
    assert_eq!(
        registry["registry"]["installScriptsAdded"],
        json!(["postinstall"])
    );

    let (status, _, feed) = get(&state, "/feed.xml").await;
    assert_eq!(status, StatusCode::OK);
    let feed = String::from_utf8(feed).unwrap();
    assert!(feed.contains("registry signals changed"), "{feed}");
    assert!(
        feed.contains(
            "registry signals changed: provenance-lost, publisher-changed, install-scripts-added, new-dependencies"
        ),
        "{feed}"
    );

    let (status, _, page) = get(&state, &format!("/s/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("Registry signals of"), "{page}");
    assert!(page.contains("provenance-lost"));
    assert!(page.contains("trusted publisher: github"));

    let cid = registry["id"].as_i64().unwrap();
    let (status, _, page) = get(&state, &format!("/changes/{cid}")).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("plain-crypto-js"), "{page}");
}

#[tokio::test]
async fn previous_version_is_the_one_the_signals_were_compared_with() {
    // 1.0.5 was observed between, but its registry metadata was not read: 1.1.0's flags come
    // from comparing it with 1.0.0, and the answer names 1.0.0.
    let (_env, state, _) = versions("compared", Between::Unread);
    let body = json!({"package": PACKAGE, "tools": tools_of(&corpus_page(FILESYSTEM))});
    let (status, _, bytes) =
        post_json(&state, "/api/v1/check", body.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::OK);
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    let s = &answer["target"]["packageSignals"];
    assert_eq!(s["version"], "1.1.0");
    assert_eq!(s["previousVersion"], "1.0.0");
    assert_eq!(s["newDependencies"], json!(["plain-crypto-js"]));
    assert!(
        s["flags"]
            .as_array()
            .unwrap()
            .contains(&json!("provenance-lost"))
    );
}
