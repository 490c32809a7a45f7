//! The bytes a crawl leaves behind are pinned: two runs over a registry with every kind of
//! target and outcome are recorded, and every log entry (which names its observation document
//! by digest, so it pins the document's bytes too), every stored document and the tree root are
//! compared with a committed fixture. Restructuring the code must not change a byte of it.
//!
//! `TOOLMARK_BLESS=1 cargo test -p toolmark-index --test golden` rewrites the fixture; a change
//! to it is a change of the log format and must be deliberate.

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use support::*;
use toolmark_observation::observe::{Attempt, Observation, Status, Transport};
use toolmark_observation::registry::{Declared, Withheld, WithheldWhy};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/golden-crawl.json"
);

fn registry() -> Vec<toolmark_observation::registry::Record> {
    records(json!([
        {"name": "io.example/alpha", "version": "1.0.0", "title": "Alpha",
         "remotes": [{"type": "streamable-http", "url": "https://alpha.example.com/mcp"}],
         "packages": [{"registryType": "npm", "identifier": "@example/alpha",
                       "version": "1.0.0", "transport": {"type": "stdio"}},
                      {"registryType": "pypi", "identifier": "example-alpha",
                       "version": "1.0.0", "transport": {"type": "stdio"}}]},
        {"name": "io.example/beta", "version": "2.0.0",
         "remotes": [{"type": "streamable-http", "url": "https://beta.example.com/mcp"}],
         "packages": [{"registryType": "oci", "identifier": "ghcr.io/example/beta",
                       "version": "2.0.0"}]},
        {"name": "io.example/delta", "version": "0.1.0",
         "remotes": [{"type": "sse", "url": "https://delta.example.com/sse"}]},
        {"name": "io.example/epsilon", "version": "0.2.0",
         "remotes": [{"type": "streamable-http", "url": "https://epsilon.example.com/mcp"}]},
        {"name": "io.example/zeta", "version": "0.3.0",
         "remotes": [{"type": "streamable-http", "url": "https://zeta.example.com/mcp"},
                     {"type": "streamable-http", "url": "http://zeta.example.com/mcp"},
                     {"type": "websocket", "url": "wss://zeta.example.com/ws"}]},
        {"name": "io.example/gamma", "version": "3.0.0",
         "remotes": [
             {"type": "streamable-http", "url": "https://{tenant}.gamma.example.com/mcp"},
             {"type": "streamable-http", "url": "https://gamma.example.com/mcp",
              "headers": [{"name": "Authorization", "value": "Bearer {secret_token}",
                           "isRequired": true, "isSecret": true}]}]}
    ]))
}

/// A streamable-HTTP attempt that failed before the SSE fallback answered.
fn sse_fallback(secs: u64, pages: Vec<String>) -> Observation {
    let mut obs = Observation {
        protocol_version: Some("2024-11-05".into()),
        ..ok(secs, pages)
    };
    let dialled = obs.dialled_mut().expect("a remote's");
    dialled.transport = Some(Transport::Sse);
    dialled.attempts = vec![
        Attempt {
            transport: Transport::StreamableHttp,
            status: Status::Http(405),
            detail: "405 from POST".into(),
        },
        Attempt {
            transport: Transport::Sse,
            status: Status::Ok,
            detail: String::new(),
        },
    ];
    dialled.sse_responses = true;
    obs
}

/// gamma's keyed remote, dialled without its secret header (since #13): it refuses.
fn gamma_anonymous(secs: u64) -> Observation {
    let mut obs = auth_required(secs);
    obs.detail = "401 from initialize; without declared header(s) Authorization (secret)".into();
    obs.dialled_mut().expect("a remote's").declared = Declared {
        withheld: vec![Withheld {
            name: "Authorization".into(),
            required: true,
            why: WithheldWhy::Secret,
        }],
        ..Declared::default()
    };
    obs
}

fn day_one(url: &str) -> Option<Observation> {
    Some(match url {
        "https://alpha.example.com/mcp" => ok(day(0, 10), vec![corpus_page(FILESYSTEM)]),
        "https://beta.example.com/mcp" => auth_required(day(0, 11)),
        "https://delta.example.com/sse" => sse_fallback(day(0, 12), vec![corpus_page(MEMORY)]),
        "https://epsilon.example.com/mcp" => Observation {
            pages: vec![corpus_page(FETCH)],
            ..failed(day(0, 13), Status::Partial, "page cap of 100 reached")
        },
        "https://zeta.example.com/mcp" => Observation {
            elapsed: Duration::from_millis(1),
            ..failed(
                day(0, 14),
                Status::TooLarge,
                "tools/list result over 16 MiB",
            )
        },
        "https://gamma.example.com/mcp" => gamma_anonymous(day(0, 15)),
        other => panic!("dialled {other}"),
    })
}

fn day_two(url: &str) -> Option<Observation> {
    Some(match url {
        "https://alpha.example.com/mcp" => ok(day(1, 10), vec![filesystem_rug_pull()]),
        "https://beta.example.com/mcp" => ok(day(1, 11), vec![corpus_page(ALFRESCO)]),
        "https://delta.example.com/sse" => sse_fallback(day(1, 12), vec![corpus_page(MEMORY)]),
        "https://epsilon.example.com/mcp" => failed(day(1, 13), Status::Http(503), "503"),
        "https://zeta.example.com/mcp" => failed(day(1, 14), Status::Dns, "no such host"),
        "https://gamma.example.com/mcp" => gamma_anonymous(day(1, 15)),
        other => panic!("dialled {other}"),
    })
}

/// Everything a crawl leaves that a reader can see, as comparable text.
fn crawl() -> serde_json::Value {
    let mut env = Env::new("golden");
    let recs = registry();
    env.run(&day_str(0, 0), &recs, &[], day_one);
    env.run(&day_str(1, 0), &recs[..5], &["io.example/gamma"], day_two);
    let entries: Vec<String> = (0..env.log.head().size)
        .map(|i| String::from_utf8(env.log.entry(i).unwrap()).unwrap())
        .collect();
    let mut documents = BTreeMap::new();
    for e in env.entries() {
        if let Some(sri) = e.raw {
            let bytes = env.blobs.get(&sri).unwrap().unwrap();
            documents.insert(sri.to_string(), String::from_utf8(bytes).unwrap());
        }
    }
    json!({
        "entries": entries,
        "documents": documents,
        "size": env.log.head().size,
        "root": env.log.head().root.0.iter().map(|b| format!("{b:02x}")).collect::<String>(),
    })
}

#[test]
fn a_fixture_crawl_leaves_byte_identical_entries_documents_and_root() {
    let got = crawl();
    if std::env::var_os("TOOLMARK_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
        std::fs::write(FIXTURE, text).unwrap();
        return;
    }
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    assert_eq!(got["size"], want["size"]);
    let (g, w) = (
        got["entries"].as_array().unwrap(),
        want["entries"].as_array().unwrap(),
    );
    for (i, (g, w)) in g.iter().zip(w).enumerate() {
        assert_eq!(g, w, "log entry {i}");
    }
    assert_eq!(got["documents"], want["documents"]);
    assert_eq!(got["root"], want["root"]);
}

#[test]
fn every_fixture_document_reads_back_and_writes_the_same_bytes() {
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    let documents = fixture["documents"].as_object().unwrap();
    assert!(documents.len() >= 8, "{}", documents.len());
    for (sri, text) in documents {
        let text = text.as_str().unwrap();
        let doc = toolmark_index::Document::decode(text.as_bytes()).unwrap();
        assert!(
            doc.remote().is_some(),
            "{sri}: every fixture document is a remote's"
        );
        assert_eq!(doc.encode().unwrap(), text.as_bytes(), "{sri}");
    }
}
