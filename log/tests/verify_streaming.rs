//! The streaming `fsck` (issue #26): every tile edge verifies, damage at upper tile levels and
//! broken `prev` links are found, the hashes held stay within 256 per tile level, and a source
//! read on the caller's thread gives the same answers as one read by the prefetching workers.

mod support;
use support::*;

use std::path::{Path, PathBuf};
use toolmark_log::Log;
use toolmark_log::entry::Entry;
use toolmark_log::merkle::MemoryHashes;
use toolmark_log::note::{Checkpoint, LogKey};
use toolmark_log::tiles;
use toolmark_log::verify::{self, AuditState, DirSource, Report, Source};

/// A directory read only on the verifier's thread (no [`Source::concurrent`]), as the HTTP
/// source is.
struct Serial(DirSource);

impl Source for Serial {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        self.0.get(path)
    }
}

/// Tile levels a tree of `size` leaves uses.
fn levels(size: u64) -> usize {
    (0..8).take_while(|l| size >> (8 * l) > 0).count()
}

/// fsck `public` through both kinds of source; they must agree.
fn fsck_both(public: &Path, vkey: &str) -> Report {
    let parallel = verify::fsck(&DirSource(public.to_owned()), vkey).unwrap();
    let serial = verify::fsck(&Serial(DirSource(public.to_owned())), vkey).unwrap();
    assert_eq!(parallel, serial);
    parallel
}

/// One log grown through every tile edge of levels 0 and 1: 1, 255, 256, 257 and 65,536 ± 1
/// entries, verified at each size, with every tile counted and the hashes held bounded.
#[test]
fn every_tile_edge_size_verifies() {
    let dir = tempdir("edges");
    let mut log = Log::init(&dir, "edges.example/log").unwrap();
    let vkey = log.vkey();
    let mut size = 0u64;
    for target in [1u64, 255, 256, 257, 65_535, 65_536, 65_537] {
        log.append(entries(size as usize, (target - size) as usize))
            .unwrap();
        size = target;
        let report = fsck_both(&dir.join("public"), &vkey);
        assert_eq!(report.entries, size);
        assert_eq!(report.checkpoint.size, size);
        assert_eq!(report.tiles, tiles::tiles_for_size(size).len(), "at {size}");
        assert_eq!(report.bundles as u64, size.div_ceil(256), "at {size}");
        assert_eq!(report.subjects, size.min(7) as usize, "at {size}");
        assert!(
            report.peak_hashes <= 256 * levels(size),
            "at {size}: {} hashes held",
            report.peak_hashes
        );
    }
    std::fs::remove_dir_all(dir).ok();
}

/// An auditor's remembered root is reproduced while streaming at every tile edge, and a
/// wrong root remembered there is a fork, also when the remembered size is the current one.
#[test]
fn audit_reproduces_remembered_roots_at_every_edge() {
    let dir = tempdir("audit-edges");
    let mut log = Log::init(&dir, "audit-edges.example/log").unwrap();
    let vkey = log.vkey();
    let public = DirSource(dir.join("public"));
    let mut states = Vec::new();
    let mut size = 0u64;
    for target in [1u64, 255, 256, 257, 65_535, 65_536, 65_537] {
        log.append(entries(size as usize, (target - size) as usize))
            .unwrap();
        size = target;
        let (_, state) = verify::audit(&public, &vkey, None).unwrap();
        states.push(state);
    }
    for remembered in &states {
        let (report, next) = verify::audit(&public, &vkey, Some(remembered)).unwrap();
        assert_eq!(report.entries, size);
        assert_eq!(next, *states.last().unwrap());
        let forked = AuditState {
            root: states[0].root,
            ..remembered.clone()
        };
        if remembered.size == 1 {
            continue;
        }
        let err = verify::audit(&public, &vkey, Some(&forked))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "audit: the log is not consistent with the checkpoint remembered at size {}: \
                 its entries give root {} there, not {} (fork)",
                remembered.size, remembered.root, states[0].root
            )
        );
    }
    std::fs::remove_dir_all(dir).ok();
}

/// The hashes the verifier holds do not grow with the log: at 65,537 entries (three tile
/// levels) it never held more than three tiles' worth, where the whole tree is 131,000 hashes.
#[test]
fn held_hashes_stay_within_a_tile_per_level() {
    let dir = tempdir("held");
    let mut log = Log::init(&dir, "held.example/log").unwrap();
    log.append(entries(0, 65_537)).unwrap();
    let report = verify::fsck(&DirSource(dir.join("public")), &log.vkey()).unwrap();
    assert_eq!(levels(65_537), 3);
    assert!(report.peak_hashes <= 3 * 256, "{}", report.peak_hashes);
    // A full level-0 tile and a full level-1 tile were held at once, at the 65,536th leaf.
    assert!(report.peak_hashes >= 256 + 255, "{}", report.peak_hashes);
    std::fs::remove_dir_all(dir).ok();
}

/// A byte changed in a full level-1 tile or in the level-2 tile is found, through either source.
#[test]
fn damaged_upper_level_tiles_are_found() {
    let dir = tempdir("upper");
    let mut log = Log::init(&dir, "upper.example/log").unwrap();
    log.append(entries(0, 65_537)).unwrap();
    let vkey = log.vkey();
    for tile in ["tile/1/000", "tile/2/000.p/1"] {
        let copy = tempdir("upper-copy");
        copy_dir(&dir.join("public"), &copy);
        flip_byte(&copy.join(tile), 200);
        for source in [
            Box::new(DirSource(copy.clone())) as Box<dyn Source>,
            Box::new(Serial(DirSource(copy.clone()))),
        ] {
            let err = verify::fsck(source.as_ref(), &vkey)
                .unwrap_err()
                .to_string();
            assert_eq!(
                err,
                format!("{tile}: tile bytes differ from the hashes the entries give")
            );
        }
        std::fs::remove_dir_all(copy).ok();
    }
    std::fs::remove_dir_all(dir).ok();
}

/// Publishes `entries` (already encoded, `prev` as given) as a signed C2SP log under `dir`, the
/// way no honest writer would if a `prev` is wrong: the verifier's `prev` check is the only
/// thing that can refuse it.
fn publish(dir: &Path, key: &LogKey, entries: &[Vec<u8>]) {
    let mut tree = MemoryHashes::new();
    for e in entries {
        tree.append_entry(e).unwrap();
    }
    let size = entries.len() as u64;
    let write = |path: String, bytes: &[u8]| {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    for t in tiles::tiles_for_size(size) {
        write(t.path(), &tiles::tile_data(&t, &tree).unwrap());
    }
    for (b, chunk) in entries.chunks(256).enumerate() {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        write(
            tiles::bundle_path(b as u64, chunk.len() as u16),
            &tiles::encode_bundle(&refs).unwrap(),
        );
    }
    let note = key
        .sign_checkpoint(&Checkpoint {
            origin: key.name().into(),
            size,
            root: tree.root(),
            extensions: vec![],
        })
        .unwrap();
    write("checkpoint".into(), &note);
}

/// 300 entries of support's 7 subjects with the chain the sequencer writes (entry `i`'s `prev`
/// is `i − 7`), then `tamper` applied.
fn chain(tamper: impl FnOnce(&mut [Entry])) -> Vec<Vec<u8>> {
    let mut es = entries(0, 300);
    for (i, e) in es.iter_mut().enumerate() {
        e.prev = i.checked_sub(7).map(|p| p as u64);
    }
    tamper(&mut es);
    es.iter().map(|e| e.encode().unwrap()).collect()
}

fn fsck_published(tag: &str, key: &LogKey, entries: &[Vec<u8>]) -> Result<Report, String> {
    let dir: PathBuf = tempdir(tag);
    publish(&dir, key, entries);
    let result = verify::fsck(&DirSource(dir.clone()), &key.vkey()).map_err(|e| e.to_string());
    std::fs::remove_dir_all(dir).ok();
    result
}

/// A change to the entries before they are published.
type Tamper = Box<dyn FnOnce(&mut [Entry])>;

/// Each kind of broken `prev` link is refused at its entry, with what it should have been;
/// the same log with the sequencer's links verifies.
#[test]
fn wrong_prev_links_are_refused() {
    let key = LogKey::generate("prev.example/log").unwrap();
    let good = fsck_published("prev-good", &key, &chain(|_| {})).unwrap();
    assert_eq!((good.entries, good.subjects), (300, 7));
    // Entry 270 (subject 4; its newest earlier entry is 263). Entry 262 is subject 3's.
    let id = entries(270, 1)[0].subject.id();
    let cases: Vec<(&str, Tamper, String)> = vec![
        (
            "older",
            Box::new(|es| es[270].prev = Some(256)),
            format!("entry 270: prev 256 is not the newest earlier entry of subject {id}, 263"),
        ),
        (
            "other-subject",
            Box::new(|es| es[270].prev = Some(262)),
            format!("entry 270: prev 262 is not the newest earlier entry of subject {id}, 263"),
        ),
        (
            "null",
            Box::new(|es| es[270].prev = None),
            format!("entry 270: prev is null but subject {id} has an earlier entry, 263"),
        ),
        (
            "itself",
            Box::new(|es| es[270].prev = Some(270)),
            format!("entry 270: prev 270 is not an earlier entry of subject {id}"),
        ),
        (
            "ahead",
            Box::new(|es| es[270].prev = Some(277)),
            format!("entry 270: prev 277 is not an earlier entry of subject {id}"),
        ),
        (
            "first-with-prev",
            Box::new(|es| es[4].prev = Some(0)),
            format!(
                "entry 4: prev 0 is not an earlier entry of subject {}",
                entries(4, 1)[0].subject.id()
            ),
        ),
    ];
    for (tag, tamper, want) in cases {
        let err = fsck_published(tag, &key, &chain(tamper)).unwrap_err();
        assert_eq!(err, want, "{tag}");
    }
}

/// A source that panics on one file while the prefetching workers read it ends the fsck with
/// an error naming the file, instead of a hang or a panic in the caller.
#[test]
fn a_panicking_concurrent_source_is_an_error() {
    struct Panicky(DirSource);
    impl Source for Panicky {
        fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
            assert_ne!(path, "tile/entries/001", "the source broke");
            self.0.get(path)
        }
        fn concurrent(&self) -> Option<&(dyn Source + Sync)> {
            Some(self)
        }
    }
    let dir = tempdir("panicky");
    let mut log = Log::init(&dir, "panicky.example/log").unwrap();
    log.append(entries(0, 600)).unwrap();
    let err = verify::fsck(&Panicky(DirSource(dir.join("public"))), &log.vkey()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "reading tile/entries/001: the source panicked"
    );
    std::fs::remove_dir_all(dir).ok();
}
