//! What the crawl remembers about the 2026-07-28 `server/discover` probe: per origin (scheme,
//! host, port) and per implementation (`serverInfo`), an endpoint whose origin refused the probe
//! as the same implementation is not probed again; any other endpoint, whichever was dialled
//! first, is recorded with 2026-07-28 when it speaks it; an endpoint's own hint from an earlier
//! crawl spares it the probe except on its re-probe day; crawls sharing their memory of refusals
//! (one a job in the cluster) probe a refusing origin once.

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use support::{Server, echo_fleet, mcp_servers, sdk_gateway, sdk_server_as};
use toolmark_crawler::crawl::{CrawlConfig, Hint, Refusals, crawl, crawl_with, reprobes_on};
use toolmark_crawler::observe::{Observation, Status, Transport};
use toolmark_crawler::registry::Target;

fn targets(urls: &[String]) -> Vec<Target> {
    urls.iter()
        .map(|url| support::streamable_target("io.example/s", url.clone()))
        .collect()
}

/// Crawls `urls` one at a time (so each observation can learn from the one before), in the
/// order the hints' expected durations give (longest first), on `day`; the observations by URL.
async fn crawl_one_by_one(
    urls: &[String],
    hints: HashMap<String, Hint>,
    day: u64,
) -> HashMap<String, Observation> {
    let mut config = CrawlConfig {
        per_host: 1,
        concurrency: 1,
        hints: Arc::new(hints),
        day,
        ..CrawlConfig::default()
    };
    config.client.policy.allow_private = true;
    let mut observed = HashMap::new();
    crawl(&config, targets(urls), |o| {
        let url = match &o.target.kind {
            toolmark_crawler::registry::TargetKind::Remote { url, .. } => url.clone(),
            toolmark_crawler::registry::TargetKind::Package { .. } => unreachable!(),
        };
        observed.insert(url, o.observation.expect("dialled"));
    })
    .await;
    observed
}

/// Hints that only order the crawl: `urls[0]` first, then the next, and so on.
fn in_order(urls: &[String]) -> HashMap<String, Hint> {
    urls.iter()
        .enumerate()
        .map(|(i, url)| {
            let hint = Hint {
                transport: None,
                expected: Some(Duration::from_secs(100 - i as u64)),
                ..Hint::default()
            };
            (url.clone(), hint)
        })
        .collect()
}

/// The transports tried, in order, and whether each answered.
fn attempts(obs: &Observation) -> Vec<(Transport, bool)> {
    obs.dialled()
        .unwrap()
        .attempts
        .iter()
        .map(|a| (a.transport, a.status == Status::Ok))
        .collect()
}

fn transport(obs: &Observation) -> Option<Transport> {
    obs.dialled().unwrap().transport
}

/// An empty directory of this test process named `name`.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("toolmark-probes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `server/discover` requests in an SDK server's request log (only the probe names its method
/// in a header before 2026-07-28 is chosen).
fn probes_logged(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("REQ POST ") && l.contains("mcp-method"))
        .count()
}

/// The fleet stand-in's endpoints are one origin but each its own implementation
/// (`fleet-<n>`): after the first refused the probe, the others start with streamable HTTP and
/// are probed after their listing, since the refusal was another implementation's.
#[tokio::test]
async fn other_implementations_on_a_refusing_origin_are_probed_after_their_listing() {
    let fleet = echo_fleet(3).await;
    let urls = fleet.urls();
    let observed = crawl_one_by_one(&urls, in_order(&urls), 0).await;
    assert!(observed.values().all(|o| o.status == Status::Ok));
    assert_eq!(
        attempts(&observed[&urls[0]]),
        [
            (Transport::Stateless, false),
            (Transport::StreamableHttp, true)
        ]
    );
    for url in &urls[1..] {
        assert_eq!(
            attempts(&observed[url]),
            [
                (Transport::StreamableHttp, true),
                (Transport::Stateless, false)
            ]
        );
        assert_eq!(transport(&observed[url]), Some(Transport::StreamableHttp));
    }
    assert_eq!(fleet.requests().discover, 3);
    fleet.shutdown(Duration::from_secs(1)).await;
}

/// An endpoint's own hint from an earlier crawl (streamable HTTP) spares it the probe on the
/// days that are not its re-probe day; the endpoints without a hint are probed.
#[tokio::test]
async fn a_hint_from_an_earlier_crawl_spares_its_own_endpoint_the_probe() {
    let fleet = echo_fleet(3).await;
    let urls = fleet.urls();
    let day = (0..7).find(|d| !reprobes_on(&urls[0], *d)).unwrap();
    let mut hints = in_order(&urls);
    hints.get_mut(&urls[0]).unwrap().transport = Some(Transport::StreamableHttp);
    let observed = crawl_one_by_one(&urls, hints, day).await;
    assert!(observed.values().all(|o| o.status == Status::Ok));
    assert_eq!(
        attempts(&observed[&urls[0]]),
        [(Transport::StreamableHttp, true)]
    );
    assert_eq!(fleet.requests().discover, 2);
    fleet.shutdown(Duration::from_secs(1)).await;
}

/// On its re-probe day (one in `REPROBE_DAYS`, by its URL), an endpoint whose hint names
/// streamable HTTP is probed afresh, so a server that gained 2026-07-28 is recorded with it.
#[tokio::test]
async fn on_its_reprobe_day_a_hinted_endpoint_is_probed_afresh() {
    let fleet = echo_fleet(1).await;
    let urls = fleet.urls();
    let day = (0..7).find(|d| reprobes_on(&urls[0], *d)).unwrap();
    let mut hints = in_order(&urls);
    hints.get_mut(&urls[0]).unwrap().transport = Some(Transport::StreamableHttp);
    let observed = crawl_one_by_one(&urls, hints, day).await;
    assert_eq!(
        attempts(&observed[&urls[0]]),
        [
            (Transport::Stateless, false),
            (Transport::StreamableHttp, true)
        ]
    );
    assert_eq!(fleet.requests().discover, 1);
    fleet.shutdown(Duration::from_secs(1)).await;
}

/// Issue #25: real Python `mcp` SDK servers on one address (127.0.0.1) and four ports, two of
/// the 1.x SDK (session-era only) and two of the 2.x SDK (2026-07-28 too), dialled one at a
/// time with a 1.x server first, the order that had a per-host memory record the 2.x servers
/// as streamable HTTP: each is recorded with what it speaks.
#[tokio::test]
async fn sdk_servers_on_other_ports_of_one_address_are_each_recorded_with_what_they_speak() {
    let Some(dir) = mcp_servers() else { return };
    let tmp = scratch("ports");
    let start = |venv: &str, name: &str| -> Server {
        sdk_server_as(&dir, venv, name, &[], &tmp.join(format!("{name}.log")))
    };
    let servers = [
        ("old-1", start("mcp-proxy", "old-1")),
        ("new-1", start("mcp-sdk", "new-1")),
        ("old-2", start("mcp-proxy", "old-2")),
        ("new-2", start("mcp-sdk", "new-2")),
    ];
    let urls: Vec<String> = servers
        .iter()
        .map(|(_, s)| format!("http://127.0.0.1:{}/mcp", s.port))
        .collect();
    let observed = crawl_one_by_one(&urls, in_order(&urls), 0).await;
    for ((name, _), url) in servers.iter().zip(&urls) {
        let obs = &observed[url];
        assert_eq!(obs.status, Status::Ok, "{name}: {}", obs.detail);
        // Each was probed first: the servers on other ports are other origins.
        let (want, version, tried) = if name.starts_with("new") {
            let tried = vec![(Transport::Stateless, true)];
            (Transport::Stateless, "2026-07-28", tried)
        } else {
            let tried = vec![
                (Transport::Stateless, false),
                (Transport::StreamableHttp, true),
            ];
            (Transport::StreamableHttp, "2025-11-25", tried)
        };
        assert_eq!(transport(obs), Some(want), "{name}: {:?}", attempts(obs));
        assert_eq!(attempts(obs), tried, "{name}");
        assert_eq!(obs.protocol_version.as_deref(), Some(version), "{name}");
        println!(
            "figure: {name} ({url}): {} over {}",
            obs.protocol_version.as_deref().unwrap_or("?"),
            want.as_str()
        );
    }
}

/// One real 1.x SDK server behind three endpoints of one origin (`/a/mcp`, `/b/mcp`,
/// `/c/mcp`): the first refuses the probe, and the others, answering as the same
/// implementation, are not probed at all (two requests saved).
#[tokio::test]
async fn an_implementation_that_refused_the_probe_is_not_probed_again_on_its_origin() {
    let Some(dir) = mcp_servers() else { return };
    let log = scratch("paths").join("old.log");
    let server = sdk_server_as(&dir, "mcp-proxy", "old", &["a", "b", "c"], &log);
    let urls: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|p| format!("http://127.0.0.1:{}/{p}/mcp", server.port))
        .collect();
    let observed = crawl_one_by_one(&urls, in_order(&urls), 0).await;
    assert!(observed.values().all(|o| o.status == Status::Ok));
    for url in &urls[1..] {
        assert_eq!(
            attempts(&observed[url]),
            [(Transport::StreamableHttp, true)]
        );
    }
    assert_eq!(probes_logged(&log), 1);
}

/// The cluster's worker crawls one target a job: crawls sharing one [`Refusals`] remember
/// the refusal across them, so three one-target crawls of one real 1.x SDK server's endpoints
/// (`/a/mcp`, `/b/mcp`, `/c/mcp`) probe `server/discover` once, as one crawl of the three does.
#[tokio::test]
async fn crawls_sharing_their_refusals_probe_a_refusing_origin_once() {
    let Some(dir) = mcp_servers() else { return };
    let log = scratch("shared").join("old.log");
    let server = sdk_server_as(&dir, "mcp-proxy", "old", &["a", "b", "c"], &log);
    let mut config = CrawlConfig::default();
    config.client.policy.allow_private = true;
    let refusals = Refusals::default();
    for p in ["a", "b", "c"] {
        let url = format!("http://127.0.0.1:{}/{p}/mcp", server.port);
        let mut status = None;
        crawl_with(
            &config,
            targets(&[url]),
            &refusals,
            |o| status = o.observation.map(|o| o.status),
            |_| {},
        )
        .await;
        assert_eq!(status, Some(Status::Ok));
    }
    assert_eq!(refusals.origins(), 1);
    assert_eq!(probes_logged(&log), 1);
}

/// Two real servers behind one origin: the 1.x SDK server at `/mcp`, and the 2.x SDK server
/// it forwards `/new/mcp` to. The 1.x one is dialled first and refuses the probe; the 2.x one
/// then starts with streamable HTTP but answers as another implementation, so it is probed
/// after its listing and recorded over 2026-07-28.
#[tokio::test]
async fn a_2026_endpoint_behind_a_refusing_origin_is_still_recorded_with_it() {
    let Some(dir) = mcp_servers() else { return };
    let tmp = scratch("gateway");
    let new = sdk_server_as(&dir, "mcp-sdk", "new", &[], &tmp.join("new.log"));
    let gateway = sdk_gateway(
        &dir,
        "mcp-proxy",
        "old",
        &[],
        &[("new", new.port)],
        &tmp.join("old.log"),
    );
    let urls = vec![
        format!("http://127.0.0.1:{}/mcp", gateway.port),
        format!("http://127.0.0.1:{}/new/mcp", gateway.port),
    ];
    let observed = crawl_one_by_one(&urls, in_order(&urls), 0).await;
    let (old, new_obs) = (&observed[&urls[0]], &observed[&urls[1]]);
    assert_eq!(old.status, Status::Ok, "{}", old.detail);
    assert_eq!(transport(old), Some(Transport::StreamableHttp));
    assert_eq!(new_obs.status, Status::Ok, "{}", new_obs.detail);
    assert_eq!(
        attempts(new_obs),
        [
            (Transport::StreamableHttp, true),
            (Transport::Stateless, true)
        ]
    );
    assert_eq!(transport(new_obs), Some(Transport::Stateless));
    assert_eq!(new_obs.protocol_version.as_deref(), Some("2026-07-28"));
    assert!(
        new_obs
            .initialize
            .as_deref()
            .unwrap()
            .contains("supportedVersions")
    );
}
