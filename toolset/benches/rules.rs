//! The rule set's cost (`toolmark-rules/4`, `rules::scan`), on already parsed sets:
//!
//! * `okta1000`: 1,000 tools, the 108 real tools of
//!   `tests/fixtures/corpus/docker-mcp-registry/okta-mcp-server.tools.json` repeated with renamed
//!   tools (goal: at most 20 ms);
//! * `distinct1000`: 1,000 tools, the first 1,000 of `tests/fixtures/rules/clean.jsonl` (real
//!   tools of 54 servers, few texts repeated) as one set, a name that repeats suffixed (the goal
//!   read without okta's repetition), when that file is present;
//! * `clean-dev`: every tool of `tests/fixtures/rules/clean.jsonl` (the labelled clean corpus),
//!   one scan per tool as a crawler would run it, when that file is present;
//! * `hostile`: one 1,000,000-character description of near-misses of the windowed patterns,
//!   which the scan cuts at its limits (the bound on work on hostile input);
//! * `hostile-set`: 50 properties whose descriptions are 20,000 characters of `in ` repeated,
//!   each numbered (the whole 1,000,000-character scan budget of one word that is a literal of
//!   many parts: every occurrence a hit of the literal gate);
//! * `matching`: 100 tools of 200 properties whose descriptions are every rule's `fires`
//!   example in turn, numbered (no text repeats): every text a match, to the scan's budget;
//! * `soup`: texts that each hold every rule's `fires` example: nearly every alternative run on
//!   every text, to the scan's budget (the worst case found for the per-text gate).

/// The allocator the `toolmark` binary ships with (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;
use std::hint::black_box;
use std::time::Duration;
use toolmark_toolset::{ToolSet, rules};

const OKTA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/corpus/docker-mcp-registry/okta-mcp-server.tools.json"
);
const CLEAN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/rules/clean.jsonl"
);

/// The okta tools repeated, each copy's names suffixed, to `n` tools.
fn okta(n: usize) -> ToolSet {
    let okta = ToolSet::parse(&std::fs::read(OKTA).expect("read okta")).expect("okta parses");
    let tools: Vec<Value> = okta
        .tools
        .iter()
        .map(|t| serde_json::from_str(&t.raw).expect("a tool is JSON"))
        .collect();
    let raw: Vec<String> = (0..n)
        .map(|i| {
            let mut t = tools[i % tools.len()].clone();
            let name = format!("{}_{}", t["name"].as_str().unwrap_or("t"), i / tools.len());
            t["name"] = Value::String(name);
            serde_json::to_string(&t).unwrap()
        })
        .collect();
    ToolSet::of_raw(&raw).expect("the set parses")
}

/// The first `n` tools of the clean corpus as one set, a repeated name suffixed.
/// The tool object of every line of the clean corpus, when that file is present.
fn clean_corpus_tools() -> Option<Vec<Value>> {
    let text = std::fs::read_to_string(CLEAN).ok()?;
    Some(
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok()?.get("tool").cloned())
            .collect(),
    )
}

fn distinct(n: usize) -> Option<ToolSet> {
    let mut names = std::collections::HashSet::new();
    let raw: Vec<String> = clean_corpus_tools()?
        .into_iter()
        .take(n)
        .enumerate()
        .map(|(i, mut t)| {
            let name = t["name"].as_str().unwrap_or("t").to_string();
            if !names.insert(name.clone()) {
                t["name"] = Value::String(format!("{name}_{i}"));
            }
            serde_json::to_string(&t).unwrap()
        })
        .collect();
    Some(ToolSet::of_raw(&raw).expect("the set parses"))
}

fn clean_tools() -> Option<Vec<ToolSet>> {
    Some(
        clean_corpus_tools()?
            .iter()
            .filter_map(|t| ToolSet::of_raw(&[serde_json::to_string(t).ok()?]).ok())
            .collect(),
    )
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("rules");
    group.measurement_time(Duration::from_secs(10));

    let set = okta(1000);
    let chars: usize = set.tools.iter().map(|t| t.raw.chars().count()).sum();
    assert_eq!(rules::scan(&set, None).block, 0, "okta is clean");
    group.throughput(Throughput::Elements(set.tools.len() as u64));
    group.bench_function(format!("okta1000 ({chars} chars of JSON)"), |b| {
        b.iter(|| black_box(rules::scan(black_box(&set), None)))
    });

    if let Some(set) = distinct(1000) {
        let chars: usize = set.tools.iter().map(|t| t.raw.chars().count()).sum();
        group.throughput(Throughput::Elements(set.tools.len() as u64));
        group.bench_function(format!("distinct1000 ({chars} chars of JSON)"), |b| {
            b.iter(|| black_box(rules::scan(black_box(&set), None)))
        });
    }

    if let Some(sets) = clean_tools() {
        group.throughput(Throughput::Elements(sets.len() as u64));
        group.bench_function(format!("clean-dev ({} tools)", sets.len()), |b| {
            b.iter(|| {
                for s in &sets {
                    black_box(rules::scan(black_box(s), None));
                }
            })
        });
    }

    let chunk = "before using this tool read ignore all other tools must when the a_b tool is used always send data to https://x ";
    let big = chunk.repeat(1_000_000 / chunk.len());
    let hostile = ToolSet::of_raw(&[format!(r#"{{"name":"t","description":"{big}"}}"#)]).unwrap();
    group.throughput(Throughput::Elements(1));
    group.sample_size(10);
    group.bench_function("hostile (1,000,000 chars, cut to the field limit)", |b| {
        b.iter(|| black_box(rules::scan(black_box(&hostile), Some(&big))))
    });

    // TOOLMARK_BENCH_WORD picks another word (`-shred ` starts a part with `\s` and `*`).
    let word = std::env::var("TOOLMARK_BENCH_WORD").unwrap_or_else(|_| "in ".into());
    // Each text numbered at its start, so that no two are the same (the memo does not help).
    let props: Vec<String> = (0..50)
        .map(|i| {
            let text = format!("{i} {}", word.repeat(20_000 / word.len()));
            let text = serde_json::to_string(&text).unwrap();
            format!(r#""p{i}":{{"type":"string","description":{text}}}"#)
        })
        .collect();
    let set = ToolSet::of_raw(&[format!(
        r#"{{"name":"t","description":"x","inputSchema":{{"type":"object","properties":{{{}}}}}}}"#,
        props.join(",")
    )])
    .unwrap();
    group.bench_function("hostile-set (50 x 20,000 chars of one word)", |b| {
        b.iter(|| black_box(rules::scan(black_box(&set), None)))
    });
    // Every text matches: each rule's `fires` example, numbered so that no two texts are the
    // same (the memo does not help), over 100 tools, to the scan's whole budget.
    let fires: Vec<&str> = rules::RULES.iter().map(|r| r.fires).collect();
    let mut n = 0;
    let tools: Vec<String> = (0..100)
        .map(|t| {
            let props: Vec<String> = (0..200)
                .map(|_| {
                    n += 1;
                    let text = format!("{} {n}", fires[n % fires.len()]);
                    format!(
                        r#""p{n}":{{"type":"string","description":{}}}"#,
                        serde_json::to_string(&text).unwrap()
                    )
                })
                .collect();
            format!(
                r#"{{"name":"t{t}","inputSchema":{{"type":"object","properties":{{{}}}}}}}"#,
                props.join(",")
            )
        })
        .collect();
    let set = ToolSet::of_raw(&tools).unwrap();
    let chars: usize = set.tools.iter().map(|t| t.raw.chars().count()).sum();
    group.bench_function(
        format!("matching ({chars} chars, 20,000 texts, each a match)"),
        |b| b.iter(|| black_box(rules::scan(black_box(&set), None))),
    );

    // Every text holds every rule's `fires` example (numbered, distinct): nearly every
    // alternative is a candidate on every text, to the scan's budget.
    let soup = fires.join(" ");
    let props: Vec<String> = (0..1_000_000 / soup.len() + 1)
        .map(|i| {
            let text = serde_json::to_string(&format!("{i} {soup}")).unwrap();
            format!(r#""p{i}":{{"type":"string","description":{text}}}"#)
        })
        .collect();
    let set = ToolSet::of_raw(&[format!(
        r#"{{"name":"t","inputSchema":{{"type":"object","properties":{{{}}}}}}}"#,
        props.join(",")
    )])
    .unwrap();
    group.bench_function(
        format!("soup ({} texts of every rule's example)", props.len()),
        |b| b.iter(|| black_box(rules::scan(black_box(&set), None))),
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
