//! The crawl's limits: politeness per resolved address, not only per host name; the memory
//! budget covering outcomes a consumer keeps.

mod support;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use support::big::{Big, Spec};
use toolmark_crawler::budget::Budget;
use toolmark_crawler::crawl::{self, CrawlConfig, Outcome};
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
    let table = names
        .iter()
        .map(|n| (n.clone(), vec![SocketAddr::new(ip, 0)]))
        .collect();
    let targets: Vec<Target> = names
        .iter()
        .map(|n| {
            support::streamable_target(
                format!("io.example/{n}"),
                format!("http://{n}:{}/mcp", server.addr.port()),
            )
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
    // Sessions are ended after an observation gives back its place, at most `per_host` at once.
    let closing = server.stats.max_closing_in_flight.load(Ordering::SeqCst);
    assert!(closing <= config.per_host, "{closing} DELETEs at once");
    assert_eq!(
        server.stats.tools_list.load(Ordering::SeqCst),
        2 * NAMES,
        "one page each, listed twice (the listing and the second look)"
    );
}

/// Hosts of the batching-consumer test, each on its own address (127.0.3.x).
const BATCH_HOSTS: usize = 12;

/// Outcomes the test's consumer keeps before dropping them, like the binary's `RECORD_BATCH`.
const CONSUMER_BATCH: usize = 4;

/// Longest the test's consumer keeps an outcome, like the binary's `RECORD_LATENCY`.
const CONSUMER_LATENCY: Duration = Duration::from_millis(300);

/// A consumer that keeps outcomes in a batch on another thread, as `toolmark crawl`'s recorder
/// does, and drops them in batches of four or after 300 ms: every page it keeps is covered by
/// the grant its outcome carries, and those grants are budget granted out (so pages waiting in
/// a batch are inside the budget), the crawl completes while batches hold part of the budget
/// (the consumer's latency frees it), and the whole budget is back once all is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outcomes_kept_by_a_batching_consumer_stay_inside_the_budget() {
    let spec = Spec {
        page_bytes: 1024 * 1024,
        pages: 2,
        chunk: 256 * 1024,
        pause: Duration::ZERO,
        delay: Duration::ZERO,
    };
    let mut servers = Vec::new();
    for i in 0..BATCH_HOSTS {
        let ip = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 3, 1 + i as u8));
        servers.push(Big::start(ip, spec).await);
    }
    let targets: Vec<Target> = servers
        .iter()
        .map(|s| support::streamable_target("io.example/big", s.url()))
        .collect();
    // Caps scaled down with the pages (a cap-sized run needs 16 MiB) and a first grant that
    // fits one set, so a few observations run at once in the 32 MiB budget while four kept
    // outcomes (2 MiB of pages each) hold a quarter of it.
    let budget = Budget::new(32 * 1024 * 1024);
    let mut config = CrawlConfig::default();
    config.client.policy.allow_private = true;
    config.client.limits.max_toolset = 4 * 1024 * 1024;
    config.client.limits.max_response = 2 * 1024 * 1024;
    config.client.limits.grant = 8 * 1024 * 1024;
    // Sized for one listing an observation; the second look's pages are accounted as the
    // first's are (cloaking.rs).
    config.client.limits.second_look = false;
    config.client.budget = budget.clone();

    let (tx, rx) = std::sync::mpsc::channel::<Outcome>();
    let watched = budget.clone();
    let consumer = std::thread::spawn(move || {
        let mut batch: Vec<Outcome> = Vec::new();
        let mut oldest: Option<std::time::Instant> = None;
        let mut statuses = Vec::new();
        let mut most_kept = 0usize;
        loop {
            let wait = oldest.map_or(CONSUMER_LATENCY, |t| {
                CONSUMER_LATENCY.saturating_sub(t.elapsed())
            });
            let received = rx.recv_timeout(wait);
            let closed = matches!(
                received,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
            );
            if let Ok(outcome) = received {
                let obs = outcome
                    .observation
                    .as_ref()
                    .expect("every target is dialled");
                statuses.push((obs.status.clone(), obs.detail.clone()));
                oldest.get_or_insert_with(std::time::Instant::now);
                batch.push(outcome);
                let kept: usize = batch.iter().map(page_bytes).sum();
                let carried: usize = batch
                    .iter()
                    .map(|o| o.grant.as_ref().map_or(0, |g| g.bytes()))
                    .sum();
                let granted = watched.bytes() - watched.available();
                assert!(
                    kept <= carried,
                    "{kept} bytes of pages kept, {carried} granted"
                );
                assert!(
                    carried <= granted,
                    "{carried} carried, {granted} granted out"
                );
                for o in &batch {
                    let g = o.grant.as_ref().map_or(0, |g| g.bytes());
                    assert!(page_bytes(o) <= g, "pages {} > grant {g}", page_bytes(o));
                }
                most_kept = most_kept.max(kept);
            }
            let due = oldest.is_some_and(|t| t.elapsed() >= CONSUMER_LATENCY);
            if batch.len() >= CONSUMER_BATCH || due || closed {
                batch.clear();
                oldest = None;
            }
            if closed {
                return (statuses, most_kept);
            }
        }
    });
    let abandoned = crawl::crawl(&config, targets, |outcome| {
        tx.send(outcome).expect("the consumer runs to the end");
    })
    .await;
    drop(tx);
    let (statuses, most_kept) = consumer.join().expect("the consumer's checks hold");
    assert_eq!(abandoned, 0);
    assert_eq!(statuses.len(), BATCH_HOSTS);
    let not_ok: Vec<_> = statuses.iter().filter(|(s, _)| *s != Status::Ok).collect();
    assert!(not_ok.is_empty(), "{not_ok:?}");
    assert!(
        most_kept >= 2 * 2 * spec.page_bytes,
        "the consumer kept at most {most_kept} bytes at once: the batch was never exercised"
    );
    assert_eq!(budget.available(), budget.bytes(), "every grant came back");
}

/// Heap bytes of the pages an outcome carries.
fn page_bytes(outcome: &Outcome) -> usize {
    outcome
        .observation
        .as_ref()
        .map_or(0, |o| o.pages.iter().map(String::capacity).sum())
}

/// Remote targets for `names`, each `http://NAME:port/mcp`.
fn named_targets(names: &[String], port: u16) -> Vec<Target> {
    names
        .iter()
        .map(|n| {
            support::streamable_target(format!("io.example/{n}"), format!("http://{n}:{port}/mcp"))
        })
        .collect()
}

/// A small, fast-answering page for the scheduling tests.
fn small(delay: Duration) -> Spec {
    Spec {
        page_bytes: 4 * 1024,
        pages: 1,
        chunk: 4 * 1024,
        pause: Duration::ZERO,
        delay,
    }
}

/// 48 names on one slow address, listed first, and 8 hosts on addresses of their own, with 8
/// global slots: the shared address takes at most `per_host + waiting_per_address` of them, so
/// the other hosts are all observed while the shared address has most of its names to go
/// (before, its waiters filled every slot and the other hosts came last).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_waiting_on_one_address_do_not_take_every_slot() {
    const SHARED: usize = 48;
    const OTHERS: usize = 8;
    let shared_ip: IpAddr = "127.0.4.1".parse().unwrap();
    let shared = Big::start(shared_ip, small(Duration::from_millis(20))).await;
    let mut others = Vec::new();
    for i in 0..OTHERS {
        let ip = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 4, 10 + i as u8));
        others.push(Big::start(ip, small(Duration::ZERO)).await);
    }
    // Names sort so the shared ones are scheduled first (ties go to the smaller name).
    let mut table: HashMap<String, Vec<SocketAddr>> = HashMap::new();
    let shared_names: Vec<String> = (0..SHARED).map(|i| format!("a{i:02}.example")).collect();
    for n in &shared_names {
        table.insert(n.clone(), vec![SocketAddr::new(shared_ip, 0)]);
    }
    let mut targets = named_targets(&shared_names, shared.addr.port());
    for (i, s) in others.iter().enumerate() {
        let name = format!("z{i}.example");
        table.insert(name.clone(), vec![SocketAddr::new(s.addr.ip(), 0)]);
        targets.extend(named_targets(&[name], s.addr.port()));
    }
    let mut config = CrawlConfig::default();
    config.client.policy.allow_private = true;
    config.client.resolver = Arc::new(StaticResolver(table));
    config.concurrency = 8;
    // The order outcomes arrive in: true for the shared address.
    let mut order = Vec::new();
    let abandoned = crawl::crawl(&config, targets, |outcome| {
        let obs = outcome.observation.expect("dialled");
        assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
        let url = match &outcome.target.kind {
            TargetKind::Remote { url, .. } => url.clone(),
            TargetKind::Package { .. } => unreachable!(),
        };
        order.push(url.contains("//a"));
    })
    .await;
    assert_eq!(abandoned, 0);
    assert_eq!(order.len(), SHARED + OTHERS);
    let shared_before_last_other = order
        .iter()
        .rposition(|s| !s)
        .map(|last| order[..last].iter().filter(|s| **s).count())
        .unwrap();
    eprintln!(
        "{shared_before_last_other} of {SHARED} shared names done before the last other host"
    );
    assert!(
        shared_before_last_other < SHARED / 2,
        "{shared_before_last_other} of {SHARED} shared-address names finished before the last other host"
    );
    let max = shared.stats.max_in_flight.load(Ordering::SeqCst);
    assert!(
        max <= config.per_host,
        "{max} at once at the shared address"
    );
    let closing = shared.stats.max_closing_in_flight.load(Ordering::SeqCst);
    assert!(closing <= config.per_host, "{closing} DELETEs at once");
}

/// Six names on one address whose server answers slowly, and the stop token cancelled once it has
/// its first request: the two running finish and are delivered, the two waiting for the
/// address and the two set aside are abandoned (no outcome, counted), and none of them dials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_abandons_observations_waiting_for_their_address() {
    let ip: IpAddr = "127.0.5.1".parse().unwrap();
    let server = Big::start(ip, small(Duration::from_millis(400))).await;
    let names: Vec<String> = (0..6).map(|i| format!("s{i}.example")).collect();
    let table = names
        .iter()
        .map(|n| (n.clone(), vec![SocketAddr::new(ip, 0)]))
        .collect();
    let mut config = CrawlConfig::default();
    config.client.policy.allow_private = true;
    config.client.resolver = Arc::new(StaticResolver(table));
    let stop = config.stop.clone();
    let stats = server.stats.clone();
    let stopper = tokio::spawn(async move {
        // Bounded: the server sees a request within seconds or the test fails below.
        for _ in 0..500 {
            if stats.requests.load(Ordering::SeqCst) > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stop.cancel();
    });
    let mut observed = 0;
    let abandoned = crawl::crawl(&config, named_targets(&names, server.addr.port()), |o| {
        let obs = o.observation.expect("dialled");
        assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
        observed += 1;
    })
    .await;
    stopper.await.unwrap();
    assert_eq!(observed, 2);
    assert_eq!(abandoned, 4);
    // The two observed, each listed twice (the listing and the second look).
    assert_eq!(server.stats.tools_list.load(Ordering::SeqCst), 4);
}

/// Two hosts and a budget one observation takes whole: the second waits for budget, and when
/// the stop token is cancelled it gives up and is counted as abandoned, while the first finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_abandons_observations_waiting_for_budget() {
    let a = Big::start(
        "127.0.6.1".parse().unwrap(),
        small(Duration::from_millis(400)),
    )
    .await;
    let b = Big::start(
        "127.0.6.2".parse().unwrap(),
        small(Duration::from_millis(400)),
    )
    .await;
    let mut config = CrawlConfig::default();
    config.client.policy.allow_private = true;
    config.client.budget = Budget::new(1024 * 1024);
    config.client.limits.grant = 1024 * 1024;
    let targets = [&a, &b]
        .iter()
        .map(|s| support::streamable_target("io.example/b", s.url()))
        .collect();
    let stop = config.stop.clone();
    let (sa, sb) = (a.stats.clone(), b.stats.clone());
    let stopper = tokio::spawn(async move {
        for _ in 0..500 {
            if sa.requests.load(Ordering::SeqCst) + sb.requests.load(Ordering::SeqCst) > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stop.cancel();
    });
    let mut observed = 0;
    let abandoned = crawl::crawl(&config, targets, |o| {
        let obs = o.observation.expect("dialled");
        assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
        observed += 1;
    })
    .await;
    stopper.await.unwrap();
    assert_eq!((observed, abandoned), (1, 1));
    let dialled = a.stats.requests.load(Ordering::SeqCst) > 0;
    assert_ne!(
        dialled,
        b.stats.requests.load(Ordering::SeqCst) > 0,
        "exactly one dialled"
    );
}
