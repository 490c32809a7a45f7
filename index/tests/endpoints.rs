//! Endpoint identity keeps the query (issue #25 §2): two registry remotes that differ only in
//! their query are two targets, found apart by their keys, after recording, after
//! `Index::rebuild` and in an index derived from the log alone. Real registry data: Hugging
//! Face's record lists `https://huggingface.co/mcp` and `https://huggingface.co/mcp?login`.

mod support;

use support::*;
use toolmark_index::Index;
use toolmark_log::entry::TargetId;

/// The two remotes serve different sets: `?login` the memory set, the plain one the fetch set.
fn recorded(tag: &str) -> Env {
    let mut env = Env::new(tag);
    env.run(&day_str(0, 0), &huggingface(), &[], |url| {
        Some(match url {
            HF_LOGIN => ok(day(0, 5), vec![corpus_page(MEMORY)]),
            _ => ok(day(0, 5), vec![corpus_page(FETCH)]),
        })
    });
    env
}

fn two_targets(index: &Index) {
    let targets = index.targets_of(HF_SERVER).unwrap();
    let mut urls: Vec<&str> = targets.iter().map(|t| t.target.as_str()).collect();
    urls.sort();
    assert_eq!(urls, [HF_PLAIN, HF_LOGIN]);
    for url in [HF_PLAIN, HF_LOGIN] {
        let found = index.find_target_by_key(url).unwrap();
        assert_eq!(found.len(), 1, "{url}");
        assert_eq!(found[0].target, url);
        assert_eq!(found[0].id, TargetId::of(HF_SERVER, url).to_string());
        assert!(
            found[0].current_full.is_some(),
            "{url} has its own tool set"
        );
    }
    let plain = &index.find_target_by_key(HF_PLAIN).unwrap()[0];
    let login = &index.find_target_by_key(HF_LOGIN).unwrap()[0];
    assert_ne!(plain.current_full, login.current_full);
    // Asked without a query, both are candidates, the query-less one first; with the query,
    // only its own.
    let (both, count) = index
        .targets_at("HTTPS://HuggingFace.co/mcp/", None, 10)
        .unwrap();
    assert_eq!(count, 2);
    assert_eq!(
        both.iter().map(|t| t.target.as_str()).collect::<Vec<_>>(),
        [HF_PLAIN, HF_LOGIN]
    );
    let (one, count) = index.targets_at(HF_LOGIN, None, 10).unwrap();
    assert_eq!((count, one[0].target.as_str()), (1, HF_LOGIN));
}

#[test]
fn two_remotes_differing_only_in_their_query_are_two_targets() {
    let env = recorded("endpoints-recorded");
    two_targets(&env.index);
}

#[test]
fn they_stay_two_targets_after_a_rebuild() {
    let mut env = recorded("endpoints-rebuild");
    env.index.rebuild(&env.log, &env.blobs).unwrap();
    two_targets(&env.index);
}

#[test]
fn an_index_derived_from_the_log_alone_has_the_two_targets() {
    let env = recorded("endpoints-fresh");
    let mut fresh = Index::open(&env.dir.join("fresh.sqlite")).unwrap();
    fresh.catch_up(&env.log, &env.blobs).unwrap();
    two_targets(&fresh);
}

/// The stats count the two as two endpoints of one host, and a bare host's key with a query
/// (`https://bare.example.com?x`, no `/` before the `?`) is counted under its host.
#[test]
fn a_query_makes_another_endpoint_of_the_same_host() {
    let mut env = recorded("endpoints-hosts");
    let bare = records(serde_json::json!([{
        "name": "io.example/bare", "description": "a bare host", "version": "1",
        "remotes": [{"type": "streamable-http", "url": "https://bare.example.com/?x"}],
    }]));
    env.run(&day_str(0, 10), &bare, &[], |_| {
        Some(ok(day(0, 15), vec![corpus_page(MEMORY)]))
    });
    let hosts = env.index.hosts_by_endpoints(10).unwrap();
    let counts: Vec<(&str, u64)> = hosts
        .hosts
        .iter()
        .map(|h| (h.host.as_str(), h.endpoints))
        .collect();
    assert_eq!(counts, [("huggingface.co", 2), ("bare.example.com", 1)]);
    assert_eq!(hosts.distinct_hosts, 2);
}

/// `targets_at` counts every target answering the question whether the rows stop at the limit
/// (the count read by its own query) or fall short of it (the rows are all of them).
#[test]
fn targets_at_counts_every_target_whatever_the_limit() {
    let env = recorded("endpoints-limit");
    for (limit, rows) in [(1, 1), (2, 2), (3, 2), (10, 2)] {
        let (got, count) = env
            .index
            .targets_at("https://huggingface.co/mcp", None, limit)
            .unwrap();
        assert_eq!((got.len(), count), (rows, 2), "limit {limit}");
        assert_eq!(got[0].target, HF_PLAIN, "limit {limit}");
    }
    let (got, count) = env.index.targets_at(HF_LOGIN, None, 1).unwrap();
    assert_eq!((got.len(), count), (1, 1));
    let (got, count) = env
        .index
        .targets_at(HF_PLAIN, Some("io.example/other"), 1)
        .unwrap();
    assert_eq!((got.len(), count), (0, 0));
}
