//! The `server/discover` probe is paid once per host: a host whose endpoint refused it (in this
//! crawl, or by its transport hint from an earlier one) is not probed again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use toolmark_crawler::crawl::{CrawlConfig, Hint, crawl};
use toolmark_crawler::observe::{Status, Transport};
use toolmark_crawler::registry::{Target, TargetKind};
use toolmark_standins::fleet::{Fleet, FleetSpec};

async fn one_host(endpoints: usize) -> Fleet {
    Fleet::start(FleetSpec {
        hosts: 1,
        endpoints_per_host: endpoints,
        latency: (Duration::ZERO, Duration::ZERO),
        seed: 1,
        tool_sets: vec![r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#.into()],
    })
    .await
    .unwrap()
}

fn targets(urls: &[String]) -> Vec<Target> {
    urls.iter()
        .map(|url| Target {
            server: "io.example/s".into(),
            version: "1".into(),
            kind: TargetKind::Remote {
                transport: "streamable-http".into(),
                url: url.clone(),
            },
            skip: None,
        })
        .collect()
}

/// Crawls `urls` one at a time (so each observation can learn from the one before) and returns
/// how many were `ok`.
async fn crawl_one_by_one(urls: &[String], hints: HashMap<String, Hint>) -> usize {
    let mut config = CrawlConfig {
        per_host: 1,
        concurrency: 1,
        hints: Arc::new(hints),
        ..CrawlConfig::default()
    };
    config.client.policy.allow_private = true;
    let mut ok = 0;
    crawl(&config, targets(urls), |o| {
        if o.observation.is_some_and(|obs| obs.status == Status::Ok) {
            ok += 1;
        }
    })
    .await;
    ok
}

#[tokio::test]
async fn a_host_that_refused_discover_is_not_probed_again_in_the_crawl() {
    let fleet = one_host(5).await;
    let ok = crawl_one_by_one(&fleet.urls(), HashMap::new()).await;
    assert_eq!(ok, 5);
    let counts = fleet.requests();
    assert_eq!(counts.discover, 1, "{counts:?}");
    assert_eq!(counts.tools_list, 5);
    fleet.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_hint_from_an_earlier_crawl_spares_the_hosts_new_endpoints_the_probe() {
    let fleet = one_host(3).await;
    let urls = fleet.urls();
    // The first endpoint answered over streamable HTTP last time; the others are new.
    let hints = HashMap::from([(
        urls[0].clone(),
        Hint {
            transport: Some(Transport::StreamableHttp),
            expected: None,
        },
    )]);
    let ok = crawl_one_by_one(&urls, hints).await;
    assert_eq!(ok, 3);
    assert_eq!(fleet.requests().discover, 0);
    fleet.shutdown(Duration::from_secs(1)).await;
}
