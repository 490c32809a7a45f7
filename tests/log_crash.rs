//! A real crash test: `toolmark log append` is killed with SIGKILL at random moments, 60 times.
//! After each kill the log must reopen, verify from its public files, still hold every entry
//! whose index the child printed (acknowledged), stay consistent with every checkpoint seen so
//! far, and keep appending.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use toolmark_log::Log;
use toolmark_log::merkle;
use toolmark_log::note;
use toolmark_log::verify::{self, DirSource};

/// Kills performed; the issue asks for at least 50.
const KILLS: usize = 60;

/// Bounds of the adaptive kill delay (microseconds after the child starts).
const MIN_DELAY_US: u64 = 20_000;
const MAX_DELAY_US: u64 = 500_000;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn lines(start: u64, n: u64) -> String {
    (start..start + n)
        .map(|i| {
            format!(
                "{{\"subject\":{{\"server\":\"io.example/s{}\",\"target\":\"https://s{}.example.com/mcp\"}},\"observedAt\":\"2026-11-30T14:00:00Z\",\"status\":\"ok\",\"tools\":{i}}}\n",
                i % 11,
                i % 11
            )
        })
        .collect()
}

fn vkey(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("public/vkey"))
        .unwrap()
        .trim()
        .to_owned()
}

#[test]
fn sigkill_at_random_moments_loses_nothing_acknowledged() {
    let dir: PathBuf = std::env::temp_dir().join(format!("toolmark-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    Log::init(&dir, "crash.example/log").unwrap();
    let bin = env!("CARGO_BIN_EXE_toolmark");
    let mut rng = 0x5EED_u64 ^ std::process::id() as u64;
    let mut acknowledged: u64 = 0; // every index below this was printed by some child
    let mut seen: Vec<note::Checkpoint> = Vec::new();
    let mut next_tools = 0u64;
    // Rounds where the kill came before / after the child acknowledged its batch.
    let (mut before, mut after) = (0, 0);
    // The kill lands up to this long after the start; it adapts so that, on a fast or a slow
    // machine alike, kills land both before and after batches are acknowledged.
    let mut max_delay_us: u64 = 60_000;
    for round in 0..KILLS {
        let n = 1 + splitmix(&mut rng) % 700;
        let mut child = Command::new(bin)
            .args(["log", "append"])
            .arg(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(lines(next_tools, n).as_bytes())
            .ok();
        next_tools += n;
        std::thread::sleep(Duration::from_micros(splitmix(&mut rng) % max_delay_us));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let mut out = String::new();
        child.stdout.take().unwrap().read_to_string(&mut out).ok();
        // Indices the child printed were acknowledged (printed only after the commit); the
        // checkpoint it prints after them starts with the origin line.
        let printed = out.lines().map_while(|l| l.parse::<u64>().ok());
        match printed.max() {
            Some(max) => {
                acknowledged = acknowledged.max(max + 1);
                after += 1;
                max_delay_us = (max_delay_us * 9 / 10).max(MIN_DELAY_US);
            }
            None => {
                before += 1;
                max_delay_us = (max_delay_us + 10_000).min(MAX_DELAY_US);
            }
        }

        let log = Log::open(&dir).unwrap_or_else(|e| panic!("round {round}: reopen: {e}"));
        let head = log.head().clone();
        assert!(
            head.size >= acknowledged,
            "round {round}: size {} but {acknowledged} acknowledged",
            head.size
        );
        for cp in &seen {
            assert_eq!(
                log.root_at(cp.size).unwrap(),
                cp.root,
                "round {round}: fork at {}",
                cp.size
            );
            if cp.size > 0 && cp.size < head.size {
                let p = log.consistency_proof(cp.size, head.size).unwrap();
                merkle::verify_consistency(&p, head.size, &head.root, cp.size, &cp.root).unwrap();
            }
        }
        drop(log);
        let report = verify::fsck(&DirSource(dir.join("public")), &vkey(&dir))
            .unwrap_or_else(|e| panic!("round {round}: fsck: {e}"));
        seen.push(report.checkpoint);
        acknowledged = acknowledged.max(head.size);
    }
    eprintln!(
        "log_crash: {KILLS} kills, {before} before the batch was acknowledged, {after} after"
    );
    assert!(
        before > 0 && after > 0,
        "the kills did not land on both sides of the commit"
    );
    // It keeps appending after all that.
    let before = Log::open(&dir).unwrap().head().size;
    let out = Command::new(bin)
        .args(["log", "append"])
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(lines(next_tools, 10).as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    assert_eq!(Log::open(&dir).unwrap().head().size, before + 10);
    verify::fsck(&DirSource(dir.join("public")), &vkey(&dir)).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}
