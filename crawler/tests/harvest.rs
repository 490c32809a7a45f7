//! The registry harvest loop against the loopback registry stand-in, on the real December 2025
//! corpus: paging, deltas, deletions and delisting, politeness (rate, `Retry-After`, back-off)
//! and every way a harvest stops.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolmark_crawler::harvest::{
    Backoff, Harvest, HarvestConfig, HarvestError, MAX_RETRIES_PER_PAGE, Mode, PAGE_SIZE, Rate,
    apply_delta, delisted, harvest, harvest_partial,
};
use toolmark_crawler::registry::{self, Record, Status, latest_per_name, parse_snapshot};
use toolmark_standins::registry::{Faults, RegistryStandIn, RequestRecord, load_snapshot};

const DAY1: &str = "mcp-insights-servers-2025-12-17T0843Z.json";
const DAY2: &str = "mcp-insights-servers-2025-12-18T0842Z.json";

/// A corpus file, or `None` (with a note) when the shared corpus is not beside the repository.
fn corpus(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/registry")
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("note: {} not found; test skipped", path.display());
        None
    }
}

/// The snapshot's items (for the stand-in) and its records (parsed directly, the oracle).
fn snapshot(name: &str) -> Option<(Vec<Value>, Vec<Record>)> {
    let path = corpus(name)?;
    let items = load_snapshot(&path).unwrap();
    let page = parse_snapshot(&std::fs::read(&path).unwrap()).unwrap();
    assert!(page.rejected.is_empty());
    Some((items, page.servers))
}

/// The first `n` items of `items` whose official `isLatest` is true.
fn latest_items(items: &[Value], n: usize) -> Vec<Value> {
    items
        .iter()
        .filter(|i| i["_meta"]["io.modelcontextprotocol.registry/official"]["isLatest"] == true)
        .take(n)
        .cloned()
        .collect()
}

/// A synthetic latest item.
fn item(name: &str, version: &str) -> Value {
    json!({
        "server": {"name": name, "version": version, "description": "d",
                   "remotes": [{"type": "streamable-http", "url": "https://x.example/mcp"}]},
        "_meta": {"io.modelcontextprotocol.registry/official": {
            "status": "active", "publishedAt": "2025-12-01T00:00:00Z",
            "updatedAt": "2025-12-01T00:00:00Z", "isLatest": true}},
    })
}

fn synthetic(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| item(&format!("com.example/s{i:04}"), "1.0.0"))
        .collect()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// A configuration that paces at 200 requests/s and backs off 20–100 ms, so tests run fast.
fn fast(stand_in: &RegistryStandIn, mode: Mode) -> HarvestConfig {
    HarvestConfig {
        rate: Rate {
            per_second: 200.0,
            burst: 20,
        },
        backoff: Backoff {
            first: Duration::from_millis(20),
            max: Duration::from_millis(100),
        },
        timeout: Duration::from_secs(30),
        ..HarvestConfig::new(stand_in.url(), mode)
    }
}

fn keys(records: &[Record]) -> BTreeSet<(String, String)> {
    records
        .iter()
        .map(|r| (r.name.clone(), r.version.clone()))
        .collect()
}

fn names(records: &[Record]) -> BTreeSet<String> {
    records.iter().map(|r| r.name.clone()).collect()
}

/// An RFC 3339 UTC time with its fraction padded to nine digits, so strings compare as times
/// (the corpus writes 2 to 6 fraction digits).
fn sortable(t: &str) -> String {
    let body = t.strip_suffix('Z').expect("UTC time");
    let (whole, frac) = body.split_once('.').unwrap_or((body, ""));
    format!("{whole}.{frac:0<9}Z")
}

/// The gap between each non-200 answer and the request after it.
fn gaps_after(requests: &[RequestRecord], status: u16) -> Vec<Duration> {
    requests
        .windows(2)
        .filter(|w| w[0].status == status)
        .map(|w| w[1].at.duration_since(w[0].at))
        .collect()
}

fn assert_complete(h: &Harvest) {
    assert!(h.complete);
    assert!(h.rejected.is_empty(), "{:?}", h.rejected);
}

// ---- the real corpus ----

#[tokio::test]
async fn full_harvest_matches_the_snapshot() {
    let Some((items, records)) = snapshot(DAY2) else {
        return;
    };
    let s = RegistryStandIn::start(items).await.unwrap();
    let h = harvest(&client(), &fast(&s, Mode::Full)).await.unwrap();
    assert_complete(&h);

    // Every isLatest record, verbatim, in the registry's (name, version) order.
    let mut expected: Vec<Record> = records.iter().filter(|r| r.is_latest).cloned().collect();
    expected.sort_by(|a, b| (&a.name, &a.version).cmp(&(&b.name, &b.version)));
    assert_eq!(expected.len(), 1_108);
    assert_eq!(h.records, expected);
    let direct = latest_per_name(records);
    let harvested = latest_per_name(h.records.clone());
    assert_eq!(direct.len(), 1_108);
    assert_eq!(keys(&harvested), keys(&direct));

    assert_eq!(h.pages, 1_108usize.div_ceil(PAGE_SIZE));
    assert_eq!((h.requests, h.retries), (h.pages, 0));
    let requests = s.requests();
    assert_eq!(requests.len(), h.pages);
    assert_eq!(
        requests[0].path_and_query,
        "/v0.1/servers?limit=100&version=latest"
    );
    // The cursor is the last name:version of the page before, form-encoded.
    let last = &h.records[PAGE_SIZE - 1];
    let encoded = format!("{}:{}", last.name, last.version)
        .replace('/', "%2F")
        .replace(':', "%3A");
    assert_eq!(
        requests[1].path_and_query,
        format!("/v0.1/servers?limit=100&version=latest&cursor={encoded}")
    );
    assert!(requests.iter().all(|r| r.status == 200));
    assert!(h.started_at.ends_with('Z') && h.next_since < h.started_at);
}

#[tokio::test]
async fn day_one_to_day_two_by_delta() {
    let (Some((day1_items, day1)), Some((day2_items, day2))) = (snapshot(DAY1), snapshot(DAY2))
    else {
        return;
    };
    let s = RegistryStandIn::start(day1_items).await.unwrap();
    let client = client();
    let full = harvest(&client, &fast(&s, Mode::Full)).await.unwrap();
    assert_complete(&full);
    let latest1 = latest_per_name(full.records.clone());
    assert_eq!(keys(&latest1), keys(&latest_per_name(day1.clone())));

    // The newest change of day 1, from the data: every later change is day 2's.
    let since = day1
        .iter()
        .map(|r| r.updated_at.clone())
        .max_by_key(|t| sortable(t))
        .unwrap();
    s.set_items(day2_items);
    s.clear_requests();
    let delta = harvest(&client, &fast(&s, Mode::Since(since.clone())))
        .await
        .unwrap();
    assert_complete(&delta);
    let requests = s.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.path_and_query.contains("updated_since=")
                && !r.path_and_query.contains("version="))
    );

    let changed: BTreeSet<_> = day2
        .iter()
        .filter(|r| sortable(&r.updated_at) > sortable(&since))
        .map(|r| (r.name.clone(), r.version.clone()))
        .collect();
    let added: BTreeSet<_> = keys(&day2).difference(&keys(&day1)).cloned().collect();
    assert_eq!(keys(&delta.records), changed);
    assert_eq!(delta.records.len(), changed.len(), "no item twice");
    // In this data the 12 versions that lost isLatest kept their updatedAt, so a delta sees
    // exactly the 38 added versions.
    assert_eq!(changed, added);
    assert_eq!(added.len(), 38);

    let merged = apply_delta(latest1.clone(), &delta);
    let latest2 = latest_per_name(day2);
    assert_eq!(keys(&merged), keys(&latest2));
    assert_eq!(merged, latest2);
    let moved = latest1
        .iter()
        .filter(|old| {
            latest2
                .iter()
                .any(|new| new.name == old.name && new.version != old.version)
        })
        .count();
    assert_eq!(moved, 12, "names whose latest version changed");
    assert_eq!(latest2.len() - latest1.len(), 11, "new names");
    // Idempotent.
    assert_eq!(apply_delta(merged.clone(), &delta), merged);
    // A delta never delists.
    assert!(delisted(&names(&latest1), &delta).is_empty());
}

#[tokio::test]
async fn deleted_servers_leave_by_delta_and_by_delisting() {
    let Some((items, _)) = snapshot(DAY2) else {
        return;
    };
    let s = RegistryStandIn::start(items).await.unwrap();
    let client = client();
    let before = harvest(&client, &fast(&s, Mode::Full)).await.unwrap();
    let latest = latest_per_name(before.records.clone());
    let previous = names(&latest);

    // A server with several versions, and one with a single version.
    let all = s.items();
    let count = |name: &str| all.iter().filter(|i| i["server"]["name"] == name).count();
    let multi = latest
        .iter()
        .find(|r| count(&r.name) > 2)
        .unwrap()
        .name
        .clone();
    let single = latest
        .iter()
        .find(|r| count(&r.name) == 1)
        .unwrap()
        .name
        .clone();
    assert_eq!(s.set_status(&multi, "deleted"), count(&multi));
    assert_eq!(s.set_status(&single, "deleted"), 1);

    let delta = harvest(&client, &fast(&s, Mode::Since(before.next_since.clone())))
        .await
        .unwrap();
    assert_eq!(delta.records.len(), count(&multi) + 1);
    assert!(delta.records.iter().all(|r| r.status == Status::Deleted));
    let merged = apply_delta(latest.clone(), &delta);
    assert_eq!(merged.len(), latest.len() - 2);
    assert!(!names(&merged).contains(&multi) && !names(&merged).contains(&single));

    let after = harvest(&client, &fast(&s, Mode::Full)).await.unwrap();
    let mut gone = vec![multi.clone(), single.clone()];
    gone.sort();
    assert_eq!(delisted(&previous, &after), gone);
    assert_eq!(
        names(&latest_per_name(after.records.clone())),
        names(&merged)
    );

    // A failed harvest delists nothing, however little it read.
    s.set_faults(Faults {
        repeat_cursor: true,
        ..Faults::default()
    });
    let (partial, error) = harvest_partial(&client, &fast(&s, Mode::Full)).await;
    assert!(
        matches!(error, Some(HarvestError::RepeatedCursor(_))),
        "{error:?}"
    );
    assert!(!partial.complete && partial.pages == 2);
    assert!(delisted(&previous, &partial).is_empty());

    s.set_faults(Faults {
        fail_every: Some((1, 500, None)),
        ..Faults::default()
    });
    let (partial, error) = harvest_partial(&client, &fast(&s, Mode::Full)).await;
    match error {
        Some(HarvestError::TooManyRetries { attempts, last, .. }) => {
            assert_eq!(attempts, MAX_RETRIES_PER_PAGE + 1);
            assert!(last.contains("HTTP 500"), "{last}");
        }
        other => panic!("{other:?}"),
    }
    assert!(partial.records.is_empty() && !partial.complete);
    assert_eq!(partial.retries, MAX_RETRIES_PER_PAGE);
    assert!(delisted(&previous, &partial).is_empty());
}

// ---- politeness ----

#[tokio::test]
async fn retry_after_on_429_is_honoured() {
    let s = RegistryStandIn::start(synthetic(250)).await.unwrap();
    s.set_faults(Faults {
        fail_every: Some((3, 429, Some(1))),
        ..Faults::default()
    });
    let started = Instant::now();
    let h = harvest(&client(), &fast(&s, Mode::Full)).await.unwrap();
    assert_complete(&h);
    assert_eq!(
        (h.records.len(), h.pages, h.requests, h.retries),
        (250, 3, 4, 1)
    );
    let requests = s.requests();
    let statuses: Vec<u16> = requests.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200, 429, 200]);
    assert_eq!(requests[2].path_and_query, requests[3].path_and_query);
    let gaps = gaps_after(&requests, 429);
    assert!(gaps[0] >= Duration::from_millis(900), "{gaps:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn service_unavailable_backs_off_and_completes() {
    let s = RegistryStandIn::start(synthetic(250)).await.unwrap();
    s.set_faults(Faults {
        fail_every: Some((2, 503, None)),
        ..Faults::default()
    });
    let config = HarvestConfig {
        backoff: Backoff {
            first: Duration::from_millis(150),
            max: Duration::from_millis(150),
        },
        ..fast(&s, Mode::Full)
    };
    let h = harvest(&client(), &config).await.unwrap();
    assert_complete(&h);
    assert_eq!((h.records.len(), h.pages, h.retries), (250, 3, 2));
    let requests = s.requests();
    let statuses: Vec<u16> = requests.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 503, 200, 503, 200]);
    for gap in gaps_after(&requests, 503) {
        assert!(gap >= Duration::from_millis(140), "{gap:?}");
    }

    // A 503 that asks for a wait gets it instead of the back-off.
    s.set_faults(Faults {
        fail_every: Some((2, 503, Some(1))),
        ..Faults::default()
    });
    s.clear_requests();
    let h = harvest(&client(), &fast(&s, Mode::Full)).await;
    assert!(h.unwrap().complete);
    let gaps = gaps_after(&s.requests(), 503);
    assert_eq!(gaps.len(), 2);
    assert!(
        gaps.iter().all(|g| *g >= Duration::from_millis(900)),
        "{gaps:?}"
    );
}

#[tokio::test]
async fn the_default_rate_never_trips_the_registry_limit() {
    let Some((items, _)) = snapshot(DAY2) else {
        return;
    };
    // ~800 latest items: 8 pages, 5 in a burst and 3 paced at 1 request/s.
    let s = RegistryStandIn::start(latest_items(&items, 790))
        .await
        .unwrap();
    s.set_faults(Faults {
        rate_limit: Some((1, 5)),
        ..Faults::default()
    });
    let started = Instant::now();
    let config = HarvestConfig::new(s.url(), Mode::Full);
    assert_eq!(config.rate, Rate::REGISTRY);
    let h = harvest(&client(), &config).await.unwrap();
    let elapsed = started.elapsed();
    assert_complete(&h);
    assert_eq!((h.records.len(), h.pages, h.requests), (790, 8, 8));
    let requests = s.requests();
    assert!(requests.iter().all(|r| r.status == 200), "{requests:?}");
    // The three requests after the burst each waited for a token: the k-th after the burst
    // of five left no earlier than k seconds after the harvest began (a token bucket's
    // property; a gap between two arrivals may be shorter when the one before it was late).
    for (k, r) in requests.iter().enumerate().skip(5) {
        let after = r.at.duration_since(started);
        assert!(
            after >= Duration::from_millis(900) * (k as u32 - 4),
            "{k}: {after:?}"
        );
    }
    assert!(elapsed >= Duration::from_millis(2_900), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
}

#[tokio::test]
async fn a_faster_client_is_limited_and_still_completes() {
    // The stand-in's limit does bite: a client pacing at 200/s gets 429 and waits it out.
    let s = RegistryStandIn::start(synthetic(250)).await.unwrap();
    s.set_faults(Faults {
        rate_limit: Some((1, 2)),
        ..Faults::default()
    });
    let h = harvest(&client(), &fast(&s, Mode::Full)).await.unwrap();
    assert_complete(&h);
    assert_eq!((h.records.len(), h.pages), (250, 3));
    let requests = s.requests();
    let statuses: Vec<u16> = requests.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200, 429, 200]);
    assert!(gaps_after(&requests, 429)[0] >= Duration::from_millis(900));
}

#[tokio::test]
async fn a_long_retry_after_fails_the_harvest() {
    let s = RegistryStandIn::start(synthetic(5)).await.unwrap();
    s.set_faults(Faults {
        fail_every: Some((1, 429, Some(3_600))),
        ..Faults::default()
    });
    let started = Instant::now();
    let error = harvest(&client(), &fast(&s, Mode::Full)).await.unwrap_err();
    assert!(
        matches!(
            error,
            HarvestError::RetryAfterTooLong { seconds: 3_600, .. }
        ),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

// ---- how a harvest stops ----

#[tokio::test]
async fn repeated_cursor_aborts() {
    let s = RegistryStandIn::start(synthetic(250)).await.unwrap();
    s.set_faults(Faults {
        repeat_cursor: true,
        ..Faults::default()
    });
    let error = harvest(&client(), &fast(&s, Mode::Full)).await.unwrap_err();
    assert!(
        matches!(error, HarvestError::RepeatedCursor(ref c) if c == "~repeat"),
        "{error}"
    );
    assert_eq!(s.requests().len(), 2);
}

#[tokio::test]
async fn endless_cursors_stop_at_the_page_limit() {
    let s = RegistryStandIn::start(synthetic(150)).await.unwrap();
    s.set_faults(Faults {
        endless: true,
        ..Faults::default()
    });
    let config = HarvestConfig {
        page_limit: 5,
        ..fast(&s, Mode::Full)
    };
    let (h, error) = harvest_partial(&client(), &config).await;
    assert!(
        matches!(error, Some(HarvestError::TooManyPages(5))),
        "{error:?}"
    );
    assert_eq!((h.pages, h.records.len(), h.complete), (5, 150, false));
    assert_eq!(s.requests().len(), 5);
}

#[tokio::test]
async fn a_garbage_page_is_a_clear_error() {
    let s = RegistryStandIn::start(synthetic(5)).await.unwrap();
    s.set_faults(Faults {
        garbage: true,
        ..Faults::default()
    });
    let error = harvest(&client(), &fast(&s, Mode::Full)).await.unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(
            error,
            HarvestError::Page {
                page: 0,
                error: registry::RegistryError::Json(_),
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains("is not a registry page: not valid JSON"),
        "{text}"
    );
    assert!(
        text.contains("/v0.1/servers?limit=100&version=latest"),
        "{text}"
    );
}

#[tokio::test]
async fn a_malformed_item_keeps_the_others() {
    let mut items = synthetic(150);
    // Sorted between s0099 and s0100: page 1, index 0. Its name is readable, its version missing.
    items.push(
        json!({"server": {"name": "com.example/s0099x", "description": "no version"},
        "_meta": {"io.modelcontextprotocol.registry/official": {"isLatest": true}}}),
    );
    let s = RegistryStandIn::start(items).await.unwrap();
    let h = harvest(&client(), &fast(&s, Mode::Full)).await.unwrap();
    assert!(h.complete);
    assert_eq!(h.records.len(), 150);
    assert_eq!(h.rejected.len(), 1);
    let (page, index, reason) = &h.rejected[0];
    assert_eq!((*page, *index), (1, 0));
    assert!(reason.contains("version"), "{reason}");
    assert_eq!(
        h.rejected_names,
        BTreeSet::from(["com.example/s0099x".to_owned()])
    );
    assert_eq!(h.rejected_unnamed, 0);
    // Its server is not delisted: the registry still lists it.
    let previous = BTreeSet::from([
        "com.example/s0099x".to_owned(),
        "com.example/gone".to_owned(),
    ]);
    assert_eq!(delisted(&previous, &h), ["com.example/gone"]);

    // An item with no readable name could be any server: nothing is delisted.
    s.modify(|items| {
        items.push(json!({"server": {"name": 7},
            "_meta": {"io.modelcontextprotocol.registry/official": {"isLatest": true}}}))
    });
    let h = harvest(&client(), &fast(&s, Mode::Full)).await.unwrap();
    assert_eq!((h.records.len(), h.rejected_unnamed), (150, 1));
    assert!(delisted(&previous, &h).is_empty());
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let s = RegistryStandIn::start(synthetic(5)).await.unwrap();
    let config = HarvestConfig {
        base_url: format!("{}/elsewhere", s.url()),
        ..fast(&s, Mode::Full)
    };
    let error = harvest(&client(), &config).await.unwrap_err();
    match &error {
        HarvestError::Http {
            status: 404,
            url,
            detail,
        } => {
            assert!(url.contains("/elsewhere/v0.1/servers?"), "{url}");
            assert!(detail.contains("no such endpoint"), "{detail}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(s.requests().len(), 1);

    // A bad timestamp is the registry's 400, not retried either.
    let error = harvest(&client(), &fast(&s, Mode::Since("yesterday".into())))
        .await
        .unwrap_err();
    assert!(
        matches!(error, HarvestError::Http { status: 400, .. }),
        "{error}"
    );
    assert_eq!(s.requests().len(), 2);

    let config = HarvestConfig::new("not a url", Mode::Full);
    let error = harvest(&client(), &config).await.unwrap_err();
    assert!(matches!(error, HarvestError::Config(_)), "{error}");
    let config = HarvestConfig {
        rate: Rate {
            per_second: 0.0,
            burst: 5,
        },
        ..fast(&s, Mode::Full)
    };
    let error = harvest(&client(), &config).await.unwrap_err();
    assert!(matches!(error, HarvestError::Config(_)), "{error}");
}

#[tokio::test]
async fn the_whole_harvest_has_one_deadline() {
    let s = RegistryStandIn::start(synthetic(5)).await.unwrap();
    s.set_faults(Faults {
        latency: Duration::from_secs(3),
        ..Faults::default()
    });
    let config = HarvestConfig {
        timeout: Duration::from_millis(300),
        ..fast(&s, Mode::Full)
    };
    let started = Instant::now();
    let (h, error) = harvest_partial(&client(), &config).await;
    assert!(matches!(error, Some(HarvestError::Timeout(_))), "{error:?}");
    assert!(!h.complete && h.requests == 1);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn network_failures_are_retried_then_reported() {
    // A port that was just bound and released: connections are refused.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let config = HarvestConfig {
        rate: Rate {
            per_second: 200.0,
            burst: 20,
        },
        backoff: Backoff {
            first: Duration::from_millis(10),
            max: Duration::from_millis(20),
        },
        timeout: Duration::from_secs(10),
        ..HarvestConfig::new(format!("http://127.0.0.1:{port}"), Mode::Full)
    };
    let (h, error) = harvest_partial(&client(), &config).await;
    match error {
        Some(HarvestError::TooManyRetries { attempts, last, .. }) => {
            assert_eq!(attempts, MAX_RETRIES_PER_PAGE + 1);
            assert!(last.starts_with("network: "), "{last}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.requests, MAX_RETRIES_PER_PAGE + 1);
}
