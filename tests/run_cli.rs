//! `toolmark run`: configuration errors, precedence (file < environment < flags), and the
//! service itself against a registry stand-in and a slow stand-in fleet: a catch-up crawl at
//! start, SIGTERM mid-crawl (everything observed is committed, the log verifies, the process
//! exits 0), SIGKILL mid-crawl followed by a clean run, and the checkpoint heartbeat.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

#[path = "common/aics.rs"]
mod aics;
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{Stream, Watched};

use toolmark_schedules::LeaseStore;
use toolmark_standins::fleet::{Fleet, FleetSpec};
use toolmark_standins::registry::RegistryStandIn;

/// The crawl's schedule in these tests: only the catch-up run at start happens (its next
/// time, 29 February at 03:00, never falls within a test).
const CRAWL_CRON: &str = "0 3 29 2 *";

/// Bound on every wait in these tests (each normally takes a few seconds).
const PATIENCE: Duration = Duration::from_secs(90);

fn toolmark(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    c.args(args);
    for var in [
        "TOOLMARK_CONFIG",
        "TOOLMARK_DATA",
        "TOOLMARK_CHECK_RATE",
        "TOOLMARK_CRAWL_SCHEDULE",
    ] {
        c.env_remove(var);
    }
    c
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolmark-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn bad_configuration_is_a_clear_error_and_exit_2() {
    let dir = tmp("badconf");
    let file = dir.join("toolmark.toml");
    std::fs::write(&file, "[crawl]\nper_hots = 3\n").unwrap();
    let o = toolmark(&["run", "--config", file.to_str().unwrap()])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("per_hots") && err.contains("toolmark.toml"),
        "{err}"
    );

    let o = toolmark(&["run", "--crawl-schedule", "daily at noon", "--print-config"])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("daily at noon"), "{err}");

    let o = toolmark(&["run", "--config", "/nonexistent/toolmark.toml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn flags_beat_environment_beat_the_file() {
    let dir = tmp("precedence");
    let file = dir.join("t.toml");
    std::fs::write(
        &file,
        "check_rate = 10\n[schedules]\ncrawl = \"0 4 * * *\"\n",
    )
    .unwrap();
    let printed = |env: Option<&str>, flag: Option<&str>| {
        let mut c = toolmark(&["run", "--print-config", "--config", file.to_str().unwrap()]);
        if let Some(v) = env {
            c.env("TOOLMARK_CHECK_RATE", v);
        }
        if let Some(v) = flag {
            c.args(["--check-rate", v]);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{:?}", text(&o));
        let config: toml::Table = toml::from_str(&text(&o).0).unwrap();
        assert_eq!(config["schedules"]["crawl"].as_str(), Some("0 4 * * *"));
        config["check_rate"].as_integer().unwrap()
    };
    assert_eq!(printed(None, None), 10);
    assert_eq!(printed(Some("20"), None), 20);
    assert_eq!(printed(Some("20"), Some("30")), 30);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A registry stand-in listing a fleet of `n` endpoints on one host, each answering every
/// request after `latency` (an observation is about four requests).
struct World {
    runtime: tokio::runtime::Runtime,
    fleet: Option<Fleet>,
    registry: Option<RegistryStandIn>,
}

impl World {
    fn start(n: usize, latency: Duration) -> World {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (fleet, registry) = runtime.block_on(async {
            let fleet = Fleet::start(FleetSpec {
                hosts: 1,
                endpoints_per_host: n,
                latency: (latency, latency),
                seed: 1,
                tool_sets: vec![
                    r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#.into(),
                ],
            })
            .await
            .unwrap();
            let registry = RegistryStandIn::start(fleet.registry_items(1))
                .await
                .unwrap();
            (fleet, registry)
        });
        World {
            runtime,
            fleet: Some(fleet),
            registry: Some(registry),
        }
    }

    /// Observations answered: `tools/list` requests, one each (the configuration turns the
    /// second look off).
    fn observed(&self) -> u64 {
        self.fleet.as_ref().unwrap().requests().tools_list
    }

    fn config(&self, dir: &Path, heartbeat: &str) -> PathBuf {
        let file = dir.join("toolmark.toml");
        std::fs::write(
            &file,
            format!(
                "data = \"{}\"\nlisten = \"127.0.0.1:0\"\nregistry = \"{}\"\n\
                 [schedules]\ncrawl = \"{CRAWL_CRON}\"\nheartbeat = \"{heartbeat}\"\nlease_seconds = 3\n\
                 [crawl]\nallow_private = true\nno_dns = true\nregistry_rate = 50.0\n\
                 second_look = false\n",
                dir.join("data").display(),
                self.registry.as_ref().unwrap().url()
            ),
        )
        .unwrap();
        file
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let (fleet, registry) = (self.fleet.take(), self.registry.take());
        self.runtime.block_on(async {
            if let Some(f) = fleet {
                f.shutdown(Duration::from_secs(1)).await;
            }
            if let Some(r) = registry {
                r.shutdown().await;
            }
        });
    }
}

/// A running `toolmark run`, its stderr read line by line.
fn start_service(config: &Path) -> Watched {
    Watched::spawn(
        toolmark(&["run", "--config", config.to_str().unwrap()]),
        Stream::Stderr,
        "toolmark run",
    )
}

fn deadline() -> Instant {
    Instant::now() + PATIENCE
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn log_size(data: &Path) -> u64 {
    let cp = std::fs::read_to_string(data.join("log/public/checkpoint")).unwrap();
    cp.lines().nth(1).unwrap().parse().unwrap()
}

fn verify_log(data: &Path) {
    let o = toolmark(&["log", "verify"])
        .arg(data.join("log"))
        .output()
        .unwrap();
    assert!(o.status.success(), "log verify: {:?}", text(&o));
}

fn crawl_runs(data: &Path) -> Vec<String> {
    let store = LeaseStore::open(data.join("schedules.sqlite")).unwrap();
    let mut runs = store.runs("crawl", 100).unwrap();
    runs.sort_by_key(|r| r.id);
    runs.into_iter()
        .map(|r| r.status.as_str().to_owned())
        .collect()
}

#[test]
fn sigterm_mid_crawl_commits_everything_observed() {
    let world = World::start(12, Duration::from_millis(400));
    let dir = tmp("sigterm");
    let config = world.config(&dir, "0 * * * *");
    let data = dir.join("data");
    let mut service = start_service(&config);
    let serving = service.wait_for("serving http://", deadline());
    service.wait_for("job crawl", deadline());
    let url = Watched::url_in(&serving);
    // The API answers while the crawl runs.
    let health = ureq::get(&format!("{url}/health")).call().unwrap().status();
    assert_eq!(health.as_u16(), 200);

    wait_until("two observations", || world.observed() >= 2);
    service.signal("-TERM");
    let status = service.exit(deadline());
    assert!(status.success(), "{status:?}; {:#?}", service.seen);
    assert!(service.seen.iter().any(|l| l.contains("shutting down")));

    // Nothing acknowledged is lost: every observation the fleet answered is in the log (one
    // entry each), and the log verifies.
    let observed = world.observed();
    assert!(observed < 12, "the crawl stopped early ({observed} of 12)");
    assert_eq!(log_size(&data), observed);
    verify_log(&data);
    assert_eq!(
        crawl_runs(&data).last().map(String::as_str),
        Some("stopped")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_crawl_killed_midway_is_followed_by_a_clean_run() {
    let world = World::start(12, Duration::from_millis(150));
    let dir = tmp("sigkill");
    let config = world.config(&dir, "0 * * * *");
    let data = dir.join("data");
    let mut service = start_service(&config);
    service.wait_for("serving http://", deadline());
    wait_until("two observations", || world.observed() >= 2);
    service.signal("-KILL");
    service.exit(deadline());
    drop(service);

    // The next process waits out the dead holder's lease, then crawls everything cleanly.
    let before = world.observed();
    let mut service = start_service(&config);
    wait_until("the next crawl to succeed", || {
        crawl_runs(&data).last().map(String::as_str) == Some("ok")
    });
    assert!(
        world.observed() >= before + 12,
        "the whole fleet observed again"
    );
    service.signal("-TERM");
    assert!(service.exit(deadline()).success());
    verify_log(&data);
    let runs = crawl_runs(&data);
    assert_eq!(
        runs.first().map(String::as_str),
        Some("interrupted"),
        "{runs:?}"
    );
    assert_eq!(runs.iter().filter(|s| *s == "ok").count(), 1, "{runs:?}");
    // The index closed the killed run too; the clean run recorded every endpoint.
    let index = toolmark_index::index::Index::open_read_only(&data.join("index.sqlite")).unwrap();
    let last = index.last_run().unwrap().unwrap();
    assert_eq!(last.status, "complete");
    // The crawl before it (a package sweep's run may stand between them).
    let killed = (1..last.id)
        .rev()
        .filter_map(|id| index.run(id).unwrap())
        .find(|r| r.kind == "crawl")
        .unwrap();
    assert_eq!(killed.status, "failed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_heartbeat_re_signs_the_checkpoint() {
    let world = World::start(1, Duration::from_millis(1));
    let dir = tmp("heartbeat");
    let config = world.config(&dir, "* * * * * *");
    let data = dir.join("data");
    let mut service = start_service(&config);
    service.wait_for("serving http://", deadline());
    let checkpoint = data.join("log/public/checkpoint");
    let store = LeaseStore::open(data.join("schedules.sqlite")).unwrap();
    let mut first = None;
    wait_until("three heartbeats after the crawl", || {
        let ok = store
            .runs("heartbeat", 100)
            .unwrap()
            .iter()
            .filter(|r| r.status.as_str() == "ok")
            .count();
        let mtime = std::fs::metadata(&checkpoint).unwrap().modified().unwrap();
        first.get_or_insert(mtime);
        ok >= 3 && first.is_some_and(|f| mtime > f)
    });
    service.signal("-INT");
    assert!(service.exit(deadline()).success());
    verify_log(&data);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_services_over_one_data_directory_crawl_once() {
    // Slow enough (about 10 s) that the second process starts while the first crawls.
    let world = World::start(8, Duration::from_millis(600));
    let dir = tmp("two");
    let config = world.config(&dir, "0 * * * *");
    let data = dir.join("data");
    // The first creates the log and starts its catch-up crawl; the second finds the crawl's
    // lease held, waits, and once the first has succeeded does not crawl again.
    let mut first = start_service(&config);
    first.wait_for("job started job=\"crawl\"", deadline());
    let mut second = start_service(&config);
    second.wait_for("serving http://", deadline());
    second.wait_for(
        "job skipped: another holder has its lease job=\"crawl\"",
        deadline(),
    );
    // It looks again when the first's lease lapses (renewed while the crawl runs), and once
    // the crawl has succeeded it plans only its next fire time.
    while !second
        .wait_for("job next run job=\"crawl\"", deadline())
        .contains(" 03:00:00 UTC")
    {}
    assert!(crawl_runs(&data).iter().any(|s| s == "ok"));
    for service in [&mut first, &mut second] {
        service.signal("-TERM");
        assert!(service.exit(deadline()).success());
    }
    assert_eq!(crawl_runs(&data), ["ok"], "one crawl, by one process");
    assert_eq!(world.observed(), 8, "each endpoint observed once");
    assert_eq!(log_size(&data), 8);
    verify_log(&data);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Creates the log of the data directory `data` (with its index), as `run` would, so that a
/// witness can trust its key before the service starts; returns the log's vkey.
fn create_log(data: &Path) -> String {
    drop(
        toolmark_index::DataDir::new(data)
            .open_writer("toolmark.localhost/log")
            .unwrap(),
    );
    let vkey = std::fs::read_to_string(data.join("log/public/vkey")).unwrap();
    vkey.trim().to_owned()
}

/// Adds the witness `arg` (`VKEY@URL`) to the configuration file, a round for every new
/// checkpoint; returns the policy that makes (that witness, 1 of 1).
fn add_witness(config: &Path, arg: &str) -> toolmark_log::policy::WitnessPolicy {
    let mut text = std::fs::read_to_string(config).unwrap();
    text.push_str(&format!(
        "[witnessing]\nwitnesses = [\"{arg}\"]\nmin_interval_seconds = 0\n"
    ));
    std::fs::write(config, text).unwrap();
    toolmark_log::policy::WitnessPolicy::k_of(
        vec![toolmark_cosign::parse_witness_arg(arg).unwrap()],
        1,
    )
    .unwrap()
}

/// The published checkpoint's size and newest cosignature time, when it meets `policy` now.
fn published_witnessed(
    data: &Path,
    vkey: &str,
    policy: &toolmark_log::policy::WitnessPolicy,
) -> Option<(u64, u64)> {
    let note = std::fs::read(data.join("log/public/checkpoint")).ok()?;
    let cp = toolmark_log::note::open_checkpoint(&note, vkey).ok()?;
    let w = policy
        .check(&note, (toolmark_cosign::system_clock())(), None)
        .ok()?;
    w.satisfied.then_some((cp.size, w.newest?))
}

/// `toolmark run --witness VKEY@URL`: the crawl's checkpoint is published only with the real
/// witness's cosignature, and every heartbeat has the witness cosign the same tree again with a
/// later time (signed freshness); the status file says so.
#[test]
fn a_witnessed_service_publishes_cosigned_checkpoints_and_heartbeats_move_their_time() {
    let Some(bin) = aics::aics() else { return };
    let world = World::start(3, Duration::from_millis(1));
    let dir = tmp("witnessed");
    let config = world.config(&dir, "*/2 * * * * *");
    let data = dir.join("data");
    let vkey = create_log(&data);
    let witness = aics::AicsWitness::new(
        &bin,
        &dir.join("w1"),
        "witness.test/w1",
        "toolmark.localhost/log",
        &vkey,
    );
    let policy = add_witness(&config, &witness.arg());
    let cosigned_at = |size: u64| {
        published_witnessed(&data, &vkey, &policy).and_then(|(s, t)| (s == size).then_some(t))
    };

    let mut service = start_service(&config);
    let serving = service.wait_for("serving http://", deadline());
    let url = Watched::url_in(&serving);
    let mut first = None;
    wait_until(
        "the crawl's checkpoint cosigned, then a later heartbeat cosignature",
        || {
            let Some(t) = cosigned_at(3) else {
                return false;
            };
            let f = *first.get_or_insert(t);
            t > f
        },
    );
    let status = toolmark_cosign::read_status(&data.join("witnessing.json")).unwrap();
    assert!(status.quorum_met, "{status:?}");
    assert_eq!((status.signed_size, status.published_size), (3, Some(3)));
    // The API knows the policy `run` was given: who cosigned, when, and that it is met.
    let get = |path: &str| -> serde_json::Value {
        let mut r = ureq::get(&format!("{url}{path}")).call().unwrap();
        serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
    };
    let witnesses = get("/api/v1/witnesses");
    assert_eq!(witnesses["quorumMet"], true, "{witnesses}");
    assert_eq!(witnesses["witnesses"][0]["vkey"], witness.vkey.as_str());
    let health = get("/health");
    assert!(health["witnessing"]["cosignedAt"].is_string(), "{health}");
    assert_eq!(health["witnessing"]["behind"], false, "{health}");
    service.signal("-TERM");
    assert!(service.exit(deadline()).success());
    verify_log(&data);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two toolmark operators witness each other: `toolmark run --witness <vkey>@<url>` gets its
/// checkpoint cosigned by a `toolmark witness` process that trusts its log, publishes it with
/// the cosignature, and the witness's monitoring URL serves the same tree. No aics needed.
#[test]
fn a_witnessed_service_is_cosigned_by_a_toolmark_witness() {
    let world = World::start(3, Duration::from_millis(1));
    let dir = tmp("toolmark-witnessed");
    let config = world.config(&dir, "0 0 * * * *");
    let data = dir.join("data");
    let vkey = create_log(&data);
    // The other operator's witness, trusting this log.
    let mut c = toolmark(&[
        "witness",
        "--listen",
        "127.0.0.1:0",
        "--name",
        "other.test/w",
    ]);
    c.arg("--data")
        .arg(dir.join("witness"))
        .arg("--trust")
        .arg(format!("toolmark.localhost/log={vkey}"))
        .env_remove("TOOLMARK_WITNESS_TRUST");
    let mut witness = Watched::spawn(c, Stream::Stderr, "witness");
    let line = witness.wait_for("serving http://", deadline());
    let witness_url = Watched::url_in(&line);
    let witness_vkey = line
        .split_whitespace()
        .find(|w| w.starts_with("other.test/w+"))
        .unwrap()
        .to_owned();
    let arg = format!("{witness_vkey}@{witness_url}");
    let policy = add_witness(&config, &arg);

    let mut service = start_service(&config);
    service.wait_for("serving http://", deadline());
    wait_until(
        "the crawl's checkpoint cosigned by the toolmark witness",
        || published_witnessed(&data, &vkey, &policy).is_some_and(|(size, _)| size == 3),
    );
    let monitor = format!(
        "{witness_url}/{}/checkpoint",
        toolmark_witness::origin_hash("toolmark.localhost/log")
    );
    let served = ureq::get(&monitor)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let cp = toolmark_log::note::open_checkpoint(served.as_bytes(), &vkey).unwrap();
    assert_eq!(cp.size, 3);
    service.signal("-TERM");
    assert!(service.exit(deadline()).success());
    witness.signal("-TERM");
    assert!(witness.exit(deadline()).success());
    verify_log(&data);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `toolmark run` with `[storage]` on PostgreSQL and a bucket (the shared test services): the
/// log is created there, the crawl and the heartbeat commit there, the API serves the
/// checkpoint it reads from the bucket, the data directory holds none of the log's files, and
/// the bucket's log verifies.
#[test]
fn a_service_on_postgres_and_a_bucket_crawls_and_serves_from_them() {
    let (Some(db), Some(bucket)) = (
        toolmark_standins::services::postgres().unwrap(),
        toolmark_standins::services::s3().unwrap(),
    ) else {
        return;
    };
    let world = World::start(3, Duration::from_millis(1));
    let dir = tmp("cluster");
    let config = world.config(&dir, "* * * * * *");
    let objects = format!("s3://{}/{}", bucket.bucket, bucket.prefix);
    let mut file = std::fs::read_to_string(&config).unwrap();
    file.push_str(&format!(
        "[storage]\nhead = \"{}\"\nobjects = \"{objects}\"\n",
        db.url()
    ));
    std::fs::write(&config, file).unwrap();
    let aws = |c: &mut Command| {
        c.env("AWS_ENDPOINT_URL", &bucket.endpoint)
            .env("AWS_ACCESS_KEY_ID", &bucket.access_key_id)
            .env("AWS_SECRET_ACCESS_KEY", &bucket.secret_access_key)
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_REGION", "us-east-1")
            .env_remove("TOOLMARK_STORAGE_HEAD")
            .env_remove("TOOLMARK_STORAGE_OBJECTS");
    };
    let mut cmd = toolmark(&["run", "--config", config.to_str().unwrap()]);
    aws(&mut cmd);
    let mut service = Watched::spawn(cmd, Stream::Stderr, "toolmark run");
    let url = Watched::url_in(&service.wait_for("serving http://", deadline()));
    let data = dir.join("data");
    let public = toolmark_log::objects::Objects::s3(
        &objects,
        &toolmark_log::objects::S3Options::at(
            &bucket.endpoint,
            &bucket.access_key_id,
            &bucket.secret_access_key,
        ),
    )
    .unwrap()
    .sub("log/public");
    let size = |note: &[u8]| -> u64 {
        String::from_utf8_lossy(note)
            .lines()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    wait_until(
        "the crawl's three entries in the bucket, and two heartbeats",
        || {
            let grown = public
                .get("checkpoint")
                .unwrap()
                .is_some_and(|n| size(&n) >= 3);
            let beats = LeaseStore::open(data.join("schedules.sqlite"))
                .and_then(|s| s.runs("heartbeat", 100))
                .map(|r| r.iter().filter(|r| r.status.as_str() == "ok").count())
                .unwrap_or(0);
            grown && beats >= 2 && crawl_runs(&data).iter().any(|s| s == "ok")
        },
    );
    // The API serves the bucket's checkpoint (read through the same stores).
    let served = ureq::get(&format!("{url}/checkpoint"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_vec()
        .unwrap();
    assert_eq!(
        size(&served),
        size(&public.get("checkpoint").unwrap().unwrap())
    );
    service.signal("-INT");
    assert!(service.exit(deadline()).success());
    // The data directory holds the key and the local bookkeeping, none of the log's files.
    assert!(data.join("log/private/log.key").exists());
    assert!(!data.join("log/public").exists());
    assert!(!data.join("log/log.sqlite").exists());
    let vkey = String::from_utf8(public.get("vkey").unwrap().unwrap()).unwrap();
    let mut verify = toolmark(&["log", "verify", &objects, "--vkey", vkey.trim()]);
    aws(&mut verify);
    let o = verify.output().unwrap();
    assert!(o.status.success(), "log verify: {:?}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
