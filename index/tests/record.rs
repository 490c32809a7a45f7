//! Recording crawl runs into a real log, blob store and SQLite index.

mod support;

use serde_json::json;
use support::*;
use toolmark_index::document::{DocTarget, DocVia, Document};
use toolmark_index::record::{MISMATCHED, NOT_LOGGED, NOT_OBSERVED};
use toolmark_index::{BlobError, Blobs, IndexError, RunInput, RunStatus, TargetOutcome};
use toolmark_log::entry::{self, Entry, Subject};
use toolmark_observation::observe::{Observation, Sandboxed, Status, Via};
use toolmark_observation::registry::{Record, TargetKind};
use toolmark_toolset::Sri;

const ALPHA: &str = "https://alpha.example.com/mcp";
const BETA: &str = "https://beta.example.com/mcp";
const DELTA: &str = "https://delta.example.com/sse";
const GAMMA: &str = "https://gamma.example.com/mcp";
const GAMMA_TEMPLATED: &str = "https://{tenant}.gamma.example.com/mcp";

fn registry() -> Vec<Record> {
    records(json!([
        {"name": "io.example/alpha", "version": "1.0.0", "title": "Alpha",
         "description": "Files", "repository": {"url": "https://github.com/example/alpha"},
         "remotes": [{"type": "streamable-http", "url": ALPHA}],
         "packages": [{"registryType": "npm", "identifier": "@example/alpha",
                       "version": "1.0.0", "transport": {"type": "stdio"}}]},
        {"name": "io.example/beta", "version": "2.0.0",
         "remotes": [{"type": "streamable-http", "url": BETA}],
         "packages": [{"registryType": "oci", "identifier": "ghcr.io/example/beta",
                       "version": "2.0.0"}]},
        {"name": "io.example/delta", "version": "0.1.0",
         "remotes": [{"type": "sse", "url": DELTA}]},
        {"name": "io.example/gamma", "version": "3.0.0",
         "remotes": [
             {"type": "streamable-http", "url": GAMMA_TEMPLATED},
             {"type": "streamable-http", "url": GAMMA,
              // A required fixed `Host` toolmark may not send: still `header-required`.
              "headers": [{"name": "Host", "value": "tenant.internal", "isRequired": true},
                          {"name": "Authorization", "value": "Bearer {secret_token}",
                           "isRequired": true, "isSecret": true}]}]}
    ]))
}

/// Run-1 observations: alpha ok (filesystem tools), beta wants auth, delta times out.
fn first_day(url: &str) -> Option<Observation> {
    match url {
        ALPHA => Some(ok(day(0, 10), vec![corpus_page(FILESYSTEM)])),
        BETA => Some(auth_required(day(0, 11))),
        DELTA => Some(failed(
            day(0, 12),
            Status::Timeout,
            "observation deadline of 90s passed",
        )),
        other => panic!("dialled {other}"),
    }
}

fn id(server: &str, target: &str) -> String {
    Subject {
        server: server.into(),
        target: target.into(),
        package: None,
    }
    .id()
    .to_string()
}

/// A digest as the index stores it.
fn text(d: Option<Sri>) -> Option<String> {
    d.map(|d| d.to_string())
}

fn document(env: &Env, entry: &Entry) -> Document {
    let sri: Sri = entry.raw.unwrap();
    Document::decode(&env.blobs.get(&sri).unwrap().unwrap()).unwrap()
}

/// The first day's run over [`registry`], in one batch: the environment, the run id and the
/// report lines.
fn first_run(tag: &str) -> (Env, i64, Vec<toolmark_index::Recorded>) {
    let mut env = Env::new(tag);
    let (run, lines) = env.run(&day_str(0, 0), &registry(), &[], first_day);
    (env, run, lines)
}

#[test]
fn a_run_logs_every_remote_once_and_no_package() {
    let (env, _, lines) = first_run("first-run");
    // 7 targets: 5 remotes (one entry each) and 2 packages (none).
    assert_eq!(lines.len(), 7);
    assert_eq!(env.log.head().size, 5);
    let entries = env.entries();
    let statuses: Vec<&str> = entries.iter().map(|e| e.status.as_str()).collect();
    assert_eq!(
        statuses,
        [
            "ok",
            "auth-required",
            "timeout",
            "templated-url",
            "header-required"
        ]
    );
    assert!(entries.iter().all(|e| e.prev.is_none()));
}

#[test]
fn an_ok_entry_has_the_crawlers_digests_and_a_document_with_the_exact_page() {
    let (env, _, _) = first_run("first-run-ok");
    let entries = env.entries();
    let alpha = &entries[0];
    let obs = first_day(ALPHA).unwrap();
    let d = obs.digests().unwrap();
    assert_eq!(alpha.full, Some(d.full));
    assert_eq!(alpha.mtl1_digest(), Some(d.mtl1.as_ref().unwrap()));
    assert_eq!(alpha.tools, Some(14));
    assert_eq!(alpha.observed_at, day_str(0, 10));
    assert_eq!(alpha.detail, None);
    let doc = document(&env, alpha);
    assert_eq!(doc.pages, vec![corpus_page(FILESYSTEM)]);
    assert_eq!(doc.target.endpoint, ALPHA);
    assert_eq!(doc.target.declared_transport, "streamable-http");
    assert_eq!(doc.status, "ok");
    assert_eq!(doc.initialize, obs.initialize);
    assert_eq!(
        toolmark_toolset::full::digest(&doc.tool_set().unwrap()),
        d.full
    );
}

#[test]
fn failures_keep_their_details_and_auth_challenge() {
    let (env, _, _) = first_run("first-run-failures");
    let entries = env.entries();
    let beta = &entries[1];
    assert_eq!(beta.detail.as_deref(), Some("401 from initialize"));
    assert_eq!((beta.full.as_ref(), beta.tools), (None, None));
    let doc = document(&env, beta);
    let auth = doc.remote().unwrap().auth.clone().unwrap();
    assert_eq!(auth.http_status, 401);
    assert_eq!(auth.scope.as_deref(), Some("tools"));
    assert!(doc.pages.is_empty());
    let delta = &entries[2];
    assert_eq!(
        delta.detail.as_deref(),
        Some("observation deadline of 90s passed")
    );
    assert!(delta.raw.is_some());
}

#[test]
fn skips_log_names_only_no_document_at_the_run_start() {
    let (env, _, _) = first_run("first-run-skips");
    let entries = env.entries();
    assert_eq!(entries[3].subject.target, GAMMA_TEMPLATED);
    assert_eq!(entries[3].detail.as_deref(), Some("tenant"));
    // Only the required header toolmark may not send is named (the secret one would be
    // withheld and the remote dialled anyway).
    assert_eq!(entries[4].detail.as_deref(), Some("Host"));
    for e in &entries[3..] {
        assert_eq!(e.raw, None);
        assert_eq!(e.observed_at, day_str(0, 0));
    }
    // Never a header value.
    for i in 0..5 {
        let text = String::from_utf8(env.log.entry(i).unwrap()).unwrap();
        assert!(!text.contains("secret_token") && !text.contains("Bearer {"));
        assert!(!text.contains("tenant.internal"));
    }
}

#[test]
fn index_rows_mirror_the_entries() {
    let (env, run, _) = first_run("first-run-rows");
    let entries = env.entries();
    let alpha = &entries[0];
    assert_eq!(env.index.log_size_indexed().unwrap(), 5);
    let row = env.index.observation(0).unwrap().unwrap();
    assert_eq!(row.target_id, id("io.example/alpha", ALPHA));
    assert_eq!(row.run_id, Some(run));
    assert_eq!(row.full, text(alpha.full));
    assert_eq!(row.raw, text(alpha.raw));
    assert_eq!(row.transport.as_deref(), Some("streamable-http"));
    assert_eq!(row.protocol_version.as_deref(), Some("2025-06-18"));
    assert_eq!(row.elapsed_ms, Some(420));
    let t = env
        .index
        .target(&id("io.example/alpha", ALPHA))
        .unwrap()
        .unwrap();
    assert_eq!(t.last_ok_entry, Some(0));
    assert_eq!(t.current_full, text(alpha.full));
    assert_eq!(t.current_tools, Some(14));
    assert_eq!(t.first_listed.as_deref(), Some(day_str(0, 0).as_str()));
    let t = env
        .index
        .target(&id("io.example/gamma", GAMMA))
        .unwrap()
        .unwrap();
    assert_eq!(t.skip_reason.as_deref(), Some("header-required"));
    assert_eq!(t.last_status.as_deref(), Some("header-required"));
    assert_eq!(t.last_entry, Some(4));
}

#[test]
fn packages_are_listed_not_logged() {
    let (env, _, _) = first_run("first-run-packages");
    let alpha_targets = env.index.targets_of("io.example/alpha").unwrap();
    assert_eq!(alpha_targets.len(), 2);
    let pkg = &alpha_targets[1];
    assert_eq!(
        (pkg.kind.as_str(), pkg.target.as_str()),
        ("package", "npm:@example/alpha")
    );
    assert_eq!(pkg.skip_reason.as_deref(), Some("awaiting-sandbox"));
    assert_eq!(pkg.package_version.as_deref(), Some("1.0.0"));
    assert_eq!(pkg.last_entry, None);
    let beta_pkg = &env.index.targets_of("io.example/beta").unwrap()[1];
    assert_eq!(
        beta_pkg.skip_reason.as_deref(),
        Some("unsupported-package-type")
    );
    assert_eq!(beta_pkg.skip_detail.as_deref(), Some("oci"));
}

#[test]
fn a_first_observation_is_no_change() {
    let (env, _, _) = first_run("first-run-no-change");
    assert!(env.index.changes(0, 100, None, None).unwrap().is_empty());
}

#[test]
fn report_lines_follow_the_targets() {
    let (env, _, lines) = first_run("first-run-lines");
    let alpha = &env.entries()[0];
    let line = serde_json::to_value(&lines[0]).unwrap();
    assert_eq!(line["server"], "io.example/alpha");
    assert_eq!(line["endpoint"], ALPHA);
    assert_eq!(line["transport"], "streamable-http");
    assert_eq!(line["status"], "ok");
    assert_eq!(line["entryIndex"], 0);
    assert_eq!(line["tools"], 14);
    assert_eq!(line["full"], json!(alpha.full));
    // Lines follow the targets: each server's remotes, then its packages.
    assert_eq!(
        (lines[1].status.as_str(), lines[1].endpoint.as_str()),
        ("awaiting-sandbox", "npm:@example/alpha")
    );
    assert_eq!(lines[1].entry_index, None);
    assert_eq!(lines[2].status, "auth-required");
    assert_eq!(lines[2].entry_index, Some(1));
    assert_eq!(
        (lines[3].status.as_str(), lines[3].detail.as_str()),
        ("unsupported-package-type", "oci")
    );
    assert_eq!(lines[6].entry_index, Some(4));
}

#[test]
fn servers_keep_their_registry_record() {
    let (env, _, _) = first_run("first-run-servers");
    let server = env.index.server("io.example/alpha").unwrap().unwrap();
    assert_eq!(server.title.as_deref(), Some("Alpha"));
    assert_eq!(server.status, "active");
    assert_eq!(
        server.repository_url.as_deref(),
        Some("https://github.com/example/alpha")
    );
    assert_eq!(
        env.index.known_server_names().unwrap(),
        [
            "io.example/alpha",
            "io.example/beta",
            "io.example/delta",
            "io.example/gamma"
        ]
    );
}

#[test]
fn a_run_is_running_until_finished_with_its_report() {
    let (mut env, run, _) = first_run("first-run-finish");
    assert_eq!(env.index.last_run().unwrap().unwrap().status, "running");
    env.recorder()
        .finish_run(
            run,
            &day_str(0, 60),
            RunStatus::Complete,
            &json!({"targets": 7}),
        )
        .unwrap();
    let last = env.index.last_run().unwrap().unwrap();
    assert_eq!(
        (last.id, last.status.as_str(), last.report.as_deref()),
        (run, "complete", Some("{\"targets\":7}"))
    );
    assert!(last.harvest_complete);
}

#[test]
fn a_changed_tool_set_is_one_change_linked_by_prev() {
    let mut env = Env::new("change");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    // Day 1: alpha's first read-only hint flips; beta still wants auth; delta answers for the
    // first time.
    let (_, lines) = env.run(&day_str(1, 0), &recs, &[], |url| match url {
        ALPHA => Some(ok(day(1, 10), vec![filesystem_rug_pull()])),
        DELTA => Some(ok(day(1, 12), vec![corpus_page(MEMORY)])),
        other => later(first_day(other), 1),
    });
    assert_eq!(env.log.head().size, 10);
    let entries = env.entries();
    // Every subject's second entry points at its first.
    for (i, e) in entries.iter().enumerate().skip(5) {
        assert_eq!(e.prev, Some(i as u64 - 5), "entry {i}");
    }
    let changes = env.index.changes(0, 100, None, None).unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let c = &changes[0];
    assert_eq!(lines[0].change_id, Some(c.id));
    assert!(lines.iter().skip(1).all(|l| l.change_id.is_none()));
    assert_eq!(
        (c.server.as_str(), c.endpoint.as_str()),
        ("io.example/alpha", ALPHA)
    );
    assert_eq!((c.old_entry, c.new_entry), (0, 5));
    assert_eq!(c.old_full, entries[0].full.unwrap().to_string());
    assert_eq!(c.new_full, entries[5].full.unwrap().to_string());
    assert_eq!(c.observed_at, day_str(1, 10));
    assert_eq!(c.class, "dangerous");
    assert_eq!((c.added, c.removed, c.modified), (0, 0, 1));
    let diff: serde_json::Value = serde_json::from_str(c.diff.as_deref().unwrap()).unwrap();
    assert_eq!(diff["modified"].as_array().unwrap().len(), 1);
    assert!(diff["modified"][0]["annotations"].is_object());
    let classification: serde_json::Value =
        serde_json::from_str(c.classification.as_deref().unwrap()).unwrap();
    assert_eq!(classification["class"], "dangerous");
    assert!(
        classification["signals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.to_string().contains("hint-changed"))
    );

    // Queries over it.
    assert_eq!(env.index.change(c.id).unwrap().as_ref(), Some(c));
    assert_eq!(
        env.index
            .changes(0, 10, Some("io.example/alpha"), Some("dangerous"))
            .unwrap()
            .len(),
        1
    );
    assert!(
        env.index
            .changes(0, 10, Some("io.example/beta"), None)
            .unwrap()
            .is_empty()
    );
    assert!(
        env.index
            .changes(0, 10, None, Some("benign"))
            .unwrap()
            .is_empty()
    );
    assert!(env.index.changes(c.id, 10, None, None).unwrap().is_empty());
    assert_eq!(
        env.index.latest_changes(None, 10, None, None).unwrap(),
        changes
    );
    let alpha = id("io.example/alpha", ALPHA);
    assert_eq!(
        env.index
            .entries_with_full(&alpha, &entries[0].full.unwrap().to_string())
            .unwrap(),
        [0]
    );
    // MTL/1 does not cover annotations: the hint flip is invisible to it, not to the full
    // digest.
    assert_eq!(entries[0].mtl1, entries[5].mtl1);
    assert_eq!(
        env.index
            .entries_with_mtl1(&alpha, &entries[5].mtl1_digest().unwrap().to_string())
            .unwrap(),
        [0, 5]
    );
    let found = env.index.find_target_by_endpoint(ALPHA).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].current_full, text(entries[5].full));
    let obs = env.index.observations_of(&alpha, 10, None).unwrap();
    assert_eq!(obs.iter().map(|o| o.entry).collect::<Vec<_>>(), [5, 0]);
    assert_eq!(obs[0].prev, Some(0));
    let older = env.index.observations_of(&alpha, 10, Some(5)).unwrap();
    assert_eq!(older.iter().map(|o| o.entry).collect::<Vec<_>>(), [0]);

    // Day 2, nothing changes: no new change.
    let (_, lines) = env.run(&day_str(2, 0), &recs, &[], |url| match url {
        ALPHA => Some(ok(day(2, 10), vec![filesystem_rug_pull()])),
        DELTA => Some(ok(day(2, 12), vec![corpus_page(MEMORY)])),
        other => later(first_day(other), 2),
    });
    assert!(lines.iter().all(|l| l.change_id.is_none()));
    assert_eq!(env.index.changes(0, 100, None, None).unwrap().len(), 1);
    assert_eq!(env.entries()[10].prev, Some(5));
}

type Observe = Box<dyn Fn(&str) -> Option<Observation>>;

#[test]
fn a_failure_between_two_equal_tool_sets_is_not_a_change_but_a_revert_is() {
    let mut env = Env::new("flap");
    let recs = records(json!([{"name": "io.example/one", "version": "1",
        "remotes": [{"type": "streamable-http", "url": ALPHA}]}]));
    let days: Vec<Observe> = vec![
        Box::new(|_| Some(ok(day(0, 5), vec![corpus_page(ALFRESCO)]))),
        Box::new(|_| Some(failed(day(1, 5), Status::Timeout, "connect timeout"))),
        Box::new(|_| Some(failed(day(2, 5), Status::Http(503), "503"))),
        Box::new(|_| Some(ok(day(3, 5), vec![corpus_page(ALFRESCO)]))),
    ];
    for (d, observe) in days.iter().enumerate() {
        env.run(&day_str(d as u64, 0), &recs, &[], observe);
    }
    let target = id("io.example/one", ALPHA);
    assert!(env.index.changes(0, 100, None, None).unwrap().is_empty());
    let t = env.index.target(&target).unwrap().unwrap();
    assert_eq!((t.last_entry, t.last_ok_entry), (Some(3), Some(3)));
    assert_eq!(t.last_status.as_deref(), Some("ok"));
    let during = env.index.observations_of(&target, 10, None).unwrap();
    assert_eq!(during[1].status, "http-503");
    assert_eq!(during[2].status, "timeout");
    assert_eq!(during[2].detail.as_deref(), Some("connect timeout"));

    // A different set, then back: two changes, the second against the set just before it.
    env.run(&day_str(4, 0), &recs, &[], |_| {
        Some(ok(day(4, 5), vec![corpus_page(FETCH)]))
    });
    env.run(&day_str(5, 0), &recs, &[], |_| {
        Some(ok(day(5, 5), vec![corpus_page(ALFRESCO)]))
    });
    let changes = env.index.changes(0, 100, None, None).unwrap();
    assert_eq!(changes.len(), 2);
    assert_eq!((changes[0].old_entry, changes[0].new_entry), (3, 4));
    assert_eq!((changes[1].old_entry, changes[1].new_entry), (4, 5));
    assert_eq!(changes[0].old_full, changes[1].new_full);
    assert_eq!(changes[0].added, 1);
    assert_eq!(changes[0].removed, 10);
    assert_eq!(changes[1].added, 10);
    assert_ne!(changes[0].class, "benign");
}

/// Append run 2's entries the way the recorder does, but die before indexing them.
fn append_without_indexing(env: &mut Env, outcomes: Vec<TargetOutcome>, started: &str) {
    let mut entries = Vec::new();
    for o in outcomes {
        let toolmark_observation::registry::TargetKind::Remote { url, transport, .. } =
            &o.target.kind
        else {
            continue;
        };
        let subject = Subject {
            server: o.target.server.clone(),
            target: url.clone(),
            package: None,
        };
        let entry = match (&o.observation, &o.target.skip) {
            (Some(obs), _) => {
                let doc = Document::new(
                    DocTarget {
                        server: o.target.server.clone(),
                        endpoint: url.clone(),
                        declared_transport: transport.clone(),
                    },
                    obs,
                );
                let sri = env.blobs.put(&doc.encode().unwrap()).unwrap();
                let d = obs.digests();
                Entry {
                    subject,
                    observed_at: toolmark_index::time::utc(obs.started),
                    status: entry::Status::new(obs.status.name()).unwrap(),
                    detail: (!obs.detail.is_empty()).then(|| obs.detail.clone()),
                    mtl1: d.as_ref().map(|d| d.mtl1.clone().into()),
                    full: d.as_ref().map(|d| d.full),
                    tools: d.as_ref().map(|d| d.tools as u64),
                    tool_index: None,
                    surface: None,
                    second: None,
                    raw: Some(sri),
                    prev: None,
                }
            }
            (None, Some(skip)) => Entry {
                subject,
                observed_at: started.into(),
                status: entry::Status::new(skip.as_str()).unwrap(),
                detail: toolmark_index::record::skip_detail(skip),
                mtl1: None,
                full: None,
                tools: None,
                tool_index: None,
                surface: None,
                second: None,
                raw: None,
                prev: None,
            },
            (None, None) => continue,
        };
        entries.push(entry);
    }
    env.log.append(entries).unwrap();
}

fn day_two(url: &str) -> Option<Observation> {
    match url {
        ALPHA => Some(ok(day(1, 10), vec![filesystem_rug_pull()])),
        other => later(first_day(other), 1),
    }
}

#[test]
fn catch_up_indexes_what_a_crash_left_behind() {
    let mut env = Env::new("catch-up");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    append_without_indexing(&mut env, outcomes(&recs, day_two), &day_str(1, 0));
    assert_eq!(env.log.head().size, 10);
    assert_eq!(env.index.log_size_indexed().unwrap(), 5);
    assert_eq!(env.index.observation(5).unwrap(), None);

    assert_eq!(env.index.catch_up(&env.log, &env.blobs).unwrap(), 5);
    assert_eq!(env.index.log_size_indexed().unwrap(), 10);
    let entries = env.entries();
    for i in 5..10u64 {
        let row = env.index.observation(i).unwrap().unwrap();
        let e = &entries[i as usize];
        assert_eq!(row.run_id, None);
        assert_eq!(row.status, e.status.as_str());
        assert_eq!(row.full, text(e.full));
        assert_eq!(row.raw, text(e.raw));
        assert_eq!(row.prev, Some(i - 5));
    }
    let changes = env.index.changes(0, 100, None, None).unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!((changes[0].old_entry, changes[0].new_entry), (0, 5));
    assert_eq!(changes[0].class, "dangerous");
    // Nothing left to do.
    assert_eq!(env.index.catch_up(&env.log, &env.blobs).unwrap(), 0);

    // The recorder catches up by itself before its own batch.
    append_without_indexing(
        &mut env,
        outcomes(&recs, |u| later(first_day(u), 2)),
        &day_str(2, 0),
    );
    let (run, lines) = env.run(&day_str(3, 0), &recs, &[], |u| later(day_two(u), 2));
    assert_eq!(env.log.head().size, 20);
    assert_eq!(env.index.log_size_indexed().unwrap(), 20);
    assert_eq!(env.index.observation(12).unwrap().unwrap().run_id, None);
    assert_eq!(
        env.index.observation(17).unwrap().unwrap().run_id,
        Some(run)
    );
    // Day 2 reverted alpha (entry 10), day 3 changed it again (entry 15).
    let changes = env.index.changes(0, 100, None, None).unwrap();
    assert_eq!(
        changes
            .iter()
            .map(|c| (c.old_entry, c.new_entry))
            .collect::<Vec<_>>(),
        [(0, 5), (5, 10), (10, 15)]
    );
    assert_eq!(lines[0].change_id, Some(changes[2].id));
}

type Snapshot = (Vec<Vec<String>>, Vec<Vec<String>>, Vec<Vec<String>>);

/// Every derived row of the index at `path`, as text (observations without the run
/// bookkeeping), read through a connection of its own (the index offers no SQL).
fn snapshot(path: &std::path::Path) -> Snapshot {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let rows = |sql: &str| -> Vec<Vec<String>> {
        let mut st = conn.prepare(sql).unwrap();
        let n = st.column_count();
        st.query_map([], |r| {
            Ok((0..n)
                .map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).unwrap()))
                .collect())
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    (
        rows(
            "SELECT entry, target_id, observed_at, status, detail, mtl1, mtl1_error, full, tools,
                 raw, transport, protocol_version, elapsed_ms, prev FROM observations ORDER BY entry",
        ),
        rows("SELECT * FROM changes ORDER BY id"),
        rows(
            "SELECT id, last_status, last_detail, last_entry, last_observed_at, last_ok_entry,
                 current_full, current_mtl1, current_raw, current_tools FROM targets
             WHERE last_entry IS NOT NULL ORDER BY id",
        ),
    )
}

#[test]
fn the_index_is_derivable_from_the_log_and_the_blobs() {
    let mut env = Env::new("rebuild");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    env.run(&day_str(1, 0), &recs, &[], day_two);
    env.run(&day_str(2, 0), &recs, &[], |u| later(first_day(u), 2));
    let before = snapshot(&env.dir.join("index.sqlite"));
    assert_eq!(before.0.len(), 15);
    assert_eq!(before.1.len(), 2);

    assert_eq!(env.index.rebuild(&env.log, &env.blobs).unwrap(), 15);
    assert_eq!(snapshot(&env.dir.join("index.sqlite")), before);

    // A brand-new index over the same log and blobs derives the same rows.
    let mut fresh = toolmark_index::Index::open(&env.dir.join("fresh.sqlite")).unwrap();
    assert_eq!(fresh.catch_up(&env.log, &env.blobs).unwrap(), 15);
    assert_eq!(snapshot(&env.dir.join("fresh.sqlite")), before);
    let t = fresh
        .target(&id("io.example/delta", DELTA))
        .unwrap()
        .unwrap();
    assert_eq!(t.declared_transport.as_deref(), Some("sse"));
    assert_eq!(t.kind, "remote");

    // An index follows one log only.
    let other = toolmark_log::Log::init(&env.dir.join("other-log"), "toolmark.test/other").unwrap();
    assert!(matches!(
        fresh.catch_up(&other, &env.blobs),
        Err(IndexError::Inconsistent(_))
    ));
}

/// A reader of the log's published files in `public` (a directory standing in for the bucket
/// an API replica reads).
fn published(public: &std::path::Path, vkey: &str) -> toolmark_log::reader::Reader {
    toolmark_log::reader::Reader::new(toolmark_log::objects::Objects::dir(public).unwrap(), vkey)
}

/// A copy of the log's public files as they are now.
fn copy_public(env: &Env, to: &str) -> std::path::PathBuf {
    let from = env.dir.join("log/public");
    let to = env.dir.join(to);
    copy_tree(&from, &to);
    to
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn a_follower_derives_the_writers_rows_from_the_published_files_alone() {
    let mut env = Env::new("follow");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    env.run(&day_str(1, 0), &recs, &[], day_two);
    let vkey = env.log.vkey();
    let public = env.dir.join("log/public");
    let mut replica = toolmark_index::Index::open(&env.dir.join("replica.sqlite")).unwrap();
    let followed = replica
        .follow(&published(&public, &vkey), &env.blobs)
        .unwrap();
    assert_eq!((followed.from, followed.to), (0, 10));
    // Another day: the replica indexes only what is new, and stays equal to the writer's index.
    env.run(&day_str(2, 0), &recs, &[], |u| later(first_day(u), 2));
    let followed = replica
        .follow(&published(&public, &vkey), &env.blobs)
        .unwrap();
    assert_eq!((followed.from, followed.to), (10, 15));
    assert_eq!(followed.checkpoint.checkpoint.size, 15);
    assert_eq!(
        snapshot(&env.dir.join("replica.sqlite")),
        snapshot(&env.dir.join("index.sqlite"))
    );
    // Nothing new: nothing read, nothing indexed.
    let again = replica
        .follow(&published(&public, &vkey), &env.blobs)
        .unwrap();
    assert_eq!((again.from, again.to), (15, 15));
}

#[test]
fn a_follower_indexes_nothing_of_a_tampered_bundle() {
    let mut env = Env::new("follow-tampered");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    let vkey = env.log.vkey();
    let tampered = copy_public(&env, "tampered");
    // The last byte of the last entry of the (partial) bundle: still a well-formed bundle.
    let bundle = tampered.join("tile/entries/000.p/5");
    let mut bytes = std::fs::read(&bundle).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x20;
    std::fs::write(&bundle, bytes).unwrap();
    let mut replica = toolmark_index::Index::open(&env.dir.join("replica.sqlite")).unwrap();
    let err = replica
        .follow(&published(&tampered, &vkey), &env.blobs)
        .unwrap_err();
    assert!(matches!(err, IndexError::Follow(_)), "{err}");
    assert_eq!(replica.log_size_indexed().unwrap(), 0);
    // The true files are followed.
    let public = env.dir.join("log/public");
    replica
        .follow(&published(&public, &vkey), &env.blobs)
        .unwrap();
    assert_eq!(replica.log_size_indexed().unwrap(), 5);
}

#[test]
fn a_follower_refuses_a_log_that_shrank_and_a_log_of_another_key() {
    let mut env = Env::new("follow-shrink");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    let older = copy_public(&env, "older");
    env.run(&day_str(1, 0), &recs, &[], day_two);
    let vkey = env.log.vkey();
    let mut replica = toolmark_index::Index::open(&env.dir.join("replica.sqlite")).unwrap();
    replica
        .follow(&published(&env.dir.join("log/public"), &vkey), &env.blobs)
        .unwrap();
    // A bucket served from an older copy: its signed checkpoint is genuine but smaller.
    let err = replica
        .follow(&published(&older, &vkey), &env.blobs)
        .unwrap_err();
    assert!(matches!(err, IndexError::Follow(_)), "{err}");
    assert_eq!(replica.log_size_indexed().unwrap(), 10);
    let other = toolmark_log::Log::init(&env.dir.join("other-log"), "toolmark.test/other").unwrap();
    assert!(matches!(
        replica.follow(
            &published(&env.dir.join("other-log/public"), &other.vkey()),
            &env.blobs
        ),
        Err(IndexError::Inconsistent(_))
    ));
}

#[test]
fn a_follower_proves_each_chunk_a_prefix_of_the_signed_tree_and_keeps_what_it_proved() {
    let mut env = Env::new("follow-chunks");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    env.run(&day_str(1, 0), &recs, &[], day_two);
    env.run(&day_str(2, 0), &recs, &[], |u| later(first_day(u), 2));
    let vkey = env.log.vkey();
    // Chunks of 4 over 15 entries: three proven by consistency proofs, the last by the root.
    let mut replica = toolmark_index::Index::open(&env.dir.join("replica.sqlite")).unwrap();
    let public = env.dir.join("log/public");
    replica
        .follow_in_chunks(&published(&public, &vkey), &env.blobs, 4)
        .unwrap();
    assert_eq!(
        snapshot(&env.dir.join("replica.sqlite")),
        snapshot(&env.dir.join("index.sqlite"))
    );
    // Entry 5 (in the second chunk) tampered in a copy: the first chunk is proven and kept,
    // nothing of the second is indexed.
    let tampered = copy_public(&env, "tampered");
    let bundle = tampered.join("tile/entries/000.p/15");
    let mut bytes = std::fs::read(&bundle).unwrap();
    let members = toolmark_log::tiles::decode_bundle(&bytes)
        .unwrap()
        .iter()
        .map(|m| m.len())
        .collect::<Vec<_>>();
    // Each member is a 2-byte length and its bytes: the last byte of member 5.
    let at: usize = members[..6].iter().map(|n| n + 2).sum::<usize>() - 1;
    bytes[at] ^= 0x20;
    std::fs::write(&bundle, bytes).unwrap();
    let mut fresh = toolmark_index::Index::open(&env.dir.join("fresh.sqlite")).unwrap();
    let err = fresh
        .follow_in_chunks(&published(&tampered, &vkey), &env.blobs, 4)
        .unwrap_err();
    assert!(matches!(err, IndexError::Follow(_)), "{err}");
    assert_eq!(fresh.log_size_indexed().unwrap(), 4);
}

#[test]
fn a_follower_takes_over_an_index_a_recorder_filled() {
    let mut env = Env::new("follow-takeover");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    let vkey = env.log.vkey();
    env.run(&day_str(1, 0), &recs, &[], day_two);
    // The writer's own index (10 entries indexed by its recorder) follows from now on: the
    // entries it has are verified once, then new ones indexed.
    let public = env.dir.join("log/public");
    let before = snapshot(&env.dir.join("index.sqlite"));
    let followed = env
        .index
        .follow(&published(&public, &vkey), &env.blobs)
        .unwrap();
    assert_eq!((followed.from, followed.to), (10, 10));
    assert_eq!(snapshot(&env.dir.join("index.sqlite")), before);
}

/// Pages are kept raw until a tool set is needed (most entries: the target's current one), yet
/// a document is refused for what a decode of its pages would refuse: here a page holding the
/// escape of a lone surrogate, under an entry whose tool set equals the target's current one
/// (so the set is never read). Both a catch-up and a follower refuse it, as before the pages were
/// kept raw.
#[test]
fn a_page_no_string_can_hold_is_refused_even_where_its_tool_set_is_not_read() {
    let mut env = Env::new("raw-pages");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    let alpha = env
        .entries()
        .into_iter()
        .enumerate()
        .find(|(_, e)| e.subject.target == ALPHA)
        .unwrap();
    let bytes = env.blobs.get(&alpha.1.raw.unwrap()).unwrap().unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let name = "\\\"name\\\":\\\"";
    assert!(
        text.contains(name),
        "the page as stored, escaped in the document"
    );
    let hostile = text.replacen(name, &format!("{name}\\ud800"), 1);
    assert!(matches!(
        Document::decode(hostile.as_bytes()),
        Err(toolmark_index::DocumentError::Json(_))
    ));
    let mut entry = alpha.1.clone();
    entry.raw = Some(env.blobs.put(hostile.as_bytes()).unwrap());
    entry.observed_at = day_str(1, 10);
    entry.prev = Some(alpha.0 as u64);
    env.log.append(vec![entry]).unwrap();

    let err = env.index.catch_up(&env.log, &env.blobs).unwrap_err();
    assert!(matches!(err, IndexError::Document { .. }), "{err}");
    assert_eq!(env.index.log_size_indexed().unwrap(), 5);
    let mut replica = toolmark_index::Index::open(&env.dir.join("replica.sqlite")).unwrap();
    let public = env.dir.join("log/public");
    let err = replica
        .follow(&published(&public, &env.log.vkey()), &env.blobs)
        .unwrap_err();
    assert!(matches!(err, IndexError::Document { .. }), "{err}");
    assert_eq!(replica.log_size_indexed().unwrap(), 0);
}

#[test]
fn blob_corruption_is_detected_and_repairable() {
    let mut env = Env::new("corrupt");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    let alpha = env.entries()[0].clone();
    let sri: Sri = alpha.raw.unwrap();
    let key = Blobs::key_of(&sri);
    let original = env.blobs.objects().get(&key).unwrap().unwrap();
    let mut bad = original.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x01;
    env.blobs.objects().put(&key, &bad).unwrap();

    assert!(matches!(
        env.blobs.get(&sri),
        Err(BlobError::Corrupt { sri: s, .. }) if s == sri
    ));
    // A change has to read the old document: the batch fails after its append, loudly…
    let input = RunInput {
        started_at: day_str(1, 0),
        registry: "https://registry.test".into(),
        records: recs.clone(),
        harvest_complete: true,
        delisted: vec![],
        allow_cleartext: false,
    };
    let mut rec = env.recorder();
    let run = rec.begin_run(&input).unwrap();
    let err = rec.record(run, outcomes(&recs, day_two)).unwrap_err();
    assert!(
        matches!(err, IndexError::Blob(BlobError::Corrupt { .. })),
        "{err}"
    );
    assert_eq!(env.log.head().size, 10);
    assert_eq!(env.index.log_size_indexed().unwrap(), 5);
    assert!(matches!(
        env.index.rebuild(&env.log, &env.blobs),
        Err(IndexError::Blob(BlobError::Corrupt { .. }))
    ));
    // …and once the blob is restored, catching up finishes the work.
    env.blobs.objects().put(&key, &original).unwrap();
    assert_eq!(env.index.catch_up(&env.log, &env.blobs).unwrap(), 10);
    assert_eq!(env.index.changes(0, 10, None, None).unwrap().len(), 1);

    // A missing blob is an error too, never an empty document.
    env.blobs.objects().delete(&key).unwrap();
    assert!(matches!(
        env.index.rebuild(&env.log, &env.blobs),
        Err(IndexError::MissingBlob { entry: 0, .. })
    ));
}

#[test]
fn listing_and_delisting() {
    let mut env = Env::new("delist");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], first_day);
    // Day 1: delta is gone from a complete harvest; alpha dropped its npm package.
    let mut day1: Vec<Record> = recs
        .iter()
        .filter(|r| r.name != "io.example/delta")
        .cloned()
        .collect();
    day1[0].packages.clear();
    env.run(&day_str(1, 0), &day1, &["io.example/delta"], |u| {
        later(first_day(u), 1)
    });
    let delta = env.index.server("io.example/delta").unwrap().unwrap();
    assert_eq!(delta.delisted_at, Some(day_str(1, 0)));
    assert_eq!(delta.last_listed, day_str(0, 0));
    let t = env
        .index
        .target(&id("io.example/delta", DELTA))
        .unwrap()
        .unwrap();
    assert_eq!(t.delisted_at, Some(day_str(1, 0)));
    let alpha = env.index.targets_of("io.example/alpha").unwrap();
    assert_eq!(alpha[0].delisted_at, None);
    assert_eq!(alpha[0].last_listed, Some(day_str(1, 0)));
    assert_eq!(alpha[0].first_listed, Some(day_str(0, 0)));
    assert_eq!(alpha[1].target, "npm:@example/alpha");
    assert_eq!(alpha[1].delisted_at, Some(day_str(1, 0)));
    assert_eq!(env.log.head().size, 9);

    // Day 2: delta is back.
    env.run(&day_str(2, 0), &recs, &[], |u| later(first_day(u), 2));
    let delta = env.index.server("io.example/delta").unwrap().unwrap();
    assert_eq!(delta.delisted_at, None);
    assert_eq!(delta.first_listed, day_str(0, 0));
    assert!(
        env.index
            .targets_of("io.example/delta")
            .unwrap()
            .iter()
            .all(|t| t.delisted_at.is_none())
    );
    // Its chain skips the day it was not listed.
    let entries = env.entries();
    let delta_entries: Vec<(usize, Option<u64>)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.subject.target == DELTA)
        .map(|(i, e)| (i, e.prev))
        .collect();
    assert_eq!(delta_entries, [(2, None), (11, Some(2))]);
}

#[test]
fn outcomes_that_cannot_be_logged_are_reported_not_logged() {
    let mut env = Env::new("unloggable");
    let long = format!("https://long.example.com/{}", "a".repeat(2_010));
    let recs = records(
        json!([{"name": "io.example/odd", "version": "1", "remotes": [
            {"type": "streamable-http", "url": long},
            {"type": "streamable-http", "url": ALPHA},
            {"type": "streamable-http", "url": BETA}
        ]}]),
    );
    let (_, lines) = env.run(&day_str(0, 0), &recs, &[], |url| match url {
        ALPHA => Some(ok(day(0, 1), vec![corpus_page(FETCH)])),
        BETA => None,
        _ => Some(ok(day(0, 2), vec![corpus_page(FETCH)])),
    });
    assert_eq!(lines[0].status, NOT_LOGGED);
    assert!(
        lines[0].detail.starts_with("ok: not logged: "),
        "{}",
        lines[0].detail
    );
    assert_eq!((lines[0].entry_index, lines[0].full.as_ref()), (None, None));
    assert_eq!(lines[1].entry_index, Some(0));
    assert_eq!(lines[2].status, NOT_OBSERVED);
    assert_eq!(env.log.head().size, 1);
    // Only the logged observation's document was stored.
    let stored = walk(&env.dir.join("blobs"));
    assert_eq!(stored, 1);
    // The listed-but-unlogged targets are still in the index.
    assert_eq!(env.index.targets_of("io.example/odd").unwrap().len(), 3);
}

fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk(&e.path())
            } else {
                1
            }
        })
        .sum()
}

#[test]
fn batches_of_one_run_and_unknown_runs() {
    let mut env = Env::new("batches");
    let recs = registry();
    let input = RunInput {
        started_at: day_str(0, 0),
        registry: "https://registry.test".into(),
        records: recs.clone(),
        harvest_complete: false,
        delisted: vec![],
        allow_cleartext: false,
    };
    let mut rec = env.recorder();
    assert!(matches!(
        rec.begin_run(&RunInput {
            started_at: "yesterday".into(),
            ..input.clone()
        }),
        Err(IndexError::Invalid(_))
    ));
    let run = rec.begin_run(&input).unwrap();
    let all = outcomes(&recs, first_day);
    let (a, b) = all.split_at(3);
    let first = rec.record(run, a.to_vec()).unwrap();
    let second = rec.record(run, b.to_vec()).unwrap();
    assert_eq!(first.len() + second.len(), 7);
    assert!(matches!(
        rec.record(run + 1, vec![]),
        Err(IndexError::Invalid(_))
    ));
    assert!(matches!(
        rec.finish_run(run + 1, &day_str(0, 9), RunStatus::Failed, &json!({})),
        Err(IndexError::Invalid(_))
    ));
    rec.finish_run(
        run,
        &day_str(0, 9),
        RunStatus::Failed,
        &json!({"error": "x"}),
    )
    .unwrap();
    assert_eq!(env.log.head().size, 5);
    let observed: Vec<i64> = (0..5)
        .map(|i| env.index.observation(i).unwrap().unwrap().run_id.unwrap())
        .collect();
    assert_eq!(observed, [run; 5]);
    let last = env.index.last_run().unwrap().unwrap();
    assert_eq!(last.status, "failed");
    assert!(!last.harvest_complete);

    // A run left `running` (its process was killed) is closed as failed, with what it recorded
    // kept, when the next run begins.
    let before = env.log.head().size;
    let mut rec = env.recorder();
    let killed = rec.begin_run(&input).unwrap();
    rec.record(killed, outcomes(&recs, day_two)[..2].to_vec())
        .unwrap();
    let next = rec
        .begin_run(&RunInput {
            started_at: day_str(1, 0),
            ..input.clone()
        })
        .unwrap();
    let closed = env.index.run(killed).unwrap().unwrap();
    assert_eq!(closed.status, "failed");
    assert_eq!(closed.finished_at.as_deref(), Some(day_str(1, 0).as_str()));
    assert!(closed.report.unwrap().contains("interrupted"));
    assert_eq!(env.index.run(next).unwrap().unwrap().status, "running");
    assert!(
        env.log.head().size > before,
        "the killed run's batch stays logged"
    );
}

/// The first day's run of `records`, begun by hand (to record outcomes of one's own).
fn first_day_input(records: &[Record]) -> RunInput {
    RunInput {
        started_at: day_str(0, 0),
        registry: "https://registry.test".into(),
        records: records.to_vec(),
        harvest_complete: true,
        delisted: Vec::new(),
        allow_cleartext: false,
    }
}

/// The alpha package's outcome of a package observer (what the sandbox will hand over): a
/// complete tool set of `@example/alpha@1.0.0`.
fn alpha_package_run(env: &mut Env) -> Vec<toolmark_index::Recorded> {
    let records = registry();
    let mut rec = env.recorder();
    let run = rec.begin_run(&first_day_input(&records)).unwrap();
    let package = toolmark_observation::registry::targets(&records[0])
        .into_iter()
        .find(|t| matches!(t.kind, TargetKind::Package { .. }))
        .unwrap();
    let observation = Observation {
        via: Via::Package(Sandboxed {
            package: "npm:@example/alpha@1.0.0".into(),
            artifact: Some(Sri::of(b"the tarball")),
            sandbox: None,
            registry: None,
        }),
        ..ok(day(0, 20), vec![corpus_page(FILESYSTEM)])
    };
    rec.record(
        run,
        vec![TargetOutcome {
            target: package,
            observation: Some(observation),
        }],
    )
    .unwrap()
}

#[test]
fn a_package_observation_is_logged_with_its_version_and_a_package_document() {
    let mut env = Env::new("package-observed");
    let lines = alpha_package_run(&mut env);
    assert_eq!(lines[0].status, "ok");
    assert_eq!(lines[0].transport, None);
    let entries = env.entries();
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(entry.subject.target, "npm:@example/alpha");
    assert_eq!(
        entry.subject.package.as_deref(),
        Some("npm:@example/alpha@1.0.0")
    );
    let set = toolmark_toolset::ToolSet::parse(corpus_page(FILESYSTEM).as_bytes()).unwrap();
    assert_eq!(entry.full, Some(toolmark_toolset::full::digest(&set)));
    let doc = document(&env, entry);
    assert_eq!(doc.target.endpoint, "npm:@example/alpha");
    assert_eq!(doc.target.declared_transport, "stdio");
    let DocVia::Package(package) = &doc.via else {
        panic!("not a package's document: {doc:?}");
    };
    assert_eq!(package.id, "npm:@example/alpha@1.0.0");
    assert_eq!(package.artifact, Some(Sri::of(b"the tarball").to_string()));
}

#[test]
fn a_package_observation_is_indexed_like_a_remotes() {
    let mut env = Env::new("package-indexed");
    alpha_package_run(&mut env);
    let pkg = &env.index.targets_of("io.example/alpha").unwrap()[1];
    assert_eq!(pkg.kind, "package");
    assert_eq!(pkg.declared_transport.as_deref(), Some("stdio"));
    // Observed, so no longer awaiting the sandbox.
    assert_eq!(pkg.skip_reason, None);
    assert_eq!(pkg.last_entry, Some(0));
    assert_eq!(pkg.last_status.as_deref(), Some("ok"));
    assert_eq!(pkg.current_full, text(env.entries()[0].full));
    let row = env.index.observation(0).unwrap().unwrap();
    assert_eq!(row.status, "ok");
    assert_eq!(row.transport, None);
    // Derived again from the log and the package's document alone, it is the same row (a
    // derived row names no run).
    let Env {
        log, blobs, index, ..
    } = &mut env;
    index.rebuild(log, blobs).unwrap();
    let derived = index.observation(0).unwrap().unwrap();
    assert_eq!(derived.run_id, None);
    assert_eq!(
        toolmark_index::rows::ObservationRow {
            run_id: row.run_id,
            ..derived
        },
        row
    );
}

/// What recording `observation` as the outcome of the `nth` target of alpha (0: its remote,
/// 1: its npm package) reports, with the log's size after.
fn record_for_alpha_target(
    nth: usize,
    observation: Observation,
) -> (toolmark_index::Recorded, u64) {
    let mut env = Env::new(&format!("mismatch-{nth}-{}", observation.status));
    let records = registry();
    let mut rec = env.recorder();
    let run = rec.begin_run(&first_day_input(&records)).unwrap();
    let target = toolmark_observation::registry::targets(&records[0])
        .into_iter()
        .nth(nth)
        .unwrap();
    let mut lines = rec
        .record(
            run,
            vec![TargetOutcome {
                target,
                observation: Some(observation),
            }],
        )
        .unwrap();
    (lines.remove(0), env.log.head().size)
}

fn ran(package: &str) -> Observation {
    Observation {
        via: Via::Package(Sandboxed {
            package: package.into(),
            artifact: None,
            sandbox: None,
            registry: None,
        }),
        ..ok(day(0, 20), vec![corpus_page(FILESYSTEM)])
    }
}

#[test]
fn a_package_observation_for_a_remote_is_not_logged() {
    let (line, size) = record_for_alpha_target(0, ran("npm:@example/alpha@1.0.0"));
    assert_eq!(
        (line.status.as_str(), line.detail.as_str()),
        (MISMATCHED, "a package's observation for a remote target")
    );
    assert_eq!(size, 0);
}

#[test]
fn a_dialled_observation_for_a_package_is_not_logged() {
    let (line, size) = record_for_alpha_target(1, ok(day(0, 20), vec![corpus_page(FILESYSTEM)]));
    assert_eq!(
        (line.status.as_str(), line.detail.as_str()),
        (MISMATCHED, "a package target observed without running it")
    );
    assert_eq!(size, 0);
}

#[test]
fn an_observation_of_another_package_or_version_is_not_logged() {
    for other in [
        "pypi:@example/alpha@1.0.0",
        "npm:@example/alpha@9.9.9",
        "npm:@example/alphabet@1.0.0",
        "npm:@example/alpha",
    ] {
        let (line, size) = record_for_alpha_target(1, ran(other));
        assert_eq!(line.status, MISMATCHED, "{other}");
        assert_eq!(
            line.detail,
            format!("the observation ran {other:?}, the target is npm:@example/alpha@1.0.0")
        );
        assert_eq!(size, 0, "{other}");
    }
}

/// beta refusing with protected-resource metadata that names `servers` as its authorization
/// servers.
fn beta_guarded_by(secs: u64, servers: &[&str]) -> Observation {
    let mut obs = auth_required(secs);
    let auth = obs.dialled_mut().unwrap().auth.as_mut().unwrap();
    auth.protected_resource = Some(toolmark_observation::observe::ProtectedResource {
        url: "https://beta.example.com/.well-known/oauth-protected-resource".into(),
        from_challenge: true,
        http_status: Some(200),
        resource: Some(BETA.into()),
        authorization_servers: servers.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    });
    obs
}

#[test]
fn a_swapped_authorization_server_is_a_dangerous_authorization_change() {
    let mut env = Env::new("auth-change");
    let recs = registry();
    let with = |servers: &'static [&'static str], d: u64| {
        move |url: &str| match url {
            BETA => Some(beta_guarded_by(day(d, 11), servers)),
            other => later(first_day(other), d),
        }
    };
    let as_a = "https://auth.example.com";
    let as_b = "https://login.attacker.example";
    env.run(
        &day_str(0, 0),
        &recs,
        &[],
        with(&["https://auth.example.com"], 0),
    );
    // The same servers in another order, then a metadata fetch that failed: no change.
    let (_, same) = env.run(
        &day_str(1, 0),
        &recs,
        &[],
        with(&["https://auth.example.com", "https://auth.example.com"], 1),
    );
    assert!(same.iter().all(|l| l.change_id.is_none()));
    let (_, lines) = env.run(&day_str(2, 0), &recs, &[], |url| match url {
        BETA => {
            let mut obs = beta_guarded_by(day(2, 11), &[]);
            let auth = obs.dialled_mut().unwrap().auth.as_mut().unwrap();
            auth.protected_resource.as_mut().unwrap().error = Some("HTTP 503".into());
            Some(obs)
        }
        other => later(first_day(other), 2),
    });
    assert!(lines.iter().all(|l| l.change_id.is_none()));
    // Then the metadata names another authorization server.
    let (_, lines) = env.run(
        &day_str(3, 0),
        &recs,
        &[],
        with(&["https://login.attacker.example"], 3),
    );
    let changes = env.index.changes(0, 100, None, None).unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let c = &changes[0];
    let ids: Vec<i64> = lines.iter().filter_map(|l| l.change_id).collect();
    assert_eq!(ids, [c.id]);
    assert_eq!(
        (c.kind.as_str(), c.class.as_str(), c.endpoint.as_str()),
        ("authorization", "dangerous", BETA)
    );
    assert_eq!(
        c.old_auth.as_deref(),
        Some(format!(r#"["{as_a}"]"#).as_str())
    );
    assert_eq!(
        c.new_auth.as_deref(),
        Some(format!(r#"["{as_b}"]"#).as_str())
    );
    // Between the entries that read them: day 1's (the last read before the swap) and day 3's.
    let entries = env.entries();
    assert_eq!(entries[c.old_entry as usize].observed_at, day_str(1, 11));
    assert_eq!(entries[c.new_entry as usize].observed_at, day_str(3, 11));
    assert_eq!(
        (c.old_full.as_str(), c.new_full.as_str(), c.diff.as_deref()),
        ("", "", None)
    );

    // Derivable: a rebuild numbers and fills it the same.
    let before = env.index.changes(0, 100, None, None).unwrap();
    env.index.rebuild(&env.log, &env.blobs).unwrap();
    assert_eq!(env.index.changes(0, 100, None, None).unwrap(), before);
}

#[test]
fn a_target_row_names_the_declared_headers_it_is_dialled_without() {
    let mut env = Env::new("withheld");
    let recs = records(json!([
        {"name": "io.example/keyed", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": BETA,
                      "headers": [{"name": "Authorization", "value": "Bearer {key}", "isSecret": true},
                                  {"name": "X-Tenant", "isRequired": true},
                                  {"name": "X-Client", "value": "toolmark"}]}]},
        {"name": "io.example/alpha", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": ALPHA}]},
        {"name": "io.example/fixed", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": GAMMA,
                      "headers": [{"name": "Host", "value": "tenant.internal", "isRequired": true},
                                  {"name": "Authorization", "isSecret": true}]}]}
    ]));
    env.run(&day_str(0, 0), &recs, &[], |url| match url {
        BETA => Some(auth_required(day(0, 11))),
        _ => Some(ok(day(0, 10), vec![corpus_page(FILESYSTEM)])),
    });
    let keyed = env
        .index
        .target(&id("io.example/keyed", BETA))
        .unwrap()
        .unwrap();
    // The literal X-Client is sent; the secret and the user's value are not.
    assert_eq!(keyed.withheld_headers, ["Authorization", "X-Tenant"]);
    let plain = env
        .index
        .target(&id("io.example/alpha", ALPHA))
        .unwrap()
        .unwrap();
    assert!(plain.withheld_headers.is_empty());
    // A remote that is not dialled (header-required) is dialled without nothing.
    let fixed = env
        .index
        .target(&id("io.example/fixed", GAMMA))
        .unwrap()
        .unwrap();
    assert_eq!(fixed.skip_reason.as_deref(), Some("header-required"));
    assert!(fixed.withheld_headers.is_empty());
}

/// The sandbox's facts for one run: a clean one, or one that read the decoy SSH key at startup.
fn sandbox_facts(reads_key: bool) -> serde_json::Value {
    let decoys = if reads_key {
        json!([{"what": "/home/decoy/.ssh/id_rsa", "pid": 2, "comm": "node"}])
    } else {
        json!([])
    };
    let findings = if reads_key {
        json!([{"code": "READS_SECRETS", "severity": "high", "phase": "startup",
                "evidence": ["/home/decoy/.ssh/id_rsa"]}])
    } else {
        json!([])
    };
    let phase = |name: &str, decoys: serde_json::Value| {
        json!({"phase": name, "complete": true, "incomplete": [], "exec": [], "network": [],
               "lookups": [], "requests": [], "decoys": decoys, "writes": [],
               "exfiltrated": [], "leakedBy": []})
    };
    json!({
        "observer": "toolmark-sandbox/1", "runsc": "runsc version test", "complete": true,
        "installScripts": [], "calls": [],
        "behaviour": [phase("startup", decoys), phase("calls", json!([]))],
        "findings": findings,
    })
}

#[test]
fn a_package_version_that_reads_a_secret_is_a_dangerous_behaviour_change_derived_again_alike() {
    let mut env = Env::new("package-behaviour");
    let records = registry();
    let mut rec = env.recorder();
    let run = rec.begin_run(&first_day_input(&records)).unwrap();
    let package = toolmark_observation::registry::targets(&records[0])
        .into_iter()
        .find(|t| matches!(t.kind, TargetKind::Package { .. }))
        .unwrap();
    let at_version = |version: &str| {
        let mut t = package.clone();
        if let TargetKind::Package { version: v, .. } = &mut t.kind {
            *v = Some(version.to_owned());
        }
        t
    };
    let observed = |version: &str, reads_key: bool, minute: u64, page: &str| Observation {
        via: Via::Package(Sandboxed {
            package: format!("npm:@example/alpha@{version}"),
            artifact: Some(Sri::of(version.as_bytes())),
            sandbox: Some(sandbox_facts(reads_key)),
            registry: None,
        }),
        ..ok(day(0, minute), vec![corpus_page(page)])
    };
    let mut lines = Vec::new();
    // 2.0.0 serves other tools too: its entry carries both kinds of change.
    for (version, reads_key, minute, page) in [
        ("1.0.0", false, 20, FILESYSTEM),
        ("2.0.0", true, 30, MEMORY),
    ] {
        lines.extend(
            rec.record(
                run,
                vec![TargetOutcome {
                    target: at_version(version),
                    observation: Some(observed(version, reads_key, minute, page)),
                }],
            )
            .unwrap(),
        );
    }
    let id = toolmark_index::record::target_id(&package);
    let seen = env.index.package_observations(&id, 10).unwrap();
    let versions: Vec<&str> = seen.iter().map(|o| o.version.as_str()).collect();
    assert_eq!(versions, ["1.0.0", "2.0.0"]);
    assert!(seen.iter().all(|o| o.complete));
    assert_eq!(seen[1].behaviour.startup.decoys, [".ssh/id_rsa"]);
    assert_eq!(seen[1].behaviour.findings[0].code, "READS_SECRETS");
    let changes = env
        .index
        .latest_changes(None, 10, Some("io.example/alpha"), None)
        .unwrap();
    let kinds: Vec<(&str, &str, u64, u64)> = changes
        .iter()
        .map(|c| (c.kind.as_str(), c.class.as_str(), c.old_entry, c.new_entry))
        .collect();
    assert!(
        kinds.contains(&("behaviour", "dangerous", 0, 1)),
        "{kinds:?}"
    );
    assert_eq!(changes.len(), 2, "{kinds:?}");
    // The entry's line names its tool-set change, as a catch-up of it would.
    let tools = changes.iter().find(|c| c.kind == "tools").unwrap();
    assert_eq!(lines[1].change_id, Some(tools.id));
    // The log and the documents alone derive the same rows.
    let Env {
        log, blobs, index, ..
    } = &mut env;
    index.rebuild(log, blobs).unwrap();
    assert_eq!(index.package_observations(&id, 10).unwrap(), seen);
    assert_eq!(
        index
            .latest_changes(None, 10, Some("io.example/alpha"), None)
            .unwrap(),
        changes
    );
}

/// Registry facts as the crawler reads them, from their JSON.
fn registry_facts(json: serde_json::Value) -> toolmark_observation::registry_facts::RegistryFacts {
    serde_json::from_value(json).unwrap()
}

#[test]
fn a_version_that_loses_provenance_is_a_dangerous_registry_change_derived_again_alike() {
    let mut env = Env::new("package-registry");
    let records = registry();
    let mut rec = env.recorder();
    let run = rec.begin_run(&first_day_input(&records)).unwrap();
    let package = toolmark_observation::registry::targets(&records[0])
        .into_iter()
        .find(|t| matches!(t.kind, TargetKind::Package { .. }))
        .unwrap();
    let at_version = |version: &str| {
        let mut t = package.clone();
        if let TargetKind::Package { version: v, .. } = &mut t.kind {
            *v = Some(version.to_owned());
        }
        t
    };
    let attested = registry_facts(json!({
        "ecosystem": "npm",
        "provenance": {"present": true, "kind": "https://slsa.dev/provenance/v1"},
        "publisher": {"trusted": true, "id": "github", "name": "GitHub Actions"},
        "installScripts": {}, "dependencies": {"a": "^1.0.0"}, "maintainers": ["alice"],
        "repository": "git+https://github.com/example/alpha.git", "bins": {"alpha": "cli.js"},
        "deprecated": null
    }));
    let lost = registry_facts(json!({
        "ecosystem": "npm",
        "provenance": {"present": false},
        "publisher": {"trusted": false, "name": "mallory"},
        "installScripts": {"postinstall": "node setup.js"},
        "dependencies": {"a": "^1.0.0", "plain-crypto-js": "^4.2.1"}, "maintainers": ["alice"],
        "repository": "git+https://github.com/example/alpha.git", "bins": {"alpha": "cli.js"},
        "deprecated": null
    }));
    // A mirror's entry: what it strips is unknown.
    let mirrored = registry_facts(json!({
        "ecosystem": "npm", "installScripts": {}, "dependencies": {"a": "^1.0.0"},
        "repository": "git+https://github.com/example/alpha.git", "bins": {"alpha": "cli.js"}
    }));
    let observed = |version: &str,
                    facts: &toolmark_observation::registry_facts::RegistryFacts,
                    minute: u64| Observation {
        via: Via::Package(Sandboxed {
            package: format!("npm:@example/alpha@{version}"),
            artifact: Some(Sri::of(version.as_bytes())),
            sandbox: Some(sandbox_facts(false)),
            registry: Some(facts.clone()),
        }),
        ..ok(day(0, minute), vec![corpus_page(FILESYSTEM)])
    };
    for (version, facts, minute) in [
        ("1.0.0", &attested, 20),
        ("1.0.1", &lost, 30),
        ("1.0.1", &lost, 35),
        ("1.0.2", &mirrored, 40),
    ] {
        rec.record(
            run,
            vec![TargetOutcome {
                target: at_version(version),
                observation: Some(observed(version, facts, minute)),
            }],
        )
        .unwrap();
    }
    let id = toolmark_index::record::target_id(&package);
    let seen = env.index.package_observations(&id, 10).unwrap();
    assert_eq!(seen[1].registry.as_ref(), Some(&lost));
    assert_eq!(seen[1].registry_previous, Some(0));
    let flags = &seen[1].registry_comparison.as_ref().unwrap().flags;
    assert_eq!(
        flags,
        &[
            "provenance-lost",
            "publisher-changed",
            "install-scripts-added",
            "new-dependencies",
            "install-scripts"
        ]
    );
    // The mirror's version after it: nothing it does not serve is "lost" or "changed".
    let mirror_flags = &seen[3].registry_comparison.as_ref().unwrap().flags;
    assert!(mirror_flags.is_empty(), "{mirror_flags:?}");
    let changes = env
        .index
        .latest_changes(None, 10, Some("io.example/alpha"), None)
        .unwrap();
    let registry: Vec<(&str, u64, u64, u64)> = changes
        .iter()
        .filter(|c| c.kind == "registry")
        .map(|c| (c.class.as_str(), c.old_entry, c.new_entry, c.added))
        .collect();
    // One change, for the first observation of 1.0.1 only; four flags made it.
    assert_eq!(registry, [("dangerous", 0, 1, 4)]);
    let change = changes.iter().find(|c| c.kind == "registry").unwrap();
    let new: serde_json::Value =
        serde_json::from_str(change.new_registry.as_deref().unwrap()).unwrap();
    assert_eq!(new["version"], "1.0.1");
    assert_eq!(
        new["comparison"]["newDependencies"],
        json!(["plain-crypto-js"])
    );
    assert_eq!(
        new["comparison"]["previousPublisher"],
        "trusted publisher: github"
    );
    // It is a security event too, whose evidence carries the flags.
    let events_of = |index: &toolmark_index::Index| {
        index
            .security_events(&toolmark_index::events::EventQuery {
                after: Some(0),
                limit: 100,
                ..Default::default()
            })
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == "registry")
            .collect::<Vec<_>>()
    };
    let events = events_of(&env.index);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].change_id, change.id);
    assert!(
        events[0].body.contains("plain-crypto-js"),
        "{}",
        events[0].body
    );
    // The log and the documents alone derive the same rows.
    let Env {
        log, blobs, index, ..
    } = &mut env;
    index.rebuild(log, blobs).unwrap();
    assert_eq!(events_of(index), events);
    assert_eq!(index.package_observations(&id, 10).unwrap(), seen);
    assert_eq!(
        index
            .latest_changes(None, 10, Some("io.example/alpha"), None)
            .unwrap(),
        changes
    );
}
