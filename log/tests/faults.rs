//! Fault injection at every write step of an append, in both "failed and lost" and "failed but
//! persisted" forms. After reopening: no fork (every checkpoint published is consistent with
//! every earlier one), no acknowledged entry lost, fsck clean, and the log keeps appending.

mod support;
use support::*;

use std::path::Path;
use toolmark_log::Log;
use toolmark_log::merkle::{self, Hash};
use toolmark_log::note::{self, LogKey};
use toolmark_log::store::{FileStore, Head, Storage, StoreError};
use toolmark_log::verify::{self, DirSource};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    AppendHashes,
    Stage,
    Commit,
    Publish,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The write did not happen, and the caller is told it failed.
    Lost,
    /// The write happened, but the caller is told it failed.
    Persisted,
}

/// A [`FileStore`] that fails once, at one step, in one mode.
struct Faulty {
    inner: FileStore,
    step: Step,
    mode: Mode,
    armed: bool,
    /// Calls of `step` to let through first (opening the log publishes once).
    skip: usize,
}

impl Faulty {
    fn hit<T>(
        &mut self,
        step: Step,
        name: &'static str,
        op: impl FnOnce(&mut FileStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.armed && self.step == step && self.skip > 0 {
            self.skip -= 1;
        } else if self.armed && self.step == step {
            self.armed = false;
            if self.mode == Mode::Persisted {
                op(&mut self.inner)?;
            }
            return Err(StoreError::Injected(name));
        }
        op(&mut self.inner)
    }
}

impl Storage for Faulty {
    fn head(&self) -> Result<Option<Head>, StoreError> {
        self.inner.head()
    }
    fn hash_count(&self) -> Result<u64, StoreError> {
        self.inner.hash_count()
    }
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, StoreError> {
        self.inner.read_hashes(indexes)
    }
    fn truncate_hashes(&mut self, count: u64) -> Result<(), StoreError> {
        self.inner.truncate_hashes(count)
    }
    fn append_hashes(&mut self, hashes: &[Hash]) -> Result<(), StoreError> {
        self.hit(Step::AppendHashes, "append_hashes", |s| {
            s.append_hashes(hashes)
        })
    }
    fn stage(&mut self, size: u64, files: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        self.hit(Step::Stage, "stage", |s| s.stage(size, files))
    }
    fn commit(
        &mut self,
        expected: Option<(u64, Hash)>,
        new: &Head,
        subjects: &[(String, u64)],
    ) -> Result<(), StoreError> {
        self.hit(Step::Commit, "commit", |s| {
            s.commit(expected, new, subjects)
        })
    }
    fn publish(&mut self, head: &Head) -> Result<(), StoreError> {
        self.hit(Step::Publish, "publish", |s| s.publish(head))
    }
    fn read_public(&self, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.read_public(path)
    }
    fn subject_last(&self, id: &str) -> Result<Option<u64>, StoreError> {
        self.inner.subject_last(id)
    }
    fn marker(&self) -> Result<Option<(u64, Hash)>, StoreError> {
        self.inner.marker()
    }
}

/// The published checkpoint, verified.
fn published(dir: &Path) -> note::Checkpoint {
    let bytes = std::fs::read(dir.join("public/checkpoint")).unwrap();
    note::open_checkpoint(&bytes, &vkey(dir)).unwrap()
}

/// Every checkpoint in `seen` must be consistent with the log as it is now.
fn assert_no_fork(dir: &Path, seen: &[note::Checkpoint]) {
    let log = Log::open(dir).unwrap();
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
    for step in [Step::AppendHashes, Step::Stage, Step::Commit, Step::Publish] {
        for mode in [Mode::Lost, Mode::Persisted] {
            let dir = tempdir(&format!("{step:?}-{mode:?}"));
            let mut seen = Vec::new();
            {
                let mut log = Log::init(&dir, "faults.example/log").unwrap();
                // 300 entries: the next batch continues a partial tile and bundle.
                let a = log.append(entries(0, 300)).unwrap();
                assert_eq!(a.indices.len(), 300);
            }
            seen.push(published(&dir));
            let key = LogKey::from_skey(
                std::fs::read_to_string(dir.join("private/log.key"))
                    .unwrap()
                    .trim(),
            )
            .unwrap();
            let store = Faulty {
                inner: FileStore::open(&dir).unwrap(),
                step,
                mode,
                armed: true,
                skip: usize::from(step == Step::Publish),
            };
            let now = || {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs()
            };
            let mut log = Log::open_with(store, key, Box::new(now)).unwrap();
            let err = log.append(entries(300, 100)).unwrap_err();
            assert!(
                err.to_string().contains("injected"),
                "{step:?}/{mode:?}: {err}"
            );
            // Poisoned until reopened.
            assert!(log.append(entries(400, 1)).is_err());
            drop(log);

            let mut log =
                Log::open(&dir).unwrap_or_else(|e| panic!("{step:?}/{mode:?}: reopen: {e}"));
            let size = log.head().size;
            // Acknowledged entries are all there; the failed batch is all there or not at all.
            let committed = matches!(
                (step, mode),
                (Step::Commit, Mode::Persisted) | (Step::Publish, _)
            );
            assert_eq!(size, if committed { 400 } else { 300 }, "{step:?}/{mode:?}");
            seen.push(published(&dir));
            let report = verify::fsck(&DirSource(dir.join("public")), &vkey(&dir))
                .unwrap_or_else(|e| panic!("{step:?}/{mode:?}: fsck: {e}"));
            assert_eq!(report.entries, size);
            // And it keeps appending, consistently with everything published before.
            log.append(entries(size as usize, 50)).unwrap();
            drop(log);
            seen.push(published(&dir));
            assert_no_fork(&dir, &seen);
            verify::fsck(&DirSource(dir.join("public")), &vkey(&dir)).unwrap();
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}

#[test]
fn empty_batches_and_heartbeats_keep_the_tree() {
    let dir = tempdir("heartbeat");
    let mut log = Log::init(&dir, "heartbeat.example/log").unwrap();
    log.append(entries(0, 5)).unwrap();
    let before = log.head().clone();
    let a = log.append(Vec::new()).unwrap();
    assert!(a.indices.is_empty());
    assert_eq!(a.checkpoint, before.note);
    let head = log.resign().unwrap().clone();
    assert_eq!((head.size, head.root), (before.size, before.root));
    assert!(head.signed_at >= before.signed_at);
    drop(log);
    let log = Log::open(&dir).unwrap();
    assert_eq!(log.head(), &head);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_clock_going_backwards_is_fatal() {
    let dir = tempdir("clock");
    Log::init(&dir, "clock.example/log").unwrap();
    let mut log = Log::open_with_clock(&dir, Box::new(|| 1)).unwrap();
    let err = log.append(entries(0, 3)).unwrap_err().to_string();
    assert!(err.contains("clock went backwards"), "{err}");
    drop(log);
    // Nothing was acknowledged, and the log is intact.
    let log = Log::open(&dir).unwrap();
    assert_eq!(log.head().size, 0);
    std::fs::remove_dir_all(&dir).ok();
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
