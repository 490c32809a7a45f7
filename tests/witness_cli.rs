//! `toolmark witness` as a process, against an independent implementation: a log whose tiles
//! `aics-tlog build-tiles` builds (and grows), cosigned by our witness over HTTP, and the
//! cosigned checkpoint accepted by `aics-tlog verify-checkpoint --witness-key <ours> --quorum 1`.
//! Loopback only; every wait is bounded. Skipped (loudly) without `TOOLMARK_AICS`, a failure
//! under CI (`tests/common/aics.rs`).
// Tests run real binaries and tools (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

#[path = "common/aics.rs"]
mod aics;
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Stream, Watched};
use toolmark_log::Hash;
use toolmark_log::cosignature::add_signature_lines;
use toolmark_log::note::{Checkpoint, LogKey};
use toolmark_log::reader::Reader;
use toolmark_log::witness::{AddCheckpoint, SIZE_CONTENT_TYPE};

const ORIGIN: &str = "aics.test/log";
const NAME: &str = "witness.test/toolmark";

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "toolmark-witness-cli-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// POSTs an add-checkpoint body: status, content type, body.
fn post(url: &str, body: &[u8]) -> (u16, String, String) {
    let mut r = agent()
        .post(&format!("{url}/add-checkpoint"))
        .send(body)
        .expect("POST");
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (
        r.status().as_u16(),
        ct,
        r.body_mut().read_to_string().unwrap(),
    )
}

/// `aics-tlog build-tiles` over `n` entries into `out` (a full rebuild); the root it reports.
fn build_tiles(bin: &Path, dir: &Path, out: &Path, n: usize) -> Hash {
    let leaves = dir.join("leaves");
    let text: String = (0..n).map(|i| format!("tool definition {i}\n")).collect();
    std::fs::write(&leaves, text).unwrap();
    let o = Command::new(bin.join("aics-tlog"))
        .args(["build-tiles", "--leaves"])
        .arg(&leaves)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["size"], n as u64, "{report}");
    Hash::from_base64(report["root"].as_str().unwrap()).unwrap()
}

/// `aics-tlog verify-checkpoint` of `note` with the log's key and ours, quorum 1.
fn aics_accepts(bin: &Path, dir: &Path, note: &[u8], log_vkey: &str, witness_vkey: &str) -> bool {
    let file = dir.join("cosigned");
    std::fs::write(&file, note).unwrap();
    let o = Command::new(bin.join("aics-tlog"))
        .args(["verify-checkpoint", "--note"])
        .arg(&file)
        .args([
            "--log-key",
            log_vkey,
            "--origin",
            ORIGIN,
            "--witness-key",
            witness_vkey,
            "--quorum",
            "1",
            "--max-age",
            "7200",
        ])
        .output()
        .unwrap();
    eprintln!(
        "[aics-tlog] {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o.status.success()
}

#[test]
fn our_witness_cosigns_an_aics_built_log_and_aics_tlog_accepts_it() {
    let Some(bin) = aics::aics() else { return };
    let dir = tmp("aics");
    let tiles = dir.join("tiles");
    let log = LogKey::generate(ORIGIN).unwrap();
    let sign = |size: u64, root: Hash| {
        let note = log
            .sign_checkpoint(&Checkpoint {
                origin: ORIGIN.into(),
                size,
                root,
                extensions: vec![],
            })
            .unwrap();
        // Published with the tiles, where `Reader` (and a tlog-tiles client) looks for it.
        std::fs::write(tiles.join("checkpoint"), &note).unwrap();
        note
    };
    let root5 = build_tiles(&bin, &dir, &tiles, 5);
    let note5 = sign(5, root5);

    let data = dir.join("witness");
    let toolmark = env!("CARGO_BIN_EXE_toolmark");
    let o = Command::new(toolmark)
        .args(["witness", "--print-vkey", "--name", NAME, "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = String::from_utf8(o.stdout).unwrap().trim().to_owned();
    assert!(ours.starts_with(&format!("{NAME}+")), "{ours}");

    let mut c = Command::new(toolmark);
    c.args([
        "witness",
        "--listen",
        "127.0.0.1:0",
        "--prefix",
        "/w",
        "--name",
        NAME,
    ])
    .arg("--data")
    .arg(&data)
    .arg("--trust")
    .arg(format!("{ORIGIN}={}", log.vkey()))
    .env_remove("TOOLMARK_WITNESS_TRUST");
    let mut witness = Watched::spawn(c, Stream::Stderr, "witness");
    let deadline = Instant::now() + Duration::from_secs(60);
    let line = witness.wait_for("serving http://", deadline);
    let url = Watched::url_in(&line);
    assert!(url.ends_with("/w"), "{url}");

    // The monitoring URL has nothing yet.
    let monitor = format!("{url}/{}/checkpoint", toolmark_witness::origin_hash(ORIGIN));
    let r = agent().get(&monitor).call().unwrap();
    assert_eq!(r.status().as_u16(), 404);

    // Through the real connection layer: an oversized body is 413, another method 405.
    let (status, _, _) = post(
        &url,
        &vec![b'o'; toolmark_log::witness::MAX_REQUEST_BYTES + 1],
    );
    assert_eq!(status, 413);
    let r = agent()
        .get(&format!("{url}/add-checkpoint"))
        .call()
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);

    // First cosignature, from old 0.
    let (status, _, cosig) = post(&url, &add_body(0, vec![], note5.clone()));
    assert_eq!(status, 200, "{cosig}");
    let cosigned = add_signature_lines(&note5, &[cosig]);
    assert!(aics_accepts(&bin, &dir, &cosigned, &log.vkey(), &ours));
    // The log's signature alone is not a quorum.
    assert!(!aics_accepts(&bin, &dir, &note5, &log.vkey(), &ours));

    // A stale client learns the size (409, text/x.tlog.size).
    let (status, ct, body) = post(&url, &add_body(0, vec![], note5.clone()));
    assert_eq!(
        (status, ct.as_str(), body.as_str()),
        (409, SIZE_CONTENT_TYPE, "5\n")
    );

    // The log grows (aics-tlog rebuilds its tiles); the proof from 5 comes from those tiles.
    let root12 = build_tiles(&bin, &dir, &tiles, 12);
    let note12 = sign(12, root12);
    let reader = Reader::new(
        toolmark_log::objects::Objects::dir(&tiles).unwrap(),
        &log.vkey(),
    );
    let at = reader.checkpoint().unwrap();
    assert_eq!(at.checkpoint.size, 12);
    let proof = reader.consistency_proof(5, 12, &at).unwrap();
    assert!(!proof.is_empty());
    // A proof that fails is refused (422); not evidence (anyone can send a bad proof).
    let mut bad = proof.clone();
    bad[0] = Hash([1u8; 32]);
    let (status, _, _) = post(&url, &add_body(5, bad, note12.clone()));
    assert_eq!(status, 422);
    let (status, _, cosig) = post(&url, &add_body(5, proof, note12.clone()));
    assert_eq!(status, 200, "{cosig}");
    assert!(aics_accepts(
        &bin,
        &dir,
        &add_signature_lines(&note12, &[cosig]),
        &log.vkey(),
        &ours
    ));

    // The log signs another tree of size 12: a fork, refused (422) and kept as evidence.
    let (status, _, _) = post(&url, &add_body(12, vec![], sign(12, Hash([9u8; 32]))));
    assert_eq!(status, 422);

    // The monitoring URL serves the latest checkpoint with both signatures: aics-tlog accepts
    // it as it is.
    let mut r = agent().get(&monitor).call().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let served = r.body_mut().read_to_string().unwrap();
    assert!(served.starts_with(&format!("{ORIGIN}\n12\n")), "{served}");
    assert!(aics_accepts(
        &bin,
        &dir,
        served.as_bytes(),
        &log.vkey(),
        &ours
    ));

    witness.signal("-TERM");
    assert!(witness.exit(deadline).success());

    // The evidence survives the process.
    let o = Command::new(toolmark)
        .args(["witness", "--evidence", "--name", NAME, "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(o.status.success());
    let rows: Vec<serde_json::Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["origin"], ORIGIN);
    assert_eq!(
        (rows[0]["old"].as_u64(), rows[0]["size"].as_u64()),
        (Some(12), Some(12))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An `add-checkpoint` request body.
fn add_body(old: u64, proof: Vec<Hash>, note: Vec<u8>) -> Vec<u8> {
    AddCheckpoint { old, proof, note }.encode()
}
