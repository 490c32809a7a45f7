//! Several writers on one log: 4 `toolmark log append` processes append to one PostgreSQL head
//! store and one SeaweedFS bucket for 60 s (`TOOLMARK_SEVERAL_WRITERS_SECONDS`), while they are
//! paused (SIGSTOP) past their lease and resumed, and killed (SIGKILL) and replaced. Some
//! observations are submitted by every writer. Afterwards: every acknowledged entry is in the log
//! exactly once at the index it was acknowledged with, every observation is logged at most once,
//! every checkpoint any writer printed is consistent with the final tree (no fork),
//! `toolmark log verify s3://…` passes, and Go's `x/mod/sumdb/tlog` and `aics-tlog` accept the log
//! read back from the bucket.
#![allow(clippy::disallowed_methods)] // runs the binary, kill, and the verifiers

mod common;
#[path = "../log/tests/support/go.rs"]
mod go;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toolmark_log::entry::Entry;
use toolmark_log::merkle::{self, Hash};
use toolmark_log::objects::Objects;
use toolmark_log::reader::Reader;

const WRITERS: usize = 4;
const ORIGIN: &str = "several.example/log";
/// Past the writers' lease (`sequencer::LEASE_TTL`, 5 s).
const PAUSE: Duration = Duration::from_secs(7);

/// The shared services and this test's database and prefix.
struct Place {
    _db: toolmark_standins::services::Database,
    url: String,
    objects: String,
    bucket: toolmark_standins::services::Bucket,
    key: PathBuf,
}

impl Place {
    fn env(&self, c: &mut Command) {
        c.env("AWS_ENDPOINT_URL", &self.bucket.endpoint)
            .env("AWS_ACCESS_KEY_ID", &self.bucket.access_key_id)
            .env("AWS_SECRET_ACCESS_KEY", &self.bucket.secret_access_key)
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_REGION", "us-east-1")
            .env_remove("TOOLMARK_STORAGE_HEAD")
            .env_remove("TOOLMARK_STORAGE_OBJECTS");
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolmark"));
        c.arg("log").args(args);
        c.args(["--head", &self.url, "--objects", &self.objects]);
        c.arg("--key").arg(&self.key);
        self.env(&mut c);
        c
    }

    fn public(&self) -> Objects {
        common::public_objects(&self.bucket, &self.objects)
    }
}

/// One JSON line of `log append`'s input.
fn line(detail: &str, subject: usize) -> String {
    format!(
        "{{\"subject\":{{\"server\":\"io.example/s{subject}\",\"target\":\"https://s{subject}.example.com/mcp\"}},\
         \"observedAt\":\"2026-12-06T10:00:00Z\",\"status\":\"ok\",\"detail\":\"{detail}\",\"tools\":1}}\n"
    )
}

/// What one writer process was fed, what it acknowledged, and the checkpoints it printed.
#[derive(Default)]
struct Seen {
    /// Details fed, in order (the n-th acknowledged index is the n-th fed line's).
    fed: Vec<String>,
    /// Acknowledged indices, in order.
    acked: Vec<u64>,
    /// (size, root) of every checkpoint printed.
    checkpoints: Vec<(u64, Hash)>,
    /// The first checkpoint note printed (for the verifiers' consistency check).
    first_note: Option<String>,
    /// What the writer printed on stderr.
    errors: Vec<String>,
}

struct Writer {
    child: Child,
    /// Tells the feeder to stop (it then closes the writer's stdin: the writer appends what it
    /// was fed and exits).
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

fn spawn(
    place: &Place,
    slot: usize,
    generation: usize,
    all: &Mutex<Vec<Arc<Mutex<Seen>>>>,
) -> Writer {
    let mut child = place
        .command(&["append", "--batch", "16"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a writer");
    let seen = Arc::new(Mutex::new(Seen::default()));
    all.lock().unwrap().push(seen.clone());
    let mut stdin: ChildStdin = child.stdin.take().unwrap();
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // What a writer says when it gives up: a fork alarm or a refusal fails the test (a writer
    // that loses races or waits out a paused one never says either).
    let complaints = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                seen.lock().unwrap().errors.push(l);
            }
        })
    };
    let reader = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let mut note: Vec<String> = Vec::new();
            for l in BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) && note.is_empty() {
                    seen.lock().unwrap().acked.push(l.parse().unwrap());
                    continue;
                }
                // A checkpoint note: origin, size, root, blank line, signature lines.
                note.push(l.clone());
                if l.starts_with("— ") {
                    let size: u64 = note[1].parse().unwrap();
                    let root = Hash::from_base64(&note[2]).unwrap();
                    let mut s = seen.lock().unwrap();
                    s.checkpoints.push((size, root));
                    if s.first_note.is_none() {
                        s.first_note = Some(note.join("\n") + "\n");
                    }
                    note.clear();
                }
            }
        })
    };
    let feeder = {
        let seen = seen.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            for n in 0.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                // Every fifth line is an observation every writer submits, identically.
                let detail = if n % 5 == 0 {
                    format!("shared.{}", n / 5)
                } else {
                    format!("w{slot}.g{generation}.n{n}")
                };
                let subject = (n * 7 + slot) % 13;
                let subject = if n % 5 == 0 { (n / 5) % 13 } else { subject };
                seen.lock().unwrap().fed.push(detail.clone());
                if stdin.write_all(line(&detail, subject).as_bytes()).is_err() {
                    seen.lock().unwrap().fed.pop();
                    break;
                }
                if n % 16 == 15 {
                    // A writer acknowledges batch by batch; feeding much faster than it commits
                    // would only fill the pipe.
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        })
    };
    Writer {
        child,
        stop,
        threads: vec![reader, feeder, complaints],
    }
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(child.id().to_string())
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig}");
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn four_writers_paused_and_killed_keep_one_log() {
    let (Some(db), Some(bucket)) = (
        toolmark_standins::services::postgres().unwrap(),
        toolmark_standins::services::s3().unwrap(),
    ) else {
        return;
    };
    let seconds: u64 = std::env::var("TOOLMARK_SEVERAL_WRITERS_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("several-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let place = Place {
        url: db.url().to_owned(),
        _db: db,
        objects: format!("s3://{}/{}", bucket.bucket, bucket.prefix),
        bucket,
        key: dir.join("log.key"),
    };
    let out = place
        .command(&["init", "--origin", ORIGIN])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let all: Mutex<Vec<Arc<Mutex<Seen>>>> = Mutex::new(Vec::new());
    let mut generation = [0usize; WRITERS];
    let mut writers: Vec<Writer> = (0..WRITERS).map(|w| spawn(&place, w, 0, &all)).collect();
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let mut rng = 0x5EED_u64;
    let (mut paused, mut killed, mut died) = (0, 0, 0);
    let mut step = 0;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500 + splitmix(&mut rng) % 1500));
        // A writer that stopped by itself (an error it could not get past) is replaced too.
        for (w, wr) in writers.iter_mut().enumerate() {
            if wr.child.try_wait().unwrap().is_some() {
                died += 1;
                generation[w] += 1;
                *wr = spawn(&place, w, generation[w], &all);
            }
        }
        let w = (splitmix(&mut rng) % WRITERS as u64) as usize;
        // The first two actions are fixed, so that every run pauses and kills at least once.
        let action = match step {
            0 => 0,
            1 => 1,
            _ => splitmix(&mut rng) % 3,
        };
        step += 1;
        match action {
            0 => {
                signal(&writers[w].child, "STOP");
                std::thread::sleep(PAUSE);
                signal(&writers[w].child, "CONT");
                paused += 1;
            }
            1 => {
                writers[w].child.kill().unwrap();
                writers[w].child.wait().unwrap();
                killed += 1;
                generation[w] += 1;
                let old = std::mem::replace(&mut writers[w], spawn(&place, w, generation[w], &all));
                old.stop.store(true, Ordering::Relaxed);
            }
            _ => {}
        }
    }
    // Let them finish what they were fed, then stop.
    for wr in &writers {
        wr.stop.store(true, Ordering::Relaxed);
    }
    for wr in writers {
        let mut child = wr.child;
        let end = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < end, "a writer does not stop");
            std::thread::sleep(Duration::from_millis(100));
        }
        for t in wr.threads {
            let _ = t.join();
        }
    }
    eprintln!(
        "{seconds} s: {paused} pauses past the lease, {killed} kills, {died} writers that stopped by themselves"
    );
    assert!(paused >= 1 && killed >= 1);

    // The log as the bucket holds it.
    let public = place.public();
    let vkey = String::from_utf8(public.get("vkey").unwrap().unwrap()).unwrap();
    let reader = Reader::new(public.clone(), &vkey);
    let at = reader.checkpoint().unwrap();
    let size = at.checkpoint.size;
    let mut logged: HashMap<String, u64> = HashMap::new();
    for i in 0..size {
        let e = Entry::decode(&reader.entry(i, &at).unwrap()).unwrap();
        let detail = e.detail.unwrap();
        assert!(
            logged.insert(detail.clone(), i).is_none(),
            "{detail} is logged twice"
        );
    }
    let seen = all.into_inner().unwrap();
    let mut acked = 0;
    let mut shared = HashSet::new();
    for s in &seen {
        let s = s.lock().unwrap();
        for e in &s.errors {
            assert!(
                !(e.contains("fork alarm") || e.contains("refused") || e.contains("poisoned")),
                "a writer gave up: {e}"
            );
        }
        assert!(s.acked.len() <= s.fed.len());
        for (detail, index) in s.fed.iter().zip(&s.acked) {
            assert_eq!(
                logged.get(detail),
                Some(index),
                "{detail} was acknowledged at {index}"
            );
            acked += 1;
            if detail.starts_with("shared.") {
                shared.insert(detail.clone());
            }
        }
        // No fork: every checkpoint any writer printed is a prefix of the final tree.
        for &(old, root) in &s.checkpoints {
            assert!(
                old <= size,
                "a checkpoint of size {old} beyond the log's {size}"
            );
            if old == 0 || old == size {
                if old == size {
                    assert_eq!(root, at.checkpoint.root, "fork at size {old}");
                }
                continue;
            }
            let proof = reader.consistency_proof(old, size, &at).unwrap();
            merkle::verify_consistency(&proof, size, &at.checkpoint.root, old, &root)
                .unwrap_or_else(|e| panic!("fork: size {old} is not a prefix: {e}"));
        }
    }
    eprintln!(
        "{size} entries logged; {acked} acknowledgements checked ({} of observations submitted by several writers)",
        shared.len()
    );
    assert!(
        acked > 200,
        "too little was appended to prove anything: {acked}"
    );
    assert!(!shared.is_empty());

    // `toolmark log verify` streams it from the bucket.
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    c.args(["log", "verify", &place.objects, "--vkey", vkey.trim()]);
    place.env(&mut c);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "log verify: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Code we did not write, on the log read back from the bucket.
    let copy = dir.join("public");
    std::fs::create_dir_all(&copy).unwrap();
    common::download_public(&public, &copy);
    let first = seen
        .iter()
        .find_map(|s| s.lock().unwrap().first_note.clone())
        .expect("a checkpoint was printed");
    let old = dir.join("first.checkpoint");
    std::fs::write(&old, &first).unwrap();
    if let Some(verify) = go::go_verifier() {
        let out = Command::new(verify)
            .arg("-dir")
            .arg(&copy)
            .arg("-old-checkpoint")
            .arg(&old)
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
    match std::env::var_os("TOOLMARK_AICS") {
        Some(bin) => {
            let aics = Path::new(&bin).join("aics-tlog");
            for args in [
                vec!["verify-checkpoint"],
                vec![
                    "verify-consistency",
                    "--old-checkpoint",
                    old.to_str().unwrap(),
                ],
            ] {
                let out = Command::new(&aics)
                    .args(&args)
                    .arg("--tiles")
                    .arg(&copy)
                    .args(["--log-key", vkey.trim(), "--origin", ORIGIN])
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "aics-tlog {args:?}: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        None => assert!(
            std::env::var_os("CI").is_none(),
            "TOOLMARK_AICS is needed under CI"
        ),
    }
    std::fs::remove_dir_all(&dir).ok();
}
