//! A session the crawler is issued ends with the listing: one `DELETE` per session, with its id,
//! sent after the observation's place in its host's limit is given back.
// The gateway is driven by hand once, with a plain client (clippy.toml keeps those out of
// the libraries).
#![allow(clippy::disallowed_methods)]

mod support;

use std::time::Duration;

use support::{echo_fleet, lax};
use toolmark_crawler::crawl::{CrawlConfig, Refusals, crawl_with, host_key};
use toolmark_crawler::mcp;
use toolmark_crawler::observe::{Status, Transport};

#[tokio::test]
async fn every_session_gets_exactly_one_delete_with_its_id() {
    let fleet = echo_fleet(3).await;
    for url in fleet.urls() {
        let obs = mcp::observe(&lax(), &url, "streamable-http").await;
        assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
        assert_eq!(obs.transport(), Some(Transport::StreamableHttp));
        let dialled = obs.dialled().unwrap();
        assert!(dialled.session);
        // The stand-in answers 200 only to a DELETE naming one of its sessions.
        assert_eq!(dialled.session_closed, Some(200));
    }
    // Two sessions per observation, the listing's and the second look's, each ended.
    let counts = fleet.requests();
    assert_eq!(counts.closed, 6, "{counts:?}");
    assert_eq!(counts.tools_list, 6);
    fleet.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_delete_is_one_more_request() {
    let fleet = echo_fleet(1).await;
    let obs = mcp::observe(&lax(), &fleet.urls()[0], "streamable-http").await;
    // server/discover (refused), initialize, notifications/initialized, tools/list, DELETE; the
    // Server Card's two GETs (neither location has one); the second look's initialize,
    // notifications/initialized, tools/list and DELETE.
    assert_eq!(obs.dialled().unwrap().requests, 5 + 2 + 4);
    fleet.shutdown(Duration::from_secs(1)).await;
}

/// The issue's case: behind `supergateway --stateful` every session is a server process. After
/// a crawl of it, none is left (without the `DELETE` each observation left one for 30 minutes).
#[tokio::test]
async fn a_stateful_gateway_holds_no_session_after_a_crawl() {
    let Some(dir) = support::mcp_servers() else {
        return;
    };
    let gateway = support::Server::supergateway_stateful(&dir);
    let url = format!("http://127.0.0.1:{}/mcp", gateway.port);
    // The count sees a session's process: one opened by hand (and never ended) shows as one.
    let opened = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}"#)
        .send()
        .await
        .unwrap();
    let by_hand = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(opened);
    assert_eq!(wait_for_children(gateway.pid(), 1).await, 1);
    reqwest::Client::new()
        .delete(&url)
        .header("mcp-session-id", by_hand)
        .send()
        .await
        .unwrap();
    assert_eq!(wait_for_children(gateway.pid(), 0).await, 0);

    for _ in 0..2 {
        let obs = mcp::observe(&lax(), &url, "streamable-http").await;
        assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
        assert_eq!(
            obs.tool_set().unwrap().tools.len(),
            9,
            "server-memory's tools"
        );
        let dialled = obs.dialled().unwrap();
        assert!(dialled.session);
        assert_eq!(dialled.session_closed, Some(200));
    }
    assert_eq!(
        wait_for_children(gateway.pid(), 0).await,
        0,
        "a session's server process is still running"
    );
}

/// The number of `pid`'s child processes once it is `want`, or after 5 s (the gateway starts
/// and ends a session's process a moment after the request).
async fn wait_for_children(pid: u32, want: usize) -> usize {
    let mut n = support::children_of(pid);
    for _ in 0..100 {
        if n == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        n = support::children_of(pid);
    }
    n
}

/// `crawl_with` says when each dialled target's place in its host's limit comes back: once per
/// target, naming its host, before that target's outcome and before its sessions' `DELETE`s
/// (its listing's and its second look's) reach the server (the stand-in counts a `DELETE`
/// after its 100 ms latency).
#[tokio::test]
async fn each_host_place_is_reported_back_before_the_delete_and_the_outcome() {
    let fleet = toolmark_standins::fleet::Fleet::start(toolmark_standins::fleet::FleetSpec {
        hosts: 1,
        endpoints_per_host: 3,
        latency: (Duration::from_millis(100), Duration::from_millis(100)),
        seed: 1,
        tool_sets: vec![r#"{"tools":[]}"#.into()],
    })
    .await
    .unwrap();
    let urls = fleet.urls();
    let mut config = CrawlConfig {
        per_host: 1,
        ..CrawlConfig::default()
    };
    config.client.policy.allow_private = true;
    let targets = urls
        .iter()
        .map(|u| support::streamable_target("io.example/s", u.clone()))
        .collect();
    // (places back, sessions closed then) at each place back; outcomes at each outcome.
    let backs = std::cell::RefCell::new(Vec::new());
    let mut outcomes = Vec::new();
    crawl_with(
        &config,
        targets,
        &Refusals::default(),
        |o| {
            assert!(o.observation.is_some());
            outcomes.push(backs.borrow().len());
        },
        |host| {
            assert_eq!(host, host_key(&urls[0]));
            let mut b = backs.borrow_mut();
            let closed = fleet.requests().closed;
            b.push(closed);
        },
    )
    .await;
    let backs = backs.into_inner();
    assert_eq!(backs.len(), 3);
    for (i, closed) in backs.iter().enumerate() {
        assert!(
            *closed <= 2 * i as u64,
            "place {i} came back after its DELETE: {backs:?}"
        );
    }
    // Each outcome comes after its own place came back.
    assert_eq!(outcomes.len(), 3);
    for (i, seen) in outcomes.iter().enumerate() {
        assert!(
            *seen > i,
            "outcome {i} before its place came back: {outcomes:?}"
        );
    }
    assert_eq!(fleet.requests().closed, 6);
    fleet.shutdown(Duration::from_secs(1)).await;
}
