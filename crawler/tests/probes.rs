//! The `server/discover` probe is paid once per host: a host whose endpoint refused it (in this
//! crawl, or by its transport hint from an earlier one) is not probed again.

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use support::echo_fleet;
use toolmark_crawler::crawl::{CrawlConfig, Hint, crawl};
use toolmark_crawler::observe::{Status, Transport};
use toolmark_crawler::registry::Target;

fn targets(urls: &[String]) -> Vec<Target> {
    urls.iter()
        .map(|url| support::streamable_target("io.example/s", url.clone()))
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
    let fleet = echo_fleet(5).await;
    let ok = crawl_one_by_one(&fleet.urls(), HashMap::new()).await;
    assert_eq!(ok, 5);
    let counts = fleet.requests();
    assert_eq!(counts.discover, 1, "{counts:?}");
    assert_eq!(counts.tools_list, 5);
    fleet.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_hint_from_an_earlier_crawl_spares_the_hosts_new_endpoints_the_probe() {
    let fleet = echo_fleet(3).await;
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
