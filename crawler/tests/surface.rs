//! The surface beyond `tools/list` observed from stand-ins for what no real server shows: the
//! lists and their paging, the Server Card at either location, `Deprecation` and `Sunset`,
//! `private` cache scope, and hostile surfaces costing no more than their named limits. Real
//! servers' surfaces are in `real_servers.rs`.

mod support;

use std::time::{Duration, Instant};

use toolmark_crawler::mcp::{self, ClientConfig};
use toolmark_crawler::observe::{Observation, Status};
use toolmark_standins::fleet::surface::{self, CardLocation, Hostile, Surface};
use toolmark_toolset::surface::{Kind, KindDigest, RawSurface, digests};

use support::serving;

async fn observe(config: &ClientConfig, url: &str) -> Observation {
    mcp::observe(config, url, "streamable-http").await
}

fn surface_of(obs: &Observation) -> &RawSurface {
    assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
    obs.surface.as_ref().expect("the surface was read")
}

#[tokio::test]
async fn an_honest_surface_is_read_whole_with_its_paged_list_and_its_card() {
    let (fleet, url) = serving(Surface::honest()).await;
    let obs = observe(&support::lax(), &url).await;
    let s = surface_of(&obs);
    let resources = s.resources.as_ref().unwrap();
    assert_eq!(resources.status, "ok");
    assert_eq!(resources.pages.len(), 2, "the resources come in two pages");
    assert_eq!(s.prompts.as_ref().unwrap().status, "ok");
    assert_eq!(s.resource_templates.as_ref().unwrap().status, "ok");
    let card = s.card.as_ref().unwrap();
    assert_eq!(card.status, "ok", "{}", card.detail);
    assert!(card.url.ends_with(surface::WELL_KNOWN_CARD), "{}", card.url);
    let counts: Vec<(Kind, u64)> = digests(s)
        .into_iter()
        .filter_map(|(k, d)| match d {
            KindDigest::Read { count, .. } => Some((k, count)),
            KindDigest::Unread(_) => None,
        })
        .collect();
    assert!(counts.contains(&(Kind::Prompts, 2)), "{counts:?}");
    assert!(counts.contains(&(Kind::Resources, 3)), "{counts:?}");
    assert!(counts.contains(&(Kind::Templates, 1)), "{counts:?}");
    assert!(counts.contains(&(Kind::Card, 1)), "{counts:?}");
    let asked = fleet.requests();
    assert_eq!(asked.resources_list, 2);
    assert_eq!(asked.prompts_list, 1);
}

#[tokio::test]
async fn a_card_beside_the_endpoint_is_found_after_the_origin_has_none() {
    let mut s = Surface::honest();
    s.card.as_mut().unwrap().location = CardLocation::Endpoint;
    let (_fleet, url) = serving(s).await;
    let obs = observe(&support::lax(), &url).await;
    let card = surface_of(&obs).card.as_ref().unwrap();
    assert_eq!(card.status, "ok", "{}", card.detail);
    assert_eq!(card.url, format!("{url}{}", surface::CARD_SUFFIX));
}

#[tokio::test]
async fn a_server_without_a_card_has_it_recorded_as_absent() {
    let (_fleet, url) = serving(Surface::sunset()).await;
    let obs = observe(&support::lax(), &url).await;
    let card = surface_of(&obs).card.as_ref().unwrap();
    assert_eq!(card.status, "absent");
    assert!(card.body.is_none());
}

#[tokio::test]
async fn deprecation_and_sunset_headers_are_kept_as_sent() {
    let (_fleet, url) = serving(Surface::sunset()).await;
    let obs = observe(&support::lax(), &url).await;
    let d = obs.dialled().unwrap();
    assert_eq!(d.deprecation.as_deref(), Some("@1767225600"));
    assert_eq!(d.sunset.as_deref(), Some("Thu, 31 Dec 2026 23:59:59 GMT"));
}

#[tokio::test]
async fn a_private_cache_scope_on_tools_list_is_kept_in_the_page() {
    let (_fleet, url) = serving(Surface::private_scope()).await;
    let obs = observe(&support::lax(), &url).await;
    assert_eq!(obs.status, Status::Ok);
    let hints = toolmark_toolset::surface::cache::CacheHints::of_pages(&obs.pages);
    assert_eq!(
        hints.scope,
        Some(toolmark_toolset::surface::cache::Scope::Private)
    );
    assert_eq!(hints.ttl_ms, Some(30_000));
}

#[tokio::test]
async fn the_surface_off_reads_nothing_beyond_the_tools() {
    let (fleet, url) = serving(Surface::honest()).await;
    let mut config = support::lax();
    config.limits.surface = false;
    let obs = observe(&config, &url).await;
    assert_eq!(obs.status, Status::Ok);
    assert_eq!(obs.surface, None);
    let asked = fleet.requests();
    assert_eq!(
        (asked.prompts_list, asked.resources_list, asked.cards),
        (0, 0, 0)
    );
}

#[tokio::test]
async fn endless_resource_pages_end_as_partial_at_the_page_cap() {
    let (_fleet, url) = serving(Surface::hostile(Hostile::EndlessResources)).await;
    let obs = observe(&support::lax(), &url).await;
    let resources = surface_of(&obs).resources.as_ref().unwrap();
    assert_eq!(resources.status, "partial");
    assert_eq!(
        resources.detail,
        format!(
            "more than {} resources/list pages",
            toolmark_crawler::limits::MAX_SURFACE_PAGES
        )
    );
}

#[tokio::test]
async fn a_huge_card_ends_as_too_large_and_is_not_kept() {
    let (_fleet, url) = serving(Surface::hostile(Hostile::HugeCard)).await;
    let obs = observe(&support::lax(), &url).await;
    let card = surface_of(&obs).card.as_ref().unwrap();
    assert_eq!(card.status, "too-large", "{}", card.detail);
    assert!(card.body.is_none());
}

#[tokio::test]
async fn a_stalled_card_costs_at_most_its_timeout_per_location() {
    let (_fleet, url) = serving(Surface::hostile(Hostile::StalledCard)).await;
    let started = Instant::now();
    let obs = observe(&support::lax(), &url).await;
    let card = surface_of(&obs).card.as_ref().unwrap();
    assert_eq!(card.status, "timeout", "{}", card.detail);
    // Two locations at most, each bounded.
    assert!(
        started.elapsed() < toolmark_crawler::limits::CARD_TIMEOUT * 2 + Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// Crawls the remote `url` on each of the 7 days from day 20,000 with `hint`, and
/// says for each day whether its observation read the surface and made the second look.
async fn a_week_of_crawls(
    url: &str,
    hint: Option<toolmark_crawler::crawl::Hint>,
) -> Vec<(bool, bool)> {
    use std::collections::HashMap;
    use std::sync::Arc;
    use toolmark_crawler::crawl::{self, CrawlConfig};
    let mut week = Vec::new();
    for d in 0..7 {
        let mut config = CrawlConfig {
            day: 20_000 + d,
            hints: Arc::new(
                hint.map(|h| (url.to_owned(), h))
                    .into_iter()
                    .collect::<HashMap<_, _>>(),
            ),
            ..CrawlConfig::default()
        };
        config.client.policy.allow_private = true;
        let mut looked = None;
        crawl::crawl(
            &config,
            vec![support::streamable_target(
                "io.example/rotating",
                url.to_owned(),
            )],
            |outcome| {
                let obs = outcome.observation.as_ref().expect("observed");
                assert_eq!(obs.status, Status::Ok, "{}", obs.detail);
                looked = Some((obs.surface.is_some(), obs.second.is_some()));
            },
        )
        .await;
        week.push(looked.expect("one outcome"));
    }
    week
}

#[tokio::test]
async fn a_surface_read_before_is_read_again_one_crawl_in_seven_and_a_new_one_at_once() {
    let (fleet, url) = serving(Surface::honest()).await;
    let read_before = toolmark_crawler::crawl::Hint {
        surface_read: true,
        ..Default::default()
    };
    let week = a_week_of_crawls(&url, Some(read_before)).await;
    let surface_days: Vec<usize> = (0..7).filter(|&d| week[d].0).collect();
    let second_days: Vec<usize> = (0..7).filter(|&d| week[d].1).collect();
    assert_eq!((surface_days.len(), second_days.len()), (1, 1), "{week:?}");
    assert_ne!(surface_days, second_days, "{week:?}");
    let prompts_asked = fleet.requests().prompts_list;
    assert_eq!(prompts_asked, 1, "prompts/list only on the surface's day");
    // Never read (no hint: a remote first seen): every crawl reads it and looks twice.
    let week = a_week_of_crawls(&url, None).await;
    assert_eq!(week, vec![(true, true); 7]);
}
