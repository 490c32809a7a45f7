//! `/check`'s look-alike members: `packageLookalike` for any `package` asked (listed or not,
//! from the bundled popularity snapshot or a refreshed one in the data directory) and
//! `serverLookalike` for a `name` the index does not know; both inside the signed bytes.

mod support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::*;
use toolmark_client::{VerifyError, verify_answer};

async fn check(p: &Populated, body: Value) -> Value {
    let (status, _, bytes) =
        post_json(&p.state, "/api/v1/check", body.to_string().into_bytes()).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    // The members round-trip through the client's type in the order they were written (RFC
    // 8785's), so a client re-serialising the answer gets the signed bytes.
    let typed: toolmark_client::Answer = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(serde_json::to_vec(&typed).unwrap(), bytes.to_vec());
    serde_json::from_slice(&bytes).unwrap()
}

async fn issuer_key(p: &Populated) -> String {
    let (_, _, issuer) = get(&p.state, "/api/v1/issuer").await;
    let issuer: Value = serde_json::from_slice(&issuer).unwrap();
    issuer["publicKeyHex"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_unlisted_package_that_imitates_a_popular_one_gets_package_lookalike() {
    let p = populated("lookalike-package");
    let a = check(
        &p,
        json!({"package": "npm:@modelcontextprotocol/server-githb", "tools": []}),
    )
    .await;
    assert_eq!(a["match"], "not-listed");
    assert_eq!(
        a["packageLookalike"],
        json!({
            "how": "one character away",
            "of": "npm:@modelcontextprotocol/server-github",
            "ownWeekly": 0,
            "weekly": 111195,
            "weeklyAsOf": "2026-10-10",
        })
    );
    // Signed: the signature verifies (the answer has no proof to check next), and a changed
    // look-alike does not.
    let key = issuer_key(&p).await;
    let vkey = p.state.log.vkey();
    assert!(matches!(
        verify_answer(&a, &key, vkey, None),
        Err(VerifyError::NoProof)
    ));
    let mut forged = a.clone();
    forged["packageLookalike"]["of"] = json!("npm:something-else");
    assert!(matches!(
        verify_answer(&forged, &key, vkey, None),
        Err(VerifyError::BadSignature)
    ));
}

#[tokio::test]
async fn a_popular_package_or_a_plain_one_gets_none() {
    let p = populated("lookalike-none");
    for package in [
        "npm:@modelcontextprotocol/server-github",
        "npm:@someone/weather-report",
        "npm:@evil/mcp-server",
        "pypi:Mcp_Server.Fetch",
        "not a package key",
    ] {
        let a = check(&p, json!({"package": package})).await;
        assert!(a.get("packageLookalike").is_none(), "{package}: {a}");
    }
}

#[tokio::test]
async fn an_unknown_server_name_like_a_listed_one_gets_server_lookalike() {
    let p = populated("lookalike-server");
    let a = check(&p, json!({"name": "io.examp1e/memory"})).await;
    assert_eq!(a["match"], "not-listed");
    assert_eq!(
        a["serverLookalike"],
        json!({"how": "the same name with other separators or look-alike characters",
               "of": "io.example/memory"})
    );
    let b = check(&p, json!({"name": "io.example/memroy"})).await;
    assert_eq!(
        b["serverLookalike"],
        json!({"how": "one character away", "of": "io.example/memory"})
    );
    // A listed name, and a name like none, get none.
    for name in ["io.example/memory", "io.other/weather"] {
        let a = check(&p, json!({"name": name})).await;
        assert!(a.get("serverLookalike").is_none(), "{name}: {a}");
    }
}

#[tokio::test]
async fn a_refreshed_snapshot_in_the_data_directory_is_preferred() {
    let p = populated("lookalike-refreshed");
    let data = toolmark_index::DataDir::new(&p.dir);
    data.write_popularity(
        "2026-12-01",
        "toolmark-popularity/1\ndate 2026-12-01\nsource a test's refresh\n\nnpm:weather-report-mcp\t50000\n",
    )
    .unwrap();
    let state = std::sync::Arc::new(toolmark_api::AppState::open(&p.dir, BASE).unwrap());
    assert_eq!(state.names.date(), "2026-12-01");
    let q = Populated::wrap(p.dir.clone(), state);
    let a = check(&q, json!({"package": "npm:weather-rep0rt-mcp"})).await;
    assert_eq!(a["packageLookalike"]["of"], "npm:weather-report-mcp");
    assert_eq!(a["packageLookalike"]["weeklyAsOf"], "2026-12-01");
    // The bundled counts are not read any more.
    let b = check(
        &q,
        json!({"package": "npm:@modelcontextprotocol/server-githb"}),
    )
    .await;
    assert!(b.get("packageLookalike").is_none());
    drop(q);

    // A refreshed snapshot that cannot be read stops the service from opening, by name.
    data.write_popularity("2026-12-02", "not a snapshot\n")
        .unwrap();
    let err = toolmark_api::AppState::open(&p.dir, BASE)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("popularity-2026-12-02.txt"), "{err}");
}

#[tokio::test]
async fn a_package_targets_page_carries_its_package_lookalike() {
    use support::index_support::{Env, MEMORY, corpus_page, day, day_str, ok, records};
    let mut env = Env::new("api-lookalike-server-page");
    let recs = records(json!([
        server("io.example/memory", MEMORY_URL),
        {
            "name": "io.example/github", "description": "a package", "version": "1.0.0",
            "packages": [{"registryType": "npm", "identifier": "@evil/server-github",
                          "version": "1.0.0", "transport": {"type": "stdio"}}],
        },
    ]));
    env.run(&day_str(0, 0), &recs, &[], |url| match url {
        MEMORY_URL => Some(ok(day(0, 60), vec![corpus_page(MEMORY)])),
        _ => None,
    });
    let state = std::sync::Arc::new(toolmark_api::AppState::open(&env.dir, BASE).unwrap());
    let (package, remote) = {
        let index = state.index.get();
        let package = index.targets_of("io.example/github").unwrap().remove(0).id;
        let remote = index.targets_of("io.example/memory").unwrap().remove(0).id;
        (package, remote)
    };
    let (status, _, body) = get(&state, &format!("/api/v1/servers/{package}")).await;
    assert_eq!(status, StatusCode::OK);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        body["packageLookalike"]["of"],
        "npm:@modelcontextprotocol/server-github"
    );
    assert_eq!(
        body["packageLookalike"]["how"],
        "the same name under another scope"
    );
    let (_, _, body) = get(&state, &format!("/api/v1/servers/{remote}")).await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert!(body.get("packageLookalike").is_none());
}

#[tokio::test]
async fn a_reload_answers_from_the_newest_snapshot_and_keeps_the_old_one_on_error() {
    let p = populated("lookalike-reload");
    let data = toolmark_index::DataDir::new(&p.dir);
    assert_eq!(p.state.names.origin(), "bundled");
    data.write_popularity(
        "2026-12-01",
        "toolmark-popularity/1\ndate 2026-12-01\nsource a test's refresh\n\nnpm:weather-report-mcp\t50000\n",
    )
    .unwrap();
    // Not before the reload.
    let a = check(&p, json!({"package": "npm:weather-rep0rt-mcp"})).await;
    assert!(a.get("packageLookalike").is_none());
    p.state.names.reload(&p.dir).unwrap();
    assert_eq!(p.state.names.date(), "2026-12-01");
    let b = check(
        &p,
        json!({"package": "npm:weather-rep0rt-mcp", "name": "x"}),
    )
    .await;
    assert_eq!(b["packageLookalike"]["of"], "npm:weather-report-mcp");
    // A newer snapshot that cannot be read: an error, and the one in use stays.
    data.write_popularity("2026-12-02", "not a snapshot\n")
        .unwrap();
    assert!(p.state.names.reload(&p.dir).is_err());
    assert_eq!(p.state.names.date(), "2026-12-01");
}
