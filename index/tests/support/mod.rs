//! Shared by the index's integration tests: a log + blobs + index in a scratch directory,
//! registry records built from real page JSON, and observations built from real tool sets.
#![allow(dead_code)] // each test file uses some of these

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use toolmark_index::{Blobs, Index, Recorded, Recorder, RunInput, TargetOutcome};
use toolmark_log::Log;
use toolmark_log::entry::Entry;
use toolmark_log::objects::{Objects, S3Options};
use toolmark_observation::observe::{AuthChallenge, Dialled, Observation, Status, Transport, Via};
use toolmark_observation::registry::{Record, TargetKind};

/// A log, a blob store and an index in one scratch directory.
pub struct Env {
    pub dir: PathBuf,
    pub log: Log,
    pub blobs: Blobs,
    pub index: Index,
}

impl Env {
    pub fn new(tag: &str) -> Env {
        Env::with_blobs(tag, None)
    }

    /// An `Env` whose blobs live in `blobs` (another store than `DIR/blobs`), when given.
    pub fn with_blobs(tag: &str, blobs: Option<Objects>) -> Env {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("index-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = Log::init(&dir.join("log"), "toolmark.test/log").unwrap();
        let blobs = match blobs {
            Some(objects) => Blobs::new(objects).unwrap(),
            None => Blobs::open(&dir.join("blobs")).unwrap(),
        };
        let index = Index::open(&dir.join("index.sqlite")).unwrap();
        Env {
            dir,
            log,
            blobs,
            index,
        }
    }

    pub fn recorder(&mut self) -> Recorder<'_> {
        Recorder::new(&mut self.log, &self.blobs, &mut self.index)
    }

    /// Begin a run listing `records` and record `observe`'s outcome for every target, in one
    /// batch.
    pub fn run(
        &mut self,
        started_at: &str,
        records: &[Record],
        delisted: &[&str],
        observe: impl Fn(&str) -> Option<Observation>,
    ) -> (i64, Vec<Recorded>) {
        let input = RunInput {
            started_at: started_at.into(),
            registry: "https://registry.test".into(),
            records: records.to_vec(),
            harvest_complete: true,
            delisted: delisted.iter().map(|s| s.to_string()).collect(),
            allow_cleartext: false,
        };
        let mut rec = self.recorder();
        let run = rec.begin_run(&input).unwrap();
        let lines = rec.record(run, outcomes(records, observe)).unwrap();
        (run, lines)
    }

    /// Every entry of the log, decoded.
    pub fn entries(&self) -> Vec<Entry> {
        (0..self.log.head().size)
            .map(|i| Entry::decode(&self.log.entry(i).unwrap()).unwrap())
            .collect()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The object stores every blob test runs on: a scratch directory, and a fresh prefix of the
/// shared test bucket when it is running. Each is the view the blobs use (`…/blobs`).
pub fn blob_stores(tag: &str) -> Vec<(&'static str, Objects)> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("blob-store-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut out = vec![("dir", Objects::dir(&dir).unwrap().sub("blobs"))];
    if let Some(bucket) = toolmark_standins::services::s3().expect("the test bucket") {
        let url = format!("s3://{}/{}", bucket.bucket, bucket.prefix);
        let options = S3Options::at(
            &bucket.endpoint,
            &bucket.access_key_id,
            &bucket.secret_access_key,
        );
        out.push(("bucket", Objects::s3(&url, &options).unwrap().sub("blobs")));
    }
    out
}

/// Every target of `records`, each with `observe(url)` for remotes that may be dialled.
pub fn outcomes(
    records: &[Record],
    observe: impl Fn(&str) -> Option<Observation>,
) -> Vec<TargetOutcome> {
    records
        .iter()
        .flat_map(toolmark_observation::registry::targets)
        .map(|target| {
            let observation = match (&target.kind, &target.skip) {
                (TargetKind::Remote { url, .. }, None) => observe(url),
                _ => None,
            };
            TargetOutcome {
                target,
                observation,
            }
        })
        .collect()
}

/// Registry records parsed from a real-shaped `/v0.1/servers` page.
pub fn records(servers: serde_json::Value) -> Vec<Record> {
    let items: Vec<serde_json::Value> = servers
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            serde_json::json!({
                "server": s,
                "_meta": {"io.modelcontextprotocol.registry/official": {
                    "status": "active", "isLatest": true,
                    "publishedAt": "2026-10-01T00:00:00Z", "updatedAt": "2026-10-01T00:00:00Z"
                }}
            })
        })
        .collect();
    let page = serde_json::json!({"servers": items, "metadata": {"count": items.len()}});
    let page = toolmark_observation::registry::parse_page(page.to_string().as_bytes()).unwrap();
    assert!(page.rejected.is_empty(), "{:?}", page.rejected);
    page.servers
}

/// Hugging Face's real registry record (`tests/fixtures/registry-huggingface.json`, see its
/// SOURCES.md): remotes `https://huggingface.co/mcp?login` and `https://huggingface.co/mcp`.
pub fn huggingface() -> Vec<Record> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../index/tests/fixtures/registry-huggingface.json"),
    )
    .unwrap();
    let items: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    records(serde_json::Value::Array(
        items.into_iter().map(|i| i["server"].clone()).collect(),
    ))
}

pub const HF_SERVER: &str = "co.huggingface/hf-mcp-server";
pub const HF_PLAIN: &str = "https://huggingface.co/mcp";
pub const HF_LOGIN: &str = "https://huggingface.co/mcp?login";

/// A corpus tool set as a `tools/list` page, byte for byte (a bare array is wrapped as
/// `{"tools":<array>}`).
pub fn corpus_page(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../toolset/tests/fixtures/corpus")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    if text.trim_start().starts_with('[') {
        format!("{{\"tools\":{text}}}")
    } else {
        text
    }
}

pub const FILESYSTEM: &str = "mcp-proxy-snapshots/server-filesystem.json";
pub const MEMORY: &str = "mcp-proxy-snapshots/server-memory.json";
pub const ALFRESCO: &str = "docker-mcp-registry/alfresco.tools.json";
pub const FETCH: &str = "mcp-proxy-snapshots/mcp-server-fetch.json";

/// The filesystem server's tools with the first `readOnlyHint` turned off (a dangerous change).
pub fn filesystem_rug_pull() -> String {
    let page = corpus_page(FILESYSTEM);
    let changed = page.replacen("\"readOnlyHint\": true", "\"readOnlyHint\": false", 1);
    assert_ne!(page, changed);
    changed
}

fn at(secs: u64) -> std::time::SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// A complete observation over streamable HTTP.
pub fn ok(secs: u64, pages: Vec<String>) -> Observation {
    Observation {
        started: at(secs),
        elapsed: Duration::from_millis(420),
        status: Status::Ok,
        protocol_version: Some("2025-06-18".into()),
        initialize: Some(
            "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},\
             \"serverInfo\":{\"name\":\"t\",\"version\":\"1\"}}"
                .into(),
        ),
        via: Via::Remote(Dialled {
            transport: Some(Transport::StreamableHttp),
            session: true,
            requests: 3,
            bytes: pages.iter().map(|p| p.len() as u64).sum(),
            address: Some("203.0.113.7:443".parse().unwrap()),
            ..Dialled::default()
        }),
        pages,
        ..Observation::remote()
    }
}

/// An observation that ended with `status`.
pub fn failed(secs: u64, status: Status, detail: &str) -> Observation {
    Observation {
        started: at(secs),
        elapsed: Duration::from_secs(20),
        status,
        detail: detail.into(),
        via: Via::Remote(Dialled {
            transport: Some(Transport::StreamableHttp),
            requests: 1,
            ..Dialled::default()
        }),
        ..Observation::remote()
    }
}

/// A 401 with a Bearer challenge.
pub fn auth_required(secs: u64) -> Observation {
    let mut obs = failed(secs, Status::AuthRequired, "401 from initialize");
    obs.dialled_mut().expect("a remote's").auth = Some(AuthChallenge {
            http_status: 401,
            method: "initialize".into(),
            www_authenticate: Some(
                "Bearer resource_metadata=\"https://beta.example.com/.well-known/oauth-protected-resource\", scope=\"tools\""
                    .into(),
            ),
            scheme: Some("Bearer".into()),
            resource_metadata: Some(
                "https://beta.example.com/.well-known/oauth-protected-resource".into(),
            ),
            scope: Some("tools".into()),
            error: None,
            realm: None,
            protected_resource: None,
    });
    obs
}

/// Unix seconds of 2026-11-30T00:00:00Z plus `day` days and `secs` seconds.
/// `obs` observed `days` later: the same outcome is a new observation (the log logs an
/// observation, with its time, once).
pub fn later(obs: Option<Observation>, days: u64) -> Option<Observation> {
    obs.map(|mut o| {
        o.started += Duration::from_secs(days * 86_400);
        o
    })
}

pub fn day(day: u64, secs: u64) -> u64 {
    1_795_996_800 + day * 86_400 + secs
}

/// `YYYY-MM-DDTHH:MM:SSZ` of [`day`].
pub fn day_str(d: u64, secs: u64) -> String {
    toolmark_index::time::from_unix(day(d, secs))
}

/// The id of the first target the search for `server` lists.
pub fn target_id(index: &Index, server: &str) -> String {
    let page = index
        .search_targets(
            &toolmark_index::TargetFilter {
                q: server.into(),
                ..toolmark_index::TargetFilter::default()
            },
            10,
            0,
        )
        .unwrap();
    page.targets[0].target.id.clone()
}
