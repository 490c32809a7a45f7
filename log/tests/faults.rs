//! Fault injection at every write step of an append, in both "failed and lost" and "failed but
//! persisted" forms, on the single box and on PostgreSQL + a bucket. After reopening: no fork
//! (every checkpoint published is consistent with every earlier one), no acknowledged entry
//! lost, fsck clean, and the log keeps appending.

mod support;
use support::backends::{Backend, backends};
use support::faults::{Arm, Mode, faulty_stores};
use support::*;

use std::sync::{Arc, Mutex};
use toolmark_log::merkle;
use toolmark_log::note;
use toolmark_log::sequencer::{self, Log};
use toolmark_log::verify;

/// The write steps of an append, in order, and where each is injected.
const STEPS: [(&str, &str); 5] = [
    ("stage", "staging/"),
    ("commit", "head:commit"),
    ("apply", "public/tile/"),
    ("publish", "public/checkpoint"),
    ("applied", "head:set_applied"),
];

/// The published checkpoint, verified.
fn published(b: &Backend) -> note::Checkpoint {
    note::open_checkpoint(&b.published(), &vkey(b)).unwrap()
}

fn vkey(b: &Backend) -> String {
    sequencer::read_key(&b.key_path()).unwrap().vkey()
}

/// Every checkpoint in `seen` must be consistent with the log as it is now.
fn assert_no_fork(b: &Backend, seen: &[note::Checkpoint]) {
    let log = b.open().unwrap();
    let now = log.head().clone();
    for cp in seen {
        assert!(
            cp.size <= now.size,
            "shrunk from {} to {}",
            cp.size,
            now.size
        );
        assert_eq!(
            log.root_at(cp.size).unwrap(),
            cp.root,
            "fork at size {}",
            cp.size
        );
        if cp.size > 0 {
            let proof = log.consistency_proof(cp.size, now.size).unwrap();
            merkle::verify_consistency(&proof, now.size, &now.root, cp.size, &cp.root).unwrap();
        }
    }
}

#[test]
fn every_step_fails_both_ways_without_harm() {
    for (step, at) in STEPS {
        for mode in [Mode::Lost, Mode::Persisted] {
            for b in backends(&format!("faults-{step}-{mode:?}")) {
                let what = format!("{}: {step}/{mode:?}", b.name);
                let mut seen = Vec::new();
                {
                    let mut log = b.init("faults.example/log");
                    // 300 entries: the next batch continues a partial tile and bundle.
                    let a = log.append(entries(0, 300)).unwrap();
                    assert_eq!(a.indices.len(), 300);
                }
                seen.push(published(&b));
                let arm = Arc::new(Mutex::new(Some(Arm { at, mode, skip: 0 })));
                let stores = faulty_stores(&b, &arm);
                let key = sequencer::read_key(&b.key_path()).unwrap();
                let mut log = Log::open_with(stores, key, Box::new(now)).unwrap();
                let err = log.append(entries(300, 100)).unwrap_err();
                assert!(err.to_string().contains("injected"), "{what}: {err}");
                assert!(arm.lock().unwrap().is_none(), "{what}: the fault fired");
                // Poisoned until reopened.
                assert!(log.append(entries(400, 1)).is_err());
                drop(log);
                let committed = !(step == "stage" || (step == "commit" && mode == Mode::Lost));
                if !committed {
                    // No signed checkpoint left the process before its compare-and-swap: the
                    // bucket still shows the old one, and staging/ holds no note.
                    assert_eq!(published(&b).size, 300, "{what}");
                    for name in b.objects().sub("staging").list("", 100).unwrap_or_default() {
                        let bytes = b.objects().sub("staging").get_bounded(&name, 1 << 30);
                        let text = String::from_utf8_lossy(&bytes.unwrap().unwrap()).into_owned();
                        assert!(!text.contains("faults.example/log\n400\n"), "{what}");
                    }
                }

                let mut log = b.open().unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
                let size = log.head().size;
                // Acknowledged entries are all there; the failed batch is all there or not at all.
                assert_eq!(size, if committed { 400 } else { 300 }, "{what}");
                seen.push(published(&b));
                let report = verify::fsck(&b.public(), &vkey(&b))
                    .unwrap_or_else(|e| panic!("{what}: fsck: {e}"));
                assert_eq!(report.entries, size);
                // Resubmitting the failed batch logs it once: the dedup keys were committed with it.
                let again = log.append(entries(300, 100)).unwrap();
                assert_eq!(again.indices, (300..400).collect::<Vec<u64>>(), "{what}");
                // And it keeps appending, consistently with everything published before.
                log.append(entries(400, 50)).unwrap();
                drop(log);
                seen.push(published(&b));
                assert_no_fork(&b, &seen);
                verify::fsck(&b.public(), &vkey(&b)).unwrap();
                std::fs::remove_dir_all(&b.dir).ok();
            }
        }
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn empty_batches_and_heartbeats_keep_the_tree() {
    for b in backends("heartbeat") {
        let mut log = b.init("heartbeat.example/log");
        log.append(entries(0, 5)).unwrap();
        let before = log.head().clone();
        let a = log.append(Vec::new()).unwrap();
        assert!(a.indices.is_empty());
        assert_eq!(a.checkpoint, before.note);
        let head = log.resign().unwrap().clone();
        assert_eq!((head.size, head.root), (before.size, before.root));
        assert!(head.signed_at >= before.signed_at);
        drop(log);
        let log = b.open().unwrap();
        assert_eq!(log.head(), &head, "{}", b.name);
    }
}

#[test]
fn a_clock_going_backwards_is_fatal() {
    for b in backends("clock") {
        b.init("clock.example/log");
        let mut log = b.open_with_clock(Box::new(|| 1)).unwrap();
        let err = log.append(entries(0, 3)).unwrap_err().to_string();
        assert!(err.contains("clock went backwards"), "{}: {err}", b.name);
        drop(log);
        // Nothing was acknowledged, and the log is intact.
        let log = b.open().unwrap();
        assert_eq!(log.head().size, 0);
    }
}

#[test]
fn the_same_observation_twice_is_logged_once() {
    for b in backends("dedup") {
        let mut log = b.init("dedup.example/log");
        let first = log.append(entries(0, 10)).unwrap();
        // The same five again, with two new ones and one repeated inside the batch.
        let mut batch = entries(5, 7);
        batch.push(entries(11, 1).remove(0));
        let second = log.append(batch).unwrap();
        assert_eq!(
            second.indices,
            vec![5, 6, 7, 8, 9, 10, 11, 11],
            "{}",
            b.name
        );
        assert_eq!(log.head().size, 12);
        // A second writer (another handle on the same stores) finds them logged too.
        drop(log);
        let mut other = b.open().unwrap();
        let again = other.append(entries(0, 3)).unwrap();
        assert_eq!(again.indices, vec![0, 1, 2]);
        assert_eq!(again.checkpoint, second.checkpoint);
        assert_eq!(first.indices, (0..10).collect::<Vec<u64>>());
        verify::fsck(&b.public(), &vkey(&b)).unwrap();
    }
}

#[test]
fn startup_refuses_an_old_database_and_a_foreign_key() {
    let dir = tempdir("refuse");
    {
        let mut log = Log::init(&dir, "refuse.example/log").unwrap();
        log.append(entries(0, 10)).unwrap();
    }
    let backup = std::fs::read(dir.join("log.sqlite")).unwrap();
    {
        let mut log = Log::open(&dir).unwrap();
        log.append(entries(10, 10)).unwrap();
    }
    // Restore the older database (a stale backup): refused, because the marker is newer.
    std::fs::remove_file(dir.join("log.sqlite-wal")).ok();
    std::fs::remove_file(dir.join("log.sqlite-shm")).ok();
    std::fs::write(dir.join("log.sqlite"), &backup).unwrap();
    let err = Log::open(&dir)
        .err()
        .expect("a stale database is refused")
        .to_string();
    assert!(err.contains("older than the last checkpoint"), "{err}");
    // Without the marker, the published checkpoint still gives it away.
    std::fs::remove_file(dir.join("private/marker")).unwrap();
    let err = Log::open(&dir)
        .err()
        .expect("a stale database is refused")
        .to_string();
    assert!(
        err.contains("public directory holds a checkpoint at size 20"),
        "{err}"
    );

    // A different key is refused.
    let dir2 = tempdir("refuse-key");
    Log::init(&dir2, "refuse.example/log").unwrap();
    let other = tempdir("refuse-other");
    Log::init(&other, "refuse.example/log").unwrap();
    std::fs::copy(other.join("private/log.key"), dir2.join("private/log.key")).unwrap();
    let err = Log::open(&dir2)
        .err()
        .expect("a foreign key is refused")
        .to_string();
    assert!(err.contains("not this log's key"), "{err}");
    // init over an existing log is refused.
    assert!(Log::init(&dir2, "refuse.example/log").is_err());
    for d in [dir, dir2, other] {
        std::fs::remove_dir_all(d).ok();
    }
}

/// The head store is authoritative at start: the bucket's checkpoint may be older (it is
/// published again) but never newer, nor of the same size with another root.
#[test]
fn startup_reconciles_the_bucket_checkpoint_with_the_head_store() {
    for b in backends("reconcile") {
        let mut log = b.init("reconcile.example/log");
        log.append(entries(0, 10)).unwrap();
        let ten = b.published();
        log.append(entries(10, 10)).unwrap();
        let twenty = b.published();
        drop(log);
        let public = b.public();
        // Older: re-published.
        public.put("checkpoint", &ten).unwrap();
        drop(b.open().unwrap());
        assert_eq!(b.published(), twenty, "{}", b.name);
        // Newer than the head store: another log wrote it (or the head store was rolled back).
        let key = sequencer::read_key(&b.key_path()).unwrap();
        let ahead = key
            .sign_checkpoint(&note::Checkpoint {
                origin: key.name().into(),
                size: 21,
                root: toolmark_log::Hash([9; 32]),
                extensions: vec![],
            })
            .unwrap();
        public.put("checkpoint", &ahead).unwrap();
        let err = b.open().err().expect("a newer bucket checkpoint is fatal");
        assert!(err.to_string().contains("at size 21"), "{}: {err}", b.name);
        // Same size, another root: a fork.
        let forked = key
            .sign_checkpoint(&note::Checkpoint {
                origin: key.name().into(),
                size: 20,
                root: toolmark_log::Hash([9; 32]),
                extensions: vec![],
            })
            .unwrap();
        public.put("checkpoint", &forked).unwrap();
        let err = b.open().err().expect("a forked bucket checkpoint is fatal");
        assert!(err.to_string().contains("at size 20"), "{}: {err}", b.name);
        // Put back, it opens again.
        public.put("checkpoint", &twenty).unwrap();
        b.open().unwrap();
    }
}

/// A create-only write that finds other bytes is a fork alarm: the writer halts.
#[test]
fn a_tile_with_other_bytes_halts_the_writer() {
    for b in backends("fork-alarm") {
        let mut log = b.init("alarm.example/log");
        log.append(entries(0, 3)).unwrap();
        // Someone wrote the bundle the next batch will write, with other bytes.
        b.public()
            .put("tile/entries/000.p/5", b"not the log's bundle")
            .unwrap();
        let err = log.append(entries(3, 2)).unwrap_err();
        assert!(err.to_string().contains("fork alarm"), "{}: {err}", b.name);
        assert!(matches!(
            err,
            toolmark_log::LogError::Store(ref e) if e.is_fatal()
        ));
        drop(log);
        // The batch was committed (the compare-and-swap came first); opening finds it cannot
        // apply it either, and refuses to go on.
        let err = b.open().err().expect("the alarm persists");
        assert!(err.to_string().contains("fork alarm"), "{}: {err}", b.name);
    }
}

/// A staged batch is read back from the untrusted store: one that does not reproduce the
/// committed head from its own entries is refused, and none of its bytes are published.
#[test]
fn a_tampered_staged_batch_is_refused() {
    for b in backends("staged-tamper") {
        let mut log = b.init("tamper.example/log");
        log.append(entries(0, 300)).unwrap();
        drop(log);
        // Committed, then stopped before the first public file: the batch waits in staging/.
        let arm = Arc::new(Mutex::new(Some(Arm {
            at: "public/tile/",
            mode: Mode::Lost,
            skip: 0,
        })));
        let stores = faulty_stores(&b, &arm);
        let key = sequencer::read_key(&b.key_path()).unwrap();
        let mut log = Log::open_with(stores, key, Box::new(now)).unwrap();
        assert!(log.append(entries(300, 10)).is_err());
        drop(log);
        let staging = b.objects().sub("staging");
        let names = staging.list("", 10).unwrap_or_default();
        let name = names
            .iter()
            .find(|n| n.starts_with("300-310-"))
            .unwrap_or_else(|| panic!("{}: staged batch in {names:?}", b.name))
            .clone();
        let bytes = staging.get_bounded(&name, 1 << 30).unwrap().unwrap();
        let mut files = toolmark_log::store::decode_batch(&bytes).unwrap();
        // Another entry in the last bundle (same length, one byte changed).
        let bundle = files
            .iter_mut()
            .find(|(p, _)| p.starts_with("tile/entries/"))
            .unwrap();
        let (bundle_path, committed) = (bundle.0.clone(), bundle.1.clone());
        let last = bundle.1.len() - 2;
        bundle.1[last] ^= 1;
        staging
            .put(&name, &toolmark_log::store::encode_batch(&files))
            .unwrap();
        let err = b.open().err().expect("a tampered staged batch is refused");
        assert!(
            err.to_string()
                .contains("does not reproduce the committed head"),
            "{}: {err}",
            b.name
        );
        // Nothing of the tampered object was published (the committed bundle may be there
        // already: the first apply writes files in parallel before the injected failure).
        let published = b.public().get(&bundle_path).unwrap();
        assert!(
            published.is_none() || published == Some(committed),
            "{}",
            b.name
        );
    }
}

/// The partial bundle a batch continues comes from the untrusted store: entries that do not
/// hash to the tree's leaves are never copied into the new bundle.
#[test]
fn a_tampered_partial_bundle_is_not_carried_into_the_next() {
    for b in backends("carried-tamper") {
        let mut log = b.init("carried.example/log");
        log.append(entries(0, 300)).unwrap();
        drop(log);
        let path = "tile/entries/001.p/44";
        let mut bytes = b.public().get(path).unwrap().unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 1;
        b.public().put(path, &bytes).unwrap();
        let mut log = b.open().unwrap();
        let err = log.append(entries(300, 5)).unwrap_err();
        assert!(
            err.to_string().contains("does not hold the tree's entries"),
            "{}: {err}",
            b.name
        );
        assert_eq!(b.public().get("tile/entries/001.p/49").unwrap(), None);
    }
}

/// Writers on several machines never have equal clocks: one that runs at most
/// `MAX_CLOCK_SKEW` behind the head's signer signs with the head's time; further behind is a
/// clock going backwards (`a_clock_going_backwards_is_fatal`).
#[test]
fn a_clock_slightly_behind_another_writers_signs_at_the_heads_time() {
    for b in backends("skew") {
        let mut log = b.init("skew.example/log");
        log.append(entries(0, 3)).unwrap();
        let at = log.head().signed_at;
        drop(log);
        let behind = at - toolmark_log::sequencer::MAX_CLOCK_SKEW;
        let mut log = b.open_with_clock(Box::new(move || behind)).unwrap();
        log.append(entries(3, 2)).unwrap();
        assert_eq!(log.head().signed_at, at, "{}", b.name);
    }
}
