//! Remotes whose registry entry declares headers, dialled as the registry declares them: the
//! literal non-secret headers sent, secrets and templates never; an `auth-required` remote's
//! protected-resource metadata read through the guard.
//!
//! The real Python `mcp` SDK (2.3.0, `support/sdk_server.py`) plays the servers: it refuses and
//! logs any request carrying a header the test forbids, so "no secret is ever sent" is asserted
//! by the server, and its request log shows what every request carried. Needs
//! `TOOLMARK_MCP_SERVERS` like real_servers.rs.

mod support;

use support::hostile::{Behaviour, Hostile};
use support::{lax, mcp_servers, sdk_server};
use toolmark_crawler::crawl::{self, CrawlConfig};
use toolmark_crawler::mcp;
use toolmark_crawler::observe::{Observation, Status, Transport};
use toolmark_crawler::registry::{self, Declared, Target, TargetKind};

/// The one remote target of a registry item listing `url` with `headers` (JSON array text).
fn declared_target(url: &str, headers: &str) -> Target {
    let page = format!(
        r#"{{"servers":[{{"server":{{"name":"io.example/declared","version":"1.0.0","description":"d",
            "remotes":[{{"type":"streamable-http","url":"{url}","headers":{headers}}}]}},
            "_meta":{{"io.modelcontextprotocol.registry/official":{{"status":"active","isLatest":true}}}}}}],
            "metadata":{{"count":1}}}}"#
    );
    let page = registry::parse_page(page.as_bytes()).unwrap();
    let mut targets = registry::targets_with(&page.servers[0], true);
    assert_eq!(targets.len(), 1);
    targets.remove(0)
}

/// Crawl `target` alone and return its observation.
async fn crawl_one(target: Target) -> Observation {
    let config = CrawlConfig {
        client: lax(),
        ..CrawlConfig::default()
    };
    let mut out = Vec::new();
    crawl::crawl(&config, vec![target], |o| out.push(o)).await;
    out.pop().unwrap().observation.expect("dialled")
}

/// Smithery's real declaration (a secret, templated `Authorization`), a required key with no
/// value, and one literal non-secret header.
const HEADERS: &str = r#"[
    {"name":"Authorization","description":"Bearer token for Smithery authentication","isRequired":true,"isSecret":true,"value":"Bearer {smithery_api_key}"},
    {"name":"X-Api-Key","isRequired":true,"description":"Just put your api key"},
    {"name":"X-Client-Profile","value":"toolmark-test"}]"#;

/// A fresh path for a server's request log.
fn fresh_log(name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "toolmark-declared-{}-{name}.log",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

/// The server's request log, once the crawl is over.
fn log_lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_header_declared_remote_that_lists_anonymously_is_ok_and_gets_no_secret() {
    let Some(dir) = mcp_servers() else { return };
    let log = fresh_log("open");
    let server = sdk_server(&dir, "open", &["authorization", "x-api-key"], &log);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let target = declared_target(&url, HEADERS);
    let TargetKind::Remote { declared, .. } = &target.kind else {
        unreachable!()
    };
    assert_eq!(target.skip, None, "dialled, not header-required");
    let declared: Declared = declared.clone();

    let obs = crawl_one(target).await;
    assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
    let set = obs.tool_set().unwrap();
    assert_eq!(set.tools.len(), 1);
    assert_eq!(set.tools[0].name(), Some("lookup"));
    // The detail and the observation name what was withheld.
    assert_eq!(
        obs.detail,
        "without declared header(s) Authorization (secret), X-Api-Key (no-value)"
    );
    assert_eq!(obs.dialled().unwrap().declared, declared);

    let lines = log_lines(&log);
    let requests: Vec<&String> = lines.iter().filter(|l| l.starts_with("REQ ")).collect();
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("FORBIDDEN") || l == "TOKEN"),
        "{lines:?}"
    );
    // mcp 2.3.0 speaks 2026-07-28: `server/discover`, `tools/list`, and the surface it
    // declares (`prompts/list`, `resources/list`, `resources/templates/list`), no session to
    // end; then the Server Card's two GETs (it has none), which carry no declared header; then
    // the second look (a first observation makes one) in the session era it also speaks:
    // `initialize`, `notifications/initialized`, `tools/list`, its session's `DELETE`.
    assert_eq!(obs.transport(), Some(Transport::Stateless));
    assert_eq!(requests.len(), 11, "{lines:?}");
    assert!(!obs.dialled().unwrap().session);
    let (first, rest) = requests.split_at(5);
    let (cards, second) = rest.split_at(2);
    assert_eq!(obs.second.as_ref().map(|s| &s.status), Some(&Status::Ok));
    assert!(second[3].starts_with("REQ DELETE /mcp "), "{lines:?}");
    let posts = first.iter().chain(&second[..3]);
    for r in cards {
        assert!(
            r.starts_with("REQ GET ") && r.contains("server-card"),
            "{r}"
        );
        assert!(!r.contains("x-client-profile"), "{r}");
    }
    // Every request to the endpoint, the second look's too, carried the declared literal
    // header (and nothing of the others).
    for r in posts.chain(&second[3..]) {
        assert!(
            r.starts_with("REQ POST /mcp ") || r.starts_with("REQ DELETE /mcp "),
            "{r}"
        );
        assert!(r.contains("x-client-profile"), "{r}");
        assert!(
            !r.contains("authorization") && !r.contains("x-api-key"),
            "{r}"
        );
    }
}

#[tokio::test]
async fn a_header_declared_remote_that_refuses_is_auth_required_with_its_authorization_servers() {
    let Some(dir) = mcp_servers() else { return };
    let log = fresh_log("auth");
    let server = sdk_server(&dir, "auth", &["x-api-key"], &log);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);

    let obs = crawl_one(declared_target(&url, HEADERS)).await;
    assert_eq!(obs.status, Status::AuthRequired, "{}", obs.detail);
    assert!(
        obs.detail
            .ends_with("; without declared header(s) Authorization (secret), X-Api-Key (no-value)"),
        "{}",
        obs.detail
    );
    let auth = obs.dialled().unwrap().auth.as_ref().expect("the challenge");
    assert_eq!(auth.http_status, 401);
    assert_eq!(auth.scheme.as_deref(), Some("Bearer"));
    let metadata_url = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        server.port
    );
    assert_eq!(
        auth.resource_metadata.as_deref(),
        Some(metadata_url.as_str())
    );
    let found = auth.protected_resource.as_ref().expect("metadata fetched");
    assert_eq!(found.url, metadata_url);
    assert!(found.from_challenge);
    assert_eq!(
        (found.http_status, found.error.as_deref()),
        (Some(200), None)
    );
    assert_eq!(found.resource.as_deref(), Some(url.as_str()));
    assert_eq!(found.authorization_servers, ["https://auth.example.test"]);
    assert_eq!(found.scopes_supported, ["tools.read"]);
    assert_eq!(found.bearer_methods_supported, ["header"]);

    let lines = log_lines(&log);
    // No token ever reached the verifier, no forbidden header the server: one POST refused, one
    // GET of the metadata, with no declared header on it.
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("FORBIDDEN") || l == "TOKEN"),
        "{lines:?}"
    );
    // Between the two, the Server Card's two GETs (a challenged server may publish one), with no
    // declared header either.
    let requests: Vec<&String> = lines.iter().filter(|l| l.starts_with("REQ ")).collect();
    assert_eq!(requests.len(), 4, "{lines:?}");
    assert!(requests[0].starts_with("REQ POST /mcp ") && requests[0].contains("x-client-profile"));
    assert!(requests[1].starts_with("REQ GET /.well-known/mcp/server-card.json "));
    assert!(requests[2].starts_with("REQ GET /mcp/server-card "));
    assert!(requests[3].starts_with("REQ GET /.well-known/oauth-protected-resource/mcp "));
    for r in &requests[1..] {
        assert!(!r.contains("x-client-profile"), "{r}");
    }
    assert_eq!(obs.dialled().unwrap().requests, 4);
}

/// What the metadata fetch of an `auth-required` observation found.
fn metadata_of(obs: &Observation) -> toolmark_crawler::observe::ProtectedResource {
    let auth = obs.dialled().unwrap().auth.as_ref().expect("a challenge");
    auth.protected_resource.clone().expect("a fetch was tried")
}

#[tokio::test]
async fn endless_protected_resource_metadata_costs_its_byte_limit() {
    let server = Hostile::start(Behaviour::MetadataBomb).await;
    let obs = mcp::observe(&lax(), &server.url(), "streamable-http").await;
    assert_eq!(obs.status, Status::AuthRequired);
    let found = metadata_of(&obs);
    assert_eq!(found.http_status, Some(200));
    let limit = toolmark_crawler::limits::MAX_RESOURCE_METADATA_BYTES;
    assert_eq!(
        found.error,
        Some(format!("response is larger than {limit} bytes"))
    );
    assert!(found.authorization_servers.is_empty());
}

#[tokio::test]
async fn protected_resource_metadata_goes_through_the_guard() {
    let server = Hostile::start(Behaviour::MetadataUserinfo).await;
    let obs = mcp::observe(&lax(), &server.url(), "streamable-http").await;
    assert_eq!(obs.status, Status::AuthRequired);
    let found = metadata_of(&obs);
    assert_eq!(found.error.as_deref(), Some("url carries userinfo"));
    assert_eq!(found.http_status, None);
    // Only the refused POST and the Server Card's GET (answered, so the second location was
    // not asked) reached the server: the metadata URL was never dialled.
    assert_eq!(server.requests.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(
        obs.surface.as_ref().unwrap().card.as_ref().unwrap().url,
        format!(
            "{}/.well-known/mcp/server-card.json",
            server.url().trim_end_matches("/mcp")
        )
    );
}

#[tokio::test]
async fn keyed_fleet_endpoints_refuse_with_metadata_and_never_see_a_credential() {
    let fleet = support::echo_fleet(2).await;
    fleet.set_keyed(0, Some("https://auth.example.net".into()));
    let urls = fleet.urls();
    let targets: Vec<Target> = urls.iter().map(|u| declared_target(u, HEADERS)).collect();
    let config = CrawlConfig {
        client: lax(),
        ..CrawlConfig::default()
    };
    let mut out = Vec::new();
    crawl::crawl(&config, targets, |o| out.push(o)).await;
    out.sort_by_key(|o| match &o.target.kind {
        TargetKind::Remote { url, .. } => url.clone(),
        TargetKind::Package { .. } => unreachable!(),
    });
    let observed: Vec<Observation> = out.into_iter().map(|o| o.observation.unwrap()).collect();
    let keyed = observed
        .iter()
        .find(|o| o.status == Status::AuthRequired)
        .expect("the keyed endpoint refuses");
    let found = keyed
        .dialled()
        .unwrap()
        .auth
        .as_ref()
        .unwrap()
        .protected_resource
        .as_ref();
    assert_eq!(
        found.unwrap().authorization_servers,
        ["https://auth.example.net"]
    );
    assert!(observed.iter().any(|o| o.status == Status::Ok));
    let counts = fleet.requests();
    assert_eq!((counts.metadata, counts.credentialed), (1, 0), "{counts:?}");
    assert!(counts.refused >= 1);
    fleet.shutdown(std::time::Duration::from_secs(1)).await;
}
