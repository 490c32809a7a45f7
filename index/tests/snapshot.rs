//! Index snapshots (`toolmark_index::snapshot`) on a real log and index in a directory store:
//! the limits a joining replica holds a manifest to, and a publisher that never replaces a
//! newer snapshot. (Joining and refusing end to end, over the real bucket and PostgreSQL:
//! tests/api_replica.rs.)

mod support;

use std::path::PathBuf;

use support::{Env, FILESYSTEM, HF_LOGIN, HF_PLAIN, corpus_page, day, day_str, huggingface, ok};
use toolmark_index::snapshot::{
    self, MAX_MANIFEST_BYTES, MAX_SNAPSHOT_BYTES, Manifest, Part, Published,
};
use toolmark_index::{Index, IndexError};
use toolmark_log::objects::Objects;
use toolmark_log::reader::{Reader, Signed};

/// A log of two entries, a follower's index of it, and the object store snapshots go to.
struct Fixture {
    env: Env,
    reader: Reader,
    at: Signed,
    follower: Index,
    objects: Objects,
}

impl Fixture {
    fn new(tag: &str) -> Fixture {
        let mut env = Env::new(tag);
        env.run(&day_str(0, 0), &huggingface(), &[], |url| match url {
            HF_PLAIN | HF_LOGIN => Some(ok(day(0, 10), vec![corpus_page(FILESYSTEM)])),
            other => panic!("dialled {other}"),
        });
        let reader = Reader::new(
            Objects::dir(&env.dir.join("log/public")).unwrap(),
            &env.log.vkey(),
        );
        let mut follower = Index::open(&env.dir.join("follower.sqlite")).unwrap();
        let at = follower.follow(&reader, &env.blobs).unwrap().checkpoint;
        let objects = Objects::dir(&env.dir.join("objects")).unwrap();
        Fixture {
            env,
            reader,
            at,
            follower,
            objects,
        }
    }

    fn publish(&self) -> Manifest {
        match snapshot::publish(&self.follower, &self.at, &self.objects, &self.scratch()).unwrap() {
            Published::New(m) => m,
            other => panic!("not published: {other:?}"),
        }
    }

    fn scratch(&self) -> PathBuf {
        self.env.dir.join("snapshot.tmp")
    }

    fn put_manifest(&self, bytes: &[u8]) {
        self.objects.put(&snapshot::manifest_path(), bytes).unwrap();
    }

    /// A join into a new file: its result, and whether anything was left at the file or beside.
    fn join(&self, name: &str) -> (Result<Option<Manifest>, IndexError>, bool) {
        let dest = self.env.dir.join(name);
        let r = snapshot::join(&self.objects, &self.reader, &self.at, &dest);
        let left = dest.exists() || dest.with_extension("snapshot.part").exists();
        (r, left)
    }
}

#[test]
fn a_published_snapshot_joins_with_the_tree_its_manifest_names() {
    let f = Fixture::new("snapshot-joins");
    let m = f.publish();
    assert_eq!(m.tree_size, f.at.checkpoint.size);
    assert!(!f.scratch().exists(), "the staged copy is removed");
    let (r, left) = f.join("joined.sqlite");
    assert_eq!(r.unwrap(), Some(m));
    assert!(left);
    let joined = Index::open(&f.env.dir.join("joined.sqlite")).unwrap();
    assert_eq!(joined.log_size_indexed().unwrap(), f.at.checkpoint.size);
}

#[test]
fn a_manifest_larger_than_max_manifest_bytes_is_refused_unread() {
    let f = Fixture::new("snapshot-manifest-limit");
    f.put_manifest(&vec![
        b' ';
        usize::try_from(MAX_MANIFEST_BYTES).unwrap() + 1
    ]);
    let (r, left) = f.join("joined.sqlite");
    assert!(matches!(r, Err(IndexError::Snapshot(_))), "{r:?}");
    assert!(!left);
}

#[test]
fn a_snapshot_larger_than_max_snapshot_bytes_is_refused_before_any_part_is_read() {
    let f = Fixture::new("snapshot-size-limit");
    let mut m = f.publish();
    // Parts that do not exist: the size is refused before anything is downloaded.
    let part = MAX_SNAPSHOT_BYTES / 4 + 1;
    m.parts = (0..4)
        .map(|i| Part {
            sha256: format!("{i:064x}"),
            bytes: part,
        })
        .collect();
    m.bytes = 4 * part;
    f.put_manifest(&serde_json::to_vec(&m).unwrap());
    let (r, left) = f.join("joined.sqlite");
    match r {
        Err(IndexError::Snapshot(why)) => assert!(why.contains("MAX_SNAPSHOT_BYTES"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(!left);
}

#[test]
fn a_snapshot_of_another_index_schema_version_is_refused() {
    let f = Fixture::new("snapshot-schema");
    let mut m = f.publish();
    m.schema_version += 1;
    f.put_manifest(&serde_json::to_vec(&m).unwrap());
    let (r, left) = f.join("joined.sqlite");
    match r {
        Err(IndexError::Snapshot(why)) => assert!(why.contains("schema version"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(!left);
}

#[test]
fn a_publisher_never_replaces_a_snapshot_of_the_same_or_a_larger_tree() {
    let f = Fixture::new("snapshot-not-newer");
    let first = f.publish();
    let again = snapshot::publish(&f.follower, &f.at, &f.objects, &f.scratch()).unwrap();
    assert_eq!(again, Published::NotNewer(first.tree_size));
    assert_eq!(snapshot::newest(&f.objects).unwrap(), Some(first));
}
