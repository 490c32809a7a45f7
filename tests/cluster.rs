//! The cluster's roles as real processes on the real PostgreSQL and SeaweedFS (issue #27's
//! cluster test): a scheduler enqueues crawls of a registry stand-in — a fleet of stand-in MCP
//! servers on three hosts, remotes that refuse the connection, a remote the registry templates,
//! the real server-everything when this machine has it — and a package sweep of a real npm
//! package served by the real Verdaccio (with gVisor); two workers observe, two sequencers —
//! one active, one standing by — log, two API replicas follow. One worker is killed with
//! SIGKILL while it observes, the active sequencer while the second crawl is logged, one
//! replica between the runs. Afterwards every target was logged exactly once per run, no host
//! ever served more observations at once than the per-host limit, `log verify` and Go's
//! verifier accept the log read back from the bucket, both replicas answer alike for every
//! target, the standby took over, and every job's entry is in the log.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod common;
#[path = "../log/tests/support/go.rs"]
mod go;
#[path = "../sandbox/tests/support/registries.rs"]
mod registries;
#[path = "../crawler/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Stream, Watched, metric};
use serde_json::{Value, json};
use toolmark_standins::fleet::{Fleet, FleetSpec};
use toolmark_standins::registry::RegistryStandIn;
use toolmark_standins::services::{Bucket, Database};

/// Observations in flight per host, across every worker (`crawl.per_host`).
const PER_HOST: u64 = 2;
/// The workers' claims and host places (`schedules.lease_seconds`): a killed worker's jobs
/// return this long after it died.
const LEASE_SECONDS: &str = "10";
const ORIGIN: &str = "cluster.test/log";

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(180)
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
    config: PathBuf,
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
            .arg("--config")
            .arg(&self.config)
            .args(["--head", self.db.url(), "--objects", &self.objects()])
            .args(["--registry", &self.registry, "--origin", ORIGIN])
            // Each role's /health and /metrics (an API replica's API) on a port of its own.
            .args(["--listen", "127.0.0.1:0"])
            // Loopback remotes (tests only), no DNS.
            .env("TOOLMARK_ALLOW_PRIVATE", "true")
            .env("TOOLMARK_NO_DNS", "true")
            .env("TOOLMARK_CRAWL_PER_HOST", PER_HOST.to_string())
            // Small batches: both workers get jobs of every run.
            .env("TOOLMARK_CRAWL_CONCURRENCY", "4")
            .env("TOOLMARK_LEASE_SECONDS", LEASE_SECONDS);
        common::bucket_env(&mut c, &self.bucket);
        c
    }

    /// A role; waits for `ready` in its log and returns it with that line.
    fn start(
        &self,
        args: &[&str],
        data: &str,
        tag: &'static str,
        ready: &str,
    ) -> (Watched, String) {
        let mut w = Watched::spawn(self.command(args, data), Stream::Stderr, tag);
        let line = w.wait_for(ready, deadline());
        (w, line)
    }

    fn enqueue(&self, what: &str) -> String {
        let out = self
            .command(&["scheduler", "--enqueue-now", what], "scheduler")
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

    /// One SQL query's rows, `|`-separated.
    fn sql(&self, query: &str) -> String {
        let out = Command::new("/usr/lib/postgresql/15/bin/psql")
            .arg(self.db.url())
            .args(["-qtA", "-c", query])
            .output()
            .unwrap();
        assert!(out.status.success(), "{query}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// The queue's jobs and hand-offs, for a failure's message.
    fn queue_state(&self) -> String {
        self.sql(
            "SELECT id, run, key, state, attempt, claims, lapses, holder, left(error, 120) \
             FROM queue_jobs ORDER BY id",
        ) + "\n"
            + &self.sql("SELECT seq, job, taken, length(body) FROM queue_handoff ORDER BY seq")
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

/// `GET base + path` as JSON.
fn get(url: &str) -> Value {
    serde_json::from_str(
        &ureq::get(url)
            .call()
            .unwrap_or_else(|e| panic!("GET {url}: {e}"))
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap()
}

/// `GET base + path` as JSON, the replica's own base URL (in links) written `BASE`.
fn answer(base: &str, path: &str) -> Value {
    let text = get(&format!("{base}{path}")).to_string();
    serde_json::from_str(&text.replace(base, "BASE")).unwrap()
}

/// Waits until the replica at `url` has indexed `size` entries.
fn followed(url: &str, size: u64) {
    let until = deadline();
    while metric(url, "toolmark_follower_indexed_entries") < size as f64 {
        assert!(
            Instant::now() < until,
            "the replica at {url} did not follow to {size}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// runsc and Verdaccio, or `None` (the sweep is left out) where they are missing; under CI both
/// must be there.
fn sandbox_parts() -> Option<PathBuf> {
    let runsc = ["/usr/bin/runsc", "/usr/sbin/runsc"]
        .iter()
        .any(|p| Path::new(p).is_file());
    if !runsc {
        assert!(std::env::var_os("CI").is_none(), "runsc is needed under CI");
        eprintln!("the package sweep is left out: no runsc");
        return None;
    }
    registries::installed("TOOLMARK_VERDACCIO", "verdaccio")
}

#[test]
fn a_cluster_logs_every_target_once_per_run_through_killed_workers_sequencers_and_replicas() {
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

    // Three hosts of four endpoints each, every request taking 150–300 ms: observations
    // overlap, and the per-host limit has something to hold back.
    let fleet = runtime
        .block_on(Fleet::start(FleetSpec {
            hosts: 3,
            endpoints_per_host: 4,
            latency: (Duration::from_millis(150), Duration::from_millis(300)),
            seed: 27,
            tool_sets: vec![
                r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#.into(),
                r#"{"tools":[{"name":"add","inputSchema":{"type":"object"}}]}"#.into(),
            ],
        }))
        .unwrap();
    let mut items = fleet.registry_items(1);
    let refused = support::free_port();
    items.extend((0..3).map(|i| {
        item(
            &format!("io.toolmark.test/refused-{i}"),
            &format!("http://127.0.0.1:{refused}/mcp/{i}"),
        )
    }));
    // A remote the registry templates: skipped, but logged with its reason.
    items.push(item(
        "io.toolmark.test/templated",
        "https://{tenant}.example.com/mcp",
    ));
    let everything = support::mcp_servers()
        .map(|servers| support::Server::everything(&servers, "2026.8.31", "streamableHttp"));
    if let Some(e) = &everything {
        items.push(item(
            "io.toolmark.test/everything",
            &format!("http://127.0.0.1:{}/mcp", e.port),
        ));
    }
    let remotes = items.len() as u64;
    // A real npm package in the real Verdaccio, listed too: the sweep's.
    let verdaccio = sandbox_parts().map(|install| {
        let v = registries::Verdaccio::start(&install, &dir);
        v.publish(&common::packages::pack(&dir, "0.1.0"));
        v
    });
    let mut config = String::new();
    if let Some(v) = &verdaccio {
        items.push(common::packages::item("0.1.0", "2026-12-01T00:00:00Z"));
        config = format!(
            "[packages]\nnpm_registry = \"{}\"\nallow_private = true\nwork = \"{}\"\ncache = \"{}\"\n",
            v.url,
            dir.join("sandbox-runs").display(),
            dir.join("sandbox-cache").display()
        );
    }
    let packages = u64::from(verdaccio.is_some());
    let registry = runtime.block_on(RegistryStandIn::start(items)).unwrap();
    let cluster = Cluster {
        db,
        bucket,
        dir: dir.clone(),
        registry: registry.url(),
        config: dir.join("toolmark.toml"),
    };
    std::fs::write(&cluster.config, config).unwrap();

    // The first sequencer creates the log; the second signs with the same key.
    let (mut active, line) = cluster.start(
        &["sequencer"],
        "sequencer-a",
        "sequencer-a",
        "health and metrics on",
    );
    let active_url = Watched::url_in(&line);
    active.wait_for("sequencer: log", deadline());
    let key = "log/private/log.key";
    std::fs::create_dir_all(dir.join("sequencer-b/log/private")).unwrap();
    std::fs::copy(
        dir.join("sequencer-a").join(key),
        dir.join("sequencer-b").join(key),
    )
    .unwrap();
    let (mut standby, line) = cluster.start(
        &["sequencer"],
        "sequencer-b",
        "sequencer-b",
        "health and metrics on",
    );
    let standby_url = Watched::url_in(&line);
    let mut workers: Vec<(Watched, String)> = ["worker-0", "worker-1"]
        .into_iter()
        .map(|name| {
            let (mut w, line) = cluster.start(&["worker"], name, name, "health and metrics on");
            w.wait_for("claiming", deadline());
            (w, Watched::url_in(&line))
        })
        .collect();
    // Two replicas signing with the cluster's one answer key.
    let (mut replica_a, line) = cluster.start(
        &["api", "--follow-seconds", "1"],
        "replica-a",
        "replica-a",
        "replica serving",
    );
    let url_a = Watched::url_in(&line);
    std::fs::create_dir_all(dir.join("replica-b/api")).unwrap();
    std::fs::copy(
        dir.join("replica-a/api/answer.key"),
        dir.join("replica-b/api/answer.key"),
    )
    .unwrap();
    let replica_b_args = ["api", "--follow-seconds", "1"];
    let (mut replica_b, _) =
        cluster.start(&replica_b_args, "replica-b", "replica-b", "replica serving");

    // Run one. A worker dies with SIGKILL while it holds claims: they return to the queue a
    // lease later, and the other worker observes them.
    let first = cluster.enqueue("crawl");
    assert!(
        first.contains(&format!("{remotes} targets, {remotes} jobs added")),
        "{first}"
    );
    let victim = workers[0].0.child.id();
    let until = deadline();
    loop {
        // Observing: it holds a claim and a place on the claim's host.
        let held = cluster.sql(&format!(
            "SELECT (SELECT count(*) FROM queue_jobs WHERE state = 'claimed' \
                     AND holder LIKE '%:{victim}:%') \
                  * (SELECT count(*) FROM queue_host_slots WHERE until > now() \
                     AND holder LIKE '%:{victim}:%')"
        ));
        if held != "0" {
            break;
        }
        assert!(
            Instant::now() < until,
            "worker-0 never held a claim: {}",
            cluster.queue_state()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    workers[0].0.child.kill().unwrap();
    let _ = workers[0].0.child.wait();
    cluster.wait_for_size(remotes);
    let public = common::public_objects(&cluster.bucket, &cluster.objects());
    let first_checkpoint = dir.join("first.checkpoint");
    std::fs::write(
        &first_checkpoint,
        public.get("checkpoint").unwrap().unwrap(),
    )
    .unwrap();
    // Its claims lapsed once each and were worked by the other worker.
    let lapsed: u64 = cluster
        .sql("SELECT coalesce(sum(lapses), 0) FROM queue_jobs")
        .parse()
        .unwrap();
    assert!(lapsed >= 1, "{}", cluster.queue_state());
    let survivor = &workers[1].1;
    let health = get(&format!("{survivor}/health"));
    assert_eq!(health["status"], "ok", "{health}");
    assert!(metric(survivor, "toolmark_queue_lease_expiries{kind=\"remote\"}") >= 1.0);

    // The sweep: the package's one version, observed in gVisor by the surviving worker.
    if verdaccio.is_some() {
        let swept = cluster.enqueue("sweep");
        assert!(swept.contains("1 targets, 1 jobs added"), "{swept}");
        cluster.wait_for_size(remotes + packages);
    }
    let before_second = remotes + packages;

    // A replica dies between the runs and is started again on its own index.
    followed(&url_a, before_second);
    replica_b.child.kill().unwrap();
    let _ = replica_b.child.wait();

    // Run two. The active sequencer dies with SIGKILL once it has appended part of the run (or
    // all of it, on a fast machine); the standby takes the lease and logs the rest.
    let second = cluster.enqueue("crawl");
    assert!(
        second.contains(&format!("{remotes} jobs added")),
        "{second}"
    );
    let until = deadline();
    while metric(&active_url, "toolmark_log_size") <= before_second as f64 {
        assert!(
            Instant::now() < until,
            "the active sequencer logged nothing of run two"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    active.child.kill().unwrap();
    let _ = active.child.wait();
    let total = before_second + remotes;
    cluster.wait_for_size(total);
    assert_eq!(
        metric(&standby_url, "toolmark_role_active{role=\"sequencer\"}"),
        1.0
    );
    assert!(
        metric(
            &standby_url,
            "toolmark_role_events_total{role=\"sequencer\",event=\"entries_sequenced\"}"
        ) > 0.0,
        "the standby logged nothing"
    );
    let (mut replica_b, line) =
        cluster.start(&replica_b_args, "replica-b", "replica-b", "replica serving");
    let url_b = Watched::url_in(&line);
    followed(&url_a, total);
    followed(&url_b, total);

    // Nothing acknowledged was lost: every job finished with its entry, and every hand-off was
    // taken into the log.
    assert_eq!(
        cluster.sql("SELECT state, count(*) FROM queue_jobs GROUP BY state"),
        format!("done|{}", 2 * remotes + packages),
        "{}",
        cluster.queue_state()
    );
    assert_eq!(
        cluster.sql("SELECT count(*) FROM queue_handoff WHERE NOT taken"),
        "0"
    );
    // No host ever served more observations at once than the limit across both workers.
    let peaks = fleet.peak_in_flight();
    assert!(
        peaks.iter().all(|p| *p >= 1 && *p <= PER_HOST),
        "requests at once per host: {peaks:?}"
    );

    // Every remote logged exactly once in each run, and both replicas answer alike.
    let list = |url: &str| answer(url, "/api/v1/servers?limit=100");
    let servers = list(&url_a);
    assert!(
        servers == list(&url_b),
        "the replicas list the servers differently"
    );
    let servers = servers["servers"].as_array().unwrap();
    assert_eq!(servers.len() as u64, remotes + packages);
    for s in servers {
        let id = s["id"].as_str().unwrap();
        // Listed as a crawl on one box lists it: from the runs' harvests.
        assert!(
            s["firstListed"].is_string() && s["lastListed"].is_string(),
            "{s}"
        );
        let path = format!("/api/v1/servers/{id}");
        let detail_a = answer(&url_a, &path);
        assert!(
            detail_a == answer(&url_b, &path),
            "the replicas describe {id} differently"
        );
        let entries: Vec<u64> = detail_a["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["entry"].as_u64().unwrap())
            .collect();
        if s["kind"] == "package" {
            assert_eq!(entries.len(), 1, "{id}: {entries:?}");
            assert_eq!(s["lastStatus"], "ok", "{s}");
            continue;
        }
        let in_run = |from: u64, to: u64| entries.iter().filter(|e| (from..to).contains(e)).count();
        assert_eq!(
            (in_run(0, remotes), in_run(before_second, total)),
            (1, 1),
            "{id}: entries {entries:?}"
        );
    }
    // The replicas show the cluster's runs (from the queue): both crawls done.
    for url in [&url_a, &url_b] {
        let health = get(&format!("{url}/health"));
        assert_eq!(health["jobs"]["crawl"]["lastStatus"], "ok", "{health}");
    }
    // … and record each crawl run once it has ended (a follow pass later): its remotes per
    // status, as a crawl on one box reports them.
    let second_started = second
        .split("run crawl-")
        .nth(1)
        .and_then(|t| t.get(..20))
        .unwrap_or_else(|| panic!("no run start in {second:?}"));
    for url in [&url_a, &url_b] {
        let until = deadline();
        let run = loop {
            let stats = answer(url, "/api/v1/stats");
            let run = &stats["lastRun"];
            if run["startedAt"] == second_started && run["observed"] == remotes {
                break run.clone();
            }
            assert!(
                Instant::now() < until,
                "{url}: no second run recorded: {stats}"
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        assert_eq!(run["status"], "complete", "{run}");
        assert!(run["statuses"]["ok"].as_u64() > Some(0), "{run}");
    }

    // A client's report reaching both replicas is counted once: the replicas share their
    // client reports in PostgreSQL, not in their data directories.
    let reported = servers
        .iter()
        .find(|s| s["kind"] == "remote" && s["lastStatus"] == "ok")
        .unwrap();
    let report = json!({
        "endpoint": reported["endpoint"],
        "toolSetDigest": "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        "contribute": true,
    });
    for url in [&url_a, &url_b] {
        let a = common::check(url, &report);
        assert_eq!(a["contributed"], true, "{a}");
    }
    assert_eq!(
        cluster.sql("SELECT clients FROM client_reports"),
        "1",
        "one client through two replicas"
    );

    let status_of = |name: &str| {
        servers
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["lastStatus"].clone())
    };
    assert_eq!(
        status_of("io.toolmark.test/templated"),
        Some(json!("templated-url"))
    );
    if everything.is_some() {
        assert_eq!(status_of("io.toolmark.test/everything"), Some(json!("ok")));
    }

    // Code we did not write accepts the log read back from the bucket, consistent with the
    // checkpoint of run one.
    let copy = dir.join("public");
    std::fs::create_dir_all(&copy).unwrap();
    common::download_public(&public, &copy);
    if let Some(verify) = go::go_verifier() {
        let out = Command::new(verify)
            .arg("-dir")
            .arg(&copy)
            .arg("-old-checkpoint")
            .arg(&first_checkpoint)
            .args(["-origin", ORIGIN])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "Go's tlog: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let (survivor, _) = &mut workers[1];
    for w in [survivor, &mut standby, &mut replica_a, &mut replica_b] {
        w.signal("-TERM");
        assert!(w.exit(deadline()).success());
    }
    drop(registry);
    let _ = std::fs::remove_dir_all(&dir);
}
