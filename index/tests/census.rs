//! The sensitive-tool census: derived when a target's current tool set changes, reproduced by a
//! rebuild and by a catch-up of a database that has none, and used by the target search.

mod support;

use serde_json::json;
use support::*;
use toolmark_index::{Index, SensitiveFilter, TargetFilter};
use toolmark_observation::observe::Observation;
use toolmark_observation::registry::Record;

const FILES: &str = "https://files.example.com/mcp";
const MEMORY_URL: &str = "https://memory.example.com/mcp";
const FETCHER: &str = "https://fetch.example.com/mcp";

fn registry() -> Vec<Record> {
    records(json!([
        {"name": "io.example/files", "version": "1.0.0", "title": "Files",
         "remotes": [{"type": "streamable-http", "url": FILES}]},
        {"name": "io.example/memory", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": MEMORY_URL}]},
        {"name": "io.example/fetch", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": FETCHER}]}
    ]))
}

fn day_one(url: &str) -> Option<Observation> {
    let page = match url {
        FILES => FILESYSTEM,
        MEMORY_URL => MEMORY,
        _ => FETCH,
    };
    Some(ok(day(0, 10), vec![corpus_page(page)]))
}

fn listed(index: &Index, sensitive: Option<SensitiveFilter>) -> Vec<String> {
    let filter = TargetFilter {
        sensitive,
        ..TargetFilter::default()
    };
    let page = index.search_targets(&filter, 100, 0).unwrap();
    assert_eq!(page.total as usize, page.targets.len());
    page.targets.into_iter().map(|t| t.target.server).collect()
}

/// (category, tools) of a target's census.
fn census(index: &Index, id: &str) -> Vec<(String, Vec<String>)> {
    index
        .target_census(id)
        .unwrap()
        .into_iter()
        .map(|c| {
            assert_eq!(c.tool_count as usize, c.tools.len());
            (c.category, c.tools)
        })
        .collect()
}

fn cat(c: &str, tools: &[&str]) -> (String, Vec<String>) {
    (c.to_owned(), tools.iter().map(|t| t.to_string()).collect())
}

#[test]
fn the_census_is_derived_from_each_current_tool_set() {
    let mut env = Env::new("census-derived");
    env.run(&day_str(0, 0), &registry(), &[], day_one);
    let files = target_id(&env.index, "io.example/files");
    assert_eq!(
        census(&env.index, &files),
        [cat(
            "files-and-storage",
            &["write_file", "edit_file", "create_directory", "move_file"]
        )]
    );
    let memory = target_id(&env.index, "io.example/memory");
    assert_eq!(
        census(&env.index, &memory),
        [cat(
            "destructive-database",
            &["delete_entities", "delete_observations", "delete_relations"]
        )]
    );
    // `fetch` is a read: nothing.
    assert!(census(&env.index, &target_id(&env.index, "io.example/fetch")).is_empty());
    let summary = env.index.census_summary().unwrap();
    assert_eq!(summary.policy.as_deref(), Some("starter/1"));
    assert_eq!(summary.observed_targets, 3);
    assert_eq!((summary.any.targets, summary.any.servers), (2, 2));
    let counts: Vec<(&str, u64)> = summary
        .categories
        .iter()
        .map(|c| (c.category.as_str(), c.targets))
        .collect();
    assert_eq!(
        counts,
        [
            ("money", 0),
            ("email-and-messaging", 0),
            ("destructive-database", 1),
            ("external-writes", 0),
            ("files-and-storage", 1),
            ("admin", 0)
        ]
    );
    // The listing carries each target's categories.
    let page = env
        .index
        .search_targets(&TargetFilter::default(), 10, 0)
        .unwrap();
    let cats: Vec<(&str, Vec<String>)> = page
        .targets
        .iter()
        .map(|t| (t.target.server.as_str(), t.sensitive.clone()))
        .collect();
    assert_eq!(
        cats,
        [
            ("io.example/fetch", vec![]),
            ("io.example/files", vec!["files-and-storage".to_owned()]),
            ("io.example/memory", vec!["destructive-database".to_owned()]),
        ]
    );
}

#[test]
fn a_new_current_tool_set_replaces_the_census() {
    let mut env = Env::new("census-follows");
    env.run(&day_str(0, 0), &registry(), &[], day_one);
    // Day two: the fetch server now serves the filesystem's tools; memory fails (its census,
    // that of its current `ok` set, stays).
    env.run(&day_str(1, 0), &registry(), &[], |url| match url {
        FETCHER => Some(ok(day(1, 10), vec![corpus_page(FILESYSTEM)])),
        MEMORY_URL => Some(failed(
            day(1, 10),
            toolmark_observation::observe::Status::Timeout,
            "slow",
        )),
        _ => later(day_one(url), 1),
    });
    let fetch = target_id(&env.index, "io.example/fetch");
    assert_eq!(
        census(&env.index, &fetch)[0].0,
        "files-and-storage".to_owned()
    );
    assert_eq!(
        env.index.target_census(&fetch).unwrap()[0].entry,
        env.index
            .target(&fetch)
            .unwrap()
            .unwrap()
            .last_ok_entry
            .unwrap()
    );
    assert_eq!(
        census(&env.index, &target_id(&env.index, "io.example/memory"))[0].0,
        "destructive-database"
    );
    assert_eq!(env.index.census_summary().unwrap().any.targets, 3);
}

#[test]
fn the_servers_filter_keeps_targets_by_category() {
    let mut env = Env::new("census-filter");
    env.run(&day_str(0, 0), &registry(), &[], day_one);
    assert_eq!(
        listed(&env.index, None),
        ["io.example/fetch", "io.example/files", "io.example/memory"]
    );
    assert_eq!(
        listed(&env.index, Some(SensitiveFilter::Any)),
        ["io.example/files", "io.example/memory"]
    );
    assert_eq!(
        listed(&env.index, SensitiveFilter::parse("files-and-storage")),
        ["io.example/files"]
    );
    assert!(listed(&env.index, SensitiveFilter::parse("money")).is_empty());
    assert!(SensitiveFilter::parse("Money").is_none());
    assert!(SensitiveFilter::parse("everything").is_none());
    // With a search too: both conditions and their arguments.
    let filter = TargetFilter {
        q: "files".into(),
        sensitive: SensitiveFilter::parse("files-and-storage"),
        ..TargetFilter::default()
    };
    assert_eq!(env.index.search_targets(&filter, 10, 0).unwrap().total, 1);
    let filter = TargetFilter {
        q: "memory".into(),
        sensitive: SensitiveFilter::parse("files-and-storage"),
        ..TargetFilter::default()
    };
    assert_eq!(env.index.search_targets(&filter, 10, 0).unwrap().total, 0);
}

#[test]
fn a_rebuild_reproduces_the_census() {
    let mut env = Env::new("census-rebuild");
    env.run(&day_str(0, 0), &registry(), &[], day_one);
    let before = env.index.census_summary().unwrap();
    let ids: Vec<String> = ["io.example/files", "io.example/memory", "io.example/fetch"]
        .iter()
        .map(|s| target_id(&env.index, s))
        .collect();
    let rows: Vec<_> = ids
        .iter()
        .map(|id| env.index.target_census(id).unwrap())
        .collect();
    env.index.rebuild(&env.log, &env.blobs).unwrap();
    assert_eq!(env.index.census_summary().unwrap(), before);
    let again: Vec<_> = ids
        .iter()
        .map(|id| env.index.target_census(id).unwrap())
        .collect();
    assert_eq!(again, rows);
}

#[test]
fn a_database_without_a_census_gets_one_on_catch_up() {
    let mut env = Env::new("census-migrated");
    // Two days of the same sets: the newest `ok` entry is not the one each set became current.
    env.run(&day_str(0, 0), &registry(), &[], day_one);
    env.run(&day_str(1, 0), &registry(), &[], day_one);
    let before = env.index.census_summary().unwrap();
    let ids: Vec<String> = ["io.example/files", "io.example/fetch"]
        .iter()
        .map(|s| target_id(&env.index, s))
        .collect();
    let rows_before: Vec<_> = ids
        .iter()
        .map(|id| env.index.target_census(id).unwrap())
        .collect();
    assert!(rows_before.iter().any(|r| !r.is_empty()));
    // As a database migrated from version 4 is: the table empty, no policy recorded.
    {
        let conn = rusqlite::Connection::open(env.dir.join("index.sqlite")).unwrap();
        conn.execute_batch(
            "DELETE FROM target_sensitive; DELETE FROM meta WHERE key = 'census_policy';",
        )
        .unwrap();
    }
    env.index = Index::open(&env.dir.join("index.sqlite")).unwrap();
    assert_eq!(env.index.census_summary().unwrap().any.targets, 0);
    assert_eq!(env.index.census_summary().unwrap().policy, None);
    assert_eq!(env.index.catch_up(&env.log, &env.blobs).unwrap(), 0);
    assert_eq!(env.index.census_summary().unwrap(), before);
    // The same rows, entries included, as the derivation wrote.
    let rows_after: Vec<_> = ids
        .iter()
        .map(|id| env.index.target_census(id).unwrap())
        .collect();
    assert_eq!(rows_after, rows_before);
}
