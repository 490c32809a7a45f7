//! A real https URL reached at a pinned stand-in: the crawler dials the pinned address and port,
//! checks the stand-in's certificate against the real name, and accepts it only when told to
//! trust its CA (as `toolmark demo` does); the platform's roots refuse it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use toolmark_crawler::guard::StaticResolver;
use toolmark_crawler::mcp::{self, ClientConfig, Trust};
use toolmark_crawler::observe::Status;
use toolmark_standins::fleet::{Fleet, SiteSpec};

const URL: &str = "https://mcp.example.com/v1/mcp";

async fn site() -> Fleet {
    Fleet::start_sites(SiteSpec {
        urls: vec![URL.into()],
        latency: (Duration::from_millis(1), Duration::from_millis(2)),
        seed: 1,
        tool_sets: vec![r#"{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#.into()],
    })
    .await
    .unwrap()
}

/// A client that resolves the site's name only to its pinned stand-in.
fn pinned(fleet: &Fleet) -> ClientConfig {
    let mut c = ClientConfig::default();
    c.policy.allow_private = true;
    let table = fleet
        .pins()
        .iter()
        .map(|p| {
            let (name, addr) = p.split_once('=').unwrap();
            (name.to_owned(), vec![addr.parse().unwrap()])
        })
        .collect::<HashMap<_, _>>();
    c.resolver = Arc::new(StaticResolver(table));
    c
}

#[tokio::test]
async fn a_pinned_https_stand_in_is_observed_when_its_ca_is_trusted() {
    let fleet = site().await;
    let mut c = pinned(&fleet);
    c.trust = Trust::only(fleet.ca_certificate_pem().unwrap().as_bytes()).unwrap();
    let obs = mcp::observe(&c, URL, "streamable-http").await;
    assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
    assert_eq!(obs.tool_set().unwrap().tools.len(), 1);
    // The pinned address and port, not the URL's default 443.
    let address = obs.dialled().unwrap().address.unwrap();
    assert_eq!(address, fleet.host_addrs()[0]);
    assert_ne!(address.port(), 443);
    fleet.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_platform_roots_do_not_trust_a_stand_in() {
    let fleet = site().await;
    let obs = mcp::observe(&pinned(&fleet), URL, "streamable-http").await;
    assert_eq!(obs.status, Status::Tls, "{}", obs.detail);
    assert_eq!(fleet.requests().initialize, 0);
    fleet.shutdown(Duration::from_secs(1)).await;
}

#[test]
fn trusting_no_certificate_is_refused() {
    assert!(Trust::only(b"").is_err());
    assert!(
        Trust::only(b"-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
            .is_err()
    );
}
