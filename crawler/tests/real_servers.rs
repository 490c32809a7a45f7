//! The MCP client against real servers from npm and PyPI, started on loopback.
//!
//! Needs `TOOLMARK_MCP_SERVERS` (made by `scripts/mcp-servers`, which `scripts/test` runs); a
//! test without it prints why and passes only outside CI (`CI` set makes it fail instead).

mod support;

use support::{Server, lax, mcp_servers};
use toolmark_crawler::mcp::{self, ClientConfig};
use toolmark_crawler::observe::{Observation, Status, Transport};
use toolmark_toolset::surface::items::Items;
use toolmark_toolset::surface::{Kind, KindDigest, digests};

/// The observation read its tool set completely (else its detail and transport attempts show).
fn assert_ok(obs: &Observation) {
    let attempts = &obs.dialled().expect("a remote's").attempts;
    assert_eq!(obs.status, Status::Ok, "{} {attempts:?}", obs.detail);
}

fn names(obs: &Observation) -> Vec<String> {
    let set = obs.tool_set().expect("a tool set");
    let mut n: Vec<String> = set
        .tools
        .iter()
        .map(|t| t.name().unwrap_or("").to_owned())
        .collect();
    n.sort();
    n
}

#[tokio::test]
async fn server_everything_streamable_http() {
    let Some(dir) = mcp_servers() else { return };
    let server = Server::everything(&dir, "2026.8.31", "streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let obs = mcp::observe(&lax(), &url, "streamable-http").await;
    assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
    assert_eq!(obs.transport(), Some(Transport::StreamableHttp));
    // The stateless attempt came first and fell through.
    assert_eq!(
        obs.dialled().unwrap().attempts.len(),
        2,
        "{:?}",
        obs.dialled().unwrap().attempts
    );
    assert_eq!(
        obs.dialled().unwrap().attempts[0].transport,
        Transport::Stateless
    );
    assert_eq!(obs.protocol_version.as_deref(), Some("2025-11-25"));
    assert!(
        obs.dialled().unwrap().session,
        "server-everything issues a session id"
    );
    // And ends it when asked: the SDK answers a DELETE naming a live session with 200.
    assert_eq!(obs.dialled().unwrap().session_closed, Some(200));
    assert!(
        obs.dialled().unwrap().sse_responses,
        "server-everything answers with SSE"
    );
    let init: serde_json::Value = serde_json::from_str(obs.initialize.as_deref().unwrap()).unwrap();
    assert!(init["serverInfo"]["name"].is_string(), "{init}");
    let digests = obs.digests().expect("digests");
    assert_eq!(
        digests.tools, 13,
        "13 tools to a client declaring no capabilities"
    );
    assert!(names(&obs).contains(&"echo".to_owned()));
    // Observing twice gives the same digests.
    let again = mcp::observe(&lax(), &url, "streamable-http").await;
    assert_eq!(again.digests(), Some(digests));
}

#[tokio::test]
async fn server_everything_sse() {
    let Some(dir) = mcp_servers() else { return };
    let server = Server::everything(&dir, "2026.8.31", "sse");
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let obs = mcp::observe(&lax(), &url, "sse").await;
    assert_ok(&obs);
    assert_eq!(obs.transport(), Some(Transport::Sse));
    assert_eq!(obs.protocol_version.as_deref(), Some("2024-11-05"));
    assert_eq!(obs.digests().unwrap().tools, 13);

    // The same server through the streamable HTTP streamable-era server: same tool set.
    let http = Server::everything(&dir, "2026.8.31", "streamableHttp");
    let via_http = mcp::observe(
        &lax(),
        &format!("http://127.0.0.1:{}/mcp", http.port),
        "streamable-http",
    )
    .await;
    assert_eq!(
        via_http.digests().unwrap().full,
        obs.digests().unwrap().full
    );
}

#[tokio::test]
async fn sse_only_server_listed_as_streamable_falls_back() {
    // A remote registered as streamable-http that only speaks HTTP+SSE: POSTs to /sse fail
    // (404 HTML), so the client falls back to GET and the endpoint event.
    let Some(dir) = mcp_servers() else { return };
    let server = Server::everything(&dir, "2026.8.31", "sse");
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let obs = mcp::observe(&lax(), &url, "streamable-http").await;
    assert_ok(&obs);
    assert_eq!(obs.transport(), Some(Transport::Sse));
    assert_eq!(
        obs.dialled().unwrap().attempts.len(),
        3,
        "{:?}",
        obs.dialled().unwrap().attempts
    );
}

#[tokio::test]
async fn server_everything_versions_differ() {
    let Some(dir) = mcp_servers() else { return };
    let old = Server::everything(&dir, "2025.9.25", "streamableHttp");
    let new = Server::everything(&dir, "2026.8.31", "streamableHttp");
    let a = mcp::observe(
        &lax(),
        &format!("http://127.0.0.1:{}/mcp", old.port),
        "streamable-http",
    )
    .await;
    let b = mcp::observe(
        &lax(),
        &format!("http://127.0.0.1:{}/mcp", new.port),
        "streamable-http",
    )
    .await;
    assert_eq!(a.status, Status::Ok, "{}", a.detail);
    assert_eq!(b.status, Status::Ok, "{}", b.detail);
    assert_eq!(a.digests().unwrap().tools, 10);
    let (old_set, new_set) = (a.tool_set().unwrap(), b.tool_set().unwrap());
    let diff = toolmark_toolset::diff::diff(&old_set, &new_set);
    assert!(!diff.is_empty());
    assert!(
        !diff.added.is_empty() && !diff.removed.is_empty(),
        "{diff:?}"
    );
}

#[tokio::test]
async fn mcp_proxy_wrapping_mcp_server_time() {
    let Some(dir) = mcp_servers() else { return };
    let server = Server::mcp_proxy_time(&dir);
    let obs = mcp::observe(
        &lax(),
        &format!("http://127.0.0.1:{}/mcp", server.port),
        "streamable-http",
    )
    .await;
    assert_ok(&obs);
    assert_eq!(obs.transport(), Some(Transport::StreamableHttp));
    assert!(
        !obs.dialled().unwrap().sse_responses,
        "mcp-proxy answers with application/json"
    );
    assert!(obs.dialled().unwrap().session);
    assert_eq!(names(&obs), vec!["convert_time", "get_current_time"]);
    // Its legacy SSE endpoint serves the same set.
    let sse = mcp::observe(
        &lax(),
        &format!("http://127.0.0.1:{}/sse", server.port),
        "sse",
    )
    .await;
    assert_ok(&sse);
    assert_eq!(sse.transport(), Some(Transport::Sse));
    assert_eq!(sse.digests().unwrap().full, obs.digests().unwrap().full);
}

#[tokio::test]
async fn loopback_is_blocked_without_allow_private() {
    let Some(dir) = mcp_servers() else { return };
    let server = Server::everything(&dir, "2026.8.31", "streamableHttp");
    let strict = ClientConfig::default();
    // http is refused before anything else…
    let obs = mcp::observe(
        &strict,
        &format!("http://127.0.0.1:{}/mcp", server.port),
        "streamable-http",
    )
    .await;
    assert_eq!(obs.status, Status::BadUrl, "{}", obs.detail);
    // …and https to a name that resolves to loopback (the system resolver, /etc/hosts) is
    // blocked before any connection.
    let obs = mcp::observe(
        &strict,
        &format!("https://localhost:{}/mcp", server.port),
        "streamable-http",
    )
    .await;
    assert_eq!(obs.status, Status::BlockedAddress, "{}", obs.detail);
    assert_eq!(obs.dialled().unwrap().requests, 0);
}

/// The digest of `kind` over the entries an official client listed (`entries`, a JSON array),
/// by toolmark's one definition: the entries as one page of the kind's result.
fn official_digest(kind: Kind, member: &str, entries: &serde_json::Value) -> KindDigest {
    let page = serde_json::json!({ member: entries }).to_string();
    let list = toolmark_toolset::surface::RawList {
        status: "ok".into(),
        detail: String::new(),
        pages: vec![page],
    };
    let items = Items::of_list(kind, &list).expect("the client's entries");
    KindDigest::Read {
        digest: items.digest(),
        count: items.len() as u64,
    }
}

/// Each listed kind's digest of `obs` equals the one over what the official client lists (as
/// sent, and as its types keep it: the same for servers sending no member outside the schema).
fn assert_kinds_match_the_official_client(obs: &Observation, dir: &std::path::Path, url: &str) {
    let ours = digests(obs.surface.as_ref().expect("the surface was read"));
    for raw in [true, false] {
        let official = support::official_listing(dir, url, raw);
        for (kind, member) in [
            (Kind::Prompts, "prompts"),
            (Kind::Resources, "resources"),
            (Kind::Templates, "resourceTemplates"),
        ] {
            let theirs = &official[member];
            let mine = ours.iter().find(|(k, _)| *k == kind).map(|(_, d)| d);
            if theirs.is_null() {
                assert_eq!(mine, None, "{member}: not declared");
                continue;
            }
            assert_eq!(
                mine,
                Some(&official_digest(kind, member, theirs)),
                "{member} (raw: {raw})"
            );
        }
    }
}

#[tokio::test]
async fn server_everything_surface_is_what_the_official_client_lists() {
    let Some(dir) = mcp_servers() else { return };
    let server = Server::everything(&dir, "2026.8.31", "streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let obs = mcp::observe(&lax(), &url, "streamable-http").await;
    assert_ok(&obs);
    let counts: Vec<(Kind, KindDigest)> = digests(obs.surface.as_ref().unwrap());
    let count = |k: Kind| {
        counts.iter().find_map(|(kind, d)| match d {
            KindDigest::Read { count, .. } if *kind == k => Some(*count),
            _ => None,
        })
    };
    assert_eq!(
        (
            count(Kind::Prompts),
            count(Kind::Resources),
            count(Kind::Templates)
        ),
        (Some(4), Some(7), Some(2))
    );
    assert_kinds_match_the_official_client(&obs, &dir, &url);
    // It publishes no card.
    assert_eq!(
        obs.surface.as_ref().unwrap().card.as_ref().unwrap().status,
        "absent"
    );
}

#[tokio::test]
async fn an_mcp_apps_page_of_the_python_sdk_is_read_and_its_change_seen() {
    let Some(dir) = mcp_servers() else { return };
    let page = std::env::temp_dir().join(format!("toolmark-app-page-{}.html", std::process::id()));
    std::fs::write(&page, "<!doctype html><title>Lookup</title><p>v1</p>").unwrap();
    let server = support::sdk_surface_server(&dir, &page, &["https://api.example.com"]);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let first = mcp::observe(&lax(), &url, "streamable-http").await;
    assert_ok(&first);
    let s = first.surface.as_ref().unwrap();
    assert_eq!(s.app_pages.len(), 1, "{:?}", s.app_pages);
    assert_eq!(s.app_pages[0].uri, "ui://lookup/app.html");
    assert_eq!(s.app_pages[0].status, "ok", "{}", s.app_pages[0].detail);
    assert!(
        s.app_pages[0]
            .result
            .as_deref()
            .unwrap()
            .contains("<p>v1</p>")
    );
    assert_kinds_match_the_official_client(&first, &dir, &url);
    let before = digests(s);
    std::fs::write(
        &page,
        "<!doctype html><title>Lookup</title><p>v2</p><script src=\"https://evil.example/x.js\"></script>",
    )
    .unwrap();
    let second = mcp::observe(&lax(), &url, "streamable-http").await;
    assert_ok(&second);
    let after = digests(second.surface.as_ref().unwrap());
    let app = |d: &[(Kind, KindDigest)]| d.iter().find(|(k, _)| *k == Kind::AppPages).cloned();
    assert!(matches!(app(&before), Some((_, KindDigest::Read { .. }))));
    assert_ne!(app(&before), app(&after), "the page changed");
    let same = |k: Kind| {
        let f = |d: &[(Kind, KindDigest)]| d.iter().find(|(x, _)| *x == k).cloned();
        f(&before) == f(&after)
    };
    assert!(same(Kind::Prompts) && same(Kind::Resources) && same(Kind::Templates));
    let _ = std::fs::remove_file(&page);
}
