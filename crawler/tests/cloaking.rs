//! Cloaking: the second look. After a complete listing the crawler lists the tools again in a
//! separate session from a second client identity (another `clientInfo`, another protocol
//! version, from `second_source` when set); a server that serves toolmark one tool set and
//! other clients another shows two digests. On the stand-ins that cloak by client name and by
//! protocol version (`toolmark_standins::fleet::surface::Cloak`), an honest one, and the hostile
//! servers' well-behaved and 2026-07-28 ones (which record who asked, and from where).

mod support;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use support::hostile::{Behaviour, Hostile};
use toolmark_crawler::mcp::{self, ClientConfig};
use toolmark_crawler::observe::{Observation, SecondLook, Status, Transport};
use toolmark_standins::fleet::surface::{self, Cloak, Surface};
use toolmark_standins::fleet::{Fleet, FleetSpec};
use toolmark_toolset::surface::KindDigest;

use support::serving;

async fn observe(config: &ClientConfig, url: &str) -> Observation {
    mcp::observe(config, url, "streamable-http").await
}

/// The observation's own full digest and its second look's, both listed completely.
fn both_digests(obs: &Observation) -> (toolmark_toolset::Sri, toolmark_toolset::Sri) {
    assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
    let second = second_of(obs);
    assert_eq!(second.status, Status::Ok, "{}", second.detail);
    let KindDigest::Read { digest, count } = second.digest() else {
        panic!("a complete second look has a digest");
    };
    let first = obs.digests().unwrap();
    assert_eq!(count, second.tool_set().unwrap().tools.len() as u64);
    (first.full, digest)
}

fn second_of(obs: &Observation) -> &SecondLook {
    obs.second.as_ref().expect("a second look was made")
}

/// `lookup`'s description in a tool set.
fn lookup_description(set: &toolmark_toolset::ToolSet) -> String {
    let lookup = set
        .tools
        .iter()
        .find(|t| t.name() == Some("lookup"))
        .expect("lookup is listed");
    let v: serde_json::Value = serde_json::from_str(&lookup.raw).unwrap();
    v["description"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_server_cloaking_by_client_name_shows_the_second_look_its_cloaked_set() {
    let (fleet, url) = serving(Surface::cloaking(Cloak::ClientNameNot("toolmark".into()))).await;
    let obs = observe(&support::lax(), &url).await;
    let (first, second) = both_digests(&obs);
    assert_ne!(first, second, "the two listings differ: cloaking");
    // The first (toolmark) got the clean set, the second the cloaked one.
    assert_ne!(
        lookup_description(&obs.tool_set().unwrap()),
        surface::POISONED_DESCRIPTION
    );
    let cloaked = second_of(&obs).tool_set().unwrap();
    assert_eq!(lookup_description(&cloaked), surface::POISONED_DESCRIPTION);
    let served = Surface::cloaking(Cloak::ClientNameNot("toolmark".into())).cloaked_tools;
    let as_served: Vec<serde_json::Value> = cloaked
        .tools
        .iter()
        .map(|t| serde_json::from_str(&t.raw).unwrap())
        .collect();
    assert_eq!(
        as_served, served,
        "the second look's set is the cloaked set"
    );
    let seen = fleet.handshakes();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        (seen[0].client_name.as_str(), seen[0].cloaked),
        ("toolmark", false)
    );
    assert_eq!(
        (seen[1].client_name.as_str(), seen[1].cloaked),
        ("mcp-client", true)
    );
}

#[tokio::test]
async fn a_server_cloaking_by_protocol_version_shows_the_second_look_another_set() {
    let (fleet, url) = serving(Surface::cloaking(Cloak::VersionNot(
        mcp::SESSION_VERSION.into(),
    )))
    .await;
    let obs = observe(&support::lax(), &url).await;
    let (first, second) = both_digests(&obs);
    assert_ne!(first, second);
    let look = second_of(&obs);
    assert_eq!(look.asked_version, "2025-06-18");
    assert_eq!(look.protocol_version.as_deref(), Some("2025-06-18"));
    assert_eq!(obs.protocol_version.as_deref(), Some("2025-11-25"));
    let versions: Vec<(String, bool)> = fleet
        .handshakes()
        .into_iter()
        .map(|h| (h.protocol_version, h.cloaked))
        .collect();
    assert_eq!(
        versions,
        [("2025-11-25".into(), false), ("2025-06-18".into(), true)]
    );
}

#[tokio::test]
async fn an_honest_server_shows_both_looks_the_same_set() {
    let (_fleet, url) = serving(Surface::honest()).await;
    let obs = observe(&support::lax(), &url).await;
    let (first, second) = both_digests(&obs);
    assert_eq!(first, second);
    // A plain endpoint (no surface) as well.
    let fleet = support::echo_fleet(1).await;
    let obs = observe(&support::lax(), &fleet.urls()[0]).await;
    let (first, second) = both_digests(&obs);
    assert_eq!(first, second);
    assert_eq!(second_of(&obs).pages, obs.pages);
}

#[tokio::test]
async fn the_second_look_costs_one_session_of_four_requests_ended_with_a_delete() {
    let on = support::echo_fleet(1).await;
    let obs = observe(&support::lax(), &on.urls()[0]).await;
    assert_eq!(second_of(&obs).status, Status::Ok);
    let mut config = support::lax();
    config.limits.second_look = false;
    let off = support::echo_fleet(1).await;
    let without = observe(&config, &off.urls()[0]).await;
    let (with_requests, without_requests) = (
        obs.dialled().unwrap().requests,
        without.dialled().unwrap().requests,
    );
    // initialize, notifications/initialized, tools/list, DELETE.
    assert_eq!(with_requests - without_requests, 4);
    let asked = on.requests();
    assert_eq!(
        (asked.initialize, asked.tools_list, asked.closed),
        (2, 2, 2)
    );
    // The first session's DELETE is the one recorded.
    assert_eq!(obs.dialled().unwrap().session_closed, Some(200));
}

#[tokio::test]
async fn with_the_second_look_off_none_is_made_and_nothing_more_is_sent() {
    let (fleet, url) = serving(Surface::cloaking(Cloak::ClientNameNot("toolmark".into()))).await;
    let mut config = support::lax();
    config.limits.second_look = false;
    let obs = observe(&config, &url).await;
    assert_eq!(obs.status, Status::Ok);
    assert_eq!(obs.second, None);
    let asked = fleet.requests();
    assert_eq!(
        (asked.initialize, asked.tools_list, asked.closed),
        (1, 1, 1)
    );
    assert_eq!(fleet.handshakes().len(), 1);
}

#[tokio::test]
async fn a_second_look_that_times_out_leaves_the_first_observation_ok() {
    // Every request waits 200 ms; the second look may take 300 ms: its initialize and
    // notification fit, its tools/list does not.
    let fleet = Fleet::start(FleetSpec {
        hosts: 1,
        endpoints_per_host: 1,
        latency: (Duration::from_millis(200), Duration::from_millis(200)),
        seed: 1,
        tool_sets: vec![r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#.into()],
    })
    .await
    .unwrap();
    let mut config = support::lax();
    config.limits.surface = false;
    config.limits.second_look_deadline = Duration::from_millis(300);
    let obs = observe(&config, &fleet.urls()[0]).await;
    assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
    assert!(obs.digests().is_some());
    let look = second_of(&obs);
    assert_eq!(look.status, Status::Timeout);
    assert_eq!(look.detail, "second look: no complete listing within 0.3 s");
    assert!(look.pages.is_empty());
    assert_eq!(look.digest(), KindDigest::Unread("timeout".into()));
    // The first listing (discover, initialize, notification, tools/list: 0.8 s), the
    // second look's 0.3 s, the first session's DELETE (0.2 s), and no more.
    assert!(
        obs.elapsed < Duration::from_millis(1900),
        "{:?}",
        obs.elapsed
    );
}

#[tokio::test]
async fn the_second_identity_never_names_toolmark() {
    let fleet = support::echo_fleet(3).await;
    fleet.set_surface(0, Some(Surface::honest()));
    fleet.set_surface(
        1,
        Some(Surface::cloaking(Cloak::ClientNameNot("toolmark".into()))),
    );
    let mut stateless = Surface::honest();
    stateless.stateless = true;
    fleet.set_surface(2, Some(stateless));
    for url in fleet.urls() {
        let obs = observe(&support::lax(), &url).await;
        assert_eq!(second_of(&obs).status, Status::Ok, "{url}");
        assert!(
            !second_of(&obs)
                .client_info
                .to_string()
                .to_ascii_lowercase()
                .contains("toolmark")
        );
    }
    let seen = fleet.handshakes();
    let (first, second): (Vec<_>, Vec<_>) = seen.iter().partition(|h| h.client_name == "toolmark");
    // The 2026-07-28 endpoint's first identity is seen on each stateless request.
    assert!(first.len() >= 3, "{seen:?}");
    assert_eq!(second.len(), 3, "{seen:?}");
    for h in second {
        let who = format!("{}/{}", h.client_name, h.client_version).to_ascii_lowercase();
        assert!(!who.contains("toolmark"), "{who}");
        assert_eq!(who, "mcp-client/1.0.0");
        assert_eq!(h.protocol_version, "2025-06-18", "{h:?}");
    }
}

#[tokio::test]
async fn the_second_look_sends_its_own_user_agent_from_the_second_source() {
    let server = Hostile::start(Behaviour::Good).await;
    let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 29));
    let mut config = support::lax();
    config.second_source = Some(source);
    config.second_client = "claude-ai/0.1.0".parse().unwrap();
    let obs = observe(&config, &server.url()).await;
    assert_eq!(
        second_of(&obs).status,
        Status::Ok,
        "{}",
        second_of(&obs).detail
    );
    assert_eq!(
        second_of(&obs).client_info,
        serde_json::json!({"name": "claude-ai", "version": "0.1.0"})
    );
    let seen = server.seen.lock().unwrap().clone();
    let inits: Vec<_> = seen
        .iter()
        .filter(|s| s.rpc_method == "initialize")
        .collect();
    assert_eq!(inits.len(), 2, "{seen:?}");
    let (first, second) = (inits[0], inits[1]);
    assert_eq!(first.client_name.as_deref(), Some("toolmark"));
    assert_eq!(first.peer, IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert!(
        first
            .user_agent
            .as_deref()
            .unwrap()
            .starts_with("toolmark/")
    );
    assert_eq!(second.client_name.as_deref(), Some("claude-ai"));
    assert_eq!(second.asked_version.as_deref(), Some("2025-06-18"));
    assert_eq!(second.user_agent.as_deref(), Some("claude-ai/0.1.0"));
    assert_eq!(second.peer, source);
    // Every request of the second session, its DELETE too, and none of the first, came from
    // the second source, under its own User-Agent.
    let from_source: Vec<(&str, &str)> = seen
        .iter()
        .filter(|s| s.peer == source)
        .map(|s| (s.method.as_str(), s.rpc_method.as_str()))
        .collect();
    assert_eq!(
        from_source,
        [
            ("POST", "initialize"),
            ("POST", "notifications/initialized"),
            ("POST", "tools/list"),
            ("DELETE", "")
        ],
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .all(|s| (s.peer == source) == (s.user_agent.as_deref() == Some("claude-ai/0.1.0")))
    );
}

#[tokio::test]
async fn after_a_2026_07_28_listing_the_second_look_asks_the_session_era_then_2026_07_28() {
    // A 2026-07-28-only server: `initialize` is not found, so the second look lists over
    // 2026-07-28 too, under the second identity.
    let server = Hostile::start(Behaviour::Stateless).await;
    let obs = observe(&support::lax(), &server.url()).await;
    assert_eq!(obs.transport(), Some(Transport::Stateless));
    let (first, second) = both_digests(&obs);
    assert_eq!(first, second);
    assert_eq!(second_of(&obs).asked_version, "2026-07-28");
    let seen = server.seen.lock().unwrap().clone();
    let second_identity: Vec<(&str, Option<&str>)> = seen
        .iter()
        .filter(|s| s.client_name.as_deref() == Some("mcp-client"))
        .map(|s| (s.rpc_method.as_str(), s.asked_version.as_deref()))
        .collect();
    assert_eq!(
        second_identity,
        [
            ("initialize", Some("2025-06-18")),
            ("server/discover", None),
            ("tools/list", None)
        ],
        "{seen:?}"
    );
}

#[tokio::test]
async fn the_grant_an_outcome_carries_covers_both_listings_pages() {
    use toolmark_crawler::crawl::{self, CrawlConfig};
    // 64 tools of ~1 KiB: each listing holds ~70 KiB, far above the budget's 1 KiB unit.
    let tools: Vec<serde_json::Value> = (0..64)
        .map(|i| {
            serde_json::json!({"name": format!("t{i}"), "description": "d".repeat(1000),
                "inputSchema": {"type": "object"}})
        })
        .collect();
    let fleet = support::echo_fleet(1).await;
    fleet.set_tool_set(0, serde_json::json!({ "tools": tools }).to_string());
    let mut config = CrawlConfig::default();
    config.client.policy.allow_private = true;
    let budget = config.client.budget.clone();
    let mut carried = None;
    crawl::crawl(
        &config,
        vec![support::streamable_target(
            "io.example/big",
            fleet.urls()[0].clone(),
        )],
        |outcome| {
            let obs = outcome.observation.as_ref().unwrap();
            let first: usize = obs.pages.iter().map(String::capacity).sum();
            let second: usize = second_of(obs).pages.iter().map(String::capacity).sum();
            assert!(first > 64 * 1000 && second == first, "{first} {second}");
            let grant = outcome.grant.as_ref().map_or(0, |g| g.bytes());
            assert!(
                grant >= first + second,
                "grant {grant} < {first} + {second}"
            );
            carried = Some(grant);
        },
    )
    .await;
    assert!(carried.is_some());
    assert_eq!(budget.available(), budget.bytes(), "every grant came back");
}
