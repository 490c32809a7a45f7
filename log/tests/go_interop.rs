//! Our log checked by code we did not write: Go's `golang.org/x/mod/sumdb/note` verifies the
//! checkpoint signature and `golang.org/x/mod/sumdb/tlog` hashes our tiles, recomputes the root,
//! checks every entry of every bundle against its leaf, makes and checks its own inclusion and
//! consistency proofs, and checks the proofs our code makes (`log/tests/go`, see its doc comment).
//!
//! The log is built in two batches (the first leaving partial tiles and a partial bundle that
//! the second completes), the first checkpoint is kept, and the Go verifier runs with
//! `-old-checkpoint` and `-proofs`. Then copies of the public directory with one byte changed in
//! a full tile, in the stale partial tile the first batch left, in the partial level-1 tile, in an
//! entry bundle, or with a different verifier key, and a proofs file with one hash changed, must
//! each make it fail.
//!
//! Needs the verifier binary: `TOOLMARK_GO_VERIFY=PATH`, or else this test builds it with
//! `scripts/go-interop` (offline), which needs Debian's `golang-go` and `golang-golang-x-mod-dev`.
//! Without them the test fails under CI and is skipped (loudly) elsewhere; a verifier that does
//! not build is a failure everywhere.
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

mod support;
use support::go::go_verifier;
use support::*;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use toolmark_log::Log;
use toolmark_log::note::LogKey;

const ORIGIN: &str = "toolmark.test/go-interop";
const FIRST: usize = 1_300; // 5 full tiles + 20: partial level-0 tile, partial bundle
const SECOND: usize = 1_800; // to 3,100: 12 full tiles + 28, partial level-1 tile

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn text(out: &Output) -> String {
    format!(
        "status {}\nstdout: {}stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `inclusion <index> <size> <b64>...` and `consistency <old> <new> <b64>...` lines made by our
/// log, for the verifier's `-proofs`: tree edges, tile edges and pseudo-random pairs.
fn proofs_file(log: &Log, size: u64) -> (String, usize, usize) {
    let mut out = String::new();
    let mut rng = 0x5EED_u64;
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    for s in [
        1,
        2,
        3,
        255,
        256,
        257,
        511,
        512,
        1_300,
        65_536,
        size - 1,
        size,
    ] {
        if s <= size {
            for i in [0, s / 2, s - 1] {
                pairs.push((i, s));
            }
        }
    }
    for _ in 0..150 {
        let s = 1 + splitmix(&mut rng) % size;
        pairs.push((splitmix(&mut rng) % s, s));
    }
    for (i, s) in pairs {
        write!(out, "inclusion {i} {s}").unwrap();
        for h in log.inclusion_proof(i, s).unwrap() {
            write!(out, " {}", h.to_base64()).unwrap();
        }
        out.push('\n');
    }
    let inclusion = out.lines().count();
    let mut pairs: Vec<(u64, u64)> = vec![
        (1, 1),
        (1, 2),
        (1, size),
        (255, 256),
        (256, 257),
        (256, 512),
        (1_300, size),
        (size - 1, size),
        (size, size),
    ];
    for _ in 0..100 {
        let n = 1 + splitmix(&mut rng) % size;
        pairs.push((1 + splitmix(&mut rng) % n, n));
    }
    for (o, n) in pairs {
        write!(out, "consistency {o} {n}").unwrap();
        for h in log.consistency_proof(o, n).unwrap() {
            write!(out, " {}", h.to_base64()).unwrap();
        }
        out.push('\n');
    }
    let consistency = out.lines().count() - inclusion;
    (out, inclusion, consistency)
}

#[test]
fn go_sumdb_verifies_our_log() {
    let Some(verify) = go_verifier() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Go or no golang.org/x/mod: CI must run the Go interop test \
             (apt-get install -y golang-go golang-golang-x-mod-dev)"
        );
        eprintln!(
            "SKIPPED go_sumdb_verifies_our_log: no `go` or no golang.org/x/mod sources, and no \
             TOOLMARK_GO_VERIFY (apt-get install -y golang-go golang-golang-x-mod-dev)"
        );
        return;
    };
    let dir = tempdir("log");
    let public = dir.join("public");
    let mut log = Log::init(&dir, ORIGIN).unwrap();

    let first = log.append(entries(0, FIRST)).unwrap();
    assert_eq!(first.indices, (0..FIRST as u64).collect::<Vec<_>>());
    let old = dir.join("checkpoint.first");
    std::fs::write(&old, std::fs::read(public.join("checkpoint")).unwrap()).unwrap();
    assert_eq!(std::fs::read(&old).unwrap(), first.checkpoint);

    let second = log.append(entries(FIRST, SECOND)).unwrap();
    let size = (FIRST + SECOND) as u64;
    assert_eq!(second.indices, (FIRST as u64..size).collect::<Vec<_>>());

    let (proofs, inclusion, consistency) = proofs_file(&log, size);
    let proofs_path = dir.join("proofs.txt");
    std::fs::write(&proofs_path, &proofs).unwrap();

    let check = |d: &Path, p: &Path| -> Output {
        Command::new(&verify)
            .arg("-dir")
            .arg(d)
            .arg("-old-checkpoint")
            .arg(&old)
            .arg("-proofs")
            .arg(p)
            .args(["-origin", ORIGIN])
            .output()
            .expect("run the Go verifier")
    };

    let out = check(&public, &proofs_path);
    assert!(
        out.status.success(),
        "the Go verifier rejects our log:\n{}",
        text(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{}", stdout.trim());
    assert!(stdout.starts_with("ok: "), "{}", text(&out));
    assert!(stdout.contains(&format!("size {size} ")), "{}", text(&out));
    assert!(
        stdout.contains(&format!("the {size} entries hash to the root")),
        "{}",
        text(&out)
    );
    assert!(stdout.contains(&format!("size {FIRST};")), "{}", text(&out));
    assert!(
        stdout.contains(&format!(
            "{inclusion} inclusion and {consistency} consistency proofs from proofs.txt check"
        )),
        "{}",
        text(&out)
    );

    // Each of these must make the verifier fail.
    type Tamper<'a> = Box<dyn Fn(&Path) -> PathBuf + 'a>;
    let other_vkey = LogKey::generate(ORIGIN).unwrap().vkey();
    let cases: Vec<(&str, Tamper)> = vec![
        (
            "a byte of a full level-0 tile",
            Box::new(|d: &Path| {
                flip_byte(&d.join("tile/0/004"), 32 * 17 + 5);
                proofs_path.clone()
            }),
        ),
        (
            "a byte of the partial level-0 tile the first batch left",
            Box::new(|d: &Path| {
                flip_byte(&d.join("tile/0/005.p/20"), 32 * 19);
                proofs_path.clone()
            }),
        ),
        (
            "a byte of the partial level-1 tile",
            Box::new(|d: &Path| {
                flip_byte(&d.join("tile/1/000.p/12"), 3);
                proofs_path.clone()
            }),
        ),
        (
            "a byte of an entry in a bundle",
            Box::new(|d: &Path| {
                flip_byte(&d.join("tile/entries/007"), 40);
                proofs_path.clone()
            }),
        ),
        (
            "the verifier key (same name, another key)",
            Box::new(|d: &Path| {
                std::fs::write(d.join("vkey"), format!("{other_vkey}\n")).unwrap();
                proofs_path.clone()
            }),
        ),
        (
            "one hash of one of our inclusion proofs",
            Box::new(|d: &Path| {
                let p = d.join("../proofs.tampered");
                let line = proofs
                    .lines()
                    .find(|l| l.starts_with("inclusion 0 1300 "))
                    .unwrap();
                let mut bad = line.to_owned();
                let at = bad.rfind(' ').unwrap() + 1;
                let c = if &bad[at..at + 1] == "A" { "B" } else { "A" };
                bad.replace_range(at..at + 1, c);
                std::fs::write(&p, proofs.replace(line, &bad)).unwrap();
                p
            }),
        ),
    ];
    for (name, tamper) in &cases {
        let copy = dir.join("tampered/public");
        let _ = std::fs::remove_dir_all(dir.join("tampered"));
        copy_dir(&public, &copy);
        let p = tamper(&copy);
        let out = check(&copy, &p);
        assert!(
            !out.status.success(),
            "the Go verifier accepts our log with {name} changed:\n{}",
            text(&out)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("FAIL: "), "{name}:\n{}", text(&out));
        eprintln!("{name} changed: {}", stderr.lines().next().unwrap_or(""));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
