//! The cosigner against a real, independent witness: `aics-witness` 0.1.0 (PyPI; C2SP
//! tlog-witness, SQLite state, cosignature/v1) on loopback, and the published checkpoint checked
//! by `aics-tlog verify-checkpoint` with a witness policy.
//!
//! The tools come from `TOOLMARK_AICS` (the bin directory of the venv `scripts/test` makes).
//! Without it the tests fail under CI and are skipped (loudly) elsewhere.
#![allow(clippy::disallowed_methods)] // runs aics-witness and aics-tlog

#[path = "../../tests/common/aics.rs"]
mod aics;

use aics::{AicsWitness, aics};

mod support;
use support::*;

use std::path::Path;
use std::process::Command;

use std::time::Duration;

use toolmark_cosign::{WitnessError, read_status, system_clock};
use toolmark_log::note::open_checkpoint;
use toolmark_log::policy::{Witness, WitnessPolicy};

/// A real aics-witness named `witness.test/<name>` in `dir/<name>`, trusting the test log.
fn start_witness(bin: &Path, dir: &Path, name: &str, log_vkey: &str) -> AicsWitness {
    AicsWitness::new(
        bin,
        &dir.join(name),
        &format!("witness.test/{name}"),
        ORIGIN,
        log_vkey,
    )
}

fn witness(w: &AicsWitness) -> Witness {
    toolmark_cosign::parse_witness_arg(&w.arg()).unwrap()
}

#[test]
fn checkpoints_are_cosigned_across_batches_and_heartbeats() {
    let Some(bin) = aics() else { return };
    let dir = tempdir("batches");
    let mut log = witnessed_log(&dir, 1);
    let w = start_witness(&bin, &dir, "w1", &log.vkey());
    let policy = WitnessPolicy::k_of(vec![witness(&w)], 1).unwrap();
    let c = cosigner(&dir, policy.clone());
    let rt = runtime();

    log.append(entries(0, 10, "a")).unwrap();
    // Appending alone publishes nothing: the empty tree is still the public checkpoint.
    let before = open_checkpoint(&published(&dir), &log.vkey()).unwrap();
    assert_eq!(before.size, 0);
    let r1 = rt.block_on(c.round()).unwrap();
    assert!(r1.published, "{r1:?}");
    let first = published(&dir);
    assert_eq!(open_checkpoint(&first, &log.vkey()).unwrap().size, 10);
    let t1 = policy.check(&first, now(), Some(60)).unwrap();
    assert!(t1.satisfied);

    log.append(entries(10, 7, "a")).unwrap();
    let r2 = rt.block_on(c.round()).unwrap();
    assert!(r2.published, "{r2:?}");
    let second = published(&dir);
    assert_eq!(open_checkpoint(&second, &log.vkey()).unwrap().size, 17);

    // The heartbeat: the same tree again, a newer cosignature time.
    std::thread::sleep(Duration::from_millis(1100));
    let r3 = rt.block_on(c.round()).unwrap();
    assert!(r3.published && r3.size == 17, "{r3:?}");
    let third = published(&dir);
    let t2 = policy.check(&second, now(), None).unwrap().newest.unwrap();
    let t3 = policy.check(&third, now(), None).unwrap().newest.unwrap();
    assert!(t3 > t2, "heartbeat cosignature {t3} is not newer than {t2}");
    let status = read_status(&dir.join("witnessing.json")).unwrap();
    assert!(status.quorum_met);
    assert_eq!((status.signed_size, status.published_size), (17, Some(17)));
    assert_eq!(status.witnesses[0].size, Some(17));
}

#[test]
fn a_witness_restarted_with_an_old_state_answers_409_and_the_cosigner_recovers() {
    let Some(bin) = aics() else { return };
    let dir = tempdir("restart");
    let mut log = witnessed_log(&dir, 2);
    let mut w = start_witness(&bin, &dir, "w1", &log.vkey());
    let c = cosigner(&dir, WitnessPolicy::k_of(vec![witness(&w)], 1).unwrap());
    let rt = runtime();
    log.append(entries(0, 5, "b")).unwrap();
    assert!(rt.block_on(c.round()).unwrap().published);
    // Keep the witness's state at size 5, move it on to 9, then bring back the old state.
    w.stop();
    let saved = dir.join("w1-saved.db");
    std::fs::copy(dir.join("w1/w.db"), &saved).unwrap();
    w.start();
    log.append(entries(5, 4, "b")).unwrap();
    assert!(rt.block_on(c.round()).unwrap().published);
    w.stop();
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.join(format!("w1/w.db{ext}")));
    }
    std::fs::copy(&saved, dir.join("w1/w.db")).unwrap();
    w.start();
    log.append(entries(9, 3, "b")).unwrap();
    // We believe the witness is at 9; it answers 409 with 5; the cosigner retries from 5.
    let r = rt.block_on(c.round()).unwrap();
    assert!(r.published, "{r:?}");
    assert_eq!(
        open_checkpoint(&published(&dir), &log.vkey()).unwrap().size,
        12
    );
    assert_eq!(r.status.witnesses[0].size, Some(12));
}

#[test]
fn a_forked_checkpoint_is_refused_by_the_witness_and_not_published() {
    let Some(bin) = aics() else { return };
    let dir = tempdir("fork");
    let mut log = witnessed_log(&dir, 3);
    let w = start_witness(&bin, &dir, "w1", &log.vkey());
    let policy = WitnessPolicy::k_of(vec![witness(&w)], 1).unwrap();
    let rt = runtime();
    log.append(entries(0, 6, "c")).unwrap();
    assert!(
        rt.block_on(cosigner(&dir, policy.clone()).round())
            .unwrap()
            .published
    );

    // The same key signs another history in another directory: a split view.
    let fork = dir.join("fork");
    std::fs::create_dir_all(&fork).unwrap();
    let mut other = witnessed_log(&fork, 3);
    other.append(entries(0, 8, "other")).unwrap();
    let before = published(&fork);
    let r = rt.block_on(cosigner(&fork, policy).round()).unwrap();
    assert!(!r.published, "{r:?}");
    assert!(
        matches!(r.witnesses[0].1, Err(WitnessError::Inconsistent(_))),
        "{:?}",
        r.witnesses[0]
    );
    assert_eq!(
        published(&fork),
        before,
        "the fork's checkpoint stayed unpublished"
    );
    let status = read_status(&fork.join("witnessing.json")).unwrap();
    assert!(!status.quorum_met);
    assert_eq!((status.signed_size, status.published_size), (8, Some(0)));
    assert!(status.error.unwrap().contains("quorum not met"));
}

#[test]
fn a_quorum_of_two_with_one_witness_down_keeps_the_previous_checkpoint() {
    let Some(bin) = aics() else { return };
    let dir = tempdir("quorum");
    let mut log = witnessed_log(&dir, 4);
    let w1 = start_witness(&bin, &dir, "w1", &log.vkey());
    let mut w2 = start_witness(&bin, &dir, "w2", &log.vkey());
    let policy = WitnessPolicy::k_of(vec![witness(&w1), witness(&w2)], 2).unwrap();
    let c = cosigner(&dir, policy.clone());
    let rt = runtime();
    log.append(entries(0, 4, "d")).unwrap();
    assert!(rt.block_on(c.round()).unwrap().published);
    let kept = published(&dir);
    assert_eq!(policy.check(&kept, now(), None).unwrap().cosigned.len(), 2);

    w2.stop();
    log.append(entries(4, 4, "d")).unwrap();
    let r = rt.block_on(c.round()).unwrap();
    assert!(!r.published, "{r:?}");
    assert!(r.witnesses[0].1.is_ok());
    assert!(
        matches!(r.witnesses[1].1, Err(WitnessError::Failed(_))),
        "{:?}",
        r.witnesses[1]
    );
    assert_eq!(
        published(&dir),
        kept,
        "the previous checkpoint stays published"
    );
    let status = read_status(&dir.join("witnessing.json")).unwrap();
    assert_eq!((status.signed_size, status.published_size), (8, Some(4)));
    assert!(status.witnesses[1].error.is_some());
}

#[test]
fn aics_tlog_accepts_the_published_checkpoint_with_a_witness_policy() {
    let Some(bin) = aics() else { return };
    let dir = tempdir("verify");
    let mut log = witnessed_log(&dir, 5);
    let w = start_witness(&bin, &dir, "w1", &log.vkey());
    let c = cosigner(&dir, WitnessPolicy::k_of(vec![witness(&w)], 1).unwrap());
    let rt = runtime();
    log.append(entries(0, 300, "e")).unwrap();
    assert!(rt.block_on(c.round()).unwrap().published);
    let verify = |witness_key: &str| {
        Command::new(bin.join("aics-tlog"))
            .arg("verify-checkpoint")
            .arg("--note")
            .arg(dir.join("log/public/checkpoint"))
            .args(["--log-key", &log.vkey(), "--origin", ORIGIN])
            .args([
                "--witness-key",
                witness_key,
                "--quorum",
                "1",
                "--max-age",
                "7200",
            ])
            .arg("--tiles")
            .arg(dir.join("log/public"))
            .output()
            .unwrap()
    };
    let out = verify(&w.vkey);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // And the same verifier refuses it under a witness that did not cosign.
    let stranger =
        toolmark_log::cosignature::CosignerKey::from_seed("witness.test/other", &[9; 32])
            .unwrap()
            .witness_key()
            .vkey();
    assert!(!verify(&stranger).status.success());
}

fn now() -> u64 {
    (system_clock())()
}
