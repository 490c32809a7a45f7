//! The surface's signals end to end on loopback: the registry stand-in listing stand-in servers
//! that cloak (another tool set to a second client identity), publish a Server Card that
//! disagrees with what they serve, or do neither, crawled by `run_crawl` into a real data
//! directory: the index holds one `cloaking` change (a security event) and one `card-mismatch`
//! change (`unsure`: the card lists a tool not served and leaves one out, but defines no served
//! tool otherwise), and nothing for the honest server.

use std::time::Duration;

use toolmark_index::{EventQuery, Index};
use toolmark_ingest::{CrawlOptions, CrawlRun, HarvestPolicy, Stop, run_crawl};
use toolmark_standins::fleet::surface::{Cloak, Surface};
use toolmark_standins::fleet::{Fleet, FleetSpec};
use toolmark_standins::registry::RegistryStandIn;

const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;

#[test]
fn a_cloaking_server_and_a_disagreeing_card_are_changes_and_cloaking_a_security_event() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fleet = runtime
        .block_on(Fleet::start(FleetSpec {
            // One endpoint per host: a Server Card at the well-known location is its origin's.
            hosts: 3,
            endpoints_per_host: 1,
            latency: (Duration::ZERO, Duration::ZERO),
            seed: 1,
            tool_sets: vec![TOOLS.into()],
        }))
        .unwrap();
    // Endpoint 0 shows its clean tools only to a client that names itself toolmark.
    fleet.set_surface(
        0,
        Some(Surface::cloaking(Cloak::ClientNameNot("toolmark".into()))),
    );
    fleet.set_surface(1, Some(Surface::card_mismatch()));
    fleet.set_surface(2, Some(Surface::honest()));
    let items = fleet.registry_items(1);
    let registry = runtime
        .block_on(RegistryStandIn::start(items.clone()))
        .unwrap();
    let dir = std::env::temp_dir().join(format!(
        "toolmark-ingest-surface-signals-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let options = CrawlOptions {
        allow_private: true,
        no_dns: true,
        registry_rate: 1000.0,
        registry_burst: 100,
        harvest: HarvestPolicy::Full,
        ..CrawlOptions::default()
    };
    let data = toolmark_index::DataDir::new(&dir);
    let url = registry.url();
    let run = CrawlRun {
        data: &data,
        origin: "toolmark.test/surface-signals",
        registry: &url,
        since: None,
        options: &options,
        trust: toolmark_ingest::Trust::platform(),
    };
    let summary = run_crawl(runtime.handle(), &run, &Stop::new(), &()).expect("the crawl runs");
    assert_eq!(
        summary.report.totals.get("ok"),
        Some(&3),
        "{:?}",
        summary.report.totals
    );

    let index = Index::open_read_only(&dir.join("index.sqlite")).unwrap();
    let name = |n: usize| items[n]["server"]["name"].as_str().unwrap().to_owned();
    let changes = index.latest_changes(None, 100, None, None).unwrap();
    let kinds_of = |n: usize| -> Vec<String> {
        let mut k: Vec<String> = changes
            .iter()
            .filter(|c| c.server == name(n))
            .map(|c| c.kind.clone())
            .collect();
        k.sort();
        k
    };
    assert_eq!(kinds_of(0), ["cloaking"]);
    assert_eq!(kinds_of(1), ["card-mismatch"]);
    assert!(kinds_of(2).is_empty(), "{:?}", kinds_of(2));
    let cloaking = changes.iter().find(|c| c.kind == "cloaking").unwrap();
    assert_eq!(cloaking.class, "dangerous");
    assert_ne!(
        cloaking.old_full, cloaking.new_full,
        "both digests are kept"
    );
    let mismatch = changes.iter().find(|c| c.kind == "card-mismatch").unwrap();
    assert_eq!(mismatch.class, "unsure");

    let events = index
        .security_events(&EventQuery {
            after: Some(0),
            limit: 100,
            ..EventQuery::default()
        })
        .unwrap();
    let event_kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(event_kinds, ["cloaking"]);
    drop(index);
    let _ = std::fs::remove_dir_all(&dir);
}
