//! The crawl's politeness holds per resolved address, not only per host name.

mod support;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use support::big::{Big, Spec};
use toolmark_crawler::crawl::{self, CrawlConfig};
use toolmark_crawler::guard::StaticResolver;
use toolmark_crawler::observe::Status;
use toolmark_crawler::registry::{Target, TargetKind};

/// Host names in the crawl, all resolving to one address.
const NAMES: usize = 64;

/// 64 names for one address: every name is its own host for the per-host limit, yet the server
/// never sees more than `per_host` requests at once, and every observation completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_names_for_one_address_share_the_per_host_limit() {
    let ip: IpAddr = "127.0.0.1".parse().unwrap();
    let server = Big::start(
        ip,
        Spec {
            page_bytes: 4 * 1024,
            pages: 1,
            chunk: 4 * 1024,
            pause: Duration::ZERO,
            delay: Duration::from_millis(20),
        },
    )
    .await;
    let names: Vec<String> = (0..NAMES).map(|i| format!("n{i}.example")).collect();
    let table = names.iter().map(|n| (n.clone(), vec![ip])).collect();
    let targets: Vec<Target> = names
        .iter()
        .map(|n| Target {
            server: format!("io.example/{n}"),
            version: "1".into(),
            kind: TargetKind::Remote {
                transport: "streamable-http".into(),
                url: format!("http://{n}:{}/mcp", server.addr.port()),
            },
            skip: None,
        })
        .collect();
    let mut config = CrawlConfig::default();
    config.client.policy.allow_private = true;
    config.client.resolver = Arc::new(StaticResolver(table));
    let mut statuses: HashMap<String, usize> = HashMap::new();
    crawl::crawl(&config, targets, |outcome| {
        let obs = outcome.observation.expect("dialled");
        assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
        *statuses.entry(obs.status.name()).or_default() += 1;
    })
    .await;
    assert_eq!(statuses.get("ok"), Some(&NAMES));
    let max = server.stats.max_in_flight.load(Ordering::SeqCst);
    assert!(
        max <= config.per_host,
        "{max} requests at once at one address (limit {})",
        config.per_host
    );
    assert_eq!(
        server.stats.tools_list.load(Ordering::SeqCst),
        NAMES,
        "one page each"
    );
}
