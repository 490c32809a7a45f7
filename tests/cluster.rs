//! The cluster's roles as real processes on the real PostgreSQL and SeaweedFS: a scheduler
//! enqueues a crawl of a registry stand-in, two workers observe it (a real MCP server when this
//! machine has them, remotes that refuse the connection, a remote the registry templates), two
//! sequencers — one active, one standing by — log it, an API replica follows; the active
//! sequencer is killed with SIGKILL and the standby takes over the next run. Every target is
//! logged exactly once per run and the log read back from the bucket verifies.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod common;
#[path = "../crawler/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Stream, Watched, metric};
use serde_json::{Value, json};
use toolmark_standins::registry::RegistryStandIn;
use toolmark_standins::services::{Bucket, Database};

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(120)
}

fn item(name: &str, url: &str) -> Value {
    json!({
        "server": {
            "name": name, "description": "cluster test server", "version": "1.0.0",
            "remotes": [{"type": "streamable-http", "url": url}],
        },
        "_meta": {"io.modelcontextprotocol.registry/official": {
            "status": "active", "publishedAt": "2025-12-17T00:00:00Z",
            "updatedAt": "2025-12-17T00:00:00Z", "isLatest": true,
        }},
    })
}

struct Cluster {
    db: Database,
    bucket: Bucket,
    dir: PathBuf,
    registry: String,
}

impl Cluster {
    fn objects(&self) -> String {
        format!("s3://{}/{}", self.bucket.bucket, self.bucket.prefix)
    }

    /// `toolmark ARGS` over the cluster's stores, with `data` as its data directory.
    fn command(&self, args: &[&str], data: &str) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolmark"));
        c.args(args)
            .arg("--data")
            .arg(self.dir.join(data))
            .args(["--head", self.db.url(), "--objects", &self.objects()])
            .args(["--registry", &self.registry])
            // Each role's /health and /metrics (an API replica's API) on a port of its own.
            .args(["--listen", "127.0.0.1:0"])
            // Loopback remotes (tests only), no DNS.
            .env("TOOLMARK_ALLOW_PRIVATE", "true")
            .env("TOOLMARK_NO_DNS", "true");
        common::bucket_env(&mut c, &self.bucket);
        c
    }

    fn start(&self, args: &[&str], data: &str, tag: &'static str, ready: &str) -> Watched {
        let mut w = Watched::spawn(self.command(args, data), Stream::Stderr, tag);
        w.wait_for(ready, deadline());
        w
    }

    fn enqueue(&self) -> String {
        let out = self
            .command(&["scheduler", "--enqueue-now"], "scheduler")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scheduler: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The log's size as its published checkpoint says (read from the bucket by `log verify`).
    fn verified_size(&self) -> u64 {
        let mut verify = Command::new(env!("CARGO_BIN_EXE_toolmark"));
        verify.args(["log", "verify", &format!("{}/log/public", self.objects())]);
        let out = common::bucket_env(&mut verify, &self.bucket)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "log verify: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // "ok: ORIGIN at size N, root …"
        text.split("at size ")
            .nth(1)
            .and_then(|t| t.split(',').next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no size in {text}"))
    }

    /// The queue's jobs and hand-offs, for a failure's message.
    fn queue_state(&self) -> String {
        let q = Command::new("/usr/lib/postgresql/15/bin/psql")
            .arg(self.db.url())
            .args([
                "-c",
                "SELECT id, run, key, state, attempt, claims, left(result, 120) FROM queue_jobs ORDER BY id",
                "-c",
                "SELECT seq, job, taken, length(body) FROM queue_handoff ORDER BY seq",
            ])
            .output();
        match q {
            Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
            Err(e) => format!("(psql: {e})"),
        }
    }

    fn wait_for_size(&self, size: u64) {
        let until = deadline();
        loop {
            let now = self.verified_size();
            if now == size {
                return;
            }
            assert!(
                now < size,
                "the log holds {now} entries, more than the {size} expected"
            );
            if Instant::now() >= until {
                panic!(
                    "the log stayed at {now} entries, not {size}; the queue:\n{}",
                    self.queue_state()
                );
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

#[test]
fn a_cluster_logs_every_target_once_per_run_and_survives_its_sequencer() {
    let (Some(db), Some(bucket)) = (
        toolmark_standins::services::postgres().unwrap(),
        toolmark_standins::services::s3().unwrap(),
    ) else {
        return;
    };
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cluster-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let everything = support::mcp_servers()
        .map(|servers| support::Server::everything(&servers, "2026.8.31", "streamableHttp"));
    let refused = support::free_port();
    let mut items: Vec<Value> = (0..6)
        .map(|i| {
            item(
                &format!("io.toolmark.test/refused-{i}"),
                &format!("http://127.0.0.1:{refused}/mcp/{i}"),
            )
        })
        .collect();
    // A remote the registry templates: skipped, but logged with its reason.
    items.push(item(
        "io.toolmark.test/templated",
        "https://{tenant}.example.com/mcp",
    ));
    if let Some(e) = &everything {
        items.push(item(
            "io.toolmark.test/everything",
            &format!("http://127.0.0.1:{}/mcp", e.port),
        ));
    }
    let targets = items.len() as u64;
    let registry = runtime.block_on(RegistryStandIn::start(items)).unwrap();
    let cluster = Cluster {
        db,
        bucket,
        dir: dir.clone(),
        registry: registry.url(),
    };

    // The first sequencer creates the log; the second uses the same signing key.
    let mut active = cluster.start(
        &["sequencer"],
        "sequencer-a",
        "sequencer-a",
        "sequencer: log",
    );
    let key = "log/private/log.key";
    std::fs::create_dir_all(dir.join("sequencer-b/log/private")).unwrap();
    std::fs::copy(
        dir.join("sequencer-a").join(key),
        dir.join("sequencer-b").join(key),
    )
    .unwrap();
    let mut standby = cluster.start(
        &["sequencer"],
        "sequencer-b",
        "sequencer-b",
        "sequencer: log",
    );
    let mut workers: Vec<Watched> = (0..2)
        .map(|i| {
            cluster.start(
                &["worker"],
                &format!("worker-{i}"),
                if i == 0 { "worker-0" } else { "worker-1" },
                "claiming",
            )
        })
        .collect();

    let first = cluster.enqueue();
    assert!(
        first.contains(&format!("{targets} targets, {targets} jobs added")),
        "{first}"
    );
    cluster.wait_for_size(targets);

    // An API replica follows the bucket.
    let mut replica = Watched::spawn(
        cluster.command(&["api", "--follow-seconds", "1"], "replica"),
        Stream::Stderr,
        "api",
    );
    let url = Watched::url_in(&replica.wait_for("replica serving", deadline()));
    assert_eq!(
        metric(&url, "toolmark_follower_indexed_entries"),
        targets as f64
    );

    // The active sequencer dies; the standby takes the next run once its lease lapses.
    active.child.kill().unwrap();
    let _ = active.child.wait();
    let second = cluster.enqueue();
    assert!(
        second.contains(&format!("{targets} jobs added")),
        "{second}"
    );
    cluster.wait_for_size(2 * targets);
    let until = deadline();
    while metric(&url, "toolmark_follower_indexed_entries") < (2 * targets) as f64 {
        assert!(
            Instant::now() < until,
            "the replica did not follow the second run"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    // Each run logged each target once: every server has two entries.
    let servers: Value = serde_json::from_str(
        &ureq::get(&format!("{url}/api/v1/servers?limit=100"))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    let servers = servers["servers"].as_array().unwrap();
    assert_eq!(servers.len() as u64, targets);
    if everything.is_some() {
        let e = servers
            .iter()
            .find(|s| s["name"] == "io.toolmark.test/everything")
            .unwrap();
        assert_eq!(e["lastStatus"], "ok", "{e}");
    }
    let templated = servers
        .iter()
        .find(|s| s["name"] == "io.toolmark.test/templated")
        .unwrap();
    assert_eq!(templated["lastStatus"], "templated-url", "{templated}");

    for w in workers.iter_mut().chain([&mut standby, &mut replica]) {
        w.signal("-TERM");
        assert!(w.exit(deadline()).success());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
