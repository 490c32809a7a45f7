//! The lock-free reader agrees with the writer on every proof and entry, at sizes that end
//! inside and at the edge of bundles, while the writer keeps the log open: from a directory
//! and from a bucket.

mod support;

use toolmark_log::Log;
use toolmark_log::merkle;
use toolmark_log::proof::{decode_tlog_proof, verify_tlog_proof};
use toolmark_log::reader::{ReadError, Reader};

#[test]
fn reader_matches_the_writer() {
    for b in support::backends::backends("reader") {
        reader_matches_the_writer_on(&b);
    }
}

fn reader_matches_the_writer_on(b: &support::backends::Backend) {
    let mut log = b.init("toolmark.test/reader");
    let reader = Reader::new(b.public(), &log.vkey());
    let mut start = 0;
    for batch in [1usize, 255, 1, 300, 211] {
        log.append(support::entries(start, batch)).unwrap();
        start += batch;
        let at = reader.checkpoint().unwrap();
        let size = at.checkpoint.size;
        assert_eq!(size, start as u64);
        assert_eq!(at.note, log.head().note);
        for index in [0, size / 3, size / 2, size - 1] {
            assert_eq!(
                reader.inclusion_proof(index, size, &at).unwrap(),
                log.inclusion_proof(index, size).unwrap()
            );
            let entry = reader.entry(index, &at).unwrap();
            assert_eq!(entry, log.entry(index).unwrap());
            let bundle = reader.tlog_proof(index, &at).unwrap();
            let parsed = decode_tlog_proof(&bundle).unwrap();
            let cp = verify_tlog_proof(&parsed, &entry, &log.vkey()).unwrap();
            assert_eq!(cp.size, size);
            assert_eq!(bundle, log.tlog_proof(index).unwrap());
        }
        for old in [1, (size / 2).max(1), size] {
            let proof = reader.consistency_proof(old, size, &at).unwrap();
            assert_eq!(proof, log.consistency_proof(old, size).unwrap());
            let old_root = log.root_at(old).unwrap();
            merkle::verify_consistency(&proof, size, &at.checkpoint.root, old, &old_root).unwrap();
        }
        // Smaller trees are proved from the tiles of the current size.
        if size > 2 {
            assert_eq!(
                reader.inclusion_proof(1, size - 1, &at).unwrap(),
                log.inclusion_proof(1, size - 1).unwrap()
            );
        }
        assert!(matches!(
            reader.inclusion_proof(size, size, &at),
            Err(ReadError::OutOfRange(_))
        ));
        assert!(matches!(
            reader.entry(size, &at),
            Err(ReadError::OutOfRange(_))
        ));
        assert!(matches!(
            reader.consistency_proof(0, size, &at),
            Err(ReadError::OutOfRange(_))
        ));
    }
    // A checkpoint under another key is refused.
    let other = Log::init(&support::tempdir("reader-other"), "toolmark.test/other").unwrap();
    assert!(matches!(
        Reader::new(b.public(), &other.vkey()).checkpoint(),
        Err(ReadError::Checkpoint(_))
    ));
}

/// A bundle is not signed: an entry that does not hash to its leaf in the tiles is refused,
/// never served.
#[test]
fn the_reader_refuses_an_entry_that_is_not_its_leaf() {
    for b in support::backends::backends("reader-tamper") {
        let mut log = b.init("toolmark.test/reader-tamper");
        log.append(support::entries(0, 10)).unwrap();
        let path = "tile/entries/000.p/10";
        let mut bytes = b.public().get(path).unwrap().unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 1;
        b.public().put(path, &bytes).unwrap();
        let reader = Reader::new(b.public(), &log.vkey());
        let at = reader.checkpoint().unwrap();
        let err = reader.entry(9, &at).unwrap_err();
        assert!(
            err.to_string().contains("does not hash to its leaf"),
            "{err}"
        );
        assert!(reader.entry(0, &at).is_ok(), "{}", b.name);
    }
}

/// The tiles' subtree roots a reader keeps (`TILE_LEVELS_CACHE_BYTES`) stay within their byte
/// budget however many tiles proofs touch, each tile's computed once while kept, and proofs
/// read from them are the writer's.
#[test]
fn the_reader_keeps_tile_subtree_roots_within_their_budget() {
    use toolmark_log::tiles::MAX_TILE_LEVELS_BYTES;
    let dir = support::tempdir("reader-levels");
    let mut log = Log::init(&dir, "toolmark.test/reader-levels").unwrap();
    // Six full level-0 tiles and a partial one.
    log.append(support::entries(0, 6 * 256 + 100)).unwrap();
    let public = toolmark_log::objects::Objects::dir(&dir.join("public")).unwrap();
    let budget = 2 * MAX_TILE_LEVELS_BYTES;
    let reader = Reader::with_budgets(public, &log.vkey(), 1 << 20, budget);
    let at = reader.checkpoint().unwrap();
    let size = at.checkpoint.size;
    // One proof keeps the subtree roots of the tiles it read: the leaf's (a full one, 510
    // hashes), the level-1 tile and the right edge's.
    reader.inclusion_proof(0, size, &at).unwrap();
    let one = reader.tile_levels_cached_bytes();
    assert!(one > MAX_TILE_LEVELS_BYTES && one <= budget, "{one}");
    assert_eq!(
        reader.inclusion_proof(1, size, &at).unwrap(),
        log.inclusion_proof(1, size).unwrap()
    );
    assert_eq!(
        reader.tile_levels_cached_bytes(),
        one,
        "read again, not kept twice"
    );
    for index in (0..size).step_by(37) {
        assert_eq!(
            reader.inclusion_proof(index, size, &at).unwrap(),
            log.inclusion_proof(index, size).unwrap()
        );
        assert!(reader.tile_levels_cached_bytes() <= budget);
    }
    for old in [1, 255, 256, 700, size] {
        assert_eq!(
            reader.consistency_proof(old, size, &at).unwrap(),
            log.consistency_proof(old, size).unwrap()
        );
        assert!(reader.tile_levels_cached_bytes() <= budget);
    }
}
