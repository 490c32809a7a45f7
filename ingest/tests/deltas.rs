//! Daily deltas end to end on loopback: the registry stand-in (with `updated_since` as the
//! registry documents it) listing a fleet of stand-in MCP servers, crawled by `run_crawl` into
//! real data directories.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use toolmark_index::{CompletedHarvest, HarvestKind, Index};
use toolmark_ingest::{CrawlOptions, CrawlRun, HarvestPolicy, RunSummary, Stop, run_crawl};
use toolmark_standins::fleet::{Fleet, FleetSpec};
use toolmark_standins::registry::{Faults, RegistryStandIn};

const TOOLS_A: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;
const TOOLS_B: &str = r#"{"tools":[{"name":"add","inputSchema":{"type":"object"}},{"name":"sub","inputSchema":{"type":"object"}}]}"#;
const TOOLS_C: &str =
    r#"{"tools":[{"name":"echo","description":"now described","inputSchema":{"type":"object"}}]}"#;

/// A fleet of `endpoints` servers on one host and a registry listing the first `listed` of
/// them, one server each (`io.toolmark.bench/sNNNN`, remote = endpoint N).
struct World {
    runtime: tokio::runtime::Runtime,
    fleet: Fleet,
    registry: RegistryStandIn,
    /// Every endpoint's registry item, listed or not.
    items: Vec<Value>,
    dir: PathBuf,
}

impl World {
    fn start(tag: &str, endpoints: usize, listed: usize) -> World {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let fleet = runtime
            .block_on(Fleet::start(FleetSpec {
                hosts: 1,
                endpoints_per_host: endpoints,
                latency: (Duration::ZERO, Duration::ZERO),
                seed: 1,
                tool_sets: vec![TOOLS_A.into(), TOOLS_B.into()],
            }))
            .unwrap();
        let items = fleet.registry_items(1);
        let registry = runtime
            .block_on(RegistryStandIn::start(items[..listed].to_vec()))
            .unwrap();
        let dir = std::env::temp_dir().join(format!(
            "toolmark-ingest-deltas-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        World {
            runtime,
            fleet,
            registry,
            items,
            dir,
        }
    }

    fn data(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn registry_url(&self) -> String {
        self.registry.url()
    }

    fn crawl(&self, data: &Path, harvest: HarvestPolicy) -> RunSummary {
        let options = CrawlOptions {
            allow_private: true,
            no_dns: true,
            registry_rate: 1000.0,
            registry_burst: 100,
            per_host: 8,
            harvest,
            ..CrawlOptions::default()
        };
        let data = toolmark_index::DataDir::new(data);
        let url = self.registry_url();
        let run = CrawlRun {
            data: &data,
            origin: "toolmark.test/deltas",
            registry: &url,
            since: None,
            options: &options,
            trust: toolmark_ingest::Trust::platform(),
        };
        run_crawl(self.runtime.handle(), &run, &Stop::new(), &()).expect("the crawl runs")
    }

    fn index(&self, data: &Path) -> Index {
        Index::open_read_only(&data.join("index.sqlite")).unwrap()
    }

    fn name(&self, n: usize) -> String {
        self.items[n]["server"]["name"].as_str().unwrap().to_owned()
    }

    /// Endpoint `n`'s item as a new version `version` whose remote is endpoint `remote`'s.
    fn new_version(&self, n: usize, version: &str, remote: usize) -> Value {
        let mut item = self.items[n].clone();
        item["server"]["version"] = version.into();
        item["server"]["remotes"] = self.items[remote]["server"]["remotes"].clone();
        item
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a run observed, independent of log positions: one line per target, sorted.
fn observed(summary: &RunSummary) -> Vec<String> {
    let mut lines: Vec<String> = summary
        .lines
        .iter()
        .map(|l| {
            format!(
                "{} {} {:?} {} {:?} {:?} {:?} changed={}",
                l.server,
                l.endpoint,
                l.transport,
                l.status,
                l.mtl1,
                l.full,
                l.tools,
                l.change_id.is_some()
            )
        })
        .collect();
    lines.sort();
    lines
}

fn servers(summary: &RunSummary) -> Vec<String> {
    let mut names: Vec<String> = summary.lines.iter().map(|l| l.server.clone()).collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn a_delta_crawl_after_changes_observes_what_a_full_crawl_observes() {
    let w = World::start("equal", 10, 6);
    let (delta, full) = (w.data("delta"), w.data("full"));
    let first = w.crawl(&delta, HarvestPolicy::Delta);
    assert_eq!(first.report.harvest.mode, "full");
    assert!(
        first.report.harvest.reason.contains("no complete harvest"),
        "{}",
        first.report.harvest.reason
    );
    w.crawl(&full, HarvestPolicy::Full);

    // The next day: server 1 publishes 2.0.0 with endpoint 7 as its remote, server 8 is new,
    // and endpoint 2 changes its tools.
    w.registry.publish(w.new_version(1, "2.0.0", 7));
    w.registry.publish(w.items[8].clone());
    w.fleet.set_tool_set(2, TOOLS_C.into());

    let by_delta = w.crawl(&delta, HarvestPolicy::Delta);
    let by_full = w.crawl(&full, HarvestPolicy::Full);
    let h = &by_delta.report.harvest;
    assert!(h.mode.starts_with("since "), "{h:?}");
    assert!(h.complete, "{h:?}");
    // The delta held 1.0.0 of server 1 (flipped), 2.0.0 and server 8: nothing else.
    assert_eq!((h.records, h.held), (3, Some(6)), "{h:?}");
    assert_eq!(by_full.report.harvest.mode, "full");

    // Same latest set, same targets, same observations (and the same change).
    assert_eq!(observed(&by_delta), observed(&by_full));
    assert_eq!(by_delta.report.servers, 7);
    assert_eq!(by_delta.changes(), 1);
    let urls = w.fleet.urls();
    let of_server_1: Vec<&str> = by_delta
        .lines
        .iter()
        .filter(|l| l.server == w.name(1))
        .map(|l| l.endpoint.as_str())
        .collect();
    assert_eq!(of_server_1, [urls[7].as_str()]);
    // Both keep the same registry records for the next delta.
    let key = w.registry_url();
    assert_eq!(
        w.index(&delta).registry_items(&key).unwrap(),
        w.index(&full).registry_items(&key).unwrap()
    );
    assert_eq!(w.index(&delta).registry_items(&key).unwrap().len(), 7);
}

#[test]
fn a_deleted_server_leaves_the_latest_set_by_a_delta_and_is_delisted_only_by_a_full() {
    let w = World::start("deleted", 5, 5);
    let data = w.data("data");
    w.crawl(&data, HarvestPolicy::Delta);
    let gone = w.name(2);
    assert_eq!(w.registry.set_status(&gone, "deleted"), 1);

    let day2 = w.crawl(&data, HarvestPolicy::Delta);
    assert!(day2.report.harvest.mode.starts_with("since "));
    assert_eq!(
        day2.report.harvest.records, 1,
        "the delta returns the deleted record"
    );
    assert!(!servers(&day2).contains(&gone), "not observed");
    assert_eq!(servers(&day2).len(), 4);
    assert!(day2.report.delisted.is_empty());
    let index = w.index(&data);
    assert_eq!(index.server(&gone).unwrap().unwrap().delisted_at, None);
    let key = w.registry_url();
    assert!(
        index
            .registry_items(&key)
            .unwrap()
            .iter()
            .all(|i| i.name != gone)
    );

    let day3 = w.crawl(&data, HarvestPolicy::Full);
    assert_eq!(day3.report.delisted, std::slice::from_ref(&gone));
    assert!(index.server(&gone).unwrap().unwrap().delisted_at.is_some());
    assert_eq!(observed(&day3).len(), 4);
}

#[test]
fn an_incomplete_delta_keeps_next_since_and_the_stored_records() {
    let w = World::start("incomplete", 5, 5);
    let data = w.data("data");
    w.crawl(&data, HarvestPolicy::Delta);
    let key = w.registry_url();
    let state = w.index(&data).harvest_state(&key).unwrap().unwrap();
    let stored = w.index(&data).registry_items(&key).unwrap();
    let gone = w.name(3);
    w.registry.set_status(&gone, "deleted");

    // The registry answers garbage: the delta reads nothing.
    w.registry.set_faults(Faults {
        garbage: true,
        ..Faults::default()
    });
    let broken = w.crawl(&data, HarvestPolicy::Delta);
    assert!(!broken.report.harvest.complete);
    assert!(broken.report.harvest.error.is_some());
    assert_eq!(broken.report.harvest.next_since, None);
    // The stored latest set is still observed whole, and nothing stored moved.
    assert_eq!(servers(&broken).len(), 5);
    assert_eq!(
        w.index(&data).harvest_state(&key).unwrap(),
        Some(state.clone())
    );
    assert_eq!(w.index(&data).registry_items(&key).unwrap(), stored);

    // The next delta starts where the last complete harvest left off, so it sees the deletion.
    w.registry.set_faults(Faults::default());
    let next = w.crawl(&data, HarvestPolicy::Delta);
    assert_eq!(
        next.report.harvest.mode,
        format!("since {}", state.next_since)
    );
    assert!(!servers(&next).contains(&gone));
    let after = w.index(&data).harvest_state(&key).unwrap().unwrap();
    assert_ne!(after.next_since, state.next_since);
    assert_eq!(after.last_full_at, state.last_full_at);
    assert_eq!(w.index(&data).registry_items(&key).unwrap().len(), 4);
}

#[test]
fn the_weekly_full_harvest_runs_when_due_and_delists() {
    let w = World::start("weekly", 4, 4);
    let data = w.data("data");
    w.crawl(&data, HarvestPolicy::Delta);
    let key = w.registry_url();
    // The stored history says the last full harvest was eight days ago.
    let eight_days_ago = SystemTime::now() - Duration::from_secs(8 * 86_400);
    let started = humantime::format_rfc3339_millis(eight_days_ago).to_string();
    let since =
        humantime::format_rfc3339_millis(eight_days_ago - Duration::from_secs(300)).to_string();
    {
        let mut index = Index::open(&data.join("index.sqlite")).unwrap();
        let items = index.registry_items(&key).unwrap();
        let old = CompletedHarvest {
            kind: HarvestKind::Full,
            started_at: &started,
            next_since: &since,
        };
        index.store_registry_items(&key, &items, Some(old)).unwrap();
    }
    let gone = w.name(1);
    w.registry.set_status(&gone, "deleted");

    let due = w.crawl(&data, HarvestPolicy::Delta);
    assert_eq!(due.report.harvest.mode, "full");
    assert!(
        due.report.harvest.reason.contains("due"),
        "{}",
        due.report.harvest.reason
    );
    assert_eq!(due.report.delisted, [gone]);
    let state = w.index(&data).harvest_state(&key).unwrap().unwrap();
    assert_eq!(state.last_complete_kind, HarvestKind::Full);
    assert_ne!(state.last_full_at.as_deref(), Some(started.as_str()));

    // The day after, a delta again.
    let next = w.crawl(&data, HarvestPolicy::Delta);
    assert!(next.report.harvest.mode.starts_with("since "));
    assert_eq!(servers(&next).len(), 3);
}
