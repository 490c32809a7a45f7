//! The index's typed reads: the one target search (what `/api/v1/servers` and the desk both
//! list) and the current tool set read back verified against the indexed digest.

mod support;

use serde_json::json;
use support::*;
use toolmark_index::{IndexError, TargetFilter, TargetState};
use toolmark_observation::observe::Observation;
use toolmark_observation::registry::Record;

const FILES: &str = "https://files.example.com/mcp";
const WEATHER: &str = "https://weather.example.com/mcp";
const PLAIN: &str = "https://plain.example.com/mcp";

fn registry() -> Vec<Record> {
    records(json!([
        {"name": "io.example/files", "version": "1.0.0", "title": "Files",
         "description": "Reads 100% of your_files",
         "remotes": [{"type": "streamable-http", "url": FILES}]},
        {"name": "io.example/weather", "version": "1.0.0",
         "description": "Forecasts by the hour",
         "remotes": [{"type": "streamable-http", "url": WEATHER}]},
        {"name": "io.example/plain", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": PLAIN}]}
    ]))
}

fn observe(url: &str) -> Option<Observation> {
    let page = if url == FILES { FILESYSTEM } else { MEMORY };
    Some(ok(day(0, 10), vec![corpus_page(page)]))
}

fn env(tag: &str) -> Env {
    let mut env = Env::new(tag);
    env.run(&day_str(0, 0), &registry(), &[], observe);
    env
}

/// The server names `q` finds, in page order.
fn found(env: &Env, q: &str) -> Vec<String> {
    let filter = TargetFilter {
        q: q.into(),
        state: TargetState::All,
        sensitive: None,
    };
    let page = env.index.search_targets(&filter, 100, 0).unwrap();
    assert_eq!(page.total as usize, page.targets.len());
    page.targets.into_iter().map(|t| t.target.server).collect()
}

#[test]
fn the_search_matches_name_endpoint_title_or_description_in_any_ascii_case() {
    let env = env("search-fields");
    let all = ["io.example/files", "io.example/plain", "io.example/weather"];
    assert_eq!(found(&env, ""), all);
    assert_eq!(found(&env, "IO.EXAMPLE/"), all);
    assert_eq!(found(&env, " \t "), all);
    assert_eq!(found(&env, "  plain\n"), ["io.example/plain"], "trimmed");
    assert_eq!(found(&env, "PLAIN"), ["io.example/plain"], "name");
    assert_eq!(
        found(&env, "weather.example.COM/mcp"),
        ["io.example/weather"],
        "endpoint"
    );
    assert_eq!(found(&env, "fILES"), ["io.example/files"], "title");
    assert_eq!(
        found(&env, "by the HOUR"),
        ["io.example/weather"],
        "description"
    );
    assert!(found(&env, "nothing-like-this").is_empty());
}

#[test]
fn like_wildcards_in_the_search_are_literal() {
    let env = env("search-wildcards");
    assert_eq!(found(&env, "%"), ["io.example/files"]);
    assert_eq!(found(&env, "100%"), ["io.example/files"]);
    assert_eq!(found(&env, "your_files"), ["io.example/files"]);
    // As wildcards these would match "100%" and "your files"-like text.
    assert!(found(&env, "1_0").is_empty());
    assert!(found(&env, "10%o").is_empty());
    assert!(found(&env, "\\").is_empty());
}

#[test]
fn the_search_pages_and_counts_within_a_state() {
    let env = env("search-page");
    let filter = TargetFilter {
        q: "example".into(),
        state: TargetState::Observed,
        sensitive: None,
    };
    let page = env.index.search_targets(&filter, 1, 1).unwrap();
    assert_eq!(page.total, 3);
    let names: Vec<&str> = page
        .targets
        .iter()
        .map(|t| t.target.server.as_str())
        .collect();
    assert_eq!(names, ["io.example/plain"]);
    let failing = TargetFilter {
        q: String::new(),
        state: TargetState::Failing,
        sensitive: None,
    };
    assert_eq!(env.index.search_targets(&failing, 10, 0).unwrap().total, 0);
    // An offset past every row is an empty page, however large.
    let far = env
        .index
        .search_targets(&TargetFilter::default(), 10, u64::MAX)
        .unwrap();
    assert_eq!((far.total, far.targets.len()), (3, 0));
}

fn files_target(env: &Env) -> toolmark_index::index::TargetRow {
    let id = env.index.targets_of("io.example/files").unwrap()[0]
        .id
        .clone();
    env.index.target(&id).unwrap().unwrap()
}

#[test]
fn the_current_tool_set_is_read_from_its_document_and_verified() {
    let env = env("current");
    let t = files_target(&env);
    let at = t.current_tool_set().unwrap().unwrap();
    assert_eq!(Some(at.entry), t.last_ok_entry);
    assert_eq!(Some(&at.full), t.current_full.as_ref());
    let read = at.read(&env.blobs).unwrap();
    assert_eq!(read.set.tools.len() as u64, t.current_tools.unwrap());
    assert_eq!(
        toolmark_toolset::full::digest(&read.set).to_string(),
        at.full
    );
    assert_eq!(
        read.document_bytes,
        env.blobs.size(&at.document).unwrap().unwrap()
    );
}

#[test]
fn a_target_never_observed_ok_has_no_current_tool_set() {
    let mut env = Env::new("current-none");
    env.run(&day_str(0, 0), &registry(), &[], |_| {
        Some(failed(
            day(0, 1),
            toolmark_observation::observe::Status::Timeout,
            "slow",
        ))
    });
    assert_eq!(files_target(&env).current_tool_set().unwrap(), None);
}

#[test]
fn a_tool_set_whose_digest_is_not_the_indexed_one_is_refused() {
    let env = env("current-mismatch");
    // The index row names the document but records another target's digest.
    let other = env.index.targets_of("io.example/plain").unwrap()[0]
        .current_full
        .clone();
    rusqlite::Connection::open(env.dir.join("index.sqlite"))
        .unwrap()
        .execute(
            "UPDATE targets SET current_full = ?1 WHERE id = ?2",
            (&other, &files_target(&env).id),
        )
        .unwrap();
    let t = files_target(&env);
    assert_eq!(t.current_full, other);
    let at = t.current_tool_set().unwrap().unwrap();
    match at.read(&env.blobs) {
        Err(IndexError::ToolSetDigest {
            entry,
            found,
            indexed,
            ..
        }) => {
            assert_eq!(Some(entry), t.last_ok_entry);
            assert_eq!(Some(indexed), other);
            assert_ne!(Some(found), other);
        }
        other => panic!("expected a digest mismatch, got {other:?}"),
    }
}

#[test]
fn a_current_tool_set_whose_document_is_gone_is_refused() {
    let env = env("current-missing");
    let at = files_target(&env).current_tool_set().unwrap().unwrap();
    env.blobs
        .objects()
        .delete(&toolmark_index::Blobs::key_of(&at.document))
        .unwrap();
    assert!(matches!(
        at.read(&env.blobs),
        Err(IndexError::MissingBlob { entry, .. }) if entry == at.entry
    ));
}

/// `unchanged_since` over a history of A, A, timeout, A, B, B, A: the start of each run of
/// equal `ok` sets, a failure not breaking a run.
#[test]
fn unchanged_since_is_the_first_observation_of_the_current_run_of_equal_sets() {
    use toolmark_observation::observe::Status;
    let mut env = Env::new("unchanged-since");
    let recs = records(json!([{"name": "io.example/one", "version": "1",
        "remotes": [{"type": "streamable-http", "url": PLAIN}]}]));
    let history = [
        Some(ALFRESCO),
        Some(ALFRESCO),
        None,
        Some(ALFRESCO),
        Some(FETCH),
        Some(FETCH),
        Some(ALFRESCO),
    ];
    // After each day: the day the current run of equal sets began.
    let want = [0, 0, 0, 0, 4, 4, 6];
    for (d, set) in history.iter().enumerate() {
        let d = d as u64;
        env.run(&day_str(d, 0), &recs, &[], |_| {
            Some(match set {
                Some(page) => ok(day(d, 5), vec![corpus_page(page)]),
                None => failed(day(d, 5), Status::Timeout, "connect timeout"),
            })
        });
        let t = env.index.targets_of("io.example/one").unwrap().remove(0);
        let (current, full) = (t.last_ok_entry.unwrap(), t.current_full.unwrap());
        assert_eq!(
            env.index.unchanged_since(&t.id, current, &full).unwrap(),
            Some(day_str(want[d as usize], 5)),
            "after day {d}"
        );
        // Another digest, or an entry that is not that digest's, has no run.
        let other = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
        assert_eq!(
            env.index.unchanged_since(&t.id, current, other).unwrap(),
            None
        );
    }
    // The run that ended: entry 5 (day 5, FETCH) began on day 4.
    let t = env.index.targets_of("io.example/one").unwrap().remove(0);
    let fetch = env.index.observation(5).unwrap().unwrap().full.unwrap();
    assert_eq!(
        env.index.unchanged_since(&t.id, 5, &fetch).unwrap(),
        Some(day_str(4, 5))
    );
    // A failure entry is no current set.
    assert_eq!(env.index.unchanged_since(&t.id, 2, &fetch).unwrap(), None);
}
